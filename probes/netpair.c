/*
 * netpair: node-to-node bandwidth and latency over MPI point-to-point, fed
 * to the diagnosis that names the bad node or link (probes/netpair_diag.c).
 * docs/netpair.md has the method, the defaults and the record fields.
 *
 * One leader rank per node measures (run->mpi->leaders); the other ranks of
 * a node only follow the plan so that every rank arms and disarms the
 * watchdog for the same rounds. Pairs run as a round-robin tournament, or
 * at scale as the grouped schedule (probes/schedule.h, probes/groups.h): all
 * pairs of a round at once, each pair in four steps separated by a barrier of
 * the leaders: latency, a -> b, b -> a, both ways.
 * Rank 0 (the leader of node 0) gathers each round, writes the records and
 * runs the diagnosis, which may ask for a second pass of retests.
 */
#include "groups.h"
#include "netpair.h"
#include "linkrate.h"
#include "probe.h"
#include "schedule.h"
#include "../core/log.h"
#include "../core/size.h"
#include "../core/stats.h"
#include "../core/timer.h"
#include "../core/watchdog.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ parameters */

static size_t p_bw_size = (size_t)4 << 20;
static size_t p_lat_size = 8;
static int p_window = 16;
static int p_warmup = 1;
static int p_iters = 1000;
static double p_time = 0.15;
/* --pair-tol not given: TOL_NODES on nodes of their own, TOL_SHARED when nodes share a kernel */
#define TOL_AUTO -1.0
#define TOL_NODES 0.85
#define TOL_SHARED 0.5
/* a soak runs at least this many sweeps: every link then has 4 samples (both ways, twice),
 * above the 3 ccreport judges (report/soak.h SOAK_MIN_INTERVALS) */
#define NP_SOAK_LEAST_SWEEPS 2
static double p_tol = TOL_AUTO;
static double p_bidir_tol = -1.0;  /* not given: see choose_mode */
static double p_lat_tol = -1.0;   /* not given: 3, 0 on a shared kernel */
static double p_expect_gbps;
static double p_link_rate;        /* Mb/s; 0: CCDIAG_LINK_RATE_MBIT or MPI's interface */
static int p_partners = 2;
static int p_retest = 1;
static int p_confirm = 3;
static int p_concurrency;
static const char *p_poll = "auto";

static const struct cc_param netpair_params[] = {
	{ "pair-bw-size", CC_PARAM_SIZE, &p_bw_size, "netpair: bandwidth message size [4M]" },
	{ "pair-lat-size", CC_PARAM_SIZE, &p_lat_size, "netpair: latency message size [8]" },
	{ "pair-window", CC_PARAM_INT, &p_window,
	  "netpair: most messages in flight in a bandwidth window [16]" },
	{ "pair-warmup", CC_PARAM_INT, &p_warmup,
	  "netpair: untimed messages before a bandwidth step [1]" },
	{ "pair-iters", CC_PARAM_INT, &p_iters, "netpair: timed latency ping-pongs per pair [1000]" },
	{ "pair-time", CC_PARAM_DOUBLE, &p_time, "netpair: seconds per bandwidth step [0.15]" },
	{ "pair-tol", CC_PARAM_DOUBLE, &p_tol,
	  "netpair: suspect below this fraction of the reference [auto: 0.85; 0.5 on shared kernel]" },
	{ "pair-bidir-tol", CC_PARAM_DOUBLE, &p_bidir_tol,
	  "netpair: same, both ways at once; 0 = off [auto: pair-tol; 0 on shared kernel]" },
	{ "pair-lat-tol", CC_PARAM_DOUBLE, &p_lat_tol,
	  "netpair: suspect above this multiple of the reference latency; 0 = off [auto: 3; 0 on shared kernel]" },
	{ "pair-expect-gbps", CC_PARAM_DOUBLE, &p_expect_gbps,
	  "netpair: expected one-way Gb/s as the reference; 0 = measured [0]" },
	{ "pair-link-rate", CC_PARAM_DOUBLE, &p_link_rate,
	  "netpair: each node's link rate in Mb/s for rate_GBps (ccdiag: the profile's nic_rate); "
	  "0 = CCDIAG_LINK_RATE_MBIT, else the interface MPI uses [0]" },
	{ "pair-partners", CC_PARAM_INT, &p_partners,
	  "netpair: known-good partners to retest a suspect node with [2]" },
	{ "pair-retest", CC_PARAM_INT, &p_retest, "netpair: 1 = retest suspects, 0 = judge pass 1 only [1]" },
	{ "pair-confirm", CC_PARAM_INT, &p_confirm,
	  "netpair: tries of a retest out of tolerance, the best judged [3]" },
	{ "pair-concurrency", CC_PARAM_INT, &p_concurrency,
	  "netpair: most pairs at once; 1 = serial, 0 = auto (see docs/netpair.md) [0]" },
	{ "pair-poll", CC_PARAM_STRING, &p_poll,
	  "netpair: wait by busy polling, lazy (naps) or auto [auto]" },
	{ NULL, 0, NULL, NULL },
};

/* ------------------------------------------------------------------ measurement */

#define TAG_DATA 1
#define TAG_ACK 2
#define TAG_CTRL 3
#define TAG_LAT 4
#define MIN_WINDOWS 1         /* timed windows per bandwidth step, at least */
#define MAX_WINDOWS 100000
#define FLAG_GO 0
#define FLAG_STOP 1

/* What a leader reports for one round (gathered to rank 0 as doubles). */
enum {
	R_PARTNER,               /* -1: idle this round */
	R_BW, R_WINDOW, R_WINDOWS, R_TIME,   /* me -> partner, as the sender */
	R_BIDIR, R_BI_WINDOW, R_BI_WINDOWS, R_BI_TIME,  /* side a only */
	R_LAT_N, R_LAT_MIN, R_LAT_MED, R_LAT_MEAN, R_LAT_MAX, R_LAT_P99, R_LAT_CV,  /* side a, us */
	R_WRONG,                 /* bytes that differed in data this rank received */
	R_NV
};

struct np_ctx {
	struct cc_run *run;
	struct mpictx *mpi;
	int leader;
	MPI_Comm comm;           /* dup of the leaders communicator; rank = node index */
	int nnodes;
	unsigned char *sbuf;     /* p_bw_size */
	unsigned char *rbuf;     /* p_window slots of p_bw_size */
	double *lat;             /* p_iters samples */
	double *all;             /* rank 0: nnodes * R_NV */
	int pass_rounds[3];      /* rounds run per stage (0 = all-pairs) */
	int failed;              /* rank 0: wrong data seen */
	int lazy;                /* nap while waiting (oversubscribed cores); see xwait */
	int cap;                 /* most pairs at once; 0: whole rounds */
	double step_s;           /* seconds of one bandwidth step: --pair-time, or --soak-interval */
	struct np_diag *diag;    /* rank 0 */
	double *rate_mbit;       /* rank 0: [nnodes] each node's link rate, Mb/s; 0 = unknown */
	const struct job_groups *groups;  /* the job's groups (probes/groups.h) */
	int grouped;             /* the grouped schedule runs; 0: every pair */
	int within;              /* its rounds inside groups (before any --pair-concurrency split) */
	const char *why;         /* the schedule rule's phrase */
	struct np_uplink *up;    /* rank 0, with a topology: [ngroups] np_uplinks' verdicts */
};

/* The data a node sends in a step: a word pattern keyed by sender and step. */
static uint64_t pattern_seed(int node, int step)
{
	return ((uint64_t)node + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)step << 56);
}

static void pattern_fill(unsigned char *buf, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = seed ^ (i * 0xff51afd7ed558ccdull);

		memcpy(buf + i, &w, len - i < 8 ? len - i : 8);
	}
}

/* Bytes of buf that differ from the pattern. */
static size_t pattern_check(const unsigned char *buf, size_t len, uint64_t seed)
{
	size_t bad = 0;

	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = seed ^ (i * 0xff51afd7ed558ccdull);
		size_t k = len - i < 8 ? len - i : 8;

		if (memcmp(buf + i, &w, k))
			for (size_t j = 0; j < k; j++)
				bad += buf[i + j] != ((unsigned char *)&w)[j];
	}
	return bad;
}

/* Messages per window: enough that a window is ~1/4 of the step budget. */
static int window_for(double t_msg, double step_s)
{
	double w;

	if (t_msg <= 0)
		return p_window;
	w = step_s / 4.0 / t_msg;
	if (w < 1)
		return 1;
	return w > p_window ? p_window : (int)w;
}

/*
 * Completion of point-to-point requests. Busy polling (MPI_Waitall) is what
 * a measurement on a real cluster wants: one core per rank, and no wake-up
 * delay. When the measuring ranks of several nodes share one kernel with
 * fewer cores than ranks (an emulated cluster), spinning ranks starve each
 * other and the kernel's network stack, and the numbers measure the CPU;
 * there a rank spins briefly, then naps between tests (c->lazy).
 */
#define SPIN_S 20e-6
static void xwait(struct np_ctx *c, int n, MPI_Request *req)
{
	const struct timespec nap = { 0, 50000 };
	double t0;
	int done = 0;

	if (!c->lazy) {
		MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
		return;
	}
	t0 = timer_now();
	for (;;) {
		MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
		if (done)
			return;
		if (timer_now() - t0 > SPIN_S)
			nanosleep(&nap, NULL);
	}
}

