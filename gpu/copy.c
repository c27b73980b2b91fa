/*
 * gpu/copy.c: copy (and copy kernel) timing with CUDA events (gpu_time_copies, gpu_sample),
 * and the plain arithmetic and printing around it: sizes, rates, the
 * bandwidth fields of a record, the p2pBandwidthLatencyTest-style matrix.
 */
#include "gpu.h"
#include "../core/stats.h"
#include "../core/timer.h"

#include <math.h>
#include <string.h>

size_t gpu_copy_sizes(const struct cc_options *o, size_t dmin, size_t dmax, size_t *out,
		      size_t max_out)
{
	struct cc_options d = *o;

	if (!o->sizes_set) {
		d.min_bytes = dmin;
		d.max_bytes = dmax;
		d.factor = 2;
		d.step = 0;
	}
	return sweep_sizes(&d, out, max_out);
}

double gpu_mem_rate_GBps(int clock_khz, int bus_bits)
{
	if (clock_khz <= 0 || bus_bits <= 0)
		return 0.0;
	return 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
}

void gpu_matrix_print(FILE *f, const char *title, int n, const double *m, int decimals)
{
	fprintf(f, "# %s\n", title);
	fprintf(f, "%6s", "D\\D");
	for (int j = 0; j < n; j++)
		fprintf(f, " %9d", j);
	fprintf(f, "\n");
	for (int i = 0; i < n; i++) {
		fprintf(f, "%6d", i);
		for (int j = 0; j < n; j++) {
			double v = m[i * n + j];

			if (i == j)
				fprintf(f, " %9s", "-");
			else if (isnan(v))
				fprintf(f, " %9s", "n/a");
			else
				fprintf(f, " %9.*f", decimals, v);
		}
		fprintf(f, "\n");
	}
}

void gpu_rates_GBps(const double *sec, int reps, int stride, double bytes, double *out)
{
	for (int r = 0; r < reps; r++)
		out[r] = sec[r * stride] > 0 ? bytes / sec[r * stride] / 1e9 : 0.0;
}

double gpu_bw_fields(json_t *rec, const double *bw, int n)
{
	struct stats st;

	if (n < 1 || stats_compute(bw, (size_t)n, &st))
		return 0.0;
	json_object_set_new(rec, "bw_GBps", json_real(st.median));
	json_object_set_new(rec, "bw_stats_GBps", run_stats_json(&st, 1.0));
	return st.median;
}

#ifdef HAVE_CUDA

#include <sched.h>

/* ------------------------------------------------------------------ timing */

#define GATE_LIMIT_S 5.0   /* a gate never holds a stream longer than this */

/* Holds streams until every timed copy is queued (see gpu_time_copies). */
static struct gate {
	int open;
	int expired;
} gate;

static void CUDART_CB gate_hold(void *arg)
{
	struct gate *g = arg;
	double until = timer_now() + GATE_LIMIT_S;

	/* runs on a CUDA driver thread: no CUDA calls allowed here */
	while (!__atomic_load_n(&g->open, __ATOMIC_ACQUIRE)) {
		if (timer_now() > until) {
			__atomic_store_n(&g->expired, 1, __ATOMIC_RELEASE);
			return;
		}
		sched_yield();
	}
}

/* One copy, or one kernel launch (kwhy gets the driver's error for a launch). */
static cudaError_t copy_one(const struct gpu_copy *c, char *kwhy, size_t klen)
{
	if (c->kern)
		return gpu_kernel_launch(c->kern, c->fn, c->params, c->stream, kwhy, klen) ?
		       cudaErrorLaunchFailure : cudaSuccess;
	if (c->peer_dst >= 0)
		return cudaMemcpyPeerAsync(c->dst, c->peer_dst, c->src, c->peer_src, c->bytes,
					   c->stream);
	return cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDefault, c->stream);
}

