/*
 * hbm: device-local copy bandwidth of every GPU (cudaMemcpyAsync device to
 * device on one GPU), to spot a weak card. Each copy reads and writes its
 * bytes, and both are counted (as the CUDA samples' device-to-device
 * figure): bw = 2 x bytes x copies / time. Every GPU runs at once: device
 * memory is not shared between GPUs. docs/gpu.md has the method.
 */
#include "../gpu/gpu.h"
#include "probe.h"

#define HBM_MIN ((size_t)256 << 20)   /* default sizes when neither -b nor -e is given */
#define HBM_MAX ((size_t)1 << 30)

/* every GPU at once: the sweep of copies (read + write) at a nominal 2500 GB/s */
static double hbm_estimate(const struct cc_options *o)
{
	return probe_sweep_seconds(o, HBM_MIN, HBM_MAX, 2500, 2) + 2;
}

#ifdef HAVE_CUDA

#include "../core/watchdog.h"

#include <stdlib.h>

#define HBM_MAX_SIZES 64

struct hbm {
	void *a, *b;
	cudaStream_t s;
	double rate;             /* theoretical GB/s from clock and bus width; 0 unknown */
	double *span, *bw;
};

static int hbm_setup(struct hbm *h, int dev, size_t max, int reps, char *why, size_t len)
{
	int clk = 0, bits = 0;
	cudaError_t e;

	h->span = calloc((size_t)reps, sizeof(double));
	h->bw = calloc((size_t)reps, sizeof(double));
	if (!h->span || !h->bw) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	if (dev < 0)
		return 0;
	cudaDeviceGetAttribute(&clk, cudaDevAttrMemoryClockRate, dev);
	cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, dev);
	h->rate = gpu_mem_rate_GBps(clk, bits);
	if ((e = cudaMalloc(&h->a, max)) != cudaSuccess ||
	    (e = cudaMalloc(&h->b, max)) != cudaSuccess ||
	    (e = cudaMemset(h->a, 1, max)) != cudaSuccess ||
	    (e = cudaStreamCreateWithFlags(&h->s, cudaStreamNonBlocking)) != cudaSuccess ||
	    /* the memset ran on the default stream, which the copy stream does not wait for */
	    (e = cudaDeviceSynchronize()) != cudaSuccess)
		return gpu_cuda_fail(e, "hbm setup", why, len);
	return 0;
}

static void hbm_teardown(struct hbm *h, int dev)
{
	if (dev >= 0) {
		if (h->s)
			cudaStreamDestroy(h->s);
		cudaFree(h->a);
		cudaFree(h->b);
	}
	free(h->span);
	free(h->bw);
}

static int hbm_measure(struct cc_run *run, const struct gpu_ctx *g, struct hbm *h, size_t bytes,
		       json_t *recs, char *why, size_t len)
{
	const struct cc_options *o = run->opt;
	struct gpu_copy c = { .dst = h->b, .src = h->a, .bytes = bytes, .dev = g->dev,
			      .peer_dst = -1, .peer_src = -1, .stream = h->s, .gate = 1 };
	double bw;
	json_t *rec;

	if (gpu_sample(&c, 1, o->warmup, o->iters, o->reps, h->span, NULL, why, len))
		return -1;
	gpu_rates_GBps(h->span, o->reps, 1, 2.0 * bytes * o->iters, h->bw);
	rec = json_pack("{s:s, s:s, s:s, s:s, s:n, s:s, s:s, s:I, s:i, s:i, s:i, s:b}",
			"kind", "probe", "name", "hbm", "test", "copy", "scope", "gpu", "element",
			"host", run->mpi->host, "bus_id", g->bus_id, "bytes", (json_int_t)bytes,
			"iters", o->iters, "reps", o->reps, "warmup", o->warmup,
			"counts_read_and_write", 1);
	bw = gpu_bw_fields(rec, h->bw, o->reps);
	/* nvbandwidth's device_local_copy counts the bytes once: the same samples, halved */
	json_object_set_new(rec, "copy_GBps", json_real(bw / 2));
	json_object_set_new(rec, "convention", json_string(
		"bw_GBps counts read + write (2 x bytes, as the CUDA samples); copy_GBps counts "
		"the bytes copied once (nvbandwidth device_local_copy)"));
	if (h->rate > 0) {
		json_object_set_new(rec, "rate_GBps", json_real(h->rate));
		json_object_set_new(rec, "pct_of_rate", json_real(100.0 * bw / h->rate));
	}
	json_array_append_new(recs, rec);
	return 0;
}

