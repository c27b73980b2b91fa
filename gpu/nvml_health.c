/*
 * gpu/nvml_health.c: the NVML calls of gemm and gpuhealth (gpu/nvml_health.h),
 * looked up in the library gpu/nvml.c opened. The declarations below are
 * nvml.h's (a stable C ABI); every one is optional.
 */
#include "nvml_health.h"

#include <string.h>

static const char *const reason_names[GNV_NREASONS] = {
	"gpu_idle", "app_clocks", "sw_power_cap", "hw_slowdown", "sync_boost",
	"sw_thermal", "hw_thermal", "hw_power_brake", "display_clocks",
};

const char *gnv_reason_name(int i)
{
	return i >= 0 && i < GNV_NREASONS ? reason_names[i] : "?";
}

int gnv_reasons_bad(unsigned long long reasons)
{
	/*
	 * SW power cap holds the clock at the board's power limit: set in nearly
	 * every sample of a healthy 700 W GEMM. Sync boost follows another GPU's
	 * clock. Neither says the GPU is held back by a fault.
	 */
	return (reasons & GNV_REASONS_SLOWDOWN) != 0;
}

#ifdef HAVE_CUDA
#include "nvml.h"

#include <dlfcn.h>
#include <stdio.h>

typedef int nvret;                       /* nvmlReturn_t */
enum { NV_OK = 0, NV_NOT_SUPPORTED = 3, NV_INSUFFICIENT_SIZE = 7, NV_TIMEOUT = 10,
       NV_FUNCTION_NOT_FOUND = 13 };
enum { CLOCK_SM = 1, CLOCK_MEM = 2 };    /* nvmlClockType_t */
enum { ERR_CORRECTED = 0, ERR_UNCORRECTED = 1 };   /* nvmlMemoryErrorType_t */
enum { CNT_VOLATILE = 0, CNT_AGGREGATE = 1 };      /* nvmlEccCounterType_t */
enum { LOC_DRAM = 2, LOC_SRAM = 7 };               /* nvmlMemoryLocation_t */
enum { NVL_REPLAY = 0, NVL_RECOVERY = 1, NVL_CRC_FLIT = 2, NVL_CRC_DATA = 3 };
#define NVLINK_MAX 18                    /* NVML_NVLINK_MAX_LINKS */
#define EVENT_XID 0x8ULL                 /* nvmlEventTypeXidCriticalError */

typedef struct {                         /* nvmlEventData_t */
	gnv_device device;
	unsigned long long type, data;
	unsigned int gi, ci;
} nv_event;

static struct {
	int tried;
	/* optional: NULL when the driver's NVML lacks them */
	nvret (*clock)(gnv_device, int, unsigned *);
	nvret (*max_clock)(gnv_device, int, unsigned *);
	nvret (*app_clock)(gnv_device, int, unsigned *);
	nvret (*power)(gnv_device, unsigned *);
	nvret (*temp)(gnv_device, int, unsigned *);
	nvret (*reasons)(gnv_device, unsigned long long *);
	nvret (*ecc_mode)(gnv_device, int *, int *);
	nvret (*mem_errors)(gnv_device, int, int, int, unsigned long long *);
	nvret (*total_ecc)(gnv_device, int, int, unsigned long long *);
	nvret (*remapped)(gnv_device, unsigned *, unsigned *, unsigned *, unsigned *);
	nvret (*retired)(gnv_device, int, unsigned *, unsigned long long *);
	nvret (*retired_pending)(gnv_device, int *);
	nvret (*persistence)(gnv_device, int *);
	nvret (*power_limit)(gnv_device, unsigned *);
	nvret (*power_default)(gnv_device, unsigned *);
	nvret (*pcie_replay)(gnv_device, unsigned *);
	nvret (*nvl_state)(gnv_device, unsigned, int *);
	nvret (*nvl_error)(gnv_device, unsigned, int, unsigned long long *);
	nvret (*set_create)(gnv_events *);
	nvret (*register_events)(gnv_device, unsigned long long, gnv_events);
	nvret (*set_wait)(gnv_events, nv_event *, unsigned);
	nvret (*set_free)(gnv_events);
} nv;

