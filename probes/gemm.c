/*
 * gemm: dense matmul TFLOP/s of every GPU through cuBLASLt, all GPUs of
 * every node at once (so power and cooling are loaded as in training):
 *  1. per dtype and shape: random inputs, L2 flushed before each timed
 *     product, warm-up not counted, each product timed by a CUDA event
 *     pair; min/median/p99 over --gemm-iters, beside the dense peak;
 *  2. sustained: the main shape repeated for --gemm-seconds while NVML is
 *     read every ~100 ms (SM and memory clocks, power, temperature, clock
 *     event reasons); TFLOP/s of the first and last 10 %;
 *  3. silent data corruption: the same product from the same seed with
 *     one algorithm chosen by one rank per GPU model and shared, checksums
 *     compared across the cluster; a GPU that differs gets an error record.
 * A GPU that errors or hangs gets its own error record and stops; the
 * others finish. Nothing here sets a clock or a power limit.
 * docs/compute.md has the method and the records.
 */
#include "gemm.h"
#include "../gpu/gpu.h"
#include "probe.h"

static const char *p_dtypes = "bf16";
static const char *p_shapes = "8192,4096,16384";
static int p_iters = 50, p_warmup = 10, p_seed = 1;
static double p_seconds = 30;

static const struct cc_param gemm_params[] = {
	{ "gemm-dtypes", CC_PARAM_STRING, &p_dtypes,
	  "gemm: dtypes, the first sustained and checked: bf16,fp16,tf32,fp8 or all [bf16]" },
	{ "gemm-shapes", CC_PARAM_STRING, &p_shapes,
	  "gemm: shapes N or MxNxK, the first is the main one [8192,4096,16384]" },
	{ "gemm-iters", CC_PARAM_INT, &p_iters, "gemm: timed products per dtype and shape [50]" },
	{ "gemm-warmup", CC_PARAM_INT, &p_warmup, "gemm: untimed products first [10]" },
	{ "gemm-seconds", CC_PARAM_DOUBLE, &p_seconds,
	  "gemm: sustained phase on the main shape, seconds; 0 = none [30]" },
	{ "gemm-seed", CC_PARAM_INT, &p_seed, "gemm: seed of the random inputs, same on every GPU [1]" },
	{ NULL, 0, NULL, NULL },
};

static int gemm_check(char *err, size_t len)
{
	int order[GEMM_NDTYPES];
	struct gemm_shape sh[GEMM_MAX_SHAPES];

	if (gpu_check_params(err, len) || gemm_parse_dtypes(p_dtypes, order, err, len) < 0 ||
	    gemm_parse_shapes(p_shapes, sh, GEMM_MAX_SHAPES, err, len) < 0)
		return -1;
	if (p_iters < 1 || p_iters > 100000)
		return options_fail(err, len, "--gemm-iters %d: expected 1 to 100000", p_iters);
	if (p_warmup < 0 || p_warmup > 100000)
		return options_fail(err, len, "--gemm-warmup %d: expected 0 to 100000", p_warmup);
	if (!(p_seconds >= 0 && p_seconds <= 86400))
		return options_fail(err, len, "--gemm-seconds %g: expected 0 to 86400", p_seconds);
	if (p_seed < 0)
		return options_fail(err, len, "--gemm-seed %d: expected 0 or more", p_seed);
	return 0;
}

#define SUMMARY "dense matmul TFLOP/s per GPU (cuBLASLt), sustained load with clocks and " \
		"throttling, cross-GPU result check"

/*
 * Every GPU at once: (warm-up + timed) products per dtype and shape at a
 * nominal 400 TFLOP/s, the sustained phase, and a few seconds of set-up.
 */
static double gemm_estimate(const struct cc_options *o)
{
	struct gemm_shape sh[GEMM_MAX_SHAPES];
	int order[GEMM_NDTYPES], nd, nsh;
	double flop = 0;
	char err[200];

	(void)o;
	nd = gemm_parse_dtypes(p_dtypes, order, err, sizeof(err));
	nsh = gemm_parse_shapes(p_shapes, sh, GEMM_MAX_SHAPES, err, sizeof(err));
	for (int i = 0; i < nsh; i++)
		flop += 2.0 * sh[i].m * sh[i].n * sh[i].k;
	return (nd > 0 ? nd : 1) * flop * (p_iters + p_warmup) / 400e12 + p_seconds + 5;
}

#if defined(HAVE_CUDA) && defined(HAVE_CUBLASLT)

#include "../gpu/nvml_health.h"
#include "../core/log.h"
#include "../core/stats.h"
#include "../core/timer.h"
#include "../core/watchdog.h"

#include "lt.h"
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WORKSPACE ((size_t)32 << 20)   /* cuBLASLt workspace: what its heuristics assume */
#define FILL_CHUNK ((size_t)16 << 20)  /* elements generated on the host per copy */
#define SAMPLE_S 0.1                   /* NVML sampling period and sustained batch length */
#define MAX_SAMPLES 100000
#define HEURISTICS 8
#define MAX_BATCH 1000

/* One rank's GPU and what it has done. */
struct gemm {
	struct cc_run *run;
	struct gpu_ctx g;
	char name[256];                  /* CUDA's device name */
	int major, minor;
	int sms;                         /* streaming multiprocessors (a cut-down part has fewer) */
	cublasLtHandle_t lt;
	cudaStream_t s;
	void *a, *b, *d, *ws, *flush;    /* device buffers */
	size_t flush_bytes;
	cudaEvent_t *ev;                 /* [2 * (iters)] */
	int nev;
	int dead;                        /* the GPU failed or hung: touch it no more */
	gnv_device nvdev;
	int nvml_ok;
	char nvml_why[160];
	MPI_Comm group;                  /* ranks whose GPUs compute the same bits */
	int group_id, group_rank;
	json_t *recs;                    /* this rank's records (errors carry "type") */
	char why[400];
};

