/*
 * trainstep: one data-parallel training step of a dense transformer on
 * every rank, repeated, as a proxy for the real one (docs/estimate.md,
 * "Measured against a real step"):
 *  - each of L layers holds 12 h^2 parameters as four fp32 matrices (the
 *    attention's QKV h x 3h and output h x h, the MLP's h x 4h and 4h x h);
 *    the forward is 4 matmuls a layer over T tokens, the backward 8 (each
 *    weight's gradient and each input's): 6 x params x T FLOPs a step, the
 *    estimate's count. Host matmuls through OpenBLAS (cblas_sgemm), opened
 *    at run time;
 *  - the gradients lie in one buffer in the order the backward produces
 *    them (last layer first), cut into buckets of --train-bucket bytes; a
 *    bucket's MPI_Iallreduce starts as soon as its last gradient is written,
 *    and MPI is polled between matmuls (MPI_Testall) so the reductions
 *    progress under the backward, as PyTorch DDP's buckets do;
 *  - the step ends when every bucket is reduced; the last bucket is checked
 *    (its reduced sum against the sum of every rank's local sums).
 * Each step runs three ways, interleaved, every one timed from a common
 * start to the slowest rank's end: the full step, the same step with the
 * reductions skipped (compute alone) and the buckets' reductions alone
 * (comm alone), one after the other. Per step: step_s, compute_s, exposed_s
 * = step - compute, overlap = 1 - exposed / comm_alone, FLOP/s per rank,
 * each rank's step and ready time (its last bucket started); a summary
 * record with the medians, the spread and the straggler (the rank last
 * ready in most steps, when its ready time is clearly above the others').
 * The watchdog covers each step: a hung bucket ends as a timeout naming
 * the ranks. GPUs (-B nccl) are not covered yet: the probe skips there.
 */
#include "probe.h"
#include "../core/log.h"
#include "../core/size.h"
#include "../core/stats.h"
#include "../core/timer.h"
#include "../core/watchdog.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double p_params = 1e6;
static int p_hidden = 0, p_layers = 4, p_tokens = 512, p_steps = 8, p_warmup = 2, p_threads = 1;
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
	{ "train-threads", CC_PARAM_INT, &p_threads, "trainstep: BLAS threads per rank [1]" },
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
	if (p_warmup < 0 || p_warmup > 1000)
		return options_fail(err, len, "--train-warmup %d: expected 0 to 1000", p_warmup);
	if (p_threads < 1 || p_threads > 1024)
		return options_fail(err, len, "--train-threads %d: expected 1 to 1024", p_threads);
	if (p_bucket < 4 || p_bucket > ((size_t)1 << 34))
		return options_fail(err, len, "--train-bucket %zu: expected 4 B to 16 GiB", p_bucket);
	if (p_mem < ((size_t)1 << 20))
		return options_fail(err, len, "--train-mem %zu: expected at least 1 MiB", p_mem);
	return 0;
}

/* the shape run: hidden from params unless given, then scaled down to fit --train-mem */
struct shape {
	long h, L, T;
	double params, params_asked, scale;  /* run / asked */
	double bytes;                        /* one rank's weights, gradients and activations */
};

static double shape_bytes(long h, long L, long T)
{
	/* weights + gradients 2 x 12 h^2 L, activations saved (x, q, a, u: 9 h T) a layer, scratch 8 h T */
	return 4.0 * (24.0 * h * h * L + 9.0 * h * T * L + 8.0 * h * T);
}

static void shape_of(struct shape *s)
{
	s->L = p_layers;
	s->T = p_tokens;
	s->h = p_hidden ? p_hidden : (long)fmax(1, floor(sqrt(p_params / (12.0 * p_layers)) + 0.5));
	s->params_asked = p_hidden ? 12.0 * s->h * s->h * s->L : p_params;
	while (s->h > 8 && shape_bytes(s->h, s->L, s->T) > (double)p_mem)
		s->h = (long)(s->h * 0.9);
	s->params = 12.0 * s->h * s->h * s->L;
	s->scale = s->params / s->params_asked;
	s->bytes = shape_bytes(s->h, s->L, s->T);
}

