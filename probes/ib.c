/*
 * ib: RDMA bandwidth and latency per rail (HCA port) between every pair of
 * nodes, port inventory and error counters, GPUDirect RDMA registration.
 * docs/rdma.md has the method, the parameters and the records.
 *
 * Outline (every rank runs all of it, so that every rank arms and disarms
 * the watchdog for the same steps):
 *  1. discovery: the first rank of each host lists the devices (verbs and
 *     sysfs), picks the rails, reads the port counters; the host's rails go
 *     to its ranks, the inventories to rank 0. No rail anywhere: one skip.
 *  2. every rank opens the rails it drives (probes/ib_plan.h: local rank i
 *     drives rail i) and checks GPUDirect registration on them.
 *  3. for each round of the node tournament (probes/schedule.h) and each
 *     turn of rails: connect an RC queue pair per rail pair (information
 *     exchanged over MPI, settings fingerprinted), then the steps latency,
 *     a -> b, b -> a, both ways, each followed by a barrier of all ranks.
 *  4. counters again; rank 0 writes the deltas.
 */
#include "probe.h"
#include "groups.h"
#include "ib_plan.h"
#include "ib_sysfs.h"
#include "schedule.h"
#include "../core/log.h"
#include "../core/options.h"
#include "../core/size.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t p_size = (size_t)8 << 20;
static int p_depth = 32;
static int p_iters = 100;
static int p_reps = 5;
static int p_warmup = 20;
static const char *p_lat_sizes = "2";
static int p_lat_iters = 10000;
static int p_lat_warmup = 200;
static const char *p_devices = "";
static const char *p_gid_index = "auto";
static const char *p_mem = "host";
static int p_sl;
static int p_tclass;
static int p_qp_timeout = 14;
static int p_retry = 7;

/*
 * Per round (N-1 rounds of the tournament, or the grouped schedule's at
 * scale; rails at once): three bandwidth tests of --ib-warmup + --ib-iters x
 * --ib-reps WRITEs of --ib-size at the node's rate per rail, and
 * --ib-lat-iters round trips (~3 us) per latency size.
 */
static double ib_estimate(const struct cc_options *o)
{
	int n = o->plan_nodes, rounds = n % 2 ? n : n - 1, nlat = 1, within, grouped, planned;
	long np;
	double gbps = o->plan_gbps > 0 ? o->plan_gbps / o->plan_rpn : 400;
	double per = (p_warmup + (double)p_iters * p_reps) * p_size * 8.0 / (gbps * 1e9);

	for (const char *c = p_lat_sizes; *c; c++)
		nlat += *c == ',';
	if (n < 2)
		rounds = 1;  /* loopback on one node */
	else if ((planned = plan_pair_rounds(o, n, &within, &grouped, &np, NULL)) > 0)
		rounds = planned;
	return rounds * (3 * per + nlat * (p_lat_iters + p_lat_warmup) * 3e-6 + 0.5);
}

/* the results header: the job's groups and the node pair schedule (probes/groups.h) */
static void ib_header(const struct cc_options *o, const struct mpictx *mpi, json_t *rec)
{
	job_groups_header(o, mpi, rec, 1);
}

static const struct cc_param ib_params[] = {
	{ "ib-size", CC_PARAM_SIZE, &p_size, "RDMA WRITE size of the bandwidth tests [8M]" },
	{ "ib-depth", CC_PARAM_INT, &p_depth, "WRITEs in flight (queue depth) [32]" },
	{ "ib-iters", CC_PARAM_INT, &p_iters, "timed WRITEs per repetition [100]" },
	{ "ib-reps", CC_PARAM_INT, &p_reps, "bandwidth repetitions, each one sample [5]" },
	{ "ib-warmup", CC_PARAM_INT, &p_warmup, "untimed WRITEs before each bandwidth test [20]" },
	{ "ib-lat-sizes", CC_PARAM_STRING, &p_lat_sizes, "latency message sizes, comma list [2]" },
	{ "ib-lat-iters", CC_PARAM_INT, &p_lat_iters, "timed latency round trips [10000]" },
	{ "ib-lat-warmup", CC_PARAM_INT, &p_lat_warmup, "untimed latency round trips [200]" },
	{ "ib-devices", CC_PARAM_STRING, &p_devices,
	  "rails in order, e.g. mlx5_0,mlx5_3:1 [every active port]" },
	{ "ib-gid-index", CC_PARAM_STRING, &p_gid_index, "GID index on RoCE ports, or auto [auto]" },
	{ "ib-mem", CC_PARAM_STRING, &p_mem, "bandwidth buffers: host or gpu (GPUDirect) [host]" },
	{ "ib-sl", CC_PARAM_INT, &p_sl, "service level [0]" },
	{ "ib-tclass", CC_PARAM_INT, &p_tclass, "traffic class (RoCE: DSCP << 2) [0]" },
	{ "ib-qp-timeout", CC_PARAM_INT, &p_qp_timeout, "ack timeout exponent, 4.096 us << N [14]" },
	{ "ib-retry", CC_PARAM_INT, &p_retry, "transport retries before an error [7]" },
	{ NULL, 0, NULL, NULL },
};

#define IB_MAX_LAT 8
#define IB_MAX_REPS 1000          /* bounds the both-ways sums of write_pair */

/* The latency sizes; returns their number, or -1 for a bad list. */
static int parse_lat_sizes(const char *list, size_t *out)
{
	char buf[256], *save = NULL, *tok;
	int n = 0;

	if (strlen(list) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long long v = strtoull(tok, &end, 10);

		if (n == IB_MAX_LAT || end == tok || *end || v < 1 || v > 65536)
			return -1;
		out[n++] = (size_t)v;
	}
	return n ? n : -1;
}

/* --ib-devices: "dev" or "dev:port" items, comma separated. Returns 0 or -1. */
static int check_devices(const char *list)
{
	char buf[512], *save = NULL, *tok;

	if (strlen(list) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':'), *end;
		long port;

		if (colon == tok || strlen(tok) >= IB_NAME_LEN + 4)
			return -1;
		if (!colon)
			continue;
		port = strtol(colon + 1, &end, 10);
		if (end == colon + 1 || *end || port < 1 || port > 255)
			return -1;
	}
	return 0;
}

static int check_params(char *err, size_t len)
{
	size_t s[IB_MAX_LAT];
	char *end;
	long g = strtol(p_gid_index, &end, 10);

	if (p_size < 1 || p_size > ((size_t)1 << 30))
		snprintf(err, len, "--ib-size must be 1 B to 1 GiB (one WRITE)");
	else if (p_depth < 1 || p_depth > 4096)
		snprintf(err, len, "--ib-depth must be 1 to 4096");
	else if (p_iters < 1 || p_reps < 1 || p_reps > IB_MAX_REPS)
		snprintf(err, len, "--ib-iters must be at least 1 and --ib-reps 1 to %d",
			 IB_MAX_REPS);
	else if (parse_lat_sizes(p_lat_sizes, s) < 0)
		snprintf(err, len, "--ib-lat-sizes takes up to %d sizes of 1 to 65536 bytes, "
			 "e.g. 2,64,4096", IB_MAX_LAT);
	else if (p_lat_iters < 1 || p_lat_iters > 10000000)
		snprintf(err, len, "--ib-lat-iters must be 1 to 10000000");
	else if (strcmp(p_gid_index, "auto") && (end == p_gid_index || *end || g < 0 || g > 255))
		snprintf(err, len, "--ib-gid-index takes auto or 0 to 255");
	else if (check_devices(p_devices))
		snprintf(err, len, "--ib-devices takes DEV or DEV:PORT items, comma separated, "
			 "e.g. mlx5_0,mlx5_1:1");
	else if (strcmp(p_mem, "host") && strcmp(p_mem, "gpu"))
		snprintf(err, len, "--ib-mem takes host or gpu");
#ifndef HAVE_CUDA
	else if (!strcmp(p_mem, "gpu"))
		snprintf(err, len, "--ib-mem gpu needs a build with CUDA (this one has none)");
#endif
	else if (p_sl > 15 || p_tclass > 255 || p_qp_timeout > 31 || p_retry > 7)
		snprintf(err, len, "--ib-sl is 0-15, --ib-tclass 0-255, --ib-qp-timeout 0-31, "
			 "--ib-retry 0-7");
	else
		return 0;
	return -1;
}

#ifdef HAVE_VERBS

#include "ib_gpu.h"
#include "ib_verbs.h"
#include "../gpu/gpu.h"
#include "../core/stats.h"
#include "../core/timer.h"
#include "../core/watchdog.h"

#include <errno.h>
#include <limits.h>
#include <sys/utsname.h>
#include <unistd.h>

#define IB_MAX_RAILS 64
#define TAG_CLOSE 7100
#define TAG_INFO 7101
#define TAG_STATUS 7102
#define TAG_SYNC 7103
#define TAG_ABORT 7104

/* What the first rank of a host found, sent to the host's other ranks. */
struct host_rails {
	int n;                   /* rails */
	char why[192];           /* no rails: why (no devices, no active port) */
	struct {
		char dev[IB_NAME_LEN];
		int port;
		int gid_index;   /* -1: none (InfiniBand) */
		double data_Gbps;/* port data rate; 0 unknown */
		double pcie_GBps;/* the HCA's PCIe link, one direction, as trained; 0 unknown */
		int numa_node;
		char bdf[32];
		char sys_path[256]; /* /sys/devices/... of the PCI device, for GPU affinity */
		int ethernet;    /* link layer Ethernet (RoCE), else InfiniBand */
		int active;
	} rail[IB_MAX_RAILS];
	double rails_Gbps;       /* the compute rails' shared rate (default_rails); 0 unknown */
	int nleft;               /* InfiniBand ports left out of the rails: another rate */
	struct {
		char dev[IB_NAME_LEN];
		int port;
		double data_Gbps;
	} left[IB_MAX_RAILS];
};

/* Port counters read before the run by the first rank of a host. */
struct port_counters {
	char dev[IB_NAME_LEN];
	int port;
	struct ib_counters std, hw;
	double t;
};

/* Steps of a pair; the step that failed is reported as its number. */
enum { S_CONNECT = 1, S_LAT = 2 };   /* then S_LAT + k per latency size, then the three below */
#define S_UNI_AB(c) (S_LAT + (c)->nlat)
#define S_UNI_BA(c) (S_LAT + (c)->nlat + 1)
#define S_COUNT(c) (S_LAT + (c)->nlat + 3)

