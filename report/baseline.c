/*
 * report/baseline.c: compares this run's values with an earlier run's, per
 * criterion and element. The earlier run is either its results (judged
 * again with the same profile) or the summary.json ccreport wrote for it.
 */
#include "baseline.h"
#include "eval.h"
#include "eval_state.h"
#include "htab.h"
#include "load.h"
#include "profile.h"
#include "series.h"
#include "../core/size.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* the earlier run's collective curves sit beside its criteria under a key no id can have */
#define CURVES "\x01curves"

/* criterion id -> values array of the earlier run, and CURVES */
static json_t *old_from_summary(const char *path, char *err, size_t len)
{
	json_error_t je;
	json_t *s = json_load_file(path, 0, &je), *out, *c;
	size_t i;

	if (!s) {
		snprintf(err, len, "%s:%d: not a summary.json: %s", path, je.line, je.text);
		return NULL;
	}
	if (strcmp(json_string_value(json_object_get(s, "tool")) ?: "", "ccreport") ||
	    json_integer_value(json_object_get(s, "schema")) != 1) {
		snprintf(err, len, "%s: not a ccreport summary.json of schema 1", path);
		json_decref(s);
		return NULL;
	}
	out = json_object();
	json_object_set(out, CURVES, json_object_get(json_object_get(s, "charts"), "collectives"));
	json_array_foreach(json_object_get(s, "criteria"), i, c) {
		const char *id = json_string_value(json_object_get(c, "id"));
		json_t *v = json_object_get(c, "values");

		if (id && json_is_array(v))
			json_object_set(out, id, v);
	}
	json_decref(s);
	return out;
}

static json_t *old_from_results(const struct eval *cur, const char *path, char *err, size_t len)
{
	struct eval e;
	char **paths = NULL;
	char *arg = (char *)path;
	int n = results_expand(&arg, 1, &paths, err, len);
	json_t *out = NULL;

	if (n < 0)
		return NULL;
	if (eval_init(&e, cur->p)) {
		snprintf(err, len, "out of memory");
		goto free_paths;
	}
	if (eval_read_inputs(&e, paths, n, err, len))
		goto free_eval;
	eval_finish(&e);
	out = json_object();
	for (int i = 0; out && i < e.ncs; i++)
		json_object_set(out, e.cs[i].c->id, e.cs[i].values);
	if (out)
		json_object_set_new(out, CURVES, series_curves(e.series));
free_eval:
	eval_free(&e);
free_paths:
	for (int i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return out;
}

static int is_summary(const char *path)
{
	size_t l = strlen(path);

	return l >= 5 && !strcmp(path + l - 5, ".json");
}

static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void compare(const struct crit_state *s, const json_t *old, double tol,
		    json_t *reg, json_t *imp, long *compared)
{
	const struct criterion *c = s->c;
	struct htab idx = { 0 };
	size_t i;
	json_t *v;

	json_array_foreach(old, i, v) {
		const char *el = json_string_value(json_object_get(v, "element"));

		if (el && htab_put(&idx, el, (int)i))
			break;
	}
	json_array_foreach(s->values, i, v) {
		const char *el = json_string_value(json_object_get(v, "element"));
		int k = el ? htab_get(&idx, el) : -1;
		const json_t *o = k >= 0 ? json_array_get(old, k) : NULL;
		double a = num(o, "value"), b = num(v, "value"), change, worse_pct, spread;
		char metric[256];

		if (!o || !isfinite(a) || !isfinite(b) || a == 0)
			continue;
		(*compared)++;
		change = 100 * (b - a) / fabs(a);
		worse_pct = c->ge ? -change : change;
		/* a change within the measurement's own spread is noise, not a regression */
		spread = fmax(num(o, "spread_pct"), num(v, "spread_pct"));
		if (!isfinite(spread))
			spread = 0;
		if (fabs(change) <= 100 * tol || fabs(change) <= spread)
			continue;
		snprintf(metric, sizeof(metric), "%s: %s", c->id, c->metric);
		json_array_append_new(worse_pct > 0 ? reg : imp, json_pack(
			"{s:s, s:s, s:s, s:f, s:f, s:s, s:f, s:f}", "criterion", c->id, "metric", metric,
			"element", el, "old", a, "new", b, "unit", c->unit, "change_pct", change,
			"spread_pct", spread));
	}
	htab_free(&idx);
}

static void series_key(const json_t *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s %s %s %s, %lld node(s)%s", json_string_value(json_object_get(s, "name")) ?: "?",
		 json_string_value(json_object_get(s, "backend")) ?: "-",
		 json_string_value(json_object_get(s, "dtype")) ?: "-",
		 json_string_value(json_object_get(s, "op")) ?: "-",
		 (long long)json_integer_value(json_object_get(s, "nodes")),
		 json_is_true(json_object_get(s, "scale")) ? " (--scale)" : "");
}