static void xsend(struct np_ctx *c, const void *buf, int len, MPI_Datatype t, int peer, int tag)
{
	MPI_Request req;

	if (!c->lazy) {
		MPI_Send(buf, len, t, peer, tag, c->comm);
		return;
	}
	MPI_Isend(buf, len, t, peer, tag, c->comm, &req);
	xwait(c, 1, &req);
}

static void xrecv(struct np_ctx *c, void *buf, int len, MPI_Datatype t, int peer, int tag)
{
	MPI_Request req;

	if (!c->lazy) {
		MPI_Recv(buf, len, t, peer, tag, c->comm, MPI_STATUS_IGNORE);
		return;
	}
	MPI_Irecv(buf, len, t, peer, tag, c->comm, &req);
	xwait(c, 1, &req);
}

/* Exchanges one int with peer: sends *mine, returns theirs. */
static int xswap(struct np_ctx *c, int mine, int peer)
{
	MPI_Request req[2];
	int theirs = 0;

	MPI_Irecv(&theirs, 1, MPI_INT, peer, TAG_ACK, c->comm, &req[0]);
	MPI_Isend(&mine, 1, MPI_INT, peer, TAG_ACK, c->comm, &req[1]);
	xwait(c, 2, req);
	return theirs;
}

/*
 * Latency by ping-pong: a sends, b returns; one-way = round trip / 2, always
 * with busy polling (a nap would be measured). Side a fills the R_LAT_*
 * fields in microseconds.
 */
static void step_latency(struct np_ctx *c, int peer, int is_a, double *res)
{
	int warm = p_iters / 10 < 2 ? 2 : p_iters / 10;
	int len = (int)p_lat_size;
	struct stats st;

	for (int i = 0; i < warm + p_iters; i++) {
		if (is_a) {
			double t0 = timer_now();

			MPI_Send(c->sbuf, len, MPI_BYTE, peer, TAG_LAT, c->comm);
			MPI_Recv(c->rbuf, len, MPI_BYTE, peer, TAG_LAT, c->comm, MPI_STATUS_IGNORE);
			if (i >= warm)
				c->lat[i - warm] = (timer_now() - t0) / 2.0 * 1e6;
		} else {
			MPI_Recv(c->rbuf, len, MPI_BYTE, peer, TAG_LAT, c->comm, MPI_STATUS_IGNORE);
			MPI_Send(c->sbuf, len, MPI_BYTE, peer, TAG_LAT, c->comm);
		}
	}
	if (!is_a || stats_compute(c->lat, (size_t)p_iters, &st))
		return;
	res[R_LAT_N] = (double)st.n;
	res[R_LAT_MIN] = st.min;
	res[R_LAT_MED] = st.median;
	res[R_LAT_MEAN] = st.mean;
	res[R_LAT_MAX] = st.max;
	res[R_LAT_P99] = st.p99;
	res[R_LAT_CV] = st.cv;
}

/* Zeroes the receive slots the data check reads, so a stale slot cannot pass. */
static void clear_slots(struct np_ctx *c, int w)
{
	memset(c->rbuf, 0, p_bw_size);
	memset(c->rbuf + (size_t)(w - 1) * p_bw_size, 0, p_bw_size);
}

static void check_slots(struct np_ctx *c, int w, int peer, int step, double *res)
{
	uint64_t seed = pattern_seed(peer, step);

	res[R_WRONG] += (double)pattern_check(c->rbuf, p_bw_size, seed);
	if (w > 1)
		res[R_WRONG] += (double)pattern_check(c->rbuf + (size_t)(w - 1) * p_bw_size,
						      p_bw_size, seed);
}

/* The receiver's (or side a's) decision after window k started at t0. */
static int stop_after(int k, double t0, double step_s)
{
	return k >= MAX_WINDOWS || (k >= MIN_WINDOWS && timer_now() - t0 >= step_s) ?
		FLAG_STOP : FLAG_GO;
}

/*
 * One direction, osu_bw style: the sender posts a window of W nonblocking
 * sends, the receiver the matching receives into W separate slots, then
 * returns a 4-byte flag. The receiver decides when to stop (budget spent),
 * so both sides agree on the count without another message. W is sized from
 * the warm-up messages so that slow links still stop near the budget.
 */
static void step_uni(struct np_ctx *c, int peer, int sending, int me, int step, double *res)
{
	int len = (int)p_bw_size, flag = FLAG_GO, w = p_window, k = 0;
	MPI_Request req[p_window];
	double t0, t1 = 0;

	if (sending) {
		pattern_fill(c->sbuf, p_bw_size, pattern_seed(me, step));
		for (int i = 0; i < p_warmup; i++) {
			t0 = timer_now();
			xsend(c, c->sbuf, len, MPI_BYTE, peer, TAG_DATA);
			xrecv(c, &flag, 1, MPI_INT, peer, TAG_ACK);
			t1 = timer_now() - t0;
		}
		w = p_warmup ? window_for(t1, c->step_s) : p_window;
		xsend(c, &w, 1, MPI_INT, peer, TAG_CTRL);
		t0 = timer_now();
		do {
			for (int j = 0; j < w; j++)
				MPI_Isend(c->sbuf, len, MPI_BYTE, peer, TAG_DATA, c->comm, &req[j]);
			xwait(c, w, req);
			xrecv(c, &flag, 1, MPI_INT, peer, TAG_ACK);
			k++;
		} while (flag == FLAG_GO);
		t1 = timer_now() - t0;
		res[R_BW] = (double)p_bw_size * w * k / t1 / 1e9;
		res[R_WINDOW] = w;
		res[R_WINDOWS] = k;
		res[R_TIME] = t1;
		return;
	}
	for (int i = 0; i < p_warmup; i++) {
		xrecv(c, c->rbuf, len, MPI_BYTE, peer, TAG_DATA);
		xsend(c, &flag, 1, MPI_INT, peer, TAG_ACK);
	}
	xrecv(c, &w, 1, MPI_INT, peer, TAG_CTRL);
	if (w < 1 || w > p_window)
		w = p_window;   /* cannot happen: both sides run the same options */
	clear_slots(c, w);
	t0 = timer_now();
	do {
		for (int j = 0; j < w; j++)
			MPI_Irecv(c->rbuf + (size_t)j * p_bw_size, len, MPI_BYTE, peer, TAG_DATA,
				  c->comm, &req[j]);
		xwait(c, w, req);
		flag = stop_after(++k, t0, c->step_s);
		xsend(c, &flag, 1, MPI_INT, peer, TAG_ACK);
	} while (flag == FLAG_GO);
	check_slots(c, w, peer, step, res);
}

/* Both directions at once, osu_bibw style; side a decides and times. */
static void step_bidir(struct np_ctx *c, int peer, int is_a, int me, int step, double *res)
{
	int len = (int)p_bw_size, w = p_window, k = 0, flag = FLAG_GO;
	MPI_Request req[2 * p_window];
	double t0, t1 = 0;

	pattern_fill(c->sbuf, p_bw_size, pattern_seed(me, step));
	for (int i = 0; i < p_warmup; i++) {
		t0 = timer_now();
		MPI_Irecv(c->rbuf, len, MPI_BYTE, peer, TAG_DATA, c->comm, &req[0]);
		MPI_Isend(c->sbuf, len, MPI_BYTE, peer, TAG_DATA, c->comm, &req[1]);
		xwait(c, 2, req);
		xswap(c, FLAG_GO, peer);
		t1 = timer_now() - t0;
	}
	if (is_a) {
		w = p_warmup ? window_for(t1, c->step_s) : p_window;
		xsend(c, &w, 1, MPI_INT, peer, TAG_CTRL);
	} else {
		xrecv(c, &w, 1, MPI_INT, peer, TAG_CTRL);
		if (w < 1 || w > p_window)
			w = p_window;
	}
	clear_slots(c, w);
	t0 = timer_now();
	do {
		int other;

		for (int j = 0; j < w; j++) {
			MPI_Irecv(c->rbuf + (size_t)j * p_bw_size, len, MPI_BYTE, peer, TAG_DATA,
				  c->comm, &req[j]);
			MPI_Isend(c->sbuf, len, MPI_BYTE, peer, TAG_DATA, c->comm, &req[w + j]);
		}
		xwait(c, 2 * w, req);
		k++;
		if (is_a)
			flag = stop_after(k, t0, c->step_s);
		other = xswap(c, flag, peer);
		if (!is_a)
			flag = other;
	} while (flag == FLAG_GO);
	t1 = timer_now() - t0;
	check_slots(c, w, peer, step, res);
	if (!is_a)
		return;
	res[R_BIDIR] = 2.0 * (double)p_bw_size * w * k / t1 / 1e9;
	res[R_BI_WINDOW] = w;
	res[R_BI_WINDOWS] = k;
	res[R_BI_TIME] = t1;
}

/*
 * One round on a leader: the four steps with a barrier of all leaders before
 * each, so that every pair of the round runs the same step at the same time
 * (latency is not measured beside another pair's bulk transfer). An idle
 * leader (bye) only takes part in the barriers. In lazy mode the pairs take
 * turns for the latency step (slot = the pair's index in the round), since
 * ping-pongs that share cores measure the scheduler.
 */
