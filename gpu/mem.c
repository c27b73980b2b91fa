/*
 * gpu/mem.c: page-locked host memory bound to a NUMA node for copies.
 */
#ifdef HAVE_CUDA
#include "gpu.h"
#include "../core/numa.h"

#include <errno.h>
#include <string.h>

/* ------------------------------------------------------------------ host memory */

int gpu_host_alloc(struct gpu_host_buf *b, size_t bytes, int numa, char *why, size_t len)
{
	cudaError_t e;

	memset(b, 0, sizeof(*b));
	b->numa_node = -1;
	b->bytes = bytes ? bytes : 1;
	/* pages come from the GPU's node; if the kernel refuses (no NUMA), they
	 * land wherever it chooses and numa_node says so */
	b->p = numa_alloc(b->bytes, numa, &b->numa_node);
	if (!b->p) {
		snprintf(why, len, "cannot map %zu bytes of host memory: %s", b->bytes,
			 strerror(errno));
		return -1;
	}
	e = cudaHostRegister(b->p, b->bytes, cudaHostRegisterPortable);
	if (e != cudaSuccess) {
		numa_free(b->p, b->bytes);
		b->p = NULL;
		return gpu_cuda_fail(e, "cudaHostRegister", why, len);
	}
	return 0;
}

void gpu_host_free(struct gpu_host_buf *b)
{
	if (!b->p)
		return;
	cudaHostUnregister(b->p);
	numa_free(b->p, b->bytes);
	b->p = NULL;
}

#endif /* HAVE_CUDA */
