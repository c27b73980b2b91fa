/*
 * report/model_ckpt.c: the checkpoint estimate (docs/estimate.md,
 * "Checkpoints"): checkpoint bytes of the workload written at the aggregate
 * write rate ccprobe's storage probe measured, and the share of the run the
 * job stalls for it. It feeds the criterion metric checkpoint_stall_fraction.
 * Kept apart from the training estimate (model.c, estimate.c): it only reads
 * that estimate's step time.
 */
#include "model_ckpt.h"
#include "eval_state.h"
#include "profile.h"
#include "record.h"
#include "workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ckpt_compute(const struct ckpt_inputs *in, struct ckpt_outputs *out, char *err, size_t len)
{
	memset(out, 0, sizeof(*out));
	if (!(in->bytes > 0) || !isfinite(in->bytes)) {
		snprintf(err, len, "checkpoint bytes must be above 0");
		return -1;
	}
	if (!(in->write_GBps > 0) || !isfinite(in->write_GBps)) {
		snprintf(err, len, "the measured storage write rate is not above 0 GB/s");
		return -1;
	}
	if (in->every_steps > 0) {
		if (!(in->step_s > 0) || !isfinite(in->step_s)) {
			snprintf(err, len, "checkpoint_every is in steps but there is no step time (the "
				 "training estimate needs an all_reduce measurement); give it in minutes");
			return -1;
		}
		out->interval_s = in->every_steps * in->step_s;
	} else if (in->every_s > 0) {
		out->interval_s = in->every_s;
	} else {
		snprintf(err, len, "checkpoint_every must be above 0");
		return -1;
	}
	out->write_s = in->bytes / (in->write_GBps * 1e9);
	out->stall_fraction = out->write_s / (out->interval_s + out->write_s);
	out->per_day = 86400.0 / (out->interval_s + out->write_s);
	out->stall_h_per_day = out->per_day * out->write_s / 3600.0;
	return 0;
}

json_t *ckpt_outputs_json(const struct ckpt_outputs *out)
{
	return json_pack("{s:f, s:f, s:f, s:f, s:f}", "write_s", out->write_s, "interval_s",
			 out->interval_s, "stall_fraction", out->stall_fraction, "checkpoints_per_day",
			 out->per_day, "stall_hours_per_day", out->stall_h_per_day);
}

int ckpt_note(struct eval *e, const struct rv *r)
{
	const char *test = rv_str(r, "test"), *scope = rv_str(r, "scope");
	double bw, ranks = 0, nodes = 0;
	json_t *w;

	if (!test || strcmp(test, "write") || !scope || strcmp(scope, "cluster") ||
	    rv_num(r, NULL, "bw_GBps", &bw) || !(bw > 0))
		return 0;
	/* several runs: the slowest write decides, as it would stall the job */
	if (e->storage_write && json_number_value(json_object_get(e->storage_write, "bw_GBps")) <= bw)
		return 0;
	rv_num(r, NULL, "ranks", &ranks);
	rv_num(r, NULL, "nodes", &nodes);
	w = json_pack("{s:f, s:s?, s:s?, s:I, s:I}", "bw_GBps", bw, "dir", rv_str(r, "dir"),
		      "fs_type", rv_str(r, "fs_type"), "ranks", (json_int_t)ranks, "nodes",
		      (json_int_t)nodes);
	if (!w)
		return -1;
	json_decref(e->storage_write);
	e->storage_write = w;
	return 0;
}

static json_t *ckpt_not_made(const char *why)
{
	return json_pack("{s:s, s:b, s:s, s:s}", "label", "model, not a measurement", "made", 0,
			 "reason", why, "formulas", "docs/estimate.md");
}

static const char *from_text(int from, char *buf, size_t len)
{
	if (from > 0)
		snprintf(buf, len, "profile line %d", from);
	else
		snprintf(buf, len, "%s", from < 0 ? "--workload" : "default");
	return buf;
}