/* about 3 runs (full, compute, comm) of warm-up + steps, at a nominal 20 GFLOP/s a rank and 1 Gb/s */
static double trainstep_estimate(const struct cc_options *o)
{
	struct shape s;
	double n = o->plan_nodes * (o->plan_rpn > 0 ? o->plan_rpn : 1), comm;

	shape_of(&s);
	comm = n > 1 ? 2 * (n - 1) / n * 4 * s.params / ((o->plan_gbps > 0 ? o->plan_gbps : 1) * 1e9 / 8) : 0;
	return (p_steps + p_warmup) * (2 * 6 * s.params * s.T / 20e9 + 2 * comm) + 2;
}

#define SUMMARY "a data-parallel training step: matmuls of the workload's shape, gradient buckets " \
		"all-reduced under the backward; step, compute, exposed comm, overlap, stragglers"

#ifdef HAVE_OPENBLAS

#include <cblas.h>
#include <dlfcn.h>

/* OpenBLAS is opened when the probe runs, as gemm opens cuBLASLt: every other ccprobe skips its load */
static __typeof__(cblas_sgemm) *bl_sgemm;
static void (*bl_threads)(int);

static int blas_open(char *why, size_t len)
{
	static void *h;

	if (h)
		return 0;
	if (!(h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL))) {
		snprintf(why, len, "cannot load libopenblas.so.0: %s", dlerror());
		return -1;
	}
	*(void **)&bl_sgemm = dlsym(h, "cblas_sgemm");
	*(void **)&bl_threads = dlsym(h, "openblas_set_num_threads");
	if (!bl_sgemm) {
		snprintf(why, len, "libopenblas.so.0 has no cblas_sgemm");
		dlclose(h);
		h = NULL;
		return -1;
	}
	if (bl_threads)
		bl_threads(p_threads);
	return 0;
}

enum mode { FULL, COMPUTE, COMM };
static const char *const mode_names[] = { "step", "compute", "comm" };

struct ts {
	struct cc_run *run;
	struct mpictx *mpi;
	struct shape sh;
	float *w, *g;            /* weights and gradients, [params] each; g in backward order */
	float *x, *q, *a, *u;    /* saved activations: [L+1][T h], [L][T 3h], [L][T h], [L][T 4h] */
	float *dx, *du, *da, *dn; /* scratch */
	long nb;                 /* buckets */
	size_t bucket_el;        /* elements of a full bucket */
	MPI_Request *req;
	long started, done_el;   /* buckets started; gradient elements written */
	double t0, ready;        /* step start; this rank's last bucket start */
	double chk_local[2];     /* the last bucket: sum and sum of |.| before the reduction */
	int polls;
};

/* weight offsets of layer l: Wqkv [h x 3h], Wo [h x h], W1 [h x 4h], W2 [4h x h] */
static float *wq(struct ts *t, long l) { return t->w + l * 12 * t->sh.h * t->sh.h; }
static float *wo(struct ts *t, long l) { return wq(t, l) + 3 * t->sh.h * t->sh.h; }
static float *w1(struct ts *t, long l) { return wo(t, l) + t->sh.h * t->sh.h; }
static float *w2(struct ts *t, long l) { return w1(t, l) + 4 * t->sh.h * t->sh.h; }

static double slow = 1;   /* CCPROBE_FAULT=slow:RANK[:FACTOR]: this rank's compute is slow x as long */

static void spin_for(double s)
{
	double end = timer_now() + s;

	while (timer_now() < end)
		;
}

/* C[m x n] = (beta) C + op(A) op(B), row-major */
static void mm(int ta, int tb, long m, long n, long k, const float *A, const float *B, float beta, float *C)
{
	double t0 = slow > 1 ? timer_now() : 0;

	bl_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m,
		 (int)n, (int)k, 1.0f, A, ta ? (int)m : (int)k, B, tb ? (int)k : (int)n, beta, C, (int)n);
	if (slow > 1)
		spin_for((slow - 1) * (timer_now() - t0));
}