/* ------------------------------------------------------------------ errors */

/* This rank's GPU failed during test: an error record naming it, and the GPU is left alone. */
static void gpu_failed(struct gemm *q, const char *test, const char *dtype, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void gpu_failed(struct gemm *q, const char *test, const char *dtype, const char *fmt, ...)
{
	va_list ap;
	char msg[400];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	q->dead = 1;
	log_error("gemm %s on GPU %s: %s", test, q->g.bus_id, msg);
	json_array_append_new(q->recs, json_pack("{s:s, s:s, s:s, s:s?, s:s, s:n, s:s, s:s, s:s}",
		"type", "error", "kind", "probe", "name", "gemm", "dtype", dtype, "test", test,
		"element", "host", q->run->mpi->host, "bus_id", q->g.bus_id, "message", msg));
}

static int cuda_ok(struct gemm *q, cudaError_t e, const char *what, const char *test,
		   const char *dtype)
{
	if (e == cudaSuccess)
		return 1;
	gpu_failed(q, test, dtype, "%s: CUDA: %s", what, cudaGetErrorString(e));
	return 0;
}

static int lt_ok(struct gemm *q, cublasStatus_t st, const char *what, const char *test,
		 const char *dtype)
{
	if (st == CUBLAS_STATUS_SUCCESS)
		return 1;
	gpu_failed(q, test, dtype, "%s: cuBLASLt status %d", what, (int)st);
	return 0;
}

/* The deadline of one wait: before the watchdog's, so this GPU is named and the others go on. */
static double wait_deadline(double work_s)
{
	double wd = watchdog_deadline(), t = watchdog_timeout();

	if (wd > 0)
		return wd - fmin(30, t / 10);
	return timer_now() + work_s + 600;
}

/*
 * Waits for ev, reading NVML every SAMPLE_S into samples (when given).
 * Returns 0, -1 on a CUDA error, -2 when deadline passed (why says which).
 */
static int wait_event(struct gemm *q, cudaEvent_t ev, double deadline, struct gnv_sample *smp,
		      int *nsmp, double *next_sample)
{
	double t0 = timer_now();

	for (;;) {
		cudaError_t e;

		/* read while the products run: the clocks and reasons of a loaded GPU */
		if (smp && q->nvml_ok && timer_now() >= *next_sample && *nsmp < MAX_SAMPLES) {
			gnv_sample(q->nvdev, &smp[(*nsmp)++]);
			*next_sample = timer_now() + SAMPLE_S;
		}
		e = cudaEventQuery(ev);
		if (e == cudaSuccess)
			return 0;
		if (e != cudaErrorNotReady) {
			snprintf(q->why, sizeof(q->why), "CUDA: %s", cudaGetErrorString(e));
			return -1;
		}
		if (timer_now() > deadline) {
			snprintf(q->why, sizeof(q->why), "timeout: the GPU did not finish its products "
				 "within %.0f s (hung?)", timer_now() - t0);
			return -2;
		}
		usleep(200);
	}
}

/* ------------------------------------------------------------------ setup */

static int setup(struct gemm *q)
{
	struct cudaDeviceProp p;
	char why[320];
	int l2 = 0;

	if (q->g.dev < 0)
		return 0;
	if (!cuda_ok(q, cudaGetDeviceProperties(&p, q->g.dev), "cudaGetDeviceProperties", "setup", NULL))
		return -1;
	snprintf(q->name, sizeof(q->name), "%s", p.name);
	q->major = p.major;
	q->sms = p.multiProcessorCount;
	q->minor = p.minor;
	cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, q->g.dev);
	/* twice the L2 written between products evicts every line the last one left */
	q->flush_bytes = l2 > 0 ? 2 * (size_t)l2 : (size_t)256 << 20;
	q->nev = 2 * (p_iters > p_warmup ? p_iters : p_warmup);
	q->ev = calloc((size_t)q->nev, sizeof(*q->ev));
	if (!q->ev) {
		gpu_failed(q, "setup", NULL, "out of host memory");
		return -1;
	}
	for (int i = 0; i < q->nev; i++)
		if (!cuda_ok(q, cudaEventCreate(&q->ev[i]), "cudaEventCreate", "setup", NULL))
			return -1;
	if (lt_open(why, sizeof(why))) {
		gpu_failed(q, "setup", NULL, "%s", why);
		return -1;
	}
	if (!cuda_ok(q, cudaStreamCreateWithFlags(&q->s, cudaStreamNonBlocking), "cudaStreamCreate",
		     "setup", NULL) ||
	    !cuda_ok(q, cudaMalloc(&q->ws, WORKSPACE), "cudaMalloc workspace", "setup", NULL) ||
	    !cuda_ok(q, cudaMalloc(&q->flush, q->flush_bytes), "cudaMalloc L2 flush buffer", "setup", NULL) ||
	    !lt_ok(q, cublasLtCreate(&q->lt), "cublasLtCreate", "setup", NULL))
		return -1;
	if (gnv_device_by_bus(q->g.bus_id, &q->nvdev, q->nvml_why, sizeof(q->nvml_why)) == 0)
		q->nvml_ok = 1;
	return 0;
}

static void teardown(struct gemm *q)
{
	if (q->group != MPI_COMM_NULL)
		MPI_Comm_free(&q->group);
	json_decref(q->recs);
	if (q->g.dev < 0 || q->dead) {
		free(q->ev);
		return;   /* a hung GPU is not touched again; the process exit releases it */
	}
	for (int i = 0; q->ev && i < q->nev; i++)
		if (q->ev[i])
			cudaEventDestroy(q->ev[i]);
	free(q->ev);
	if (q->lt)
		cublasLtDestroy(q->lt);
	cudaFree(q->a);
	cudaFree(q->b);
	cudaFree(q->d);
	cudaFree(q->ws);
	cudaFree(q->flush);
	if (q->s)
		cudaStreamDestroy(q->s);
}

