/*
 * trainstep: one data-parallel training step of a dense transformer on
 * every rank, repeated, as a proxy for the real one (docs/estimate.md,
 * "Measured against a real step"). The step's matmuls are shaped from the
 * workload (6 x params x tokens FLOPs a step, the estimate's count); the
 * gradients are cut into buckets of --train-bucket bytes in the order the
 * backward writes them (last layer first), and each bucket's all_reduce
 * starts as soon as the bucket is written, while the backward goes on, as
 * PyTorch DDP's buckets do. On host memory (-B mpi) the products run on
 * OpenBLAS and a communication thread all-reduces the buckets with
 * MPI_Allreduce (trainstep_host.c); on GPUs (-B nccl) cuBLASLt bf16
 * products on one stream and ncclAllReduce on a communication stream that
 * waits for each bucket's event (trainstep_gpu.c).
 * Each step runs three ways, interleaved, every one timed from a common
 * start to the slowest rank's end: the full step, the same step with the
 * reductions skipped (compute alone) and the buckets' reductions alone
 * (comm alone), one after the other. Per step: step_s, compute_s,
 * exposed_s = step - compute, overlap = 1 - exposed / comm_alone, FLOP/s
 * per rank, each rank's step and ready time (its last bucket handed over);
 * the step ends when every bucket is reduced and the last bucket's reduced
 * sum equals the sum of every rank's local sums. A summary record has the
 * medians, the spread and the straggler (the rank last ready in most
 * steps, when its ready time is clearly above the others'). The watchdog
 * covers each step: a hung bucket ends as a timeout naming the ranks.
 */
#include "trainstep.h"
#include "probe.h"
#include "../core/log.h"
#include "../core/size.h"
#include "../core/stats.h"
#include "../core/timer.h"
#include "../core/watchdog.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int ts_blas_threads = 1;
static double p_params = 1e6;
static int p_hidden = 0, p_layers = 4, p_tokens = 512, p_steps = 8, p_warmup = 2;
static double p_seconds = 0;
#define TS_MAX_STEPS 100000      /* timed steps at most, --train-seconds included */
static size_t p_bucket = (size_t)25 << 20, p_mem = (size_t)1 << 30;

static const struct cc_param trainstep_params[] = {
	{ "train-params", CC_PARAM_DOUBLE, &p_params,
	  "trainstep: the workload's parameters (hidden = sqrt(params / (12 x layers))) [1e6]" },
	{ "train-hidden", CC_PARAM_INT, &p_hidden, "trainstep: hidden size; 0 = from --train-params [0]" },
	{ "train-layers", CC_PARAM_INT, &p_layers, "trainstep: transformer layers [4]" },
	{ "train-tokens", CC_PARAM_INT, &p_tokens, "trainstep: tokens per rank per step [512]" },
	{ "train-bucket", CC_PARAM_SIZE, &p_bucket, "trainstep: gradient bucket, bytes [25M]" },
	{ "train-steps", CC_PARAM_INT, &p_steps, "trainstep: timed steps (each also run without "
	  "reductions and as reductions alone) [8]" },
	{ "train-warmup", CC_PARAM_INT, &p_warmup, "trainstep: untimed steps first [2]" },
	{ "train-seconds", CC_PARAM_DOUBLE, &p_seconds, "trainstep: keep stepping until this many seconds "
	  "of timed steps (a soak: goodput and stalls; at least --train-steps) [0]" },
	{ "train-threads", CC_PARAM_INT, &ts_blas_threads, "trainstep: BLAS threads per rank [1]" },
	{ "train-mem", CC_PARAM_SIZE, &p_mem, "trainstep: memory a rank may use; a larger model is "
	  "scaled down to fit (the scale is recorded) [1G]" },
	{ NULL, 0, NULL, NULL },
};

