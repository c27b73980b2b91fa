/*
 * report/model_step.c: the estimate beside the training steps that ran
 * (model_step.h; docs/estimate.md, "Measured against a real step").
 */
#include "model_step.h"
#include "estimate.h"
#include "eval_state.h"
#include "profile.h"
#include "record.h"
#include "workload.h"
#include "../core/stats.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* the state of one source: {"summary": {...}, "init": {...}, "steps": [[step_s, rank, host], ...]} */
static json_t *source_state(struct eval *e, const char *name)
{
	json_t *s;

	if (!e->steps && !(e->steps = json_object()))
		return NULL;
	if ((s = json_object_get(e->steps, name)))
		return s;
	s = json_pack("{s:n, s:n, s:[]}", "summary", "init", "steps");
	if (!s || json_object_set_new(e->steps, name, s))
		return NULL;
	return s;
}

static void put_num(json_t *o, const struct rv *r, const char *parent, const char *key, const char *as)
{
	double v;

	if (!rv_num(r, parent, key, &v))
		json_object_set_new(o, as ? as : key, json_real(v));
}

int step_note(struct eval *e, const struct rv *r)
{
	const char *name = rv_str(r, "name"), *test = rv_str(r, "test");
	static const char *const keys[] = { "step_s", "compute_s", "comm_alone_s", "exposed_s", "overlap",
		"params", "params_asked", "scale", "tokens_per_rank", "ranks", "nodes", "bucket_bytes",
		"flops_per_rank", "hidden", "layers", "steps", "wrong", "grad_bytes", NULL };
	json_t *s, *o;
	double v, rank = NAN;

	if (!name || !test || (strcmp(name, "trainstep") && strcmp(name, "torch_step")))
		return 0;
	if (!(s = source_state(e, name)))
		return -1;
	if (!strcmp(test, "step")) {
		json_t *steps = json_object_get(s, "steps");

		if (rv_num(r, NULL, "step_s", &v) || json_array_size(steps) >= STEP_MAX_STEPS)
			return 0;
		rv_num(r, NULL, "last_ready_rank", &rank);
		return json_array_append_new(steps, json_pack("[f, o, s?]", v, isfinite(rank) ?
			json_integer((json_int_t)rank) : json_null(), rv_str(r, "last_ready_host")));
	}
	if (!strcmp(test, "init")) {
		o = json_pack("{s:b}", "joined", rv_true(r, "joined"));
		put_num(o, r, NULL, "init_s", NULL);
		put_num(o, r, NULL, "deadline_s", NULL);
		put_num(o, r, NULL, "ranks", NULL);
		put_num(o, r, NULL, "nodes", NULL);
		if (rv_str(r, "reason"))
			json_object_set_new(o, "reason", json_string(rv_str(r, "reason")));
		if (rv_str(r, "backend"))
			json_object_set_new(o, "backend", json_string(rv_str(r, "backend")));
		return json_object_set_new(s, "init", o);
	}
	if (strcmp(test, "summary"))
		return 0;
	o = json_object();
	for (int i = 0; keys[i]; i++)
		put_num(o, r, NULL, keys[i], NULL);
	put_num(o, r, "step_stats_s", "cv", "step_cv");
	put_num(o, r, "straggler", "rank", "straggler_rank");
	json_object_set_new(o, "backend", json_string(rv_str(r, "backend") ?: "-"));
	json_object_set_new(o, "dtype", json_string(rv_str(r, "dtype") ?: "float"));
	if (rv_str(r, "straggler_host"))
		json_object_set_new(o, "straggler_host", json_string(rv_str(r, "straggler_host")));
	if (rv_str(r, "framework"))
		json_object_set_new(o, "framework", json_string(rv_str(r, "framework")));
	if (rv_str(r, "python"))
		json_object_set_new(o, "python", json_string(rv_str(r, "python")));
	if (rv_str(r, "transport"))
		json_object_set_new(o, "transport", json_string(rv_str(r, "transport")));
	if (rv_str(r, "comm"))
		json_object_set_new(o, "comm", json_string(rv_str(r, "comm")));
	if (strcmp(name, "torch_step") == 0) {
		json_object_set_new(o, "losses_agree", json_boolean(rv_true(r, "losses_agree")));
		json_object_set_new(o, "losses_finite", json_boolean(rv_true(r, "losses_finite")));
	}
	/* the rank the step waits for: its compute, or its links (trainstep's summary) */
	if (!rv_num(r, "waits_for", "rank", &v)) {
		const char *h = rv_str_in(r, "waits_for", "host"), *c = rv_str_in(r, "waits_for", "cause");
		json_t *w = json_pack("{s:i, s:s?, s:s?}", "rank", (int)v, "host", h, "cause", c);

		put_num(w, r, "waits_for", "rank_s", NULL);
		put_num(w, r, "waits_for", "others_s", NULL);
		json_object_set_new(o, "waits_for", w);
	}
	return json_object_set_new(s, "summary", o);
}

