/*
 * probes/gpu.c: what the GPU probes and the nccl backend share (probes/gpu.h).
 * The first half is plain C and builds everywhere; the CUDA half only with
 * HAVE_CUDA. NVML (NVLink link state, driver version) is loaded with
 * dlopen at run time, never linked: it comes with the driver.
 */
#include "gpu.h"
#include "../bench/sweep.h"
#include "../core/log.h"
#include "../core/size.h"
#include "../core/stats.h"
#include "../core/timer.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_NCCL
#include <nccl.h>
#endif

static const char *p_gpus;      /* --gpus: device ordinal per local rank */

const struct cc_param gpu_params[] = {
	{ "gpus", CC_PARAM_STRING, &p_gpus,
	  "GPU probes, nccl backend: device of each local rank, e.g. 0,1,2,3 or 4-7 [local rank]" },
	{ NULL, 0, NULL, NULL },
};

const char *gpu_list_option(void)
{
	return p_gpus;
}

/* ------------------------------------------------------------------ pure helpers */

static int parse_ordinal(const char *s, const char *end, int *v)
{
	long n = 0;

	if (s == end)
		return -1;
	for (const char *c = s; c < end; c++) {
		if (!isdigit((unsigned char)*c))
			return -1;
		n = n * 10 + (*c - '0');
		if (n > 1023)
			return -1;
	}
	*v = (int)n;
	return 0;
}

int gpu_parse_list(const char *s, int *out, int max, char *err, size_t len)
{
	const char *p = s;
	int n = 0;

	if (!s || !*s) {
		snprintf(err, len, "empty --gpus list (use e.g. 0,1,2,3 or 0-3)");
		return -1;
	}
	while (*p) {
		const char *end = strchr(p, ','), *dash;
		int a, b;

		if (!end)
			end = p + strlen(p);
		dash = memchr(p, '-', (size_t)(end - p));
		if (dash ? parse_ordinal(p, dash, &a) || parse_ordinal(dash + 1, end, &b)
			 : parse_ordinal(p, end, &a)) {
			snprintf(err, len, "invalid --gpus item '%.*s' (a device number or a range "
				 "like 0-3)", (int)(end - p), p);
			return -1;
		}
		if (!dash)
			b = a;
		if (b < a) {
			snprintf(err, len, "invalid --gpus range '%.*s': it runs backwards",
				 (int)(end - p), p);
			return -1;
		}
		for (int d = a; d <= b; d++) {
			for (int k = 0; k < n; k++)
				if (out[k] == d) {
					snprintf(err, len, "device %d appears twice in --gpus", d);
					return -1;
				}
			if (n >= max) {
				snprintf(err, len, "more than %d devices in --gpus", max);
				return -1;
			}
			out[n++] = d;
		}
		p = *end ? end + 1 : end;
		if (*end && !*p) {
			snprintf(err, len, "--gpus list ends with a comma");
			return -1;
		}
	}
	return n;
}

int gpu_pick(int local_rank, int ndev, const int *list, int nlist)
{
	int d;

	if (local_rank < 0 || ndev <= 0)
		return -1;
	if (nlist > 0) {
		if (local_rank >= nlist)
			return -1;
		d = list[local_rank];
	} else {
		d = local_rank;
	}
	return d < ndev ? d : -1;
}

int gpu_devices(int ndev, int *out, int max)
{
	int ids[GPU_MAX], n = -1, k = 0;
	char err[160];

	if (p_gpus)
		n = gpu_parse_list(p_gpus, ids, GPU_MAX, err, sizeof(err));
	for (int i = 0; i < (n >= 0 ? n : ndev) && k < max; i++) {
		int d = n >= 0 ? ids[i] : i;

		if (d < ndev)
			out[k++] = d;
	}
	return k;
}

void gpu_bus_norm(const char *in, char *out, size_t len)
{
	char low[64];
	size_t i;
	const char *colon;

	for (i = 0; in[i] && i + 1 < sizeof(low); i++)
		low[i] = (char)tolower((unsigned char)in[i]);
	low[i] = '\0';
	colon = strchr(low, ':');
	/* an 8-digit domain "00000000:" becomes "0000:" when its top half is zero */
	if (colon && colon - low == 8 && !strncmp(low, "0000", 4))
		snprintf(out, len, "%s", low + 4);
	else
		snprintf(out, len, "%s", low);
}

