/*
 * gpu/nvml.c: NVML (NVLink state, driver version), loaded with dlopen at run
 * time and never linked: it comes with the driver. gpu/nvml.h lists the
 * calls; a probe that needs another NVML call adds it to the table there.
 */
#ifdef HAVE_CUDA
#include "nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

struct gpu_nvml nvml;

int gpu_nvml_open(void)
{
	nvmlReturn_t r;

	if (nvml.up || nvml.tried)
		return nvml.up ? 0 : -1;
	nvml.tried = 1;
	nvml.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!nvml.lib) {
		snprintf(nvml.why, sizeof(nvml.why), "libnvidia-ml.so.1 not found (no NVIDIA driver)");
		return -1;
	}
	*(void **)&nvml.init = dlsym(nvml.lib, "nvmlInit_v2");
	*(void **)&nvml.shutdown = dlsym(nvml.lib, "nvmlShutdown");
	*(void **)&nvml.error = dlsym(nvml.lib, "nvmlErrorString");
	*(void **)&nvml.driver = dlsym(nvml.lib, "nvmlSystemGetDriverVersion");
	*(void **)&nvml.by_bus = dlsym(nvml.lib, "nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&nvml.link_state = dlsym(nvml.lib, "nvmlDeviceGetNvLinkState");
	*(void **)&nvml.link_version = dlsym(nvml.lib, "nvmlDeviceGetNvLinkVersion");
	if (!nvml.init || !nvml.shutdown || !nvml.error || !nvml.driver || !nvml.by_bus ||
	    !nvml.link_state || !nvml.link_version) {
		snprintf(nvml.why, sizeof(nvml.why), "libnvidia-ml.so.1 lacks a needed function");
		dlclose(nvml.lib);
		nvml.lib = NULL;
		return -1;
	}
	r = nvml.init();
	if (r != NVML_SUCCESS) {
		snprintf(nvml.why, sizeof(nvml.why), "nvmlInit: %s", nvml.error(r));
		dlclose(nvml.lib);
		nvml.lib = NULL;
		return -1;
	}
	nvml.up = 1;
	return 0;
}

int gpu_nvml_device(const char *bus, nvmlDevice_t *d)
{
	const char *colon = strchr(bus, ':');
	char id[32];

	/* NVML spells the domain with 8 digits */
	snprintf(id, sizeof(id), "%s%s", colon && colon - bus == 4 ? "0000" : "", bus);
	if (gpu_nvml_open() || nvml.by_bus(id, d) != NVML_SUCCESS)
		return -1;
	return 0;
}
#endif /* HAVE_CUDA */
