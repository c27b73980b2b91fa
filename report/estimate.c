/*
 * Training time and cost from measured collective bandwidth (docs/estimate.md).
 * Sources: the ml-engineering notes of S. Bekman, as summarised in the
 * project's REFERENCE ("Relating communication to training time"):
 *   sync    = k x bytes_per_param x params / busbw(payload), k = 2 or 3
 *   compute = 6 x params x tokens_per_step / (GPUs x peak x MFU)
 *   days    = total_tokens / tokens_per_step x step / 86400; cost = GPUs x hours x price
 * refined here by the (n-1)/n of the busbw definition and by model
 * parallelism (each rank syncs its shard of the gradients).
 */
#include "estimate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const stage_names[] = { "ddp", "zero1", "zero2", "zero3" };

const char *est_stage_name(enum est_stage s)
{
	return (unsigned)s < 4 ? stage_names[s] : "unknown";
}

int est_stage_parse(const char *name, enum est_stage *s)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(name, stage_names[i])) {
			*s = (enum est_stage)i;
			return 0;
		}
	return -1;
}

static int positive(double v)
{
	return isfinite(v) && v > 0;
}

/* The first input out of range, as one line; 0 when all are usable. */
static int check(const struct est_inputs *in, char *err, size_t len)
{
	const char *bad = NULL;

	if (!positive(in->params))
		bad = "params must be above 0";
	else if (!positive(in->bytes_per_grad))
		bad = "bytes per gradient element must be above 0";
	else if (in->dp_size < 1)
		bad = "data-parallel size must be at least 1";
	else if (in->gpus < in->dp_size || in->gpus % in->dp_size)
		bad = "gpus must be a multiple of the data-parallel size";
	else if ((unsigned)in->stage > EST_ZERO3)
		bad = "stage must be ddp, zero1, zero2 or zero3";
	else if (!positive(in->tokens_per_step))
		bad = "tokens per step must be above 0";
	else if (!positive(in->total_tokens))
		bad = "total tokens must be above 0";
	else if (!positive(in->peak_tflops))
		bad = "peak TFLOP/s must be above 0";
	else if (!positive(in->mfu) || in->mfu > 1)
		bad = "MFU must be above 0 and at most 1";
	else if (!isfinite(in->price_gpu_hour) || in->price_gpu_hour < 0)
		bad = "price per GPU-hour must be 0 or more";
	else if (!positive(in->bucket_bytes))
		bad = "bucket bytes must be above 0";
	else if (!isfinite(in->overlap) || in->overlap < 0 || in->overlap > 1)
		bad = "overlap must be from 0 to 1";
	else if (in->dp_size > 1 && !positive(in->busbw_GBps))
		bad = "measured busbw at the bucket size must be above 0";
	if (bad)
		snprintf(err, len, "estimate: %s", bad);
	return bad ? -1 : 0;
}

static int have_fit(const struct est_inputs *in)
{
	return isfinite(in->alpha_us) && positive(in->beta_GBps);
}

int est_compute(const struct est_inputs *in, struct est_outputs *out, char *err, size_t len)
{
	double n = in->dp_size, mp = (double)in->gpus / in->dp_size, spread;

	memset(out, 0, sizeof(*out));
	if (check(in, err, len))
		return -1;
	out->k = in->stage == EST_ZERO3 ? 3 : 2;
	out->grad_bytes = in->bytes_per_grad * in->params / mp;
	out->buckets = ceil(out->grad_bytes / in->bucket_bytes);
	/* each pass moves (n-1)/n of S over every link at busbw; nothing with one rank */
	spread = (n - 1) / n;
	out->sync_s = in->dp_size > 1 ?
		out->k * spread * out->grad_bytes / (in->busbw_GBps * 1e9) : 0;
	/* the fit is of all_reduce (k = 2): t = alpha + S/beta per bucket */
	if (in->dp_size == 1)
		out->sync_fit_s = 0;
	else if (have_fit(in))
		out->sync_fit_s = out->k / 2 * (out->buckets * in->alpha_us * 1e-6 +
						 out->grad_bytes / (in->beta_GBps * 1e9));
	else
		out->sync_fit_s = NAN;
	out->compute_s = 6 * in->params * in->tokens_per_step /
			 (in->gpus * in->peak_tflops * 1e12 * in->mfu);
	out->exposed_s = fmax(0, out->sync_s - in->overlap * out->compute_s);
	out->step_s = out->compute_s + out->exposed_s;
	out->comm_fraction = out->exposed_s / out->step_s;
	out->steps = in->total_tokens / in->tokens_per_step;
	out->days = out->steps * out->step_s / 86400;
	out->gpu_hours = in->gpus * out->steps * out->step_s / 3600;
	out->cost = out->gpu_hours * in->price_gpu_hour;
	return 0;
}

