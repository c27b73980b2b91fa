/*
 * The sweep: sizes, warm-up, timing, data check, records and the table.
 * Written once for every collective and backend (nccl-tests' common.cu).
 *
 * Timing: each repetition starts with a barrier, then every rank times
 * `iters` back-to-back operations (start... then wait) on its monotonic
 * clock; its sample is that span divided by iters. The repetition's time is
 * the largest sample over all ranks (MPI_MAX), i.e. the slowest rank, so a
 * straggler shows instead of being averaged away. The record's spread
 * (min, median, p99...) is over the repetitions.
 *
 * Time budget (--time-per-size): a large message on a slow link can take
 * seconds per operation, so -n x -r of them would take minutes per size.
 * The first warm-up operation is timed (slowest rank) and sets the warm-up,
 * up to a fifth of the budget; the rest of the warm-up, timed again (the
 * first carries connection set-up), gives every rank the same counts:
 * iterations and, once down to one, repetitions shrink to fit the rest, but
 * never below SWEEP_MIN_REPS repetitions (the spread needs samples) and
 * never below one warm-up and the data check. Records carry the counts run.
 */
#include "sweep.h"
#include "fit.h"
#include "../core/log.h"
#include "../core/progress.h"
#include "../core/size.h"
#include "../core/stats.h"
#include "../core/timer.h"
#include "../core/watchdog.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POISON (-1.0)  /* never a pattern value: shows untouched output */

int sweep_parse_lists(const struct cc_options *o, enum cc_dtype *types, int *ntypes,
		      enum cc_redop *ops, int *nops, char *err, size_t len)
{
	const char *items[16];
	char *buf = NULL;
	int n, rc = 0;

	n = options_split(o->dtypes, &buf, items, 16);
	*ntypes = 0;
	for (int i = 0; i < n && !rc; i++)
		if (*ntypes >= CC_NDTYPES || dtype_parse(items[i], &types[(*ntypes)++])) {
			snprintf(err, len, "unknown data type '%s' for -d (float, double, int32)",
				 items[i]);
			rc = -1;
		}
	free(buf);
	if (!rc && *ntypes == 0) {
		snprintf(err, len, "no data type given to -d");
		rc = -1;
	}
	if (rc)
		return rc;
	n = options_split(o->ops, &buf, items, 16);
	*nops = 0;
	for (int i = 0; i < n && !rc; i++)
		if (*nops >= CC_NOPS || redop_parse(items[i], &ops[(*nops)++])) {
			snprintf(err, len, "unknown operator '%s' for --op (sum, prod, min, max)",
				 items[i]);
			rc = -1;
		}
	free(buf);
	if (!rc && *nops == 0) {
		snprintf(err, len, "no operator given to --op");
		rc = -1;
	}
	return rc;
}

void sweep_bufs_free(const struct backend *be, struct sweep_bufs *b)
{
	if (b->send)
		be->release(b->send);
	if (b->recv)
		be->release(b->recv);
	free(b->host_send);
	free(b->host_recv);
	memset(b, 0, sizeof(*b));
}

int sweep_bufs_alloc(const struct backend *be, struct sweep_bufs *b, size_t send_bytes,
		     size_t recv_bytes)
{
	b->send_bytes = send_bytes;
	b->recv_bytes = recv_bytes;
	b->send = be->alloc(send_bytes);
	b->recv = be->alloc(recv_bytes);
	b->host_send = malloc(send_bytes ? send_bytes : 1);
	b->host_recv = malloc(recv_bytes ? recv_bytes : 1);
	return b->send && b->recv && b->host_send && b->host_recv ? 0 : -1;
}

size_t sweep_check(const struct backend *be, const struct coll *coll, struct sweep_bufs *b,
		   const struct coll_args *a, const struct coll_counts *c, int rank, int nranks,
		   int *err)
{
	size_t elt = dtype_size(a->dtype);

	/* the send buffer still holds the pattern: no operation writes it */
	for (size_t k = 0; k < c->recv; k++)
		dtype_store(b->host_recv, a->dtype, k, POISON);
	*err = be->to_buffer(b->recv, b->host_recv, c->recv * elt) || be->start(a) || be->wait() ||
	       be->to_host(b->host_recv, b->recv, c->recv * elt);
	return *err ? 0 : coll->check(b->host_recv, c, a->dtype, a->op, rank, nranks, a->root);
}