static size_t bucket_len(struct ts *t, long b)
{
	size_t total = (size_t)t->sh.params, off = (size_t)b * t->bucket_el;

	return off + t->bucket_el <= total ? t->bucket_el : total - off;
}

static int start_bucket(struct ts *t, long b)
{
	float *p = t->g + (size_t)b * t->bucket_el;
	size_t n = bucket_len(t, b);

	if (b == t->nb - 1) {
		t->chk_local[0] = t->chk_local[1] = 0;
		for (size_t i = 0; i < n; i++) {
			t->chk_local[0] += p[i];
			t->chk_local[1] += fabs(p[i]);
		}
		t->ready = timer_now() - t->t0;
	}
	return MPI_Iallreduce(MPI_IN_PLACE, p, (int)n, MPI_FLOAT, MPI_SUM, t->mpi->world, &t->req[b]);
}

static int poll_mpi(struct ts *t, int *flag);

/* n more gradient elements written: start the buckets now complete, and let MPI progress */
static int grads_written(struct ts *t, enum mode m, size_t n)
{
	int flag;

	t->done_el += (long)n;
	if (m != FULL)
		return 0;
	while (t->started < t->nb &&
	       (size_t)t->started * t->bucket_el + bucket_len(t, t->started) <= (size_t)t->done_el)
		if (start_bucket(t, t->started++))
			return -1;
	return poll_mpi(t, &flag);
}

static int poll_mpi(struct ts *t, int *flag)
{
	*flag = 1;
	if (!t->started)
		return 0;
	t->polls++;
	return MPI_Testall((int)t->started, t->req, flag, MPI_STATUSES_IGNORE) == MPI_SUCCESS ? 0 : -1;
}

static void layer_forward(struct ts *t, long l)
{
	long h = t->sh.h, T = t->sh.T;
	float *x = t->x + l * T * h;

	mm(0, 0, T, 3 * h, h, x, wq(t, l), 0, t->q + l * T * 3 * h);
	mm(0, 0, T, h, h, x, wo(t, l), 0, t->a + l * T * h);
	mm(0, 0, T, 4 * h, h, t->a + l * T * h, w1(t, l), 0, t->u + l * T * 4 * h);
	mm(0, 0, T, h, 4 * h, t->u + l * T * 4 * h, w2(t, l), 0, x + T * h);
}

/* one step of mode m; returns 0 or -1 when MPI failed */
static int step(struct ts *t, enum mode m)
{
	long h = t->sh.h, T = t->sh.T, L = t->sh.L;
	float *g = t->g;
	int flag = 0;

	t->started = 0;
	t->done_el = 0;
	t->ready = 0;
	t->t0 = timer_now();
	if (m == COMM) {
		/* the same buckets, reduced one after the other with nothing to hide under */
		for (long b = 0; b < t->nb; b++)
			if (start_bucket(t, b) || MPI_Wait(&t->req[b], MPI_STATUS_IGNORE))
				return -1;
		t->ready = 0;
		return 0;
	}
	for (long l = 0; l < L; l++)
		layer_forward(t, l);
	/* the loss's gradient: the output itself, scaled */
	memcpy(t->dx, t->x + L * T * h, sizeof(float) * T * h);
	for (long l = L - 1; l >= 0; l--) {
		float *x = t->x + l * T * h, *q = t->q + l * T * 3 * h, *a = t->a + l * T * h,
		      *u = t->u + l * T * 4 * h;
		float *gW2 = g, *gW1 = gW2 + 4 * h * h, *gWo = gW1 + 4 * h * h, *gWq = gWo + h * h;

		mm(1, 0, 4 * h, h, T, u, t->dx, 0, gW2);            /* dW2 = u^T dx */
		if (grads_written(t, m, 4 * h * h))
			return -1;
		mm(0, 1, T, 4 * h, h, t->dx, w2(t, l), 0, t->du);   /* du = dx W2^T */
		mm(1, 0, h, 4 * h, T, a, t->du, 0, gW1);            /* dW1 = a^T du */
		if (grads_written(t, m, 4 * h * h))
			return -1;
		mm(0, 1, T, h, 4 * h, t->du, w1(t, l), 0, t->da);   /* da = du W1^T */
		mm(1, 0, h, h, T, x, t->da, 0, gWo);                /* dWo = x^T da */
		if (grads_written(t, m, h * h))
			return -1;
		mm(1, 0, h, 3 * h, T, x, q, 0, gWq);                /* dWqkv = x^T dq (dq: q) */
		if (grads_written(t, m, 3 * h * h))
			return -1;
		mm(0, 1, T, h, h, t->da, wo(t, l), 0, t->dn);       /* dx = da Wo^T + dq Wqkv^T */
		mm(0, 1, T, h, 3 * h, q, wq(t, l), 1, t->dn);
		/* keep the synthetic gradient's scale: 1/sqrt(2) a layer (two paths add) */
		for (long i = 0; i < T * h; i++)
			t->dx[i] = t->dn[i] * 0.70710678f;
		if (m == FULL && poll_mpi(t, &flag))
			return -1;
		g = gWq + 3 * h * h;
	}
	if (m == FULL) {
		/* the last, partial bucket, then every reduction */
		while (t->started < t->nb)
			if (start_bucket(t, t->started++))
				return -1;
		if (MPI_Waitall((int)t->nb, t->req, MPI_STATUSES_IGNORE))
			return -1;
	} else {
		t->ready = timer_now() - t->t0;
	}
	return 0;
}