int step_note_missing(struct eval *e, const char *name, int skip, const char *why)
{
	json_t *s = source_state(e, name);

	if (!s)
		return -1;
	if (!json_object_get(s, skip ? "skipped" : "error"))
		json_object_set_new(s, skip ? "skipped" : "error", json_string(why ? why : "?"));
	return 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* stalls (steps above 3x the median), goodput and the rank most steps waited for */
static void step_series(const json_t *steps, json_t *j, int ranks)
{
	size_t n = json_array_size(steps), i;
	double *v = calloc(n ? n : 1, sizeof(double)), med, all = 0, good = 0;
	int *last = calloc(ranks > 0 ? (size_t)ranks : 1, sizeof(int)), top = -1;
	const char *top_host = NULL;
	json_t *stalls = json_array(), *st;

	if (!v || !last || !n) {
		free(v);
		free(last);
		json_object_set_new(j, "stalls", stalls);
		return;
	}
	json_array_foreach(steps, i, st)
		v[i] = json_number_value(json_array_get(st, 0));
	qsort(v, n, sizeof(double), cmp_d);
	med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
	json_array_foreach(steps, i, st) {
		double t = json_number_value(json_array_get(st, 0));
		const json_t *rk = json_array_get(st, 1);
		int r = json_is_integer(rk) ? (int)json_integer_value(rk) : -1;

		all += t;
		if (t > STEP_STALL_FACTOR * med)
			json_array_append_new(stalls, json_pack("{s:I, s:f, s:f, s:O, s:O}", "step", (json_int_t)i,
				"step_s", t, "x_median", med > 0 ? t / med : 0, "rank", rk,
				"host", json_array_get(st, 2) ? json_array_get(st, 2) : json_null()));
		else
			good += t;
		if (r >= 0 && r < ranks && ++last[r] > (top >= 0 ? last[top] : 0)) {
			top = r;
			top_host = json_string_value(json_array_get(st, 2));
		}
	}
	json_object_set_new(j, "steps_median_s", json_real(med));
	json_object_set_new(j, "goodput", json_real(all > 0 ? good / all : 0));
	json_object_set_new(j, "stalls", stalls);
	if (top >= 0)
		json_object_set_new(j, "last_ready", json_pack("{s:i, s:s?, s:i, s:I}", "rank", top, "host",
			top_host, "steps", last[top], "of", (json_int_t)n));
	free(v);
	free(last);
}

/* the model on the measured shape; its figures into j under key, the signed error beside */
static int model_on(struct eval *e, struct step_shape *sh, double meas, json_t *j, const char *key,
		    const char *err_key, char *why, size_t len)
{
	struct est_outputs o;

	if (model_shape_estimate(e, sh, &o, why, len))
		return -1;
	json_object_set_new(j, key, json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:s, s:f}", "step_s", o.step_s,
		"sync_s", o.sync_s, "compute_s", o.compute_s, "exposed_s", o.exposed_s, "buckets", o.buckets,
		"overlap", sh->overlap, "sync_source", sh->sync_source, "sync_cv", sh->sync_cv));
	json_object_set_new(j, err_key, json_real(100 * (o.step_s - meas) / meas));
	return 0;
}