int gpu_bus_index(char (*bus)[GPU_BUS_LEN], int n, const char *id)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(bus[i], id))
			return i;
	return -1;
}

int gpu_bus_add(char (*bus)[GPU_BUS_LEN], int *n, int max, const char *id)
{
	int at = 0;

	if (gpu_bus_index(bus, *n, id) >= 0)
		return 0;
	if (*n >= max)
		return -1;
	while (at < *n && strcmp(bus[at], id) < 0)
		at++;
	memmove(bus[at + 1], bus[at], (size_t)(*n - at) * GPU_BUS_LEN);
	snprintf(bus[at], GPU_BUS_LEN, "%s", id);
	(*n)++;
	return 0;
}

size_t gpu_copy_sizes(const struct cc_options *o, size_t dmin, size_t dmax, size_t *out,
		      size_t max_out)
{
	struct cc_options d = *o;

	if (!o->sizes_set) {
		d.min_bytes = dmin;
		d.max_bytes = dmax;
		d.factor = 2;
		d.step = 0;
	}
	return sweep_sizes(&d, out, max_out);
}

double gpu_mem_rate_GBps(int clock_khz, int bus_bits)
{
	if (clock_khz <= 0 || bus_bits <= 0)
		return 0.0;
	return 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
}

void gpu_matrix_print(FILE *f, const char *title, int n, const double *m, int decimals)
{
	fprintf(f, "# %s\n", title);
	fprintf(f, "%6s", "D\\D");
	for (int j = 0; j < n; j++)
		fprintf(f, " %9d", j);
	fprintf(f, "\n");
	for (int i = 0; i < n; i++) {
		fprintf(f, "%6d", i);
		for (int j = 0; j < n; j++) {
			double v = m[i * n + j];

			if (i == j)
				fprintf(f, " %9s", "-");
			else if (isnan(v))
				fprintf(f, " %9s", "n/a");
			else
				fprintf(f, " %9.*f", decimals, v);
		}
		fprintf(f, "\n");
	}
}

void gpu_rates_GBps(const double *sec, int reps, int stride, double bytes, double *out)
{
	for (int r = 0; r < reps; r++)
		out[r] = sec[r * stride] > 0 ? bytes / sec[r * stride] / 1e9 : 0.0;
}

double gpu_bw_fields(json_t *rec, const double *bw, int n)
{
	struct stats st;

	if (n < 1 || stats_compute(bw, (size_t)n, &st))
		return 0.0;
	json_object_set_new(rec, "bw_GBps", json_real(st.median));
	json_object_set_new(rec, "bw_stats_GBps", run_stats_json(&st, 1.0));
	return st.median;
}

/* ------------------------------------------------------------------ MPI helpers */

int gpu_agree(MPI_Comm comm, int mine, const char *host, char *why, size_t len)
{
	int sev = mine < 0 ? 2 : mine > 0 ? 1 : 0, worst, rank, who, cand;
	char buf[512] = "";

	MPI_Comm_rank(comm, &rank);
	MPI_Allreduce(&sev, &worst, 1, MPI_INT, MPI_MAX, comm);
	if (worst == 0)
		return 0;
	cand = sev == worst ? rank : INT_MAX;
	MPI_Allreduce(&cand, &who, 1, MPI_INT, MPI_MIN, comm);
	if (rank == who)
		snprintf(buf, sizeof(buf), "%s (rank %d on %s)", why[0] ? why : "failed", rank,
			 host);
	MPI_Bcast(buf, (int)sizeof(buf), MPI_CHAR, who, comm);
	buf[sizeof(buf) - 1] = '\0';
	snprintf(why, len, "%s", buf);
	return worst == 2 ? -1 : 1;
}

int gpu_phase_end(struct cc_run *run, const char *name, int failed, const char *why)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "%s", why);
	if (!gpu_agree(run->mpi->world, failed ? -1 : 0, run->mpi->host, msg, sizeof(msg)))
		return 0;
	run_error(run, "probe", name, msg);
	return -1;
}

/* ------------------------------------------------------------------ GPU names */

/* Rank 0: the GPUs of each host in PCI order, from the inventory. */
static struct host_gpus {
	char host[256];
	int n;
	char bus[GPU_MAX][GPU_BUS_LEN];
} *host_tab;
static int host_ntab;

