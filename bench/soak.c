/*
 * --soak for a collective: one measurement repeated for a duration, one
 * record per interval, for burn-in and for faults that come and go (a link
 * that flaps, a GPU that throttles after minutes). ccreport judges the series
 * (report/soak.c); this file only measures and records.
 *
 * Intervals: every interval starts with a barrier, then each rank times a
 * fixed count of back-to-back operations; the interval's time is the
 * slowest rank's span (MPI_MAX), as in the sweep. The count comes from the
 * warm-up and is re-fitted after each interval to the last one's time, so an
 * interval stays near --soak-interval also when the fabric slows down or
 * recovers. The data check runs after the timed operations on separate ones,
 * untimed. Rank 0 decides after each interval whether the duration is spent
 * and tells everyone in the same reduction that brings the interval's time.
 */
#include "soak.h"
#include "sweep.h"
#include "../core/log.h"
#include "../core/stats.h"
#include "../core/timer.h"
#include "../core/watchdog.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SOAK_MAX_OPS 10000000   /* operations in one interval, at most */
/* intervals a collective's soak runs at least, however slow: ccreport judges no
 * series shorter (report/soak.h, SOAK_MIN_INTERVALS), and on a loaded host 3 s of
 * 0.25 s intervals once ended after 2 */
#define SOAK_LEAST_INTERVALS 3

/* What one interval gives rank 0. */
struct interval {
	int k, ops;
	double start_s;          /* since the first interval started */
	double time_s;           /* the slowest rank's span of the timed operations */
	unsigned long long wrong;
	int slowest;             /* rank with the longest span */
};

static void print_header(struct cc_run *run, const struct coll *coll, const struct backend *be,
			 const struct coll_args *a, size_t bytes)
{
	const struct cc_options *o = run->opt;

	printf("# soak %s: backend %s (%s memory), %s %s, %zu B, %d ranks on %d host(s); "
	       "%g s intervals for %g s, %d check(s) per interval\n", coll->name, be->name,
	       be->memory, dtype_name(a->dtype), coll->reduces ? redop_name(a->op) : "none",
	       bytes, run->mpi->size, run->mpi->nnodes, o->soak_interval, o->soak_s, o->check_iters);
	printf("# time: slowest rank, mean of the interval's operations; GB/s = 1e9 bytes/s\n");
	printf("#%9s %9s %9s %11s %9s %9s %7s  %s\n", "interval", "start", "ops", "time", "algbw",
	       "busbw", "#wrong", "slowest");
	printf("#%9s %9s %9s %11s %9s %9s %7s\n", "", "(s)", "", "(us)", "(GB/s)", "(GB/s)", "");
	fflush(stdout);
}

/* Rank 0: the interval's record and table row; returns its busbw. */
static double report(struct cc_run *run, const struct coll *coll, const struct backend *be,
		     const struct coll_args *a, const struct coll_counts *c,
		     const struct interval *iv)
{
	struct mpictx *mpi = run->mpi;
	double t = iv->time_s / iv->ops, factor = coll->bus_factor(mpi->size);
	double algbw = t > 0 ? (double)c->bytes / t / 1e9 : 0.0;
	const char *slow_host = mpi->hosts[mpi->rank_node[iv->slowest]];
	json_t *rec;

	rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:i, s:i, s:s, s:s, s:i, s:f, "
			"s:f, s:i, s:f, s:i}",
			"kind", "soak", "name", coll->name, "backend", be->name,
			"memory", be->memory, "dtype", dtype_name(a->dtype),
			"op", coll->reduces ? redop_name(a->op) : "none",
			"bytes", (json_int_t)c->bytes, "count", (json_int_t)c->param,
			"ranks", mpi->size, "nodes", mpi->nnodes, "scope", "cluster",
			"element", "cluster", "interval", iv->k, "start_s", iv->start_s,
			"time_s", iv->time_s, "ops", iv->ops, "op_us", t * 1e6,
			"check_iters", run->opt->check_iters);
	json_object_set_new(rec, "root", coll->rooted ? json_integer(a->root) : json_null());
	json_object_set_new(rec, "algbw_GBps", json_real(algbw));
	json_object_set_new(rec, "busbw_GBps", json_real(algbw * factor));
	json_object_set_new(rec, "busbw_factor", json_real(factor));
	json_object_set_new(rec, "wrong", json_integer((json_int_t)iv->wrong));
	json_object_set_new(rec, "slowest", json_pack("{s:i, s:s}", "rank",
			    mpictx_world_rank(mpi, iv->slowest), "host", slow_host));
	if (be->transport && be->transport())
		json_object_set_new(rec, "transport", json_string(be->transport()));
	run_record(run, "measurement", rec);
	if (!run->opt->quiet) {
		printf(" %9d %9.2f %9d %11.2f %9.4f %9.4f %7llu  %s\n", iv->k, iv->start_s, iv->ops,
		       t * 1e6, algbw, algbw * factor, iv->wrong, slow_host);
		fflush(stdout);
	}
	if (iv->wrong) {
		log_error("soak %s %s %s %zu B, interval %d: %llu wrong elements", coll->name,
			  dtype_name(a->dtype), redop_name(a->op), c->bytes, iv->k, iv->wrong);
		run->failures++;
	}
	return algbw * factor;
}

