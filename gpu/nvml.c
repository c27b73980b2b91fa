/*
 * gpu/nvml.c: NVML (NVLink state, driver version, the GPU fabric info of
 * NVLink domains), loaded with dlopen at run
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
	*(void **)&nvml.count = dlsym(nvml.lib, "nvmlDeviceGetCount_v2");
	*(void **)&nvml.by_index = dlsym(nvml.lib, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&nvml.fabric = dlsym(nvml.lib, "nvmlDeviceGetGpuFabricInfo");
	*(void **)&nvml.fabric_v = dlsym(nvml.lib, "nvmlDeviceGetGpuFabricInfoV");
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
int gpu_nvml_fabric(nvmlDevice_t d, struct gpu_fabric_v2 *out)
{
	struct gpu_fabric_v1 v1;
	nvmlReturn_t r;

	memset(out, 0, sizeof(*out));
	if (nvml.fabric_v) {
		out->version = GPU_FABRIC_V2_VERSION;
		return (int)nvml.fabric_v(d, out);
	}
	if (!nvml.fabric)
		return -1;
	memset(&v1, 0, sizeof(v1));
	r = nvml.fabric(d, &v1);
	memcpy(out->cluster_uuid, v1.cluster_uuid, sizeof(v1.cluster_uuid));
	out->status = v1.status;
	out->clique_id = v1.clique_id;
	out->state = v1.state;
	return (int)r;
}

int gpu_fabric_domain(char *out, size_t len)
{
	unsigned int n = 0;
	char first[GPU_FABRIC_LEN] = "", one[GPU_FABRIC_LEN];

	if (gpu_nvml_open()) {
		snprintf(out, len, "!%s", nvml.why);
		return -1;
	}
	if (!nvml.count || !nvml.by_index || (!nvml.fabric && !nvml.fabric_v)) {
		snprintf(out, len, "!this NVML has no GPU fabric info (a driver before NVLink domains)");
		return -1;
	}
	if (nvml.count(&n) != NVML_SUCCESS || !n) {
		snprintf(out, len, "!NVML lists no GPU");
		return -1;
	}
	for (unsigned int i = 0; i < n; i++) {
		struct gpu_fabric_v2 f;
		nvmlDevice_t d;
		int r;

		if (nvml.by_index(i, &d) != NVML_SUCCESS) {
			snprintf(out, len, "!NVML cannot open GPU %u", i);
			return -1;
		}
		r = gpu_nvml_fabric(d, &f);
		if (r) {
			/* NVML_ERROR_NOT_SUPPORTED (3): a GPU outside any NVLink fabric */
			snprintf(out, len, "!%s", r == 3 ? "not an NVLink fabric system (NVML: not supported)" :
				 r < 0 ? "this NVML has no GPU fabric info" : nvml.error((nvmlReturn_t)r));
			return -1;
		}
		if (gpu_fabric_format(f.cluster_uuid, f.clique_id, f.state, f.status, one, sizeof(one))) {
			snprintf(out, len, "!GPU %u: %s", i, one + 1);
			return -1;
		}
		if (!i)
			snprintf(first, sizeof(first), "%s", one);
		else if (strcmp(first, one)) {
			snprintf(out, len, "!GPUs of this host are in two NVLink domains (%s, %s)", first, one);
			return -1;
		}
	}
	snprintf(out, len, "%s", first);
	return 0;
}

#else /* !HAVE_CUDA */
#include "gpu.h"

#include <stdio.h>

int gpu_fabric_domain(char *out, size_t len)
{
	snprintf(out, len, "!built without CUDA (no NVML)");
	return -1;
}
#endif /* HAVE_CUDA */

int gpu_fabric_format(const unsigned char uuid[16], unsigned int clique, int state, int status,
		      char *out, size_t len)
{
	static const char *const states[] = { "not supported", "not started", "in progress" };
	int zero = 1;

	for (int i = 0; i < 16; i++)
		zero &= !uuid[i];
	if (state != 3) {
		snprintf(out, len, state == 0 ?
			 "!not an NVLink fabric system (fabric state: not supported)" :
			 "!the GPU's fabric registration is not done (state: %s)",
			 state >= 0 && state < 3 ? states[state] : "unknown");
		return -1;
	}
	if (status) {
		snprintf(out, len, "!the GPU's fabric registration failed (NVML status %d)", status);
		return -1;
	}
	if (zero) {
		snprintf(out, len, "!the GPU's fabric info has no cluster UUID");
		return -1;
	}
	snprintf(out, len, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x/%u",
		 uuid[0], uuid[1], uuid[2], uuid[3], uuid[4], uuid[5], uuid[6], uuid[7], uuid[8],
		 uuid[9], uuid[10], uuid[11], uuid[12], uuid[13], uuid[14], uuid[15], clique);
	return 0;
}