static struct host_gpus *host_find(const char *host, int add)
{
	struct host_gpus *t;

	for (int i = 0; i < host_ntab; i++)
		if (!strcmp(host_tab[i].host, host))
			return &host_tab[i];
	if (!add)
		return NULL;
	t = realloc(host_tab, (size_t)(host_ntab + 1) * sizeof(*host_tab));
	if (!t)
		return NULL;
	host_tab = t;
	t = &host_tab[host_ntab++];
	memset(t, 0, sizeof(*t));
	snprintf(t->host, sizeof(t->host), "%s", host);
	return t;
}

/* gpuN of bus on host, or -1. */
static int gpu_number(const char *host, const char *bus)
{
	struct host_gpus *t = host_find(host, 0);

	return t ? gpu_bus_index(t->bus, t->n, bus) : -1;
}

static void name_gpu(char *buf, size_t len, const char *host, const char *bus)
{
	int k = gpu_number(host, bus);

	if (k >= 0)
		snprintf(buf, len, "gpu%d", k);
	else
		snprintf(buf, len, "gpu:%s", bus);  /* not in the inventory: the bus id names it */
}

/* Fills the GPU numbers and the element name of one record (rank 0). */
static void name_record(json_t *rec)
{
	const char *host = json_string_value(json_object_get(rec, "host"));
	const char *bus = json_string_value(json_object_get(rec, "bus_id"));
	const char *sb = json_string_value(json_object_get(rec, "src_bus"));
	const char *db = json_string_value(json_object_get(rec, "dst_bus"));
	char a[64], b[64], el[400];

	if (!host)
		return;
	if (bus) {
		name_gpu(a, sizeof(a), host, bus);
		snprintf(el, sizeof(el), "%s/%s", host, a);
		json_object_set_new(rec, "gpu", json_integer(gpu_number(host, bus)));
		json_object_set_new(rec, "element", json_string(el));
	} else if (sb && db) {
		name_gpu(a, sizeof(a), host, sb);
		name_gpu(b, sizeof(b), host, db);
		snprintf(el, sizeof(el), "%s/%s-%s", host, a, b);
		json_object_set_new(rec, "src_gpu", json_integer(gpu_number(host, sb)));
		json_object_set_new(rec, "dst_gpu", json_integer(gpu_number(host, db)));
		json_object_set_new(rec, "element", json_string(el));
	} else {
		json_object_set_new(rec, "element", json_string(host));
	}
}

json_t *gpu_emit(struct cc_run *run, json_t *mine)
{
	json_t *per_rank, *all, *v;
	size_t r, i;

	if (!mine)
		mine = json_array();
	per_rank = run_gather_json(run->mpi->world, mine);
	if (run->mpi->rank != 0)
		return NULL;
	all = json_array();
	json_array_foreach(per_rank, r, v) {
		json_t *rec;

		json_array_foreach(v, i, rec) {
			/* "type": "error" or "skip": a failure or skip of that GPU alone (gemm) */
			const char *type = json_string_value(json_object_get(rec, "type"));
			json_t *out;

			name_record(rec);
			json_array_append(all, rec);
			out = json_deep_copy(rec);
			if (type && !strcmp(type, "error"))
				run->failures++;
			run_record(run, type ? type : "measurement", out);
		}
	}
	json_decref(per_rank);
	return all;
}

int gpu_check_params(char *err, size_t len)
{
	int list[GPU_MAX];

	return p_gpus && gpu_parse_list(p_gpus, list, GPU_MAX, err, len) < 0 ? -1 : 0;
}

int gpu_open_failed(struct cc_run *run, const char *name, int rc, const char *why)
{
	char msg[600];

	if (rc < 0) {
		run_error(run, "probe", name, why);
		return CC_EXIT_RUNTIME;
	}
	snprintf(msg, sizeof(msg), "skipped: %s", why);
	run_skip(run, "probe", name, msg);
	return CC_EXIT_OK;
}

