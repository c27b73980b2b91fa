/*
 * report/compare.c: ccreport compare. Reads the summary.json of each
 * cluster and builds one comparison document: the criteria side by side
 * (each normalised to its own bound, so different hardware compares), the
 * workload recomputed on each cluster from the same model (estimate.c) and
 * inputs, a ranking by cost and by time among the clusters that pass every
 * required criterion, and the differences in words. docs/compare.md.
 * The summaries are ccreport's own output, but every field is still read
 * leniently: a missing field reads as missing, never as a crash.
 */
#include "compare.h"
#include "estimate.h"
#include "judge.h"
#include "nodes.h"
#include "report.h"
#include "workload.h"
#include "../fmt/fmt.h"
#include "../core/size.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void cmp_errf(char *err, size_t len, const char *name, const char *fmt, const char *a,
		     const char *b)
{
	char what[9000];

	snprintf(what, sizeof(what), fmt, a, b);
	snprintf(err, len, "ccreport compare: %s: %s", name, what);
}

/* the comparison needs one failure and the worst element's value per criterion, no matrix */
static void trim(json_t *s)
{
	json_t *c, *v, *keep;
	size_t i, j;

	json_object_del(json_object_get(s, "charts"), "netpair");
	json_array_foreach(json_object_get(s, "criteria"), i, c) {
		const char *worst = json_string_value(json_object_get(json_object_get(c, "worst"), "element"));

		keep = json_array();
		json_array_foreach(json_object_get(c, "values"), j, v)
			if (worst && !strcmp(json_string_value(json_object_get(v, "element")) ?
					     json_string_value(json_object_get(v, "element")) : "", worst)) {
				json_array_append(keep, v);
				break;
			}
		json_object_set_new(c, "values", keep);
		while (json_array_size(json_object_get(c, "failures")) > 1)
			json_array_remove(json_object_get(c, "failures"), json_array_size(json_object_get(c, "failures")) - 1);
	}
}

/* the bound the worst element was judged against: its own for relative bounds */
static int worst_bound(const json_t *crit, double *b)
{
	const json_t *bound = json_object_get(crit, "bound"), *w = json_object_get(crit, "worst"), *v;
	const char *el = j_str(w, "element");
	size_t i;

	if (!json_is_number(json_object_get(bound, "relative")))
		return j_num(bound, "value", b);
	json_array_foreach(j_arr(crit, "values"), i, v)
		if (!strcmp(j_str(v, "element"), el))
			return j_num(v, "bound", b);
	json_array_foreach(j_arr(crit, "failures"), i, v)
		if (!strcmp(j_str(v, "element"), el))
			return j_num(v, "bound", b);
	return 0;
}

/* ---- what a summary may claim: its verdicts follow from its own values and bounds ---- */

static int verdict_rank(const char *v)
{
	static const char *const order[] = { "pass", "warn", "incomplete", "fail" };

	for (int i = 0; i < 4; i++)
		if (!strcmp(v, order[i]))
			return i;
	return -1;
}

/* value v outside bound b under op (">=": below it; "<=": above it); equal is inside, as judged */
static int outside(const char *op, double v, double b)
{
	return !strcmp(op, ">=") ? v < b : v > b;
}

/*
 * The first value of criterion c (its values, failures and worst element)
 * outside its bound, with that bound in *b; NULL when none is. A relative
 * bound is each element's own ("bound" in its entry).
 */
static const json_t *first_outside(const json_t *c, const char *op, double *b)
{
	const char *lists[] = { "failures", "values" };
	const json_t *e, *w = json_object_get(c, "worst");
	double v;
	size_t i;

	for (int l = 0; l < 2; l++)
		json_array_foreach(j_arr(c, lists[l]), i, e)
			if (j_num(e, "value", &v) && j_num(e, "bound", b) && outside(op, v, *b))
				return e;
	if (j_num(w, "value", &v) && worst_bound(c, b) && outside(op, v, *b))
		return w;
	return NULL;
}

/*
 * The verdicts a summary states follow from its values: a criterion with a
 * value outside its bound fails (warns at severity warn; an estimate the
 * model extrapolated warns, saying so), and the run's verdict is no better
 * than its required criteria's and any judged one's (summary.c). compare
 * ranks on the verdicts, so a summary edited to pass (or damaged) is refused
 * rather than ranked: 0, or -1 with what does not follow in why.
 */
