/*
 * hbm: device-memory bandwidth of every GPU, to spot a weak card. Three
 * figures per size, each with its own name and convention (docs/gpu.md):
 *  - copy: a copy kernel (BabelStream's copy: grid-stride, 16-byte vector
 *    loads and stores; PTX loaded with cuModuleLoadData, gpu/kernels.cu),
 *    read + write counted, bw = 2 x bytes x copies / time. The figure the
 *    profiles judge: it is what the memory delivers to the SMs.
 *  - triad: a[i] = b[i] + s c[i] (BabelStream's triad), two reads and a
 *    write counted, bw = 3 x bytes x runs / time.
 *  - copy_engine: cudaMemcpyAsync device to device, read + write counted
 *    (the CUDA samples' figure; copy_GBps counts the bytes once, as
 *    nvbandwidth). On Hopper the copy engines reach only ~67-74 % of the
 *    memory's rate, where a kernel reaches ~80-90 %: recorded beside the
 *    kernel's, never judged in its place.
 * Every GPU runs at once: device memory is not shared between GPUs.
 */
#include "../gpu/gpu.h"
#include "probe.h"

#define HBM_MIN ((size_t)256 << 20)   /* default sizes when neither -b nor -e is given */
#define HBM_MAX ((size_t)1 << 30)

/* every GPU at once: per size the copy kernel (2 x bytes), triad (3 x) and the copy engine (2 x) at a nominal 2500 GB/s */
static double hbm_estimate(const struct cc_options *o)
{
	return probe_sweep_seconds(o, HBM_MIN, HBM_MAX, 2500, 7) + 2;
}

#ifdef HAVE_CUDA

#include "../core/watchdog.h"

#include <stdlib.h>

#define HBM_MAX_SIZES 64
#define TRIAD_SCALAR 0.4             /* BabelStream's startScalar */

struct hbm {
	void *a, *b, *c;
	cudaStream_t s;
	double rate;             /* theoretical GB/s from clock and bus width; 0 unknown */
	double *span, *bw;
	struct gpu_kernels k;
	char kern_why[300];      /* non-empty: the kernels could not be loaded */
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
	/* a, b, c as BabelStream's; the copies read a and write b, triad writes a */
	if ((e = cudaMalloc(&h->a, max)) != cudaSuccess ||
	    (e = cudaMalloc(&h->b, max)) != cudaSuccess ||
	    (e = cudaMalloc(&h->c, max)) != cudaSuccess ||
	    (e = cudaMemset(h->a, 1, max)) != cudaSuccess ||
	    (e = cudaMemset(h->b, 2, max)) != cudaSuccess ||
	    (e = cudaMemset(h->c, 3, max)) != cudaSuccess ||
	    (e = cudaStreamCreateWithFlags(&h->s, cudaStreamNonBlocking)) != cudaSuccess ||
	    /* the memsets ran on the default stream, which the copy stream does not wait for */
	    (e = cudaDeviceSynchronize()) != cudaSuccess)
		return gpu_cuda_fail(e, "hbm setup", why, len);
	/* without the kernels the copy engine is still measured; the kernel figures are errors */
	gpu_kernels_load(dev, &h->k, h->kern_why, sizeof(h->kern_why));
	return 0;
}

static void hbm_teardown(struct hbm *h, int dev)
{
	if (dev >= 0) {
		gpu_kernels_unload(&h->k);
		if (h->s)
			cudaStreamDestroy(h->s);
		cudaFree(h->a);
		cudaFree(h->b);
		cudaFree(h->c);
	}
	free(h->span);
	free(h->bw);
}

/* What one figure of the probe is: its test, how it runs, what it counts. */
struct hbm_test {
	const char *test;        /* the record's test */
	const char *method;      /* "kernel" or "cudaMemcpyAsync" */
	int counted;             /* bytes of traffic per byte of the size: 2 (copy), 3 (triad) */
	const char *convention;
};

static const struct hbm_test hbm_copy = { "copy", "kernel", 2,
	"bw_GBps counts read + write (2 x bytes per copy), as BabelStream's copy, by a copy kernel "
	"(grid-stride, 16-byte vectors); copy_GBps counts the bytes copied once" };
static const struct hbm_test hbm_triad = { "triad", "kernel", 3,
	"bw_GBps counts two reads and a write (3 x bytes per run), as BabelStream's triad "
	"a = b + s c on doubles" };
static const struct hbm_test hbm_ce = { "copy_engine", "cudaMemcpyAsync", 2,
	"bw_GBps counts read + write (2 x bytes, as the CUDA samples) of cudaMemcpyAsync device to "
	"device, run by the copy engines; copy_GBps counts the bytes copied once (nvbandwidth "
	"device_local_copy). Not the figure judged: copy engines reach less of the rate than a kernel" };