/*
 * The group of ranks whose GPUs compute the same bits: same device name,
 * compute capability, SM count and cuBLASLt version. Collective.
 */
static void make_group(struct gemm *q)
{
	struct mpictx *mpi = q->run->mpi;
	char key[320] = "", *all;
	int color = MPI_UNDEFINED;

	if (q->g.dev >= 0 && !q->dead)
		snprintf(key, sizeof(key), "%s|%d.%d|%d SMs|%zu", q->name, q->major, q->minor,
			 q->sms, cublasLtGetVersion());
	all = calloc((size_t)mpi->size, sizeof(key));
	if (!all)
		MPI_Abort(mpi->world, CC_EXIT_RUNTIME);
	MPI_Allgather(key, (int)sizeof(key), MPI_CHAR, all, (int)sizeof(key), MPI_CHAR, mpi->world);
	for (int r = 0; key[0] && r < mpi->size; r++)
		if (!strcmp(all + (size_t)r * sizeof(key), key)) {
			color = r;
			break;
		}
	free(all);
	q->group_id = color == MPI_UNDEFINED ? -1 : color;
	MPI_Comm_split(mpi->world, color, mpi->rank, &q->group);
	if (q->group != MPI_COMM_NULL)
		MPI_Comm_rank(q->group, &q->group_rank);
}

/* ------------------------------------------------------------------ one dtype */

/*
 * The descriptors of D = A^T B ("TN", the layout fp8 requires, used for
 * every dtype so they compare): A is k x m, B k x n, D m x n, column major.
 */
static cublasStatus_t desc_make(struct lt_desc *l, int dt, const struct gemm_shape *sh)
{
	cudaDataType_t in = dt == GEMM_BF16 ? CUDA_R_16BF : dt == GEMM_FP16 ? CUDA_R_16F :
			    dt == GEMM_TF32 ? CUDA_R_32F : CUDA_R_8F_E4M3;
	cudaDataType_t out = dt == GEMM_FP8 ? CUDA_R_16BF : in;
	cublasComputeType_t ct = dt == GEMM_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
	cublasOperation_t t = CUBLAS_OP_T;
	/*
	 * fp8: fast accumulation, the mode SuperBench's cublaslt_gemm and the
	 * fp8 bounds were measured in; without it the split accumulator runs
	 * ~1.1-1.2x slower and a healthy H100/H200 misses the bound.
	 */
	int8_t fast = 1;
	cublasStatus_t st;

	memset(l, 0, sizeof(*l));
	l->alpha = 1;
	l->beta = 0;
	if ((st = cublasLtMatmulDescCreate(&l->op, ct, CUDA_R_32F)) ||
	    (st = cublasLtMatmulDescSetAttribute(l->op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t))) ||
	    (st = cublasLtMatrixLayoutCreate(&l->la, in, (uint64_t)sh->k, (uint64_t)sh->m, sh->k)) ||
	    (st = cublasLtMatrixLayoutCreate(&l->lb, in, (uint64_t)sh->k, (uint64_t)sh->n, sh->k)) ||
	    (st = cublasLtMatrixLayoutCreate(&l->lc, out, (uint64_t)sh->m, (uint64_t)sh->n, sh->m)))
		return st;
	if (dt == GEMM_FP8 && (st = cublasLtMatmulDescSetAttribute(l->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM,
								    &fast, sizeof(fast))))
		return st;
	return CUBLAS_STATUS_SUCCESS;
}

/*
 * The algorithm: the group's first rank asks the heuristics for one that
 * splits no K dimension (split-K reductions may add partial sums in any
 * order), and every rank of the group receives the same 64 bytes, so each
 * GPU of a model runs the same kernel with the same tiles. Collective over
 * the group. Returns 0, or -1 (this rank's GPU failed; recorded).
 */
static int choose_algo(struct gemm *q, struct lt_desc *l, int dt, int active)
{
	cublasLtMatmulHeuristicResult_t res[HEURISTICS];
	cublasLtMatmulPreference_t pref = NULL;
	int n = 0, pick = -1, ok, mine, root, big;
	size_t ws = WORKSPACE;
	cublasLtMatmulAlgo_t algo;
	cublasLtMatmulHeuristicResult_t chk;

	memset(&algo, 0, sizeof(algo));
	if (q->group == MPI_COMM_NULL)
		return -1;
	active = active && !q->dead;
	/* the chooser: the group's first rank whose GPU still works */
	MPI_Comm_size(q->group, &big);
	mine = active ? q->group_rank : big;
	MPI_Allreduce(&mine, &root, 1, MPI_INT, MPI_MIN, q->group);
	if (root == big)
		return -1;           /* no GPU of the group takes part */
	if (q->group_rank == root) {
		if (cublasLtMatmulPreferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS &&
		    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
							 &ws, sizeof(ws)) == CUBLAS_STATUS_SUCCESS &&
		    cublasLtMatmulAlgoGetHeuristic(q->lt, l->op, l->la, l->lb, l->lc, l->lc, pref,
						   HEURISTICS, res, &n) == CUBLAS_STATUS_SUCCESS)
			for (int i = 0; i < n && pick < 0; i++) {
				uint32_t split = 1;
				size_t got = 0;

				if (res[i].state != CUBLAS_STATUS_SUCCESS)
					continue;
				if (cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo,
					CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split, sizeof(split), &got) ||
				    split <= 1)
					pick = i;
			}
		if (pref)
			cublasLtMatmulPreferenceDestroy(pref);
		if (pick >= 0)
			algo = res[pick].algo;
	}
	ok = pick >= 0;
	MPI_Bcast(&ok, 1, MPI_INT, root, q->group);
	MPI_Bcast(&algo, (int)sizeof(algo), MPI_BYTE, root, q->group);
	if (!active)
		return -1;
	if (!ok) {
		gpu_failed(q, "matmul", gemm_dtype_name(dt), "cuBLASLt offers no algorithm without "
			   "split-K for %s on %s", gemm_dtype_name(dt), q->name);
		return -1;
	}
	if (!lt_ok(q, cublasLtMatmulAlgoCheck(q->lt, l->op, l->la, l->lb, l->lc, l->lc, &algo, &chk),
		   "cublasLtMatmulAlgoCheck of the shared algorithm", "matmul", gemm_dtype_name(dt)))
		return -1;
	if (chk.workspaceSize > WORKSPACE) {
		gpu_failed(q, "matmul", gemm_dtype_name(dt), "the shared algorithm needs %zu bytes of "
			   "workspace", chk.workspaceSize);
		return -1;
	}
	l->algo = algo;
	return 0;
}