static int summary_consistent(const json_t *s, char *why, size_t len)
{
	const json_t *c;
	int worst = 0, claimed = verdict_rank(j_str(s, "verdict"));
	size_t i;

	if (claimed < 0) {
		snprintf(why, len, "its verdict '%.40s' is none of pass, warn, incomplete, fail", j_str(s, "verdict"));
		return -1;
	}
	json_array_foreach(j_arr(s, "criteria"), i, c) {
		const char *id = j_str(c, "id"), *op = j_str(json_object_get(c, "bound"), "op");
		int v = verdict_rank(j_str(c, "verdict")), want = 0;
		const json_t *e;
		double b;

		if (v < 0) {
			snprintf(why, len, "criterion %.100s: verdict '%.40s' is none of pass, warn, incomplete, fail",
				 id, j_str(c, "verdict"));
			return -1;
		}
		if (strcmp(op, ">=") && strcmp(op, "<=")) {
			snprintf(why, len, "criterion %.100s: bound operator '%.10s' is neither >= nor <=", id, op);
			return -1;
		}
		e = first_outside(c, op, &b);
		if (e) {
			/* judge() (eval.c): an extrapolated estimate's fail is a warn, and its reason says so */
			int caveat = !strcmp(j_str(c, "kind"), "estimate") &&
				     strstr(j_str(c, "reason"), "; a warn, not a pass or fail: ");

			want = !strcmp(j_str(c, "severity"), "warn") || caveat ? 1 : 3;
		}
		if (v < want) {
			double x = 0;

			j_num(e, "value", &x);
			snprintf(why, len, "criterion %.100s says %s, but %.100s's %.4g %.20s is outside its bound %s %.4g",
				 id, j_str(c, "verdict"), *j_str(e, "element") ? j_str(e, "element") : "its worst element",
				 x, j_str(c, "unit"), op, b);
			return -1;
		}
		/* the run's verdict (summary.c): required criteria and any judged one count */
		if ((json_is_true(json_object_get(c, "required")) || v != 2) && v > worst)
			worst = v;
	}
	if (claimed < worst) {
		snprintf(why, len, "its verdict is %s, but one of its criteria's is %s", j_str(s, "verdict"),
			 worst == 3 ? "fail" : worst == 2 ? "incomplete" : "warn");
		return -1;
	}
	return 0;
}

/*
 * "0.1.0" as three numbers; -1 when it is not such a version. A summary of a
 * later ccreport may mean something else by the same field.
 */
static int version_of(const char *v, long n[3])
{
	char *end;

	for (int i = 0; i < 3; i++) {
		if (*v < '0' || *v > '9')
			return -1;
		n[i] = strtol(v, &end, 10);
		if (end - v > 6 || *end != (i < 2 ? '.' : '\0'))
			return -1;
		v = end + (i < 2);
	}
	return 0;
}

static int version_newer(const char *v, const char *than)
{
	long a[3], b[3];

	if (version_of(v, a) || version_of(than, b))
		return 1;
	for (int i = 0; i < 3; i++)
		if (a[i] != b[i])
			return a[i] > b[i];
	return 0;
}

/* results rather than a summary: a .jsonl file, or a folder holding some and no summary.json */
static int holds_results(const char *path, int dir)
{
	size_t n = strlen(path);
	char pat[4200];

	if (!dir)
		return n > 6 && !strcmp(path + n - 6, ".jsonl");
	snprintf(pat, sizeof(pat), "%s/summary.json", path);
	return access(pat, F_OK) != 0;
}

static int judged(struct cmp_run *r, const char *run, const struct cmp_judge *j, int dir, char *err,
		  size_t len)
{
	char why[1024];

	if (!j || !j->profile) {
		cmp_errf(err, len, r->name, dir ? "'%s' holds no summary.json: give -p PROFILE to judge "
			 "the results in it, or judge them first (ccreport -p PROFILE -o DIR %s)" :
			 "'%s' is a results file, not a summary: give -p PROFILE to judge it, or judge it "
			 "first (ccreport -p PROFILE -o DIR %s)", run, run);
		return -1;
	}
	r->path = strdup(run);
	r->s = r->path ? judge_results(j, run, why, sizeof(why)) : NULL;
	if (!r->s) {
		snprintf(err, len, "ccreport compare: %s: %s", r->name, r->path ? why : "out of memory");
		return -1;
	}
	trim(r->s);
	return 0;
}

