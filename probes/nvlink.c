/*
 * nvlink: GPU-to-GPU copy bandwidth and latency for every pair of GPUs of a
 * host (cudaMemcpyPeerAsync through the copy engines), printed as matrices
 * like p2pBandwidthLatencyTest. One rank per host (local rank 0) drives all
 * pairs of the GPUs it sees, one pair at a time; hosts run in parallel.
 * Pairs without P2P access are measured too (the driver then stages the
 * copy through host memory) and flagged p2p_access false, so a disabled
 * link shows as a slow, named pair. docs/gpu.md has the method.
 */
#include "../gpu/gpu.h"
#include "probe.h"

#define NVL_SIZE ((size_t)256 << 20)  /* default copy size when neither -b nor -e is given */

/*
 * Every ordered pair of a host's GPUs one at a time (hosts at once): one way
 * and both ways at a nominal 350 GB/s, and a latency ping-pong per pair.
 */
static double nvlink_estimate(const struct cc_options *o)
{
	int pairs = o->plan_rpn * (o->plan_rpn - 1);

	return pairs * (3 * probe_sweep_seconds(o, NVL_SIZE, NVL_SIZE, 350, 1) + 0.05) + 2;
}

#ifdef HAVE_CUDA

#include "../core/stats.h"
#include "../core/size.h"
#include "../core/watchdog.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NVL_LAT_BYTES 4
#define NVL_MAX_SIZES 64

struct nvl {
	struct cc_run *run;
	int n;                           /* devices driven */
	int dev[GPU_MAX];                /* their ordinals */
	char bus[GPU_MAX][GPU_BUS_LEN];
	void *src[GPU_MAX], *dst[GPU_MAX];
	cudaStream_t s[GPU_MAX];
	int bad[GPU_MAX];                /* set up failed: an error record names it, no pairs */
	json_t *errs;                    /* those error records */
	int can[GPU_MAX][GPU_MAX];       /* cudaDeviceCanAccessPeer */
	size_t sizes[NVL_MAX_SIZES];
	size_t nsizes;
	double *span, *each, *v;         /* [reps], [2 reps], [reps] */
	json_t *recs;
	char why[300];
};

/* The devices local rank 0 drives: those in --gpus when given, else all it sees. */
static void pick_devices(struct nvl *x, const struct gpu_ctx *g)
{
	x->n = gpu_devices(g->ndev, x->dev, GPU_MAX);
	for (int i = 0; i < x->n; i++)
		gpu_bus_of(x->dev[i], x->bus[i], GPU_BUS_LEN);
}

/* One GPU's buffers, stream and peer access; 0 or a CUDA error. */
static cudaError_t setup_one(struct nvl *x, int i, size_t max)
{
	cudaError_t e;

	if ((e = cudaSetDevice(x->dev[i])) != cudaSuccess ||
	    (e = cudaMalloc(&x->src[i], max)) != cudaSuccess ||
	    (e = cudaMalloc(&x->dst[i], max)) != cudaSuccess ||
	    (e = cudaMemset(x->src[i], 0, max)) != cudaSuccess ||
	    (e = cudaStreamCreateWithFlags(&x->s[i], cudaStreamNonBlocking)) != cudaSuccess ||
	    (e = cudaDeviceSynchronize()) != cudaSuccess)  /* the memset, on the default stream */
		return e;
	for (int j = 0; j < x->n && e == cudaSuccess; j++) {
		x->can[i][j] = 0;
		if (i == j)
			continue;
		e = cudaDeviceCanAccessPeer(&x->can[i][j], x->dev[i], x->dev[j]);
		if (e == cudaSuccess && x->can[i][j]) {
			e = cudaDeviceEnablePeerAccess(x->dev[j], 0);
			if (e == cudaErrorPeerAccessAlreadyEnabled) {
				cudaGetLastError();  /* clears it */
				e = cudaSuccess;
			}
		}
	}
	return e;
}

/* Every GPU driven; one that fails gets an error record and no pairs. */
static void nvl_setup(struct nvl *x, size_t max)
{
	for (int i = 0; i < x->n; i++) {
		cudaError_t e = setup_one(x, i, max);
		char msg[400];

		if (e == cudaSuccess)
			continue;
		x->bad[i] = 1;
		snprintf(msg, sizeof(msg), "%s: cannot set up GPU %s for peer copies: CUDA: %s",
			 x->run->mpi->host, x->bus[i], cudaGetErrorString(e));
		cudaGetLastError();
		json_array_append_new(x->errs, json_pack("{s:s, s:s, s:s}", "host", x->run->mpi->host,
							 "bus_id", x->bus[i], "message", msg));
	}
}