static cublasStatus_t product(struct gemm *q, struct lt_desc *l)
{
	return cublasLtMatmul(q->lt, l->op, &l->alpha, q->a, l->la, q->b, l->lb, &l->beta, q->d, l->lc,
			      q->d, l->lc, &l->algo, q->ws, WORKSPACE, q->s);
}

/* Allocates A, B and D for the largest shape and fills A and B with the seed's numbers. */
static int inputs(struct gemm *q, int dt, const struct gemm_shape *sh, int nsh)
{
	size_t na = 0, nb = 0, nd = 0, in = gemm_in_size(dt), need, fr = 0, tot = 0;
	void *host;

	for (int i = 0; i < nsh; i++) {
		na = fmax(na, (double)sh[i].k * sh[i].m);
		nb = fmax(nb, (double)sh[i].k * sh[i].n);
		nd = fmax(nd, (double)sh[i].m * sh[i].n);
	}
	need = (na + nb) * in + nd * gemm_out_size(dt);
	if (cudaMemGetInfo(&fr, &tot) == cudaSuccess && need > fr) {
		gpu_failed(q, "matmul", gemm_dtype_name(dt), "needs %.2f GB of device memory for the "
			   "largest shape, %.2f GB free", need / 1e9, fr / 1e9);
		return -1;
	}
	if (!cuda_ok(q, cudaMalloc(&q->a, na * in), "cudaMalloc A", "matmul", gemm_dtype_name(dt)) ||
	    !cuda_ok(q, cudaMalloc(&q->b, nb * in), "cudaMalloc B", "matmul", gemm_dtype_name(dt)) ||
	    !cuda_ok(q, cudaMalloc(&q->d, nd * gemm_out_size(dt)), "cudaMalloc D", "matmul",
		     gemm_dtype_name(dt)))
		return -1;
	host = malloc(FILL_CHUNK * in);
	if (!host) {
		gpu_failed(q, "matmul", gemm_dtype_name(dt), "out of host memory");
		return -1;
	}
	/* smaller shapes read a prefix: the same numbers for every shape and GPU */
	for (int m = 0; m < 2; m++) {
		size_t n = m ? nb : na;

		for (size_t at = 0; at < n && !q->dead; at += FILL_CHUNK) {
			size_t c = n - at < FILL_CHUNK ? n - at : FILL_CHUNK;

			gemm_fill(dt, host, c, (unsigned long long)p_seed, m, at);
			cuda_ok(q, cudaMemcpy((char *)(m ? q->b : q->a) + at * in, host, c * in,
					      cudaMemcpyHostToDevice), "cudaMemcpy inputs", "matmul",
				gemm_dtype_name(dt));
		}
	}
	free(host);
	return q->dead ? -1 : 0;
}

static void free_inputs(struct gemm *q)
{
	if (q->dead)
		return;
	cudaFree(q->a);
	cudaFree(q->b);
	cudaFree(q->d);
	q->a = q->b = q->d = NULL;
}

static json_t *new_record(struct gemm *q, const char *test, int dt, const struct gemm_shape *sh)
{
	char name[64];
	double peak = gemm_peak_tflops(q->name, dt);
	json_t *rec;

	gemm_shape_name(sh, name, sizeof(name));
	rec = json_pack("{s:s, s:s, s:s, s:s, s:n, s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:s, s:f, s:o}",
			"kind", "probe", "name", "gemm", "test", test, "scope", "gpu", "element",
			"host", q->run->mpi->host, "bus_id", q->g.bus_id, "gpu_name", q->name,
			"dtype", gemm_dtype_name(dt), "m", (int)sh->m, "n", (int)sh->n, "k", (int)sh->k,
			"shape", name, "flops_per_product", gemm_flops(sh),
			"peak_tflops", peak > 0 ? json_real(peak) : json_null());
	if (dt == GEMM_FP8)
		json_object_set_new(rec, "accumulation", json_string("fast"));
	return rec;
}

static void algo_fields(json_t *rec, const cublasLtMatmulAlgo_t *a)
{
	uint32_t v = 0;
	size_t got;

	json_object_set_new(rec, "algo_hash", json_sprintf("%016llx",
			    gemm_fnv(a, sizeof(*a), GEMM_FNV_START)));
	if (!cublasLtMatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_ID, &v, sizeof(v), &got))
		json_object_set_new(rec, "algo_id", json_integer(v));
	if (!cublasLtMatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_TILE_ID, &v, sizeof(v), &got))
		json_object_set_new(rec, "algo_tile", json_integer(v));
	json_object_set_new(rec, "split_k", json_integer(1));
}