int cmp_run_load(struct cmp_run *r, const char *arg, const struct cmp_judge *j, char *err, size_t len)
{
	const char *eq = strchr(arg, '=');
	char path[4096];
	json_error_t je;
	struct stat st;
	json_t *schema;

	memset(r, 0, sizeof(*r));
	r->price = -1;
	if (!eq || eq == arg || !eq[1]) {
		cmp_errf(err, len, arg, "expected NAME=RUN (RUN: a summary.json or its folder)%s%s", "", "");
		return -1;
	}
	r->name = strndup(arg, eq - arg);
	if (!r->name)
		goto nomem;
	if (stat(eq + 1, &st)) {
		cmp_errf(err, len, r->name, "cannot read '%s': %s", eq + 1, strerror(errno));
		goto fail;
	}
	if (holds_results(eq + 1, S_ISDIR(st.st_mode))) {
		if (judged(r, eq + 1, j, S_ISDIR(st.st_mode), err, len))
			goto fail;
		return 0;
	}
	snprintf(path, sizeof(path), S_ISDIR(st.st_mode) ? "%s/summary.json" : "%s", eq + 1);
	r->path = strdup(path);
	if (!r->path)
		goto nomem;
	r->s = json_load_file(path, 0, &je);
	if (!r->s) {
		char line[32];

		snprintf(line, sizeof(line), "%d", je.line);
		snprintf(err, len, "ccreport compare: %s: %s:%s: malformed summary: %s", r->name, path,
			 je.line > 0 ? line : "1", je.text);
		goto fail;
	}
	schema = json_object_get(r->s, "schema");
	if (!json_is_object(r->s) || strcmp(j_str(r->s, "tool"), "ccreport") || !json_is_integer(schema) ||
	    !json_is_array(json_object_get(r->s, "criteria"))) {
		cmp_errf(err, len, r->name, "'%s' is not a ccreport summary.json%s%s", path, "");
		goto fail;
	}
	if (json_integer_value(schema) != 1) {
		char v[32];

		snprintf(v, sizeof(v), "%lld", (long long)json_integer_value(schema));
		cmp_errf(err, len, r->name, "'%s': summary schema %s (ccreport reads schema 1)", path, v);
		goto fail;
	}
	{
		long n[3];
		const char *v = j_str(r->s, "version");
		char why[600];

		if (version_of(v, n)) {
			cmp_errf(err, len, r->name, "'%s': no ccreport version in the summary ('%.40s'): not one "
				 "ccreport wrote", path, v);
			goto fail;
		}
		if (version_newer(v, RPT_VERSION)) {
			cmp_errf(err, len, r->name, "'%s': written by ccreport %.40s, newer than this one ("
				 RPT_VERSION "): its fields may mean what this one cannot know; compare with that "
				 "version", path, v);
			goto fail;
		}
		if (summary_consistent(r->s, why, sizeof(why))) {
			cmp_errf(err, len, r->name, "'%s': %s: an edited or damaged summary; judge the results "
				 "again (ccreport -p PROFILE RESULTS)", path, why);
			goto fail;
		}
	}
	trim(r->s);
	return 0;
nomem:
	snprintf(err, len, "ccreport compare: out of memory");
fail:
	cmp_run_free(r);
	return -1;
}

void cmp_run_free(struct cmp_run *r)
{
	free(r->name);
	free(r->path);
	json_decref(r->s);
	memset(r, 0, sizeof(*r));
}

/* ---- criteria side by side ---- */

/* value over bound for >=, bound over value for <=: above 1 is inside the bound, for every unit */
static json_t *normalized(const char *op, double v, double b)
{
	if (!strcmp(op, ">="))
		return b > 0 ? json_real(v / b) : json_null();
	return v > 0 && b > 0 ? json_real(b / v) : json_null();
}

static const json_t *find_crit(const json_t *s, const char *id)
{
	const json_t *c;
	size_t i;

	json_array_foreach(j_arr(s, "criteria"), i, c)
		if (!strcmp(j_str(c, "id"), id))
			return c;
	return NULL;
}

static json_t *cell_of(const json_t *c)
{
	const json_t *w = json_object_get(c, "worst");
	const char *op = j_str(json_object_get(c, "bound"), "op");
	json_t *cell;
	double v, b;

	cell = json_pack("{s:s, s:s}", "verdict", j_str(c, "verdict"), "reason", j_str(c, "reason"));
	if (!cell)
		return NULL;
	if (j_num(w, "value", &v) && worst_bound(c, &b)) {
		json_object_set_new(cell, "value", json_real(v));
		json_object_set_new(cell, "bound", json_real(b));
		json_object_set_new(cell, "normalized", normalized(op, v, b));
		json_object_set_new(cell, "element", json_string(j_str(w, "element")));
		json_object_set_new(cell, "host", json_string(j_str(w, "host")));
	} else {
		json_object_set_new(cell, "value", json_null());
		json_object_set_new(cell, "normalized", json_null());
	}
	return cell;
}

/* why criterion c of run k cannot be set beside the first run's (ref): NULL when it can */
static const char *incomparable(const json_t *ref, const json_t *c)
{
	const json_t *rb = json_object_get(ref, "bound"), *cb = json_object_get(c, "bound");

	if (strcmp(j_str(ref, "metric"), j_str(c, "metric")))
		return "different metrics";
	if (strcmp(j_str(ref, "unit"), j_str(c, "unit")))
		return "different units";
	if (strcmp(j_str(rb, "op"), j_str(cb, "op")))
		return "opposite bounds";
	if (!json_equal(json_object_get(ref, "size"), json_object_get(c, "size")))
		return "different message sizes";
	return NULL;
}