static void nvl_teardown(struct nvl *x)
{
	for (int i = 0; i < x->n; i++) {
		cudaSetDevice(x->dev[i]);
		if (x->s[i])
			cudaStreamDestroy(x->s[i]);
		cudaFree(x->src[i]);
		cudaFree(x->dst[i]);
	}
	free(x->span);
	free(x->each);
	free(x->v);
	json_decref(x->recs);
	json_decref(x->errs);
}

/* Copies from GPU i to GPU j of size bytes, on i's stream. */
static struct gpu_copy pair_copy(struct nvl *x, int i, int j, size_t bytes)
{
	return (struct gpu_copy){ .dst = x->dst[j], .src = x->src[i], .bytes = bytes,
				  .dev = x->dev[i], .peer_dst = x->dev[j], .peer_src = x->dev[i],
				  .stream = x->s[i],
				  /* staged copies may wait on the host: never hold their stream */
				  .gate = x->can[i][j] };
}

static json_t *pair_record(struct nvl *x, const char *test, int i, int j, size_t bytes, int iters)
{
	const struct cc_options *o = x->run->opt;

	return json_pack("{s:s, s:s, s:s, s:s, s:n, s:s, s:s, s:s, s:I, s:i, s:i, s:i, s:b}",
			 "kind", "probe", "name", "nvlink", "test", test, "scope", "gpu_pair",
			 "element", "host", x->run->mpi->host, "src_bus", x->bus[i],
			 "dst_bus", x->bus[j], "bytes", (json_int_t)bytes, "iters", iters,
			 "reps", o->reps, "warmup", o->warmup,
			 "p2p_access", x->can[i][j] && x->can[j][i]);
}

static int measure_pair(struct nvl *x, int i, int j)
{
	const struct cc_options *o = x->run->opt;
	int reps = o->reps;
	struct gpu_copy c[2];
	struct stats st;
	json_t *rec;

	/* latency: tiny copies back to back, time per copy */
	c[0] = pair_copy(x, i, j, NVL_LAT_BYTES);
	if (gpu_sample(c, 1, o->warmup, GPU_GATE_MAX_COPIES, reps, x->span, NULL, x->why,
		       sizeof(x->why)))
		return -1;
	for (int r = 0; r < reps; r++)
		x->v[r] = x->span[r] / GPU_GATE_MAX_COPIES * 1e6;
	stats_compute(x->v, (size_t)reps, &st);
	rec = pair_record(x, "p2p_lat", i, j, NVL_LAT_BYTES, GPU_GATE_MAX_COPIES);
	json_object_set_new(rec, "lat_us", run_stats_json(&st, 1.0));
	json_array_append_new(x->recs, rec);
	for (size_t k = 0; k < x->nsizes; k++) {
		size_t bytes = x->sizes[k];

		c[0] = pair_copy(x, i, j, bytes);
		if (gpu_sample(c, 1, o->warmup, o->iters, reps, x->span, NULL, x->why,
			       sizeof(x->why)))
			return -1;
		gpu_rates_GBps(x->span, reps, 1, (double)bytes * o->iters, x->v);
		rec = pair_record(x, "p2p_uni", i, j, bytes, o->iters);
		gpu_bw_fields(rec, x->v, reps);
		json_array_append_new(x->recs, rec);
		if (j < i)
			continue;
		/* both ways at once, once per pair: the sum of the two directions */
		c[1] = pair_copy(x, j, i, bytes);
		if (gpu_sample(c, 2, o->warmup, o->iters, reps, x->span, x->each, x->why,
			       sizeof(x->why)))
			return -1;
		gpu_rates_GBps(x->span, reps, 1, 2.0 * bytes * o->iters, x->v);
		rec = pair_record(x, "p2p_bidir", i, j, bytes, o->iters);
		gpu_bw_fields(rec, x->v, reps);
		for (int d = 0; d < 2; d++) {
			gpu_rates_GBps(x->each + d, reps, 2, (double)bytes * o->iters, x->v);
			json_object_set_new(rec, d ? "ba_GBps" : "ab_GBps",
					    json_real(stats_median(x->v, (size_t)reps)));
		}
		json_array_append_new(x->recs, rec);
	}
	return 0;
}