json_t *gpu_build_versions(void)
{
	json_t *v = json_object();
#ifdef HAVE_CUDA
	int rt = 0;
	char buf[32];

	if (cudaRuntimeGetVersion(&rt) == cudaSuccess) {
		snprintf(buf, sizeof(buf), "%d.%d", rt / 1000, rt % 1000 / 10);
		json_object_set_new(v, "cuda_runtime", json_string(buf));
	}
#endif
#ifdef HAVE_NCCL
	{
		int nv = 0;
		char nb[32];

		if (ncclGetVersion(&nv) == ncclSuccess) {
			/* NCCL_VERSION(X,Y,Z): X*10000 + Y*100 + Z since 2.9; X*1000 + Y*100 + Z before */
			if (nv >= 10000)
				snprintf(nb, sizeof(nb), "%d.%d.%d", nv / 10000, nv / 100 % 100, nv % 100);
			else
				snprintf(nb, sizeof(nb), "%d.%d.%d", nv / 1000, nv / 100 % 10, nv % 100);
			json_object_set_new(v, "nccl", json_string(nb));
		}
	}
#endif
	return v;
}

#ifndef HAVE_CUDA

int gpu_open(struct cc_run *run, struct gpu_ctx *g, char *why, size_t len)
{
	(void)run;
	memset(g, 0, sizeof(*g));
	g->dev = -1;
	snprintf(why, len, "built without CUDA");
	return 1;
}

int gpu_select(int local_rank, int *dev, char *why, size_t len)
{
	(void)local_rank;
	*dev = -1;
	snprintf(why, len, "built without CUDA");
	return 1;
}

#else /* HAVE_CUDA */

#include <dlfcn.h>
#include <linux/mempolicy.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int gpu_cuda_fail(cudaError_t e, const char *call, char *why, size_t len)
{
	if (call && log_get_level() >= LOG_DEBUG)
		log_debug("%s: %s (%s)", call, cudaGetErrorString(e), cudaGetErrorName(e));
	snprintf(why, len, "CUDA: %s", cudaGetErrorString(e));
	return -1;
}

/* ------------------------------------------------------------------ NVML, optional */

#ifdef HAVE_NVML_H
#include <nvml.h>
#else
/* The few NVML declarations used, as nvml.h declares them (a stable C ABI). */
typedef enum { NVML_SUCCESS = 0 } nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 } nvmlEnableState_t;
#define NVML_NVLINK_MAX_LINKS 18
#endif

static struct {
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
} nvml;

/* Loads libnvidia-ml from the driver; 0, or -1 with nvml.why. */
static int nvml_open(void)
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

/* [{link, active, version}] of the NVLinks of the device at bus, or null. */
static json_t *nvml_links(const char *bus)
{
	nvmlDevice_t d;
	json_t *links;
	const char *colon = strchr(bus, ':');
	char id[32];

	/* NVML spells the domain with 8 digits */
	snprintf(id, sizeof(id), "%s%s", colon && colon - bus == 4 ? "0000" : "", bus);
	if (nvml_open() || nvml.by_bus(id, &d) != NVML_SUCCESS)
		return json_null();
	links = json_array();
	for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
		nvmlEnableState_t on;
		unsigned int ver = 0;

		if (nvml.link_state(d, l, &on) != NVML_SUCCESS)
			continue;  /* no such link on this GPU */
		if (nvml.link_version(d, l, &ver) != NVML_SUCCESS)
			ver = 0;
		json_array_append_new(links, json_pack("{s:i, s:b, s:o}", "link", (int)l,
						       "active", on == NVML_FEATURE_ENABLED,
						       "version", ver ? json_integer(ver) : json_null()));
	}
	return links;
}

/* ------------------------------------------------------------------ devices */

static int list_for_rank(int *list, char *why, size_t len)
{
	if (!p_gpus)
		return 0;
	return gpu_parse_list(p_gpus, list, GPU_MAX, why, len);
}

/* Makes dev current and creates its context now, so that a busy GPU shows here. */
static int use_device(int dev, char *why, size_t len)
{
	cudaError_t e = cudaSetDevice(dev);

	if (e == cudaSuccess)
		e = cudaFree(NULL);
	return e == cudaSuccess ? 0 : gpu_cuda_fail(e, "cudaSetDevice", why, len);
}