static void hbm_print(struct cc_run *run, json_t *all)
{
	json_t *r;
	size_t i;

	printf("# hbm: device-to-device copy on each GPU, read + write bytes counted; median of "
	       "%d reps x %d copies; GB/s = 1e9 bytes/s\n", run->opt->reps, run->opt->iters);
	printf("#%-28s %12s %10s %10s %10s %10s %7s\n", "element", "size(B)", "bw(GB/s)", "min",
	       "max", "rate", "%rate");
	json_array_foreach(all, i, r) {
		json_t *st = json_object_get(r, "bw_stats_GBps"), *rate = json_object_get(r, "rate_GBps");

		printf(" %-28s %12lld %10.1f %10.1f %10.1f", json_string_value(json_object_get(r, "element")),
		       (long long)json_integer_value(json_object_get(r, "bytes")),
		       json_real_value(json_object_get(r, "bw_GBps")),
		       json_real_value(json_object_get(st, "min")),
		       json_real_value(json_object_get(st, "max")));
		if (rate)
			printf(" %10.1f %7.1f\n", json_real_value(rate),
			       json_real_value(json_object_get(r, "pct_of_rate")));
		else
			printf(" %10s %7s\n", "-", "-");
	}
	fflush(stdout);
}

static int hbm_run(struct cc_run *run)
{
	struct mpictx *mpi = run->mpi;
	struct gpu_ctx g;
	struct hbm h = { 0 };
	size_t sizes[HBM_MAX_SIZES], n;
	char why[400] = "";
	json_t *recs = json_array(), *all;
	int rc, failed;

	rc = gpu_open(run, "hbm", &g, why, sizeof(why));
	if (rc) {
		json_decref(recs);
		return gpu_open_failed(run, "hbm", rc, why);
	}
	n = gpu_copy_sizes(run->opt, HBM_MIN, HBM_MAX, sizes, HBM_MAX_SIZES);
	watchdog_arm("gpu setup", json_pack("{s:s, s:s}", "kind", "probe", "probe", "hbm"));
	failed = hbm_setup(&h, g.dev, sizes[n - 1], run->opt->reps, why, sizeof(why)) != 0;
	watchdog_disarm();
	watchdog_arm("hbm copy", json_pack("{s:s, s:s}", "kind", "probe", "probe", "hbm"));
	for (size_t i = 0; i < n && !failed && g.dev >= 0; i++)
		failed = hbm_measure(run, &g, &h, sizes[i], recs, why, sizeof(why)) != 0;
	MPI_Barrier(mpi->world);
	watchdog_disarm();
	rc = run_phase_end(run, "hbm", failed, why);
	all = gpu_emit(run, recs);
	if (mpi->rank == 0 && !run->opt->quiet)
		hbm_print(run, all);
	json_decref(all);
	hbm_teardown(&h, g.dev);
	return rc ? CC_EXIT_FAIL : CC_EXIT_OK;
}

#endif /* HAVE_CUDA */

const struct probe probe_hbm = {
	.name = "hbm",
	.phase = PHASE_NODE,
	.estimate = hbm_estimate,
	.summary = "device-memory copy bandwidth per GPU (read + write counted)",
#ifdef HAVE_CUDA
	.check = gpu_check_params,
	.run = hbm_run,
#else
	.missing = "built without CUDA",
#endif
};
