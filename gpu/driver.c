/*
 * gpu/driver.c: entry points of the CUDA driver API (libcuda), looked up at
 * run time so that ccprobe links only the runtime: the PTX kernels of the
 * hbm probe (cuModuleLoadData, cuLaunchKernel), the dmabuf export and the
 * current context of GPUDirect RDMA (probes/ib_gpu.c).
 */
#include "gpu.h"

#ifdef HAVE_CUDA

#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static struct {
	pthread_once_t once;
	void *lib;
	char why[200];
} drv = { .once = PTHREAD_ONCE_INIT };

static void open_driver(void)
{
	/* the runtime has loaded libcuda already (when a GPU was opened); this only finds it */
	drv.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!drv.lib)
		snprintf(drv.why, sizeof(drv.why), "cannot load libcuda.so.1: %s", dlerror());
}

void *gpu_driver_sym(const char *name, char *why, size_t len)
{
	/* the process's own first: the test double (tests/fakes, LD_PRELOADed) answers there */
	void *f = dlsym(RTLD_DEFAULT, name);

	if (f)
		return f;
	pthread_once(&drv.once, open_driver);
	if (drv.lib && (f = dlsym(drv.lib, name)))
		return f;
	if (why && len && drv.lib)
		snprintf(why, len, "the CUDA driver (libcuda.so.1) has no %s: too old", name);
	else if (why && len)
		snprintf(why, len, "%s", drv.why);
	return NULL;
}

/* ------------------------------------------------------------------ kernels */

#define KERNEL_BLOCK 256          /* threads per block */

typedef CUresult (*load_fn)(CUmodule *, const void *);
typedef CUresult (*get_fn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*unload_fn)(CUmodule);
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*name_fn)(CUresult, const char **);

static struct {
	load_fn load;
	get_fn get;
	unload_fn unload;
	launch_fn launch;
	name_fn name;
} cu;

/* "CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)", or the number alone */
static void cu_fail(CUresult r, const char *call, char *why, size_t len)
{
	const char *n = NULL;

	if (!cu.name || cu.name(r, &n) != CUDA_SUCCESS)
		n = NULL;
	snprintf(why, len, "%s: %s (CUresult %d)", call, n ? n : "error", (int)r);
}

int gpu_kernels_load(int dev, struct gpu_kernels *k, char *why, size_t len)
{
	CUmodule m = NULL;
	CUfunction f[2];
	CUresult r;
	int sms = 0, per_sm = 0;

	memset(k, 0, sizeof(*k));
	if (!cu.launch) {
		*(void **)&cu.load = gpu_driver_sym("cuModuleLoadData", why, len);
		*(void **)&cu.get = cu.load ? gpu_driver_sym("cuModuleGetFunction", why, len) : NULL;
		*(void **)&cu.unload = cu.get ? gpu_driver_sym("cuModuleUnload", why, len) : NULL;
		*(void **)&cu.name = gpu_driver_sym("cuGetErrorName", NULL, 0);
		*(void **)&cu.launch = cu.unload ? gpu_driver_sym("cuLaunchKernel", why, len) : NULL;
		if (!cu.launch)
			return -1;
	}
	/* into the current context (the runtime's primary context of dev); the driver
	 * compiles the PTX for this GPU */
	if ((r = cu.load(&m, gpu_kernels_ptx)) != CUDA_SUCCESS) {
		cu_fail(r, "cuModuleLoadData of the PTX kernels", why, len);
		return -1;
	}
	if ((r = cu.get(&f[0], m, "ccdiag_copy")) != CUDA_SUCCESS ||
	    (r = cu.get(&f[1], m, "ccdiag_triad")) != CUDA_SUCCESS) {
		cu_fail(r, "cuModuleGetFunction", why, len);
		cu.unload(m);
		return -1;
	}
	/* as many blocks as the GPU holds at once; the loops stride over the rest */
	cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
	cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev);
	k->block = KERNEL_BLOCK;
	k->grid = (unsigned)((sms > 0 ? sms : 132) * (per_sm >= KERNEL_BLOCK ? per_sm / KERNEL_BLOCK : 8));
	k->module = m;
	k->copy = f[0];
	k->triad = f[1];
	return 0;
}

void gpu_kernels_unload(struct gpu_kernels *k)
{
	if (k->module && cu.unload)
		cu.unload((CUmodule)k->module);
	memset(k, 0, sizeof(*k));
}

int gpu_kernel_launch(const struct gpu_kernels *k, void *fn, void **params, cudaStream_t s,
		      char *why, size_t len)
{
	CUresult r = cu.launch((CUfunction)fn, k->grid, 1, 1, k->block, 1, 1, 0, (CUstream)s,
			       params, NULL);

	if (r == CUDA_SUCCESS)
		return 0;
	cu_fail(r, "cuLaunchKernel", why, len);
	return -1;
}

#endif