/* one source measured: its shape, what it measured, the model on its shape, the errors */
static json_t *step_entry(struct eval *e, const char *name, const json_t *s)
{
	const json_t *sum = json_object_get(s, "summary"), *init = json_object_get(s, "init");
	const struct workload *w = &e->p->wl;
	struct step_shape sh = { 0 };
	const char *backend, *wl_backend = w->s[WL_BACKEND];
	double meas, compute, comm, exposed, tpr, cv, ov, oc, gb, ov_assumed = workload_value(w, WL_OVERLAP);
	char why[600], buf[48];
	json_t *j, *est;
	int own_sync;

	j = json_pack("{s:s, s:s}", "source", name, "label", "measured");
	if (json_is_object(init))
		json_object_set(j, "init", (json_t *)init);
	if (!json_is_object(sum)) {
		const char *sk = json_string_value(json_object_get(s, "skipped")),
			   *er = json_string_value(json_object_get(s, "error"));

		json_object_set_new(j, "made", json_false());
		json_object_set_new(j, "reason", json_is_object(init) &&
			json_is_false(json_object_get(init, "joined")) ? json_string("the framework did not join "
			"every rank") : sk ? json_sprintf("not run: %s", sk) : er ? json_sprintf("failed: %s", er) :
			json_string("no summary record: the run did not finish its steps"));
		return j;
	}
	meas = num(sum, "step_s");
	compute = num(sum, "compute_s");
	comm = num(sum, "comm_alone_s");
	exposed = num(sum, "exposed_s");
	tpr = num(sum, "tokens_per_rank");
	cv = num(sum, "step_cv");
	ov = num(sum, "overlap");
	backend = json_string_value(json_object_get(sum, "backend")) ?: "-";
	sh.params = num(sum, "params");
	gb = num(sum, "grad_bytes");
	/* the bytes a gradient element moves: as the step recorded them, else from its dtype */
	sh.bytes_per_grad = gb > 0 && sh.params > 0 ? gb / sh.params :
		!strcmp(json_string_value(json_object_get(sum, "dtype")) ?: "", "bf16") ? 2 : 4;
	sh.ranks = (int)num(sum, "ranks");
	sh.nodes = (int)num(sum, "nodes");
	sh.tokens_per_step = tpr * sh.ranks;
	sh.bucket_bytes = num(sum, "bucket_bytes");
	sh.flops_per_rank = 6 * sh.params * tpr / compute;
	/* the model's overlap is the share of compute the sync hides under: what the step hid, over compute */
	oc = compute > 0 && comm >= 0 && exposed >= 0 ? fmin(1, fmax(0, (comm - exposed) / compute)) : NAN;
	json_object_set_new(j, "backend", json_string(backend));
	if (json_string_value(json_object_get(sum, "framework")))
		json_object_set(j, "framework", json_object_get(sum, "framework"));
	if (json_string_value(json_object_get(sum, "python")))
		json_object_set(j, "python", json_object_get(sum, "python"));
	if (json_string_value(json_object_get(sum, "transport")))
		json_object_set(j, "transport", json_object_get(sum, "transport"));
	json_object_set_new(j, "shape", json_pack("{s:o, s:o, s:o, s:i, s:i, s:o, s:o, s:o, s:o}", "params",
		jnum(sh.params), "hidden", jnum(num(sum, "hidden")), "layers", jnum(num(sum, "layers")),
		"ranks", sh.ranks, "nodes", sh.nodes, "tokens_per_rank", jnum(tpr), "bucket_bytes",
		jnum(sh.bucket_bytes), "scale", jnum(num(sum, "scale")), "bytes_per_grad", jnum(sh.bytes_per_grad)));
	json_object_set_new(j, "measured", json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "step_s",
		jnum(meas), "compute_s", jnum(compute), "comm_alone_s", jnum(comm), "exposed_s", jnum(exposed),
		"overlap", jnum(ov), "overlap_of_compute", jnum(oc), "flops_per_rank", jnum(sh.flops_per_rank),
		"step_cv", jnum(cv), "steps", jnum(num(sum, "steps"))));
	step_series(json_object_get(s, "steps"), j, sh.ranks);
	if (isfinite(num(sum, "straggler_rank")))
		json_object_set_new(j, "straggler", json_pack("{s:i, s:s?}", "rank", (int)num(sum, "straggler_rank"),
			"host", json_string_value(json_object_get(sum, "straggler_host"))));
	if (json_is_object(json_object_get(sum, "waits_for")))
		json_object_set(j, "waits_for", json_object_get(sum, "waits_for"));
	if (!strcmp(json_string_value(json_object_get(sum, "transport")) ?: "", "fake")) {
		json_object_set_new(j, "made", json_false());
		json_object_set_new(j, "reason", json_string("a test double ran it (transport \"fake\"): its "
			"times are not measurements, never judged"));
		return j;
	}
	if (!(meas > 0) || !(compute > 0) || !(sh.params > 0) || !(tpr > 0) || sh.ranks < 1 ||
	    !(sh.bucket_bytes > 0)) {
		json_object_set_new(j, "made", json_false());
		json_object_set_new(j, "reason", json_string("the summary record lacks the step, compute or shape"));
		return j;
	}
	/*
	 * The sync: the all_reduce sweep of the step's own backend at its bucket (the same
	 * collective the step calls); a backend no sweep measured (gloo) by its own buckets
	 * reduced alone in the same run, and the sweep of another backend beside it.
	 */
	sh.overlap = isfinite(oc) ? oc : 0;
	sh.backend = backend;
	own_sync = model_on(e, &sh, meas, j, "estimate", "error_pct", why, sizeof(why)) != 0;
	if (own_sync) {
		if (!(comm > 0) || sh.ranks < 2) {
			json_object_set_new(j, "made", json_false());
			json_object_set_new(j, "reason", json_string(why));
			return j;
		}
		sh.backend = NULL;
		sh.sync_s = comm;
		snprintf(sh.sync_source, sizeof(sh.sync_source), "measured: the step's own buckets all-reduced "
			 "alone (%s, comm alone); no all_reduce sweep of %s priced them: %.200s", backend, backend, why);
		if (model_on(e, &sh, meas, j, "estimate", "error_pct", why, sizeof(why))) {
			json_object_set_new(j, "made", json_false());
			json_object_set_new(j, "reason", json_string(why));
			return j;
		}
		/* beside it: the sweep that was made (the workload's backend), to show how far apart */
		sh.sync_s = 0;
		sh.backend = wl_backend;
		model_on(e, &sh, meas, j, "estimate_other_sweep", "error_pct_other_sweep", why, sizeof(why));
		sh.backend = NULL;
		sh.sync_s = comm;
	}
	est = json_object_get(j, "estimate");
	/* the same with the workload's (assumed) overlap */
	sh.overlap = ov_assumed;
	{
		struct est_outputs oa;

		if (!model_shape_estimate(e, &sh, &oa, why, sizeof(why))) {
			json_object_set_new(est, "step_s_overlap_assumed", json_real(oa.step_s));
			json_object_set_new(j, "error_pct_overlap_assumed", json_real(100 * (oa.step_s - meas) / meas));
		}
	}
	json_object_set_new(j, "made", json_true());
	json_object_set_new(j, "ratio", json_real(num(est, "step_s") / meas));
	if (comm > 0)
		json_object_set_new(j, "sync_ratio", json_real(num(est, "sync_s") / comm));
	/* both sides are measurements: the steps, and the sweep that priced the sync */
	{
		double scv = num(est, "sync_cv");

		json_object_set_new(j, "steady", json_boolean(isfinite(cv) && cv <= STEP_STEADY_CV &&
							    !(scv > STEP_STEADY_CV)));
		if (!(isfinite(cv) && cv <= STEP_STEADY_CV))
			json_object_set_new(j, "note", json_sprintf("too noisy to compare: the measured steps spread "
				"by cv %.1f %% (steady: at most %.0f %%)", 100 * cv, 100 * STEP_STEADY_CV));
		else if (scv > STEP_STEADY_CV)
			json_object_set_new(j, "note", json_sprintf("too noisy to compare: the all_reduce sweep "
				"that priced the sync spread by cv %.1f %% at the bucket (steady: at most %.0f %%)",
				100 * scv, 100 * STEP_STEADY_CV));
	}
	json_object_set_new(j, "sources", json_pack("{s:s, s:s, s:s, s:s}",
		"compute", "measured: the same step with the reductions skipped",
		"overlap", "measured: (comm alone - exposed) / compute, the share of compute the reductions hid "
		"under, clamped to [0, 1]",
		"overlap_assumed", workload_source(w, WL_OVERLAP, buf, sizeof(buf)),
		"sync", json_string_value(json_object_get(est, "sync_source")) ?: "-"));
	return j;
}

