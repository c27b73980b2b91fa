/*
 * gpu/mem.c: page-locked host memory bound to a NUMA node for copies.
 */
#ifdef HAVE_CUDA
#include "gpu.h"
#include "../core/log.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ------------------------------------------------------------------ host memory */

int gpu_host_alloc(struct gpu_host_buf *b, size_t bytes, int numa, char *why, size_t len)
{
	cudaError_t e;

	memset(b, 0, sizeof(*b));
	b->numa_node = -1;
	b->bytes = bytes ? bytes : 1;
	b->p = mmap(NULL, b->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->p == MAP_FAILED) {
		b->p = NULL;
		snprintf(why, len, "cannot map %zu bytes of host memory: %s", b->bytes,
			 strerror(errno));
		return -1;
	}
	if (numa >= 0 && numa < 1024) {
		unsigned long mask[1024 / (8 * sizeof(unsigned long))] = { 0 };

		mask[numa / (8 * sizeof(unsigned long))] |= 1UL << (numa % (8 * sizeof(unsigned long)));
		/* pages come from the GPU's node when touched below; if the kernel
		 * refuses (no NUMA), they land wherever it chooses and we say so */
		/* maxnode counts one more than the bits the kernel reads */
		if (syscall(SYS_mbind, b->p, b->bytes, MPOL_BIND, mask, 8 * sizeof(mask) + 1, 0) == 0)
			b->numa_node = numa;
		else
			log_debug("mbind to NUMA node %d: %s", numa, strerror(errno));
	}
	memset(b->p, 0, b->bytes);
	e = cudaHostRegister(b->p, b->bytes, cudaHostRegisterPortable);
	if (e != cudaSuccess) {
		munmap(b->p, b->bytes);
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
	munmap(b->p, b->bytes);
	b->p = NULL;
}

#endif /* HAVE_CUDA */