static json_t *criteria_side(struct cmp_run *runs, int n)
{
	json_t *out = json_array(), *ids = json_object();
	int k;

	if (!out || !ids)
		goto nomem;
	for (k = 0; k < n; k++) {
		const json_t *c;
		size_t i;

		json_array_foreach(j_arr(runs[k].s, "criteria"), i, c) {
			const char *id = j_str(c, "id"), *why = NULL;
			const json_t *ref = NULL;
			json_t *row, *cells, *bounds;
			char buf[512];
			int m, missing = 0;

			if (json_object_get(ids, id))
				continue;
			json_object_set_new(ids, id, json_true());
			cells = json_array();
			bounds = json_array();
			row = json_pack("{s:s, s:s, s:s, s:s, s:b, s:o, s:o}", "id", id, "title",
					j_str(c, "title"), "unit", j_str(c, "unit"), "op",
					j_str(json_object_get(c, "bound"), "op"), "required",
					json_is_true(json_object_get(c, "required")), "clusters", cells,
					"bounds", bounds);
			if (!row || json_array_append_new(out, row))
				goto nomem;
			for (m = 0; m < n; m++) {
				const json_t *cm = find_crit(runs[m].s, id);

				if (!cm) {
					json_array_append_new(cells, json_pack("{s:s}", "verdict", "missing"));
					json_array_append_new(bounds, json_null());
					missing = 1;
					if (!why) {
						snprintf(buf, sizeof(buf), "not in the profile of %s (%s)",
							 runs[m].name,
							 j_str(json_object_get(runs[m].s, "profile"), "name"));
						why = buf;
					}
					continue;
				}
				fmt_bound(buf + 256, 256, cm);
				json_array_append_new(bounds, json_string(buf + 256));
				json_array_append_new(cells, cell_of(cm));
				if (!ref)
					ref = cm;
				else if (!why && incomparable(ref, cm)) {
					char w[256];

					snprintf(w, sizeof(w), "%s (%s's profile %s)", incomparable(ref, cm),
						 runs[m].name,
						 j_str(json_object_get(runs[m].s, "profile"), "name"));
					snprintf(buf, 256, "%s", w);
					why = buf;
				}
			}
			json_object_set_new(row, "comparable", json_boolean(!why));
			json_object_set_new(row, "why", why ? json_string(why) : json_null());
			(void)missing;
		}
	}
	json_decref(ids);
	return out;
nomem:
	json_decref(ids);
	json_decref(out);
	return NULL;
}

/* ---- the workload on each cluster ---- */

static double num_or(const json_t *o, const char *key, double dflt)
{
	double v;

	return j_num(o, key, &v) ? v : dflt;
}

/* -w KEY=VALUE given on compare's command line replaces the run's input */
static void apply_flags(struct est_inputs *e, const struct workload *w)
{
	for (int k = 0; w && k < WL_N; k++) {
		double v = w->v[k];

		if (w->from[k] != -1)
			continue;
		switch (k) {
		case WL_PARAMS: e->params = v; break;
		case WL_BYTES_PER_GRAD: e->bytes_per_grad = v; break;
		case WL_DP_SIZE: e->dp_size = (int)v; break;
		case WL_GPUS: e->gpus = (int)v; break;
		case WL_STAGE: e->stage = (enum est_stage)v; break;
		case WL_TOKENS_PER_STEP: e->tokens_per_step = v; break;
		case WL_TOTAL_TOKENS: e->total_tokens = v; break;
		case WL_PEAK_TFLOPS: e->peak_tflops = v; break;
		case WL_MFU: e->mfu = v; break;
		case WL_PRICE: e->price_gpu_hour = v; break;
		case WL_BUCKET: e->bucket_bytes = v; break;
		case WL_OVERLAP: e->overlap = v; break;
		case WL_TP: e->tp = (int)v; break;
		case WL_PP: e->pp = (int)v; break;
		case WL_GPUS_PER_NODE: e->gpus_per_node = (int)v; break;
		case WL_GA_STEPS: e->ga_steps = (int)v; break;
		case WL_BYTES_PER_PARAM: e->bytes_per_param = v; break;
		case WL_LAYERS: e->layers = v; break;
		case WL_ACT_BYTES: e->act_bytes = v; break;
		default: break;
		}
	}
}

static json_t *workload_of(const struct cmp_run *r, const struct cmp_opts *o)
{
	const json_t *est = json_object_get(r->s, "estimate"), *src, *v;
	struct est_inputs in;
	struct est_outputs out;
	const char *key, *price_src;
	char err[256];
	json_t *w, *j, *also;

	w = json_pack("{s:s}", "name", r->name);
	if (!w)
		return NULL;
	if (!json_is_object(est)) {
		json_object_set_new(w, "made", json_false());
		json_object_set_new(w, "reason", json_string("no estimate in this summary: its profile has no "
							     "[workload] (run ccreport with -w)"));
		return w;
	}
	if (!json_is_true(json_object_get(est, "made"))) {
		json_object_set_new(w, "made", json_false());
		json_object_set_new(w, "reason", json_string(j_str(est, "reason")));
		return w;
	}
	if (est_inputs_of(json_object_get(est, "inputs"), &in)) {
		json_object_set_new(w, "made", json_false());
		json_object_set_new(w, "reason", json_string("the summary's estimate has no readable inputs"));
		return w;
	}
	src = json_object_get(est, "sources");
	price_src = j_str(src, "price_per_gpu_hour");
	apply_flags(&in, o->wl);
	if (o->wl && o->wl->from[WL_PRICE] == -1)
		price_src = "-w price_per_gpu_hour";
	if (r->price >= 0) {
		in.price_gpu_hour = r->price;
		price_src = "--price";
	}
	if (est_compute(&in, &out, err, sizeof(err))) {
		json_object_set_new(w, "made", json_false());
		json_object_set_new(w, "reason", json_string(err));
		return w;
	}
	j = est_json(&in, &out);
	if (!j) {
		json_decref(w);
		return NULL;
	}
	json_object_set_new(w, "made", json_true());
	json_object_set(w, "inputs", json_object_get(j, "inputs"));
	json_object_set(w, "outputs", json_object_get(j, "outputs"));
	json_decref(j);
	if (!(in.price_gpu_hour > 0)) {
		json_object_set_new(json_object_get(w, "outputs"), "cost", json_null());
		price_src = "no price";
	}
	json_object_set_new(w, "price_source", json_string(*price_src ? price_src : "default"));
	json_object_set_new(w, "busbw_source", json_string(j_str(src, "busbw_GBps")));
	/* what the run's estimate has beyond this model (checkpoint stall, memory fit): as it was */
	also = json_object();
	json_object_foreach(json_object_get(est, "outputs"), key, v)
		if (!json_object_get(json_object_get(w, "outputs"), key))
			json_object_set(also, key, (json_t *)v);
	json_object_set_new(w, "also", also);
	return w;
}

