/*
 * report/model_compute.c: what the gemm and gpuhealth probes measured, for
 * the training estimate and the hardware check (docs/compute.md,
 * docs/estimate.md "Measured compute and memory"):
 *  - compute per step from the measured matmul TFLOP/s of the slowest GPU
 *    (a step waits for its slowest rank) times the workload's
 *    matmul_efficiency, instead of the vendor peak times an assumed MFU;
 *  - the memory fit: model states per GPU (weights, gradients, optimizer
 *    states as the ZeRO stage and data-parallel size shard them) against
 *    the usable memory the GPUs reported, and what would fit when they
 *    do not;
 *  - each GPU's total memory against the profile's gpu_memory.
 * Records of the test double ("test_double": true) and of the test
 * transport are never used, as eval.c never judges them.
 */
#include "model_compute.h"
#include "estimate.h"
#include "eval_state.h"
#include "profile.h"
#include "record.h"
#include "workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int from_double(const struct rv *r)
{
	const char *t = rv_str(r, "transport");

	return rv_true(r, "test_double") || (t && !strcmp(t, "fake"));
}

static json_t *sub(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	if (!v) {
		v = json_object();
		if (!v || json_object_set_new(o, k, v))
			return NULL;
	}
	return v;
}

static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

void compute_note_memory(struct eval *e, const char *element, const char *host, double total,
			 double free_bytes)
{
	json_t *mem = sub(e->compute, "memory"), *g;
	double t, f;

	if (!mem || !element)
		return;
	g = json_object_get(mem, element);
	if (!g) {
		g = json_pack("{s:s}", "host", host ? host : "");
		if (!g || json_object_set_new(mem, element, g))
			return;
	}
	/* several readings (inventory, gpuhealth before and after): the least counts */
	t = num(g, "total_bytes");
	f = num(g, "free_bytes");
	if (isfinite(total) && total > 0 && !(t <= total))
		json_object_set_new(g, "total_bytes", json_real(total));
	if (isfinite(free_bytes) && free_bytes >= 0 && !(f <= free_bytes))
		json_object_set_new(g, "free_bytes", json_real(free_bytes));
}

int compute_note(struct eval *e, const struct rv *r)
{
	const char *name = rv_str(r, "name"), *test = rv_str(r, "test");
	const char *el = rv_str(r, "element"), *dt = rv_str(r, "dtype");
	double v, total = NAN, free_bytes = NAN;
	json_t *by, *best;

	if (from_double(r) || !name || !el)
		return 0;
	if (!strcmp(name, "gpuhealth")) {
		rv_num(r, NULL, "mem_total_bytes", &total);
		rv_num(r, NULL, "mem_free_bytes", &free_bytes);
		compute_note_memory(e, el, rv_str(r, "host"), total, free_bytes);
		return 0;
	}
	if (!test || strcmp(test, "matmul") || !dt || rv_num(r, NULL, "tflops", &v) || !(v > 0))
		return 0;
	/* per GPU the best of its shapes: what the GPU can do, as the gemm criteria judge it */
	by = sub(sub(e->compute, "tflops"), dt);
	if (!by)
		return -1;
	best = json_object_get(by, el);
	if (!best || json_number_value(best) < v)
		json_object_set_new(by, el, json_real(v));
	return 0;
}

json_t *compute_memory_check(const struct eval *e)
{
	json_t *out = json_array(), *g;
	const char *el;
	double want = e->p->gpu_memory_gb;
	char exp[32], found[32];

	if (!(want > 0))
		return out;
	snprintf(exp, sizeof(exp), ">= %g GB", want);
	json_object_foreach(json_object_get(e->compute, "memory"), el, g) {
		double t = num(g, "total_bytes");

		if (!(t < want * 1e9))
			continue;
		snprintf(found, sizeof(found), "%.1f GB", t / 1e9);
		json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:[s], s:s}", "key", "gpu_memory",
			"expected", exp, "found", found, "hosts", el, "element", el));
	}
	return out;
}

static const char *compute_dtype(const struct workload *w)
{
	return w->s[WL_COMPUTE_DTYPE] ? w->s[WL_COMPUTE_DTYPE] : "bf16";
}

