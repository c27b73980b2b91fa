/*
 * report/model.c: what ccreport derives from the collective records rather
 * than reads off them: the scaling chart (busbw at the large-message plateau
 * against node count, with each step's efficiency) and the training estimate
 * of report/estimate.c, filled from the workload and the measurements
 * (docs/estimate.md). Both feed criteria of their own: scaling_efficiency
 * and comm_fraction (docs/profiles.md).
 */
#include "model.h"
#include "estimate.h"
#include "eval_state.h"
#include "model_compute.h"
#include "profile.h"
#include "record.h"
#include "series.h"
#include "workload.h"
#include "../core/size.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static json_t *num_or_null(const struct rv *r, const char *key)
{
	double v;

	return !rv_num(r, NULL, key, &v) && isfinite(v) ? json_real(v) : json_null();
}

static json_t *int_or_null(const struct rv *r, const char *key)
{
	double v;

	return !rv_num(r, NULL, key, &v) && v >= 0 && v < 9e18 ? json_integer((json_int_t)v) : json_null();
}

int model_note_fit(struct eval *e, const struct rv *r)
{
	double nodes = 0;
	char key[256];
	json_t *f;

	if (!rv_str(r, "name"))
		return 0;
	rv_num(r, NULL, "nodes", &nodes);
	series_key_of(key, sizeof(key), rv_str(r, "name"), rv_str(r, "backend"), rv_str(r, "dtype"),
		      rv_str(r, "op"), nodes, rv_true(r, "scale"));
	f = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "alpha_us", num_or_null(r, "alpha_us"),
		      "beta_GBps", num_or_null(r, "beta_GBps"), "beta_busbw_GBps", num_or_null(r, "beta_busbw_GBps"),
		      "ranks", int_or_null(r, "ranks"), "busbw_factor", num_or_null(r, "busbw_factor"),
		      "r2", num_or_null(r, "r2"), "rel_rms", num_or_null(r, "rel_rms"),
		      "n", int_or_null(r, "n"), "min_bytes", int_or_null(r, "min_bytes"),
		      "max_bytes", int_or_null(r, "max_bytes"));
	return f && !json_object_set_new(e->fits, key, f) ? 0 : -1;
}