static int trainstep_check(char *err, size_t len)
{
	if (!(p_params >= 1 && p_params <= 1e13))
		return options_fail(err, len, "--train-params %g: expected 1 to 1e13", p_params);
	if (p_hidden < 0 || p_hidden > 65536)
		return options_fail(err, len, "--train-hidden %d: expected 0 to 65536", p_hidden);
	if (p_layers < 1 || p_layers > 1024)
		return options_fail(err, len, "--train-layers %d: expected 1 to 1024", p_layers);
	if (p_tokens < 1 || p_tokens > 1 << 20)
		return options_fail(err, len, "--train-tokens %d: expected 1 to 1048576", p_tokens);
	if (p_steps < 1 || p_steps > 100000)
		return options_fail(err, len, "--train-steps %d: expected 1 to 100000", p_steps);
	if (!(p_seconds >= 0 && p_seconds <= 86400))
		return options_fail(err, len, "--train-seconds %g: expected 0 to 86400", p_seconds);
	if (p_warmup < 0 || p_warmup > 1000)
		return options_fail(err, len, "--train-warmup %d: expected 0 to 1000", p_warmup);
	if (ts_blas_threads < 1 || ts_blas_threads > 1024)
		return options_fail(err, len, "--train-threads %d: expected 1 to 1024", ts_blas_threads);
	if (p_bucket < 4 || p_bucket > ((size_t)1 << 34))
		return options_fail(err, len, "--train-bucket %zu: expected 4 B to 16 GiB", p_bucket);
	if (p_mem < ((size_t)1 << 20))
		return options_fail(err, len, "--train-mem %zu: expected at least 1 MiB", p_mem);
	return 0;
}

double ts_shape_bytes(long h, long L, long T, double act_size)
{
	/* weights + gradients 2 x 12 h^2 L (fp32), activations saved (x, q, a, u: 9 h T) a layer, scratch 8 h T */
	return 4.0 * 24.0 * h * h * L + act_size * (9.0 * h * T * L + 8.0 * h * T);
}

void ts_shape_of(struct ts_shape *s, double params, int hidden, int layers, int tokens, double mem,
		 double act_size, int mult)
{
	s->L = layers;
	s->T = tokens;
	s->h = hidden ? hidden : (long)fmax(1, floor(sqrt(params / (12.0 * layers)) + 0.5));
	s->params_asked = hidden ? 12.0 * s->h * s->h * s->L : params;
	while (s->h > 8 && ts_shape_bytes(s->h, s->L, s->T, act_size) > mem)
		s->h = (long)(s->h * 0.9);
	if (mult > 1)
		s->h = s->h < mult ? mult : s->h / mult * mult;
	s->params = 12.0 * s->h * s->h * s->L;
	s->scale = s->params / s->params_asked;
	s->bytes = ts_shape_bytes(s->h, s->L, s->T, act_size);
}

size_t ts_bucket_len(const struct ts *t, long b)
{
	size_t total = (size_t)t->sh.params, off = (size_t)b * t->bucket_el;

	return off + t->bucket_el <= total ? t->bucket_el : total - off;
}

void ts_fill(float *v, size_t n, float r, unsigned long long *s)
{
	for (size_t i = 0; i < n; i++) {
		*s ^= *s << 13;
		*s ^= *s >> 7;
		*s ^= *s << 17;
		v[i] = r * (float)((double)(*s >> 11) / 9007199254740992.0 * 2 - 1);
	}
}

/* the engine of -B: nccl on GPUs, else the host */
static const struct ts_engine *engine_of(const struct cc_options *o)
{
	return o->backend && !strcmp(o->backend, "nccl") ? &ts_gpu : &ts_host;
}

static void shape_for(const struct cc_options *o, struct ts_shape *s)
{
	ts_shape_of(s, p_params, p_hidden, p_layers, p_tokens, (double)p_mem, engine_of(o)->act_size,
		    engine_of(o)->hidden_multiple);
}

/* about 3 runs (full, compute, comm) of warm-up + steps, at a nominal 20 GFLOP/s a rank and 1 Gb/s */
static double trainstep_estimate(const struct cc_options *o)
{
	struct ts_shape s;
	double n = o->plan_nodes * (o->plan_rpn > 0 ? o->plan_rpn : 1), comm;

	shape_for(o, &s);
	comm = n > 1 ? 2 * (n - 1) / n * 4 * s.params / ((o->plan_gbps > 0 ? o->plan_gbps : 1) * 1e9 / 8) : 0;
	/* GPUs: bf16 products at a nominal 200 TFLOP/s */
	return p_seconds * 1.1 + (p_steps + p_warmup) * (2 * 6 * s.params * s.T /
		(engine_of(o) == &ts_gpu ? 200e12 : 20e9) + 2 * comm) + 2;
}