/* One measured point; filled on every rank, complete on rank 0. */
struct point {
	struct coll_counts c;
	double *times;                /* [reps] seconds per op, slowest rank */
	struct stats st;
	unsigned long long wrong;     /* summed over ranks */
	int slowest_rank;
	int warmup, iters, reps;      /* the counts actually run (the time budget) */
	int failed;                   /* a call failed on some rank */
	char error[200];              /* rank 0's view of the failure */
};

/*
 * The counts of one point within o->time_per_size (see the top of the file):
 * runs the warm-up and fills p->warmup, p->iters and p->reps, the same on
 * every rank (collective). Without a budget they are -w, -n and -r. Returns
 * nonzero when an operation failed here.
 */
static int warmup_and_budget(struct cc_run *run, struct coll_args *a,
			     const struct backend *be, struct point *p)
{
	const struct cc_options *o = run->opt;
	double budget = o->time_per_size, t0, first, op_s, left;
	int err = 0, min_reps = o->reps < SWEEP_MIN_REPS ? o->reps : SWEEP_MIN_REPS;
	long fit;

	p->warmup = o->warmup;
	p->iters = o->iters;
	p->reps = o->reps;
	if (budget <= 0) {
		for (int w = 0; w < o->warmup && !err; w++)
			err = be->start(a) || be->wait();
		return err;
	}
	/* the first warm-up operation (at least one runs) times the operation */
	t0 = timer_now();
	err = be->start(a) || be->wait();
	first = timer_now() - t0;
	MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_DOUBLE, MPI_MAX, run->mpi->world);
	op_s = first > 1e-9 ? first : 1e-9;
	fit = (long)(0.2 * budget / op_s);
	p->warmup = o->warmup < 1 ? 1 : fit < 1 ? 1 : fit < o->warmup ? (int)fit : o->warmup;
	/* the first one carries connection set-up: the others time the operation better */
	t0 = timer_now();
	for (int w = 1; w < p->warmup && !err; w++)
		err = be->start(a) || be->wait();
	if (p->warmup > 1) {
		op_s = (timer_now() - t0) / (p->warmup - 1);
		MPI_Allreduce(MPI_IN_PLACE, &op_s, 1, MPI_DOUBLE, MPI_MAX, run->mpi->world);
		if (op_s <= 0)
			op_s = 1e-9;
	}
	/* what is left after the warm-up and the data check, for the timed ones */
	/* from the slowest rank's times only: every rank computes the same counts */
	left = budget - first - (p->warmup - 1) * op_s - o->check_iters * op_s;
	fit = (long)(left / op_s);
	if ((double)p->iters * p->reps > (double)fit) {
		long iters = fit / p->reps;

		if (iters >= 1) {
			p->iters = (int)iters;
		} else {
			p->iters = 1;
			p->reps = fit > min_reps ? (int)fit : min_reps;
		}
	}
	return err;
}

static int measure(struct cc_run *run, const struct coll *coll, const struct backend *be,
		   struct sweep_bufs *b, struct coll_args *a, struct point *p)
{
	const struct cc_options *o = run->opt;
	struct mpictx *mpi = run->mpi;
	double *local = calloc((size_t)o->reps, sizeof(double));
	size_t elt = dtype_size(a->dtype);
	unsigned long long wrong = 0;
	int err = 0, anyerr = 0;
	struct { double v; int r; } mine = { 0.0, mpi->rank }, slow;