/* One rank's results for a pair, gathered by rank 0; indices below. */
enum {
	R_PARTNER, R_RAIL, R_FAIL_STEP, R_WRONG, R_RATE_GBPS, R_PCIE_GBPS, R_BW_TIME, R_HDR
};
#define R_LATSTATS 8              /* n, min, median, mean, max, p99, p999, cv */
#define R_LAT(k) (R_HDR + R_LATSTATS * (k))
#define R_UNI(c) (R_HDR + R_LATSTATS * (c)->nlat)
#define R_BI(c) (R_UNI(c) + p_reps)
#define R_N(c) (R_BI(c) + p_reps)
#define MSG_LEN 240

struct ibctx {
	struct cc_run *run;
	const struct ib_transport *tp; /* verbs, or the test transport (CCPROBE_IB_FAKE) */
	struct mpictx *mpi;
	struct host_rails hr;
	struct port_counters *pc;  /* first rank of a host: every port */
	int npc;
	int loopback;              /* one host: every rank is its own node of the plan */
	int nv, v, vlocal;         /* nodes of the plan, this rank's node and local index */
	int *vrank_node;           /* [size] */
	int *nrails;               /* [nv] */
	struct ib_layout lay;
	int turns;
	struct ib_rail *rails;     /* [turns] the rails this rank drives */
	int *rail_open;            /* [turns] 1 open, 0 not driven, -1 failed */
	char (*rail_err)[MSG_LEN];
	size_t lat[IB_MAX_LAT];
	int nlat;
	uint32_t settings;
	double *res, *all;         /* [R_N], rank 0: [size][R_N] */
	char msg[MSG_LEN], *allmsg;
	double *samples;           /* [p_lat_iters] */
	/* rank 0: names */
	char **vhost;              /* [nv] display host of each plan node */
	char (*rail_name)[40];     /* [nv * rails_max] "mlx5_0:1" */
	int failed;                /* rank 0: an error record was written */
	int printed;               /* rank 0: lines printed on stdout */
	/* the current pair */
	int peer;
	MPI_Request abort_req;
	int abort_in, abort_out;
	MPI_Request abort_sreq;
	int abort_tag;
};

/* ------------------------------------------------------------------ discovery */

static const char *port_state_name(const struct ib_port_sysfs *s, const struct ib_port_query *q)
{
	return s->state_name[0] ? s->state_name : ibv_port_state_str((enum ibv_port_state)q->state);
}

/* Port rates: from the verbs codes, else (XDR on old rdma-core) from the sysfs string. */
static void port_rate(const struct ib_port_query *a, const struct ib_port_sysfs *s, double *nominal,
		      double *data, const char **source, int *lanes, const char **speed)
{
	const struct ib_speed *sp = ib_speed_find(a->speed);

	*nominal = ib_rate_Gbps(a->width, a->speed);
	*data = ib_data_rate_Gbps(a->width, a->speed);
	*lanes = ib_width_lanes(a->width);
	*speed = sp ? sp->name : NULL;
	*source = "verbs";
	if (*nominal > 0)
		return;
	if (s->rate.Gbps > 0) {
		*nominal = s->rate.Gbps;
		*data = s->rate.speed ? s->rate.lanes * s->rate.speed->data_Gbps : s->rate.Gbps;
		*lanes = s->rate.lanes;
		*speed = s->rate.speed ? s->rate.speed->name : NULL;
		*source = "sysfs";
	} else {
		*source = NULL;
	}
}

/* Whether "dev:port" was asked for by --ib-devices; returns its position or -1. */
static int wanted(const char *dev, int port)
{
	char buf[512], *save = NULL, *tok;
	int i = 0;

	snprintf(buf, sizeof(buf), "%s", p_devices);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), i++) {
		char *colon = strchr(tok, ':');

		if (colon) {
			*colon = '\0';
			if (!strcmp(tok, dev) && atoi(colon + 1) == port)
				return i;
		} else if (!strcmp(tok, dev)) {
			return i;
		}
	}
	return -1;
}

static json_t *gid_json(const struct ib_gid_choice *g)
{
	if (g->index < 0)
		return json_null();
	return json_pack("{s:i, s:s, s:s, s:s}", "index", g->index, "gid", g->gid, "type", g->type,
			 "netdev", g->netdev);
}

/* Adds a rail for port p of dev (position pos in --ib-devices, or -1 = in order). */
static void add_rail(struct ibctx *c, const struct ib_dev_sysfs *ds, int port, int gid_index,
		     double data_Gbps, const struct pci_link *pl, const char *sys_path, int pos,
		     int *order, const struct ib_port_query *a)
{
	struct host_rails *hr = &c->hr;

	if (hr->n == IB_MAX_RAILS)
		return;
	snprintf(hr->rail[hr->n].dev, IB_NAME_LEN, "%s", ds->name);
	hr->rail[hr->n].port = port;
	hr->rail[hr->n].gid_index = gid_index;
	hr->rail[hr->n].data_Gbps = data_Gbps;
	hr->rail[hr->n].numa_node = pl ? pl->numa_node : -1;
	hr->rail[hr->n].pcie_GBps = pl ? pl->cur_GBps : 0;
	snprintf(hr->rail[hr->n].bdf, sizeof(hr->rail[0].bdf), "%s", ds->bdf);
	snprintf(hr->rail[hr->n].sys_path, sizeof(hr->rail[0].sys_path), "%s", sys_path);
	hr->rail[hr->n].ethernet = a->ethernet;
	hr->rail[hr->n].active = a->state == IBV_PORT_ACTIVE;
	order[hr->n++] = pos;
}

/* Sorts the rails by their position in --ib-devices (stable). */
static void order_rails(struct host_rails *hr, int *order)
{
	for (int i = 1; i < hr->n; i++)
		for (int j = i; j > 0 && order[j] < order[j - 1]; j--) {
			int t = order[j];
			__typeof__(hr->rail[0]) r = hr->rail[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
			hr->rail[j] = hr->rail[j - 1];
			hr->rail[j - 1] = r;
		}
}

/* Natural order of names: "mlx5_3" before "mlx5_10". */
static int rail_key_cmp(const void *pa, const void *pb)
{
	const __typeof__(((struct host_rails *)0)->rail[0]) *a = pa, *b = pb;
	int c;

	/* PCI order first (a device without a PCI address after those with one) */
	if (!a->bdf[0] != !b->bdf[0])
		return a->bdf[0] ? -1 : 1;
	if (a->bdf[0] && (c = strcmp(a->bdf, b->bdf)))
		return c;
	if ((c = strverscmp(a->dev, b->dev)))
		return c;
	return a->port - b->port;
}

/*
 * The rails without --ib-devices: when any port is InfiniBand, the
 * InfiniBand ports only (the Ethernet ports of an HGX node are storage and
 * management networks); a RoCE-only host keeps its Ethernet ports. Of
 * those, the active ports at the rate most of them share (ib_rails_rate):
 * SuperPOD-style hosts run their storage ConnectX-7 ports as InfiniBand too,
 * often at NDR200, and as rails they would shift the numbering and be
 * judged against compute bounds; they are left out and listed (hr->left).
 * In PCI order, a down port kept in its place (it fails as a rail: rail r
 * pairs the r-th NIC of every host, never a shifted one).
 */
static void default_rails(struct host_rails *hr)
{
	int ib = 0, any = 0, k = 0, active[IB_MAX_RAILS];
	double rate[IB_MAX_RAILS];

	for (int i = 0; i < hr->n; i++) {
		ib |= !hr->rail[i].ethernet;
		any |= hr->rail[i].active;
	}
	if (!any) {
		hr->n = 0;   /* nothing is up: "no active RDMA port" */
		return;
	}
	for (int i = 0; i < hr->n; i++)
		if (!ib || !hr->rail[i].ethernet)
			hr->rail[k++] = hr->rail[i];
	hr->n = k;
	for (int i = 0; i < hr->n; i++) {
		rate[i] = hr->rail[i].data_Gbps;
		active[i] = hr->rail[i].active;
	}
	hr->rails_Gbps = ib_rails_rate(rate, active, hr->n);
	k = 0;
	for (int i = 0; i < hr->n; i++) {
		if (!hr->rail[i].active || !(hr->rails_Gbps > 0) ||
		    hr->rail[i].data_Gbps == hr->rails_Gbps) {
			hr->rail[k++] = hr->rail[i];
			continue;
		}
		snprintf(hr->left[hr->nleft].dev, IB_NAME_LEN, "%s", hr->rail[i].dev);
		hr->left[hr->nleft].port = hr->rail[i].port;
		hr->left[hr->nleft++].data_Gbps = hr->rail[i].data_Gbps;
	}
	hr->n = k;
	qsort(hr->rail, (size_t)hr->n, sizeof(hr->rail[0]), rail_key_cmp);
}

/* Writes each port's rail number into the inventory. */
static void number_rails(const struct host_rails *hr, json_t *devs)
{
	size_t i, j;
	json_t *d, *p;

	json_array_foreach(devs, i, d)
		json_array_foreach(json_object_get(d, "ports"), j, p)
			for (int r = 0; r < hr->n; r++)
				if (!strcmp(hr->rail[r].dev, json_string_value(json_object_get(d, "name"))) &&
				    hr->rail[r].port == json_integer_value(json_object_get(p, "port")))
					json_object_set_new(p, "rail", json_integer(r));
}

static void read_counters(const char *root, struct port_counters *pc)
{
	if (ib_counters_read(root, pc->dev, pc->port, "counters", &pc->std) < 0)
		pc->std.n = 0;
	if (ib_counters_read(root, pc->dev, pc->port, "hw_counters", &pc->hw) < 0)
		pc->hw.n = 0;
	pc->t = timer_now();
}

/* One device's inventory entry; adds its rails and counter slots. */
static json_t *inventory_device(struct ibctx *c, const char *name, json_t *versions, int *order)
{
	const struct ib_transport *tp = c->tp;
	struct ib_dev_sysfs ds;
	struct pci_link pl;
	json_t *ports = json_array(), *d;
	char key[96], sys_path[PATH_MAX] = "", fw[64] = "", err[200] = "";
	int have_pci = 0, nports;

	ib_sysfs_device(tp->root, name, &ds);
	if (ds.bdf[0] && !pci_read_link(tp->root, ds.bdf, &pl)) {
		char link[400];

		have_pci = 1;
		snprintf(link, sizeof(link), "%s/bus/pci/devices/%s", tp->root ? tp->root : "/sys",
			 ds.bdf);
		if (!realpath(link, sys_path))
			sys_path[0] = '\0';
	}
	nports = tp->query_device(tp, name, fw, sizeof(fw), err, sizeof(err));
	d = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o}", "name", name,
		      "fw_ver", ds.fw_ver[0] ? ds.fw_ver : fw, "node_guid", ds.node_guid,
		      "board_id", ds.board_id, "hca_type", ds.hca_type,
		      "pci", have_pci ? pci_link_json(&pl) : json_null());
	/* ACS on the bridges above the NIC breaks or slows GPUDirect RDMA */
	json_object_set_new(d, "pci_path", ds.bdf[0] ? pci_path_json(tp->root, ds.bdf) : json_null());
	if (nports < 0) {
		json_object_set_new(d, "error", json_string(err));
		nports = ds.nports ? ds.ports[ds.nports - 1] : 0;
	}
	snprintf(key, sizeof(key), "fw:%s", name);
	json_object_set_new(versions, key, json_string(ds.fw_ver[0] ? ds.fw_ver : fw));
	for (int p = 1; p <= nports && p < 256; p++) {
		struct ib_port_query a = { 0 };
		struct ib_port_sysfs s;
		struct ib_gid_choice g = { .index = -1 };
		double nominal, data;
		const char *src, *speed;
		int lanes, pos, gid_index = -1;
		json_t *pj;

		ib_sysfs_port(tp->root, name, p, &s);
		if (tp->query_port(tp, name, p, &a)) {
			json_array_append_new(ports, json_pack("{s:i, s:s}", "port", p, "error",
							       "cannot query the port"));
			continue;
		}
		if (strcmp(p_gid_index, "auto")) {
			gid_index = atoi(p_gid_index);
			ib_sysfs_gid(tp->root, name, p, gid_index, &g);
			g.index = gid_index;
		} else if (!ib_sysfs_choose_gid(tp->root, name, p, a.ethernet, &g)) {
			gid_index = a.ethernet ? g.index : -1;   /* InfiniBand: no GRH needed */
		}
		port_rate(&a, &s, &nominal, &data, &src, &lanes, &speed);
		pj = json_pack("{s:i, s:s, s:s, s:s, s:i}", "port", p, "state", port_state_name(&s, &a),
			       "phys_state", s.phys_state_name, "link_layer",
			       a.ethernet ? "Ethernet" : "InfiniBand", "lid", a.lid);
		json_object_set_new(pj, "width", lanes ? json_sprintf("%dX", lanes) : json_null());
		json_object_set_new(pj, "speed", speed ? json_string(speed) : json_null());
		json_object_set_new(pj, "rate_Gbps", nominal > 0 ? json_real(nominal) : json_null());
		json_object_set_new(pj, "data_rate_Gbps", data > 0 ? json_real(data) : json_null());
		json_object_set_new(pj, "rate_GBps", data > 0 ? json_real(data / 8.0) : json_null());
		json_object_set_new(pj, "rate_source", src ? json_string(src) : json_null());
		json_object_set_new(pj, "rate_sysfs", json_string(s.rate_str));
		json_object_set_new(pj, "active_mtu", json_integer(ib_mtu_bytes(a.active_mtu)));
		json_object_set_new(pj, "max_mtu", json_integer(ib_mtu_bytes(a.max_mtu)));
		json_object_set_new(pj, "gid", gid_json(&g));
		/* every port is a candidate rail, a down one too: rail r must pair the same
		 * NIC position on every host (default_rails picks and orders them) */
		pos = p_devices[0] ? wanted(name, p) : 0;
		json_object_set_new(pj, "rail", json_null());   /* set once the rails are ordered */
		if (pos >= 0)
			add_rail(c, &ds, p, gid_index, data, have_pci ? &pl : NULL, sys_path, pos,
				 order, &a);
		json_array_append_new(ports, pj);
		if (c->npc < 4 * IB_MAX_RAILS) {
			struct port_counters *pc = &c->pc[c->npc++];

			snprintf(pc->dev, sizeof(pc->dev), "%s", name);
			pc->port = p;
			read_counters(tp->root, pc);
		}
	}
	json_object_set_new(d, "ports", ports);
	return d;
}