static int leader_round(struct np_ctx *c, int peer, int is_a, int slot, int nslots, double *res)
{
	int me = c->mpi->node;

	for (int i = 0; i < R_NV; i++)
		res[i] = 0.0;
	res[R_PARTNER] = peer;
	if (peer >= 0)
		watchdog_fault_point(c->mpi->rank, p_bw_size);
	for (int s = 0; s < (c->lazy ? nslots : 1); s++) {
		if (mpictx_nap_barrier(c->comm))
			return -1;
		if (peer >= 0 && (!c->lazy || s == slot))
			step_latency(c, peer, is_a, res);
	}
	for (int step = 1; step < 4; step++) {
		if (mpictx_nap_barrier(c->comm))
			return -1;
		if (peer < 0)
			continue;
		if (step == 1)
			step_uni(c, peer, is_a, me, step, res);
		else if (step == 2)
			step_uni(c, peer, !is_a, me, step, res);
		else
			step_bidir(c, peer, is_a, me, step, res);
	}
	return 0;
}

static const char *stage_name(int stage)
{
	return stage == 0 ? "all-pairs" : stage == 1 ? "node-retest" : "link-retest";
}

static json_t *meas_record(struct np_ctx *c, const char *test, int stage, int round, int src,
			   int dst, size_t bytes)
{
	/* the judged element is the link, named lower node first whatever the direction */
	int a = src < dst ? src : dst, b = src < dst ? dst : src;
	char element[520];
	json_t *rec;

	snprintf(element, sizeof(element), "%s-%s", c->mpi->hosts[a], c->mpi->hosts[b]);
	rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:i, s:s, s:s, s:i, s:i, s:I}",
			"kind", "probe", "name", "netpair", "test", test, "scope", "link",
			"element", element, "host", c->mpi->hosts[a], "peer", c->mpi->hosts[b],
			"pass", stage ? 2 : 1, "stage", stage_name(stage), "round", round,
			"src", c->mpi->hosts[src], "dst", c->mpi->hosts[dst],
			"src_node", src, "dst_node", dst, "bytes", (json_int_t)bytes);
	return rec;
}

/*
 * The link's theoretical rate (the slower end's NIC), when both ends know
 * theirs; both ways at once can carry twice it.
 */
static void add_rate(struct np_ctx *c, json_t *rec, int a, int b, double GBps, int both_ways)
{
	double rate = linkrate_pair_GBps(c->rate_mbit[a], c->rate_mbit[b]) * (both_ways ? 2 : 1);

	if (!(rate > 0))
		return;
	json_object_set_new(rec, "rate_GBps", json_real(rate));
	json_object_set_new(rec, "pct_of_rate", json_real(100.0 * GBps / rate));
}

static void add_bw(json_t *rec, double GBps, double window, double windows, double time_s)
{
	json_object_set_new(rec, "bw_GBps", json_real(GBps));
	json_object_set_new(rec, "bw_Gbps", json_real(GBps * 8.0));
	json_object_set_new(rec, "window", json_integer((json_int_t)window));
	json_object_set_new(rec, "windows", json_integer((json_int_t)windows));
	json_object_set_new(rec, "time_s", json_real(time_s));
}

/* Rank 0: the records of pair a-b from the gathered rows; fills m. */
static void write_pair(struct np_ctx *c, int stage, int round, int a, int b, struct np_meas *m)
{
	const double *A = c->all + (size_t)a * R_NV, *B = c->all + (size_t)b * R_NV;
	struct stats st = { 0 };
	json_t *rec;
	double wrong = A[R_WRONG] + B[R_WRONG];

	st.n = (size_t)A[R_LAT_N];
	st.min = A[R_LAT_MIN];
	st.median = A[R_LAT_MED];
	st.mean = A[R_LAT_MEAN];
	st.max = A[R_LAT_MAX];
	st.p99 = A[R_LAT_P99];
	st.cv = A[R_LAT_CV];
	rec = meas_record(c, "latency", stage, round, a, b, p_lat_size);
	json_object_set_new(rec, "lat_us", run_stats_json(&st, 1.0));
	run_record(c->run, "measurement", rec);

	rec = meas_record(c, "bw_uni", stage, round, a, b, p_bw_size);
	add_bw(rec, A[R_BW], A[R_WINDOW], A[R_WINDOWS], A[R_TIME]);
	add_rate(c, rec, a, b, A[R_BW], 0);
	run_record(c->run, "measurement", rec);
	rec = meas_record(c, "bw_uni", stage, round, b, a, p_bw_size);
	add_bw(rec, B[R_BW], B[R_WINDOW], B[R_WINDOWS], B[R_TIME]);
	add_rate(c, rec, a, b, B[R_BW], 0);
	run_record(c->run, "measurement", rec);
	rec = meas_record(c, "bw_bidir", stage, round, a, b, p_bw_size);
	add_bw(rec, A[R_BIDIR], A[R_BI_WINDOW], A[R_BI_WINDOWS], A[R_BI_TIME]);
	add_rate(c, rec, a, b, A[R_BIDIR], 1);
	run_record(c->run, "measurement", rec);

	m->bw_ab = A[R_BW];
	m->bw_ba = B[R_BW];
	m->bidir = A[R_BIDIR];
	/* judged on the fastest round trip: a busy CPU only ever adds to one
	 * (under a busy loop per core the median read 100x the idle one), a
	 * longer path raises them all */
	m->lat_us = A[R_LAT_MIN];
	if (wrong > 0) {
		char msg[256];

		snprintf(msg, sizeof(msg), "wrong data between '%s' and '%s': %.0f bytes differ",
			 c->mpi->hosts[a], c->mpi->hosts[b], wrong);
		run_error(c->run, "probe", "netpair", msg);
		c->failed = 1;
	}
}

/* The host pairs of round r of a plan, [[a, b], ...], for a watchdog record. */
static json_t *round_pairs(const struct mpictx *mpi, const int *pairs, const int *round_of,
			   int npairs, int r)
{
	json_t *pl = json_array();

	for (int i = 0; i < npairs; i++)
		if (round_of[i] == r)
			json_array_append_new(pl, json_pack("[s, s]", mpi->hosts[pairs[2 * i]],
							    mpi->hosts[pairs[2 * i + 1]]));
	return pl;
}

/*
 * Runs a plan on every rank: pairs[2i] -> pairs[2i+1] in round round_of[i].
 * Rank 0 writes the records and fills out[npairs]. Returns 0 or -1.
 */
static int run_plan(struct np_ctx *c, int stage, const int *pairs, int npairs,
		    const int *round_of, int nrounds, struct np_meas *out)
{
	struct mpictx *mpi = c->mpi;
	double res[R_NV];
	int base = c->pass_rounds[stage];

	for (int r = 0; r < nrounds; r++) {
		int peer = -1, is_a = 0, slot = -1, nslots = 0;
		char what[96];
		json_t *detail = NULL;

		for (int i = 0; i < npairs; i++) {
			if (round_of[i] != r)
				continue;
			if (pairs[2 * i] == mpi->node || pairs[2 * i + 1] == mpi->node) {
				is_a = pairs[2 * i] == mpi->node;
				peer = is_a ? pairs[2 * i + 1] : pairs[2 * i];
				slot = nslots;
			}
			nslots++;
		}
		snprintf(what, sizeof(what), "netpair %s round %d", stage_name(stage), base + r);
		if (mpi->rank == 0)
			detail = json_pack("{s:s, s:s, s:s, s:i, s:o}", "kind", "probe",
					   "probe", "netpair", "stage", stage_name(stage),
					   "round", base + r, "pairs",
					   round_pairs(mpi, pairs, round_of, npairs, r));
		watchdog_arm(what, detail);
		if (c->leader) {
			MPI_Request req;

			if (leader_round(c, peer, is_a, slot, nslots, res) ||
			    MPI_Igather(res, R_NV, MPI_DOUBLE, c->all, R_NV, MPI_DOUBLE, 0, c->comm,
					&req) != MPI_SUCCESS || mpictx_nap_wait(&req)) {
				log_error("netpair round %d failed", base + r);
				watchdog_disarm();
				return -1;
			}
		}
		watchdog_disarm();
		if (mpi->rank != 0)
			continue;
		for (int i = 0; i < npairs; i++)
			if (round_of[i] == r)
				write_pair(c, stage, base + r, pairs[2 * i], pairs[2 * i + 1], &out[i]);
	}
	c->pass_rounds[stage] += nrounds;
	return 0;
}

/*
 * Rank 0's side of a retest: tells every rank the pairs, then runs them.
 * Every rank packs the pairs into rounds the same way.
 */
static int run_broadcast_plan(struct np_ctx *c, int stage, int *pairs, int npairs,
			      struct np_meas *out)
{
	int hdr[2] = { npairs, stage }, rc = -1, nrounds;
	int *round_of = NULL;

	if (mpictx_nap_bcast(hdr, 2, MPI_INT, c->mpi->world))
		return -1;
	if (hdr[0] < 0)
		return 1;   /* done */
	if (c->mpi->rank != 0) {
		pairs = malloc((size_t)hdr[0] * 2 * sizeof(int) + 1);
		if (!pairs) {
			log_error("out of memory for %d retest pairs", hdr[0]);
			MPI_Abort(MPI_COMM_WORLD, CC_EXIT_RUNTIME);
		}
	}
	round_of = malloc((size_t)hdr[0] * sizeof(int) + 1);
	if (!round_of || mpictx_nap_bcast(pairs, 2 * hdr[0], MPI_INT, c->mpi->world))
		goto out;
	nrounds = schedule_pack(c->nnodes, pairs, hdr[0], round_of);
	if (nrounds >= 0)
		nrounds = schedule_cap(round_of, hdr[0], nrounds, c->cap);
	if (nrounds < 0)
		goto out;
	rc = run_plan(c, hdr[1], pairs, hdr[0], round_of, nrounds, out);
out:
	if (c->mpi->rank != 0)
		free(pairs);
	free(round_of);
	return rc;
}