static int hbm_measure(struct cc_run *run, const struct gpu_ctx *g, struct hbm *h,
		       const struct hbm_test *t, size_t bytes, json_t *recs, char *why, size_t len)
{
	const struct cc_options *o = run->opt;
	struct gpu_copy c = { .dst = h->b, .src = h->a, .bytes = bytes, .dev = g->dev,
			      .peer_dst = -1, .peer_src = -1, .stream = h->s, .gate = 1 };
	/* the kernels' elements are 16 bytes: a size below is measured by the copy engine alone */
	unsigned long long n16 = bytes / 16;
	double scalar = TRIAD_SCALAR, bw;
	void *copy_args[] = { &h->a, &h->b, &n16 }, *triad_args[] = { &h->a, &h->b, &h->c, &scalar, &n16 };
	json_t *rec;

	if (t != &hbm_ce) {
		if (!n16)
			return 0;
		bytes = (size_t)n16 * 16;
		c.kern = &h->k;
		c.fn = t == &hbm_copy ? h->k.copy : h->k.triad;
		c.params = t == &hbm_copy ? copy_args : triad_args;
	}
	if (gpu_sample(&c, 1, o->warmup, o->iters, o->reps, h->span, NULL, why, len))
		return -1;
	gpu_rates_GBps(h->span, o->reps, 1, (double)t->counted * bytes * o->iters, h->bw);
	rec = json_pack("{s:s, s:s, s:s, s:s, s:n, s:s, s:s, s:I, s:i, s:i, s:i, s:s, s:i, s:b}",
			"kind", "probe", "name", "hbm", "test", t->test, "scope", "gpu", "element",
			"host", run->mpi->host, "bus_id", g->bus_id, "bytes", (json_int_t)bytes,
			"iters", o->iters, "reps", o->reps, "warmup", o->warmup,
			"method", t->method, "bytes_counted", t->counted,
			"counts_read_and_write", 1);
	bw = gpu_bw_fields(rec, h->bw, o->reps);
	if (t->counted == 2)
		json_object_set_new(rec, "copy_GBps", json_real(bw / 2));
	json_object_set_new(rec, "convention", json_string(t->convention));
	if (c.kern) {
		json_object_set_new(rec, "grid", json_integer(h->k.grid));
		json_object_set_new(rec, "block", json_integer(h->k.block));
	}
	if (h->rate > 0) {
		json_object_set_new(rec, "rate_GBps", json_real(h->rate));
		json_object_set_new(rec, "pct_of_rate", json_real(100.0 * bw / h->rate));
	}
	json_array_append_new(recs, rec);
	return 0;
}

/* The kernels could not be loaded: an error record naming the GPU, once per test. */
static void hbm_kernel_error(struct cc_run *run, const struct gpu_ctx *g, const struct hbm *h,
			     json_t *recs)
{
	json_array_append_new(recs, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o}",
		"type", "error", "kind", "probe", "name", "hbm", "test", "copy", "host",
		run->mpi->host, "bus_id", g->bus_id, "message",
		json_sprintf("hbm copy and triad kernels not run: %s (the copy engine figure is "
			     "measured; the judged copy figure is missing)", h->kern_why)));
}

static void hbm_print(struct cc_run *run, json_t *all)
{
	json_t *r;
	size_t i;

	printf("# hbm: device memory per GPU, median of %d reps x %d runs; GB/s = 1e9 bytes/s; "
	       "copy and copy_engine count read + write (2 x size), triad 3 x size; copy (a kernel) "
	       "is the figure judged\n", run->opt->reps, run->opt->iters);
	printf("#%-28s %-12s %12s %10s %10s %10s %10s %7s\n", "element", "test", "size(B)",
	       "bw(GB/s)", "min", "max", "rate", "%rate");
	json_array_foreach(all, i, r) {
		json_t *st = json_object_get(r, "bw_stats_GBps"), *rate = json_object_get(r, "rate_GBps");

		if (!json_object_get(r, "bw_GBps"))
			continue;
		printf(" %-28s %-12s %12lld %10.1f %10.1f %10.1f",
		       json_string_value(json_object_get(r, "element")),
		       json_string_value(json_object_get(r, "test")),
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
	static const struct hbm_test *const tests[] = { &hbm_copy, &hbm_triad, &hbm_ce };
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
	if (!failed && g.dev >= 0 && h.kern_why[0])
		hbm_kernel_error(run, &g, &h, recs);
	watchdog_arm("hbm copy", json_pack("{s:s, s:s}", "kind", "probe", "probe", "hbm"));
	for (size_t i = 0; i < n && !failed && g.dev >= 0; i++)
		for (size_t t = 0; t < sizeof(tests) / sizeof(*tests) && !failed; t++)
			if (tests[t] == &hbm_ce || !h.kern_why[0])
				failed = hbm_measure(run, &g, &h, tests[t], sizes[i], recs, why,
						     sizeof(why)) != 0;
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
	.summary = "device-memory bandwidth per GPU: copy and triad kernels, copy engine (read + write counted)",
#ifdef HAVE_CUDA
	.check = gpu_check_params,
	.run = hbm_run,
#else
	.missing = "built without CUDA",
#endif
};