#define SUMMARY "a data-parallel training step: matmuls of the workload's shape, gradient buckets " \
		"all-reduced under the backward; step, compute, exposed comm, overlap, stragglers"

/* CCPROBE_FAULT=slow:RANK[:FACTOR]: that rank's compute is FACTOR (default 3) times as long (tests) */
static double slow_factor(int rank)
{
	const char *f = getenv("CCPROBE_FAULT");
	double x = 3;
	int r;

	if (!f || sscanf(f, "slow:%d:%lf", &r, &x) < 1 || r != rank)
		return 1;
	return x > 1 ? x : 1;
}

static json_t *rank_array(const double *v, int n)
{
	json_t *a = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_real(v[i]));
	return a;
}

static int argmax(const double *v, int n)
{
	int k = 0;

	for (int i = 1; i < n; i++)
		if (v[i] > v[k])
			k = i;
	return k;
}

static json_t *stats_of(const double *v, int n)
{
	struct stats st;

	if (stats_compute(v, (size_t)n, &st))
		return json_null();
	return run_stats_json(&st, 1);
}

static const char *const mode_names[] = { "step", "compute", "comm" };

static json_t *base_rec(const struct ts *t, const struct ts_engine *en, const char *test)
{
	json_t *r = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:I, s:I, s:I, s:f, s:f, s:f, s:I, s:I, s:I, "
			      "s:s, s:s, s:s}",
			      "kind", "probe", "name", "trainstep", "test", test, "backend", en->backend,
			      "dtype", en->dtype, "ranks", t->mpi->size, "nodes", t->mpi->nnodes,
			      "hidden", (json_int_t)t->sh.h, "layers", (json_int_t)t->sh.L,
			      "tokens_per_rank", (json_int_t)t->sh.T, "params", t->sh.params,
			      "params_asked", t->sh.params_asked, "scale", t->sh.scale,
			      "bucket_bytes", (json_int_t)t->bucket_bytes, "buckets", (json_int_t)t->nb,
			      "grad_bytes", (json_int_t)(4 * (size_t)t->sh.params), "grad_dtype", "float",
			      "compute", en->compute, "comm", en == &ts_gpu ?
			      "ncclAllReduce on a communication stream, each bucket after its event" :
			      "MPI_Allreduce on a communication thread, each bucket when written");
	const char *tr = en->transport ? en->transport() : NULL;

	if (tr)
		json_object_set_new(r, "transport", json_string(tr));
	return r;
}

/*
 * Which rank's links the reductions wait for: n - 1 shifts of a ring, in
 * shift s every rank sends one bucket (at most 1 MiB) to rank + s and
 * receives one from rank - s at once, timed at the receiver (the median of
 * 3). pair[r * n + p] gets the seconds of the transfer p -> r (rank 0).
 * Host memory, MPI: a slow host's every transfer is slow, each other
 * rank's only those with it. Collective; 0 or -1 on no memory.
 */
static int link_check(struct ts *t, double *pair)
{
	struct mpictx *mpi = t->mpi;
	int n = mpi->size, cnt = (int)fmin((double)t->bucket_el, 262144.0);
	float *sb = calloc((size_t)cnt, sizeof(float)), *rb = calloc((size_t)cnt, sizeof(float));
	double *mine = calloc((size_t)n, sizeof(double)), tr[3];
	int rc = sb && rb && mine ? 0 : -1, all_ok;

	MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, mpi->world);
	all_ok = rc == 0;
	for (int s = 1; all_ok && s < n; s++) {
		int to = (mpi->rank + s) % n, from = (mpi->rank - s + n) % n;

		for (int k = 0; k < 3; k++) {
			double t0;

			MPI_Barrier(mpi->world);
			t0 = timer_now();
			MPI_Sendrecv(sb, cnt, MPI_FLOAT, to, 71, rb, cnt, MPI_FLOAT, from, 71, mpi->world,
				     MPI_STATUS_IGNORE);
			tr[k] = timer_now() - t0;
		}
		mine[from] = stats_median(tr, 3);
	}
	if (all_ok)
		MPI_Gather(mine, n, MPI_DOUBLE, pair, n, MPI_DOUBLE, 0, mpi->world);
	free(sb);
	free(rb);
	free(mine);
	return all_ok ? 0 : -1;
}