/* n products, each behind an L2 flush and between its own events; 0, or -1 (recorded) */
static int timed(struct gemm *q, struct lt_desc *l, int dt, int n, double *sec, double work_s)
{
	const char *dn = gemm_dtype_name(dt);
	int rc;

	for (int i = 0; i < n; i++) {
		/* the flush runs before the start event: it is not timed */
		if (!cuda_ok(q, cudaMemsetAsync(q->flush, i & 0xff, q->flush_bytes, q->s), "L2 flush",
			     "matmul", dn) ||
		    !cuda_ok(q, cudaEventRecord(q->ev[2 * i], q->s), "cudaEventRecord", "matmul", dn) ||
		    !lt_ok(q, product(q, l), "cublasLtMatmul", "matmul", dn) ||
		    !cuda_ok(q, cudaEventRecord(q->ev[2 * i + 1], q->s), "cudaEventRecord", "matmul", dn))
			return -1;
	}
	rc = wait_event(q, q->ev[2 * n - 1], wait_deadline(work_s), NULL, NULL, NULL);
	if (rc) {
		gpu_failed(q, "matmul", dn, "%s", q->why);
		return -1;
	}
	for (int i = 0; sec && i < n; i++) {
		float ms = 0;

		if (!cuda_ok(q, cudaEventElapsedTime(&ms, q->ev[2 * i], q->ev[2 * i + 1]),
			     "cudaEventElapsedTime", "matmul", dn))
			return -1;
		sec[i] = ms * 1e-3;
	}
	return 0;
}

/* The timed products of one dtype and shape: one record. */
static int measure(struct gemm *q, struct lt_desc *l, int dt, const struct gemm_shape *sh,
		   double *t_median)
{
	double *sec = calloc((size_t)p_iters, sizeof(double)), *tf;
	struct stats st, tst;
	json_t *rec;
	int rc = -1;

	tf = calloc((size_t)p_iters, sizeof(double));
	if (!sec || !tf) {
		gpu_failed(q, "matmul", gemm_dtype_name(dt), "out of host memory");
		goto out;
	}
	/* warm-up: clocks ramp, the kernel is loaded; not counted */
	if ((p_warmup && timed(q, l, dt, p_warmup, NULL, 60)) || timed(q, l, dt, p_iters, sec, 60))
		goto out;
	for (int i = 0; i < p_iters; i++)
		tf[i] = sec[i] > 0 ? gemm_flops(sh) / sec[i] / 1e12 : 0;
	stats_compute(sec, (size_t)p_iters, &st);
	stats_compute(tf, (size_t)p_iters, &tst);
	*t_median = st.median;
	rec = new_record(q, "matmul", dt, sh);
	json_object_set_new(rec, "iters", json_integer(p_iters));
	json_object_set_new(rec, "warmup", json_integer(p_warmup));
	json_object_set_new(rec, "l2_flush_bytes", json_integer((json_int_t)q->flush_bytes));
	json_object_set_new(rec, "time_us", run_stats_json(&st, 1e6));
	json_object_set_new(rec, "tflops", json_real(tst.median));
	json_object_set_new(rec, "tflops_stats", run_stats_json(&tst, 1.0));
	if (gemm_peak_tflops(q->name, dt) > 0)
		json_object_set_new(rec, "pct_of_peak", json_real(100 * tst.median /
								  gemm_peak_tflops(q->name, dt)));
	algo_fields(rec, &l->algo);
	json_array_append_new(q->recs, rec);
	rc = 0;
out:
	free(sec);
	free(tf);
	return rc;
}

/* ------------------------------------------------------------------ sustained */

static json_t *clock_stats(const struct gnv_sample *s, int n, size_t off)
{
	double *v = malloc(((size_t)n + 1) * sizeof(double));
	struct stats st;
	int k = 0;
	json_t *o;

	for (int i = 0; v && i < n; i++) {
		double x = *(const double *)((const char *)&s[i] + off);

		if (x >= 0)
			v[k++] = x;
	}
	if (!v || !k || stats_compute(v, (size_t)k, &st)) {
		free(v);
		return json_null();
	}
	o = json_pack("{s:f, s:f, s:f}", "min", st.min, "median", st.median, "max", st.max);
	free(v);
	return o;
}

/*
 * The main shape for p_seconds in batches of about SAMPLE_S, NVML read
 * while each batch runs. Every GPU starts together (a barrier before).
 */
