/*
 * gpuhealth: what NVML and the kernel know about each GPU's health, in
 * seconds: ECC mode and counts (DRAM and SRAM, volatile and aggregate),
 * row remapping, retired pages, persistence mode, application clocks
 * against the maximum, the power limit against its default, the PCIe
 * replay counter, NVLink error counters per link, XID lines of the kernel
 * log within --xid-since and NVML XID events, and the usable memory
 * (cudaMemGetInfo). ccprobe runs it before and after the other probes of
 * the run (struct probe's around), so a count that grew during the run is
 * in the "after" record's counter_delta. It reads only: no clock, power
 * limit or mode is changed. docs/compute.md has the fields.
 */
#include "gpuhealth.h"
#include "../gpu/gpu.h"
#include "probe.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *p_since = "2h";
static const char *p_log = "/dev/kmsg";

static const struct cc_param health_params[] = {
	{ "xid-since", CC_PARAM_STRING, &p_since,
	  "gpuhealth: kernel-log look-back for XID lines, e.g. 2h, 30m, 1d [2h]" },
	{ "xid-log", CC_PARAM_STRING, &p_log,
	  "gpuhealth: kernel log to read, /dev/kmsg form or dmesg output [/dev/kmsg]" },
	{ NULL, 0, NULL, NULL },
};

/* ------------------------------------------------------------------ pure helpers */

int xid_critical(int code)
{
	/* azurehpc-health-checks azure_gpu_xid.nhc (docs/sources.md) */
	static const int crit[] = { 48, 56, 57, 58, 62, 63, 64, 65, 68, 69, 73, 74, 79, 80, 81,
				    92, 119, 120 };

	for (size_t i = 0; i < sizeof(crit) / sizeof(crit[0]); i++)
		if (crit[i] == code)
			return 1;
	return 0;
}

int xid_parse_since(const char *s, double *sec, char *err, size_t len)
{
	char *end;
	double x;

	x = s ? strtod(s, &end) : 0;
	if (!s || end == s || x < 0 || x > 1e6 || !end[0] || end[1] || !strchr("smhd", end[0])) {
		snprintf(err, len, "invalid --xid-since '%s' (a number with s, m, h or d, e.g. 2h)",
			 s ? s : "");
		return -1;
	}
	*sec = x * (end[0] == 's' ? 1 : end[0] == 'm' ? 60 : end[0] == 'h' ? 3600 : 86400);
	return 0;
}