/*
 * The rank whose links are slow: a slow host's every transfer is slow, each
 * other rank (with 3 ranks or more) has one that does not involve it. For
 * each rank its fastest transfer, sent or received; named when that is
 * above twice every other rank's fastest. -1 when none stands out.
 */
static int slow_links(const double *pair, int n, double *mine, double *others)
{
	int top = 0;
	double *best = calloc((size_t)n, sizeof(double));

	if (n < 3 || !best) {
		free(best);
		return -1;
	}
	for (int r = 0; r < n; r++) {
		best[r] = INFINITY;
		for (int p = 0; p < n; p++)
			if (p != r)
				best[r] = fmin(best[r], fmin(pair[r * n + p], pair[p * n + r]));
		if (best[r] > best[top])
			top = r;
	}
	*mine = best[top];
	*others = 0;
	for (int r = 0; r < n; r++)
		if (r != top)
			*others = fmax(*others, best[r]);
	free(best);
	return *mine > 2 * *others ? top : -1;
}

static int trainstep_run(struct cc_run *run)
{
	struct mpictx *mpi = run->mpi;
	const struct ts_engine *en = engine_of(run->opt);
	struct ts t = { .run = run, .mpi = mpi };
	int n = mpi->size, total = p_warmup + p_steps, failed = 0, rc = CC_EXIT_OK, cap = p_steps, ns = 0;
	double t_timed = 0;
	double *all = NULL, *rank_step = NULL, *rank_ready = NULL, *v[3] = { 0 }, *ready_k = NULL, *pair = NULL;
	double flops;
	int *last_ready = NULL;
	char why[400] = "";
	int outcome;

	if (en->missing) {
		run_skip(run, "probe", "trainstep", en->missing);
		return CC_EXIT_OK;
	}
	shape_for(run->opt, &t.sh);
	t.bucket_bytes = p_bucket;
	t.bucket_el = p_bucket / sizeof(float) ? p_bucket / sizeof(float) : 1;
	t.nb = (long)(((size_t)t.sh.params + t.bucket_el - 1) / t.bucket_el);
	t.slow = slow_factor(mpi->rank);
	outcome = en->open(&t, why, sizeof(why));
	outcome = run_agree(mpi->world, outcome, mpi->host, why, sizeof(why));
	if (!outcome) {
		why[0] = '\0';
		outcome = en->start(&t, why, sizeof(why));
		outcome = run_agree(mpi->world, outcome, mpi->host, why, sizeof(why));
	}
	if (outcome) {
		if (outcome > 0)
			run_skip(run, "probe", "trainstep", why);
		else
			run_error(run, "probe", "trainstep", why);
		en->close(&t);
		return outcome > 0 ? CC_EXIT_OK : CC_EXIT_RUNTIME;
	}
	flops = 6.0 * t.sh.params * t.sh.T;
	if (mpi->rank == 0) {
		all = calloc((size_t)n * 2, sizeof(double));
		rank_step = calloc((size_t)n * cap, sizeof(double));
		rank_ready = calloc((size_t)n * cap, sizeof(double));
		ready_k = calloc((size_t)n, sizeof(double));
		last_ready = calloc((size_t)n, sizeof(int));
		pair = calloc((size_t)n * n, sizeof(double));
		for (int m = 0; m < 3; m++)
			v[m] = calloc((size_t)cap, sizeof(double));
		if (!all || !rank_step || !rank_ready || !ready_k || !last_ready || !pair || !v[0] || !v[1] || !v[2])
			MPI_Abort(mpi->world, CC_EXIT_RUNTIME);
	}
	if (mpi->rank == 0 && !run->opt->quiet) {
		char sz[32];

		printf("# trainstep (%s): hidden %ld, %ld layers, %ld tokens per rank, %.0f parameters (scale %.3g), "
		       "%ld bucket(s) of %s on %d rank(s)\n# %6s %12s %12s %12s %9s %10s\n", en->compute, t.sh.h,
		       t.sh.L, t.sh.T, t.sh.params, t.sh.scale, t.nb, size_human((double)p_bucket, sz, sizeof(sz)), n,
		       "step", "step_s", "compute_s", "comm_s", "overlap", "GFLOP/s");
	}
	for (int i = 0; !failed; i++) {
		double got = 0, want = 0;
		/* rank 0 says whether to go on: --train-steps, then --train-seconds of timed steps */
		int go = i < total || (p_seconds > 0 && ns < TS_MAX_STEPS && timer_now() - t_timed < p_seconds);

		MPI_Bcast(&go, 1, MPI_INT, 0, mpi->world);
		if (!go)
			break;
		if (i == p_warmup)
			t_timed = timer_now();
		if (mpi->rank == 0 && i >= p_warmup && ns == cap) {
			cap *= 2;
			rank_step = realloc(rank_step, (size_t)n * cap * sizeof(double));
			rank_ready = realloc(rank_ready, (size_t)n * cap * sizeof(double));
			for (int m = 0; m < 3; m++)
				v[m] = realloc(v[m], (size_t)cap * sizeof(double));
			if (!rank_step || !rank_ready || !v[0] || !v[1] || !v[2])
				MPI_Abort(mpi->world, CC_EXIT_RUNTIME);
		}

		for (int m = 0; m < 3 && !failed; m++) {
			double mine[2] = { 0, 0 }, tmax, tot[2], wrong, wrong_any;

			watchdog_arm("trainstep", json_pack("{s:s, s:s, s:s, s:i, s:I}", "kind", "probe", "probe",
				     "trainstep", "test", mode_names[m], "step", i, "buckets", (json_int_t)t.nb));
			mpictx_nap_barrier(mpi->world);
			watchdog_fault_point(mpi->rank, (size_t)(4 * t.sh.params));
			if (en->step(&t, (enum ts_mode)m, &mine[0], why, sizeof(why)))
				failed = 1;
			mine[1] = t.ready;
			if (m == TS_FULL && !failed && en->last_sum(&t, &got, why, sizeof(why)))
				failed = 1;
			/* done, but armed while waiting for the others: a rank hung in its step is named */
			watchdog_done();
			MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, mpi->world);
			watchdog_disarm();
			if (failed) {
				if (!why[0])
					snprintf(why, sizeof(why), "another rank failed in the %s of step %d",
						 mode_names[m], i);
				break;
			}
			MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, mpi->world);
			if (m == TS_FULL) {
				/* the last bucket: its reduced sum against every rank's local sums; rounding is far
				 * below 1e-3 of the sum of magnitudes (bf16 products on GPUs, fp32 sums) */
				MPI_Allreduce(t.chk_local, tot, 2, MPI_DOUBLE, MPI_SUM, mpi->world);
				want = tot[0];
				wrong = !(fabs(got - tot[0]) <= 1e-3 * tot[1] + 1e-30);
				MPI_Allreduce(&wrong, &wrong_any, 1, MPI_DOUBLE, MPI_MAX, mpi->world);
				if (wrong_any > 0) {
					failed = 1;
					snprintf(why, sizeof(why), "step %d: the last bucket's reduced sum %.9g differs "
						 "from the ranks' local sums %.9g", i, got, want);
					break;
				}
			}
			if (mpi->rank || i < p_warmup)
				continue;
			tmax = 0;
			for (int r = 0; r < n; r++)
				tmax = fmax(tmax, all[2 * r]);
			v[m][ns] = tmax;
			if (m == TS_FULL)
				for (int r = 0; r < n; r++) {
					rank_step[(size_t)ns * n + r] = all[2 * r];
					rank_ready[(size_t)ns * n + r] = all[2 * r + 1];
				}
		}
		if (failed || mpi->rank || i < p_warmup)
			continue;
		{
			int k = ns++, slowest;
			double st = v[TS_FULL][k], co = v[TS_COMPUTE][k], cm = v[TS_COMM][k];
			/* a step quicker than compute alone (noise between the two) exposes nothing: never negative */
			double ex = fmax(0, st - co);
			json_t *rec = base_rec(&t, en, "step"), *rs = json_array(), *rr = json_array();

			for (int r = 0; r < n; r++) {
				json_array_append_new(rs, json_real(rank_step[(size_t)k * n + r]));
				json_array_append_new(rr, json_real(rank_ready[(size_t)k * n + r]));
				ready_k[r] = rank_ready[(size_t)k * n + r];
			}
			slowest = argmax(ready_k, n);
			last_ready[slowest]++;
			json_object_set_new(rec, "step", json_integer(k));
			json_object_set_new(rec, "step_s", json_real(st));
			json_object_set_new(rec, "compute_s", json_real(co));
			json_object_set_new(rec, "comm_alone_s", json_real(cm));
			json_object_set_new(rec, "exposed_s", json_real(ex));
			json_object_set_new(rec, "overlap", cm > 0 ? json_real(fmax(0, 1 - ex / cm)) : json_null());
			json_object_set_new(rec, "flops_per_rank", json_real(flops / st));
			json_object_set_new(rec, "rank_step_s", rs);
			json_object_set_new(rec, "rank_ready_s", rr);
			json_object_set_new(rec, "last_ready_rank", json_integer(slowest));
			json_object_set_new(rec, "last_ready_host", json_string(mpi->hosts[mpi->rank_node[slowest]]));
			json_object_set_new(rec, "check", json_pack("{s:s, s:f, s:f}", "bucket", "last", "sum", got,
								     "expected", want));
			run_record(run, "measurement", rec);
			if (!run->opt->quiet)
				printf("  %6d %12.6f %12.6f %12.6f %9.3f %10.3f\n", k, st, co, cm,
				       cm > 0 ? fmax(0, 1 - ex / cm) : NAN, flops / st / 1e9);
		}
	}
	if (run_phase_end(run, "trainstep", failed, why))
		rc = CC_EXIT_FAIL;
	/* the links the reductions cross, when the steps ran (every rank, or none) */
	if (!failed && n >= 3) {
		watchdog_arm("trainstep", json_pack("{s:s, s:s, s:s}", "kind", "probe", "probe", "trainstep",
						     "test", "links"));
		if (link_check(&t, pair))
			pair[0] = NAN;
		watchdog_disarm();
	}
	if (!failed && mpi->rank == 0) {
		json_t *rec = base_rec(&t, en, "summary"), *waits = json_null();
		double med[3], *ex = calloc((size_t)ns, sizeof(double)), *ov = calloc((size_t)ns, sizeof(double));
		double *col = calloc((size_t)ns, sizeof(double)), rmed[n], others, lk_mine = 0, lk_others = 0;
		int top = 0, straggler = -1, waits_compute, slow_link = n >= 3 && isfinite(pair[0]) ?
			slow_links(pair, n, &lk_mine, &lk_others) : -1;

		if (!ex || !ov || !col)
			MPI_Abort(mpi->world, CC_EXIT_RUNTIME);
		for (int m = 0; m < 3; m++)
			med[m] = stats_median(v[m], (size_t)ns);
		for (int k = 0; k < ns; k++) {
			ex[k] = fmax(0, v[TS_FULL][k] - v[TS_COMPUTE][k]);
			ov[k] = v[TS_COMM][k] > 0 ? fmax(0, 1 - ex[k] / v[TS_COMM][k]) : 0;
		}
		for (int r = 0; r < n; r++) {
			for (int k = 0; k < ns; k++)
				col[k] = rank_ready[(size_t)k * n + r];
			rmed[r] = stats_median(col, (size_t)ns);
			if (last_ready[r] > last_ready[top])
				top = r;
		}
		/* a straggler: last ready in at least 3/4 of the steps, its median ready 1.2x the others' */
		others = 0;
		for (int r = 0; r < n; r++)
			if (r != top)
				others = fmax(others, rmed[r]);
		if (n > 1 && ns >= 3 && last_ready[top] * 4 >= ns * 3 && rmed[top] > 1.2 * others)
			straggler = top;
		json_object_set_new(rec, "steps", json_integer(ns));
		json_object_set_new(rec, "warmup", json_integer(p_warmup));
		json_object_set_new(rec, "step_s", json_real(med[TS_FULL]));
		json_object_set_new(rec, "compute_s", json_real(med[TS_COMPUTE]));
		json_object_set_new(rec, "comm_alone_s", json_real(med[TS_COMM]));
		json_object_set_new(rec, "exposed_s", json_real(stats_median(ex, (size_t)ns)));
		json_object_set_new(rec, "overlap", json_real(stats_median(ov, (size_t)ns)));
		json_object_set_new(rec, "flops_per_rank", json_real(flops / med[TS_FULL]));
		json_object_set_new(rec, "compute_flops_per_rank", json_real(flops / med[TS_COMPUTE]));
		json_object_set_new(rec, "step_stats_s", stats_of(v[TS_FULL], ns));
		json_object_set_new(rec, "compute_stats_s", stats_of(v[TS_COMPUTE], ns));
		json_object_set_new(rec, "comm_stats_s", stats_of(v[TS_COMM], ns));
		json_object_set_new(rec, "step_series_s", rank_array(v[TS_FULL], ns));
		json_object_set_new(rec, "rank_ready_s", rank_array(rmed, n));
		json_object_set_new(rec, "straggler", straggler < 0 ? json_null() :
			json_pack("{s:i, s:s, s:i, s:f, s:f}", "rank", straggler, "host",
				  mpi->hosts[mpi->rank_node[straggler]], "last_ready_steps", last_ready[straggler],
				  "ready_s", rmed[straggler], "others_ready_s", others));
		if (straggler >= 0)
			json_object_set_new(rec, "straggler_host", json_string(mpi->hosts[mpi->rank_node[straggler]]));
		if (n >= 3 && isfinite(pair[0])) {
			json_t *m = json_array();

			for (int r = 0; r < n; r++)
				json_array_append_new(m, rank_array(pair + (size_t)r * n, n));
			json_object_set_new(rec, "link_s", json_pack("{s:o, s:I, s:s}", "matrix", m, "bytes",
				(json_int_t)(4 * fmin((double)t.bucket_el, 262144.0)), "about",
				"MPI on host memory, [receiver][sender], median of 3, all ranks at once per ring shift"));
		}
		/* the rank the step waits for: its compute (ready last), else its links. With both seen, the
		 * compute straggler only when it is late by a tenth of the step or more: a rank ready a few
		 * milliseconds after the others (a core shared on a loaded host) is not what a step of
		 * seconds on a slow link waits for */
		waits_compute = straggler >= 0 && (slow_link < 0 || rmed[straggler] - others >= 0.1 * med[TS_FULL]);
		if (waits_compute)
			waits = json_pack("{s:i, s:s, s:s, s:f, s:f}", "rank", straggler, "host",
					  mpi->hosts[mpi->rank_node[straggler]], "cause", "compute",
					  "rank_s", rmed[straggler], "others_s", others);
		else if (slow_link >= 0)
			waits = json_pack("{s:i, s:s, s:s, s:f, s:f}", "rank", slow_link, "host",
					  mpi->hosts[mpi->rank_node[slow_link]], "cause", "network",
					  "rank_s", lk_mine, "others_s", lk_others);
		json_object_set_new(rec, "waits_for", waits);
		if (en == &ts_host)
			json_object_set_new(rec, "blas_threads", json_integer(ts_blas_threads));
		run_record(run, "measurement", rec);
		if (!run->opt->quiet) {
			printf("# trainstep median: step %.6f s, compute %.6f s, comm alone %.6f s, overlap %.3f, "
			       "%.3f GFLOP/s per rank\n", med[TS_FULL], med[TS_COMPUTE], med[TS_COMM],
			       stats_median(ov, (size_t)ns), flops / med[TS_FULL] / 1e9);
			if (waits_compute)
				printf("# the step waits for rank %d on %s: its compute (ready %.6f s, the others "
				       "by %.6f s)\n", straggler, mpi->hosts[mpi->rank_node[straggler]], rmed[straggler],
				       others);
			else if (slow_link >= 0)
				printf("# the step waits for rank %d on %s: its links (a transfer %.6f s, the "
				       "others' %.6f s)\n", slow_link, mpi->hosts[mpi->rank_node[slow_link]], lk_mine,
				       lk_others);
		}
		free(ex);
		free(ov);
		free(col);
	}
	free(all);
	free(rank_step);
	free(rank_ready);
	free(ready_k);
	free(last_ready);
	free(pair);
	for (int m = 0; m < 3; m++)
		free(v[m]);
	en->close(&t);
	return rc;
}

const struct probe probe_trainstep = {
	.name = "trainstep",
	.summary = SUMMARY,
#if !defined(HAVE_OPENBLAS) && !(defined(HAVE_CUDA) && defined(HAVE_CUBLASLT) && defined(HAVE_NCCL))
	.missing = "built without OpenBLAS (libopenblas-dev: the host step) and without CUDA, cuBLASLt and "
		   "NCCL (the GPU step)",
#endif
	.params = trainstep_params,
	.phase = PHASE_TRAIN,
	.estimate = trainstep_estimate,
	.check = trainstep_check,
	.run = trainstep_run,
};