int gpu_select(int local_rank, int *dev, char *why, size_t len)
{
	int list[GPU_MAX], nlist, ndev = 0;
	cudaError_t e;

	*dev = -1;
	nlist = list_for_rank(list, why, len);
	if (nlist < 0)
		return -1;
	e = cudaGetDeviceCount(&ndev);
	if (e != cudaSuccess) {
		gpu_cuda_fail(e, "cudaGetDeviceCount", why, len);
		return 1;
	}
	*dev = gpu_pick(local_rank, ndev, list, nlist);
	if (*dev < 0) {
		snprintf(why, len, "local rank %d has no GPU of its own (%d visible%s)", local_rank,
			 ndev, nlist ? ", --gpus given" : "");
		return 1;
	}
	return use_device(*dev, why, len) ? 1 : 0;
}

void gpu_bus_of(int dev, char *out, size_t len)
{
	char raw[64] = "";

	if (cudaDeviceGetPCIBusId(raw, sizeof(raw), dev) != cudaSuccess)
		snprintf(raw, sizeof(raw), "unknown-%d", dev);
	gpu_bus_norm(raw, out, len);
}

static void uuid_text(const cudaUUID_t *u, char *out, size_t len)
{
	const unsigned char *b = (const unsigned char *)u->bytes;
	size_t at = (size_t)snprintf(out, len, "GPU-");

	for (int i = 0; i < 16 && at + 3 < len; i++) {
		at += (size_t)snprintf(out + at, len - at, "%02x", b[i]);
		if ((i == 3 || i == 5 || i == 7 || i == 9) && at + 2 < len)
			out[at++] = '-', out[at] = '\0';
	}
}

/* What one rank tells rank 0 about device dev. */
static json_t *device_json(int dev)
{
	struct cudaDeviceProp p;
	struct pci_link link;
	char bus[GPU_BUS_LEN], uuid[64], cc[16];
	int clk = 0, bits = 0;
	json_t *j;

	gpu_bus_of(dev, bus, sizeof(bus));
	if (cudaGetDeviceProperties(&p, dev) != cudaSuccess)
		return NULL;
	cudaDeviceGetAttribute(&clk, cudaDevAttrMemoryClockRate, dev);
	cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, dev);
	uuid_text(&p.uuid, uuid, sizeof(uuid));
	snprintf(cc, sizeof(cc), "%d.%d", p.major, p.minor);
	j = json_pack("{s:s, s:s, s:s, s:I, s:s, s:i}", "bus_id", bus, "name", p.name,
		      "uuid", uuid, "memory_bytes", (json_int_t)p.totalGlobalMem,
		      "compute_capability", cc, "sm_count", p.multiProcessorCount);
	if (pci_read_link(NULL, bus, &link) == 0) {
		json_object_set_new(j, "numa_node", json_integer(link.numa_node));
		json_object_set_new(j, "pcie", pci_link_json(&link));
	} else {
		json_object_set_new(j, "numa_node", json_integer(-1));
		json_object_set_new(j, "pcie", json_null());
	}
	json_object_set_new(j, "mem_rate_GBps", gpu_mem_rate_GBps(clk, bits) > 0 ?
			    json_real(gpu_mem_rate_GBps(clk, bits)) : json_null());
	return j;
}

/* The P2P access matrix among this rank's devices, by their bus ids. */
static json_t *p2p_json(int ndev)
{
	json_t *bus = json_array(), *m = json_array();

	for (int i = 0; i < ndev; i++) {
		json_t *row = json_array();
		char b[GPU_BUS_LEN];

		gpu_bus_of(i, b, sizeof(b));
		json_array_append_new(bus, json_string(b));
		for (int k = 0; k < ndev; k++) {
			int can = 0;

			if (i != k && cudaDeviceCanAccessPeer(&can, i, k) != cudaSuccess)
				can = 0;
			json_array_append_new(row, i == k ? json_null() : json_boolean(can));
		}
		json_array_append_new(m, row);
	}
	return json_pack("{s:o, s:o}", "bus", bus, "access", m);
}