/* the same input: summary.json keeps 6 significant digits, a summary judged in memory all */
static int same_value(const json_t *a, const json_t *b)
{
	if (json_is_number(a) && json_is_number(b)) {
		double x = json_number_value(a), y = json_number_value(b);

		return fabs(x - y) <= 1e-5 * fmax(fabs(x), fabs(y));
	}
	return json_equal(a, b);
}

static json_t *inputs_differ(const json_t *wls)
{
	const json_t *first = NULL, *w, *v;
	json_t *out = json_array();
	const char *key;
	size_t i;

	json_array_foreach(wls, i, w)
		if (json_is_true(json_object_get(w, "made")) && !first)
			first = json_object_get(w, "inputs");
	json_object_foreach((json_t *)first, key, v) {
		json_t *vals = json_object();
		int differ = 0;

		json_array_foreach(wls, i, w) {
			const json_t *x;

			if (!json_is_true(json_object_get(w, "made")))
				continue;
			x = json_object_get(json_object_get(w, "inputs"), key);
			json_object_set(vals, j_str(w, "name"), x ? (json_t *)x : json_null());
			if (!x || !same_value(x, v))
				differ = 1;
		}
		if (differ)
			json_array_append_new(out, json_pack("{s:s, s:o}", "input", key, "values", vals));
		else
			json_decref(vals);
	}
	return out;
}

/* ---- ranking ---- */

/*
 * NULL when every required criterion passed (warnings allowed) and the run's
 * verdict is not fail or incomplete for another reason; else why not
 */
static char *exclusion(const json_t *s)
{
	const json_t *c, *pick = NULL;
	char buf[600], fl[400];
	size_t i;
	char *r;

	json_array_foreach(j_arr(s, "criteria"), i, c) {
		const char *v = j_str(c, "verdict");

		if (!json_is_true(json_object_get(c, "required")))
			continue;
		if (!strcmp(v, "fail")) {
			pick = c;
			break;
		}
		if (strcmp(v, "pass") && strcmp(v, "warn") && !pick)
			pick = c;
	}
	if (!pick) {
		/* every criterion passed, and still a fail or incomplete: hardware, versions, a run cut short */
		const char *v = j_str(s, "verdict");

		if (strcmp(v, "fail") && strcmp(v, "incomplete"))
			return NULL;
		snprintf(buf, sizeof(buf), "verdict %s: %s", verdict_word(v),
			 json_string_value(json_array_get(j_arr(s, "problems"), 0)) ?
			 json_string_value(json_array_get(j_arr(s, "problems"), 0)) : "see its report");
		return strdup(buf);
	}
	if (json_array_size(j_arr(pick, "failures"))) {
		fmt_failure(fl, sizeof(fl), json_array_get(j_arr(pick, "failures"), 0));
		snprintf(buf, sizeof(buf), "%s %s: %s", j_str(pick, "id"),
			 verdict_word(j_str(pick, "verdict")), fl);
	} else {
		snprintf(buf, sizeof(buf), "%s %s: %s", j_str(pick, "id"),
			 verdict_word(j_str(pick, "verdict")), j_str(pick, "reason"));
	}
	r = strdup(buf);
	return r;
}

static const json_t *g_wls;
static const char *g_key;

static double out_num(const json_t *w, const char *key)
{
	return num_or(json_object_get(w, "outputs"), key, INFINITY);
}

static int by_key(const void *a, const void *b)
{
	double x = out_num(json_array_get(g_wls, *(const int *)a), g_key),
	       y = out_num(json_array_get(g_wls, *(const int *)b), g_key);

	return x < y ? -1 : x > y ? 1 : *(const int *)a - *(const int *)b;
}