int xid_parse_line(const char *line, int *code, char *pci, size_t pci_len, double *t_boot)
{
	const char *x = strstr(line, "NVRM: Xid (PCI:"), *p, *close;
	unsigned long long us;
	double s;
	char *end;
	size_t n;

	if (!x)
		return -1;
	*t_boot = -1;
	if (line[0] == '[' && sscanf(line, "[%lf]", &s) == 1)
		*t_boot = s;
	else if (sscanf(line, "%*u,%*u,%llu", &us) == 1)
		*t_boot = us / 1e6;
	p = x + strlen("NVRM: Xid (PCI:");
	close = strchr(p, ')');
	if (!close || close[1] != ':')
		return -1;
	n = (size_t)(close - p);
	if (n + 1 > pci_len)
		return -1;
	memcpy(pci, p, n);
	pci[n] = '\0';
	for (char *c = pci; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	*code = (int)strtol(close + 2, &end, 10);
	return end == close + 2 ? -1 : 0;
}

int xid_pci_match(const char *pci, const char *bus)
{
	char a[32], b[32];
	const char *dot = strrchr(bus, '.');
	size_t n = dot ? (size_t)(dot - bus) : strlen(bus);

	/* "0000:17:00" against "0000:17:00.0"; an 8-digit domain compares by its low half */
	gpu_bus_norm(pci, a, sizeof(a));
	if (n >= sizeof(b))
		return 0;
	memcpy(b, bus, n);
	b[n] = '\0';
	return !strcmp(a, b);
}

static int health_check(char *err, size_t len)
{
	double s;

	if (gpu_check_params(err, len) || xid_parse_since(p_since, &s, err, len))
		return -1;
	if (!p_log || !*p_log)
		return options_fail(err, len, "empty --xid-log");
	return 0;
}

#define SUMMARY "GPU health per GPU (NVML): ECC, row remaps, retired pages, clocks, power " \
		"limit, PCIe replay, NVLink errors, XIDs, usable memory; before and after"

/* NVML reads and a kernel-log scan: seconds, before and after the others */
static double health_estimate(const struct cc_options *o)
{
	(void)o;
	return 4;
}

#ifdef HAVE_CUDA

#include "../gpu/nvml_health.h"
#include "../core/watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#define MAX_XID 64

static struct {
	int calls;               /* 0 before the other probes, then after */
	json_t *before;          /* this rank's health counts of the first call */
	gnv_events events;       /* NVML XID events since the first call */
	int events_ok;
	char events_why[160];
} st;

/* XID lines of this GPU within the window: {code, critical, age_s, line} into out */
static void kernel_xids(const char *bus, double since, json_t *out, json_t *rec, int *ncrit)
{
	FILE *f;
	int fd, nline = 0;
	char line[2048], pci[32];
	struct timespec now;
	double now_s;

	clock_gettime(CLOCK_MONOTONIC, &now);
	now_s = now.tv_sec + now.tv_nsec / 1e9;
	/* /dev/kmsg blocks at its end unless opened non-blocking */
	fd = open(p_log, O_RDONLY | O_NONBLOCK);
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		int err = errno;

		json_object_set_new(rec, "xid_log", json_sprintf("cannot read %s: %s", p_log,
								 strerror(err)));
		/* nothing is known of the XIDs before the run: the criterion says why, never passes */
		json_object_set_new(rec, "unknown", json_pack("{s:s}", "health.xid_critical",
			err == EACCES || err == EPERM ?
			"kernel log not readable: run as root or grant CAP_SYSLOG" :
			"kernel log not readable"));
		if (fd >= 0)
			close(fd);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		int code;
		double t;

		if (xid_parse_line(line, &code, pci, sizeof(pci), &t) || !xid_pci_match(pci, bus))
			continue;
		/* a line without a time cannot be placed: it counts, its age unknown */
		if (t >= 0 && now_s - t > since)
			continue;
		line[strcspn(line, "\n")] = '\0';
		*ncrit += xid_critical(code);
		if (nline++ < MAX_XID)
			json_array_append_new(out, json_pack("{s:i, s:b, s:s, s:o, s:s}", "code", code,
				"critical", xid_critical(code), "source", "kernel log",
				"age_s", t >= 0 ? json_real(now_s - t) : json_null(),
				"line", strchr(line, ';') ? strchr(line, ';') + 1 : line));
	}
	fclose(f);
	json_object_set_new(rec, "xid_log", json_string(p_log));
	json_object_set_new(rec, "xid_lines", json_integer(nline));
}

/* counter_delta: after - before for each count in both */
static json_t *deltas(json_t *before, json_t *after)
{
	json_t *d = json_object(), *v;
	const char *k;

	json_object_foreach(after, k, v) {
		json_t *b = json_object_get(before, k);

		if (json_is_integer(v) && json_is_integer(b))
			json_object_set_new(d, k, json_integer(json_integer_value(v) - json_integer_value(b)));
	}
	return d;
}