/* Rank 0, not -q: the series in one line (ccreport judges it). */
static void print_summary(const struct coll *coll, const double *bus, int n)
{
	struct stats st;
	int lo = 0;

	if (!n || stats_compute(bus, (size_t)n, &st))
		return;
	for (int i = 1; i < n; i++)
		if (bus[i] < bus[lo])
			lo = i;
	printf("# soak %s: %d intervals, busbw median %.4f GB/s, lowest %.4f GB/s (interval %d), "
	       "cv %.1f%%\n#\n", coll->name, n, st.median, bus[lo], lo, 100 * st.cv);
	fflush(stdout);
}

/* Operations that fill about one interval at op_s each, within 1..SOAK_MAX_OPS. */
static int fit_ops(double interval, double op_s)
{
	double n = op_s > 0 ? interval / op_s : 1;

	return n < 1 ? 1 : n > SOAK_MAX_OPS ? SOAK_MAX_OPS : (int)n;
}

/*
 * The warm-up, untimed and not recorded: -w operations one at a time (at
 * least one; the first carries connection set-up), for at most about a
 * quarter of an interval, then one batch back-to-back as the intervals run
 * them, sized to about a quarter of an interval: one at a time is not how a
 * batch runs (queues, pipelining). Returns the batch's time of one
 * operation, the slowest rank's (the same on every rank), or -1 when an
 * operation failed.
 */
static double warm_up(struct cc_run *run, const struct backend *be, const struct coll_args *a)
{
	const struct cc_options *o = run->opt;
	double t0, first, op_s, res[2];
	int err, n = 1;

	t0 = timer_now();
	err = be->start(a) || be->wait();
	first = timer_now() - t0;
	/* how many more: one count for every rank (the slowest first operation's), since
	 * each rank's own clock would run a different number of collectives and hang */
	res[0] = first;
	res[1] = err;
	MPI_Allreduce(MPI_IN_PLACE, res, 2, MPI_DOUBLE, MPI_MAX, run->mpi->world);
	if (res[1])
		return -1;
	int more = fit_ops(0.25 * o->soak_interval, res[0] > 1e-9 ? res[0] : 1e-9);
	if (more > o->warmup - 1)
		more = o->warmup - 1;
	t0 = timer_now();
	for (int i = 0; i < more && !err; i++) {
		err = be->start(a) || be->wait();
		n++;
	}
	op_s = n > 1 ? (timer_now() - t0) / (n - 1) : first;
	res[0] = op_s > 1e-9 ? op_s : 1e-9;
	res[1] = err;
	MPI_Allreduce(MPI_IN_PLACE, res, 2, MPI_DOUBLE, MPI_MAX, run->mpi->world);
	if (res[1])
		return -1;
	n = fit_ops(0.25 * o->soak_interval, res[0]);
	MPI_Barrier(run->mpi->world);
	t0 = timer_now();
	for (int i = 0; i < n && !err; i++)
		err = be->start(a);
	err = err || be->wait();
	res[0] = (timer_now() - t0) / n;
	res[1] = err;
	MPI_Allreduce(MPI_IN_PLACE, res, 2, MPI_DOUBLE, MPI_MAX, run->mpi->world);
	return res[1] ? -1 : res[0] > 1e-9 ? res[0] : 1e-9;
}