	if (!local)
		return -1;
	/* the input is the check pattern from the start: real data, pages touched */
	coll->fill(b->host_send, &p->c, a->dtype, a->op, mpi->rank, mpi->size, a->root);
	err = be->to_buffer(b->send, b->host_send, p->c.send * elt);
	err = err || warmup_and_budget(run, a, be, p);
	for (int r = 0; r < p->reps && !err; r++) {
		double t0;

		MPI_Barrier(mpi->world);
		t0 = timer_now();
		for (int i = 0; i < p->iters && !err; i++)
			err = be->start(a);
		err = err || be->wait();
		local[r] = (timer_now() - t0) / p->iters;
		mine.v += local[r];
	}
	/* data check on separate iterations, untimed */
	for (int ci = 0; ci < o->check_iters && !err; ci++)
		wrong += sweep_check(be, coll, b, a, &p->c, mpi->rank, mpi->size, &err);
	if (err)
		snprintf(p->error, sizeof(p->error), "%s", be->error());
	/* every rank learns whether any failed, so all take the same path */
	MPI_Allreduce(&err, &anyerr, 1, MPI_INT, MPI_MAX, mpi->world);
	p->failed = anyerr;
	if (!anyerr) {
		MPI_Reduce(local, p->times, p->reps, MPI_DOUBLE, MPI_MAX, 0, mpi->world);
		MPI_Reduce(&mine, &slow, 1, MPI_DOUBLE_INT, MPI_MAXLOC, 0, mpi->world);
		MPI_Reduce(&wrong, &p->wrong, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, mpi->world);
		p->slowest_rank = slow.r;
		if (mpi->rank == 0)
			stats_compute(p->times, (size_t)p->reps, &p->st);
	} else if (mpi->rank == 0 && !err) {
		snprintf(p->error, sizeof(p->error), "a collective call failed on another rank");
	}
	free(local);
	return 0;
}

static void print_header(struct cc_run *run, const struct coll *coll, const struct backend *be)
{
	const struct cc_options *o = run->opt;

	printf("# %s: backend %s (%s memory), %d ranks on %d host(s); %d iters x %d reps, "
	       "%d warm-up, %d check\n", coll->name, be->name, be->memory, run->mpi->size,
	       run->mpi->nnodes, o->iters, o->reps, o->warmup, o->check_iters);
	if (o->time_per_size > 0)
		printf("# time per size: %g s; large sizes run fewer iters and reps to fit "
		       "(at least %d reps, 1 warm-up; the records carry the counts run)\n",
		       o->time_per_size, SWEEP_MIN_REPS);
	printf("# time: slowest rank, median of reps; GB/s = 1e9 bytes/s\n");
	printf("#%12s %12s %7s %6s %5s %11s %11s %11s %9s %9s %7s\n", "size", "count", "type",
	       "redop", "root", "time", "min", "p99", "algbw", "busbw", "#wrong");
	printf("#%12s %12s %7s %6s %5s %11s %11s %11s %9s %9s %7s\n", "(B)", "(elements)", "",
	       "", "", "(us)", "(us)", "(us)", "(GB/s)", "(GB/s)", "");
	fflush(stdout);
}

static void report(struct cc_run *run, const struct coll *coll, const struct backend *be,
		   const struct coll_args *a, const struct point *p)
{
	const struct cc_options *o = run->opt;
	struct mpictx *mpi = run->mpi;
	double t = p->st.median;
	double algbw = t > 0 ? (double)p->c.bytes / t / 1e9 : 0.0;
	double factor = coll->bus_factor(mpi->size);
	char root[16] = "-";
	json_t *rec;

	if (coll->rooted)
		snprintf(root, sizeof(root), "%d", a->root);
	if (!o->quiet) {
		printf(" %12zu %12zu %7s %6s %5s %11.2f %11.2f %11.2f %9.3f %9.3f %7llu\n",
		       p->c.bytes, p->c.param, dtype_name(a->dtype),
		       coll->reduces ? redop_name(a->op) : "none", root, t * 1e6, p->st.min * 1e6,
		       p->st.p99 * 1e6, algbw, algbw * factor, p->wrong);
		fflush(stdout);
	}
	rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:i, s:i, s:i, s:i, s:i, s:i}",
			"kind", "collective", "name", coll->name, "backend", be->name,
			"memory", be->memory, "dtype", dtype_name(a->dtype),
			"op", coll->reduces ? redop_name(a->op) : "none",
			"bytes", (json_int_t)p->c.bytes, "count", (json_int_t)p->c.param,
			"ranks", mpi->size, "nodes", mpi->nnodes, "iters", p->iters,
			"warmup", p->warmup, "reps", p->reps, "check_iters", o->check_iters);
	json_object_set_new(rec, "root", coll->rooted ? json_integer(a->root) : json_null());
	json_object_set_new(rec, "time_us", run_stats_json(&p->st, 1e6));
	json_object_set_new(rec, "algbw_GBps", json_real(algbw));
	json_object_set_new(rec, "busbw_GBps", json_real(algbw * factor));
	json_object_set_new(rec, "busbw_factor", json_real(factor));
	json_object_set_new(rec, "wrong", json_integer((json_int_t)p->wrong));
	json_object_set_new(rec, "slowest", json_pack("{s:i, s:s}", "rank",
			mpictx_world_rank(mpi, p->slowest_rank),
			"host", mpi->hosts[mpi->rank_node[p->slowest_rank]]));
	if (o->scale)
		json_object_set_new(rec, "scale", json_true());
	if (be->transport && be->transport())
		json_object_set_new(rec, "transport", json_string(be->transport()));
	run_record(run, "measurement", rec);
	if (p->wrong) {
		log_error("%s %s %s %zu B: %llu wrong elements", coll->name, dtype_name(a->dtype),
			  redop_name(a->op), p->c.bytes, p->wrong);
		run->failures++;
	}
}