static int retest_cb(void *ctx, int stage, const int *pairs, int npairs, struct np_meas *out)
{
	struct np_ctx *c = ctx;
	int *copy = malloc((size_t)npairs * 2 * sizeof(int));
	int rc;

	if (!copy)
		return -1;
	memcpy(copy, pairs, (size_t)npairs * 2 * sizeof(int));
	rc = run_broadcast_plan(c, stage, copy, npairs, out);
	free(copy);
	return rc;
}

/* ------------------------------------------------------------------ output */

static json_t *flags_json(unsigned f)
{
	json_t *a = json_array();

	if (f & NP_F_UNI)
		json_array_append_new(a, json_string("bw_uni"));
	if (f & NP_F_BIDIR)
		json_array_append_new(a, json_string("bw_bidir"));
	if (f & NP_F_LAT)
		json_array_append_new(a, json_string("latency"));
	return a;
}

static json_t *ratios_json(const struct np_ratios *r)
{
	return json_pack("{s:f, s:f, s:f, s:o}", "bw", r->uni, "bidir", r->bidir, "lat", r->lat,
			 "out_of_tolerance", flags_json(r->flags));
}

static json_t *diag_record(const char *subject, const char *verdict)
{
	return json_pack("{s:s, s:s, s:s, s:s}", "kind", "probe", "name", "netpair",
			 "subject", subject, "verdict", verdict);
}

/*
 * "switch uplink leaf2 (node8–node11)": a group's hosts as a range when they
 * are one prefix with consecutive numbers in order, else listed (at most 4).
 */
static void hosts_text(struct np_ctx *c, int g, char *out, size_t len)
{
	const struct job_groups *gr = c->groups;
	char **hosts = c->mpi->hosts;
	int first = -1, last = -1, count = 0, range = 1, prev = 0;
	size_t at = 0, plen = 0;

	for (int x = 0; x < gr->n; x++) {
		const char *h = hosts[x], *dig;
		int num;

		if (gr->group_of[x] != g)
			continue;
		dig = h + strlen(h);
		while (dig > h && dig[-1] >= '0' && dig[-1] <= '9')
			dig--;
		num = *dig ? atoi(dig) : -1;
		if (first < 0) {
			plen = (size_t)(dig - h);
			first = x;
		} else if (num != prev + 1 || (size_t)(dig - h) != plen || strncmp(h, hosts[first], plen)) {
			range = 0;
		}
		range &= num >= 0;
		prev = num;
		last = x;
		count++;
	}
	if (count > 1 && range) {
		snprintf(out, len, "%s\u2013%s", hosts[first], hosts[last]);
		return;
	}
	out[0] = '\0';
	for (int x = 0, k = 0; x < gr->n && at < len; x++) {
		if (gr->group_of[x] != g)
			continue;
		if (k++ == 4) {
			at += (size_t)snprintf(out + at, len - at, ", ... (%d hosts)", count);
			break;
		}
		at += (size_t)snprintf(out + at, len - at, "%s%s", k > 1 ? ", " : "", hosts[x]);
	}
}

/* the uplink diagnoses (np_uplinks) and their names in list */
static void write_uplinks(struct np_ctx *c, json_t *list)
{
	const struct job_groups *gr = c->groups;

	for (int g = 0; c->up && g < gr->ngroups; g++) {
		const struct np_uplink *u = &c->up[g];
		json_t *hs = json_array(), *rec;
		char text[600], range[300];

		if (u->verdict == NP_OK)
			continue;
		for (int x = 0; x < gr->n; x++)
			if (gr->group_of[x] == g)
				json_array_append_new(hs, json_string(c->mpi->hosts[x]));
		hosts_text(c, g, range, sizeof(range));
		snprintf(text, sizeof(text), u->verdict == NP_BAD ?
			 "switch uplink %s (%s): %.3g Gb/s across (%d links, every one slow), %.3g Gb/s "
			 "inside (%d links, none slow)" :
			 "switch uplink %s (%s) or of the group(s) it crosses to: %.3g Gb/s across (%d links, "
			 "every one slow), %.3g Gb/s inside (%d links); no healthy group to tell them apart",
			 gr->names[g], range, 8 * u->across_GBps, u->across, 8 * u->inside_GBps, u->inside);
		rec = diag_record("uplink", np_verdict_name(u->verdict));
		json_object_set_new(rec, "group", json_string(gr->names[g]));
		json_object_set_new(rec, "spine", gr->spines[g] ? json_string(gr->spines[g]) : json_null());
		json_object_set_new(rec, "hosts", hs);
		json_object_set_new(rec, "across_Gbps", json_real(8 * u->across_GBps));
		json_object_set_new(rec, "inside_Gbps", json_real(8 * u->inside_GBps));
		json_object_set_new(rec, "across_ratio", json_real(u->across_ratio));
		json_object_set_new(rec, "inside_ratio", json_real(u->inside_ratio));
		json_object_set_new(rec, "links_across", json_integer(u->across));
		json_object_set_new(rec, "links_inside", json_integer(u->inside));
		json_object_set_new(rec, "evidence", json_pack("{s:s}", "summary", text));
		run_record(c->run, "diagnosis", rec);
		json_array_append_new(list, json_string(gr->names[g]));
	}
}

