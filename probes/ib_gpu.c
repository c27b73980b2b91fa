/* probes/ib_gpu.c: GPU memory and dmabuf export for GPUDirect RDMA (CUDA optional). */
#include "ib_gpu.h"
#include "../gpu/gpu.h"

#include <stdio.h>

#ifndef HAVE_CUDA

int ib_gpu_count(char *err, size_t len)
{
	snprintf(err, len, "not built: CUDA (GPUDirect RDMA needs it)");
	return -1;
}

int ib_gpu_bdf(int dev, char *bdf, size_t len)
{
	(void)dev;
	if (len)
		bdf[0] = '\0';
	return -1;
}

int ib_gpu_alloc(int dev, size_t len, void **ptr, size_t *alloc_len, char *err, size_t errlen)
{
	(void)dev;
	(void)len;
	*ptr = NULL;
	*alloc_len = 0;
	return ib_gpu_count(err, errlen);
}

int ib_gpu_memset(int dev, void *ptr, int byte, size_t len)
{
	(void)dev;
	(void)ptr;
	(void)byte;
	(void)len;
	return -1;
}

void ib_gpu_free(void *ptr)
{
	(void)ptr;
}

int ib_gpu_dmabuf_fd(void *ptr, size_t len, char *err, size_t errlen)
{
	(void)ptr;
	(void)len;
	return ib_gpu_count(err, errlen);
}

#else

#include <cuda.h>
#include <cuda_runtime.h>
#include <ctype.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define GPU_PAGE ((size_t)2 << 20)

int ib_gpu_count(char *err, size_t len)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e != cudaSuccess) {
		snprintf(err, len, "no CUDA device: cudaGetDeviceCount: %s", cudaGetErrorString(e));
		return -1;
	}
	if (n == 0) {
		snprintf(err, len, "no CUDA device");
		return -1;
	}
	return n;
}

int ib_gpu_bdf(int dev, char *bdf, size_t len)
{
	char id[64];
	const char *p = id;

	if (cudaDeviceGetPCIBusId(id, sizeof(id), dev) != cudaSuccess)
		return -1;
	/* the domain may come with 8 digits ("00000000:17:00.0"); sysfs uses 4 */
	if (strlen(id) == 16)
		p = id + 4;
	snprintf(bdf, len, "%s", p);
	for (char *c = bdf; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	return 0;
}

typedef CUresult (*ctx_current_fn)(CUcontext *);

/*
 * Whether a context is current in this thread (cuCtxGetCurrent): 1, 0, or 0
 * when it cannot be asked (no driver API loaded: then no context exists either).
 */
static int ctx_current(void)
{
	static ctx_current_fn fn;
	static int tried;
	CUcontext c = NULL;

	if (!tried) {
		tried = 1;
		*(void **)&fn = gpu_driver_sym("cuCtxGetCurrent", NULL, 0);
	}
	return fn && fn(&c) == CUDA_SUCCESS && c;
}

/*
 * Makes dev current; *was is the device to go back to (-1: none). Only a
 * device whose context was current is gone back to: cudaGetDevice says 0
 * when nothing was selected, and since CUDA 12 cudaSetDevice(0) would
 * create GPU 0's primary context in every rank (~0.5 GB each, and under
 * EXCLUSIVE_PROCESS a race with the rank that owns GPU 0).
 */
static cudaError_t enter(int dev, int *was)
{
	if (!ctx_current() || cudaGetDevice(was) != cudaSuccess)
		*was = -1;
	return cudaSetDevice(dev);
}

static void leave(int dev, int was)
{
	if (was >= 0 && was != dev)
		cudaSetDevice(was);
}

int ib_gpu_alloc(int dev, size_t len, void **ptr, size_t *alloc_len, char *err, size_t errlen)
{
	size_t n = (len + GPU_PAGE - 1) / GPU_PAGE * GPU_PAGE;
	cudaError_t e;
	int was;

	*ptr = NULL;
	*alloc_len = 0;
	/* on dev, and the caller's current device left as it was (the nccl backend's) */
	e = enter(dev, &was);
	if (e == cudaSuccess)
		e = cudaMalloc(ptr, n);
	leave(dev, was);
	if (e != cudaSuccess) {
		snprintf(err, errlen, "cannot allocate %zu bytes on CUDA device %d: %s", n, dev,
			 cudaGetErrorString(e));
		*ptr = NULL;
		return -1;
	}
	*alloc_len = n;
	return 0;
}

int ib_gpu_memset(int dev, void *ptr, int byte, size_t len)
{
	int was, rc = -1;

	/* on the buffer's device: cudaDeviceSynchronize waits for the current one only */
	if (enter(dev, &was) == cudaSuccess && cudaMemset(ptr, byte, len) == cudaSuccess)
		rc = cudaDeviceSynchronize() == cudaSuccess ? 0 : -1;
	leave(dev, was);
	return rc;
}

void ib_gpu_free(void *ptr)
{
	if (ptr)
		cudaFree(ptr);
}

typedef CUresult (*get_handle_fn)(void *, CUdeviceptr, size_t, CUmemRangeHandleType,
				  unsigned long long);

static struct {
	pthread_once_t once;
	get_handle_fn get_handle;
	char why[160];
} drv = { .once = PTHREAD_ONCE_INIT };

static void load_driver(void)
{
	*(void **)&drv.get_handle = gpu_driver_sym("cuMemGetHandleForAddressRange", drv.why,
						   sizeof(drv.why));
}

int ib_gpu_dmabuf_fd(void *ptr, size_t len, char *err, size_t errlen)
{
	int fd = -1;
	CUresult e;

	pthread_once(&drv.once, load_driver);
	if (!drv.get_handle) {
		snprintf(err, errlen, "%s", drv.why);
		return -1;
	}
	e = drv.get_handle(&fd, (CUdeviceptr)(uintptr_t)ptr, len,
			   CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (e != CUDA_SUCCESS || fd < 0) {
		snprintf(err, errlen, "cuMemGetHandleForAddressRange failed with CUresult %d "
			 "(no dmabuf support in this kernel or driver?)", (int)e);
		return -1;
	}
	return fd;
}

#endif