/* the workload's estimate from a measured step: matmul efficiency and overlap measured, days from it */
static void from_measured(struct eval *e, const json_t *entry)
{
	const json_t *o = json_object_get(e->estimate, "outputs"), *in = json_object_get(e->estimate, "inputs");
	const json_t *me = json_object_get(entry, "measured"), *sh = json_object_get(entry, "shape");
	double ratio = num(entry, "ratio"), tflops = num(in, "measured_tflops"), peak = num(in, "peak_tflops");
	double achieved = num(me, "flops_per_rank") / 1e12, days = num(o, "days"), step = num(o, "step_s");
	double rate = tflops > 0 ? tflops : peak;
	int same = fabs(num(sh, "params") / num(in, "params") - 1) < 0.02 &&
		   num(sh, "tokens_per_rank") * num(sh, "ranks") == num(in, "tokens_per_step") &&
		   num(sh, "ranks") == num(in, "gpus");
	json_t *j;

	if (!json_is_object(o) || !(ratio > 0))
		return;
	/* the measured step stands for the workload: as it is, or the model corrected by its error */
	j = json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:s, s:{s:o, s:s}, s:{s:o, s:s}}",
		"source", json_string_value(json_object_get(entry, "source")),
		"step_s", same ? num(me, "step_s") : step / ratio, "days", same ? days * num(me, "step_s") / step :
		days / ratio, "gpu_hours", num(o, "gpu_hours") / (same ? step / num(me, "step_s") : ratio),
		"cost", num(o, "cost") / (same ? step / num(me, "step_s") : ratio),
		"model_step_s", step, "model_days", days,
		"basis", same ? "the measured step: the workload's own shape" :
		"the model's step divided by its estimate/measured ratio on the measured (scaled) shape",
		"matmul_efficiency", "value", rate > 0 ? jnum(achieved / rate) : json_null(), "source",
		tflops > 0 ? "measured: the step's compute FLOP/s / the gemm probe's TFLOP/s" :
		"measured: the step's compute FLOP/s / peak_tflops (assumed: no gemm records)",
		"overlap", "value", jnum(num(me, "overlap_of_compute")), "source",
		"measured: (the buckets' all_reduce alone - exposed) / compute");
	json_object_set_new(e->estimate, "from_measured", j);
}