static void sustained(struct gemm *q, struct lt_desc *l, int dt, const struct gemm_shape *sh,
		      double t_med)
{
	/* at most MAX_BATCH products queued at once, so the queue never fills */
	int batch = t_med > 0 ? (int)fmin(MAX_BATCH, fmax(1, round(SAMPLE_S / t_med))) : 1;
	int nb = 0, nsmp = 0;
	int maxb = (int)(p_seconds / SAMPLE_S) * 4 + 16, counts[GNV_NREASONS] = { 0 }, bad = 0;
	double *tf = calloc((size_t)maxb, sizeof(double)), t0, next, first, last, secs = p_seconds;
	struct gnv_sample *smp = calloc(MAX_SAMPLES, sizeof(*smp));
	const char *dn = gemm_dtype_name(dt);
	json_t *rec, *seen, *tc;
	struct stats st;

	if (!tf || !smp) {
		gpu_failed(q, "sustained", dn, "out of host memory");
		goto out;
	}
	/* the phase ends before the watchdog would: --timeout bounds it (docs/compute.md) */
	if (watchdog_timeout() > 0 && secs > watchdog_timeout() - 60)
		secs = fmax(1, watchdog_timeout() - 60);
	t0 = timer_now();
	next = t0;
	while (timer_now() - t0 < secs && nb < maxb && !q->dead) {
		float ms = 0;
		int rc;

		if (!cuda_ok(q, cudaEventRecord(q->ev[0], q->s), "cudaEventRecord", "sustained", dn))
			break;
		for (int i = 0; i < batch; i++)
			if (!lt_ok(q, product(q, l), "cublasLtMatmul", "sustained", dn))
				break;
		if (q->dead || !cuda_ok(q, cudaEventRecord(q->ev[1], q->s), "cudaEventRecord",
					"sustained", dn))
			break;
		rc = wait_event(q, q->ev[1], wait_deadline(secs), smp, &nsmp, &next);
		if (rc) {
			gpu_failed(q, "sustained", dn, "%s", q->why);
			break;
		}
		if (!cuda_ok(q, cudaEventElapsedTime(&ms, q->ev[0], q->ev[1]), "cudaEventElapsedTime",
			     "sustained", dn))
			break;
		tf[nb++] = ms > 0 ? batch * gemm_flops(sh) / (ms * 1e-3) / 1e12 : 0;
	}
	if (q->dead || !nb)
		goto out;
	stats_compute(tf, (size_t)nb, &st);
	gemm_window(tf, nb, 0.1, &first, &last);
	rec = new_record(q, "sustained", dt, sh);
	json_object_set_new(rec, "seconds", json_real(timer_now() - t0));
	json_object_set_new(rec, "seconds_requested", json_real(p_seconds));
	json_object_set_new(rec, "batches", json_integer(nb));
	json_object_set_new(rec, "products_per_batch", json_integer(batch));
	json_object_set_new(rec, "tflops", json_real(st.median));
	json_object_set_new(rec, "tflops_stats", run_stats_json(&st, 1.0));
	json_object_set_new(rec, "tflops_first", json_real(first));
	json_object_set_new(rec, "tflops_last", json_real(last));
	json_object_set_new(rec, "drop_pct", json_real(first > 0 ? 100 * (first - last) / first : 0));
	if (gemm_peak_tflops(q->name, dt) > 0)
		json_object_set_new(rec, "pct_of_peak", json_real(100 * st.median /
								  gemm_peak_tflops(q->name, dt)));
	algo_fields(rec, &l->algo);
	json_object_set_new(rec, "nvml", json_string(q->nvml_ok ? "available" : q->nvml_why));
	if (q->nvml_ok) {
		seen = json_array();
		tc = json_object();
		for (int i = 0; i < nsmp; i++) {
			if (smp[i].reasons < 0)
				continue;
			bad += gnv_reasons_bad((unsigned long long)smp[i].reasons);
			for (int b = 0; b < GNV_NREASONS; b++)
				counts[b] += (smp[i].reasons >> b) & 1;
		}
		for (int b = 0; b < GNV_NREASONS; b++) {
			json_object_set_new(tc, gnv_reason_name(b), json_integer(counts[b]));
			if (counts[b])
				json_array_append_new(seen, json_string(gnv_reason_name(b)));
		}
		/* the samples slowed down (HW slowdown, thermal, power brake), not at a power cap */
		json_object_set_new(tc, "slowdown", json_integer(bad));
		json_object_set_new(rec, "samples", json_integer(nsmp));
		json_object_set_new(rec, "sample_period_s", json_real(SAMPLE_S));
		json_object_set_new(rec, "sm_clock_mhz", clock_stats(smp, nsmp, offsetof(struct gnv_sample, sm_mhz)));
		json_object_set_new(rec, "mem_clock_mhz", clock_stats(smp, nsmp, offsetof(struct gnv_sample, mem_mhz)));
		json_object_set_new(rec, "power_w", clock_stats(smp, nsmp, offsetof(struct gnv_sample, power_w)));
		json_object_set_new(rec, "temp_c", clock_stats(smp, nsmp, offsetof(struct gnv_sample, temp_c)));
		json_object_set_new(rec, "throttle_samples", tc);
		json_object_set_new(rec, "throttle_reasons", seen);
	}
	json_array_append_new(q->recs, rec);
out:
	free(tf);
	free(smp);
}

/* ------------------------------------------------------------------ silent data corruption */

/*
 * One product of the main shape after the sustained load, its D copied
 * back and hashed; the hashes of all GPUs compared within each group
 * (collective over the world). A GPU whose D differs from the group's
 * majority gets an error record with both values.
 */
#define EL_LEN 192                   /* host (first half) and bus id (second half) of one rank */