/* First rank of a host: lists devices, picks rails, reads counters; returns the inventory. */
static json_t *discover(struct ibctx *c)
{
	json_t *inv, *devs = json_array(), *versions = json_object(), *rails = json_array();
	int n, order[IB_MAX_RAILS];
	char (*names)[IB_NAME_LEN] = calloc(IB_MAX_RAILS, IB_NAME_LEN);
	struct utsname u;

	if (!uname(&u))
		json_object_set_new(versions, "kernel", json_string(u.release));
	n = names ? c->tp->list(c->tp, names, IB_MAX_RAILS, c->hr.why, sizeof(c->hr.why)) : 0;
	if (!names)
		snprintf(c->hr.why, sizeof(c->hr.why), "out of memory");
	for (int i = 0; i < n; i++)
		json_array_append_new(devs, inventory_device(c, names[i], versions, order));
	free(names);
	if (p_devices[0])
		order_rails(&c->hr, order);
	else
		default_rails(&c->hr);
	number_rails(&c->hr, devs);
	if (n && !c->hr.n)
		snprintf(c->hr.why, sizeof(c->hr.why), "%s", p_devices[0] ?
			 "none of the ports of --ib-devices exists" : "no active RDMA port");
	for (int i = 0; i < c->hr.n; i++)
		json_array_append_new(rails, json_sprintf("%s:%d", c->hr.rail[i].dev,
							  c->hr.rail[i].port));
	inv = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o}", "kind", "rdma", "host", c->mpi->host,
			"transport", c->tp->name, "devices", devs, "rails", rails, "versions", versions);
	if (c->hr.why[0])
		json_object_set_new(inv, "reason", json_string(c->hr.why));
	if (c->hr.nleft) {
		json_t *left = json_array();

		for (int i = 0; i < c->hr.nleft; i++) {
			json_t *l = json_pack("{s:s, s:f}", "nic", "", "data_rate_Gbps",
					      c->hr.left[i].data_Gbps);

			json_object_set_new(l, "nic", json_sprintf("%s:%d", c->hr.left[i].dev,
								 c->hr.left[i].port));
			json_object_set_new(l, "reason", json_sprintf("%.0f Gb/s, not the %.0f Gb/s "
				"most InfiniBand ports share (a storage port?); --ib-devices names "
				"rails explicitly", c->hr.left[i].data_Gbps, c->hr.rails_Gbps));
			log_warn("ib: %s: %s:%d left out of the rails: %.0f Gb/s, the others %.0f Gb/s",
				 c->mpi->host, c->hr.left[i].dev, c->hr.left[i].port,
				 c->hr.left[i].data_Gbps, c->hr.rails_Gbps);
			json_array_append_new(left, l);
		}
		json_object_set_new(inv, "rails_left_out", left);
	}
	/* one rail per GPU on a rail-optimised node: more is as suspect as fewer */
	if (c->hr.n && !p_devices[0]) {
		char msg[200];
		int ngpu = ib_sysfs_gpus(c->tp->root);

		json_object_set_new(inv, "gpus", ngpu >= 0 ? json_integer(ngpu) : json_null());
		if (ib_rails_vs_gpus(c->hr.n, ngpu, msg, sizeof(msg))) {
			json_object_set_new(inv, "rails_warning", json_string(msg));
			log_warn("ib: %s: %s", c->mpi->host, msg);
		}
	}
	return inv;
}

/* ------------------------------------------------------------------ pair protocol */