static double spread_at(const json_t *s, size_t i)
{
	const json_t *v = json_array_get(json_object_get(s, "spread_pct"), i);

	return json_is_number(v) ? json_number_value(v) : 0;
}

/* every collective's busbw at every size both runs measured */
static void compare_curves(const json_t *olds, const json_t *news, double tol,
			   json_t *reg, json_t *imp, long *compared)
{
	const json_t *o, *n;
	size_t i, k, a, b;
	char ko[256], kn[256];

	json_array_foreach(news, i, n) {
		series_key(n, kn, sizeof(kn));
		json_array_foreach(olds, k, o) {
			series_key(o, ko, sizeof(ko));
			if (strcmp(ko, kn))
				continue;
			json_t *pn = json_object_get(n, "points"), *po = json_object_get(o, "points"), *x, *y;

			json_array_foreach(pn, a, x)
				json_array_foreach(po, b, y) {
					double ov = json_number_value(json_array_get(y, 1));
					double nv = json_number_value(json_array_get(x, 1));
					double spread = fmax(spread_at(o, b), spread_at(n, a)), change;
					char metric[300], el[48];

					if (!json_equal(json_array_get(x, 0), json_array_get(y, 0)) || !(ov > 0))
						continue;
					(*compared)++;
					change = 100 * (nv - ov) / ov;
					if (fabs(change) <= 100 * tol || fabs(change) <= spread)
						continue;
					snprintf(metric, sizeof(metric), "%s: busbw_GBps", kn);
					size_human(json_number_value(json_array_get(x, 0)), el, sizeof(el));
					json_array_append_new(change < 0 ? reg : imp, json_pack(
						"{s:s, s:s, s:s, s:f, s:f, s:s, s:f, s:f}", "criterion", "busbw curve",
						"metric", metric, "element", el, "old", ov, "new", nv, "unit", "GB/s",
						"change_pct", change, "spread_pct", spread));
				}
		}
	}
}

json_t *baseline_compare(const struct eval *e, const char *old, double tol, char *err, size_t len)
{
	json_t *ov = is_summary(old) ? old_from_summary(old, err, len) : old_from_results(e, old, err, len);
	json_t *reg, *imp;
	long compared = 0;

	if (!ov)
		return NULL;
	reg = json_array();
	imp = json_array();
	for (int i = 0; i < e->ncs; i++) {
		json_t *o = json_object_get(ov, e->cs[i].c->id);

		if (o)
			compare(&e->cs[i], o, tol, reg, imp, &compared);
	}
	json_t *curves = series_curves(e->series);

	compare_curves(json_object_get(ov, CURVES), curves, tol, reg, imp, &compared);
	json_decref(curves);
	json_decref(ov);
	return json_pack("{s:s, s:f, s:I, s:o, s:o}", "path", old, "tolerance", tol,
			 "compared", (json_int_t)compared, "regressions", reg, "improvements", imp);
}