/*
 * The framework's readiness, from what torch_step recorded: every rank joined
 * the backend within the deadline, the steps ran, the losses were finite and
 * identical across the data-parallel ranks. The value is how many of the
 * four failed; which ones name the element. A framework that never ran (the
 * train phase not run: no framework on the hosts) has no value, and says why.
 */
static void judge_ready(struct eval *e, struct crit_state *cs)
{
	const json_t *s = e->steps ? json_object_get(e->steps, "torch_step") : NULL;
	const json_t *init = json_object_get(s, "init"), *sum = json_object_get(s, "summary");
	char what[400] = "";
	int bad = 0;

	if (!s || (!json_is_object(init) && !json_is_object(sum))) {
		const char *sk = json_string_value(json_object_get(s, "skipped")),
			   *er = json_string_value(json_object_get(s, "error"));
		char buf[600];

		if (cs->why_none)
			return;
		snprintf(buf, sizeof(buf), "%s%s", sk ? "the framework's step did not run: " : er ?
			 "the framework's step failed: " : "no framework step (workloads/torch_step.py) in the "
			 "results", sk ? sk : er ? er : "");
		cs->why_none = strdup(buf);
		return;
	}
	if (!json_is_object(sum) && json_is_object(init) && json_is_true(json_object_get(init, "joined")) &&
	    json_string_value(json_object_get(s, "error")) == NULL && cs->why_none == NULL) {
		/* joined, then nothing: the run was cut short; missing evidence, not a pass */
		cs->why_none = strdup("the framework joined but wrote no summary: its steps did not finish");
		return;
	}
	if (!json_is_true(json_object_get(init, "joined"))) {
		bad++;
		snprintf(what + strlen(what), sizeof(what) - strlen(what), "%sthe backend did not join every "
			 "rank within %.0f s (%s)", *what ? "; " : "", num(init, "deadline_s"),
			 json_string_value(json_object_get(init, "reason")) ?: "no init record");
	}
	if (!json_is_object(sum) || !(num(sum, "steps") >= 1)) {
		bad++;
		snprintf(what + strlen(what), sizeof(what) - strlen(what), "%sno step ran%s%s", *what ? "; " : "",
			 json_string_value(json_object_get(s, "error")) ? ": " : "",
			 json_string_value(json_object_get(s, "error")) ?: "");
	} else {
		if (!json_is_true(json_object_get(sum, "losses_finite"))) {
			bad++;
			snprintf(what + strlen(what), sizeof(what) - strlen(what), "%sa loss was not finite",
				 *what ? "; " : "");
		}
		if (!json_is_true(json_object_get(sum, "losses_agree"))) {
			bad++;
			snprintf(what + strlen(what), sizeof(what) - strlen(what), "%sthe data-parallel ranks' "
				 "losses differ", *what ? "; " : "");
		}
	}
	if (!strcmp(json_string_value(json_object_get(sum, "transport")) ?: "", "fake")) {
		cs->fake++;
		return;
	}
	/* the checks that failed name the element: a failure says which */
	if (bad) {
		char el[480];

		snprintf(el, sizeof(el), "torch_step (%s)", what);
		eval_add_value(cs, el, bad);
	} else {
		eval_add_value(cs, "torch_step", 0);
	}
}