/* The k-th ordered pair (i, j), i != j, of n GPUs; 0, or -1 past the last. */
static int nth_pair(int n, int k, int *i, int *j)
{
	if (n < 2 || k >= n * (n - 1))
		return -1;
	*i = k / (n - 1);
	*j = k % (n - 1);
	if (*j >= *i)
		(*j)++;
	return 0;
}

/*
 * Compute mode EXCLUSIVE_PROCESS or PROHIBITED on any GPU driven: one
 * process cannot hold contexts on the host's GPUs, so the pairs cannot be
 * driven. Returns 1 with why naming the GPU, else 0.
 */
static int exclusive_mode(struct nvl *x, char *why, size_t len)
{
	for (int i = 0; i < x->n; i++) {
		int mode = cudaComputeModeDefault;

		if (cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, x->dev[i]) == cudaSuccess &&
		    (mode == cudaComputeModeExclusiveProcess || mode == cudaComputeModeProhibited)) {
			snprintf(why, len, "GPU %s on %s is in compute mode %s: one process cannot "
				 "drive the host's GPUs (nvidia-smi -c DEFAULT allows it)", x->bus[i],
				 x->run->mpi->host, mode == cudaComputeModeProhibited ? "PROHIBITED" :
				 "EXCLUSIVE_PROCESS");
			return 1;
		}
	}
	return 0;
}

/* Rank 0: one host's matrices from its records. */
static void print_host(const char *host, json_t *all, size_t max_bytes)
{
	const char *tests[] = { "p2p_uni", "p2p_bidir", "p2p_lat" };
	const char *titles[] = {
		"unidirectional copy bandwidth (GB/s), row = source GPU, column = destination",
		"bidirectional copy bandwidth, both ways summed (GB/s)",
		"latency of a 4-byte copy (us, median)",
	};
	int n = 0;
	json_t *r;
	size_t k;

	json_array_foreach(all, k, r) {
		if (strcmp(json_string_value(json_object_get(r, "host")), host))
			continue;
		n = (int)fmax(n, json_integer_value(json_object_get(r, "src_gpu")) + 1);
		n = (int)fmax(n, json_integer_value(json_object_get(r, "dst_gpu")) + 1);
	}
	if (n < 2 || n > GPU_MAX)
		return;
	for (int t = 0; t < 3; t++) {
		double m[GPU_MAX * GPU_MAX];
		char title[400];

		for (int i = 0; i < n * n; i++)
			m[i] = NAN;
		json_array_foreach(all, k, r) {
			int a = (int)json_integer_value(json_object_get(r, "src_gpu"));
			int b = (int)json_integer_value(json_object_get(r, "dst_gpu"));
			json_t *v;

			if (strcmp(json_string_value(json_object_get(r, "host")), host) ||
			    strcmp(json_string_value(json_object_get(r, "test")), tests[t]) ||
			    a < 0 || b < 0 || a >= n || b >= n ||
			    (t < 2 && (size_t)json_integer_value(json_object_get(r, "bytes")) != max_bytes))
				continue;
			v = t == 2 ? json_object_get(json_object_get(r, "lat_us"), "median") :
				     json_object_get(r, "bw_GBps");
			m[a * n + b] = json_number_value(v);
			if (t == 1)
				m[b * n + a] = m[a * n + b];
		}
		snprintf(title, sizeof(title), "%s: nvlink %s", host, titles[t]);
		gpu_matrix_print(stdout, title, n, m, t == 2 ? 2 : 1);
	}
	fflush(stdout);
}

static void nvl_print(struct cc_run *run, json_t *all, size_t max_bytes)
{
	char sz[32];

	printf("# nvlink: cudaMemcpyPeerAsync, %s copies (latency: 4 B), median of %d reps; "
	       "GB/s = 1e9 bytes/s; n/a = not measured\n", size_human((double)max_bytes, sz, sizeof(sz)),
	       run->opt->reps);
	for (int h = 0; h < run->mpi->nnodes; h++)
		print_host(run->mpi->hosts[h], all, max_bytes);
}