static json_t *real_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *est_json(const struct est_inputs *in, const struct est_outputs *out)
{
	json_t *i, *o;

	i = json_pack("{s:f, s:f, s:i, s:i, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:o, s:o}",
		      "params", in->params, "bytes_per_grad", in->bytes_per_grad,
		      "dp_size", in->dp_size, "gpus", in->gpus, "stage", est_stage_name(in->stage),
		      "tokens_per_step", in->tokens_per_step, "total_tokens", in->total_tokens,
		      "peak_tflops", in->peak_tflops, "mfu", in->mfu,
		      "price_per_gpu_hour", in->price_gpu_hour, "bucket_bytes", in->bucket_bytes,
		      "overlap", in->overlap, "busbw_GBps", in->busbw_GBps,
		      "alpha_us", have_fit(in) ? json_real(in->alpha_us) : json_null(),
		      "beta_GBps", have_fit(in) ? json_real(in->beta_GBps) : json_null());
	o = json_pack("{s:f, s:f, s:f, s:f, s:o, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
		      "k", out->k, "grad_bytes", out->grad_bytes, "buckets", out->buckets,
		      "sync_s", out->sync_s, "sync_fit_s", real_or_null(out->sync_fit_s),
		      "compute_s", out->compute_s, "exposed_s", out->exposed_s,
		      "step_s", out->step_s, "comm_fraction", out->comm_fraction,
		      "steps", out->steps, "days", out->days, "gpu_hours", out->gpu_hours,
		      "cost", out->cost);
	if (!i || !o) {
		json_decref(i);
		json_decref(o);
		return NULL;
	}
	return json_pack("{s:s, s:o, s:o, s:s}", "label", "model, not a measurement",
			 "inputs", i, "outputs", o, "formulas", "docs/estimate.md");
}

int est_scaling(const struct scale_point *p, size_t n, int base_nodes, struct scale_eff *out)
{
	int base = -1;

	/* the fewest nodes of at least 2 that moved data; a 0 below it is a failed step */
	for (size_t i = 0; i < n && base < 0; i++)
		if (base_nodes ? p[i].nodes == base_nodes : p[i].nodes >= 2 && positive(p[i].busbw_GBps))
			base = (int)i;
	if (base >= 0 && !positive(p[base].busbw_GBps))
		base = -1;
	for (size_t i = 0; i < n; i++) {
		int above = base >= 0 && (int)i >= base;
		int failed = base >= 0 && (int)i < base && p[i].nodes >= 2 && !positive(p[i].busbw_GBps);

		out[i].nodes = p[i].nodes;
		out[i].busbw_GBps = p[i].busbw_GBps;
		out[i].ideal_GBps = above || failed ? p[base].busbw_GBps : NAN;
		out[i].eff_base = above ? p[i].busbw_GBps / p[base].busbw_GBps : failed ? 0 : NAN;
		out[i].eff_step = above && (int)i > base && positive(p[i - 1].busbw_GBps) ?
				  p[i].busbw_GBps / p[i - 1].busbw_GBps : NAN;
	}
	return base;
}

json_t *est_scaling_json(const struct scale_eff *e, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++) {
		json_t *pt = json_pack("{s:i, s:f, s:o, s:o, s:o}", "nodes", e[i].nodes,
				       "busbw_GBps", e[i].busbw_GBps,
				       "ideal_GBps", real_or_null(e[i].ideal_GBps),
				       "eff_base", real_or_null(e[i].eff_base),
				       "eff_step", real_or_null(e[i].eff_step));

		if (!pt || json_array_append_new(a, pt)) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}