static void write_diagnosis(struct np_ctx *c)
{
	const struct np_diag *d = c->diag;
	char **hosts = c->mpi->hosts;
	json_t *bad_nodes = json_array(), *bad_links = json_array(), *suspect = json_array();
	json_t *amb_nodes = json_array(), *amb_links = json_array(), *bad_uplinks = json_array(), *rec;
	json_t *inc_nodes = json_array(), *inc_links = json_array();
	const char *verdict;

	for (int x = 0; x < d->n; x++) {
		const struct np_node *nd = &d->node[x];
		json_t *rt = json_array(), *ev;
		char text[512];

		for (int k = 0; k < nd->npartners; k++)
			json_array_append_new(rt, json_pack("{s:s, s:i, s:o, s:b}",
				"partner", hosts[nd->partner[k]], "partner_node", nd->partner[k],
				"ratio", ratios_json(&nd->pr[k]), "pass", !nd->pr[k].flags));
		if (!nd->suspect)
			snprintf(text, sizeof(text), "all %d links within tolerance", nd->links);
		else if (nd->verdict == NP_INCONCLUSIVE)
			snprintf(text, sizeof(text), "%d of %d retests against known-good partners failed, "
				 "the best at %.3f of the reference, the lowest %.3f: %s", nd->fails,
				 nd->npartners, nd->best, nd->lo, np_why_text(nd->why));
		else if (!nd->npartners)
			snprintf(text, sizeof(text), "%d of %d links out of tolerance; no known-good "
				 "partner to retest against", nd->links - nd->good_links, nd->links);
		else
			snprintf(text, sizeof(text), "%d of %d links out of tolerance; %d of %d "
				 "retests against known-good partners failed",
				 nd->links - nd->good_links, nd->links, nd->fails, nd->npartners);
		ev = json_pack("{s:s, s:i, s:i, s:b, s:o}", "summary", text, "links", nd->links,
			       "links_out_of_tolerance", nd->links - nd->good_links,
			       "known_good", nd->known_good, "retests", rt);
		if (nd->npartners) {
			/* every reading of its retests counts (pass 1 too): the best, and the lowest */
			json_object_set_new(ev, "best_ratio", json_real(nd->best));
			json_object_set_new(ev, "lowest_ratio", json_real(nd->lo));
		}
		if (nd->verdict == NP_INCONCLUSIVE)
			json_object_set_new(ev, "reason", json_string(np_why_text(nd->why)));
		rec = diag_record("node", np_verdict_name(nd->verdict));
		json_object_set_new(rec, "host", json_string(hosts[x]));
		json_object_set_new(rec, "node", json_integer(x));
		json_object_set_new(rec, "ratio_bw", json_real(nd->ratio));
		json_object_set_new(rec, "ratio_lat", json_real(nd->lat_ratio));
		json_object_set_new(rec, "evidence", ev);
		run_record(c->run, "diagnosis", rec);
		if (nd->verdict == NP_BAD)
			json_array_append_new(bad_nodes, json_string(hosts[x]));
		else if (nd->verdict == NP_SUSPECT)
			json_array_append_new(suspect, json_string(hosts[x]));
		else if (nd->verdict == NP_AMBIGUOUS)
			json_array_append_new(amb_nodes, json_string(hosts[x]));
		else if (nd->verdict == NP_INCONCLUSIVE)
			json_array_append_new(inc_nodes, json_string(hosts[x]));
	}
	for (int a = 0; a < d->n; a++)
		for (int b = a + 1; b < d->n; b++) {
			const struct np_link *l = np_diag_link(d, a, b);

			if (d->sampled && !l->measured)
				continue;   /* not in the grouped schedule's plan */
			rec = diag_record("link", np_verdict_name(l->verdict));
			json_object_set_new(rec, "a", json_string(hosts[a]));
			json_object_set_new(rec, "b", json_string(hosts[b]));
			json_object_set_new(rec, "a_node", json_integer(a));
			json_object_set_new(rec, "b_node", json_integer(b));
			json_object_set_new(rec, "ratio", ratios_json(&l->r));
			json_object_set_new(rec, "bw_ab_GBps", json_real(l->m.bw_ab));
			json_object_set_new(rec, "bw_ba_GBps", json_real(l->m.bw_ba));
			json_object_set_new(rec, "bidir_GBps", json_real(l->m.bidir));
			json_object_set_new(rec, "lat_us", json_real(l->m.lat_us));
			json_object_set_new(rec, "retest", l->retested ? ratios_json(&l->rr) :
					    json_null());
			if (l->retested)
				json_object_set_new(rec, "retest_lowest_bw", json_real(d->ref_uni > 0 ?
						    l->lo / d->ref_uni : 0));
			if (l->verdict == NP_INCONCLUSIVE)
				json_object_set_new(rec, "reason", json_string(np_why_text(l->why)));
			if (l->verdict == NP_EXPLAINED && l->uplink)
				json_object_set_new(rec, "by_uplink",
						    json_string(c->groups->names[l->uplink - 1]));
			else if (l->verdict == NP_EXPLAINED)
				json_object_set_new(rec, "by", l->by >= 0 ?
					json_pack("[s]", hosts[l->by]) :
					json_pack("[s, s]", hosts[a], hosts[b]));
			run_record(c->run, "diagnosis", rec);
			if (l->verdict == NP_BAD)
				json_array_append_new(bad_links, json_pack("[s, s]", hosts[a], hosts[b]));
			else if (l->verdict == NP_AMBIGUOUS)
				json_array_append_new(amb_links, json_pack("[s, s]", hosts[a], hosts[b]));
			else if (l->verdict == NP_INCONCLUSIVE)
				json_array_append_new(inc_links, json_pack("[s, s]", hosts[a], hosts[b]));
		}
	write_uplinks(c, bad_uplinks);
	verdict = d->bad_nodes || d->bad_links || d->bad_uplinks || d->ambiguous_uplinks ? "fail" :
		  d->suspect_nodes || d->ambiguous_nodes || d->ambiguous_links || d->inconclusive_nodes ||
		  d->inconclusive_links || d->collapsed ? "inconclusive" : "pass";
	rec = diag_record("summary", verdict);
	json_object_set_new(rec, "nodes", json_integer(d->n));
	json_object_set_new(rec, "bad_nodes", bad_nodes);
	json_object_set_new(rec, "bad_links", bad_links);
	json_object_set_new(rec, "suspect_nodes", suspect);
	json_object_set_new(rec, "ambiguous_nodes", amb_nodes);
	json_object_set_new(rec, "ambiguous_links", amb_links);
	json_object_set_new(rec, "uplinks", bad_uplinks);
	json_object_set_new(rec, "schedule", json_string(c->grouped ? "grouped" : "all-pairs"));
	json_object_set_new(rec, "schedule_why", json_string(c->why));
	json_object_set_new(rec, "groups", json_integer(c->groups->ngroups));
	json_object_set_new(rec, "topology", json_string(c->groups->source));
	json_object_set_new(rec, "inconclusive_nodes", inc_nodes);
	json_object_set_new(rec, "inconclusive_links", inc_links);
	/* the run's own noise: what a blamed node or link had to stand out against */
	json_object_set_new(rec, "noise_floor", d->noise_floor > 0 ? json_real(d->noise_floor) : json_null());
	json_object_set_new(rec, "ref_of_rate", d->ref_of_rate > 0 ? json_real(d->ref_of_rate) : json_null());
	json_object_set_new(rec, "collapsed", json_boolean(d->collapsed));
	json_object_set_new(rec, "suspect_links_pass1", json_integer(d->suspect_links));
	json_object_set_new(rec, "transient_links", json_integer(d->transient_links));
	json_object_set_new(rec, "ref_bw_GBps", json_real(d->ref_uni));
	json_object_set_new(rec, "ref_bw_Gbps", json_real(d->ref_uni * 8.0));
	json_object_set_new(rec, "ref_bidir_GBps", json_real(d->ref_bidir));
	json_object_set_new(rec, "ref_lat_us", json_real(d->ref_lat));
	json_object_set_new(rec, "ref_method", json_string(d->ref_expected ? "expected" :
							  "median healthy link"));
	json_object_set_new(rec, "tol", json_real(d->opt.tol));
	json_object_set_new(rec, "lat_tol", json_real(d->opt.lat_tol));
	json_object_set_new(rec, "retest_pairs", json_pack("[i, i]", d->retests[0], d->retests[1]));
	json_object_set_new(rec, "rounds", json_pack("[i, i, i]", c->pass_rounds[0],
						     c->pass_rounds[1], c->pass_rounds[2]));
	json_object_set_new(rec, "note", d->note ? json_string(d->note) : json_null());
	run_record(c->run, "diagnosis", rec);
}

static void print_matrix(struct np_ctx *c)
{
	const struct np_diag *d = c->diag;
	char **hosts = c->mpi->hosts;

	int at_once = c->cap && c->cap < d->n / 2 ? c->cap : d->n / 2;
	char sz[32];

	printf("netpair: %d nodes, %d rounds of up to %d pair%s at once, %s messages, %s schedule "
	       "(%s); one-way Gb/s (row -> column)\n", d->n, c->pass_rounds[0], at_once,
	       at_once == 1 ? "" : "s", size_human((double)p_bw_size, sz, sizeof(sz)),
	       c->grouped ? "grouped" : "all-pairs", c->why);
	printf("%-10s", "");
	for (int b = 0; b < d->n; b++)
		printf(" %9.9s", hosts[b]);
	printf("\n");
	for (int a = 0; a < d->n; a++) {
		printf("%-10.10s", hosts[a]);
		for (int b = 0; b < d->n; b++) {
			const struct np_link *l = np_diag_link(d, a, b);

			if (!l || (d->sampled && !l->measured))
				printf(" %9s", "-");
			else
				printf(" %9.3f", 8.0 * (a < b ? l->m.bw_ab : l->m.bw_ba));
		}
		printf("\n");
	}
	fflush(stdout);
}

static void print_flagged(struct np_ctx *c)
{
	const struct np_diag *d = c->diag;
	char **hosts = c->mpi->hosts;
	int any = 0;

	printf("netpair: reference %.3f Gb/s one-way, %.3f Gb/s both ways, %.1f us (%s)\n",
	       d->ref_uni * 8.0, d->ref_bidir * 8.0, d->ref_lat,
	       d->ref_expected ? "expected" : "median healthy link");
	printf("netpair: suspect below %.2f of one-way", d->opt.tol);
	if (d->opt.bidir_tol > 0)
		printf(", below %.2f of both ways", d->opt.bidir_tol);
	if (d->opt.lat_tol > 0)
		printf(", above %.1fx latency", d->opt.lat_tol);
	printf("%s\n", d->opt.bidir_tol > 0 ? "" : " (both ways recorded, not judged)");
	if (d->noise_floor > 0)
		printf("netpair: noise: a healthy pair read %.2f of the reference once; only what stands "
		       "out below that is blamed\n", d->noise_floor);
	if (d->collapsed)
		printf("netpair: the reference is %.2f of the links' rate: the run was slowed as a whole\n",
		       d->ref_of_rate);
	for (int x = 0; x < d->n; x++) {
		const struct np_node *nd = &d->node[x];

		if (nd->verdict == NP_OK)
			continue;
		any = 1;
		printf("netpair: node %s %s: %d of %d links out of tolerance (median ratio %.2f), "
		       "%d of %d retests failed%s%s\n", hosts[x], np_verdict_name(nd->verdict),
		       nd->links - nd->good_links, nd->links, nd->ratio, nd->fails, nd->npartners,
		       nd->why ? ": " : "", np_why_text(nd->why));
	}
	for (int a = 0; a < d->n; a++)
		for (int b = a + 1; b < d->n; b++) {
			const struct np_link *l = np_diag_link(d, a, b);

			if (l->verdict == NP_OK)
				continue;
			any = 1;
			printf("netpair: link %s-%s %s (bw ratio %.2f, bidir %.2f, latency x%.2f)%s%s%s%s%s\n",
			       hosts[a], hosts[b], np_verdict_name(l->verdict), l->r.uni, l->r.bidir,
			       l->r.lat, l->verdict == NP_EXPLAINED ? " by " : "",
			       l->verdict != NP_EXPLAINED ? "" : l->uplink ? "the uplink of " : "",
			       l->verdict != NP_EXPLAINED ? "" :
			       l->uplink ? c->groups->names[l->uplink - 1] :
			       l->by >= 0 ? hosts[l->by] : "both nodes",
			       l->why ? ": " : "", np_why_text(l->why));
		}
	for (int g = 0; c->up && g < c->groups->ngroups; g++) {
		const struct np_uplink *u = &c->up[g];

		if (u->verdict == NP_OK)
			continue;
		any = 1;
		printf("netpair: switch uplink %s %s: %.3g Gb/s across (%d links), %.3g Gb/s inside "
		       "(%d links)\n", c->groups->names[g], np_verdict_name(u->verdict),
		       8 * u->across_GBps, u->across, 8 * u->inside_GBps, u->inside);
	}
	if (!any)
		printf("netpair: nothing flagged\n");
	if (d->note)
		printf("netpair: note: %s\n", d->note);
	fflush(stdout);
}

/* ------------------------------------------------------------------ the probe */

/* the results header: the job's groups ("topology") and the pair schedule ("pair_schedule") */
static void netpair_header(const struct cc_options *o, const struct mpictx *mpi, json_t *rec)
{
	job_groups_header(o, mpi, rec, 1);
}