void step_build(struct eval *e)
{
	json_t *arr, *best = NULL, *s, *ent;
	const char *key;
	size_t i;

	if (e->steps && json_is_object(e->estimate)) {
		arr = json_array();
		json_object_foreach(e->steps, key, s) {
			ent = step_entry(e, key, s);
			json_array_append_new(arr, ent);
			/* the framework's step first, then the proxy's, for days from measurement */
			if (json_is_true(json_object_get(ent, "made")) &&
			    (!best || !strcmp(key, "torch_step")))
				best = ent;
		}
		json_object_set_new(e->estimate, "measured_steps", arr);
		if (best && json_is_true(json_object_get(e->estimate, "made")))
			from_measured(e, best);
	}
	for (int c = 0; c < e->ncs; c++) {
		struct crit_state *cs = &e->cs[c];
		const json_t *ms = json_object_get(e->estimate, "measured_steps");
		int any = 0;

		if (cs->c->derived != DERIVED_STEP)
			continue;
		if (!strcmp(cs->c->metric, "framework_ready")) {
			judge_ready(e, cs);
			continue;
		}
		json_array_foreach(ms, i, ent) {
			if (!json_is_true(json_object_get(ent, "made")))
				continue;
			any = 1;
			eval_add_value(cs, json_string_value(json_object_get(ent, "source")),
				       fabs(num(ent, "error_pct")));
			if (!json_is_true(json_object_get(ent, "steady")) && !cs->caveat)
				cs->caveat = strdup(json_string_value(json_object_get(ent, "note")));
		}
		if (!any && !cs->why_none) {
			const char *why = !json_is_object(e->estimate) ? "no workload given: no estimate to compare" :
				"no measured step (ccprobe trainstep or workloads/torch_step.py) the model could price";

			cs->why_none = strdup(why);
		}
	}
}