int soak_run(struct cc_run *run, const struct coll *coll, const struct backend *be)
{
	const struct cc_options *o = run->opt;
	struct mpictx *mpi = run->mpi;
	enum cc_dtype types[CC_NDTYPES];
	enum cc_redop ops[CC_NOPS];
	int ntypes, nops, rc = CC_EXIT_OK, ok, n = 0, cap = 0, nbus = 0;
	size_t elt, bytes = o->soak_size ? o->soak_size : o->max_bytes;
	struct coll_counts c;
	struct coll_args a = { .id = coll->id, .root = o->root };
	struct sweep_bufs b = { 0 };
	double op_s, t0, *bus = NULL;
	char err[256], what[160];

	if (sweep_parse_lists(o, types, &ntypes, ops, &nops, err, sizeof(err))) {
		run_error(run, "soak", coll->name, err);
		return CC_EXIT_RUNTIME;
	}
	a.dtype = types[0];
	a.op = coll->reduces ? ops[0] : CC_SUM;
	if (coll->rooted && o->root >= mpi->size) {
		snprintf(err, sizeof(err), "root %d is not a rank of this %d-rank job", o->root,
			 mpi->size);
		run_skip(run, "soak", coll->name, err);
		return CC_EXIT_OK;
	}
	if (!be->supports(coll->id, a.dtype, a.op)) {
		snprintf(err, sizeof(err), "the backend does not support %s %s %s", coll->name,
			 dtype_name(a.dtype), redop_name(a.op));
		run_skip(run, "soak", coll->name, err);
		return CC_EXIT_OK;
	}
	elt = dtype_size(a.dtype);
	coll->counts(bytes, elt, mpi->size, &c);
	if (c.param == 0) {
		snprintf(err, sizeof(err), "%zu B holds no whole %s element per rank", bytes,
			 dtype_name(a.dtype));
		run_skip(run, "soak", coll->name, err);
		return CC_EXIT_OK;
	}
	ok = sweep_bufs_alloc(be, &b, c.send * elt, c.recv * elt) == 0;
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, mpi->world);
	if (!ok) {
		snprintf(err, sizeof(err), "cannot allocate %zu + %zu bytes of %s memory on some rank",
			 c.send * elt, c.recv * elt, be->memory);
		run_error(run, "soak", coll->name, err);
		rc = CC_EXIT_RUNTIME;
		goto out;
	}
	a.send = b.send;
	a.recv = b.recv;
	a.count = c.param;
	/* the input is the check pattern from the start: real data, pages touched */
	coll->fill(b.host_send, &c, a.dtype, a.op, mpi->rank, mpi->size, a.root);
	snprintf(what, sizeof(what), "soak %s %s %s %zu B warm-up", coll->name, dtype_name(a.dtype),
		 coll->reduces ? redop_name(a.op) : "none", c.bytes);
	watchdog_arm(what, json_pack("{s:s, s:s, s:s, s:s, s:I, s:s}", "kind", "soak",
				     "collective", coll->name, "dtype", dtype_name(a.dtype),
				     "op", coll->reduces ? redop_name(a.op) : "none",
				     "bytes", (json_int_t)c.bytes, "stage", "warm-up"));
	ok = be->to_buffer(b.send, b.host_send, c.send * elt) == 0;
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, mpi->world);
	op_s = ok ? warm_up(run, be, &a) : -1;
	watchdog_disarm();
	if (op_s < 0) {
		snprintf(err, sizeof(err), "%s: %s", what, ok ? be->error() : "a copy to the buffer failed");
		run_error(run, "soak", coll->name, err);
		rc = CC_EXIT_FAIL;
		goto out;
	}
	n = fit_ops(o->soak_interval, op_s);
	if (mpi->rank == 0 && !o->quiet)
		print_header(run, coll, be, &a, c.bytes);
	MPI_Barrier(mpi->world);
	t0 = timer_now();
	for (int k = 0;; k++) {
		struct interval iv = { .k = k, .ops = n };
		struct { double v; int r; } mine, slow;
		double local, red[3];
		unsigned long long wrong = 0;
		int e = 0;

		snprintf(what, sizeof(what), "soak %s %s %s %zu B interval %d", coll->name,
			 dtype_name(a.dtype), coll->reduces ? redop_name(a.op) : "none", c.bytes, k);
		watchdog_fault_point(mpictx_world_rank(mpi, mpi->rank), c.bytes);
		watchdog_arm(what, json_pack("{s:s, s:s, s:s, s:s, s:I, s:i}", "kind", "soak",
					     "collective", coll->name, "dtype", dtype_name(a.dtype),
					     "op", coll->reduces ? redop_name(a.op) : "none",
					     "bytes", (json_int_t)c.bytes, "interval", k));
		MPI_Barrier(mpi->world);
		iv.start_s = timer_now() - t0;
		local = timer_now();
		for (int i = 0; i < n && !e; i++)
			e = be->start(&a);
		e = e || be->wait();
		local = timer_now() - local;
		for (int ci = 0; ci < o->check_iters && !e; ci++)
			wrong += sweep_check(be, coll, &b, &a, &c, mpi->rank, mpi->size, &e);
		watchdog_disarm();
		if (e)
			snprintf(err, sizeof(err), "%s: %s", what, be->error());
		/* the span, rank 0's decision to stop (the duration spent) and any failure, to all */
		red[0] = local;
		red[1] = mpi->rank == 0 && k + 1 >= SOAK_LEAST_INTERVALS &&
			 timer_now() - t0 + 0.5 * o->soak_interval >= o->soak_s;
		red[2] = e;
		MPI_Allreduce(MPI_IN_PLACE, red, 3, MPI_DOUBLE, MPI_MAX, mpi->world);
		if (red[2]) {
			if (mpi->rank == 0)
				run_error(run, "soak", coll->name,
					  e ? err : "a collective call failed on another rank");
			rc = CC_EXIT_FAIL;
			break;
		}
		mine.v = local;
		mine.r = mpi->rank;
		MPI_Reduce(&mine, &slow, 1, MPI_DOUBLE_INT, MPI_MAXLOC, 0, mpi->world);
		MPI_Reduce(&wrong, &iv.wrong, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, mpi->world);
		if (mpi->rank == 0) {
			iv.time_s = red[0];
			iv.slowest = slow.r;
			double v = report(run, coll, be, &a, &c, &iv);

			/* the series for the summary line (the records hold it in any case) */
			if (nbus == cap) {
				double *nb = realloc(bus, (size_t)(cap ? 2 * cap : 64) * sizeof(*bus));

				if (nb) {
					bus = nb;
					cap = cap ? 2 * cap : 64;
				}
			}
			if (nbus < cap)
				bus[nbus++] = v;
			if (iv.wrong)
				rc = CC_EXIT_FAIL;
		}
		if (red[1])
			break;
		/* the next interval's count from this one's time: slow spells keep their length */
		n = fit_ops(o->soak_interval, red[0] / n);
	}
	if (mpi->rank == 0 && !o->quiet)
		print_summary(coll, bus, nbus);