/* The largest buffers any point of the sweep needs. */
static void max_counts(const struct cc_options *o, const struct coll *coll,
		       const size_t *sizes, size_t nsizes, size_t elt, int n,
		       size_t *send_bytes, size_t *recv_bytes)
{
	*send_bytes = *recv_bytes = 0;
	for (size_t i = 0; i < nsizes; i++) {
		struct coll_counts c;

		coll->counts(sizes[i], elt, n, &c);
		if (c.send * elt > *send_bytes)
			*send_bytes = c.send * elt;
		if (c.recv * elt > *recv_bytes)
			*recv_bytes = c.recv * elt;
	}
	(void)o;
}

/*
 * Rank 0: the Hockney fit of one series (bench/fit.h) as a measurement of
 * kind "fit"; alpha and beta are null when the fit is refused.
 */
static void report_fit(struct cc_run *run, const struct coll *coll, const struct backend *be,
		       enum cc_dtype t, enum cc_redop op, const double *x, const double *tm,
		       size_t n)
{
	const struct mpictx *mpi = run->mpi;
	double factor = coll->bus_factor(mpi->size);
	struct fit_result f;
	json_t *rec;

	fit_hockney(x, tm, n, &f);
	rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:b}",
			"kind", "fit", "model", "hockney", "name", coll->name,
			"backend", be->name, "memory", be->memory, "dtype", dtype_name(t),
			"op", coll->reduces ? redop_name(op) : "none", "ranks", mpi->size,
			"nodes", mpi->nnodes, "scale", run->opt->scale);
	json_object_set_new(rec, "n", json_integer((json_int_t)f.n));
	json_object_set_new(rec, "min_bytes", json_integer(n ? (json_int_t)x[0] : 0));
	json_object_set_new(rec, "max_bytes", json_integer(n ? (json_int_t)x[n - 1] : 0));
	json_object_set_new(rec, "busbw_factor", json_real(factor));
	if (f.ok) {
		json_object_set_new(rec, "alpha_us", json_real(f.alpha_s * 1e6));
		json_object_set_new(rec, "beta_GBps", json_real(f.beta_Bps / 1e9));
		json_object_set_new(rec, "beta_busbw_GBps", json_real(f.beta_Bps / 1e9 * factor));
		json_object_set_new(rec, "r2", json_real(f.r2));
		json_object_set_new(rec, "rel_rms", json_real(f.rel_rms));
		json_object_set_new(rec, "max_rel", json_real(f.max_rel));
	} else {
		json_object_set_new(rec, "alpha_us", json_null());
		json_object_set_new(rec, "beta_GBps", json_null());
		json_object_set_new(rec, "reason", json_string(f.why));
	}
	run_record(run, "measurement", rec);
	if (run->opt->quiet)
		return;
	if (f.ok)
		printf("# %s %s %s on %d node(s): Hockney fit alpha %.2f us, beta %.4f GB/s "
		       "(busbw %.4f GB/s), relative RMS residual %.1f%% over %zu sizes\n",
		       coll->name, dtype_name(t), coll->reduces ? redop_name(op) : "none",
		       mpi->nnodes, f.alpha_s * 1e6, f.beta_Bps / 1e9, f.beta_Bps / 1e9 * factor,
		       100 * f.rel_rms, f.n);
	else
		printf("# %s %s %s on %d node(s): no Hockney fit: %s\n", coll->name, dtype_name(t),
		       coll->reduces ? redop_name(op) : "none", mpi->nnodes, f.why);
	fflush(stdout);
}