static int nvlink_run(struct cc_run *run)
{
	struct mpictx *mpi = run->mpi;
	struct nvl x = { .run = run };
	struct gpu_ctx g;
	char why[400] = "";
	int rc, failed = 0, pairs = 0, pairs_any, most;
	json_t *all;

	rc = gpu_open(run, "nvlink", &g, why, sizeof(why));
	if (rc) {
		return gpu_open_failed(run, "nvlink", rc, why);
	}
	x.nsizes = gpu_copy_sizes(run->opt, NVL_SIZE, NVL_SIZE, x.sizes, NVL_MAX_SIZES);
	if (mpi->local_rank == 0)
		pick_devices(&x, &g);
	pairs = x.n >= 2 && !exclusive_mode(&x, why, sizeof(why));
	pairs_any = pairs;
	if (x.n < 2)
		snprintf(why, sizeof(why), "needs 2 or more GPUs on a host; no host's local rank 0 "
			 "sees more than 1 (%s; --gpus %s)", !strcmp(g.selection, "per-rank visibility") ?
			 "each rank sees one GPU: per-rank CUDA_VISIBLE_DEVICES; nvlink needs one "
			 "process that sees all the host's GPUs" : "selection by local rank",
			 gpu_list_option() ? gpu_list_option() : "not given");
	/* the reason of the lowest host that cannot drive pairs; a skip when none can */
	rc = run_agree(mpi->world, mpi->local_rank == 0 && !pairs, mpi->host, why, sizeof(why));
	MPI_Allreduce(MPI_IN_PLACE, &pairs_any, 1, MPI_INT, MPI_MAX, mpi->world);
	if (!pairs_any)
		return gpu_open_failed(run, "nvlink", 1, why);
	most = pairs ? x.n * (x.n - 1) : 0;
	MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_INT, MPI_MAX, mpi->world);
	x.recs = json_array();
	x.errs = json_array();
	x.span = calloc((size_t)run->opt->reps, sizeof(double));
	x.each = calloc((size_t)run->opt->reps * 2, sizeof(double));
	x.v = calloc((size_t)run->opt->reps, sizeof(double));
	if (!x.span || !x.each || !x.v) {
		snprintf(x.why, sizeof(x.why), "out of memory");
		failed = 1;
	}
	watchdog_arm("gpu setup", json_pack("{s:s, s:s}", "kind", "probe", "probe", "nvlink"));
	if (pairs && !failed)
		nvl_setup(&x, x.sizes[x.nsizes - 1]);
	MPI_Barrier(mpi->world);
	watchdog_disarm();
	gpu_errors(run, "nvlink", x.errs);
	x.errs = NULL;
	/* one deadline per pair: staged copies (no P2P) are slow but each ends in time */
	for (int k = 0; k < most; k++) {
		char what[64];
		int i, j;

		snprintf(what, sizeof(what), "nvlink pair %d of %d", k + 1, most);
		watchdog_arm(what, json_pack("{s:s, s:s, s:i}", "kind", "probe", "probe", "nvlink",
					     "pair", k));
		if (pairs && !failed && !nth_pair(x.n, k, &i, &j) && !x.bad[i] && !x.bad[j])
			failed = measure_pair(&x, i, j) != 0;
		MPI_Barrier(mpi->world);
		watchdog_disarm();
	}
	if (pairs && g.dev >= 0)
		cudaSetDevice(g.dev);
	rc = run_phase_end(run, "nvlink", failed, x.why);
	all = gpu_emit(run, x.recs);
	x.recs = NULL;
	if (mpi->rank == 0 && !run->opt->quiet)
		nvl_print(run, all, x.sizes[x.nsizes - 1]);
	json_decref(all);
	nvl_teardown(&x);
	return rc ? CC_EXIT_FAIL : CC_EXIT_OK;
}

#endif /* HAVE_CUDA */

const struct probe probe_nvlink = {
	.name = "nvlink",
	.phase = PHASE_NODE,
	.estimate = nvlink_estimate,
	.summary = "GPU-to-GPU copy bandwidth and latency matrix of each host (P2P)",
#ifdef HAVE_CUDA
	.check = gpu_check_params,
	.run = nvlink_run,
#else
	.missing = "built without CUDA",
#endif
};