/* This rank's part of the inventory: all devices on local rank 0, its own elsewhere. */
static json_t *local_inventory(const struct mpictx *mpi, const struct gpu_ctx *g)
{
	json_t *inv = json_pack("{s:s, s:i}", "host", mpi->host, "local_rank", mpi->local_rank);
	json_t *devs = json_array(), *versions = gpu_build_versions(), *links = json_object();
	int drv = 0;
	char buf[96];

	for (int d = 0; d < g->ndev; d++) {
		json_t *j;

		if (mpi->local_rank != 0 && d != g->dev)
			continue;
		j = device_json(d);
		if (!j)
			continue;
		if (mpi->local_rank == 0)
			json_object_set_new(links, json_string_value(json_object_get(j, "bus_id")),
					    nvml_links(json_string_value(json_object_get(j, "bus_id"))));
		json_array_append_new(devs, j);
	}
	json_object_set_new(inv, "devices", devs);
	if (cudaDriverGetVersion(&drv) == cudaSuccess && drv > 0) {
		snprintf(buf, sizeof(buf), "%d.%d", drv / 1000, drv % 1000 / 10);
		json_object_set_new(versions, "cuda_driver", json_string(buf));
	}
	if (mpi->local_rank == 0) {
		if (!nvml_open() && nvml.driver(buf, sizeof(buf)) == NVML_SUCCESS)
			json_object_set_new(versions, "driver", json_string(buf));
		json_object_set_new(inv, "p2p", p2p_json(g->ndev));
		json_object_set_new(inv, "nvlink", links);
		json_object_set_new(inv, "nvml", json_string(nvml.up ? "available" : nvml.why));
	} else {
		json_decref(links);
	}
	json_object_set_new(inv, "versions", versions);
	return inv;
}

/* Position of bus in a JSON array of bus ids, or -1. */
static int bus_index_json(json_t *arr, const char *bus)
{
	json_t *v;
	size_t i;

	json_array_foreach(arr, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), bus))
			return (int)i;
	return -1;
}

/* Rank 0: merges the ranks' parts into one record per host and writes them. */
static void write_inventory(struct cc_run *run, json_t *parts)
{
	struct mpictx *mpi = run->mpi;

	for (int node = 0; node < mpi->nnodes; node++) {
		const char *host = mpi->hosts[node];
		struct host_gpus *t = host_find(host, 1);
		json_t *lead = NULL, *gpus = json_array(), *byb = json_object(), *p;
		json_t *access = json_array(), *rec;
		size_t r;

		if (!t)
			break;
		json_array_foreach(parts, r, p) {
			json_t *d;
			size_t i;

			if (!json_is_object(p) || mpi->rank_node[r] != node)
				continue;
			if (json_integer_value(json_object_get(p, "local_rank")) == 0)
				lead = p;
			json_array_foreach(json_object_get(p, "devices"), i, d) {
				const char *b = json_string_value(json_object_get(d, "bus_id"));

				if (b && !json_object_get(byb, b) && !gpu_bus_add(t->bus, &t->n, GPU_MAX, b))
					json_object_set(byb, b, d);
			}
		}
		for (int k = 0; k < t->n; k++) {
			json_t *d = json_deep_copy(json_object_get(byb, t->bus[k]));
			json_t *nv = lead ? json_object_get(json_object_get(lead, "nvlink"), t->bus[k]) : NULL;
			char el[400];

			snprintf(el, sizeof(el), "%s/gpu%d", host, k);
			json_object_set_new(d, "index", json_integer(k));
			json_object_set_new(d, "element", json_string(el));
			json_object_set(d, "nvlink", nv ? nv : json_null());
			json_array_append_new(gpus, d);
		}
		/* the P2P matrix by host index, as local rank 0 saw it */
		for (int a = 0; a < t->n; a++) {
			json_t *row = json_array(), *p2p = lead ? json_object_get(lead, "p2p") : NULL;
			int ia = p2p ? bus_index_json(json_object_get(p2p, "bus"), t->bus[a]) : -1;

			for (int b = 0; b < t->n; b++) {
				int ib = p2p ? bus_index_json(json_object_get(p2p, "bus"), t->bus[b]) : -1;
				json_t *v = ia >= 0 && ib >= 0 ?
					json_array_get(json_array_get(json_object_get(p2p, "access"), (size_t)ia),
						       (size_t)ib) : NULL;

				json_array_append(row, v ? v : json_null());
			}
			json_array_append_new(access, row);
		}
		rec = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o}", "kind", "gpu", "host", host,
				"versions", lead ? json_deep_copy(json_object_get(lead, "versions")) :
						   json_object(),
				"gpus", gpus, "p2p_access", access,
				"nvml", lead ? json_deep_copy(json_object_get(lead, "nvml")) : json_null());
		json_decref(byb);
		run_record(run, "inventory", rec);
	}
}

