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
	/* optional: the devices by index, and their fabric info (NVLink domains) */
	nvmlReturn_t (*count)(unsigned int *);
	nvmlReturn_t (*by_index)(unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*fabric)(nvmlDevice_t, void *);     /* struct gpu_fabric_v1 */
	nvmlReturn_t (*fabric_v)(nvmlDevice_t, void *);   /* struct gpu_fabric_v2 */
};

/*
 * nvmlGpuFabricInfo_t and nvmlGpuFabricInfo_v2_t as the driver lays them out
 * (declared here so that an older nvml.h without them still builds); the v2
 * call wants version = sizeof | 2 << 24.
 */
struct gpu_fabric_v1 {
	unsigned char cluster_uuid[16];
	int status;              /* nvmlReturn_t */
	unsigned int clique_id;
	unsigned char state;     /* nvmlGpuFabricState_t */
};

struct gpu_fabric_v2 {
	unsigned int version;
	unsigned char cluster_uuid[16];
	int status;
	unsigned int clique_id;
	unsigned char state;
	unsigned int health_mask;
};
#define GPU_FABRIC_V2_VERSION ((unsigned int)(sizeof(struct gpu_fabric_v2) | (2u << 24)))

/* The fabric info of d in *out (v2 when NVML has it, else v1); 0, or NVML's error. */
int gpu_nvml_fabric(nvmlDevice_t d, struct gpu_fabric_v2 *out);

/* The loaded functions; valid after gpu_nvml_open() returned 0. */
extern struct gpu_nvml nvml;

/* Loads libnvidia-ml once; 0, or -1 with nvml.why. */
int gpu_nvml_open(void);

/* The NVML handle of the GPU at bus (sysfs form); 0, or -1 when NVML cannot say. */
int gpu_nvml_device(const char *bus, nvmlDevice_t *d);
#endif

#endif