static json_t *measure(struct cc_run *run, const struct gpu_ctx *g, const char *phase, double since)
{
	json_t *rec, *xids = json_array(), *h;
	char why[200];
	gnv_device d;
	size_t fr = 0, tot = 0, nevents;
	int ncrit = 0, nev = 0, nv;
	cudaError_t e;

	rec = json_pack("{s:s, s:s, s:s, s:s, s:n, s:s, s:s, s:s, s:f}", "kind", "probe", "name",
			"gpuhealth", "test", "health", "scope", "gpu", "element", "host", run->mpi->host,
			"bus_id", g->bus_id, "phase", phase, "xid_since_s", since);
	e = cudaMemGetInfo(&fr, &tot);
	if (e == cudaSuccess) {
		json_object_set_new(rec, "mem_total_bytes", json_integer((json_int_t)tot));
		json_object_set_new(rec, "mem_free_bytes", json_integer((json_int_t)fr));
	} else {
		json_object_set_new(rec, "memory", json_sprintf("CUDA: %s", cudaGetErrorString(e)));
	}
	nv = gnv_device_by_bus(g->bus_id, &d, why, sizeof(why));
	json_object_set_new(rec, "nvml", json_string(nv ? why : "available"));
	if (nv) {
		h = json_object();
	} else {
		json_t *o = gnv_health(d);

		json_object_update(rec, o);
		json_decref(o);
		h = json_incref(json_object_get(rec, "health"));
		if (!st.calls) {
			st.events_ok = !gnv_xid_register(d, &st.events, st.events_why,
							  sizeof(st.events_why));
		} else if (st.events_ok) {
			unsigned long long codes[MAX_XID];
			int n = gnv_xid_drain(st.events, codes, MAX_XID);

			for (int i = 0; i < n; i++) {
				nev += xid_critical((int)codes[i]);
				json_array_append_new(xids, json_pack("{s:i, s:b, s:s}", "code", (int)codes[i],
					"critical", xid_critical((int)codes[i]), "source", "NVML event"));
			}
		}
		json_object_set_new(rec, "xid_events", json_string(st.events_ok ? "registered" :
								       st.events_why));
	}
	nevents = json_array_size(xids);
	kernel_xids(g->bus_id, since, xids, rec, &ncrit);
	/*
	 * Two counts, each published only when its source was read: the kernel
	 * log's (within --xid-since, so before the run too) and NVML's events,
	 * which report nothing from before their registration (the first call).
	 */
	if (json_is_integer(json_object_get(rec, "xid_lines"))) {
		json_object_set_new(h, "xid_critical", json_integer(ncrit));
		json_object_set_new(h, "xid_total", json_integer((json_int_t)(json_array_size(xids) -
									      nevents)));
	}
	if (st.events_ok) {
		json_object_set_new(h, "xid_event_critical", json_integer(nev));
		json_object_set_new(h, "xid_event_total", json_integer((json_int_t)nevents));
	}
	json_object_set_new(rec, "health", h);
	json_object_set_new(rec, "xids", xids);
	if (st.calls && st.before)
		json_object_set_new(rec, "counter_delta", deltas(st.before, h));
	if (!st.calls)
		st.before = json_deep_copy(h);
	return rec;
}

static void health_print(json_t *all)
{
	json_t *r;
	size_t i;

	printf("# gpuhealth: NVML counters and kernel-log XIDs per GPU (nonzero counts shown)\n");
	json_array_foreach(all, i, r) {
		json_t *h = json_object_get(r, "health"), *v;
		const char *k;
		int any = 0;

		printf(" %-24s %-6s mem %.1f/%.1f GB free/total;",
		       json_string_value(json_object_get(r, "element")),
		       json_string_value(json_object_get(r, "phase")),
		       json_number_value(json_object_get(r, "mem_free_bytes")) / 1e9,
		       json_number_value(json_object_get(r, "mem_total_bytes")) / 1e9);
		json_object_foreach(h, k, v)
			if (json_integer_value(v)) {
				printf(" %s=%lld", k, (long long)json_integer_value(v));
				any = 1;
			}
		if (!any)
			printf(" no errors counted");
		if (strcmp(json_string_value(json_object_get(r, "nvml")) ?: "", "available"))
			printf(" (%s)", json_string_value(json_object_get(r, "nvml")));
		printf("\n");
	}
	fflush(stdout);
}

static int health_run(struct cc_run *run)
{
	struct gpu_ctx g;
	char why[400] = "";
	const char *phase = st.calls ? "after" : "before";
	json_t *recs = json_array(), *all;
	double since = 7200;
	int rc;

	xid_parse_since(p_since, &since, why, sizeof(why));
	rc = gpu_open(run, "gpuhealth", &g, why, sizeof(why));
	if (rc) {
		json_decref(recs);
		st.calls++;
		return gpu_open_failed(run, "gpuhealth", rc, why);
	}
	watchdog_arm("gpuhealth", json_pack("{s:s, s:s, s:s}", "kind", "probe", "probe", "gpuhealth",
					     "phase", phase));
	if (g.dev >= 0)
		json_array_append_new(recs, measure(run, &g, phase, since));
	watchdog_disarm();
	all = gpu_emit(run, recs);
	if (run->mpi->rank == 0 && !run->opt->quiet)
		health_print(all);
	json_decref(all);
	st.calls++;
	return CC_EXIT_OK;
}

#endif /* HAVE_CUDA */

const struct probe probe_gpuhealth = {
	.name = "gpuhealth",
	.summary = SUMMARY,
	.phase = PHASE_NODE,
	.estimate = health_estimate,
	.params = health_params,
	.check = health_check,
	.around = 1,
#ifdef HAVE_CUDA
	.run = health_run,
#else
	.missing = "built without CUDA",
#endif
};