static int sweep_type_op(struct cc_run *run, const struct coll *coll, const struct backend *be,
			 enum cc_dtype t, enum cc_redop op, const size_t *sizes, size_t nsizes)
{
	const struct cc_options *o = run->opt;
	struct mpictx *mpi = run->mpi;
	size_t elt = dtype_size(t), send_bytes, recv_bytes;
	struct sweep_bufs b = { 0 };
	struct point p = { 0 };
	int rc = CC_EXIT_OK, ok, allok;
	double best_bus = 0.0;
	size_t best_size = 0;
	double fx[SWEEP_MAX_SIZES], ft[SWEEP_MAX_SIZES];  /* rank 0: bytes, median s */
	size_t nfit = 0, i = 0;
	char series[96], sz[32];

	max_counts(o, coll, sizes, nsizes, elt, mpi->size, &send_bytes, &recv_bytes);
	ok = sweep_bufs_alloc(be, &b, send_bytes, recv_bytes) == 0;
	p.times = calloc((size_t)o->reps, sizeof(double));
	ok = ok && p.times;
	MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, mpi->world);
	if (!allok) {
		char msg[160];

		snprintf(msg, sizeof(msg), "cannot allocate %zu + %zu bytes of %s memory on some rank",
			 send_bytes, recv_bytes, be->memory);
		run_error(run, "collective", coll->name, msg);
		rc = CC_EXIT_RUNTIME;
		goto out;
	}
	snprintf(series, sizeof(series), "%s %s %s", coll->name, dtype_name(t),
		 coll->reduces ? redop_name(op) : "none");
	progress_begin(mpi->rank, o->quiet, series, (int)nsizes);
	for (i = 0; i < nsizes; i++) {
		struct coll_args a = { .id = coll->id, .send = b.send, .recv = b.recv,
				       .dtype = t, .op = op, .root = o->root };
		char what[160];

		coll->counts(sizes[i], elt, mpi->size, &p.c);
		if (p.c.param == 0) {
			log_debug("%s: %zu B holds no whole %s element per rank; not run",
				  coll->name, sizes[i], dtype_name(t));
			continue;
		}
		a.count = p.c.param;
		snprintf(what, sizeof(what), "%s %s %s %zu B", coll->name, dtype_name(t),
			 coll->reduces ? redop_name(op) : "none", p.c.bytes);
		watchdog_fault_point(mpictx_world_rank(mpi, mpi->rank), p.c.bytes);
		watchdog_arm(what, json_pack("{s:s, s:s, s:s, s:s, s:I}", "kind", "collective",
					     "collective", coll->name, "dtype", dtype_name(t),
					     "op", coll->reduces ? redop_name(op) : "none",
					     "bytes", (json_int_t)p.c.bytes));
		if (measure(run, coll, be, &b, &a, &p)) {
			run_error(run, "collective", coll->name, "out of memory");
			rc = CC_EXIT_RUNTIME;
			watchdog_disarm();
			break;
		}
		watchdog_disarm();
		if (p.failed) {
			char msg[512];

			snprintf(msg, sizeof(msg), "%s at %zu B: %s", what, p.c.bytes, p.error);
			run_error(run, "collective", coll->name, msg);
			rc = CC_EXIT_FAIL;
			break;
		}
		if (mpi->rank == 0) {
			double bus;

			progress_clear();  /* the table row, then the progress line again */
			report(run, coll, be, &a, &p);
			fx[nfit] = (double)p.c.bytes;
			ft[nfit++] = p.st.median;
			bus = (double)p.c.bytes / p.st.median / 1e9 * coll->bus_factor(mpi->size);
			if (bus > best_bus) {
				best_bus = bus;
				best_size = p.c.bytes;
			}
			if (p.wrong)
				rc = CC_EXIT_FAIL;
			progress_step((int)i + 1, size_format(p.c.bytes, sz, sizeof(sz)));
		}
	}
	progress_end();
	if (mpi->rank == 0 && !o->quiet && best_size) {
		char sz[32];

		printf("# %s %s %s: peak busbw %.3f GB/s at %s\n", coll->name, dtype_name(t),
		       coll->reduces ? redop_name(op) : "none", best_bus,
		       size_human((double)best_size, sz, sizeof(sz)));
	}
	/* the Hockney fit of a whole series (none when it broke off): under --scale */
	if (mpi->rank == 0 && o->scale && i == nsizes)
		report_fit(run, coll, be, t, op, fx, ft, nfit);
	if (mpi->rank == 0 && !o->quiet && best_size) {
		printf("#\n");
		fflush(stdout);
	}
