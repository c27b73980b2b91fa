/*
 * gpu/driver.c: entry points of the CUDA driver API (libcuda), looked up at
 * run time so that ccprobe links only the runtime: the PTX kernels of the
 * hbm probe (cuModuleLoadData, cuLaunchKernel), the dmabuf export and the
 * current context of GPUDirect RDMA (probes/ib_gpu.c).
 */
#include "gpu.h"

#ifdef HAVE_CUDA

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

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

#endif