int gpu_time_copies(const struct gpu_copy *c, int n, int iters, double *sec,
		    char *why, size_t len)
{
	cudaEvent_t ev0[2] = { NULL, NULL }, ev1[2] = { NULL, NULL };
	char kwhy[300] = "";
	int most = 1, gated;
	cudaError_t e = cudaSuccess;
	const char *what = NULL;

#define TRY(call) do { if (e == cudaSuccess && (e = (call)) != cudaSuccess) what = #call; } while (0)
	if (n < 1 || n > 2 || iters < 1) {
		snprintf(why, len, "internal: %d streams, %d copies", n, iters);
		return -1;
	}
	for (int i = 0; i < n; i++)
		most = c[i].times > most ? c[i].times : most;
	gated = iters * most <= GPU_GATE_MAX_COPIES;
	__atomic_store_n(&gate.open, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&gate.expired, 0, __ATOMIC_RELEASE);
	for (int i = 0; i < n; i++) {
		TRY(cudaSetDevice(c[i].dev));
		TRY(cudaEventCreate(&ev0[i]));
		TRY(cudaEventCreate(&ev1[i]));
	}
	for (int i = 0; i < n; i++) {
		TRY(cudaSetDevice(c[i].dev));
		if (gated && c[i].gate)
			TRY(cudaLaunchHostFunc(c[i].stream, gate_hold, &gate));
		TRY(cudaEventRecord(ev0[i], c[i].stream));
	}
	/* in turn, so that two streams start together even without a gate */
	for (int k = 0; k < iters && e == cudaSuccess; k++)
		for (int i = 0; i < n; i++) {
			if (n > 1)
				TRY(cudaSetDevice(c[i].dev));
			for (int t = 0; t < (c[i].times > 1 ? c[i].times : 1); t++)
				TRY(copy_one(&c[i], kwhy, sizeof(kwhy)));
		}
	for (int i = 0; i < n; i++) {
		TRY(cudaSetDevice(c[i].dev));
		TRY(cudaEventRecord(ev1[i], c[i].stream));
	}
	/* always opened, even after an error, so no host function is left waiting */
	__atomic_store_n(&gate.open, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < n; i++) {
		float ms = 0;

		cudaSetDevice(c[i].dev);
		cudaStreamSynchronize(c[i].stream);
		TRY(cudaEventElapsedTime(&ms, ev0[i], ev1[i]));
		sec[i] = ms * 1e-3;
	}
	for (int i = 0; i < n; i++) {
		cudaSetDevice(c[i].dev);
		if (ev0[i])
			cudaEventDestroy(ev0[i]);
		if (ev1[i])
			cudaEventDestroy(ev1[i]);
	}
	cudaSetDevice(c[0].dev);
#undef TRY
	if (e != cudaSuccess && kwhy[0]) {
		snprintf(why, len, "%s", kwhy);
		return -1;
	}
	if (e != cudaSuccess)
		return gpu_cuda_fail(e, what, why, len);
	if (__atomic_load_n(&gate.expired, __ATOMIC_ACQUIRE)) {
		snprintf(why, len, "%d copies were not queued within %.0f s (the host is too slow "
			 "or the stream queue is full)", iters, GATE_LIMIT_S);
		return -1;
	}
	return 0;
}

int gpu_sample(const struct gpu_copy *c, int n, int warmup, int iters, int reps, double *span,
	       double *each, char *why, size_t len)
{
	double sec[2];

	/* warm-up: clocks ramp, pages and peer mappings settle; not counted */
	if (warmup > 0 && gpu_time_copies(c, n, warmup, sec, why, len))
		return -1;
	for (int r = 0; r < reps; r++) {
		if (gpu_time_copies(c, n, iters, sec, why, len))
			return -1;
		span[r] = n > 1 && sec[1] > sec[0] ? sec[1] : sec[0];
		for (int i = 0; each && i < n; i++)
			each[r * n + i] = sec[i];
	}
	return 0;
}

#endif /* HAVE_CUDA */