static int check_params(char *err, size_t len)
{
	if (p_bw_size < 1 || p_bw_size > ((size_t)1 << 30) || p_lat_size > ((size_t)1 << 30))
		snprintf(err, len, "--pair-bw-size must be 1 B to 1 GiB and --pair-lat-size at most 1 GiB");
	else if (p_lat_size > p_bw_size)
		snprintf(err, len, "--pair-lat-size must not exceed --pair-bw-size");
	else if (p_window < 1 || p_window > 1024)
		snprintf(err, len, "--pair-window must be 1 to 1024");
	else if ((double)p_window * (double)p_bw_size > 4.0 * (1 << 30))
		snprintf(err, len, "--pair-window x --pair-bw-size must stay within 4 GiB of receive slots");
	else if (p_iters < 1)
		snprintf(err, len, "--pair-iters must be at least 1");
	else if (!(p_time > 0))
		snprintf(err, len, "--pair-time must be above 0 seconds");
	else if (p_tol != TOL_AUTO && !(p_tol > 0 && p_tol <= 1))
		snprintf(err, len, "--pair-tol must be above 0 and at most 1");
	else if (p_bidir_tol > 1)
		snprintf(err, len, "--pair-bidir-tol must be 0 (off) to 1");
	else if (p_lat_tol != -1.0 && p_lat_tol != 0 && p_lat_tol < 1)
		snprintf(err, len, "--pair-lat-tol must be 0 (off) or at least 1");
	else if (p_partners < 1 || p_partners > NP_MAX_PARTNERS)
		snprintf(err, len, "--pair-partners must be 1 to %d", NP_MAX_PARTNERS);
	else if (strcmp(p_poll, "auto") && strcmp(p_poll, "busy") && strcmp(p_poll, "lazy"))
		snprintf(err, len, "--pair-poll must be auto, busy or lazy");
	else if (p_retest > 1)
		snprintf(err, len, "--pair-retest takes 0 or 1");
	else if (!(p_link_rate >= 0) || !isfinite(p_link_rate))
		snprintf(err, len, "--pair-link-rate must be a number of Mb/s, 0 (not given) or more");
	else if (p_confirm < 1 || p_confirm > NP_MAX_CONFIRM)
		snprintf(err, len, "--pair-confirm must be 1 to %d", NP_MAX_CONFIRM);
	else
		return 0;
	return -1;
}

/*
 * How to measure, decided on the leaders and sent to every rank: lazy
 * (nap while waiting, see xwait) and cap (most pairs at once, 0 = whole
 * rounds). Both matter only when several nodes share one kernel (the same
 * boot_id), as the network namespaces of an emulated cluster do: there every
 * packet of every pair is forwarded by the same CPUs, so pairs measured at
 * once measure their share of the CPU instead of their link. auto then caps
 * the pairs at once to one per two cores, and naps when more leaders than
 * cores share the kernel. On real nodes nothing changes.
 */
static int choose_mode(struct np_ctx *c, int mode[3])
{
	char id[64] = "", *all;
	FILE *f;
	int same = 0, mine[3], red[3];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (f) {
		if (!fgets(id, sizeof(id), f))
			id[0] = '\0';
		fclose(f);
	}
	id[strcspn(id, "\n")] = '\0';
	all = calloc((size_t)c->nnodes, sizeof(id));
	if (!all)
		return -1;
	MPI_Allgather(id, sizeof(id), MPI_CHAR, all, sizeof(id), MPI_CHAR, c->comm);
	for (int i = 0; i < c->nnodes; i++)
		same += id[0] && !strcmp(all + (size_t)i * sizeof(id), id);
	free(all);
	if (ncpu < 1)
		ncpu = 1;
	mine[0] = same > ncpu;                                  /* max over leaders */
	mine[1] = same > 1 ? -(int)(ncpu / 2 > 1 ? ncpu / 2 : 1) : -(1 << 30);  /* min cap, negated */
	mine[2] = same > 1;
	MPI_Allreduce(mine, red, 3, MPI_INT, MPI_MAX, c->comm);
	mode[0] = !strcmp(p_poll, "auto") ? red[0] : !strcmp(p_poll, "lazy");
	mode[1] = p_concurrency ? p_concurrency : red[1] == -(1 << 30) ? 0 : -red[1];
	mode[2] = red[2];
	return 0;
}

/*
 * Every leader finds its node's link rate (probes/linkrate.h); rank 0 keeps
 * them all. Collective over the leaders.
 */
static int gather_rates(struct np_ctx *c)
{
	struct link_rate lr;

	linkrate_local(p_link_rate, &lr);
	if (lr.warning[0])
		log_warn("netpair: %s", lr.warning);
	if (lr.mbit > 0)
		log_debug("netpair: link rate %.0f Mb/s (%s)", lr.mbit, lr.source);
	else if (lr.why[0])
		log_warn("netpair: link rate unknown, no pct_of_rate: %s", lr.why);
	/* rank 0 leads node 0, so it is rank 0 of the leaders too */
	return MPI_Gather(&lr.mbit, 1, MPI_DOUBLE, c->rate_mbit, 1, MPI_DOUBLE, 0, c->comm) ==
	       MPI_SUCCESS ? 0 : -1;
}

/*
 * The pass-1 plan on every rank (collective, through probes/groups.h): the
 * tournament or the grouped schedule as --pair-schedule and the groups
 * decide; pairs[2k] -> pairs[2k+1] in round round_of[k] (malloc'd, *np
 * pairs), not yet split to c->cap pairs at once. Returns the number of
 * rounds, or -1 with err (the groups cannot be had, memory).
 */
static int pair_plan(struct np_ctx *c, int **pairs, int **round_of, int *np, char *err,
		     size_t len)
{
	int rounds = job_pair_plan(c->run->opt, c->mpi, pairs, round_of, np, &c->grouped,
				   &c->within, &c->why, err, len);

	if (rounds >= 0 && !(c->groups = job_groups(c->run->opt, c->mpi, err, len)))
		rounds = -1;
	return rounds;
}

/*
 * What the matrix and the soak share, on every rank (collective over the
 * world): the leaders' communicator and buffers, rank 0's gather rows and
 * link rates, how to wait (lazy) and how many pairs at once (cap), decided
 * on the leaders; ok is this rank's own readiness (rank 0's other
 * allocations). Returns 0, or -1 when some rank failed (logged there).
 * np_close releases what it made, also after a failure.
 */
static int np_open(struct np_ctx *c, int ok, int mode[3], int *slack)
{
	struct mpictx *mpi = c->mpi;
	int allok;

	*slack = -1;
	c->leader = mpi->leaders != MPI_COMM_NULL;
	if (c->leader) {
		int lr = -1;

		if (MPI_Comm_dup(mpi->leaders, &c->comm) != MPI_SUCCESS ||
		    MPI_Comm_rank(c->comm, &lr) != MPI_SUCCESS || lr != mpi->node) {
			log_error("netpair: leaders communicator rank %d is not node %d", lr, mpi->node);
			ok = 0;
		}
		c->sbuf = malloc(p_bw_size);
		c->rbuf = malloc((size_t)p_window * p_bw_size);
		c->lat = malloc((size_t)p_iters * sizeof(double));
		if (!c->sbuf || !c->rbuf || !c->lat) {
			log_error("netpair: cannot allocate %zu bytes of buffers",
				  ((size_t)p_window + 1) * p_bw_size);
			ok = 0;
		} else {
			memset(c->sbuf, 0, p_bw_size);
			memset(c->rbuf, 0, (size_t)p_window * p_bw_size);
		}
	}
	if (mpi->rank == 0) {
		c->all = calloc((size_t)c->nnodes * R_NV, sizeof(double));
		c->rate_mbit = calloc((size_t)c->nnodes, sizeof(double));
		if (!c->all || !c->rate_mbit) {
			log_error("netpair: out of memory for %d nodes", c->nnodes);
			ok = 0;
		}
	}
	/* collective over the leaders: called whether or not this one is ok */
	if (c->leader && c->comm != MPI_COMM_NULL && choose_mode(c, mode))
		ok = 0;
	MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, mpi->world);
	if (allok && mpictx_nap_bcast(mode, 3, MPI_INT, mpi->world))
		allok = 0;
	c->lazy = mode[0];
	c->cap = mode[1];
	/* rates unknown on an MPI error: records just lack them */
	if (allok && c->leader && gather_rates(c))
		log_warn("netpair: cannot gather the nodes' link rates");
	if (allok && c->lazy) {
		/* naps of 50 us, not 50 us plus the default 50 us of timer slack */
		*slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
		prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	}
	if (allok && mpi->rank == 0 && (c->lazy || c->cap))
		log_info("netpair: %s%s%d pair(s) at a time", c->lazy ? "waiting with naps; " : "",
			 c->cap ? "" : "whole rounds, ", c->cap ? c->cap : c->nnodes / 2);
	return allok ? 0 : -1;
}

