/*
 * gpu/nvml.c: NVML (NVLink state, driver version), loaded with dlopen at run
 * time and never linked: it comes with the driver. gpu/nvml.h lists the
 * calls; a probe that needs another NVML call adds it to the table there.
 */
#ifdef HAVE_CUDA
#include "nvml.h"
#include "gpu.h"

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
	*(void **)&nvml.pcie_gen = dlsym(nvml.lib, "nvmlDeviceGetCurrPcieLinkGeneration");
	*(void **)&nvml.pcie_width = dlsym(nvml.lib, "nvmlDeviceGetCurrPcieLinkWidth");
	*(void **)&nvml.pcie_max_gen = dlsym(nvml.lib, "nvmlDeviceGetMaxPcieLinkGeneration");
	*(void **)&nvml.pcie_max_width = dlsym(nvml.lib, "nvmlDeviceGetMaxPcieLinkWidth");
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
static const double gts_of_gen[] = { 0, 2.5, 5, 8, 16, 32, 64 };

int gpu_read_link(const char *bus, struct pci_link *l, const char **source)
{
	int in_sysfs = pci_read_link(NULL, bus, l) == 0;
	unsigned int g = 0, w = 0, mg = 0, mw = 0;
	nvmlDevice_t d;

	*source = "sysfs";
	if (gpu_nvml_device(bus, &d) || !nvml.pcie_gen || !nvml.pcie_width || !nvml.pcie_max_gen ||
	    !nvml.pcie_max_width || nvml.pcie_gen(d, &g) != NVML_SUCCESS ||
	    nvml.pcie_width(d, &w) != NVML_SUCCESS || nvml.pcie_max_gen(d, &mg) != NVML_SUCCESS ||
	    nvml.pcie_max_width(d, &mw) != NVML_SUCCESS || g < 1 || g > 6 || mg < 1 || mg > 6)
		return in_sysfs ? 0 : -1;
	snprintf(l->bdf, sizeof(l->bdf), "%s", bus);
	l->cur_gen = (int)g, l->cur_width = (int)w, l->max_gen = (int)mg, l->max_width = (int)mw;
	l->cur_gts = gts_of_gen[g], l->max_gts = gts_of_gen[mg];
	l->cur_GBps = pci_rate_GBps(l->cur_gen, l->cur_width);
	l->max_GBps = pci_rate_GBps(l->max_gen, l->max_width);
	*source = "nvml";
	return 0;
}
#endif /* HAVE_CUDA */
