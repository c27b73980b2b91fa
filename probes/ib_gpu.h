#ifndef CCDIAG_IB_GPU_H
#define CCDIAG_IB_GPU_H

/*
 * GPU memory for GPUDirect RDMA: allocation through the CUDA runtime and a
 * dmabuf file descriptor for it through the driver API, which is loaded at
 * run time (dlopen "libcuda.so.1": it ships with the driver, so ccprobe is
 * never linked against it and runs where it is absent). Without HAVE_CUDA
 * every call fails with "not built: ...".
 */
#include <stddef.h>

/* Number of CUDA devices, or -1 with the reason in err. */
int ib_gpu_count(char *err, size_t len);

/* The PCI address of CUDA device dev, lower case "0000:17:00.0". Returns 0 or -1. */
int ib_gpu_bdf(int dev, char *bdf, size_t len);

/*
 * Allocates len bytes on device dev (len rounded up to 2 MiB). The caller's
 * current device is made current again only when a context was current
 * (cuCtxGetCurrent): a rank that had selected nothing creates no context on
 * GPU 0. Returns 0 or -1 with err.
 */
int ib_gpu_alloc(int dev, size_t len, void **ptr, size_t *alloc_len, char *err, size_t errlen);

/*
 * Sets len bytes at ptr (on device dev) to byte and waits. The caller's
 * current device is gone back to only when its context was current (as
 * ib_gpu_alloc). Returns 0 or -1.
 */
int ib_gpu_memset(int dev, void *ptr, int byte, size_t len);

/* Frees what ib_gpu_alloc returned; NULL is fine. */
void ib_gpu_free(void *ptr);

/*
 * Exports [ptr, ptr + len) as a dmabuf (cuMemGetHandleForAddressRange);
 * ptr and len must be page aligned. Returns the fd, or -1 with err (no
 * libcuda, a driver without the call, or the driver refusing: kernels
 * without dmabuf support, open kernel modules missing).
 */
int ib_gpu_dmabuf_fd(void *ptr, size_t len, char *err, size_t errlen);

#endif