static void np_close(struct np_ctx *c, int slack)
{
	if (c->comm != MPI_COMM_NULL)
		MPI_Comm_free(&c->comm);
	if (slack > 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
	free(c->all);
	free(c->rate_mbit);
	free(c->sbuf);
	free(c->rbuf);
	free(c->lat);
}

/* A one-node job: a skip record, the same for the matrix and the soak. */
static int too_few_nodes(struct cc_run *run, const char *kind)
{
	char err[256];

	if (run->mpi->nnodes >= 2)
		return 0;
	snprintf(err, sizeof(err), "needs at least 2 nodes (hosts); this job has %d",
		 run->mpi->nnodes);
	run_skip(run, kind, "netpair", err);
	return 1;
}

/* rank 0: the median of the nodes' link rates in GB/s, 0 when one is unknown */
static double median_rate_GBps(const struct np_ctx *c)
{
	for (int i = 0; i < c->nnodes; i++)
		if (!(c->rate_mbit[i] > 0))
			return 0;
	return stats_median(c->rate_mbit, (size_t)c->nnodes) / 8000.0;
}

static int netpair_run(struct cc_run *run)
{
	struct mpictx *mpi = run->mpi;
	struct np_ctx c = { .run = run, .mpi = mpi, .comm = MPI_COMM_NULL, .nnodes = mpi->nnodes,
			    .step_s = p_time };
	struct np_opts opt = { .tol = TOL_NODES, .bidir_tol = TOL_NODES, .lat_tol = 3.0,
			       .expect_GBps = p_expect_gbps / 8.0, .partners = p_partners,
			       .confirm = p_confirm };
	struct np_diag d = { 0 };
	struct np_meas *m = NULL;
	int *pairs = NULL, *round_of = NULL, rc = CC_EXIT_OK, ok = 1, slack = -1, np = 0, nrounds;
	int mode[3] = { 0, 0, 0 };
	double t0 = timer_now();
	char err[300] = "";

	if (too_few_nodes(run, "probe"))
		return CC_EXIT_OK;
	/* the same plan on every rank; a topology that does not fit the job fails it everywhere */
	nrounds = pair_plan(&c, &pairs, &round_of, &np, err, sizeof(err));
	if (nrounds < 0)
		ok = 0;
	if (ok && mpi->rank == 0) {
		m = calloc((size_t)np, sizeof(*m));
		if (!m || np_diag_init(&d, c.nnodes, &opt)) {
			log_error("netpair: out of memory for %d nodes", c.nnodes);
			ok = 0;
		}
		c.diag = &d;
		d.sampled = c.grouped;
		d.group = c.groups->given ? c.groups->group_of : NULL;
		if (c.groups->given && c.groups->ngroups >= 2 &&
		    !(c.up = calloc((size_t)c.groups->ngroups, sizeof(*c.up)))) {
			log_error("netpair: out of memory for %d groups", c.groups->ngroups);
			ok = 0;
		}
	}
	if (np_open(&c, ok, mode, &slack)) {
		run_error(run, "probe", "netpair", err[0] ? err : "setup failed on some rank (see its log)");
		rc = CC_EXIT_RUNTIME;
		goto out;
	}
	nrounds = schedule_cap(round_of, np, nrounds, c.cap);
	/*
	 * Both ways at once on nodes that share a kernel is bounded by its CPU,
	 * not by the links (measured on 2 cores: 0.45-0.6 of twice the rate,
	 * +-20% between links): recorded, but judged only when asked for.
	 */
	if (mpi->rank == 0) {
		/*
		 * The same CPUs forward every packet there, so a busy machine (another
		 * job, the other pairs' softirqs) slows healthy links: measured on 2
		 * cores with a busy loop per core, single healthy readings down to 0.3
		 * of the reference, best of three retests above 0.6. A fault worth a
		 * blame there is a link at 0.1 (100mbit of 1gbit): 0.5 parts the two.
		 */
		d.opt.tol = p_tol != TOL_AUTO ? p_tol : mode[2] ? TOL_SHARED : TOL_NODES;
		d.opt.bidir_tol = p_bidir_tol >= 0 ? p_bidir_tol : mode[2] ? 0.0 : d.opt.tol;
		/*
		 * Latency there is the scheduler's: with a busy loop per core even the
		 * fastest of 1000 round trips read 3-40x the idle one on healthy links.
		 * Recorded, judged only when asked for.
		 */
		d.opt.lat_tol = p_lat_tol >= 0 ? p_lat_tol : mode[2] ? 0.0 : 3.0;
		/* the links' rate, when every node knows its own: a reference far below it marks a
		 * run slowed as a whole, whose faults must stand out against its noise */
		d.opt.rate_GBps = median_rate_GBps(&c);
		log_info("netpair: %d nodes, %zu B bandwidth, %zu B latency messages",
			 c.nnodes, p_bw_size, p_lat_size);
	}
	if (mpi->rank == 0)
		log_info("netpair: %s schedule (%s): %d pairs in %d rounds", c.grouped ? "grouped" :
			 "all-pairs", c.why, np, nrounds);
	if (nrounds < 0 || run_plan(&c, 0, pairs, np, round_of, nrounds, m))
		rc = CC_EXIT_RUNTIME;
	/*
	 * Rank 0 always ends with the "no more retests" message and the others
	 * always wait for it, so a failure on one rank cannot leave the rest in
	 * a collective of another shape.
	 */
	if (mpi->rank == 0) {
		int hdr[2] = { -1, 0 }, drc = -1;

		for (int i = 0; !rc && i < np; i++)
			np_diag_set(&d, pairs[2 * i], pairs[2 * i + 1], &m[i]);
		if (!rc && !run->opt->quiet)
			print_matrix(&c);
		if (!rc)
			drc = np_diagnose(&d, p_retest ? retest_cb : NULL, &c);
		/* with leaf switches for groups: what the links say of their uplinks */
		if (!drc && c.up && np_uplinks(&d, c.groups->group_of, c.groups->ngroups, c.up) < 0)
			drc = -1;
		mpictx_nap_bcast(hdr, 2, MPI_INT, mpi->world);
		if (rc) {
			run_error(run, "probe", "netpair", "the all-pairs pass failed (see the log)");
		} else if (drc) {
			run_error(run, "probe", "netpair",
				  "the diagnosis failed (out of memory or a retest failed)");
			rc = CC_EXIT_RUNTIME;
		} else {
			write_diagnosis(&c);
			if (!run->opt->quiet)
				print_flagged(&c);
			if (d.bad_nodes || d.bad_links || d.bad_uplinks || d.ambiguous_uplinks)
				rc = CC_EXIT_FAIL;
		}
		if (c.failed && rc < CC_EXIT_FAIL)
			rc = CC_EXIT_FAIL;
		log_info("netpair: done in %.1f s", timer_now() - t0);
	} else {
		/* follow rank 0's retests until it says they are over (1) */
		while (run_broadcast_plan(&c, 0, NULL, 0, NULL) == 0)
			;
	}
out:
	/* every rank returns rank 0's answer */
	if (mpictx_nap_bcast(&rc, 1, MPI_INT, mpi->world))
		rc = CC_EXIT_RUNTIME;
	np_close(&c, slack);
	np_diag_free(&d);
	free(pairs);
	free(round_of);
	free(m);
	free(c.up);
	return rc;
}

/* ------------------------------------------------------------------ soak */

/*
 * One soak round on a leader: a -> b, then b -> a, each a bandwidth step of
 * --soak-interval with a barrier of all leaders before it (every pair of the
 * round does the same step at once), each checked by its receiver. An idle
 * leader only takes part in the barriers.
 */
static int soak_round(struct np_ctx *c, int peer, int is_a, double *res)
{
	int me = c->mpi->node;

	for (int i = 0; i < R_NV; i++)
		res[i] = 0.0;
	res[R_PARTNER] = peer;
	if (peer >= 0)
		watchdog_fault_point(c->mpi->rank, p_bw_size);
	for (int step = 1; step < 3; step++) {
		if (mpictx_nap_barrier(c->comm))
			return -1;
		if (peer >= 0)
			step_uni(c, peer, step == 1 ? is_a : !is_a, me, step, res);
	}
	return 0;
}

/* Rank 0: one soak record, src -> dst, from src's gathered row. */
static void write_soak(struct np_ctx *c, int sweep, int round, int src, int dst, double start_s)
{
	const double *S = c->all + (size_t)src * R_NV;
	int a = src < dst ? src : dst, b = src < dst ? dst : src;
	char element[520];
	json_t *rec;

	snprintf(element, sizeof(element), "%s-%s", c->mpi->hosts[a], c->mpi->hosts[b]);
	rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:I, s:i, s:i, s:i, s:f}",
			"kind", "soak", "name", "netpair", "test", "bw_uni", "scope", "link",
			"element", element, "host", c->mpi->hosts[a], "peer", c->mpi->hosts[b],
			"src", c->mpi->hosts[src], "dst", c->mpi->hosts[dst], "src_node", src,
			"dst_node", dst, "bytes", (json_int_t)p_bw_size, "interval", sweep,
			"sweep", sweep, "round", round, "start_s", start_s);
	add_bw(rec, S[R_BW], S[R_WINDOW], S[R_WINDOWS], S[R_TIME]);
	add_rate(c, rec, a, b, S[R_BW], 0);
	run_record(c->run, "measurement", rec);
}

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* Rank 0, not -q: one line per sweep, its slowest sample and the median. */
static void print_sweep(struct np_ctx *c, int sweep, double t, const double *v, const int *who,
			int n)
{
	double *s = malloc((size_t)(n ? n : 1) * sizeof(*s));
	int lo = 0;

	if (!s || !n) {
		free(s);
		return;
	}
	for (int i = 0; i < n; i++) {
		s[i] = v[i];
		if (v[i] < v[lo])
			lo = i;
	}
	qsort(s, (size_t)n, sizeof(*s), cmp_dbl);
	printf("netpair soak: sweep %d at %.1f s: %d samples, median %.3f Gb/s, slowest %.3f Gb/s "
	       "(%s -> %s)\n", sweep, t, n, 8 * (n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2),
	       8 * v[lo], c->mpi->hosts[who[2 * lo]], c->mpi->hosts[who[2 * lo + 1]]);
	fflush(stdout);
	free(s);
}

