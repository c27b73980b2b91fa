#ifndef CCDIAG_GPU_NVML_HEALTH_H
#define CCDIAG_GPU_NVML_HEALTH_H

/*
 * The NVML calls of the gemm and gpuhealth probes: clocks, power,
 * temperature and clock-event (throttle) reasons for the sustained-load
 * sampler, and the health counters (ECC, row remapping, retired pages,
 * PCIe replay, NVLink errors, XID events). NVML is loaded with dlopen at
 * run time, never linked: it comes with the driver; every call is
 * optional (a driver without it, or a GPU that does not support it,
 * leaves that field null with the reason). They are looked up in the
 * library gpu/nvml.c loads. Read-only: nothing here sets a
 * clock, a power limit or a mode. docs/compute.md lists the fields.
 *
 * The pure helpers (reason names, classification) build everywhere.
 */
#include <jansson.h>
#include <stddef.h>

/* clock-event (throttle) reason bits, as nvml.h numbers them */
#define GNV_REASON_GPU_IDLE         0x1ULL
#define GNV_REASON_APP_CLOCKS       0x2ULL
#define GNV_REASON_SW_POWER_CAP     0x4ULL
#define GNV_REASON_HW_SLOWDOWN      0x8ULL
#define GNV_REASON_SYNC_BOOST       0x10ULL
#define GNV_REASON_SW_THERMAL       0x20ULL
#define GNV_REASON_HW_THERMAL       0x40ULL
#define GNV_REASON_HW_POWER_BRAKE   0x80ULL
#define GNV_REASON_DISPLAY_CLOCKS   0x100ULL
#define GNV_NREASONS 9
/* the reasons that mean slowed down by heat, a failing board or its power brake */
#define GNV_REASONS_SLOWDOWN (GNV_REASON_HW_SLOWDOWN | GNV_REASON_SW_THERMAL | \
			      GNV_REASON_HW_THERMAL | GNV_REASON_HW_POWER_BRAKE)

/* The record name of reason bit i (0..GNV_NREASONS-1): "gpu_idle", "sw_power_cap", ... */
const char *gnv_reason_name(int i);

/*
 * Whether a sample's reasons hold a slowdown (GNV_REASONS_SLOWDOWN): HW
 * slowdown, SW or HW thermal slowdown, HW power brake. Idle, application
 * and display clocks, SW power cap (a healthy GPU at its power limit) and
 * sync boost are not. Returns 1 or 0.
 */
int gnv_reasons_bad(unsigned long long reasons);

/* One reading of the sampler; a field is negative when NVML could not read it. */
struct gnv_sample {
	double sm_mhz, mem_mhz;  /* current SM and memory clocks */
	double power_w;          /* board power draw */
	double temp_c;           /* GPU core temperature */
	long long reasons;       /* clock-event reason bits; -1 unknown */
};

#ifdef HAVE_CUDA
/* NVML's opaque handles, as nvml.h declares them */
typedef struct nvmlDevice_st *gnv_device;
typedef struct nvmlEventSet_st *gnv_events;

/* Loads NVML once. Returns 0, or -1 with why (e.g. "libnvidia-ml.so.1 not found ..."). */
int gnv_open(char *why, size_t len);

/* The handle of the GPU at bus (sysfs form, "0000:17:00.0"). 0, or -1 with why. */
int gnv_device_by_bus(const char *bus, gnv_device *d, char *why, size_t len);

/* Reads the sampler's fields; those NVML cannot read stay negative. */
void gnv_sample(gnv_device d, struct gnv_sample *s);

/*
 * The health object of one GPU (docs/compute.md): "health" counts (ECC,
 * remaps, retired pages, PCIe replay, NVLink errors, summed over links),
 * and beside them ecc mode, persistence, clocks, power limits and the
 * per-link NVLink counters. A field NVML cannot read is left out and
 * named in "unsupported". A new object.
 */
json_t *gnv_health(gnv_device d);

/*
 * Registers d for NVML's critical XID events. Returns 0 with *set, or -1
 * with why (NVML too old, not supported on this GPU).
 */
int gnv_xid_register(gnv_device d, gnv_events *set, char *why, size_t len);

/*
 * Drains the XID events waiting in set (no wait): up to max codes in
 * codes[]. Returns how many were read (more may have been dropped).
 */
int gnv_xid_drain(gnv_events set, unsigned long long *codes, int max);

void gnv_xid_free(gnv_events set);
#endif

#endif