int gpu_open(struct cc_run *run, struct gpu_ctx *g, char *why, size_t len)
{
	static int inventory_done;
	struct mpictx *mpi = run->mpi;
	int list[GPU_MAX], nlist, mine = 0, rc, has, any;
	cudaError_t e;

	memset(g, 0, sizeof(*g));
	g->dev = -1;
	g->link.numa_node = -1;
	why[0] = '\0';
	nlist = list_for_rank(list, why, len);
	if (nlist < 0) {
		mine = -1;
	} else if ((e = cudaGetDeviceCount(&g->ndev)) != cudaSuccess) {
		g->ndev = 0;
		gpu_cuda_fail(e, "cudaGetDeviceCount", why, len);
		mine = 1;
	} else if (g->ndev == 0) {
		snprintf(why, len, "no CUDA device visible");
		mine = 1;
	} else {
		g->dev = gpu_pick(mpi->local_rank, g->ndev, list, nlist);
		if (g->dev >= 0 && use_device(g->dev, why, len))
			mine = 1;
	}
	rc = gpu_agree(mpi->world, mine, mpi->host, why, len);
	if (rc)
		return rc;
	has = g->dev >= 0;
	MPI_Allreduce(&has, &any, 1, MPI_INT, MPI_MAX, mpi->world);
	if (!any) {
		snprintf(why, len, "no rank has a GPU of its own (%d ranks per host; --gpus %s)",
			 mpi->local_size, p_gpus ? p_gpus : "not given");
		return 1;
	}
	if (has) {
		gpu_bus_of(g->dev, g->bus_id, sizeof(g->bus_id));
		if (pci_read_link(NULL, g->bus_id, &g->link))
			g->link.numa_node = -1;
	}
	if (!inventory_done) {
		json_t *parts = run_gather_json(mpi->world, local_inventory(mpi, g));

		if (mpi->rank == 0)
			write_inventory(run, parts);
		json_decref(parts);
		inventory_done = 1;
	}
	return 0;
}

/* ------------------------------------------------------------------ host memory */

int gpu_host_alloc(struct gpu_host_buf *b, size_t bytes, int numa, char *why, size_t len)
{
	cudaError_t e;

	memset(b, 0, sizeof(*b));
	b->numa_node = -1;
	b->bytes = bytes ? bytes : 1;
	b->p = mmap(NULL, b->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->p == MAP_FAILED) {
		b->p = NULL;
		snprintf(why, len, "cannot map %zu bytes of host memory: %s", b->bytes,
			 strerror(errno));
		return -1;
	}
	if (numa >= 0 && numa < 1024) {
		unsigned long mask[1024 / (8 * sizeof(unsigned long))] = { 0 };

		mask[numa / (8 * sizeof(unsigned long))] |= 1UL << (numa % (8 * sizeof(unsigned long)));
		/* pages come from the GPU's node when touched below; if the kernel
		 * refuses (no NUMA), they land wherever it chooses and we say so */
		/* maxnode counts one more than the bits the kernel reads */
		if (syscall(SYS_mbind, b->p, b->bytes, MPOL_BIND, mask, 8 * sizeof(mask) + 1, 0) == 0)
			b->numa_node = numa;
		else
			log_debug("mbind to NUMA node %d: %s", numa, strerror(errno));
	}
	memset(b->p, 0, b->bytes);
	e = cudaHostRegister(b->p, b->bytes, cudaHostRegisterPortable);
	if (e != cudaSuccess) {
		munmap(b->p, b->bytes);
		b->p = NULL;
		return gpu_cuda_fail(e, "cudaHostRegister", why, len);
	}
	return 0;
}

void gpu_host_free(struct gpu_host_buf *b)
{
	if (!b->p)
		return;
	cudaHostUnregister(b->p);
	munmap(b->p, b->bytes);
	b->p = NULL;
}

/* ------------------------------------------------------------------ timing */

#define GATE_LIMIT_S 5.0   /* a gate never holds a stream longer than this */

/* Holds streams until every timed copy is queued (see gpu_time_copies). */
static struct gate {
	int open;
	int expired;
} gate;