#define SYM(field, name) (*(void **)&nv.field = dlsym(nvml.lib, name))

static const char *error_text(nvret r)
{
	return nvml.error((nvmlReturn_t)r);
}

int gnv_open(char *why, size_t len)
{
	if (gpu_nvml_open()) {
		snprintf(why, len, "NVML: %s", nvml.why);
		return -1;
	}
	if (nv.tried)
		return 0;
	nv.tried = 1;
	SYM(clock, "nvmlDeviceGetClockInfo");
	SYM(max_clock, "nvmlDeviceGetMaxClockInfo");
	SYM(app_clock, "nvmlDeviceGetApplicationsClock");
	SYM(power, "nvmlDeviceGetPowerUsage");
	SYM(temp, "nvmlDeviceGetTemperature");
	/* renamed in driver 535; the old name stays for older drivers */
	if (!SYM(reasons, "nvmlDeviceGetCurrentClocksEventReasons"))
		SYM(reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
	SYM(ecc_mode, "nvmlDeviceGetEccMode");
	SYM(mem_errors, "nvmlDeviceGetMemoryErrorCounter");
	SYM(total_ecc, "nvmlDeviceGetTotalEccErrors");
	SYM(remapped, "nvmlDeviceGetRemappedRows");
	SYM(retired, "nvmlDeviceGetRetiredPages");
	SYM(retired_pending, "nvmlDeviceGetRetiredPagesPendingStatus");
	SYM(persistence, "nvmlDeviceGetPersistenceMode");
	SYM(power_limit, "nvmlDeviceGetPowerManagementLimit");
	SYM(power_default, "nvmlDeviceGetPowerManagementDefaultLimit");
	SYM(pcie_replay, "nvmlDeviceGetPcieReplayCounter");
	SYM(nvl_state, "nvmlDeviceGetNvLinkState");
	SYM(nvl_error, "nvmlDeviceGetNvLinkErrorCounter");
	SYM(set_create, "nvmlEventSetCreate");
	SYM(register_events, "nvmlDeviceRegisterEvents");
	SYM(set_wait, "nvmlEventSetWait_v2");
	SYM(set_free, "nvmlEventSetFree");
	return 0;
}

int gnv_device_by_bus(const char *bus, gnv_device *d, char *why, size_t len)
{
	if (gnv_open(why, len))
		return -1;
	if (gpu_nvml_device(bus, (nvmlDevice_t *)d)) {
		snprintf(why, len, "NVML: no device at %s", bus);
		return -1;
	}
	return 0;
}

void gnv_sample(gnv_device d, struct gnv_sample *s)
{
	unsigned v;
	unsigned long long rb;

	s->sm_mhz = s->mem_mhz = s->power_w = s->temp_c = -1;
	s->reasons = -1;
	if (nv.clock && nv.clock(d, CLOCK_SM, &v) == NV_OK)
		s->sm_mhz = v;
	if (nv.clock && nv.clock(d, CLOCK_MEM, &v) == NV_OK)
		s->mem_mhz = v;
	if (nv.power && nv.power(d, &v) == NV_OK)
		s->power_w = v / 1000.0;
	if (nv.temp && nv.temp(d, 0, &v) == NV_OK)
		s->temp_c = v;
	if (nv.reasons && nv.reasons(d, &rb) == NV_OK)
		s->reasons = (long long)rb;
}

/* a count into health, or its name into unsupported */
static void count(json_t *health, json_t *unsup, const char *name, int ok, unsigned long long v)
{
	if (ok)
		json_object_set_new(health, name, json_integer((json_int_t)v));
	else
		json_array_append_new(unsup, json_string(name));
}

static void ecc_counts(gnv_device d, json_t *h, json_t *un)
{
	static const struct { const char *name; int err, cnt, loc; } k[] = {
		{ "ecc_dram_corrected_volatile", ERR_CORRECTED, CNT_VOLATILE, LOC_DRAM },
		{ "ecc_dram_uncorrected_volatile", ERR_UNCORRECTED, CNT_VOLATILE, LOC_DRAM },
		{ "ecc_dram_corrected_aggregate", ERR_CORRECTED, CNT_AGGREGATE, LOC_DRAM },
		{ "ecc_dram_uncorrected_aggregate", ERR_UNCORRECTED, CNT_AGGREGATE, LOC_DRAM },
		{ "ecc_sram_corrected_volatile", ERR_CORRECTED, CNT_VOLATILE, LOC_SRAM },
		{ "ecc_sram_uncorrected_volatile", ERR_UNCORRECTED, CNT_VOLATILE, LOC_SRAM },
		{ "ecc_sram_corrected_aggregate", ERR_CORRECTED, CNT_AGGREGATE, LOC_SRAM },
		{ "ecc_sram_uncorrected_aggregate", ERR_UNCORRECTED, CNT_AGGREGATE, LOC_SRAM },
	};
	unsigned long long v = 0;

	int ok;

	/* each call before its count is used: argument order is unspecified in C */
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		ok = nv.mem_errors && nv.mem_errors(d, k[i].err, k[i].cnt, k[i].loc, &v) == NV_OK;
		count(h, un, k[i].name, ok, v);
	}
	/* every location summed, where per-location counters are not supported */
	ok = nv.total_ecc && nv.total_ecc(d, ERR_UNCORRECTED, CNT_VOLATILE, &v) == NV_OK;
	count(h, un, "ecc_uncorrected_volatile", ok, v);
	ok = nv.total_ecc && nv.total_ecc(d, ERR_UNCORRECTED, CNT_AGGREGATE, &v) == NV_OK;
	count(h, un, "ecc_uncorrected_aggregate", ok, v);
}