/*
 * --soak: the tournament repeated for --soak seconds, each pair measured one
 * way and the other for --soak-interval each (warm-up untimed), so every
 * link gets one sample per direction per sweep, spread over the whole soak.
 * Sweeps are whole: the soak ends with the sweep during which the duration
 * passes. Records stream as each round ends; ccreport judges the series.
 */
static int netpair_soak(struct cc_run *run)
{
	struct mpictx *mpi = run->mpi;
	const struct cc_options *o = run->opt;
	struct np_ctx c = { .run = run, .mpi = mpi, .comm = MPI_COMM_NULL, .nnodes = mpi->nnodes,
			    .step_s = o->soak_interval };
	int *pairs = NULL, *round_of = NULL, *who = NULL, rc = CC_EXIT_OK, slack = -1;
	int mode[3] = { 0, 0, 0 }, np = 0, nrounds = -1, sweep = 0;
	int stop = 0, nv = 0, ok;
	double *v = NULL, t0;
	char err[300] = "";

	if (too_few_nodes(run, "soak"))
		return CC_EXIT_OK;
	/* every rank plans the same sweep (the matrix's schedule); rank 0 keeps one sweep's samples */
	nrounds = pair_plan(&c, &pairs, &round_of, &np, err, sizeof(err));
	if (np_open(&c, nrounds >= 0, mode, &slack)) {
		run_error(run, "soak", "netpair", err[0] ? err : "setup failed on some rank (see its log)");
		rc = CC_EXIT_RUNTIME;
		goto out;
	}
	nrounds = schedule_cap(round_of, np, nrounds, c.cap);
	ok = nrounds >= 0;
	if (mpi->rank == 0) {
		v = malloc((size_t)np * 2 * sizeof(*v));
		who = malloc((size_t)np * 4 * sizeof(*who));
		ok = ok && v && who;
	}
	if (!ok)
		log_error("netpair: out of memory for the soak of %d nodes", c.nnodes);
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, mpi->world);
	if (!ok) {
		run_error(run, "soak", "netpair", "out of memory on some rank (see its log)");
		rc = CC_EXIT_RUNTIME;
		goto out;
	}
	if (mpi->rank == 0)
		log_info("netpair: soak of %g s, %d round(s) of %g s steps per sweep", o->soak_s,
			 nrounds, o->soak_interval);
	MPI_Barrier(mpi->world);
	t0 = timer_now();
	while (!stop) {
		for (int r = 0; r < nrounds; r++) {
			int peer = -1, is_a = 0;
			double res[R_NV], start = timer_now() - t0;
			char what[96];
			json_t *detail = NULL;

			for (int i = 0; i < np; i++)
				if (round_of[i] == r &&
				    (pairs[2 * i] == mpi->node || pairs[2 * i + 1] == mpi->node)) {
					is_a = pairs[2 * i] == mpi->node;
					peer = is_a ? pairs[2 * i + 1] : pairs[2 * i];
				}
			snprintf(what, sizeof(what), "netpair soak sweep %d round %d", sweep, r);
			if (mpi->rank == 0)
				detail = json_pack("{s:s, s:s, s:s, s:i, s:i, s:o}", "kind", "probe",
						   "probe", "netpair", "stage", "soak", "sweep", sweep,
						   "round", r, "pairs", round_pairs(mpi, pairs, round_of, np, r));
			watchdog_arm(what, detail);
			if (c.leader) {
				MPI_Request req;

				if (soak_round(&c, peer, is_a, res) ||
				    MPI_Igather(res, R_NV, MPI_DOUBLE, c.all, R_NV, MPI_DOUBLE, 0,
						c.comm, &req) != MPI_SUCCESS || mpictx_nap_wait(&req)) {
					log_error("netpair soak sweep %d round %d failed", sweep, r);
					watchdog_abort(CC_EXIT_RUNTIME);
				}
			}
			watchdog_disarm();
			if (mpi->rank != 0)
				continue;
			for (int i = 0; i < np; i++) {
				int a = pairs[2 * i], b = pairs[2 * i + 1];
				double wrong;

				if (round_of[i] != r)
					continue;
				write_soak(&c, sweep, r, a, b, start);
				write_soak(&c, sweep, r, b, a, start);
				v[nv] = c.all[(size_t)a * R_NV + R_BW];
				who[2 * nv] = a;
				who[2 * nv++ + 1] = b;
				v[nv] = c.all[(size_t)b * R_NV + R_BW];
				who[2 * nv] = b;
				who[2 * nv++ + 1] = a;
				wrong = c.all[(size_t)a * R_NV + R_WRONG] + c.all[(size_t)b * R_NV + R_WRONG];
				if (wrong > 0) {
					char msg[256];

					snprintf(msg, sizeof(msg), "wrong data between '%s' and '%s' in soak "
						 "sweep %d: %.0f bytes differ", mpi->hosts[a], mpi->hosts[b],
						 sweep, wrong);
					run_error(run, "soak", "netpair", msg);
					c.failed = 1;
				}
			}
		}
		/* rank 0 decides, at the end of a whole sweep, for everyone */
		if (mpi->rank == 0) {
			double t = timer_now() - t0;

			if (!o->quiet)
				print_sweep(&c, sweep, t, v, who, nv);
			nv = 0;
			/* never fewer sweeps than give every link the samples ccreport judges (a slow
			 * first sweep once ended a 1.5 s soak after one: 2 samples a link, not judged) */
			stop = t >= o->soak_s && sweep + 1 >= NP_SOAK_LEAST_SWEEPS;
		}
		sweep++;
		if (mpictx_nap_bcast(&stop, 1, MPI_INT, mpi->world))
			watchdog_abort(CC_EXIT_RUNTIME);
	}
	if (mpi->rank == 0)
		log_info("netpair: soak of %d sweep(s) in %.1f s", sweep, timer_now() - t0);
	rc = c.failed ? CC_EXIT_FAIL : CC_EXIT_OK;
out:
	if (mpictx_nap_bcast(&rc, 1, MPI_INT, mpi->world))
		rc = CC_EXIT_RUNTIME;
	np_close(&c, slack);
	free(pairs);
	free(round_of);
	free(v);
	free(who);
	return rc;
}

/*
 * The rounds and pairs of the plan's schedule on o->plan_nodes nodes: the
 * tournament, or the grouped schedule when --pair-schedule and --topology
 * (its first N hosts) say so (probes/groups.h: plan_pair_rounds).
 */
static void plan_shape(const struct cc_options *o, int *rounds, int *pairs)
{
	int n = o->plan_nodes, within, grouped;
	long np;

	*rounds = n % 2 ? n : n - 1;
	*pairs = n * (n - 1) / 2;
	if (n >= 2 && (*rounds = plan_pair_rounds(o, n, &within, &grouped, &np, NULL)) >= 0) {
		*pairs = (int)np;
		return;
	}
	*rounds = n % 2 ? n : n - 1;
}

/*
 * Per pair: a latency step (--pair-iters round trips, ~30 us each on TCP)
 * and three bandwidth steps (each way, both ways) of --pair-time or at least
 * one window of messages; rounds of N/2 pairs at once (the tournament's, or
 * the grouped schedule's), or --pair-concurrency pairs at once. Retests of
 * suspects are not counted: healthy hardware.
 */
static double netpair_estimate(const struct cc_options *o)
{
	int n = o->plan_nodes, pairs, rounds;
	double gbps = o->plan_gbps > 0 ? o->plan_gbps : 100, msg = p_bw_size * 8.0 / (gbps * 1e9);
	double bw = p_time > msg ? p_time : msg, step = 3 * (bw + p_warmup * msg) + p_iters * 30e-6;
	int at_once = p_concurrency ? p_concurrency : n / 2;

	if (n < 2)
		return 0;
	plan_shape(o, &rounds, &pairs);
	if (at_once < 1)
		at_once = 1;
	/* a round holds at most N/2 pairs; with a cap, pairs / cap steps */
	return (p_concurrency ? (double)(pairs + at_once - 1) / at_once : rounds) * (step + 0.02);
}

/*
 * --soak: the duration, rounded up to whole sweeps (one more sweep at most,
 * NP_SOAK_LEAST_SWEEPS at least), each sweep the tournament's rounds of two
 * steps of --soak-interval.
 */
static double netpair_soak_estimate(const struct cc_options *o)
{
	int n = o->plan_nodes, pairs, rounds;
	double gbps = o->plan_gbps > 0 ? o->plan_gbps : 100, msg = p_bw_size * 8.0 / (gbps * 1e9);
	double bw = o->soak_interval > msg ? o->soak_interval : msg, sweep;
	int at_once = p_concurrency ? p_concurrency : n / 2;

	if (n < 2)
		return 0;
	plan_shape(o, &rounds, &pairs);
	if (at_once < 1)
		at_once = 1;
	sweep = (p_concurrency ? (double)(pairs + at_once - 1) / at_once : rounds) * (2 * (bw + p_warmup * msg) + 0.02);
	return fmax(o->soak_s + sweep, NP_SOAK_LEAST_SWEEPS * sweep);
}

const struct probe probe_netpair = {
	.name = "netpair",
	.summary = "node-to-node bandwidth and latency (MPI point-to-point), names the bad node or link",
	.params = netpair_params,
	.phase = PHASE_PAIRS,
	.estimate = netpair_estimate,
	.plan_note = plan_pair_note,
	.check = check_params,
	.run = netpair_run,
	.soak = netpair_soak,
	.soak_estimate = netpair_soak_estimate,
	.header = netpair_header,
};