static json_t *ranking(struct cmp_run *runs, int n, const json_t *wls)
{
	json_t *by_cost = json_array(), *by_time = json_array(), *excl = json_array(),
	       *noprice = json_array(), *noest = json_array();
	int *ok = calloc(n + 1, sizeof(*ok)), nok = 0;

	if (!ok)
		return NULL;
	for (int k = 0; k < n; k++) {
		const json_t *w = json_array_get(wls, k);
		char *why = exclusion(runs[k].s);

		if (why) {
			json_array_append_new(excl, json_pack("{s:s, s:s}", "name", runs[k].name,
							      "reason", why));
			free(why);
		} else if (!json_is_true(json_object_get(w, "made"))) {
			json_array_append_new(noest, json_pack("{s:s, s:s}", "name", runs[k].name,
							       "reason", j_str(w, "reason")));
		} else {
			ok[nok++] = k;
		}
	}
	for (int pass = 0; pass < 2; pass++) {
		g_wls = wls;
		g_key = pass ? "cost" : "days";
		qsort(ok, nok, sizeof(*ok), by_key);
		for (int i = 0; i < nok; i++) {
			const json_t *w = json_array_get(wls, ok[i]), *o = json_object_get(w, "outputs");
			json_t *e = json_pack("{s:s, s:O, s:O, s:O}", "name", runs[ok[i]].name, "days",
					      json_object_get(o, "days"), "gpu_hours",
					      json_object_get(o, "gpu_hours"), "cost",
					      json_object_get(o, "cost") ? json_object_get(o, "cost") : json_null());

			if (!pass)
				json_array_append_new(by_time, e);
			else if (json_is_number(json_object_get(o, "cost")))
				json_array_append_new(by_cost, e);
			else {
				json_array_append_new(noprice, json_pack("{s:s}", "name", runs[ok[i]].name));
				json_decref(e);
			}
		}
	}
	free(ok);
	return json_pack("{s:o, s:o, s:o, s:o, s:o}", "by_cost", by_cost, "by_time", by_time,
			 "no_price", noprice, "not_estimated", noest, "excluded", excl);
}

/* ---- the differences in words ---- */

static double pct(double x, double ref)
{
	return ref != 0 ? 100 * (x - ref) / ref : 0;
}