out:
	free(bus);
	sweep_bufs_free(be, &b);
	/* every rank returns rank 0's view (wrong data is counted there) */
	MPI_Bcast(&rc, 1, MPI_INT, 0, mpi->world);
	return rc;
}

double soak_estimate(const struct cc_options *o, const struct coll *coll, int nodes)
{
	int ranks = nodes * o->plan_rpn;
	size_t bytes = o->soak_size ? o->soak_size : o->max_bytes;
	/* the sweep's model: the node's rate shared by its ranks; unknown: 10 GB/s */
	double bw = o->plan_gbps > 0 ? o->plan_gbps / 8 / o->plan_rpn * 1e9 : 10e9;
	double alpha = 30e-6 * (1 + log2(ranks > 1 ? ranks : 1)), factor = coll->bus_factor(ranks);
	double op = alpha + (double)bytes * (factor > 0 ? factor : 1) / bw;
	/* a slow operation stretches each interval to one operation at least */
	double each = o->soak_interval > op ? o->soak_interval : op;
	double intervals = fmax(SOAK_LEAST_INTERVALS, ceil(o->soak_s / each));

	return intervals * (each + o->check_iters * op + 2e-3) + o->soak_interval +
	       (strcmp(o->backend, "nccl") ? 0.5 : 3.0);
}
