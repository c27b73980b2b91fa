#ifndef CCDIAG_GPU_NVML_H
#define CCDIAG_GPU_NVML_H

/*
 * NVML, loaded with dlopen("libnvidia-ml.so.1") at run time (gpu/nvml.c):
 * the driver ships it, so a host without the driver still runs ccprobe.
 * Another probe that needs an NVML call adds a member to struct gpu_nvml
 * and its dlsym line in gpu_nvml_open (optional calls may stay NULL); the
 * test double (tests/fakes/) then implements it too.
 */
#ifdef HAVE_CUDA
#include <stddef.h>

#ifdef HAVE_NVML_H
#include <nvml.h>
#else
/* The few NVML declarations used, as nvml.h declares them (a stable C ABI). */
typedef enum { NVML_SUCCESS = 0 } nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 } nvmlEnableState_t;
#define NVML_NVLINK_MAX_LINKS 18
#endif

struct gpu_nvml {
	void *lib;
	int up, tried;
	char why[128];           /* why NVML is unavailable */
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	const char *(*error)(nvmlReturn_t);
	nvmlReturn_t (*driver)(char *, unsigned int);
	nvmlReturn_t (*by_bus)(const char *, nvmlDevice_t *);
	nvmlReturn_t (*link_state)(nvmlDevice_t, unsigned int, nvmlEnableState_t *);
	nvmlReturn_t (*link_version)(nvmlDevice_t, unsigned int, unsigned int *);
	/* optional (NULL when the library lacks them): the PCIe link now and at most */
	nvmlReturn_t (*pcie_gen)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*pcie_width)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*pcie_max_gen)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*pcie_max_width)(nvmlDevice_t, unsigned int *);
};

/* The loaded functions; valid after gpu_nvml_open() returned 0. */
extern struct gpu_nvml nvml;

/* Loads libnvidia-ml once; 0, or -1 with nvml.why. */
int gpu_nvml_open(void);

/* The NVML handle of the GPU at bus (sysfs form); 0, or -1 when NVML cannot say. */
int gpu_nvml_device(const char *bus, nvmlDevice_t *d);
#endif

#endif