static void add_line(json_t *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_line(json_t *a, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (rc >= 0) {
		json_array_append_new(a, json_string(s));
		free(s);
	}
}

static int excluded(const json_t *rank, const char *name)
{
	const json_t *e;
	size_t i;

	json_array_foreach(json_object_get(rank, "excluded"), i, e)
		if (!strcmp(j_str(e, "name"), name))
			return 1;
	return 0;
}

/* the ids of of's criteria that have has not (its profile lacks them), a new array */
static json_t *not_judged(const json_t *has, const json_t *of)
{
	json_t *ids = json_array();
	const json_t *c;
	size_t i;

	json_array_foreach(j_arr(of, "criteria"), i, c)
		if (!find_crit(has, j_str(c, "id")))
			json_array_append_new(ids, json_string(j_str(c, "id")));
	return ids;
}

static const char *profile_of(const json_t *s)
{
	return j_str(json_object_get(s, "profile"), "name");
}

/*
 * "C judged by profile X: N criteria of A's not judged (a, b, c and 2 more)":
 * a cluster judged by another profile, or by one without some criteria, is
 * not measured against the same checks; a cell "missing" was the only sign.
 */
static void profile_lines(json_t *out, const struct cmp_run *x, const struct cmp_run *ref)
{
	json_t *ids = not_judged(x->s, ref->s);
	size_t n = json_array_size(ids), i;
	char list[400] = "";
	size_t at = 0;

	for (i = 0; i < n && i < 3 && at < sizeof(list); i++)
		at += snprintf(list + at, sizeof(list) - at, "%s%s", i ? ", " : "",
			       json_string_value(json_array_get(ids, i)));
	if (n > 3 && at < sizeof(list))
		snprintf(list + at, sizeof(list) - at, " and %zu more", n - 3);
	if (n)
		add_line(out, "%s judged by profile %s: %zu criteri%s of %s's not judged (%s)", x->name,
			 profile_of(x->s), n, n == 1 ? "on" : "a", ref->name, list);
	else if (strcmp(profile_of(x->s), profile_of(ref->s)))
		add_line(out, "%s judged by profile %s, %s by %s: every criterion of %s's judged on %s too",
			 x->name, profile_of(x->s), ref->name, profile_of(ref->s), ref->name, x->name);
	json_decref(ids);
}

static json_t *differences(struct cmp_run *runs, int n, const json_t *wls, const json_t *crits,
			   const json_t *rank, const json_t *differ)
{
	const json_t *fast = json_array_get(json_object_get(rank, "by_time"), 0), *rw = NULL, *e, *row;
	json_t *out = json_array();
	int ref = 0;
	size_t i;

	for (int k = 0; fast && k < n; k++)
		if (!strcmp(runs[k].name, j_str(fast, "name")))
			ref = k;
	rw = json_array_get(wls, ref);
	/* first what was not judged alike: the rest compares clusters on different checks */
	for (int k = 0; k < n; k++)
		if (k != ref) {
			profile_lines(out, &runs[k], &runs[ref]);
			profile_lines(out, &runs[ref], &runs[k]);
		}
	/* inputs of the workload itself (not the measurement, the price or the job size) that differ */
	{
		static const char *const own[] = { "params", "bytes_per_grad", "stage", "tokens_per_step",
			"total_tokens", "peak_tflops", "mfu", "bucket_bytes", "overlap" };
		char list[300] = "";
		size_t o, used = 0;

		json_array_foreach(differ, i, e)
			for (o = 0; o < sizeof(own) / sizeof(own[0]); o++)
				if (!strcmp(j_str(e, "input"), own[o]) && used + strlen(own[o]) + 3 < sizeof(list))
					used += snprintf(list + used, sizeof(list) - used, "%s%s", used ? ", " : "", own[o]);
		if (used)
			add_line(out, "the runs' workloads differ (%s): each cluster is estimated for its own; "
				 "give -w KEY=VALUE to set one workload for all", list);
	}
	/* the exclusions are said once, in the ranking (not again here) */
	for (int k = 0; k < n; k++) {
		const json_t *w = json_array_get(wls, k), *wi, *ri, *wo, *ro;
		const char *rn = runs[ref].name, *xn = runs[k].name;
		char sz[32];
		int lines = 0;

		if (k == ref)
			continue;
		if (json_is_true(json_object_get(w, "made")) && json_is_true(json_object_get(rw, "made"))) {
			wi = json_object_get(w, "inputs");
			ri = json_object_get(rw, "inputs");
			wo = json_object_get(w, "outputs");
			ro = json_object_get(rw, "outputs");
			double bx = num_or(wi, "busbw_GBps", NAN), br = num_or(ri, "busbw_GBps", NAN);
			double sx = num_or(wo, "sync_s", NAN), sr = num_or(ro, "sync_s", NAN);
			double cx = num_or(wo, "compute_s", NAN), cr = num_or(ro, "compute_s", NAN);
			double tx = num_or(wo, "step_s", NAN), tr = num_or(ro, "step_s", NAN);
			double px = num_or(wi, "price_per_gpu_hour", 0), pr = num_or(ri, "price_per_gpu_hour", 0);
			double gx = num_or(wi, "gpus", 0), gr = num_or(ri, "gpus", 0);

			if (fabs(pct(bx, br)) >= 2 || fabs(pct(sx, sr)) >= 2)
				add_line(out, "%s: all_reduce busbw %.4g vs %.4g GB/s (%s) at the %s bucket: "
					 "%+.0f%% sync time per step (%.4g vs %.4g s)", xn, bx, br, rn,
					 size_human(num_or(wi, "bucket_bytes", 0), sz, sizeof(sz)), pct(sx, sr), sx, sr),
					lines++;
			if (gx != gr)
				add_line(out, "%s: %.0f GPUs vs %.0f (%s)", xn, gx, gr, rn), lines++;
			if (fabs(pct(cx, cr)) >= 2)
				add_line(out, "%s: compute %.4g vs %.4g s per step (%s): peak_tflops %.4g vs %.4g, "
					 "mfu %.3g vs %.3g", xn, cx, cr, rn, num_or(wi, "peak_tflops", 0),
					 num_or(ri, "peak_tflops", 0), num_or(wi, "mfu", 0),
					 num_or(ri, "mfu", 0)), lines++;
			if (fabs(pct(tx, tr)) >= 1)
				add_line(out, "%s: step %.4g s vs %.4g s (%s): %+.0f%% time, %.4g vs %.4g days",
					 xn, tx, tr, rn, pct(tx, tr), num_or(wo, "days", 0),
					 num_or(ro, "days", 0)), lines++;
			if (px > 0 && pr > 0 && px != pr)
				add_line(out, "%s: $%.4g vs $%.4g per GPU-hour (%s): cost $%.6g vs $%.6g (%+.0f%%)",
					 xn, px, pr, rn, num_or(wo, "cost", 0), num_or(ro, "cost", 0),
					 pct(num_or(wo, "cost", 0), num_or(ro, "cost", 0))), lines++;
			else if (!(px > 0) && !excluded(rank, xn))
				add_line(out, "%s: no price: no cost, ranked by time only", xn), lines++;
		}
		/* criteria more than 10 % further from their bound than on the reference */
		json_array_foreach(crits, i, row) {
			const json_t *cx = json_array_get(json_object_get(row, "clusters"), k),
				     *cr = json_array_get(json_object_get(row, "clusters"), ref);
			double nx, nr;

			if (lines >= 8 || !json_is_true(json_object_get(row, "comparable")) ||
			    !j_num(cx, "normalized", &nx) || !j_num(cr, "normalized", &nr) || !(nx < 0.9 * nr))
				continue;
			add_line(out, "%s: %s worst %.4g %s (%s) vs %.4g %s (%s): %.2f vs %.2f of the bound",
				 xn, j_str(row, "id"), num_or(cx, "value", 0), j_str(row, "unit"),
				 j_str(cx, "element"), num_or(cr, "value", 0), j_str(row, "unit"), rn, nx, nr);
			lines++;
		}
	}
	return out;
}

/* the all_reduce curve of the most nodes (plain before --scale) and the first scaling curve */
static json_t *charts_of(struct cmp_run *runs, int n)
{
	json_t *colls = json_array(), *scal = json_array();

	for (int k = 0; k < n; k++) {
		const json_t *ch = json_object_get(runs[k].s, "charts"), *s, *best = NULL, *sc;
		size_t i;

		json_array_foreach(j_arr(ch, "collectives"), i, s) {
			double nb = 0, ns = 0;

			if (strcmp(j_str(s, "name"), "all_reduce"))
				continue;
			j_num(s, "nodes", &ns);
			if (best)
				j_num(best, "nodes", &nb);
			if (!best || (json_is_true(json_object_get(best, "scale")) &&
				      !json_is_true(json_object_get(s, "scale"))) ||
			    (json_is_true(json_object_get(best, "scale")) == json_is_true(json_object_get(s, "scale")) &&
			     ns > nb))
				best = s;
		}
		if (best)
			json_array_append_new(colls, json_pack("{s:s, s:s, s:O, s:O}", "cluster", runs[k].name,
							       "backend", j_str(best, "backend"), "nodes",
							       json_object_get(best, "nodes"), "points",
							       json_object_get(best, "points")));
		sc = json_array_get(j_arr(ch, "scaling"), 0);
		if (sc)
			json_array_append_new(scal, json_pack("{s:s, s:s, s:O}", "cluster", runs[k].name,
							      "name", j_str(sc, "name"), "points",
							      json_object_get(sc, "points")));
	}
	return json_pack("{s:o, s:o}", "collectives", colls, "scaling", scal);
}

json_t *compare_build(struct cmp_run *runs, int n, const struct cmp_opts *o, char *err, size_t len)
{
	json_t *doc, *clusters = json_array(), *wls = json_array(), *nodes = json_array(), *crits, *rank,
	       *differ;

	if (!clusters || !wls || !nodes)
		goto nomem;
	for (int k = 0; k < n; k++) {
		const json_t *s = runs[k].s, *cl = json_object_get(s, "cluster");
		json_t *w = workload_of(&runs[k], o), *np;

		if (!w || json_array_append_new(wls, w))
			goto nomem;
		json_array_append_new(clusters, json_pack(
			"{s:s, s:s, s:s, s:s, s:O, s:O, s:s}", "name", runs[k].name, "path", runs[k].path,
			"profile", j_str(json_object_get(s, "profile"), "name"), "verdict",
			j_str(s, "verdict"), "nodes",
			json_object_get(cl, "nodes") ? json_object_get(cl, "nodes") : json_null(), "ranks",
			json_object_get(cl, "ranks") ? json_object_get(cl, "ranks") : json_null(),
			"generated_utc", j_str(s, "generated_utc")));
		np = nodes_plan(runs[k].name, s, json_object_get(w, "inputs"), o->deadline_days, o->budget_usd);
		if (np)
			json_array_append_new(nodes, np);
	}
	/* per cluster, the criteria another cluster's profile judged and its own has not */
	for (int k = 0; k < n; k++) {
		json_t *ids = json_array();

		for (int m = 0; m < n; m++) {
			json_t *miss = m == k ? NULL : not_judged(runs[k].s, runs[m].s);
			const json_t *id;
			size_t i, j;

			json_array_foreach(miss, i, id) {
				for (j = 0; j < json_array_size(ids) && !json_equal(json_array_get(ids, j), id); j++)
					;
				if (j == json_array_size(ids))
					json_array_append(ids, (json_t *)id);
			}
			json_decref(miss);
		}
		json_object_set_new(json_array_get(clusters, k), "not_judged", ids);
	}
	crits = criteria_side(runs, n);
	rank = crits ? ranking(runs, n, wls) : NULL;
	if (!rank) {
		json_decref(crits);
		goto nomem;
	}
	differ = inputs_differ(wls);
	doc = json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:{s:s, s:O, s:O}, s:o, s:o}",
			"schema", 1, "tool", "ccreport", "kind", "compare", "version", RPT_VERSION,
			"commit", ccdiag_commit, "generated_utc", o->generated_utc ? o->generated_utc : "", "clusters", clusters,
			"criteria", crits, "workload", "label", "model, not a measurement", "clusters",
			wls, "inputs_differ", differ, "ranking", rank, "nodes", nodes);
	if (!doc) {   /* json_pack took the "o" references either way */
		json_decref(wls);
		json_decref(differ);
		snprintf(err, len, "ccreport compare: out of memory");
		return NULL;
	}
	json_object_set_new(doc, "differences", differences(runs, n, wls, crits, rank, differ));
	json_decref(wls);
	json_decref(differ);
	json_object_set_new(doc, "charts", charts_of(runs, n));
	json_object_set_new(doc, "deadline_days", o->deadline_days > 0 ? json_real(o->deadline_days) : json_null());
	json_object_set_new(doc, "budget_usd", o->budget_usd > 0 ? json_real(o->budget_usd) : json_null());
	return doc;
nomem:
	json_decref(clusters);
	json_decref(wls);
	json_decref(nodes);
	snprintf(err, len, "ccreport compare: out of memory");
	return NULL;
}