static void nvlink_counts(gnv_device d, json_t *h, json_t *un, json_t *links)
{
	static const struct { const char *name; int c; } k[] = {
		{ "replay", NVL_REPLAY }, { "recovery", NVL_RECOVERY },
		{ "crc_flit", NVL_CRC_FLIT }, { "crc_data", NVL_CRC_DATA },
	};
	unsigned long long sum[4] = { 0 };
	int any[4] = { 0 }, nlinks = 0;

	for (unsigned l = 0; nv.nvl_state && l < NVLINK_MAX; l++) {
		int on = 0;
		json_t *lj;

		if (nv.nvl_state(d, l, &on) != NV_OK)
			continue;          /* no such link on this GPU */
		nlinks++;
		lj = json_pack("{s:i, s:b}", "link", (int)l, "active", on == 1);
		for (int i = 0; i < 4; i++) {
			unsigned long long v;

			if (nv.nvl_error && nv.nvl_error(d, l, k[i].c, &v) == NV_OK) {
				json_object_set_new(lj, k[i].name, json_integer((json_int_t)v));
				sum[i] += v;
				any[i] = 1;
			}
		}
		json_array_append_new(links, lj);
	}
	if (!nlinks)
		return;            /* a GPU without NVLink: nothing to count */
	count(h, un, "nvlink_replay", any[0], sum[0]);
	count(h, un, "nvlink_recovery", any[1], sum[1]);
	count(h, un, "nvlink_crc", any[2] || any[3], sum[2] + sum[3]);
}