json_t *compute_rate(const struct eval *e, struct est_inputs *in)
{
	const struct workload *w = &e->p->wl;
	const char *dt = compute_dtype(w), *el, *slow = NULL;
	json_t *by = json_object_get(json_object_get(e->compute, "tflops"), dt), *v;
	double min = INFINITY, peak = in->peak_tflops, mfu = in->mfu, eff;
	char buf[48];

	json_object_foreach(by, el, v)
		if (json_number_value(v) < min) {
			min = json_number_value(v);
			slow = el;
		}
	if (!slow)
		return json_pack("{s:s, s:s, s:s, s:f, s:f}", "basis", "vendor peak", "dtype", dt,
				 "reason", "no gemm measurement of this dtype in the results (ccprobe gemm)",
				 "peak_tflops", peak, "mfu", mfu);
	eff = workload_value(w, WL_MATMUL_EFF);
	in->peak_tflops = min;
	in->mfu = eff;
	return json_pack("{s:s, s:s, s:f, s:s, s:i, s:f, s:s, s:f, s:f, s:f}", "basis", "measured",
			 "dtype", dt, "measured_tflops", min, "slowest_gpu", slow,
			 "gpus_measured", (int)json_object_size(by), "matmul_efficiency", eff,
			 "matmul_efficiency_source", workload_source(w, WL_MATMUL_EFF, buf, sizeof(buf)),
			 "vendor_peak_tflops", peak, "mfu_given", mfu,
			 "mfu_implied", peak > 0 ? min * eff / peak : 0.0);
}

/* bytes of model states per GPU for a stage and data-parallel size (ZeRO paper, Rajbhandari et al.) */
static double states(int stage, double n, double p, double wb, double gb, double ob,
		     double *weights, double *grads, double *optim)
{
	*weights = wb * p / (stage == EST_ZERO3 ? n : 1);
	*grads = gb * p / (stage >= EST_ZERO2 ? n : 1);
	*optim = ob * p / (stage >= EST_ZERO1 ? n : 1);
	return *weights + *grads + *optim;
}

json_t *compute_memory_fit(const struct eval *e, const struct est_inputs *in, int *fits,
			   char *why, size_t len)
{
	const struct workload *w = &e->p->wl;
	double wb = workload_value(w, WL_WEIGHT_BYTES), gb = in->bytes_per_grad;
	double ob = workload_value(w, WL_OPTIM_BYTES), mp = (double)in->gpus / in->dp_size;
	double p = in->params / mp, n = in->dp_size, usable = INFINITY, sw, sg, so, need;
	const char *el, *at = NULL;
	json_t *mem = json_object_get(e->compute, "memory"), *g, *o;
	char alt[160] = "";

	*fits = 1;
	json_object_foreach(mem, el, g)
		if (num(g, "free_bytes") < usable) {
			usable = num(g, "free_bytes");
			at = el;
		}
	need = states((int)in->stage, n, p, wb, gb, ob, &sw, &sg, &so);
	o = json_pack("{s:f, s:f, s:f, s:f, s:f, s:s, s:i, s:f, s:f, s:f, s:f}",
		      "bytes_per_param", wb + gb + ob, "weight_bytes", wb, "grad_bytes", gb,
		      "optimizer_bytes", ob, "params_per_gpu_shard", p,
		      "stage", est_stage_name(in->stage), "dp_size", in->dp_size,
		      "weights_bytes", sw, "grads_bytes", sg, "optimizer_states_bytes", so,
		      "states_bytes", need);
	if (!o)
		return json_null();
	if (!at) {
		json_object_set_new(o, "measured", json_false());
		json_object_set_new(o, "reason", json_string("no measured GPU memory in the results "
			"(ccprobe gpuhealth reports cudaMemGetInfo's free bytes)"));
		return o;
	}
	json_object_set_new(o, "measured", json_true());
	json_object_set_new(o, "usable_bytes", json_real(usable));
	json_object_set_new(o, "usable_gpu", json_string(at));
	json_object_set_new(o, "headroom_bytes", json_real(usable - need));
	json_object_set_new(o, "fits", json_boolean(need <= usable));
	if (need <= usable)
		return o;
	*fits = 0;
	/* the next stage that fits at this dp_size, else the dp_size ZeRO-3 needs */
	for (int st = (int)in->stage + 1; st <= EST_ZERO3 && !alt[0]; st++)
		if (states(st, n, p, wb, gb, ob, &sw, &sg, &so) <= usable) {
			snprintf(alt, sizeof(alt), "%s at dp_size %d would fit (%.1f GB)",
				 est_stage_name(st), in->dp_size, states(st, n, p, wb, gb, ob, &sw, &sg, &so) / 1e9);
			json_object_set_new(o, "would_fit", json_pack("{s:s, s:i}", "stage",
					    est_stage_name(st), "dp_size", in->dp_size));
		}
	if (!alt[0]) {
		double dp = usable > 0 ? ceil((wb + gb + ob) * p / usable) : INFINITY;

		if (isfinite(dp) && dp < 1e9) {
			snprintf(alt, sizeof(alt), "zero3 at dp_size %.0f or more would fit", dp);
			json_object_set_new(o, "would_fit", json_pack("{s:s, s:i}", "stage", "zero3",
					    "dp_size", (int)dp));
		} else {
			snprintf(alt, sizeof(alt), "no stage or dp_size fits");
		}
	}
	snprintf(why, len, "the model states do not fit: %.1f GB per GPU (%s, dp_size %d, %g bytes "
		 "per parameter) against %.1f GB usable on %s; %s; no estimate is made for a "
		 "configuration that cannot run", need / 1e9, est_stage_name(in->stage), in->dp_size,
		 wb + gb + ob, usable / 1e9, at, alt);
	return o;
}

