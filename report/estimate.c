/*
 * Training time and cost from measured collective bandwidth (docs/estimate.md).
 * Sources: the ml-engineering notes of S. Bekman, as summarised in the
 * project's REFERENCE ("Relating communication to training time"):
 *   sync    = k x bytes_per_param x params / busbw(payload), k = 2 or 3
 *   compute = 6 x params x tokens_per_step / (GPUs x peak x MFU)
 *   days    = total_tokens / tokens_per_step x step / 86400; cost = GPUs x hours x price
 * refined here by the (n-1)/n of the busbw definition and by the traffic a
 * tp x pp x dp layout sends: the data-parallel rings sharing each node's NICs,
 * buckets priced at the bytes they carry, the ring latency at dp ranks, the
 * tensor-parallel all_reduces and the pipeline sends.
 */
#include "estimate.h"
#include "../fmt/fmt.h"
#include "../core/size.h"

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

/* the layout with its defaults: 0 means 1 (tp, pp, ga_steps), gpus (per node) */
struct layout {
	int tp, pp, m, g;
	double bpp;                /* bytes per parameter of the all-gathers */
};

static void layout_of(const struct est_inputs *in, struct layout *l)
{
	l->tp = in->tp > 0 ? in->tp : 1;
	l->pp = in->pp > 0 ? in->pp : 1;
	l->m = in->ga_steps > 0 ? in->ga_steps : 1;
	l->g = in->gpus_per_node > 0 && in->gpus_per_node < in->gpus ? in->gpus_per_node : in->gpus;
	l->bpp = isnan(in->bytes_per_param) || in->bytes_per_param == 0 ? in->bytes_per_grad :
		 in->bytes_per_param;
}