static const char *s_of(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static double n_of(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* the latency/bandwidth fit of the all-rank curve into the estimate's inputs (NAN without one) */
static void fit_inputs(struct est_inputs *in, const json_t *fit)
{
	in->alpha_us = fit ? n_of(fit, "alpha_us") : NAN;
	in->beta_GBps = fit ? n_of(fit, "beta_GBps") : NAN;
	in->beta_busbw_GBps = fit ? n_of(fit, "beta_busbw_GBps") : NAN;
	if (fit && !(in->beta_busbw_GBps > 0) && n_of(fit, "busbw_factor") > 0)
		in->beta_busbw_GBps = in->beta_GBps * n_of(fit, "busbw_factor");
}

/* one size of a series: its worst (lowest) busbw */
struct size_bw {
	double bytes, bw;
};

static int cmp_size(const void *a, const void *b)
{
	double x = ((const struct size_bw *)a)->bytes, y = ((const struct size_bw *)b)->bytes;

	return (x > y) - (x < y);
}

static int cmp_bw(const void *a, const void *b)
{
	double x = ((const struct size_bw *)a)->bw, y = ((const struct size_bw *)b)->bw;

	return (x > y) - (x < y);
}

/* the series' sizes in order, the worst busbw of each; malloc'd, count in *n */
static struct size_bw *sizes_of(const json_t *series, size_t *n)
{
	const json_t *pts = json_object_get(series, "points"), *pt;
	struct size_bw *v = malloc((json_array_size(pts) + 1) * sizeof(*v));
	size_t i, k = 0;

	if (!v)
		return NULL;
	json_array_foreach(pts, i, pt) {
		v[k].bytes = json_number_value(json_array_get(pt, 0));
		v[k].bw = json_number_value(json_array_get(pt, 1));
		k++;
	}
	qsort(v, k, sizeof(*v), cmp_size);
	*n = 0;
	for (i = 0; i < k; i++) {
		if (*n && v[*n - 1].bytes == v[i].bytes) {
			v[*n - 1].bw = fmin(v[*n - 1].bw, v[i].bw);
			continue;
		}
		v[(*n)++] = v[i];
	}
	return v;
}

/* busbw at the plateau, as criteria judge it (docs/profiles.md): median of the 3 largest sizes */
static double plateau(const json_t *series)
{
	size_t n = 0, top;
	struct size_bw *v = sizes_of(series, &n), t[PLATEAU_SIZES];
	double bw;

	if (!v || !n) {
		free(v);
		return NAN;
	}
	top = n < PLATEAU_SIZES ? n : PLATEAU_SIZES;
	memcpy(t, v + n - top, top * sizeof(*t));
	qsort(t, top, sizeof(*t), cmp_bw);
	bw = t[(top - 1) / 2].bw;
	free(v);
	return bw;
}

/* ---- scaling ---- */

/* --scale runs 1, 2, 4 ... nodes and N: far fewer than 64 node counts */
struct group {
	const json_t *any;       /* one series of the group: name, backend, dtype, op */
	struct scale_point p[64];
	int n;
};

static int same_series(const json_t *a, const json_t *b)
{
	static const char *const k[] = { "name", "backend", "dtype", "op" };

	for (int i = 0; i < 4; i++)
		if (!json_equal(json_object_get(a, k[i]), json_object_get(b, k[i])) &&
		    (json_object_get(a, k[i]) || json_object_get(b, k[i])))
			return 0;
	return 1;
}

static int cmp_nodes(const void *a, const void *b)
{
	return ((const struct scale_point *)a)->nodes - ((const struct scale_point *)b)->nodes;
}

static int cmp_group(const void *a, const void *b)
{
	const json_t *x = ((const struct group *)a)->any, *y = ((const struct group *)b)->any;
	static const char *const k[] = { "name", "backend", "dtype", "op" };
	int c = 0;

	for (int i = 0; i < 4 && !c; i++)
		c = strcmp(s_of(x, k[i]) ?: "", s_of(y, k[i]) ?: "");
	return c;
}

/* the --scale series grouped by collective, backend, dtype and op; sorted */
static struct group *scale_groups(const struct eval *e, int *ng)
{
	struct group *g = NULL;
	const char *key;
	json_t *s;
	int i;

	*ng = 0;
	json_object_foreach(e->series, key, s) {
		double bw = plateau(s);

		if (!json_is_true(json_object_get(s, "scale")) || !isfinite(bw))
			continue;
		for (i = 0; i < *ng && !same_series(g[i].any, s); i++)
			;
		if (i == *ng) {
			struct group *t = realloc(g, (*ng + 1) * sizeof(*g));

			if (!t)
				break;
			g = t;
			memset(&g[i], 0, sizeof(g[i]));
			g[i].any = s;
			(*ng)++;
		}
		if (g[i].n < 64) {
			g[i].p[g[i].n].nodes = (int)json_integer_value(json_object_get(s, "nodes"));
			g[i].p[g[i].n].busbw_GBps = bw;
			g[i].n++;
		}
	}
	for (i = 0; i < *ng; i++)
		qsort(g[i].p, g[i].n, sizeof(g[i].p[0]), cmp_nodes);
	if (*ng)
		qsort(g, *ng, sizeof(*g), cmp_group);
	return g;
}

/* charts.scaling: the points with a busbw (one rank on one node moves nothing: 0, left out) */
static json_t *scaling_entry(const struct group *g)
{
	struct scale_eff eff[64];
	json_t *pts = json_array(), *o;
	int base = est_scaling(g->p, g->n, 0, eff);

	for (int i = 0; i < g->n; i++)
		if (g->p[i].busbw_GBps > 0)
			json_array_append_new(pts, json_pack("[i, f]", g->p[i].nodes, g->p[i].busbw_GBps));
	o = json_pack("{s:s?, s:s?, s:s?, s:s?, s:o, s:o, s:o, s:o}", "name", s_of(g->any, "name"),
		      "backend", s_of(g->any, "backend"), "dtype", s_of(g->any, "dtype"),
		      "op", s_of(g->any, "op"), "points", pts,
		      "base_nodes", base >= 0 ? json_integer(g->p[base].nodes) : json_null(),
		      "ideal_GBps", base >= 0 ? json_real(g->p[base].busbw_GBps) : json_null(),
		      "efficiency", est_scaling_json(eff, g->n));
	return o;
}

static int field_ok(const char *want, const json_t *s, const char *k)
{
	return !want || (s_of(s, k) && !strcmp(want, s_of(s, k)));
}

static void why_none(struct crit_state *cs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void why_none(struct crit_state *cs, const char *fmt, ...)
{
	va_list ap;
	char *r;

	if (cs->why_none)
		return;
	va_start(ap, fmt);
	if (vasprintf(&r, fmt, ap) < 0)
		r = NULL;
	va_end(ap);
	cs->why_none = r;
}

/*
 * " (mpi float sum)": the series fields the criterion leaves open, so that
 * elements of several series stay apart; "" when it names them all.
 */
static void open_fields(const struct criterion *c, const json_t *s, char *buf, size_t len)
{
	const char *want[3] = { c->backend, c->dtype, c->op };
	static const char *const k[3] = { "backend", "dtype", "op" };
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 0; i < 3 && at < len; i++)
		if (!want[i])
			at += snprintf(buf + at, len - at, "%s%s", at ? " " : " (", s_of(s, k[i]) ?: "-");
	if (at && at < len)
		snprintf(buf + at, len - at, ")");
}

/* a scaling_efficiency criterion: every node count above the base, busbw / busbw(base) */
static void judge_scaling(struct crit_state *cs, const struct group *g, int ng)
{
	const struct criterion *c = cs->c;
	int matched = 0;

	for (int i = 0; i < ng; i++) {
		const json_t *s = g[i].any;
		struct scale_eff eff[64];
		char el[160], tail[100] = "";
		int base, failed;

		if (strcmp(s_of(s, "name") ?: "", c->collective) || !field_ok(c->backend, s, "backend") ||
		    !field_ok(c->dtype, s, "dtype") || !field_ok(c->op, s, "op"))
			continue;
		matched++;
		base = est_scaling(g[i].p, g[i].n, c->base_nodes, eff);
		open_fields(c, s, tail, sizeof(tail));
		if (base < 0) {
			int k;

			for (k = 0; k < g[i].n && g[i].p[k].nodes != c->base_nodes; k++)
				;
			/* the base step ran and moved nothing: a failure of that step, not a missing base */
			if (c->base_nodes && k < g[i].n) {
				snprintf(el, sizeof(el), "%d nodes (the base) measured busbw %g GB/s%s",
					 c->base_nodes, g[i].p[k].busbw_GBps, tail);
				eval_add_value(cs, el, 0);
			} else if (c->base_nodes)
				why_none(cs, "no busbw at the base of %d nodes (--scale measured %d to %d nodes)",
					 c->base_nodes, g[i].p[0].nodes, g[i].p[g[i].n - 1].nodes);
			else
				why_none(cs, "no node count of at least 2 with a busbw above 0 to compare with");
			continue;
		}
		failed = 0;
		for (int k = 0; k < base; k++)
			if (g[i].p[k].nodes >= 2 && isfinite(eff[k].eff_base)) {
				snprintf(el, sizeof(el), "%d nodes vs %d%s", eff[k].nodes, g[i].p[base].nodes, tail);
				eval_add_value(cs, el, 100 * eff[k].eff_base);
				failed++;
			}
		if (base == g[i].n - 1 && !failed) {
			why_none(cs, "only the base (%d nodes) measured at or above it: nothing to compare",
				 g[i].p[base].nodes);
			continue;
		}
		for (int k = base + 1; k < g[i].n; k++) {
			snprintf(el, sizeof(el), "%d nodes vs %d%s", eff[k].nodes, g[i].p[base].nodes, tail);
			eval_add_value(cs, el, 100 * eff[k].eff_base);
		}
	}
	if (!matched)
		why_none(cs, "no --scale records of %s%s%s; fix: run `ccprobe --scale%s%s %s` on 2 or more "
			 "nodes (`ccdiag run -p PROFILE` plans it)", c->collective, c->backend ? " " : "",
			 c->backend ?: "", c->backend ? " -B " : "", c->backend ?: "", c->collective);
}

static void build_scaling(struct eval *e)
{
	int ng;
	struct group *g = scale_groups(e, &ng);

	for (int i = 0; g && i < ng; i++) {
		json_t *o = scaling_entry(&g[i]);

		if (o && json_array_size(json_object_get(o, "points")))
			json_array_append_new(e->scaling, o);
		else
			json_decref(o);
	}
	for (int i = 0; i < e->ncs; i++)
		if (e->cs[i].c->derived == DERIVED_SCALING)
			judge_scaling(&e->cs[i], g, g ? ng : 0);
	free(g);
}

/* ---- the estimate ---- */

/* the all_reduce series the estimate uses: the workload's backend and dtype, sum, most nodes */
static const json_t *estimate_series(const struct eval *e, const char *backend, const char *dtype,
				     const char **key_out)
{
	const json_t *best = NULL, *s;
	const char *key, *bkey = NULL;
	int sum = 0;

	json_object_foreach(e->series, key, s) {
		int is_sum = s_of(s, "op") && !strcmp(s_of(s, "op"), "sum");
		double n = n_of(s, "nodes"), bn = best ? n_of(best, "nodes") : -1;

		json_int_t ranks = json_integer_value(json_object_get(e->ranks_of, key));

		/* one rank moves nothing (busbw 0 by definition); any other series counts, zeros too */
		if (strcmp(s_of(s, "name") ?: "", "all_reduce") || !field_ok(backend, s, "backend") ||
		    !field_ok(dtype, s, "dtype") || ranks == 1 || (!ranks && !(plateau(s) > 0)))
			continue;
		/* gradients are summed: a sum series first; then the most nodes; then by key */
		if (best && (is_sum < sum || (is_sum == sum && (n < bn || (n == bn && strcmp(key, bkey) > 0)))))
			continue;
		best = s;
		bkey = key;
		sum = is_sum;
	}
	*key_out = bkey;
	return best;
}

struct measured {
	double busbw, lo, hi;    /* busbw at the bucket; the sizes it came from */
	const char *method;
	json_t *fit;             /* borrowed */
};

static double fit_busbw(const json_t *fit, double bytes)
{
	double a = n_of(fit, "alpha_us"), b = n_of(fit, "beta_GBps"), f = n_of(fit, "busbw_factor");
	double t = a * 1e-6 + bytes / (b * 1e9);

	return isfinite(t) && t > 0 && b > 0 && f > 0 ? f * bytes / t / 1e9 : NAN;
}

/*
 * busbw at the bucket size: a swept size as measured; between two, log-log
 * interpolation (bandwidth curves are straight lines on log axes between
 * neighbouring sizes); outside the sweep, the Hockney fit, or nothing.
 */
static int bucket_busbw(const json_t *s, const json_t *fit, double bucket, struct measured *m,
			char *why, size_t len)
{
	size_t n = 0, i;
	struct size_bw *v = sizes_of(s, &n);
	int rc = 0;

	memset(m, 0, sizeof(*m));
	m->fit = (json_t *)fit;
	if (!v || !n) {
		free(v);
		snprintf(why, len, "no sizes");
		return -1;
	}
	for (i = 0; i < n && v[i].bytes < bucket; i++)
		;
	if (i < n && v[i].bytes == bucket) {
		m->busbw = v[i].bw;
		m->lo = m->hi = bucket;
		m->method = "measured at that size";
	} else if (i > 0 && i < n) {
		double x0 = v[i - 1].bytes, x1 = v[i].bytes, y0 = v[i - 1].bw, y1 = v[i].bw;

		m->lo = x0;
		m->hi = x1;
		if (y0 > 0 && y1 > 0) {
			m->busbw = exp(log(y0) + (log(y1) - log(y0)) * (log(bucket) - log(x0)) /
				       (log(x1) - log(x0)));
			m->method = "interpolated log-log between the two swept sizes around it";
		} else {
			m->busbw = y0 + (y1 - y0) * (bucket - x0) / (x1 - x0);
			m->method = "interpolated linearly between the two swept sizes around it";
		}
	} else if (fit && isfinite(fit_busbw(fit, bucket))) {
		m->busbw = fit_busbw(fit, bucket);
		m->lo = v[0].bytes;
		m->hi = v[n - 1].bytes;
		m->method = "outside the sweep: from the Hockney fit, busbw_factor x S / (alpha + S / beta)";
	} else {
		char a[32], b[32], c[32];

		snprintf(why, len, "the bucket of %s is outside the sweep (%s to %s) and the "
			 "series has no Hockney fit to extend it (ccprobe --scale, or a sweep reaching it)",
			 size_human(bucket, a, sizeof(a)), size_human(v[0].bytes, b, sizeof(b)),
			 size_human(v[n - 1].bytes, c, sizeof(c)));
		rc = -1;
	}
	free(v);
	return rc;
}

static const char *source(const struct workload *w, int k, char *buf, size_t len)
{
	if (w->from[k] > 0)
		snprintf(buf, len, "profile line %d", w->from[k]);
	else
		snprintf(buf, len, "%s", w->from[k] < 0 ? "--workload" : "default");
	return buf;
}

/* what was given, and from where, for an estimate that could not be made */
static json_t *given(const struct workload *w, json_t **src)
{
	json_t *in = json_object();
	char buf[48];

	*src = json_object();
	for (int k = 0; k < WL_N; k++) {
		if (!w->from[k])
			continue;
		json_object_set_new(in, wl_key_name(k), w->s[k] ? json_string(w->s[k]) :
				    k == WL_STAGE ? json_string(est_stage_name((int)w->v[k])) :
				    json_real(w->v[k]));
		json_object_set_new(*src, wl_key_name(k), json_string(source(w, k, buf, sizeof(buf))));
	}
	return in;
}

static json_t *not_made(const struct workload *w, const char *why)
{
	json_t *src, *in = given(w, &src);

	return json_pack("{s:s, s:b, s:s, s:o, s:o, s:n, s:s}", "label", "model, not a measurement",
			 "made", 0, "reason", why, "inputs", in, "sources", src, "outputs",
			 "formulas", "docs/estimate.md");
}

/* a series' payload curve for est_compute (report/estimate.h): busbw at any size */
#define EXTRAP_FAR 4.0           /* beyond the sweep by more than this factor: far (docs/estimate.md) */
struct curve {
	const json_t *s, *fit;
	double far;              /* the farthest payload outside the sweep, as a factor of its edge; 1 inside */
	int failed;
	char why[400];
};

static double curve_at(double bytes, void *ctx)
{
	struct curve *c = ctx;
	struct measured m;

	if (bucket_busbw(c->s, c->fit, bytes, &m, c->why, sizeof(c->why))) {
		c->failed = 1;
		return NAN;
	}
	if (m.hi < bytes)
		c->far = fmax(c->far, bytes / m.hi);
	if (m.lo > bytes)
		c->far = fmax(c->far, m.lo / bytes);
	return m.busbw;
}

/* the intra-node all_reduce for tensor parallelism: one node, 2+ ranks, nccl first, most ranks */
static const json_t *intra_series(const struct eval *e, const char **key_out, double *ranks_out)
{
	const struct workload *w = &e->p->wl;
	const json_t *best = NULL, *s;
	const char *key;
	double br = 0;
	int bnccl = 0;

	*key_out = NULL;
	json_object_foreach(e->series, key, s) {
		double r = (double)json_integer_value(json_object_get(e->ranks_of, key));
		int nccl = s_of(s, "backend") && !strcmp(s_of(s, "backend"), "nccl");

		if (strcmp(s_of(s, "name") ?: "", "all_reduce") || n_of(s, "nodes") != 1 || r < 2 ||
		    !field_ok(w->s[WL_DTYPE], s, "dtype") || !(plateau(s) > 0))
			continue;
		if (best && (nccl < bnccl || (nccl == bnccl && r <= br)))
			continue;
		best = s;
		*key_out = key;
		br = r;
		bnccl = nccl;
	}
	*ranks_out = br;
	return best;
}

static json_t *make_estimate(const struct eval *e)
{
	const struct workload *w = &e->p->wl;
	const char *key, *ikey = NULL;
	const json_t *s = estimate_series(e, w->s[WL_BACKEND], w->s[WL_DTYPE], &key), *fit, *is = NULL;
	struct est_inputs in = { 0 };
	struct est_outputs out;
	struct measured m, mi;
	struct curve cv = { 0 };
	json_t *j, *src, *meas, *notes, *terms, *compute, *mem;
	char why[600], buf[48], desc[300], pair_src[200] = "", tp_src[300] = "", sz[32], sz2[32];
	double ranks, iranks = 0, mp, nodes, lanes;
	int pi = -1, fits;

	if (!s) {
		snprintf(why, sizeof(why), "no all_reduce records%s%s%s%s with more than one rank in the results",
			 w->s[WL_BACKEND] ? " of backend " : "", w->s[WL_BACKEND] ?: "",
			 w->s[WL_DTYPE] ? ", dtype " : "", w->s[WL_DTYPE] ?: "");
		return not_made(w, why);
	}
	fit = json_object_get(e->fits, key);
	if (fit && !(n_of(fit, "beta_GBps") > 0 && isfinite(n_of(fit, "alpha_us"))))
		fit = NULL;
	in.bucket_bytes = workload_value(w, WL_BUCKET);
	if (bucket_busbw(s, fit, in.bucket_bytes, &m, why, sizeof(why)))
		return not_made(w, why);
	ranks = json_integer_value(json_object_get(e->ranks_of, key));
	nodes = n_of(s, "nodes");
	/* a failed measurement of the job's scale is no reason to take a smaller one */
	if (!(m.busbw > 0) || !(plateau(s) > 0)) {
		snprintf(why, sizeof(why), "the all_reduce on %.0f node(s), %.0f rank(s) measured busbw %g GB/s "
			 "at the bucket of %s and %g GB/s at its plateau: a failed measurement, and the "
			 "estimate does not fall back to a series of fewer nodes", nodes, ranks,
			 m.busbw, size_human(in.bucket_bytes, sz, sizeof(sz)), plateau(s));
		return not_made(w, why);
	}
	/* the layout: GPUs = tp x pp x dp */
	in.tp = (int)workload_value(w, WL_TP);
	in.pp = (int)workload_value(w, WL_PP);
	mp = (double)in.tp * in.pp;
	if (w->from[WL_DP_SIZE])
		in.dp_size = (int)w->v[WL_DP_SIZE];
	else if (w->from[WL_GPUS])
		in.dp_size = (int)(w->v[WL_GPUS] / mp);
	else if (ranks >= mp && !fmod(ranks, mp))
		in.dp_size = (int)(ranks / mp);
	else {
		snprintf(why, sizeof(why), "the %.0f rank(s) measured are not a multiple of tp %d x pp %d: give "
			 "dp_size or gpus", ranks, in.tp, in.pp);
		return not_made(w, why);
	}
	in.gpus = (int)(mp * in.dp_size);
	in.gpus_per_node = w->from[WL_GPUS_PER_NODE] ? (int)w->v[WL_GPUS_PER_NODE] :
			   e->p->gpus_per_node ? e->p->gpus_per_node :
			   nodes >= 1 && ranks >= nodes && !fmod(ranks, nodes) ? (int)(ranks / nodes) : 1;
	in.ga_steps = (int)workload_value(w, WL_GA_STEPS);
	in.bytes_per_param = workload_value(w, WL_BYTES_PER_PARAM);
	in.layers = workload_value(w, WL_LAYERS);
	in.act_bytes = workload_value(w, WL_ACT_BYTES);
	in.params = workload_value(w, WL_PARAMS);
	in.bytes_per_grad = workload_value(w, WL_BYTES_PER_GRAD);
	in.stage = (enum est_stage)workload_value(w, WL_STAGE);
	in.tokens_per_step = workload_value(w, WL_TOKENS_PER_STEP);
	in.total_tokens = workload_value(w, WL_TOTAL_TOKENS);
	in.peak_tflops = workload_value(w, WL_PEAK_TFLOPS);
	in.mfu = workload_value(w, WL_MFU);
	in.price_gpu_hour = workload_value(w, WL_PRICE);
	in.overlap = workload_value(w, WL_OVERLAP);
	/* measured: the all-rank curve, its fit, the node's all_reduce for tp, a pair for pp */
	cv.s = s;
	cv.fit = fit;
	cv.far = 1;
	in.busbw_GBps = m.busbw;
	in.busbw_at = curve_at;
	in.curve = &cv;
	fit_inputs(&in, fit);
	in.fit_ranks = fit && n_of(fit, "ranks") >= 1 ? (int)n_of(fit, "ranks") : (int)ranks;
	in.tp_busbw_GBps = NAN;
	in.pair_GBps = NAN;
	if (in.tp > 1 && in.act_bytes > 0 && (is = intra_series(e, &ikey, &iranks))) {
		const json_t *ifit = json_object_get(e->fits, ikey);

		if (ifit && !(n_of(ifit, "beta_GBps") > 0 && isfinite(n_of(ifit, "alpha_us"))))
			ifit = NULL;
		if (!bucket_busbw(is, ifit, in.act_bytes, &mi, why, sizeof(why))) {
			in.tp_busbw_GBps = mi.busbw;
			snprintf(tp_src, sizeof(tp_src), "measured: all_reduce %s %s on 1 node, %.0f ranks, at "
				 "act_bytes %s: %s", s_of(is, "backend") ?: "-", s_of(is, "dtype") ?: "-",
				 iranks, size_human(in.act_bytes, sz, sizeof(sz)), mi.method);
		}
	}
	for (int i = 0; i < 2 && pi < 0; i++)
		if (e->pair[i].n)
			pi = i;
	if (in.pp > 1 && pi >= 0) {
		/* a stage boundary's tp shares ride tp rails at once (ib); one link per node (netpair) */
		lanes = pi == 0 ? fmin(in.tp, e->p->nics_per_node > 0 ? e->p->nics_per_node : 1) : 1;
		in.pair_GBps = lanes * e->pair[pi].Gbps / 8;
		snprintf(pair_src, sizeof(pair_src), "measured: %s, the worst of %ld pair(s) at %s, "
			 "%g Gb/s x %.0f lane(s) / 8", pi ? "netpair bw_uni" : "ib write_bw", e->pair[pi].n,
			 size_human(e->pair[pi].bytes, sz, sizeof(sz)), e->pair[pi].Gbps, lanes);
	}
	/* measured compute and memory (model_compute.c) */
	compute = compute_rate(e, &in);
	mem = compute_memory_fit(e, &in, &fits, why, sizeof(why));
	if (!fits || est_compute(&in, &out, why, sizeof(why))) {
		j = not_made(w, fits && cv.failed ? cv.why : why);
		json_object_set_new(j, "compute", compute);
		json_object_set_new(j, "memory_fit", mem);
		return j;
	}
	j = est_json(&in, &out);
	if (!j) {
		json_decref(compute);
		json_decref(mem);
		return json_null();
	}
	json_object_set_new(j, "made", json_true());
	snprintf(desc, sizeof(desc), "%s %s %s on %.0f node(s), %.0f rank(s)%s", s_of(s, "backend") ?: "-",
		 s_of(s, "dtype") ?: "-", s_of(s, "op") ?: "-", nodes, ranks,
		 json_is_true(json_object_get(s, "scale")) ? " (--scale)" : "");
	meas = json_pack("{s:s, s:s?, s:s?, s:s?, s:I, s:I, s:b, s:f, s:f, s:f, s:s, s:O?}",
			 "collective", "all_reduce", "backend", s_of(s, "backend"), "dtype", s_of(s, "dtype"),
			 "op", s_of(s, "op"), "nodes", (json_int_t)nodes, "ranks", (json_int_t)ranks,
			 "scale", json_is_true(json_object_get(s, "scale")), "bucket_bytes", in.bucket_bytes,
			 "from_bytes", m.lo, "to_bytes", m.hi, "method", m.method, "fit", fit);
	src = json_object();
	for (int k = 0; k < WL_N; k++)
		if (k != WL_BACKEND && k != WL_DTYPE && k != WL_GPUS_PER_NODE)
			json_object_set_new(src, wl_key_name(k), json_string(source(w, k, buf, sizeof(buf))));
	if (!w->from[WL_DP_SIZE])
		json_object_set_new(src, "dp_size", json_string(w->from[WL_GPUS] ? "gpus / (tp x pp)" :
								"the ranks of the measured all_reduce / (tp x pp)"));
	if (!w->from[WL_GPUS])
		json_object_set_new(src, "gpus", json_string("tp x pp x dp_size"));
	json_object_set_new(src, "gpus_per_node", json_string(w->from[WL_GPUS_PER_NODE] ?
		source(w, WL_GPUS_PER_NODE, buf, sizeof(buf)) : e->p->gpus_per_node ? "profile [hardware]" :
		"the measured all_reduce's ranks / nodes"));
	if (!w->from[WL_BYTES_PER_PARAM])
		json_object_set_new(src, "bytes_per_param", json_string("bytes_per_grad"));
	json_object_set_new(src, "busbw_GBps", json_sprintf("measured: all_reduce %s, bucket %s: %s",
							    desc, size_human(in.bucket_bytes, sz, sizeof(sz)), m.method));
	json_object_set_new(src, "alpha_us", fit ? json_sprintf("fit record: all_reduce %s", desc) :
			    json_string("no Hockney fit for this series (ccprobe --scale writes one)"));
	json_object_set_new(src, "beta_GBps", json_string(fit ? "the same fit record" : "none"));
	json_object_set_new(src, "beta_busbw_GBps", json_string(!fit ? "none" :
		n_of(fit, "beta_busbw_GBps") > 0 ? "the same fit record" : "the fit's beta x busbw_factor"));
	json_object_set_new(src, "fit_ranks", json_string(!fit ? "none" : n_of(fit, "ranks") >= 1 ?
		"the same fit record" : "the ranks of the measured all_reduce"));
	json_object_set_new(src, "tp_busbw_GBps", json_string(in.tp > 1 ? tp_src : "tp = 1: none needed"));
	json_object_set_new(src, "pair_GBps", json_string(in.pp > 1 ? pair_src : "pp = 1: none needed"));
	/* each term of the step and what it stands on */
	terms = json_pack("{s:{s:f, s:s}, s:{s:f, s:s}, s:{s:f, s:s}}",
		"dp_sync", "seconds", out.sync_s, "source", "all-rank all_reduce busbw at groups_per_node x "
		"bucket (and tail) payloads, the fit's latency at dp_size ranks",
		"tp", "seconds", out.tp_s, "source", in.tp > 1 ? tp_src : "tp = 1: no tensor-parallel traffic",
		"pp", "seconds", out.pp_s, "source", in.pp > 1 ? pair_src : "pp = 1: no pipeline traffic");
	json_object_set_new(j, "terms", terms);
	notes = json_array();
	if (out.dp_nodes != nodes)
		json_array_append_new(notes, json_sprintf("the all_reduce measured on %.0f node(s) stands for a "
			"data-parallel ring over %.0f: busbw is normalised per link, ideal scaling keeps it flat "
			"(see the scaling chart)", nodes, out.dp_nodes));
	if (out.groups > 1)
		json_array_append_new(notes, json_sprintf("%.0f data-parallel rings cross each node and share its "
			"NICs: per node they move what one all-rank all_reduce of %.0f x the bucket does",
			out.groups, out.groups));
	if (m.lo > in.bucket_bytes || m.hi < in.bucket_bytes || cv.far > 1)
		json_array_append_new(notes, json_sprintf("payloads up to %.1fx outside the sweep (%s to %s): "
			"their busbw is the Hockney fit's, not a measurement", cv.far, size_human(m.lo, sz, sizeof(sz)),
			size_human(m.hi, sz2, sizeof(sz2))));
	if (fit && n_of(fit, "rel_rms") > 0.2)
		json_array_append_new(notes, json_sprintf("the Hockney fit misses the measured times by %.0f %% "
			"(rel_rms): sync_fit_s is a rough cross-check", 100 * n_of(fit, "rel_rms")));
	if (in.dp_size > 1 && !fit)
		json_array_append_new(notes, json_string("no Hockney fit: the ring latency at dp_size ranks is "
			"not modelled (latency_s 0)"));
	/* far from what was measured, the estimate is a hint (a comm_fraction criterion warns) */
	if (cv.far > EXTRAP_FAR || out.dp_nodes > EXTRAP_FAR * nodes) {
		char far[120] = "";

		if (cv.far > EXTRAP_FAR)
			snprintf(far, sizeof(far), "payloads %.1fx beyond the swept sizes", cv.far);
		json_object_set_new(j, "extrapolated", json_sprintf("far from what was measured: %s%s%s", far,
			*far && out.dp_nodes > EXTRAP_FAR * nodes ? " and " : "",
			out.dp_nodes > EXTRAP_FAR * nodes ? "a data-parallel ring over more than 4x the nodes "
			"measured" : ""));
	}
	json_object_set_new(j, "sources", src);
	json_object_set_new(j, "measured", meas);
	json_object_set_new(j, "notes", notes);
	compute_label(j, compute);
	json_decref(compute);
	compute_memory_note(j, mem);
	return j;
}

/* the largest spread (cv, a fraction) of the series' records from lo to hi bytes; 0 when none */
static double series_cv(const json_t *s, double lo, double hi)
{
	const json_t *pt;
	size_t i;
	double cv = 0;

	json_array_foreach(json_object_get(s, "points"), i, pt) {
		double b = json_number_value(json_array_get(pt, 0));

		if (b >= lo && b <= hi)
			cv = fmax(cv, json_number_value(json_array_get(pt, 2)) / 100);
	}
	return cv;
}

int model_shape_estimate(const struct eval *e, struct step_shape *sh, struct est_outputs *out,
			 char *why, size_t len)
{
	const char *key = NULL;
	const json_t *s = sh->sync_s > 0 ? NULL : estimate_series(e, sh->backend, NULL, &key), *fit = NULL;
	struct est_inputs in = { 0 };
	struct curve cv = { 0 };
	struct measured m = { 0 };

	if (!s && !(sh->sync_s > 0)) {
		snprintf(why, len, "no all_reduce records of backend %s with more than one rank to price the "
			 "gradient sync", sh->backend ?: "-");
		return -1;
	}
	if (s) {
		fit = json_object_get(e->fits, key);
		if (fit && !(n_of(fit, "beta_GBps") > 0 && isfinite(n_of(fit, "alpha_us"))))
			fit = NULL;
		if (bucket_busbw(s, fit, sh->bucket_bytes, &m, why, len))
			return -1;
		sh->sync_cv = series_cv(s, m.lo, m.hi);
		snprintf(sh->sync_source, sizeof(sh->sync_source), "measured: all_reduce %s %s on %.0f node(s), "
			 "%.0f rank(s), busbw at the bucket of %.0f B (and the tail at its size): %s",
			 s_of(s, "backend") ?: "-", s_of(s, "dtype") ?: "-", n_of(s, "nodes"),
			 (double)json_integer_value(json_object_get(e->ranks_of, key)), sh->bucket_bytes, m.method);
	}
	cv.s = s;
	cv.fit = fit;
	cv.far = 1;
	in.params = sh->params;
	in.bytes_per_grad = sh->bytes_per_grad;
	in.bytes_per_param = NAN;
	in.dp_size = in.gpus = sh->ranks;
	in.tp = in.pp = in.ga_steps = 1;
	in.gpus_per_node = sh->nodes > 0 && sh->ranks % sh->nodes == 0 ? sh->ranks / sh->nodes : 1;
	in.layers = NAN;
	in.act_bytes = NAN;
	in.stage = EST_DDP;
	in.tokens_per_step = sh->tokens_per_step;
	in.total_tokens = sh->tokens_per_step;
	/* the compute measured: a peak of its FLOP/s at an efficiency of 1 gives its time back */
	in.peak_tflops = sh->flops_per_rank / 1e12;
	in.mfu = 1;
	in.price_gpu_hour = 0;
	in.bucket_bytes = sh->bucket_bytes;
	in.overlap = fmin(1, fmax(0, sh->overlap));
	if (s) {
		in.busbw_GBps = m.busbw;
		in.busbw_at = curve_at;
		in.curve = &cv;
		fit_inputs(&in, fit);
		in.fit_ranks = fit && n_of(fit, "ranks") >= 1 ? (int)n_of(fit, "ranks") :
			       (int)json_integer_value(json_object_get(e->ranks_of, key));
	} else {
		/* the sync measured as given: the busbw that moves 2 (n-1)/n S in sync_s, at every size */
		double S = sh->bytes_per_grad * sh->params;

		in.busbw_GBps = sh->ranks > 1 ? 2.0 * (sh->ranks - 1) / sh->ranks * S / sh->sync_s / 1e9 : 1;
		in.alpha_us = NAN;
		in.beta_GBps = NAN;
		in.beta_busbw_GBps = NAN;
		in.fit_ranks = sh->ranks;
	}
	in.tp_busbw_GBps = NAN;
	in.pair_GBps = NAN;
	if (est_compute(&in, out, why, len) || cv.failed) {
		if (cv.failed)
			snprintf(why, len, "%s", cv.why);
		return -1;
	}
	return 0;
}

static void judge_comm(struct crit_state *cs, const json_t *est)
{
	const json_t *o = json_object_get(est, "outputs");

	if (json_is_null(est))
		why_none(cs, "no workload given: no estimate; fix: give one (the profile's [workload], or "
			 "ccreport --workload KEY=VALUE, docs/estimate.md)");
	else if (!json_is_true(json_object_get(est, "made")))
		why_none(cs, "no estimate: %s; fix: measure the all_reduce it reads on every node (`ccprobe "
			 "-B BACKEND all_reduce`, the workload's backend; docs/estimate.md, \"How ccreport fills "
			 "the inputs\") and judge again", s_of(est, "reason") ?: "?");
	else {
		eval_add_value(cs, "estimate", 100 * n_of(o, "comm_fraction"));
		if (s_of(est, "extrapolated") && !cs->caveat)
			cs->caveat = strdup(s_of(est, "extrapolated"));
	}
}

void model_build(struct eval *e)
{
	build_scaling(e);
	if (e->p->wl.any) {
		json_decref(e->estimate);
		e->estimate = make_estimate(e);
	}
	for (int i = 0; i < e->ncs; i++)
		if (e->cs[i].c->derived == DERIVED_COMM)
			judge_comm(&e->cs[i], e->estimate);
}