json_t *gnv_health(gnv_device d)
{
	json_t *o = json_object(), *h = json_object(), *un = json_array(), *links = json_array();
	unsigned a = 0, b = 0, c = 0, f = 0, v = 0, mx = 0;
	int cur = 0, pend = 0;

	ecc_counts(d, h, un);
	if (nv.ecc_mode && nv.ecc_mode(d, &cur, &pend) == NV_OK)
		json_object_set_new(o, "ecc_mode", json_pack("{s:b, s:b}", "current", cur == 1,
							     "pending", pend == 1));
	else
		json_array_append_new(un, json_string("ecc_mode"));
	if (nv.remapped && nv.remapped(d, &a, &b, &c, &f) == NV_OK) {
		count(h, un, "remap_correctable", 1, a);
		count(h, un, "remap_uncorrectable", 1, b);
		count(h, un, "remap_pending", 1, c ? 1 : 0);
		count(h, un, "remap_failure", 1, f ? 1 : 0);
	} else {
		json_array_append_new(un, json_string("remap"));
	}
	/* with no room for addresses NVML answers INSUFFICIENT_SIZE and gives the count */
	for (int cause = 0; cause < 2; cause++) {
		unsigned cnt = 0;
		nvret r = nv.retired ? nv.retired(d, cause, &cnt, NULL) : NV_FUNCTION_NOT_FOUND;

		count(h, un, cause ? "retired_pages_dbe" : "retired_pages_sbe",
		      r == NV_OK || r == NV_INSUFFICIENT_SIZE, cnt);
	}
	if (nv.retired_pending && nv.retired_pending(d, &cur) == NV_OK)
		count(h, un, "retired_pages_pending", 1, cur == 1);
	else
		count(h, un, "retired_pages_pending", 0, 0);
	if (nv.pcie_replay && nv.pcie_replay(d, &v) == NV_OK)
		count(h, un, "pcie_replay", 1, v);
	else
		count(h, un, "pcie_replay", 0, 0);
	nvlink_counts(d, h, un, links);
	if (nv.persistence && nv.persistence(d, &cur) == NV_OK)
		json_object_set_new(o, "persistence_mode", json_boolean(cur == 1));
	else
		json_array_append_new(un, json_string("persistence_mode"));
	for (int clk = CLOCK_SM; clk <= CLOCK_MEM; clk++) {
		const char *name = clk == CLOCK_SM ? "sm" : "mem";

		if (nv.app_clock && nv.max_clock && nv.app_clock(d, clk, &v) == NV_OK &&
		    nv.max_clock(d, clk, &mx) == NV_OK) {
			json_object_set_new(o, clk == CLOCK_SM ? "app_clocks_sm" : "app_clocks_mem",
					    json_pack("{s:i, s:i, s:b}", "app_mhz", (int)v, "max_mhz",
						      (int)mx, "below_max", v < mx));
		} else {
			char nm[32];

			snprintf(nm, sizeof(nm), "app_clocks_%s", name);
			json_array_append_new(un, json_string(nm));
		}
	}
	if (nv.power_limit && nv.power_default && nv.power_limit(d, &v) == NV_OK &&
	    nv.power_default(d, &mx) == NV_OK)
		json_object_set_new(o, "power_limit", json_pack("{s:f, s:f, s:b}", "limit_w", v / 1000.0,
								"default_w", mx / 1000.0, "below_default",
								v < mx));
	else
		json_array_append_new(un, json_string("power_limit"));
	json_object_set_new(o, "health", h);
	json_object_set_new(o, "nvlink_links", links);
	json_object_set_new(o, "unsupported", un);
	return o;
}

int gnv_xid_register(gnv_device d, gnv_events *set, char *why, size_t len)
{
	nvret r;

	*set = NULL;
	if (!nv.set_create || !nv.register_events || !nv.set_wait || !nv.set_free) {
		snprintf(why, len, "NVML: no event calls in this driver");
		return -1;
	}
	if ((r = nv.set_create(set)) != NV_OK || (r = nv.register_events(d, EVENT_XID, *set)) != NV_OK) {
		snprintf(why, len, "NVML: XID events: %s", error_text(r));
		if (*set)
			nv.set_free(*set);
		*set = NULL;
		return -1;
	}
	return 0;
}

int gnv_xid_drain(gnv_events set, unsigned long long *codes, int max)
{
	nv_event ev;
	int n = 0;

	while (set && n < max) {
		memset(&ev, 0, sizeof(ev));
		if (nv.set_wait(set, &ev, 0) != NV_OK)
			break;        /* NV_TIMEOUT: none waiting */
		if (ev.type & EVENT_XID)
			codes[n++] = ev.data;
	}
	return n;
}

void gnv_xid_free(gnv_events set)
{
	if (set && nv.set_free)
		nv.set_free(set);
}
#endif