static int peer_stopped(void *arg)
{
	struct ibctx *c = arg;
	int done = 0;

	if (c->abort_in)
		return 1;
	if (c->abort_req != MPI_REQUEST_NULL &&
	    MPI_Test(&c->abort_req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done)
		c->abort_in = 1;
	return c->abort_in;
}

/* Tells the peer, once, that this side gave up, so that it stops spinning. */
static void tell_peer_stop(struct ibctx *c)
{
	static int token = 1;

	if (c->abort_out || c->peer < 0)
		return;
	c->abort_out = 1;
	MPI_Isend(&token, 1, MPI_INT, c->peer, c->abort_tag, c->mpi->world, &c->abort_sreq);
}

static void pair_begin(struct ibctx *c, int peer, int tag)
{
	static int sink;

	c->peer = peer;
	c->abort_in = c->abort_out = 0;
	c->abort_req = c->abort_sreq = MPI_REQUEST_NULL;
	c->abort_tag = tag;
	if (peer >= 0)
		MPI_Irecv(&sink, 1, MPI_INT, peer, tag, c->mpi->world, &c->abort_req);
}

/*
 * Ends the pair: each side says whether it sent the stop message, so that
 * the other waits for it when it did and cancels its receive only when no
 * message can come (no stray message is left to match a later pair).
 */
static void pair_end(struct ibctx *c)
{
	int theirs = 0;

	if (c->peer < 0)
		return;
	MPI_Sendrecv(&c->abort_out, 1, MPI_INT, c->peer, TAG_CLOSE, &theirs, 1, MPI_INT, c->peer,
		     TAG_CLOSE, c->mpi->world, MPI_STATUS_IGNORE);
	if (c->abort_req != MPI_REQUEST_NULL) {
		if (!theirs)
			MPI_Cancel(&c->abort_req);
		MPI_Wait(&c->abort_req, MPI_STATUS_IGNORE);
	}
	if (c->abort_sreq != MPI_REQUEST_NULL)
		MPI_Wait(&c->abort_sreq, MPI_STATUS_IGNORE);
	c->peer = -1;
}

/* Both sides' status of a step; returns 1 when both are fine. */
static int agree(struct ibctx *c, int ok)
{
	int other = 0;

	if (!ok)
		tell_peer_stop(c);
	MPI_Sendrecv(&ok, 1, MPI_INT, c->peer, TAG_STATUS, &other, 1, MPI_INT, c->peer, TAG_STATUS,
		     c->mpi->world, MPI_STATUS_IGNORE);
	return ok && other;
}

static void sync_peer(struct ibctx *c)
{
	int a = 0, b = 0;

	MPI_Sendrecv(&a, 1, MPI_INT, c->peer, TAG_SYNC, &b, 1, MPI_INT, c->peer, TAG_SYNC,
		     c->mpi->world, MPI_STATUS_IGNORE);
}

static void fail_msg(struct ibctx *c, const char *what, const char *err)
{
	if (!c->msg[0])
		snprintf(c->msg, sizeof(c->msg), "%s: %s", what, err);
	log_error("ib: %s: %s", what, err);
}

/* The byte a node's rail writes, never 0 (a cleared target must differ). */
static uint8_t pattern(int vnode, int rail)
{
	uint8_t p = (uint8_t)(0xa5 ^ (vnode * 31 + rail * 7));

	return p ? p : 1;
}

static int connect_pair(struct ibctx *c, struct ib_rail *r, int ok, char *err, size_t len)
{
	uint8_t out[IB_QPINFO_SIZE], in[IB_QPINFO_SIZE];
	struct ib_qp_info remote, mine = { .status = 1 };
	int good;

	if (ok && c->tp->qp_create(r, c->settings, err, len))
		ok = 0;
	ib_qpinfo_encode(ok ? &r->local : &mine, out);
	MPI_Sendrecv(out, IB_QPINFO_SIZE, MPI_BYTE, c->peer, TAG_INFO, in, IB_QPINFO_SIZE, MPI_BYTE,
		     c->peer, TAG_INFO, c->mpi->world, MPI_STATUS_IGNORE);
	good = ok && !ib_qpinfo_decode(in, sizeof(in), &remote, err, len);
	if (good && remote.status) {
		snprintf(err, len, "the peer could not set up its side (see its log)");
		good = -1;   /* not this side's fault */
	} else if (good && remote.settings != c->settings) {
		snprintf(err, len, "the peer runs different --ib-* settings");
		good = 0;
	}
	if (good == 1 && c->tp->qp_connect(r, &remote, err, len))
		good = 0;
	if (good == 0 && ok)
		ok = 0;
	return agree(c, ok && good == 1);
}

/* One latency size: the lower node initiates; returns 1 when both sides are fine. */
static int step_latency(struct ibctx *c, struct ib_rail *r, int is_a, int k,
			const struct ib_wait *w)
{
	char err[MSG_LEN] = "";
	size_t b = c->lat[k];
	int ok;

	memset(r->lat_buf, 0, r->lat_len);
	sync_peer(c);
	ok = !c->tp->pingpong(r, b, p_lat_warmup, p_lat_iters, is_a, c->samples, w, err,
			       sizeof(err));
	if (!ok)
		fail_msg(c, "latency", err);
	if (ok && is_a) {
		struct stats st;
		double *s = c->res + R_LAT(k);

		stats_compute(c->samples, (size_t)p_lat_iters, &st);
		s[0] = (double)st.n;
		s[1] = st.min;
		s[2] = st.median;
		s[3] = st.mean;
		s[4] = st.max;
		s[5] = st.p99;
		s[7] = st.cv;
		/* the samples are scratch: sorted in place for the 99.9th percentile */
		stats_sort(c->samples, (size_t)p_lat_iters);
		s[6] = stats_quantile_sorted(c->samples, (size_t)p_lat_iters, 0.999);
	}
	return agree(c, ok);
}

/* Bytes of the target half that differ from the peer's pattern (host memory only). */
static double count_wrong(struct ib_rail *r, uint8_t pat)
{
	const uint8_t *t = r->buf + r->cfg.bytes;
	double wrong = 0;

	if (r->cfg.mem != IB_MEM_HOST)
		return 0;
	for (size_t i = 0; i < r->cfg.bytes; i++)
		wrong += t[i] != pat;
	return wrong;
}

static void clear_target(struct ib_rail *r)
{
	if (r->cfg.mem == IB_MEM_HOST)
		memset(r->buf + r->cfg.bytes, 0, r->cfg.bytes);
	else
		ib_gpu_memset(r->cfg.gpu, r->buf + r->cfg.bytes, 0, r->cfg.bytes);
}

/* One direction: the sender keeps p_depth WRITEs in flight for p_reps x p_iters. */
static int step_uni(struct ibctx *c, struct ib_rail *r, int sending, uint8_t peer_pat,
		    const struct ib_wait *w)
{
	char err[MSG_LEN] = "";
	int ok = 1;

	if (!sending)
		clear_target(r);
	sync_peer(c);
	if (sending) {
		ok = !p_warmup || !c->tp->write_burst(r, p_size, p_warmup, p_depth, w, err,
						       sizeof(err));
		for (int k = 0; ok && k < p_reps; k++) {
			double t0 = timer_now(), dt;

			ok = !c->tp->write_burst(r, p_size, p_iters, p_depth, w, err, sizeof(err));
			dt = timer_now() - t0;
			c->res[R_UNI(c) + k] = ok ? (double)p_size * p_iters / dt / 1e9 : 0.0;
			c->res[R_BW_TIME] += dt;
		}
		if (!ok)
			fail_msg(c, "bandwidth", err);
	}
	ok = agree(c, ok);
	if (ok && !sending)
		c->res[R_WRONG] += count_wrong(r, peer_pat);
	return ok;
}

/* Both ways at once; each repetition starts together. */
static int step_bidir(struct ibctx *c, struct ib_rail *r, uint8_t peer_pat, const struct ib_wait *w)
{
	char err[MSG_LEN] = "";
	int ok;

	clear_target(r);
	sync_peer(c);
	ok = !p_warmup || !c->tp->write_burst(r, p_size, p_warmup, p_depth, w, err, sizeof(err));
	/* every repetition's sync happens on both sides, failed or not: same shape */
	for (int k = 0; k < p_reps; k++) {
		double t0, dt;

		sync_peer(c);
		if (!ok)
			continue;
		t0 = timer_now();
		ok = !c->tp->write_burst(r, p_size, p_iters, p_depth, w, err, sizeof(err));
		dt = timer_now() - t0;
		c->res[R_BI(c) + k] = ok ? (double)p_size * p_iters / dt / 1e9 : 0.0;
	}
	if (!ok)
		fail_msg(c, "bidirectional bandwidth", err);
	ok = agree(c, ok);
	if (ok)
		c->res[R_WRONG] += count_wrong(r, peer_pat);
	return ok;
}

/* ------------------------------------------------------------------ records */

static const char *step_name(const struct ibctx *c, int step, char *buf, size_t len)
{
	if (step == S_CONNECT)
		return "connect";
	if (step < S_UNI_AB(c))
		snprintf(buf, len, "write_lat %zu B", c->lat[step - S_LAT]);
	else
		snprintf(buf, len, "%s", step == S_UNI_AB(c) ? "write_bw_uni a->b" :
			 step == S_UNI_BA(c) ? "write_bw_uni b->a" : "write_bw_bidir");
	return buf;
}

static const char *rail_label(const struct ibctx *c, int v, int rail)
{
	return c->rail_name[(size_t)v * c->lay.rails_max + rail];
}

static char *element(const struct ibctx *c, int v, int rail, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", c->vhost[v], rail_label(c, v, rail));
	return buf;
}

static json_t *pair_record(struct ibctx *c, const char *test, int va, int vb, int rail,
			   int round, size_t bytes)
{
	char ea[160], eb[160], el[330];

	element(c, va, rail, ea, sizeof(ea));
	element(c, vb, rail, eb, sizeof(eb));
	snprintf(el, sizeof(el), "%s-%s", ea, eb);
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:I, s:b, s:s}",
			 "kind", "probe", "name", "ib", "test", test, "scope", "rail_pair",
			 "element", el, "host", c->vhost[va], "peer", c->vhost[vb],
			 "nic", rail_label(c, va, rail), "peer_nic", rail_label(c, vb, rail),
			 "rail", rail, "round", round, "bytes", (json_int_t)bytes,
			 "loopback", c->loopback, "transport", c->tp->name);
}

/* Adds the bandwidth of samples v to rec; returns their median in GB/s. */
static double add_bw(json_t *rec, const double *v, double rate_GBps)
{
	struct stats st;

	stats_compute(v, (size_t)p_reps, &st);
	json_object_set_new(rec, "bw_GBps", json_real(st.median));
	json_object_set_new(rec, "bw_Gbps", json_real(st.median * 8.0));
	json_object_set_new(rec, "bw_stats_GBps", run_stats_json(&st, 1.0));
	if (rate_GBps > 0) {
		json_object_set_new(rec, "rate_GBps", json_real(rate_GBps));
		json_object_set_new(rec, "rate_Gbps", json_real(rate_GBps * 8.0));
		json_object_set_new(rec, "pct_of_rate", json_real(100.0 * st.median / rate_GBps));
	}
	json_object_set_new(rec, "memory", json_string(p_mem));
	json_object_set_new(rec, "depth", json_integer(p_depth));
	json_object_set_new(rec, "iters", json_integer(p_iters));
	json_object_set_new(rec, "reps", json_integer(p_reps));
	json_object_set_new(rec, "warmup", json_integer(p_warmup));
	return st.median;
}

/* Rank 0: an error record of pair a-b on rail, counted as a failure. */
static void pair_fail(struct ibctx *c, int va, int vb, int rail, const char *test,
		      const char *msg)
{
	char ea[160], eb[160];
	json_t *rec;

	element(c, va, rail, ea, sizeof(ea));
	element(c, vb, rail, eb, sizeof(eb));
	log_error("ib: %s", msg);
	rec = json_pack("{s:s, s:s, s:s, s:s}", "kind", "probe", "name", "ib", "test", test,
			"message", msg);
	json_object_set_new(rec, "element", json_sprintf("%s-%s", ea, eb));
	c->run->failures++;
	c->failed = 1;
	run_record(c->run, "error", rec);
}

static void pair_error(struct ibctx *c, int va, int vb, int rail, int step, const char *ma,
		       const char *mb)
{
	char ea[160], eb[160], sn[64], msg[800];
	size_t n;

	element(c, va, rail, ea, sizeof(ea));
	element(c, vb, rail, eb, sizeof(eb));
	n = (size_t)snprintf(msg, sizeof(msg), "%s-%s failed at %s", ea, eb,
			     step_name(c, step, sn, sizeof(sn)));
	if (ma[0] && n < sizeof(msg))
		n += (size_t)snprintf(msg + n, sizeof(msg) - n, "; %s: %s", c->vhost[va], ma);
	if (mb[0] && n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - n, "; %s: %s", c->vhost[vb], mb);
	pair_fail(c, va, vb, rail, step_name(c, step, sn, sizeof(sn)), msg);
}

/*
 * Rank 0, on stdout: one line per rail pair (the file has everything). med:
 * the median GB/s of a->b, b->a and both ways together, as written.
 */