static void sdc(struct gemm *q, struct lt_desc *l, int dt, const struct gemm_shape *sh, int can)
{
	struct mpictx *mpi = q->run->mpi;
	size_t bytes = (size_t)sh->m * sh->n * gemm_out_size(dt);
	unsigned long long mine = 0, *sums = NULL, *exp = NULL;
	int grp = -1, *groups = NULL, *wrong = NULL, nbad, peers = 0;
	char el[EL_LEN] = "", *all_el = NULL;
	const char *dn = gemm_dtype_name(dt);
	void *host = NULL;
	char name[64];
	json_t *rec;

	if (can && q->g.dev >= 0 && !q->dead) {
		host = malloc(bytes);
		if (!host)
			gpu_failed(q, "sdc", dn, "out of host memory for %zu bytes", bytes);
		else if (cuda_ok(q, cudaMemsetAsync(q->d, 0, bytes, q->s), "cudaMemsetAsync D", "sdc", dn) &&
			 lt_ok(q, product(q, l), "cublasLtMatmul", "sdc", dn) &&
			 cuda_ok(q, cudaEventRecord(q->ev[0], q->s), "cudaEventRecord", "sdc", dn)) {
			if (wait_event(q, q->ev[0], wait_deadline(10), NULL, NULL, NULL))
				gpu_failed(q, "sdc", dn, "%s", q->why);
			else if (cuda_ok(q, cudaMemcpy(host, q->d, bytes, cudaMemcpyDeviceToHost),
					 "cudaMemcpy D", "sdc", dn)) {
				mine = gemm_fnv(host, bytes, GEMM_FNV_START);
				grp = q->group_id;
			}
		}
		free(host);
	}
	sums = calloc((size_t)mpi->size, sizeof(*sums));
	exp = calloc((size_t)mpi->size, sizeof(*exp));
	groups = calloc((size_t)mpi->size, sizeof(*groups));
	wrong = calloc((size_t)mpi->size, sizeof(*wrong));
	if (!sums || !exp || !groups || !wrong)
		MPI_Abort(mpi->world, CC_EXIT_RUNTIME);
	MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, sums, 1, MPI_UNSIGNED_LONG_LONG, mpi->world);
	MPI_Allgather(&grp, 1, MPI_INT, groups, 1, MPI_INT, mpi->world);
	/* host and bus id of every rank, to name the GPUs of a group without a majority */
	snprintf(el, EL_LEN / 2, "%.*s", EL_LEN / 2 - 1, mpi->host);
	snprintf(el + EL_LEN / 2, EL_LEN / 2, "%.*s", EL_LEN / 2 - 1, q->g.bus_id);
	all_el = calloc((size_t)mpi->size, EL_LEN);
	if (!all_el)
		MPI_Abort(mpi->world, CC_EXIT_RUNTIME);
	MPI_Allgather(el, EL_LEN, MPI_CHAR, all_el, EL_LEN, MPI_CHAR, mpi->world);
	nbad = gemm_sdc_judge(sums, groups, mpi->size, exp, wrong);
	if (grp < 0)
		goto out;
	for (int r = 0; r < mpi->size; r++)
		peers += groups[r] == grp;
	gemm_shape_name(sh, name, sizeof(name));
	rec = new_record(q, "sdc", dt, sh);
	json_object_set_new(rec, "seed", json_integer(p_seed));
	json_object_set_new(rec, "checksum", json_sprintf("%016llx", mine));
	json_object_set_new(rec, "expected", json_sprintf("%016llx", exp[mpi->rank]));
	json_object_set_new(rec, "compared_with", json_integer(peers - 1));
	json_object_set_new(rec, "wrong", json_integer(wrong[mpi->rank] != 0));
	json_object_set_new(rec, "disagree", json_boolean(wrong[mpi->rank] == 2));
	json_object_set_new(rec, "sms", json_integer(q->sms));
	json_object_set_new(rec, "cluster_wrong", json_integer(nbad));
	algo_fields(rec, &l->algo);
	json_array_append_new(q->recs, rec);
	if (wrong[mpi->rank] == 2) {
		char msg[900], others[600] = "";
		size_t n = 0;

		/* no majority: name every GPU of the group, none is known to be the healthy one */
		for (int r = 0; r < mpi->size && n < sizeof(others); r++)
			if (r != mpi->rank && groups[r] == grp)
				n += (size_t)snprintf(others + n, sizeof(others) - n, "%s%s %s",
						      n ? ", " : "", all_el + (size_t)r * EL_LEN,
						      all_el + (size_t)r * EL_LEN + EL_LEN / 2);
		snprintf(msg, sizeof(msg), "silent data corruption: %s %s product (seed %d, the same "
			 "algorithm on every %s): checksum %016llx and %s disagree with no majority; "
			 "either may be wrong (run more GPUs of this model to tell)", dn, name, p_seed,
			 q->name, mine, others);
		log_error("GPU %s: %s", q->g.bus_id, msg);
		json_array_append_new(q->recs, json_pack("{s:s, s:s, s:s, s:s, s:s, s:n, s:s, s:s, "
			"s:s, s:b, s:s}", "type", "error", "kind", "probe", "name", "gemm", "test", "sdc",
			"dtype", dn, "element", "host", mpi->host, "bus_id", q->g.bus_id,
			"got", json_string_value(json_object_get(rec, "checksum")), "disagree", 1,
			"message", msg));
	} else if (wrong[mpi->rank]) {
		char msg[700];

		snprintf(msg, sizeof(msg), "silent data corruption: %s %s product (seed %d, the same "
			 "algorithm on every %s) has checksum %016llx, the other GPUs %016llx",
			 dn, name, p_seed, q->name, mine, exp[mpi->rank]);
		log_error("GPU %s: %s", q->g.bus_id, msg);
		json_array_append_new(q->recs, json_pack("{s:s, s:s, s:s, s:s, s:s, s:n, s:s, s:s, "
			"s:s, s:s, s:s}", "type", "error", "kind", "probe", "name", "gemm", "test", "sdc",
			"dtype", dn, "element", "host", mpi->host, "bus_id", q->g.bus_id,
			"expected", json_string_value(json_object_get(rec, "expected")),
			"got", json_string_value(json_object_get(rec, "checksum")), "message", msg));
	}
out:
	free(all_el);
	free(sums);
	free(exp);
	free(groups);
	free(wrong);
}

/* ------------------------------------------------------------------ the probe */