/* uniform in [-r, r], a rank-seeded generator (xorshift) */
static void fill(float *v, size_t n, float r, unsigned long long *s)
{
	for (size_t i = 0; i < n; i++) {
		*s ^= *s << 13;
		*s ^= *s >> 7;
		*s ^= *s << 17;
		v[i] = r * (float)((double)(*s >> 11) / 9007199254740992.0 * 2 - 1);
	}
}

static int ts_alloc(struct ts *t)
{
	long h = t->sh.h, T = t->sh.T, L = t->sh.L;
	size_t P = (size_t)t->sh.params;
	unsigned long long seed = 0x9e3779b97f4a7c15ULL ^ (unsigned long long)(t->mpi->rank + 1) * 7919;

	t->w = malloc(sizeof(float) * P);
	t->g = calloc(P, sizeof(float));
	t->x = malloc(sizeof(float) * (size_t)((L + 1) * T * h));
	t->q = malloc(sizeof(float) * (size_t)(L * T * 3 * h));
	t->a = malloc(sizeof(float) * (size_t)(L * T * h));
	t->u = malloc(sizeof(float) * (size_t)(L * T * 4 * h));
	t->dx = malloc(sizeof(float) * (size_t)(T * h));
	t->du = malloc(sizeof(float) * (size_t)(T * 4 * h));
	t->da = malloc(sizeof(float) * (size_t)(T * h));
	t->dn = malloc(sizeof(float) * (size_t)(T * h));
	t->bucket_el = p_bucket / sizeof(float);
	if (!t->bucket_el)
		t->bucket_el = 1;
	t->nb = (long)((P + t->bucket_el - 1) / t->bucket_el);
	t->req = calloc((size_t)t->nb, sizeof(MPI_Request));
	if (!t->w || !t->g || !t->x || !t->q || !t->a || !t->u || !t->dx || !t->du || !t->da || !t->dn ||
	    !t->req)
		return -1;
	/* variance-kept weights (uniform, std 1/sqrt(fan-in)); the same on every rank, inputs per rank */
	{
		unsigned long long ws = 0x243f6a8885a308d3ULL;

		for (long l = 0; l < L; l++) {
			fill(wq(t, l), (size_t)(3 * h * h), (float)sqrt(3.0 / h), &ws);
			fill(wo(t, l), (size_t)(h * h), (float)sqrt(3.0 / h), &ws);
			fill(w1(t, l), (size_t)(4 * h * h), (float)sqrt(3.0 / h), &ws);
			fill(w2(t, l), (size_t)(4 * h * h), (float)sqrt(3.0 / (4 * h)), &ws);
		}
	}
	fill(t->x, (size_t)(T * h), 1.0f, &seed);
	return 0;
}