static void print_pair(struct ibctx *c, int va, int vb, int rail, int fail, const double *A,
		       const double *med, double rate)
{
	char ea[160], eb[160], col[4][16], lat[2][16] = { "-", "-" };
	double v[3] = { 8 * med[0], 8 * med[1], 8 * med[2] / 2 };
	int have[3] = { !fail || fail > S_UNI_AB(c), !fail || fail > S_UNI_BA(c), !fail };

	if (!c->printed++) {
		char a[32], b[32];

		printf("# ib: RDMA WRITE %s (Gb/s = 1e9 bit/s), latency %s one-way (us); "
		       "%%rate = slowest of the three / port rate\n"
		       "# %-28s %-28s %9s %9s %10s %10s %10s %6s\n", size_human((double)p_size, a, sizeof(a)),
		       size_human((double)c->lat[0], b, sizeof(b)), "a", "b",
		       "lat_med", "lat_p99", "a->b_Gbps", "b->a_Gbps", "bidir_Gbps", "%rate");
	}
	for (int i = 0; i < 3; i++)
		snprintf(col[i], sizeof(col[i]), have[i] ? "%.2f" : "-", i == 2 ? 2 * v[i] : v[i]);
	if (rate > 0 && have[0] && have[1] && have[2]) {
		double lo = v[0] < v[1] ? v[0] : v[1];

		snprintf(col[3], sizeof(col[3]), "%.1f", 100.0 * (lo < v[2] ? lo : v[2]) / (8 * rate));
	} else {
		snprintf(col[3], sizeof(col[3]), "-");
	}
	if (!fail || fail > S_LAT) {
		snprintf(lat[0], sizeof(lat[0]), "%.2f", A[R_LAT(0) + 2]);
		snprintf(lat[1], sizeof(lat[1]), "%.2f", A[R_LAT(0) + 5]);
	}
	printf("  %-28s %-28s %9s %9s %10s %10s %10s %6s%s\n", element(c, va, rail, ea, sizeof(ea)),
	       element(c, vb, rail, eb, sizeof(eb)), lat[0], lat[1], col[0], col[1], col[2], col[3],
	       fail ? "  FAILED (see the error record)" : "");
	fflush(stdout);
}

/* Rank 0: the records of pair a-b (a the lower plan node) from the gathered rows. */
static void write_pair(struct ibctx *c, int round, int ra, int rb)
{
	const double *A = c->all + (size_t)ra * R_N(c), *B = c->all + (size_t)rb * R_N(c);
	int va = c->vrank_node[ra], vb = c->vrank_node[rb], rail = (int)A[R_RAIL];
	int fail = (int)(A[R_FAIL_STEP] > B[R_FAIL_STEP] ? A[R_FAIL_STEP] : B[R_FAIL_STEP]);
	double rate = A[R_RATE_GBPS] > 0 && B[R_RATE_GBPS] > 0 ?
		      (A[R_RATE_GBPS] < B[R_RATE_GBPS] ? A[R_RATE_GBPS] : B[R_RATE_GBPS]) : 0;
	double pcie = A[R_PCIE_GBPS] > 0 && B[R_PCIE_GBPS] > 0 ?
		      (A[R_PCIE_GBPS] < B[R_PCIE_GBPS] ? A[R_PCIE_GBPS] : B[R_PCIE_GBPS]) : 0;
	double bi[IB_MAX_REPS], med[3] = { 0, 0, 0 };
	json_t *rec;

	for (int k = 0; k < c->nlat && (!fail || fail > S_LAT + k); k++) {
		const double *s = A + R_LAT(k);

		rec = pair_record(c, "write_lat", va, vb, rail, round, c->lat[k]);
		json_object_set_new(rec, "lat_us", json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
			"n", (json_int_t)s[0], "min", s[1], "median", s[2], "mean", s[3], "max", s[4],
			"p99", s[5], "p999", s[6], "cv", s[7]));
		json_object_set_new(rec, "iters", json_integer(p_lat_iters));
		json_object_set_new(rec, "warmup", json_integer(p_lat_warmup));
		json_object_set_new(rec, "one_way", json_string("round trip / 2"));
		run_record(c->run, "measurement", rec);
	}
	if (!fail || fail > S_UNI_AB(c)) {
		rec = pair_record(c, "write_bw_uni", va, vb, rail, round, p_size);
		med[0] = add_bw(rec, A + R_UNI(c), rate);
		json_object_set_new(rec, "time_s", json_real(A[R_BW_TIME]));
		run_record(c->run, "measurement", rec);
	}
	if (!fail || fail > S_UNI_BA(c)) {
		rec = pair_record(c, "write_bw_uni", vb, va, rail, round, p_size);
		med[1] = add_bw(rec, B + R_UNI(c), rate);
		json_object_set_new(rec, "time_s", json_real(B[R_BW_TIME]));
		run_record(c->run, "measurement", rec);
	}
	if (!fail) {
		for (int k = 0; k < p_reps; k++)
			bi[k] = A[R_BI(c) + k] + B[R_BI(c) + k];
		/*
		 * On one host both QPs sit on one HCA port: each stream crosses the
		 * HCA's PCIe link both ways (read from memory, written to memory), so
		 * each direction carries both streams. The sum is bounded by one
		 * direction of PCIe, never by twice the port: its own test, judged
		 * against that rate (unknown PCIe: no rate, so the criterion is
		 * incomplete, never a pass).
		 */
		rec = pair_record(c, c->loopback ? "write_bw_bidir_loopback" : "write_bw_bidir", va, vb,
				  rail, round, p_size);
		med[2] = add_bw(rec, bi, c->loopback ? pcie : 2.0 * rate);
		if (c->loopback) {
			json_object_set_new(rec, "rate_basis", json_string("pcie"));
			json_object_set_new(rec, "port_rate_GBps", rate > 0 ? json_real(rate) : json_null());
		}
		run_record(c->run, "measurement", rec);
	}
	if (fail)
		pair_error(c, va, vb, rail, fail, c->allmsg + (size_t)ra * MSG_LEN,
			   c->allmsg + (size_t)rb * MSG_LEN);
	if (!c->run->opt->quiet)
		print_pair(c, va, vb, rail, fail, A, med, rate);
	if (A[R_WRONG] + B[R_WRONG] > 0) {
		char ea[160], eb[160], msg[400];

		element(c, va, rail, ea, sizeof(ea));
		element(c, vb, rail, eb, sizeof(eb));
		snprintf(msg, sizeof(msg), "wrong data between '%s' and '%s': %.0f bytes differ",
			 ea, eb, A[R_WRONG] + B[R_WRONG]);
		pair_fail(c, va, vb, rail, "data", msg);
	}
}

/* ------------------------------------------------------------------ the rounds */

/*
 * The index of node v's pair among the pairs of a round (ordered by their
 * lower node), or -1 when v sits out. On one host (loopback) all pairs of a
 * round would share the same HCA port at once, so there they take turns by
 * this index: a pair measures the port, not its share of it.
 */
static int pair_slot(const struct ibctx *c, int round, int v)
{
	int pv = ib_partner(&c->lay, round, v), lo, k = 0;

	if (pv < 0)
		return -1;
	lo = v < pv ? v : pv;
	for (int x = 0; x < lo; x++)
		k += ib_partner(&c->lay, round, x) > x;
	return k;
}

/* Whether node v's pair runs in slot (-1: every pair at once). */
static int in_slot(const struct ibctx *c, int round, int slot, int v)
{
	return slot < 0 || pair_slot(c, round, v) == slot;
}

/* Rank 0: the pairs of a round, turn and slot, for the watchdog's record. */
static json_t *turn_detail(struct ibctx *c, int round, int turn, int slot)
{
	json_t *pairs = json_array();

	for (int v = 0; v < c->nv; v++)
		for (int l = 0; l < c->lay.ranks_min; l++) {
			int rail, pv, peer = ib_pair_of(&c->lay, round, turn, v, l, &rail, &pv);
			char ea[160], eb[160];

			if (peer < 0 || pv < v || !in_slot(c, round, slot, v))
				continue;
			json_array_append_new(pairs, json_pack("{s:s, s:s, s:i, s:i}",
				"a", element(c, v, rail, ea, sizeof(ea)),
				"b", element(c, pv, rail, eb, sizeof(eb)),
				"a_rank", ib_rail_rank(&c->lay, v, rail), "b_rank", peer));
		}
	return json_pack("{s:s, s:s, s:i, s:i, s:o, s:o}", "kind", "probe", "probe", "ib",
			 "round", round, "turn", turn, "slot", slot >= 0 ? json_integer(slot) : json_null(),
			 "pairs", pairs);
}

static void arm(struct ibctx *c, const char *what, json_t *detail, size_t bytes)
{
	watchdog_fault_point(c->mpi->rank, bytes);
	watchdog_arm(what, c->mpi->rank == 0 && detail ? json_deep_copy(detail) : NULL);
}

/* A barrier as its own watchdog step: whoever never reaches it is named. */
static void barrier(struct ibctx *c, const char *what, json_t *detail)
{
	char w[160];

	snprintf(w, sizeof(w), "%s (barrier)", what);
	watchdog_arm(w, c->mpi->rank == 0 && detail ? json_deep_copy(detail) : NULL);
	MPI_Barrier(c->mpi->world);
	watchdog_disarm();
}

/* One step after the connection; returns 1 when both sides are fine. */
static int run_step(struct ibctx *c, struct ib_rail *r, int step, int is_a, uint8_t peer_pat,
		    const struct ib_wait *w)
{
	if (step < S_UNI_AB(c))
		return step_latency(c, r, is_a, step - S_LAT, w);
	if (step == S_UNI_AB(c))
		return step_uni(c, r, is_a, peer_pat, w);
	if (step == S_UNI_BA(c))
		return step_uni(c, r, !is_a, peer_pat, w);
	return step_bidir(c, r, peer_pat, w);
}

/*
 * One turn of one round on every rank (slot >= 0: only that pair of the
 * round, see pair_slot): connect, the steps, then rank 0 writes the records.
 */