/* The dtype on every shape, then (main dtype) sustained and the check. Collective. */
static void run_dtype(struct gemm *q, int dt, int main_dtype, const struct gemm_shape *sh, int nsh)
{
	struct mpictx *mpi = q->run->mpi;
	int usable = q->g.dev >= 0 && !q->dead && gemm_dtype_supported(dt, q->major, q->minor);
	double t_main = 0;

	if (q->g.dev >= 0 && !q->dead && !usable) {
		json_t *rec = new_record(q, "matmul", dt, &sh[0]);

		/* not a failure: this GPU has no such unit (fp8 before compute capability 8.9) */
		json_object_set_new(rec, "type", json_string("skip"));
		json_object_set_new(rec, "reason", json_sprintf("skipped: %s needs compute capability "
			"8.9 or later (%s is %d.%d)", gemm_dtype_name(dt), q->name, q->major, q->minor));
		json_array_append_new(q->recs, rec);
	}
	if (usable && inputs(q, dt, sh, nsh))
		usable = 0;
	watchdog_arm("gemm matmul", json_pack("{s:s, s:s, s:s}", "kind", "probe", "probe", "gemm",
					      "dtype", gemm_dtype_name(dt)));
	for (int i = 0; i < nsh; i++) {
		struct lt_desc l;
		double t = 0;
		/* every rank of a group takes part in choosing, working GPU or not */
		int ok = desc_make(&l, dt, &sh[i]) == CUBLAS_STATUS_SUCCESS;

		if (usable && !ok && !q->dead)
			gpu_failed(q, "matmul", gemm_dtype_name(dt), "cannot describe the product to cuBLASLt");
		if (!choose_algo(q, &l, dt, usable && ok) && !measure(q, &l, dt, &sh[i], &t) && i == 0)
			t_main = t;
		lt_desc_free(&l);
	}
	MPI_Barrier(mpi->world);
	watchdog_disarm();
	if (dt != main_dtype)
		goto out;
	/* the main shape again, every GPU of every node at once */
	{
		struct lt_desc l;
		int ok = desc_make(&l, dt, &sh[0]) == CUBLAS_STATUS_SUCCESS;

		ok = !choose_algo(q, &l, dt, usable && ok);
		if (p_seconds > 0) {
			watchdog_arm("gemm sustained", json_pack("{s:s, s:s, s:f}", "kind", "probe",
							       "probe", "gemm", "seconds", p_seconds));
			MPI_Barrier(mpi->world);
			if (usable && ok && !q->dead)
				sustained(q, &l, dt, &sh[0], t_main);
			MPI_Barrier(mpi->world);
			watchdog_disarm();
		}
		watchdog_arm("gemm sdc", json_pack("{s:s, s:s}", "kind", "probe", "probe", "gemm"));
		sdc(q, &l, dt, &sh[0], usable && ok);
		watchdog_disarm();
		lt_desc_free(&l);
	}
out:
	if (usable)
		free_inputs(q);
}

static void gemm_print(struct cc_run *run, json_t *all)
{
	json_t *r;
	size_t i;

	printf("# gemm: cuBLASLt D = A^T B, random inputs, L2 flushed before each timed product; "
	       "median of %d products (%d warm-up); TFLOP/s = 1e12 FLOP/s\n", p_iters, p_warmup);
	printf("#%-24s %-6s %-18s %9s %9s %9s %7s\n", "element", "dtype", "shape", "TFLOP/s", "min",
	       "p99", "%peak");
	json_array_foreach(all, i, r) {
		const char *test = json_string_value(json_object_get(r, "test"));
		json_t *st = json_object_get(r, "tflops_stats"), *pk = json_object_get(r, "pct_of_peak");

		if (!test || !json_is_number(json_object_get(r, "tflops")))
			continue;
		printf(" %-24s %-6s %-18s %9.1f %9.1f %9.1f ",
		       json_string_value(json_object_get(r, "element")),
		       json_string_value(json_object_get(r, "dtype")),
		       strcmp(test, "sustained") ? json_string_value(json_object_get(r, "shape")) : "sustained",
		       json_number_value(json_object_get(r, "tflops")),
		       json_number_value(json_object_get(st, "min")),
		       json_number_value(json_object_get(st, "p99")));
		if (pk)
			printf("%7.1f", json_number_value(pk));
		else
			printf("%7s", "-");
		if (!strcmp(test, "sustained"))
			printf("  first %.1f last %.1f", json_number_value(json_object_get(r, "tflops_first")),
			       json_number_value(json_object_get(r, "tflops_last")));
		if (!strcmp(test, "sustained") && json_is_object(json_object_get(r, "sm_clock_mhz")))
			printf(", SM %.0f MHz, %.0f W, %.0f C max, slowed down in %lld samples",
			       json_number_value(json_object_get(json_object_get(r, "sm_clock_mhz"), "median")),
			       json_number_value(json_object_get(json_object_get(r, "power_w"), "max")),
			       json_number_value(json_object_get(json_object_get(r, "temp_c"), "max")),
			       (long long)json_integer_value(json_object_get(json_object_get(r,
				       "throttle_samples"), "slowdown")));
		printf("\n");
	}
	(void)run;
	fflush(stdout);
}

static int gemm_run(struct cc_run *run)
{
	struct gemm q = { .run = run, .group = MPI_COMM_NULL };
	struct gemm_shape sh[GEMM_MAX_SHAPES];
	int order[GEMM_NDTYPES], nd, nsh, rc, failed = 0;
	char why[400] = "";
	json_t *all, *r;
	size_t i;

	nd = gemm_parse_dtypes(p_dtypes, order, why, sizeof(why));
	nsh = gemm_parse_shapes(p_shapes, sh, GEMM_MAX_SHAPES, why, sizeof(why));
	rc = gpu_open(run, "gemm", &q.g, why, sizeof(why));
	if (rc)
		return gpu_open_failed(run, "gemm", rc, why);
	q.recs = json_array();
	watchdog_arm("gemm setup", json_pack("{s:s, s:s}", "kind", "probe", "probe", "gemm"));
	setup(&q);
	MPI_Barrier(run->mpi->world);
	watchdog_disarm();
	make_group(&q);
	for (int k = 0; k < nd; k++)
		run_dtype(&q, order[k], order[0], sh, nsh);
	all = gpu_emit(run, json_incref(q.recs));
	json_array_foreach(all, i, r)
		failed |= json_is_string(json_object_get(r, "message"));
	if (run->mpi->rank == 0 && !run->opt->quiet)
		gemm_print(run, all);
	json_decref(all);
	teardown(&q);
	MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->mpi->world);
	return failed ? CC_EXIT_FAIL : CC_EXIT_OK;
}

#endif /* HAVE_CUDA && HAVE_CUBLASLT */

const struct probe probe_gemm = {
	.name = "gemm",
	.summary = SUMMARY,
	.phase = PHASE_NODE,
	.estimate = gemm_estimate,
	.params = gemm_params,
	.check = gemm_check,
#if !defined(HAVE_CUDA)
	.missing = "built without CUDA",
#elif !defined(HAVE_CUBLASLT)
	.missing = "built without cuBLASLt (cublasLt.h not found under CUDA_HOME)",
#else
	.run = gemm_run,
#endif
};