static void ts_free(struct ts *t)
{
	free(t->w);
	free(t->g);
	free(t->x);
	free(t->q);
	free(t->a);
	free(t->u);
	free(t->dx);
	free(t->du);
	free(t->da);
	free(t->dn);
	free(t->req);
}

/* the check of the last bucket: its reduced sum against every rank's local sums; 0 ok, 1 wrong */
static int check_last(struct ts *t, double *got_out, double *want_out)
{
	size_t n = bucket_len(t, t->nb - 1);
	const float *p = t->g + (size_t)(t->nb - 1) * t->bucket_el;
	double got = 0, tot[2], wrong_any;
	double wrong;

	for (size_t i = 0; i < n; i++)
		got += p[i];
	MPI_Allreduce(t->chk_local, tot, 2, MPI_DOUBLE, MPI_SUM, t->mpi->world);
	/* fp32 sums in another order: a relative error far below this is rounding, not corruption */
	wrong = !(fabs(got - tot[0]) <= 1e-3 * tot[1] + 1e-30);
	MPI_Allreduce(&wrong, &wrong_any, 1, MPI_DOUBLE, MPI_MAX, t->mpi->world);
	*got_out = got;
	*want_out = tot[0];
	return wrong_any > 0;
}

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

static json_t *base_rec(struct ts *t, const char *test)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:I, s:I, s:I, s:f, s:f, s:f, s:I, s:I, s:I, s:s}",
			 "kind", "probe", "name", "trainstep", "test", test, "backend", "mpi", "dtype", "float",
			 "ranks", t->mpi->size, "nodes", t->mpi->nnodes, "hidden", (json_int_t)t->sh.h,
			 "layers", (json_int_t)t->sh.L, "tokens_per_rank", (json_int_t)t->sh.T,
			 "params", t->sh.params, "params_asked", t->sh.params_asked, "scale", t->sh.scale,
			 "bucket_bytes", (json_int_t)p_bucket, "buckets", (json_int_t)t->nb,
			 "grad_bytes", (json_int_t)(4 * (size_t)t->sh.params), "compute", "host: OpenBLAS sgemm");
}