static void run_turn(struct ibctx *c, int round, int turn, int slot)
{
	struct mpictx *mpi = c->mpi;
	int rail, pv, peer = ib_pair_of(&c->lay, round, turn, c->v, c->vlocal, &rail, &pv);
	int is_a, alive;
	struct ib_rail *r = &c->rails[turn];
	struct ib_wait w = { .stop = peer_stopped, .arg = c };
	json_t *detail = mpi->rank == 0 ? turn_detail(c, round, turn, slot) : NULL;
	uint8_t peer_pat = peer >= 0 ? pattern(pv, rail) : 0;
	char what[128], sn[64], where[48];

	if (peer >= 0 && !in_slot(c, round, slot, c->v))
		peer = -1;
	is_a = peer >= 0 && c->v < pv;
	alive = peer >= 0;
	snprintf(where, sizeof(where), slot < 0 ? "round %d turn %d" : "round %d turn %d slot %d",
		 round, turn, slot);
	memset(c->res, 0, (size_t)R_N(c) * sizeof(double));
	c->msg[0] = '\0';
	c->res[R_PARTNER] = peer;
	c->res[R_RAIL] = rail;
	c->res[R_FAIL_STEP] = peer >= 0 ? 0 : -1;
	if (peer >= 0) {
		c->res[R_RATE_GBPS] = c->hr.rail[rail].data_Gbps / 8.0;
		c->res[R_PCIE_GBPS] = c->hr.rail[rail].pcie_GBps;
	}
	pair_begin(c, peer, TAG_ABORT + (round * c->turns + turn) % 20000);
	for (int step = S_CONNECT; step < S_COUNT(c); step++) {
		int ok = 1;

		snprintf(what, sizeof(what), "ib %s %s", where, step_name(c, step, sn, sizeof(sn)));
		arm(c, what, detail, step == S_CONNECT ? 0 : step < S_UNI_AB(c) ?
		    c->lat[step - S_LAT] : p_size);
		w.deadline = watchdog_deadline();
		if (alive && step == S_CONNECT) {
			char err[MSG_LEN] = "";
			int open = c->rail_open[turn] == 1;

			if (!open)
				snprintf(err, sizeof(err), "%s", c->rail_err[turn]);
			else if (r->cfg.mem == IB_MEM_HOST)
				memset(r->buf, pattern(c->v, rail), p_size);
			else
				ib_gpu_memset(r->cfg.gpu, r->buf, pattern(c->v, rail), p_size);
			ok = connect_pair(c, r, open, err, sizeof(err));
			if (!ok && err[0])
				fail_msg(c, "connect", err);
		} else if (alive) {
			ok = run_step(c, r, step, is_a, peer_pat, &w);
		}
		if (alive && !ok) {
			c->res[R_FAIL_STEP] = step;
			alive = 0;
		}
		watchdog_disarm();
		barrier(c, what, detail);
	}
	if (peer >= 0 && c->rail_open[turn] == 1)
		c->tp->qp_destroy(r);
	pair_end(c);
	snprintf(what, sizeof(what), "ib %s results", where);
	arm(c, what, detail, 0);
	MPI_Gather(c->res, R_N(c), MPI_DOUBLE, c->all, R_N(c), MPI_DOUBLE, 0, mpi->world);
	MPI_Gather(c->msg, MSG_LEN, MPI_CHAR, c->allmsg, MSG_LEN, MPI_CHAR, 0, mpi->world);
	watchdog_disarm();
	json_decref(detail);
	if (mpi->rank != 0)
		return;
	for (int x = 0; x < mpi->size; x++) {
		const double *X = c->all + (size_t)x * R_N(c);
		int p = (int)X[R_PARTNER];

		if (p >= 0 && p < mpi->size && c->vrank_node[x] < c->vrank_node[p])
			write_pair(c, round, x, p);
	}
}

/* ------------------------------------------------------------------ setup */

/* Rank 0: display names of plan nodes and their rails, from the inventories. */
static int name_rails(struct ibctx *c, json_t *invs)
{
	int rm = c->lay.rails_max > 0 ? c->lay.rails_max : 1;

	c->vhost = calloc((size_t)c->nv, sizeof(char *));
	c->rail_name = calloc((size_t)c->nv * rm, sizeof(*c->rail_name));
	if (!c->vhost || !c->rail_name)
		return -1;
	for (int v = 0; v < c->nv; v++) {
		const char *host = c->loopback ? c->mpi->hosts[0] : c->mpi->hosts[v];
		size_t i;
		json_t *inv;

		if (c->loopback) {
			if (asprintf(&c->vhost[v], "%s#%d", host, v) < 0)
				c->vhost[v] = NULL;
		} else {
			c->vhost[v] = strdup(host);
		}
		if (!c->vhost[v])
			return -1;
		json_array_foreach(invs, i, inv) {
			json_t *rails = json_object_get(inv, "rails"), *n;
			size_t k;

			if (strcmp(json_string_value(json_object_get(inv, "host")) ?: "", host))
				continue;
			json_array_foreach(rails, k, n)
				if ((int)k < rm)
					snprintf(c->rail_name[(size_t)v * rm + k], 40, "%s",
						 json_string_value(n));
		}
	}
	return 0;
}

static void rail_cfg(struct ibctx *c, int rail, struct ib_rail_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->dev = c->hr.rail[rail].dev;
	cfg->port = c->hr.rail[rail].port;
	cfg->gid_index = c->hr.rail[rail].gid_index;
	cfg->bytes = p_size;
	cfg->lat_bytes = c->lat[0];
	for (int k = 1; k < c->nlat; k++)
		if (c->lat[k] > cfg->lat_bytes)
			cfg->lat_bytes = c->lat[k];
	cfg->depth = p_depth;
	cfg->mem = strcmp(p_mem, "gpu") ? IB_MEM_HOST : IB_MEM_GPU;
	cfg->sl = p_sl;
	cfg->tclass = p_tclass;
	cfg->qp_timeout = p_qp_timeout;
	cfg->retry = p_retry;
	cfg->numa_node = c->hr.rail[rail].numa_node;
}

/*
 * Where an open rail's host regions live (bound to the NIC's NUMA node, or
 * not) and whether relaxed ordering was asked for and is in effect.
 */
static json_t *setup_record(struct ibctx *c, struct ib_rail *r, int rail)
{
	int nnuma = c->hr.rail[rail].numa_node, ro;
	json_t *rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s}", "kind", "probe",
				"name", "ib", "test", "setup", "scope", "nic", "element", "",
				"host", c->mpi->host, "nic", "", "rail", rail, "memory", p_mem);

	json_object_set_new(rec, "element", c->loopback ?
			    json_sprintf("%s#%d/%s:%d", c->mpi->host, c->mpi->rank, r->cfg.dev,
					 r->cfg.port) :
			    json_sprintf("%s/%s:%d", c->mpi->host, r->cfg.dev, r->cfg.port));
	json_object_set_new(rec, "nic", json_sprintf("%s:%d", r->cfg.dev, r->cfg.port));
	json_object_set_new(rec, "transport", json_string(c->tp->name));
	json_object_set_new(rec, "nic_numa_node", nnuma >= 0 ? json_integer(nnuma) : json_null());
	json_object_set_new(rec, "host_numa_node", r->host_numa >= 0 ? json_integer(r->host_numa) :
			    json_null());
	json_object_set_new(rec, "numa_local", nnuma >= 0 ? json_boolean(r->host_numa == nnuma) :
			    json_null());
	/*
	 * relaxed ordering: asked for by every registration (libibverbs never
	 * refuses the optional flag, so this alone proves nothing), allowed by
	 * the NIC's PCIe Device Control register (the kernel clears the bit
	 * below root ports that mishandle it; the driver then never marks a
	 * write relaxed), and in effect only when both
	 */
	ro = c->hr.rail[rail].bdf[0] ? pci_relaxed_ordering(c->tp->root, c->hr.rail[rail].bdf) : -2;
	json_object_set_new(rec, "relaxed_ordering_requested", r->relaxed < 0 ? json_null() :
			    json_boolean(r->relaxed));
	json_object_set_new(rec, "relaxed_ordering_pcie", ro >= 0 ? json_boolean(ro) : json_null());
	json_object_set_new(rec, "relaxed_ordering", r->relaxed == 0 || ro == 0 || ro == -1 ?
			    json_false() : r->relaxed == 1 && ro == 1 ? json_true() : json_null());
	if (ro == -2)
		json_object_set_new(rec, "relaxed_ordering_note", json_string(
			"the NIC's PCIe Device Control register is unreadable (ccprobe not root): "
			"whether relaxed ordering is in effect is unknown"));
	return rec;
}

/*
 * The PCI address and sysfs path (/sys/devices/...) of CUDA device gpu,
 * under the transport's root (the test transport's fixture tree holds the
 * GPUs beside the NICs). Returns 0, or -1 when sysfs does not know it.
 */
static int gpu_sys_path(struct ibctx *c, int gpu, char *bdf, size_t blen, char *path,
			struct pci_link *l)
{
	char link[PATH_MAX];

	path[0] = '\0';
	if (ib_gpu_bdf(gpu, bdf, blen) || pci_read_link(c->tp->root, bdf, l))
		return -1;
	snprintf(link, sizeof(link), "%s/bus/pci/devices/%s", c->tp->root ? c->tp->root : "/sys",
		 bdf);
	if (!realpath(link, path))
		path[0] = '\0';
	return path[0] ? 0 : -1;
}

/*
 * The host's rail whose NIC is nearest the GPU at gpath: one under the same
 * PCIe switch before one under the same root complex before the others,
 * then the lowest rail. -1 when no rail's path is known.
 */
static int nearest_rail(const struct ibctx *c, const char *gpath, const char **rel)
{
	static const char *const rank[] = { "same_switch", "same_root", "cross_root" };
	int best = -1, best_k = 3;

	for (int i = 0; i < c->hr.n; i++) {
		const char *r;
		int k = 0;

		if (!c->hr.rail[i].sys_path[0])
			continue;
		r = ib_pci_relation(gpath, c->hr.rail[i].sys_path);
		while (k < 3 && strcmp(r, rank[k]))
			k++;
		if (k < best_k) {
			best = i;
			best_k = k;
			*rel = r;
		}
	}
	return best;
}