/* The first input out of range, as one line; 0 when all are usable. */
static int check(const struct est_inputs *in, const struct layout *l, char *err, size_t len)
{
	const char *bad = NULL;

	if (!positive(in->params))
		bad = "params must be above 0";
	else if (!positive(in->bytes_per_grad))
		bad = "bytes per gradient element must be above 0";
	else if (!positive(l->bpp))
		bad = "bytes per parameter must be above 0";
	else if (in->dp_size < 1)
		bad = "data-parallel size must be at least 1";
	else if (in->tp < 0 || in->pp < 0 || in->ga_steps < 0 || in->gpus_per_node < 0)
		bad = "tp, pp, ga_steps and gpus_per_node must be at least 1";
	else if ((double)in->gpus != (double)l->tp * l->pp * in->dp_size)
		bad = "gpus must be tp x pp x dp_size";
	else if (l->tp < l->g ? l->g % l->tp : l->tp % l->g)
		bad = "tp must divide gpus_per_node or be a multiple of it";
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
	else if ((l->tp > 1 || l->pp > 1) && (!positive(in->layers) || !positive(in->act_bytes)))
		bad = "tp or pp above 1 needs layers and act_bytes (the activation each layer sends)";
	else if (l->tp > 1 && !positive(in->tp_busbw_GBps))
		bad = "tp above 1 needs the busbw of an all_reduce inside one node (nccl, 1 node, 2+ ranks)";
	else if (l->pp > 1 && !positive(in->pair_GBps))
		bad = "pp above 1 needs a node-to-node bandwidth (ib write_bw or netpair bw_uni)";
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

static double busbw_at(const struct est_inputs *in, double bytes, struct est_outputs *out)
{
	if (!(out->min_payload <= bytes))
		out->min_payload = bytes;
	if (!(out->max_payload >= bytes))
		out->max_payload = bytes;
	return in->busbw_at ? in->busbw_at(bytes, in->curve) : in->busbw_GBps;
}

/*
 * One data-parallel pass (a reduce-scatter or an all-gather) of x bytes per
 * GPU, in buckets: per node, the groups rings crossing it move
 * groups x (dp-1)/dp of each bucket, as an all-rank all_reduce of
 * groups x bucket bytes does in each of its two passes; the last, partial
 * bucket is priced at its own size. Seconds; NaN when a busbw is missing.
 */
static double pass_s(const struct est_inputs *in, double x, double groups, struct est_outputs *out)
{
	double b = in->bucket_bytes, dp = in->dp_size, full = floor(x / b), r = x - full * b, t = 0;

	if (r < 1e-9 * b)
		r = 0;
	if (full > 0)
		t += full * b / (busbw_at(in, groups * b, out) * 1e9);
	if (r > 0)
		t += r / (busbw_at(in, groups * r, out) * 1e9);
	return (dp - 1) / dp * groups * t;
}

int est_compute(const struct est_inputs *in, struct est_outputs *out, char *err, size_t len)
{
	struct layout l;
	double dp = in->dp_size, elems, dp_local, x[2], count[2], alpha_t = NAN, bbus = NAN;
	int np;

	memset(out, 0, sizeof(*out));
	out->min_payload = out->max_payload = NAN;
	layout_of(in, &l);
	if (check(in, &l, err, len))
		return -1;
	elems = in->params / ((double)l.tp * l.pp);
	out->grad_bytes = in->bytes_per_grad * elems;
	out->param_bytes = l.bpp * elems;
	out->buckets = ceil(out->grad_bytes / in->bucket_bytes);
	/* dp ranks in one node: consecutive after tp (Megatron's order); the rest of the node's GPUs are other rings */
	dp_local = l.tp >= l.g ? 1 : fmin(dp, l.g / l.tp);
	out->groups = l.g / dp_local;
	out->dp_nodes = dp / dp_local;
	/* the passes: DDP all-reduces (2 of S); ZeRO-1/2 reduce-scatter S and all-gather the
	 * parameters; ZeRO-3 all-gathers them twice per micro-batch and reduce-scatters S */
	if (in->stage == EST_ZERO3) {
		x[0] = out->param_bytes, count[0] = 2.0 * l.m;
		x[1] = out->grad_bytes, count[1] = 1;
	} else if (in->stage == EST_DDP) {
		x[0] = out->grad_bytes, count[0] = 2;
		x[1] = 0, count[1] = 0;
	} else {
		x[0] = out->grad_bytes, count[0] = 1;
		x[1] = out->param_bytes, count[1] = 1;
	}
	np = count[1] > 0 ? 2 : 1;
	out->k = count[0] + count[1];
	if (have_fit(in)) {
		/* ring latency grows as 2(n-1) hops: the fit's alpha at its ranks, scaled to dp */
		int nf = in->fit_ranks > 0 ? in->fit_ranks : in->dp_size;

		alpha_t = nf >= 2 ? in->alpha_us * (dp - 1) / (nf - 1) : in->alpha_us;
		bbus = positive(in->beta_busbw_GBps) ? in->beta_busbw_GBps :
		       nf >= 2 ? in->beta_GBps * 2 * (nf - 1) / nf : NAN;
	}
	out->sync_fit_s = in->dp_size == 1 ? 0 : positive(bbus) ? 0 : NAN;
	for (int i = 0; in->dp_size > 1 && i < np; i++) {
		double nb = ceil(x[i] / in->bucket_bytes), t = pass_s(in, x[i], out->groups, out);

		if (!positive(t) && x[i] > 0) {
			char sz[32];

			snprintf(err, len, "estimate: no measured busbw above 0 at the payloads of %s",
				 size_human(x[i], sz, sizeof(sz)));
			return -1;
		}
		out->sync_s += count[i] * t;
		/* each bucket's pass is half an all_reduce: half its alpha */
		if (isfinite(alpha_t))
			out->latency_s += count[i] * nb * fmax(0, alpha_t - in->alpha_us) / 2 * 1e-6;
		if (positive(bbus))
			out->sync_fit_s += count[i] * (nb * alpha_t / 2 * 1e-6 +
				(dp - 1) / dp * out->groups * x[i] / (bbus * 1e9));
	}
	out->sync_s += out->latency_s;
	/* Megatron: 2 all_reduces of the activation forward and 2 backward per layer and micro-batch */
	out->tp_s = l.tp > 1 ? l.m * (in->layers / l.pp) * 4 * 2.0 * (l.tp - 1) / l.tp * in->act_bytes /
			       (in->tp_busbw_GBps * 1e9) : 0;
	/* 1F1B: (m + pp - 2) activations forward and as many gradients back on the critical path */
	out->pp_s = l.pp > 1 ? 2.0 * (l.m + l.pp - 2) * in->act_bytes / (in->pair_GBps * 1e9) : 0;
	out->compute_s = 6 * in->params * in->tokens_per_step /
			 (in->gpus * in->peak_tflops * 1e12 * in->mfu);
	/* the data-parallel sync hides under the backward pass; tp and pp sends sit on its path */
	out->exposed_s = fmax(0, out->sync_s - in->overlap * out->compute_s) + out->tp_s + out->pp_s;
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

/* a byte count: an integer when it is one, so that summary.json keeps every digit (1 GiB, not 1.07374e9) */
static json_t *bytes_json(double v)
{
	return isfinite(v) && v == floor(v) && fabs(v) < 9e15 ? json_integer((json_int_t)v) : real_or_null(v);
}

json_t *est_json(const struct est_inputs *in, const struct est_outputs *out)
{
	struct layout l;
	json_t *i, *o;

	layout_of(in, &l);
	i = json_pack("{s:f, s:f, s:f, s:i, s:i, s:i, s:i, s:i, s:i, s:o, s:o, s:s, s:f, s:f, s:f, s:f, "
		      "s:f, s:o, s:f}",
		      "params", in->params, "bytes_per_grad", in->bytes_per_grad, "bytes_per_param", l.bpp,
		      "dp_size", in->dp_size, "tp", l.tp, "pp", l.pp, "gpus", in->gpus,
		      "gpus_per_node", l.g, "ga_steps", l.m,
		      "layers", real_or_null(in->layers), "act_bytes", isfinite(in->act_bytes) ?
		      bytes_json(in->act_bytes) : json_null(),
		      "stage", est_stage_name(in->stage),
		      "tokens_per_step", in->tokens_per_step, "total_tokens", in->total_tokens,
		      "peak_tflops", in->peak_tflops, "mfu", in->mfu,
		      "price_per_gpu_hour", in->price_gpu_hour, "bucket_bytes", bytes_json(in->bucket_bytes),
		      "overlap", in->overlap);
	if (i) {
		json_object_set_new(i, "busbw_GBps", json_real(in->busbw_GBps));
		json_object_set_new(i, "alpha_us", have_fit(in) ? json_real(in->alpha_us) : json_null());
		json_object_set_new(i, "beta_GBps", have_fit(in) ? json_real(in->beta_GBps) : json_null());
		json_object_set_new(i, "beta_busbw_GBps", have_fit(in) ? real_or_null(in->beta_busbw_GBps) :
				    json_null());
		json_object_set_new(i, "fit_ranks", have_fit(in) && in->fit_ranks > 0 ?
				    json_integer(in->fit_ranks) : json_null());
		json_object_set_new(i, "tp_busbw_GBps", l.tp > 1 ? real_or_null(in->tp_busbw_GBps) : json_null());
		json_object_set_new(i, "pair_GBps", l.pp > 1 ? real_or_null(in->pair_GBps) : json_null());
	}
	o = json_pack("{s:f, s:o, s:o, s:f, s:f, s:f, s:f, s:f, s:o, s:f, s:f, s:f, s:f, s:f, s:f, s:f, "
		      "s:f, s:f, s:f}",
		      "k", out->k, "grad_bytes", bytes_json(out->grad_bytes), "param_bytes", bytes_json(out->param_bytes),
		      "groups_per_node", out->groups, "dp_nodes", out->dp_nodes, "buckets", out->buckets,
		      "sync_s", out->sync_s, "latency_s", out->latency_s,
		      "sync_fit_s", real_or_null(out->sync_fit_s), "tp_s", out->tp_s, "pp_s", out->pp_s,
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

static double num_or(const json_t *o, const char *key, double dflt)
{
	double v;

	return j_num(o, key, &v) ? v : dflt;
}

int est_inputs_of(const json_t *in, struct est_inputs *e)
{
	memset(e, 0, sizeof(*e));
	e->params = num_or(in, "params", NAN);
	e->bytes_per_grad = num_or(in, "bytes_per_grad", NAN);
	e->dp_size = (int)num_or(in, "dp_size", 0);
	e->gpus = (int)num_or(in, "gpus", 0);
	if (est_stage_parse(j_str(in, "stage"), &e->stage))
		return -1;
	e->tokens_per_step = num_or(in, "tokens_per_step", NAN);
	e->total_tokens = num_or(in, "total_tokens", NAN);
	e->peak_tflops = num_or(in, "peak_tflops", NAN);
	e->mfu = num_or(in, "mfu", NAN);
	e->price_gpu_hour = num_or(in, "price_per_gpu_hour", 0);
	e->bucket_bytes = num_or(in, "bucket_bytes", NAN);
	e->overlap = num_or(in, "overlap", 0);
	e->busbw_GBps = num_or(in, "busbw_GBps", NAN);
	e->alpha_us = num_or(in, "alpha_us", NAN);
	e->beta_GBps = num_or(in, "beta_GBps", NAN);
	/* the parallel layout and what its terms were priced at (docs/estimate.md) */
	e->bytes_per_param = num_or(in, "bytes_per_param", NAN);
	e->tp = (int)num_or(in, "tp", 0);
	e->pp = (int)num_or(in, "pp", 0);
	e->gpus_per_node = (int)num_or(in, "gpus_per_node", 0);
	e->ga_steps = (int)num_or(in, "ga_steps", 0);
	e->layers = num_or(in, "layers", NAN);
	e->act_bytes = num_or(in, "act_bytes", NAN);
	e->beta_busbw_GBps = num_or(in, "beta_busbw_GBps", NAN);
	e->fit_ranks = (int)num_or(in, "fit_ranks", 0);
	e->tp_busbw_GBps = num_or(in, "tp_busbw_GBps", NAN);
	e->pair_GBps = num_or(in, "pair_GBps", NAN);
	return 0;
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