static int trainstep_run(struct cc_run *run)
{
	struct mpictx *mpi = run->mpi;
	struct ts t = { .run = run, .mpi = mpi };
	int n = mpi->size, total = p_warmup + p_steps, failed = 0, rc = CC_EXIT_OK;
	double *all = NULL, *rank_step = NULL, *rank_ready = NULL, *v[3] = { 0 }, *ready_k = NULL;
	double flops;
	int *last_ready = NULL;
	char why[300] = "";
	int outcome;

	if (run->opt->backend && strcmp(run->opt->backend, "mpi")) {
		run_skip(run, "probe", "trainstep", "trainstep runs on host memory over MPI only (-B mpi): "
			 "the GPU step (cuBLASLt, NCCL on a communication stream) is not implemented yet");
		return CC_EXIT_OK;
	}
	shape_of(&t.sh);
	slow = slow_factor(mpi->rank);
	outcome = blas_open(why, sizeof(why)) ? 1 : ts_alloc(&t) ? -1 : 0;
	if (outcome < 0)
		snprintf(why, sizeof(why), "cannot allocate %.0f bytes for the model", t.sh.bytes);
	outcome = run_agree(mpi->world, outcome, mpi->host, why, sizeof(why));
	if (outcome) {
		if (outcome > 0)
			run_skip(run, "probe", "trainstep", why);
		else
			run_error(run, "probe", "trainstep", why);
		ts_free(&t);
		return outcome > 0 ? CC_EXIT_OK : CC_EXIT_RUNTIME;
	}
	flops = 6.0 * t.sh.params * t.sh.T;
	if (mpi->rank == 0) {
		all = calloc((size_t)n * 2, sizeof(double));
		rank_step = calloc((size_t)n * p_steps, sizeof(double));
		rank_ready = calloc((size_t)n * p_steps, sizeof(double));
		ready_k = calloc((size_t)n, sizeof(double));
		last_ready = calloc((size_t)n, sizeof(int));
		for (int m = 0; m < 3; m++)
			v[m] = calloc((size_t)p_steps, sizeof(double));
	}
	if (mpi->rank == 0 && !run->opt->quiet) {
		char sz[32];

		printf("# trainstep: hidden %ld, %ld layers, %ld tokens per rank, %.0f parameters (scale %.3g), "
		       "%ld bucket(s) of %s on %d rank(s)\n# %6s %12s %12s %12s %9s %10s\n", t.sh.h, t.sh.L,
		       t.sh.T, t.sh.params, t.sh.scale, t.nb, size_human((double)p_bucket, sz, sizeof(sz)), n,
		       "step", "step_s", "compute_s", "comm_s", "overlap", "GFLOP/s");
	}
	for (int i = 0; i < total && !failed; i++) {
		double got = 0, want = 0;

		for (int m = 0; m < 3 && !failed; m++) {
			double mine[2], tmax;

			watchdog_arm("trainstep", json_pack("{s:s, s:s, s:s, s:i, s:I}", "kind", "probe", "probe",
				     "trainstep", "test", mode_names[m], "step", i, "buckets", (json_int_t)t.nb));
			mpictx_nap_barrier(mpi->world);
			watchdog_fault_point(mpi->rank, (size_t)(4 * t.sh.params));
			if (step(&t, (enum mode)m)) {
				failed = 1;
				snprintf(why, sizeof(why), "%s:%d: MPI failed in the %s of step %d", mpi->host,
					 mpi->rank, mode_names[m], i);
			}
			mine[0] = timer_now() - t.t0;
			mine[1] = t.ready;
			watchdog_disarm();
			MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, mpi->world);
			if (m == FULL && !failed && check_last(&t, &got, &want)) {
				failed = 1;
				snprintf(why, sizeof(why), "step %d: the last bucket's reduced sum %.9g differs from "
					 "the ranks' local sums %.9g", i, got, want);
			}
			if (mpi->rank || i < p_warmup)
				continue;
			tmax = 0;
			for (int r = 0; r < n; r++)
				tmax = fmax(tmax, all[2 * r]);
			v[m][i - p_warmup] = tmax;
			if (m == FULL)
				for (int r = 0; r < n; r++) {
					rank_step[r * p_steps + i - p_warmup] = all[2 * r];
					rank_ready[r * p_steps + i - p_warmup] = all[2 * r + 1];
				}
		}
		if (failed || mpi->rank || i < p_warmup)
			continue;
		{
			int k = i - p_warmup, slowest;
			double st = v[FULL][k], co = v[COMPUTE][k], cm = v[COMM][k];
			/* a step quicker than compute alone (noise between the two) exposes nothing: never negative */
			double ex = fmax(0, st - co);
			json_t *rec = base_rec(&t, "step"), *rs = json_array(), *rr = json_array();

			for (int r = 0; r < n; r++) {
				json_array_append_new(rs, json_real(rank_step[r * p_steps + k]));
				json_array_append_new(rr, json_real(rank_ready[r * p_steps + k]));
				ready_k[r] = rank_ready[r * p_steps + k];
			}
			slowest = argmax(ready_k, n);
			last_ready[slowest]++;
			json_object_set_new(rec, "step", json_integer(k));
			json_object_set_new(rec, "step_s", json_real(st));
			json_object_set_new(rec, "compute_s", json_real(co));
			json_object_set_new(rec, "comm_alone_s", json_real(cm));
			json_object_set_new(rec, "exposed_s", json_real(ex));
			json_object_set_new(rec, "overlap", cm > 0 ? json_real(1 - ex / cm) : json_null());
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
				       cm > 0 ? 1 - ex / cm : NAN, flops / st / 1e9);
		}
	}
	if (run_phase_end(run, "trainstep", failed, why))
		rc = CC_EXIT_FAIL;
	if (!failed && mpi->rank == 0) {
		json_t *rec = base_rec(&t, "summary");
		double med[3], ex[p_steps], ov[p_steps], rmed[n], others;
		int top = 0, straggler = -1;

		for (int m = 0; m < 3; m++)
			med[m] = stats_median(v[m], (size_t)p_steps);
		for (int k = 0; k < p_steps; k++) {
			ex[k] = fmax(0, v[FULL][k] - v[COMPUTE][k]);
			ov[k] = v[COMM][k] > 0 ? 1 - ex[k] / v[COMM][k] : 0;
		}
		for (int r = 0; r < n; r++) {
			rmed[r] = stats_median(rank_ready + r * p_steps, (size_t)p_steps);
			if (last_ready[r] > last_ready[top])
				top = r;
		}
		/* a straggler: last ready in at least 3/4 of the steps, its median ready 1.2x the others' */
		others = 0;
		for (int r = 0; r < n; r++)
			if (r != top)
				others = fmax(others, rmed[r]);
		if (n > 1 && p_steps >= 3 && last_ready[top] * 4 >= p_steps * 3 && rmed[top] > 1.2 * others)
			straggler = top;
		json_object_set_new(rec, "steps", json_integer(p_steps));
		json_object_set_new(rec, "warmup", json_integer(p_warmup));
		json_object_set_new(rec, "step_s", json_real(med[FULL]));
		json_object_set_new(rec, "compute_s", json_real(med[COMPUTE]));
		json_object_set_new(rec, "comm_alone_s", json_real(med[COMM]));
		json_object_set_new(rec, "exposed_s", json_real(stats_median(ex, (size_t)p_steps)));
		json_object_set_new(rec, "overlap", json_real(stats_median(ov, (size_t)p_steps)));
		json_object_set_new(rec, "flops_per_rank", json_real(flops / med[FULL]));
		json_object_set_new(rec, "compute_flops_per_rank", json_real(flops / med[COMPUTE]));
		json_object_set_new(rec, "step_stats_s", stats_of(v[FULL], p_steps));
		json_object_set_new(rec, "compute_stats_s", stats_of(v[COMPUTE], p_steps));
		json_object_set_new(rec, "comm_stats_s", stats_of(v[COMM], p_steps));
		json_object_set_new(rec, "step_series_s", rank_array(v[FULL], p_steps));
		json_object_set_new(rec, "rank_ready_s", rank_array(rmed, n));
		json_object_set_new(rec, "straggler", straggler < 0 ? json_null() :
			json_pack("{s:i, s:s, s:i, s:f, s:f}", "rank", straggler, "host",
				  mpi->hosts[mpi->rank_node[straggler]], "last_ready_steps", last_ready[straggler],
				  "ready_s", rmed[straggler], "others_ready_s", others));
		if (straggler >= 0)
			json_object_set_new(rec, "straggler_host", json_string(mpi->hosts[mpi->rank_node[straggler]]));
		json_object_set_new(rec, "blas_threads", json_integer(p_threads));
		json_object_set_new(rec, "polls", json_integer(t.polls));
		run_record(run, "measurement", rec);
		if (!run->opt->quiet) {
			printf("# trainstep median: step %.6f s, compute %.6f s, comm alone %.6f s, overlap %.3f, "
			       "%.3f GFLOP/s per rank\n", med[FULL], med[COMPUTE], med[COMM],
			       stats_median(ov, (size_t)p_steps), flops / med[FULL] / 1e9);
			if (straggler >= 0)
				printf("# straggler: rank %d on %s (ready %.6f s, the others by %.6f s)\n", straggler,
				       mpi->hosts[mpi->rank_node[straggler]], rmed[straggler], others);
		}
	}
	free(all);
	free(rank_step);
	free(rank_ready);
	free(ready_k);
	free(last_ready);
	for (int m = 0; m < 3; m++)
		free(v[m]);
	ts_free(&t);
	return rc;
}

const struct probe probe_trainstep = {
	.name = "trainstep",
	.summary = SUMMARY,
	.params = trainstep_params,
	.phase = PHASE_TRAIN,
	.estimate = trainstep_estimate,
	.check = trainstep_check,
	.run = trainstep_run,
};

#else

const struct probe probe_trainstep = {
	.name = "trainstep",
	.summary = SUMMARY,
	.missing = "built without OpenBLAS (libopenblas-dev): the host matmuls",
	.params = trainstep_params,
	.phase = PHASE_TRAIN,
	.estimate = trainstep_estimate,
	.check = trainstep_check,
};

#endif