/* GPUDirect registration and GPU-NIC affinity of an open rail. */
static json_t *gdr_record(struct ibctx *c, struct ib_rail *r, int rail, int gpu)
{
	const char *path = NULL;
	char why[400] = "", bdf[32] = "", gpath[PATH_MAX] = "";
	struct pci_link gl;
	int gnuma = -1, nnuma = c->hr.rail[rail].numa_node;
	json_t *rec, *acs;

	if (r->cfg.mem == IB_MEM_GPU)
		path = r->reg_path;
	else if (c->tp->gdr_check(r, gpu, &path, why, sizeof(why)))
		path = NULL;
	if (!gpu_sys_path(c, gpu, bdf, sizeof(bdf), gpath, &gl))
		gnuma = gl.numa_node;
	rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:i, s:s, s:s}",
			"kind", "probe", "name", "ib", "test", "gdr", "scope", "nic",
			"element", "", "host", c->mpi->host, "gdr_ok", path != NULL,
			"gpu", gpu, "gpu_bdf", bdf, "nic_bdf", c->hr.rail[rail].bdf);
	/* on one host (loopback) every rank opens the same ports: the rank tells them apart */
	json_object_set_new(rec, "element", c->loopback ?
			    json_sprintf("%s#%d/%s:%d", c->mpi->host, c->mpi->rank, r->cfg.dev,
					 r->cfg.port) :
			    json_sprintf("%s/%s:%d", c->mpi->host, r->cfg.dev, r->cfg.port));
	json_object_set_new(rec, "transport", json_string(c->tp->name));
	json_object_set_new(rec, "gdr_path", path ? json_string(path) : json_null());
	if (!path)
		json_object_set_new(rec, "reason", json_string(why));
	json_object_set_new(rec, "gpu_numa_node", json_integer(gnuma));
	json_object_set_new(rec, "nic_numa_node", json_integer(nnuma));
	json_object_set_new(rec, "same_numa", gnuma >= 0 && nnuma >= 0 ?
			    json_boolean(gnuma == nnuma) : json_null());
	json_object_set_new(rec, "pci_relation", gpath[0] && c->hr.rail[rail].sys_path[0] ?
			    json_string(ib_pci_relation(gpath, c->hr.rail[rail].sys_path)) :
			    json_null());
	/* ACS redirect where it turns this pair's traffic back: the switch ports they meet below */
	acs = bdf[0] && c->hr.rail[rail].bdf[0] ?
	      pci_pair_acs_json(c->tp->root, bdf, c->hr.rail[rail].bdf) : json_null();
	if (json_is_object(acs))
		json_object_update(rec, acs);        /* acs_redirect, acs_ports, acs_note */
	else
		json_object_set_new(rec, "acs_redirect", json_null());
	json_decref(acs);
	return rec;
}

/*
 * The GPUDirect check of this rank: its own GPU with the host's NIC nearest
 * it by PCI topology (nearest_rail), opened for the check when the rank does
 * not drive it; the record says which NIC and why. With the GPU's PCI path
 * unknown, the first rail the rank drives.
 */
static json_t *gdr_nearest(struct ibctx *c, int gpu)
{
	char bdf[32], gpath[PATH_MAX], err[MSG_LEN];
	const char *rel = NULL, *choice = "nearest by PCI topology";
	struct pci_link gl;
	struct ib_rail tmp, *r = NULL;
	struct ib_rail_cfg cfg;
	int near = -1, opened = 0;
	json_t *rec;

	if (!gpu_sys_path(c, gpu, bdf, sizeof(bdf), gpath, &gl))
		near = nearest_rail(c, gpath, &rel);
	for (int t = 0; t < c->turns && !r; t++) {
		int rail = ib_rail_of(&c->lay, c->v, c->vlocal, t);

		if (c->rail_open[t] == 1 && (near < 0 || rail == near)) {
			r = &c->rails[t];
			near = rail;
		}
	}
	if (near < 0)
		return json_pack("{s:s}", "skip", "no rail open on this rank to check GPUDirect on");
	if (!r) {
		rail_cfg(c, near, &cfg);
		cfg.gpu = gpu;
		if (c->tp->open(&tmp, &cfg, err, sizeof(err))) {
			rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:i, s:s, s:s}", "kind",
					"probe", "name", "ib", "test", "gdr", "scope", "nic", "element",
					"", "host", c->mpi->host, "gdr_ok", 0, "gpu", gpu, "reason", err,
					"nic_choice", choice);
			json_object_set_new(rec, "element", c->loopback ?
					    json_sprintf("%s#%d/%s:%d", c->mpi->host, c->mpi->rank,
							 c->hr.rail[near].dev, c->hr.rail[near].port) :
					    json_sprintf("%s/%s:%d", c->mpi->host, c->hr.rail[near].dev,
							 c->hr.rail[near].port));
			json_object_set_new(rec, "transport", json_string(c->tp->name));
			return rec;
		}
		r = &tmp;
		opened = 1;
	}
	if (!rel)
		choice = "the first rail this rank drives (the GPU's PCI path is unknown)";
	rec = gdr_record(c, r, near, gpu);
	json_object_set_new(rec, "rail", json_integer(near));
	json_object_set_new(rec, "nic", json_sprintf("%s:%d", c->hr.rail[near].dev,
						     c->hr.rail[near].port));
	json_object_set_new(rec, "nic_choice", json_string(choice));
	json_object_set_new(rec, "driven", json_boolean(!opened));
	if (opened)
		c->tp->close(&tmp);
	return rec;
}

/*
 * Opens the rails this rank drives and checks GPUDirect with the
 * rank's own GPU (gpu_rank_device: --gpus, local rank or per-rank
 * visibility, as the GPU probes and the nccl backend choose); returns this
 * rank's records. Collective over the host (the GPU choice).
 */
static json_t *open_rails(struct ibctx *c)
{
	json_t *out = json_array();
	char why[200] = "", mine[200] = "";
	int gpu = -1, ngpu = ib_gpu_count(why, sizeof(why));

	if (gpu_rank_device(c->mpi, &gpu, mine, sizeof(mine)) && ngpu > 0) {
		snprintf(why, sizeof(why), "%s", mine);
		ngpu = 0;
	}

	for (int t = 0; t < c->turns; t++) {
		int rail = ib_rail_of(&c->lay, c->v, c->vlocal, t);
		struct ib_rail_cfg cfg;

		if (rail < 0)
			continue;
		rail_cfg(c, rail, &cfg);
		cfg.gpu = gpu >= 0 ? gpu : 0;
		if (c->tp->open(&c->rails[t], &cfg, c->rail_err[t], MSG_LEN)) {
			c->rail_open[t] = -1;
			log_error("ib: %s", c->rail_err[t]);
			continue;
		}
		c->rail_open[t] = 1;
		json_array_append_new(out, setup_record(c, &c->rails[t], rail));
	}
	if (ngpu > 0)
		json_array_append_new(out, gdr_nearest(c, gpu));
	else if (c->turns > 0)
		json_array_append_new(out, json_pack("{s:s}", "skip", why));
	return out;
}

/* Rank 0: writes GPUDirect records, and one skip for all ranks that have no GPU. */
static void write_gdr(struct ibctx *c, json_t *all)
{
	size_t i, j;
	json_t *per_rank, *rec;
	const char *skip = NULL;

	json_array_foreach(all, i, per_rank)
		json_array_foreach(per_rank, j, rec) {
			json_t *s = json_object_get(rec, "skip");

			if (s) {
				skip = skip ? skip : json_string_value(s);
				continue;
			}
			run_record(c->run, "measurement", json_incref(rec));
		}
	if (skip) {
		char reason[300];

		snprintf(reason, sizeof(reason), "%s%s", strncmp(skip, "not built", 9) ?
			 "skipped: GPUDirect RDMA: " : "", skip);
		run_record(c->run, "skip", json_pack("{s:s, s:s, s:s, s:s}", "kind", "probe",
						     "name", "ib", "test", "gdr", "reason", reason));
		log_info("ib: GPUDirect RDMA check: %s", reason);
	}
}

/*
 * port_xmit_data and port_rcv_data count 4-octet words (IBTA PortCounters;
 * Linux sysfs passes them on): their deltas in bytes, and the unit named.
 */
static void data_bytes(json_t *rec)
{
	static const char *const names[] = { "port_xmit_data", "port_rcv_data" };
	json_t *delta = json_object_get(rec, "counter_delta"), *bytes = json_object();

	for (int i = 0; i < 2; i++) {
		json_t *v = json_object_get(delta, names[i]);

		json_object_set_new(bytes, names[i], json_is_integer(v) ?
				    json_integer(4 * json_integer_value(v)) : json_null());
	}
	json_object_set_new(rec, "data_bytes_delta", bytes);
	json_object_set_new(rec, "counter_units", json_pack("{s:s, s:s}", "port_xmit_data",
							    "4-octet words", "port_rcv_data",
							    "4-octet words"));
}

/* First rank of a host: the counter records of every port, after the run. */
static json_t *counter_records(struct ibctx *c)
{
	json_t *out = json_array();

	for (int i = 0; i < c->npc; i++) {
		struct port_counters now = c->pc[i];
		json_t *rec;

		read_counters(c->tp->root, &now);
		rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "kind", "probe", "name", "ib",
				"test", "counters", "scope", "nic", "element", "", "host",
				c->mpi->host);
		json_object_set_new(rec, "element", json_sprintf("%s/%s:%d", c->mpi->host,
								 now.dev, now.port));
		/* counters read from a fixture tree are no port's: a report must know */
		json_object_set_new(rec, "transport", json_string(c->tp->name));
		json_object_set_new(rec, "interval_s", json_real(now.t - c->pc[i].t));
		/*
		 * The deltas first: ccreport reads at most RV_MAX_FIELDS fields of a
		 * record (report/record.h) and judges counter_delta; a port with many
		 * counters would push it past them behind before and after.
		 */
		json_object_set_new(rec, "counter_delta",
				    ib_counters_delta_json(&c->pc[i].std, &now.std));
		json_object_set_new(rec, "hw_counter_delta",
				    ib_counters_delta_json(&c->pc[i].hw, &now.hw));
		json_object_set_new(rec, "counter_before", ib_counters_json(&c->pc[i].std));
		json_object_set_new(rec, "counter_after", ib_counters_json(&now.std));
		data_bytes(rec);
		json_array_append_new(out, rec);
	}
	return out;
}

static void write_all(struct ibctx *c, json_t *all, const char *type)
{
	size_t i, j;
	json_t *per_rank, *rec;

	json_array_foreach(all, i, per_rank)
		json_array_foreach(per_rank, j, rec)
			run_record(c->run, type, json_incref(rec));
}