void compute_label(json_t *j, const json_t *compute)
{
	json_t *in = json_object_get(j, "inputs"), *src = json_object_get(j, "sources");
	json_t *notes = json_object_get(j, "notes");
	const char *basis = json_string_value(json_object_get(compute, "basis"));

	json_object_set(j, "compute", (json_t *)compute);
	if (!basis || strcmp(basis, "measured")) {
		if (src)
			json_object_set_new(src, "peak_tflops", json_string("vendor peak (fallback: no gemm "
				"measurement of the compute dtype)"));
		if (notes)
			json_array_append_new(notes, json_sprintf("compute per step uses the vendor peak "
				"%g TFLOP/s x MFU %g: no gemm measurement of %s in the results",
				num(compute, "peak_tflops"), num(compute, "mfu"),
				json_string_value(json_object_get(compute, "dtype"))));
		return;
	}
	/* est_json wrote the measured rate in peak_tflops: put back what was given */
	json_object_set_new(in, "peak_tflops", json_real(num(compute, "vendor_peak_tflops")));
	json_object_set_new(in, "mfu", json_real(num(compute, "mfu_given")));
	json_object_set_new(in, "measured_tflops", json_real(num(compute, "measured_tflops")));
	json_object_set_new(in, "matmul_efficiency", json_real(num(compute, "matmul_efficiency")));
	if (src) {
		json_object_set_new(src, "peak_tflops", json_string("given; not used: a gemm "
			"measurement exists (fallback only)"));
		json_object_set_new(src, "mfu", json_string("given; not used: matmul_efficiency "
			"applies to the measured rate"));
		json_object_set_new(src, "measured_tflops", json_sprintf("measured: gemm %s matmul, the "
			"slowest of %d GPU(s): %s",
			json_string_value(json_object_get(compute, "dtype")),
			(int)json_integer_value(json_object_get(compute, "gpus_measured")),
			json_string_value(json_object_get(compute, "slowest_gpu"))));
		json_object_set(src, "matmul_efficiency", json_object_get(compute, "matmul_efficiency_source"));
	}
	if (notes)
		json_array_append_new(notes, json_sprintf("compute per step uses the measured %s matmul "
			"rate of the slowest GPU (%s, %.1f TFLOP/s) x matmul_efficiency %.2f = %.1f "
			"TFLOP/s per GPU (MFU %.1f %% of the vendor peak %.1f)",
			json_string_value(json_object_get(compute, "dtype")),
			json_string_value(json_object_get(compute, "slowest_gpu")),
			num(compute, "measured_tflops"), num(compute, "matmul_efficiency"),
			num(compute, "measured_tflops") * num(compute, "matmul_efficiency"),
			100 * num(compute, "mfu_implied"), num(compute, "vendor_peak_tflops")));
}

void compute_memory_note(json_t *j, json_t *mem)
{
	json_t *notes = json_object_get(j, "notes");

	json_object_set_new(j, "memory_fit", mem);
	if (!notes)
		return;
	if (!json_is_true(json_object_get(mem, "measured")))
		json_array_append_new(notes, json_sprintf("memory fit: model states %.4g GB per GPU "
			"(%g bytes per parameter, %s, dp_size %d); not checked: %s",
			num(mem, "states_bytes") / 1e9, num(mem, "bytes_per_param"),
			json_string_value(json_object_get(mem, "stage")),
			(int)json_integer_value(json_object_get(mem, "dp_size")),
			json_string_value(json_object_get(mem, "reason"))));
	else
		json_array_append_new(notes, json_sprintf("memory fit: model states %.4g GB per GPU "
			"(%g bytes per parameter, %s, dp_size %d) of %.1f GB usable on %s: %.1f GB "
			"left for activations", num(mem, "states_bytes") / 1e9,
			num(mem, "bytes_per_param"), json_string_value(json_object_get(mem, "stage")),
			(int)json_integer_value(json_object_get(mem, "dp_size")),
			num(mem, "usable_bytes") / 1e9, json_string_value(json_object_get(mem, "usable_gpu")),
			num(mem, "headroom_bytes") / 1e9));
}