static json_t *make_checkpoint(const struct eval *e)
{
	const struct workload *w = &e->p->wl;
	const json_t *est = json_object_get(e->estimate, "outputs");
	struct ckpt_inputs in = { 0 };
	struct ckpt_outputs out;
	char why[300], b1[48], b2[48];
	double every = w->v[WL_CKPT_EVERY];
	json_t *j, *src;

	if (!e->storage_write)
		return ckpt_not_made("no storage write measurement (ccprobe storage --storage-dir DIR)");
	in.bytes = w->from[WL_CKPT_BYTES] ? w->v[WL_CKPT_BYTES] :
		   CKPT_BYTES_PER_PARAM * workload_value(w, WL_PARAMS);
	in.write_GBps = json_number_value(json_object_get(e->storage_write, "bw_GBps"));
	in.every_steps = every > 0 ? every : 0;
	in.every_s = every < 0 ? -every : 0;
	in.step_s = est && json_is_true(json_object_get(e->estimate, "made")) ?
		    json_number_value(json_object_get(est, "step_s")) : NAN;
	if (ckpt_compute(&in, &out, why, sizeof(why)))
		return ckpt_not_made(why);
	src = json_pack("{s:s, s:o, s:s, s:s}",
		"checkpoint_bytes", w->from[WL_CKPT_BYTES] ? from_text(w->from[WL_CKPT_BYTES], b1, sizeof(b1)) :
			"16 B per parameter (mixed-precision Adam: bf16 weights, fp32 master, Adam m and v, bf16 "
			"grads) x params",
		"write_GBps", json_sprintf("measured: storage write on %s (%s), %lld rank(s) on %lld node(s), "
			"the aggregate from the common start to the last fsync",
			json_string_value(json_object_get(e->storage_write, "dir")) ?: "?",
			json_string_value(json_object_get(e->storage_write, "fs_type")) ?: "?",
			(long long)json_integer_value(json_object_get(e->storage_write, "ranks")),
			(long long)json_integer_value(json_object_get(e->storage_write, "nodes"))),
		"checkpoint_every", from_text(w->from[WL_CKPT_EVERY], b2, sizeof(b2)),
		"step_s", in.every_steps > 0 ? "the training estimate (step = compute + exposed communication)" :
			"not used (interval given as time)");
	j = json_pack("{s:s, s:b, s:{s:f, s:f, s:f, s:f, s:f}, s:o, s:o, s:s}",
		      "label", "model, not a measurement", "made", 1, "inputs",
		      "checkpoint_bytes", in.bytes, "write_GBps", in.write_GBps,
		      "every_steps", in.every_steps, "every_s", in.every_s,
		      "step_s", isfinite(in.step_s) ? in.step_s : 0.0,
		      "outputs", ckpt_outputs_json(&out), "sources", src, "formulas", "docs/estimate.md");
	return j;
}

static void ckpt_why_none(struct crit_state *cs, const char *why)
{
	if (!cs->why_none)
		cs->why_none = strdup(why);
}

void ckpt_build(struct eval *e)
{
	const json_t *o;

	json_decref(e->checkpoint);
	/* null, as the estimate without a workload, when no checkpoint interval is given */
	e->checkpoint = e->p->wl.from[WL_CKPT_EVERY] ? make_checkpoint(e) : json_null();
	o = json_object_get(e->checkpoint, "outputs");
	for (int i = 0; i < e->ncs; i++) {
		struct crit_state *cs = &e->cs[i];

		if (cs->c->derived != DERIVED_CKPT)
			continue;
		if (!e->p->wl.from[WL_CKPT_EVERY])
			ckpt_why_none(cs, "no checkpoint_every in the workload: no checkpoint estimate; fix: give "
				      "it (the profile's [workload], or ccreport --workload checkpoint_every=STEPS "
				      "or '30 min')");
		else if (!json_is_true(json_object_get(e->checkpoint, "made")))
			ckpt_why_none(cs, json_string_value(json_object_get(e->checkpoint, "reason")) ?: "?");
		else
			eval_add_value(cs, "checkpoint", 100 * json_number_value(json_object_get(o, "stall_fraction")));
	}
}