/* The plan: nodes (or ranks, on one host), their rails, the layout. 0, 1 = nothing to do, -1. */
static int plan(struct ibctx *c, json_t *invs)
{
	struct mpictx *mpi = c->mpi;
	int *rails_of_rank = malloc((size_t)mpi->size * sizeof(int)), most = 0;
	char reason[400];

	c->loopback = mpi->nnodes == 1;
	c->nv = c->loopback ? mpi->size : mpi->nnodes;
	c->v = c->loopback ? mpi->rank : mpi->node;
	c->vlocal = c->loopback ? 0 : mpi->local_rank;
	c->vrank_node = malloc((size_t)mpi->size * sizeof(int));
	c->nrails = calloc((size_t)c->nv, sizeof(int));
	if (!rails_of_rank || !c->vrank_node || !c->nrails) {
		free(rails_of_rank);
		return -1;
	}
	MPI_Allgather(&c->hr.n, 1, MPI_INT, rails_of_rank, 1, MPI_INT, mpi->world);
	for (int r = 0; r < mpi->size; r++) {
		c->vrank_node[r] = c->loopback ? r : mpi->rank_node[r];
		c->nrails[c->vrank_node[r]] = rails_of_rank[r];
		if (rails_of_rank[r] > most)
			most = rails_of_rank[r];
	}
	free(rails_of_rank);
	if (!most) {
		snprintf(reason, sizeof(reason), "skipped: %s%s", c->hr.why,
			 mpi->nnodes > 1 ? " (first host; see the inventory records)" : "");
		run_skip(c->run, "probe", "ib", reason);
		return 1;
	}
	if (strcmp(c->tp->name, "verbs") && mpi->nnodes > 1) {
		run_skip(c->run, "probe", "ib", "skipped: the test transport (CCPROBE_IB_FAKE) "
			 "works between ranks of one host only");
		return 1;
	}
	if (c->loopback && mpi->size < 2) {
		run_skip(c->run, "probe", "ib", "skipped: needs two nodes, or two ranks on one "
			 "host (loopback)");
		return 1;
	}
	if (ib_layout_init(&c->lay, c->nv, c->vrank_node, mpi->size, c->nrails))
		return -1;
	c->turns = ib_layout_turns(&c->lay);
	if (!c->loopback) {
		/* the node pairs: the tournament, or the grouped schedule at scale (docs/rdma.md) */
		int *pairs, *round_of, np, grouped, within, rounds;
		const char *why;

		rounds = job_pair_plan(c->run->opt, mpi, &pairs, &round_of, &np, &grouped, &within,
				       &why, reason, sizeof(reason));
		if (rounds < 0 || (grouped && ib_layout_rounds(&c->lay, pairs, round_of, np, rounds))) {
			if (mpi->rank == 0)
				log_error("ib: cannot plan the node pairs: %s", rounds < 0 ? reason :
					  "out of memory");
			free(pairs);
			free(round_of);
			return -1;
		}
		if (mpi->rank == 0)
			log_info("ib: %s schedule (%s): %d node pairs in %d rounds",
				 grouped ? "grouped" : "all-pairs", why, np, rounds);
		free(pairs);
		free(round_of);
	}
	for (int n = 0; mpi->rank == 0 && !c->loopback && n < mpi->nnodes; n++) {
		if (c->nrails[n] == most)
			continue;
		snprintf(reason, sizeof(reason), "skipped: %s has %d rail(s), other hosts up to %d: "
			 "rails %d to %d are not measured with it", mpi->hosts[n], c->nrails[n],
			 most, c->nrails[n], most - 1);
		run_record(c->run, "skip", json_pack("{s:s, s:s, s:s, s:s, s:s}", "kind", "probe",
						     "name", "ib", "test", "rails", "host",
						     mpi->hosts[n], "reason", reason));
	}
	if (mpi->rank == 0 && name_rails(c, invs))
		return -1;
	return 0;
}

static int alloc_ctx(struct ibctx *c)
{
	struct mpictx *mpi = c->mpi;

	c->rails = calloc((size_t)c->turns + 1, sizeof(*c->rails));
	c->rail_open = calloc((size_t)c->turns + 1, sizeof(int));
	c->rail_err = calloc((size_t)c->turns + 1, sizeof(*c->rail_err));
	c->res = calloc((size_t)R_N(c), sizeof(double));
	c->samples = malloc((size_t)p_lat_iters * sizeof(double));
	if (mpi->rank == 0) {
		c->all = calloc((size_t)mpi->size * R_N(c), sizeof(double));
		c->allmsg = calloc((size_t)mpi->size, MSG_LEN);
	}
	return c->rails && c->rail_open && c->rail_err && c->res && c->samples &&
	       (mpi->rank != 0 || (c->all && c->allmsg)) ? 0 : -1;
}

static void free_ctx(struct ibctx *c)
{
	for (int t = 0; c->rails && c->rail_open && t < c->turns; t++)
		if (c->rail_open[t] == 1)
			c->tp->close(&c->rails[t]);
	for (int v = 0; c->vhost && v < c->nv; v++)
		free(c->vhost[v]);
	free(c->vhost);
	free(c->rail_name);
	ib_layout_free(&c->lay);
	free(c->rails);
	free(c->rail_open);
	free(c->rail_err);
	free(c->res);
	free(c->all);
	free(c->allmsg);
	free(c->samples);
	free(c->vrank_node);
	free(c->nrails);
	free(c->pc);
}

/* The settings both sides must share, as one number. */
static uint32_t settings_hash(const struct ibctx *c)
{
	uint64_t v[16 + IB_MAX_LAT];
	int n = 0;

	v[n++] = p_size;
	v[n++] = (uint64_t)p_depth;
	v[n++] = (uint64_t)p_iters;
	v[n++] = (uint64_t)p_reps;
	v[n++] = (uint64_t)p_warmup;
	v[n++] = (uint64_t)p_lat_iters;
	v[n++] = (uint64_t)p_lat_warmup;
	v[n++] = (uint64_t)!strcmp(p_mem, "gpu");
	v[n++] = (uint64_t)p_sl;
	v[n++] = (uint64_t)p_tclass;
	v[n++] = (uint64_t)c->nlat;
	for (int k = 0; k < c->nlat; k++)
		v[n++] = c->lat[k];
	return ib_settings_hash(v, n);
}

static int ib_run(struct cc_run *run)
{
	struct mpictx *mpi = run->mpi;
	struct ibctx c = { .run = run, .mpi = mpi, .peer = -1, .tp = &ib_transport_verbs };
	static struct ib_transport fake;
	const char *fake_root = getenv("CCPROBE_IB_FAKE");
	json_t *inv = NULL, *invs, *all;
	int rc = CC_EXIT_OK, p, ok;

	if (fake_root && *fake_root) {
		ib_transport_fake(&fake, fake_root);
		c.tp = &fake;
		if (mpi->rank == 0)
			log_warn("ib: CCPROBE_IB_FAKE: devices from '%s', data moved by memory copies; "
				 "nothing here measures a network", fake_root);
	}
	c.nlat = parse_lat_sizes(p_lat_sizes, c.lat);
	c.settings = settings_hash(&c);
	srand48((long)(timer_now() * 1e6) ^ (long)mpi->rank << 16);
	if (mpi->local_rank == 0)
		c.pc = calloc(4 * IB_MAX_RAILS, sizeof(*c.pc));
	/* discovery: a hung driver shows as the ranks that never started it */
	arm(&c, "ib discovery", NULL, 0);
	if (mpi->local_rank == 0)
		inv = c.pc ? discover(&c) : NULL;
	if (mpi->local_rank == 0 && !c.pc)
		snprintf(c.hr.why, sizeof(c.hr.why), "out of memory");
	MPI_Bcast(&c.hr, sizeof(c.hr), MPI_BYTE, 0, mpi->local);
	invs = run_gather_json(mpi->world, inv);
	watchdog_disarm();
	if (mpi->rank == 0) {
		size_t i;
		json_t *v;

		json_array_foreach(invs, i, v)
			if (!json_is_null(v))
				run_record(run, "inventory", json_incref(v));
	}
	p = plan(&c, invs);
	MPI_Allreduce(MPI_IN_PLACE, &p, 1, MPI_INT, MPI_MIN, mpi->world);
	if (p < 0) {
		run_error(run, "probe", "ib", "cannot plan the rail pairs (the topology or memory: see the log)");
		rc = CC_EXIT_RUNTIME;
		goto counters;
	}
	if (p > 0)
		goto counters;
	ok = !alloc_ctx(&c);
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, mpi->world);
	if (!ok) {
		run_error(run, "probe", "ib", "out of memory for the measurement buffers");
		rc = CC_EXIT_RUNTIME;
		goto counters;
	}
	if (mpi->rank == 0)
		log_info("ib: %d %s, up to %d rail(s), %d round(s) of %d turn(s); %zu B WRITEs, "
			 "depth %d, %s memory", c.nv, c.loopback ? "ranks on one host (loopback)" :
			 "nodes", c.lay.rails_max, c.lay.nrounds, c.turns, p_size, p_depth,
			 p_mem);
	arm(&c, "ib rail setup", NULL, 0);
	all = run_gather_json(mpi->world, open_rails(&c));
	watchdog_disarm();
	if (mpi->rank == 0)
		write_gdr(&c, all);
	json_decref(all);
	for (int round = 0; round < c.lay.nrounds; round++)
		for (int t = 0; t < c.turns; t++)
			for (int slot = c.loopback ? 0 : -1; slot < (c.loopback ? c.nv / 2 : 0); slot++)
				run_turn(&c, round, t, slot);
counters:
	arm(&c, "ib counters", NULL, 0);
	all = run_gather_json(mpi->world, mpi->local_rank == 0 && c.pc ? counter_records(&c) : NULL);
	watchdog_disarm();
	if (mpi->rank == 0)
		write_all(&c, all, "measurement");
	json_decref(all);
	json_decref(invs);
	if (mpi->rank == 0 && c.failed && rc == CC_EXIT_OK)
		rc = CC_EXIT_FAIL;
	MPI_Bcast(&rc, 1, MPI_INT, 0, mpi->world);
	free_ctx(&c);
	return rc;
}

#endif /* HAVE_VERBS */

const struct probe probe_ib = {
	.name = "ib",
	.summary = "RDMA WRITE bandwidth and latency per HCA rail, port counters, GPUDirect RDMA",
	.params = ib_params,
	.phase = PHASE_PAIRS,
	.estimate = ib_estimate,
	.plan_note = plan_pair_note,
	.header = ib_header,
	.check = check_params,
#ifdef HAVE_VERBS
	.run = ib_run,
#else
	.missing = "built without libibverbs/librdmacm (headers not found, or USE_VERBS=no)",
#endif
};