static void CUDART_CB gate_hold(void *arg)
{
	struct gate *g = arg;
	double until = timer_now() + GATE_LIMIT_S;

	/* runs on a CUDA driver thread: no CUDA calls allowed here */
	while (!__atomic_load_n(&g->open, __ATOMIC_ACQUIRE)) {
		if (timer_now() > until) {
			__atomic_store_n(&g->expired, 1, __ATOMIC_RELEASE);
			return;
		}
		sched_yield();
	}
}

static cudaError_t copy_one(const struct gpu_copy *c)
{
	if (c->peer_dst >= 0)
		return cudaMemcpyPeerAsync(c->dst, c->peer_dst, c->src, c->peer_src, c->bytes,
					   c->stream);
	return cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDefault, c->stream);
}

int gpu_time_copies(const struct gpu_copy *c, int n, int iters, double *sec,
		    char *why, size_t len)
{
	cudaEvent_t ev0[2] = { NULL, NULL }, ev1[2] = { NULL, NULL };
	int gated = iters <= GPU_GATE_MAX_COPIES;
	cudaError_t e = cudaSuccess;
	const char *what = NULL;

#define TRY(call) do { if (e == cudaSuccess && (e = (call)) != cudaSuccess) what = #call; } while (0)
	if (n < 1 || n > 2 || iters < 1) {
		snprintf(why, len, "internal: %d streams, %d copies", n, iters);
		return -1;
	}
	__atomic_store_n(&gate.open, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&gate.expired, 0, __ATOMIC_RELEASE);
	for (int i = 0; i < n; i++) {
		TRY(cudaSetDevice(c[i].dev));
		TRY(cudaEventCreate(&ev0[i]));
		TRY(cudaEventCreate(&ev1[i]));
	}
	for (int i = 0; i < n; i++) {
		TRY(cudaSetDevice(c[i].dev));
		if (gated && c[i].gate)
			TRY(cudaLaunchHostFunc(c[i].stream, gate_hold, &gate));
		TRY(cudaEventRecord(ev0[i], c[i].stream));
	}
	/* in turn, so that two streams start together even without a gate */
	for (int k = 0; k < iters && e == cudaSuccess; k++)
		for (int i = 0; i < n; i++) {
			if (n > 1)
				TRY(cudaSetDevice(c[i].dev));
			TRY(copy_one(&c[i]));
		}
	for (int i = 0; i < n; i++) {
		TRY(cudaSetDevice(c[i].dev));
		TRY(cudaEventRecord(ev1[i], c[i].stream));
	}
	/* always opened, even after an error, so no host function is left waiting */
	__atomic_store_n(&gate.open, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < n; i++) {
		float ms = 0;

		cudaSetDevice(c[i].dev);
		cudaStreamSynchronize(c[i].stream);
		TRY(cudaEventElapsedTime(&ms, ev0[i], ev1[i]));
		sec[i] = ms * 1e-3;
	}
	for (int i = 0; i < n; i++) {
		cudaSetDevice(c[i].dev);
		if (ev0[i])
			cudaEventDestroy(ev0[i]);
		if (ev1[i])
			cudaEventDestroy(ev1[i]);
	}
	cudaSetDevice(c[0].dev);
#undef TRY
	if (e != cudaSuccess)
		return gpu_cuda_fail(e, what, why, len);
	if (__atomic_load_n(&gate.expired, __ATOMIC_ACQUIRE)) {
		snprintf(why, len, "%d copies were not queued within %.0f s (the host is too slow "
			 "or the stream queue is full)", iters, GATE_LIMIT_S);
		return -1;
	}
	return 0;
}

int gpu_sample(const struct gpu_copy *c, int n, int warmup, int iters, int reps, double *span,
	       double *each, char *why, size_t len)
{
	double sec[2];

	/* warm-up: clocks ramp, pages and peer mappings settle; not counted */
	if (warmup > 0 && gpu_time_copies(c, n, warmup, sec, why, len))
		return -1;
	for (int r = 0; r < reps; r++) {
		if (gpu_time_copies(c, n, iters, sec, why, len))
			return -1;
		span[r] = n > 1 && sec[1] > sec[0] ? sec[1] : sec[0];
		for (int i = 0; each && i < n; i++)
			each[r * n + i] = sec[i];
	}
	return 0;
}

#endif /* HAVE_CUDA */