out:
	free(p.times);
	sweep_bufs_free(be, &b);
	return rc;
}

int sweep_backend_start(const struct backend *be, const struct mpictx *mpi, char *why,
			size_t len)
{
	int rc = be->init(mpi, why, len), range[2] = { -rc, rc }, worst;

	/* a backend whose init already agreed (nccl) keeps its tagged reason */
	MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_INT, MPI_MAX, mpi->world);
	worst = -range[0] == range[1] ? rc : run_agree(mpi->world, rc, mpi->host, why, len);
	if (worst == 0)
		return 0;
	if (rc == 0)
		be->fini();  /* it started here but not everywhere */
	return worst;
}

double sweep_estimate(const struct cc_options *o, const struct coll *coll, int nodes,
		      size_t *nsizes)
{
	enum cc_dtype types[CC_NDTYPES];
	enum cc_redop ops[CC_NOPS];
	int ntypes = 1, nops = 1, ranks = nodes * o->plan_rpn;
	size_t sizes[SWEEP_MAX_SIZES], n = sweep_sizes(o, sizes, SWEEP_MAX_SIZES);
	/* busbw per rank: the node's rate shared by its ranks; unknown: 10 GB/s */
	double bw = o->plan_gbps > 0 ? o->plan_gbps / 8 / o->plan_rpn * 1e9 : 10e9;
	double alpha = 30e-6 * (1 + log2(ranks > 1 ? ranks : 1)), factor = coll->bus_factor(ranks);
	double count = o->warmup + (double)o->iters * o->reps + o->check_iters;
	double floor_ops = 1 + (o->reps < SWEEP_MIN_REPS ? o->reps : SWEEP_MIN_REPS) + o->check_iters;
	double t = 0;
	char err[160];

	if (sweep_parse_lists(o, types, &ntypes, ops, &nops, err, sizeof(err)))
		ntypes = nops = 1;
	if (!coll->reduces)
		nops = 1;
	for (size_t i = 0; i < n; i++) {
		double op = alpha + (double)sizes[i] * (factor > 0 ? factor : 1) / bw, s = count * op;

		if (o->time_per_size > 0 && s > o->time_per_size)
			s = o->time_per_size > floor_ops * op ? o->time_per_size : floor_ops * op;
		t += s + 2e-3;  /* the barriers and reductions of each size */
	}
	if (nsizes)
		*nsizes = n;
	/* a backend start: communicators, connections (NCCL's take seconds) */
	return t * ntypes * nops + (strcmp(o->backend, "nccl") ? 0.5 : 3.0);
}

int sweep_run(struct cc_run *run, const struct coll *coll, const struct backend *be)
{
	const struct cc_options *o = run->opt;
	enum cc_dtype types[CC_NDTYPES];
	enum cc_redop ops[CC_NOPS];
	int ntypes, nops, rc = CC_EXIT_OK;
	size_t sizes[SWEEP_MAX_SIZES], nsizes;
	char err[160];

	if (sweep_parse_lists(o, types, &ntypes, ops, &nops, err, sizeof(err))) {
		run_error(run, "collective", coll->name, err);
		return CC_EXIT_RUNTIME;
	}
	if (coll->rooted && o->root >= run->mpi->size) {
		snprintf(err, sizeof(err), "root %d is not a rank of this %d-rank job", o->root,
			 run->mpi->size);
		run_skip(run, "collective", coll->name, err);
		return CC_EXIT_OK;
	}
	nsizes = sweep_sizes(o, sizes, SWEEP_MAX_SIZES);
	if (run->mpi->rank == 0 && !o->quiet)
		print_header(run, coll, be);
	for (int ti = 0; ti < ntypes; ti++) {
		for (int oi = 0; oi < (coll->reduces ? nops : 1); oi++) {
			enum cc_redop op = coll->reduces ? ops[oi] : CC_SUM;
			int r;

			if (!be->supports(coll->id, types[ti], op)) {
				char name[96];

				snprintf(name, sizeof(name), "%s %s %s", coll->name,
					 dtype_name(types[ti]), redop_name(op));
				run_skip(run, "collective", name, "the backend does not support it");
				continue;
			}
			r = sweep_type_op(run, coll, be, types[ti], op, sizes, nsizes);
			if (r > rc)
				rc = r;
			if (r == CC_EXIT_RUNTIME)
				return rc;
		}
	}
	return rc;
}
