/*
 * report/render_md.c: report.md, the summary document as GitHub-flavoured
 * Markdown. Literal Markdown is written with fputs; everything that came
 * from the summary goes through esc_md (put_esc, put_plain).
 */
#include "escape.h"
#include "render_priv.h"

#include <string.h>

/* failures listed under each criterion; summary.json lists them all */
#define MD_MAX_FAILURES 100
/* failures named inside the criteria table cell */
#define MD_CELL_FAILURES 3

#define E(f, ...) put_esc(f, esc_md, __VA_ARGS__)

/* the number is ccreport's own formatting; only the unit came from results */
static void value_unit(FILE *f, const json_t *o, const char *key, const char *unit)
{
	char buf[48];

	fmt_value(buf, sizeof(buf), json_object_get(o, key));
	fputs(buf, f);
	if (strcmp(buf, "n/a") && *unit) {
		fputs(strcmp(unit, "%") ? " " : "", f);
		esc_md(f, unit);
	}
}

static void failure_text(FILE *f, const json_t *fl)
{
	char buf[1024];

	fmt_failure(buf, sizeof(buf), fl);
	E(f, "%s", buf);
}

static void header(FILE *f, const json_t *s)
{
	const char *v = j_str(s, "verdict");
	const json_t *crit;
	int count[4] = { 0 };
	size_t i;
	char buf[64];

	json_array_foreach(j_arr(s, "criteria"), i, crit) {
		const char *cv = j_str(crit, "verdict");

		count[!strcmp(cv, "fail") ? 0 : !strcmp(cv, "warn") ? 1 :
		      !strcmp(cv, "incomplete") ? 2 : 3]++;
	}
	fprintf(f, "# Cluster acceptance: %s\n\n", verdict_word(v));
	fprintf(f, "**Verdict: %s** (exit code ", verdict_word(v));
	E(f, "%s", j_text(json_object_get(s, "exit_code"), buf, sizeof(buf)));
	fprintf(f, "): %zu criteria, %d failed, %d warned, %d incomplete, %d passed.\n\n",
		json_array_size(j_arr(s, "criteria")), count[0], count[1], count[2], count[3]);
	fputs("Profile ", f);
	E(f, "%s", j_str(json_object_get(s, "profile"), "name"));
	fputs("; cluster of ", f);
	put_plain(f, esc_md, json_object_get(json_object_get(s, "cluster"), "nodes"));
	fputs(" nodes, ", f);
	put_plain(f, esc_md, json_object_get(json_object_get(s, "cluster"), "ranks"));
	fputs(" ranks. Generated ", f);
	E(f, "%s by %s %s", j_str(s, "generated_utc"), j_str(s, "tool"), j_str(s, "version"));
	fputs(".\n\n", f);
}

static void criteria_table(FILE *f, const json_t *s)
{
	const json_t *crit, *fl;
	char buf[160];
	size_t i, j, nf;

	fputs("## Criteria\n\n", f);
	if (!json_array_size(j_arr(s, "criteria"))) {
		fputs("No criteria were judged.\n\n", f);
		return;
	}
	fputs("| criterion | verdict | measured worst | bound | elements | failures |\n"
	      "|---|---|---|---|---|---|\n", f);
	json_array_foreach(j_arr(s, "criteria"), i, crit) {
		const json_t *worst = json_object_get(crit, "worst");

		fputs("| ", f);
		E(f, "%s: %s", j_str(crit, "id"), j_str(crit, "title"));
		fprintf(f, " | **%s** | ", verdict_word(j_str(crit, "verdict")));
		value_unit(f, worst, "value", j_str(worst, "unit"));
		if (*j_text(json_object_get(worst, "element"), buf, sizeof(buf)))
			E(f, " at %s", j_text(json_object_get(worst, "element"), buf, sizeof(buf)));
		fputs(" | ", f);
		fmt_bound(buf, sizeof(buf), crit);
		E(f, "%s", buf);
		fputs(" | ", f);
		put_plain(f, esc_md, json_object_get(crit, "elements"));
		fputs(" | ", f);
		nf = json_array_size(j_arr(crit, "failures"));
		json_array_foreach(j_arr(crit, "failures"), j, fl) {
			if (j == MD_CELL_FAILURES) {
				fprintf(f, "; and %zu more", nf - j);
				break;
			}
			fputs(j ? "; " : "", f);
			failure_text(f, fl);
		}
		fputs(nf ? " |\n" : "none |\n", f);
	}
	fputs("\n", f);
}

/* the reason and every failure of each criterion that did not pass */
static void criteria_details(FILE *f, const json_t *s)
{
	const json_t *crit, *fl;
	size_t i, j, nf;
	int any = 0;

	json_array_foreach(j_arr(s, "criteria"), i, crit) {
		if (!strcmp(j_str(crit, "verdict"), "pass"))
			continue;
		if (!any++)
			fputs("### Criteria that did not pass\n\n", f);
		fputs("**", f);
		E(f, "%s", j_str(crit, "id"));
		fprintf(f, "** (%s): ", verdict_word(j_str(crit, "verdict")));
		E(f, "%s", j_str(crit, "reason"));
		fputs("\n\n", f);
		nf = json_array_size(j_arr(crit, "failures"));
		json_array_foreach(j_arr(crit, "failures"), j, fl) {
			if (j == MD_MAX_FAILURES) {
				fprintf(f, "- and %zu more (summary.json lists every one)\n", nf - j);
				break;
			}
			fputs("- ", f);
			failure_text(f, fl);
			fputs("\n", f);
		}
		if (nf)
			fputs("\n", f);
	}
}

static void problems(FILE *f, const json_t *s)
{
	const json_t *p;
	size_t i;

	fputs("## Problems\n\n", f);
	if (!json_array_size(j_arr(s, "problems")))
		fputs("None.\n", f);
	json_array_foreach(j_arr(s, "problems"), i, p) {
		fputs("- ", f);
		put_plain(f, esc_md, p);
		fputs("\n", f);
	}
	fputs("\n", f);
}

/*
 * A table of rows (objects) under a heading, one column per key; values
 * rendered as plain text. Sections the summary does not have are left out;
 * an empty one says so in one line.
 */
static void generic(FILE *f, const char *heading, const json_t *rows,
		    const char *const *keys, const char *const *heads, size_t n, const char *none)
{
	const json_t *r;
	size_t i, k;

	if (!rows)
		return;
	fprintf(f, "## %s\n\n", heading);
	if (!json_array_size(rows)) {
		fprintf(f, "%s\n\n", none);
		return;
	}
	for (k = 0; k < n; k++)
		fprintf(f, "| %s ", heads[k]);
	fputs("|\n", f);
	for (k = 0; k < n; k++)
		fputs("|---", f);
	fputs("|\n", f);
	json_array_foreach(rows, i, r) {
		for (k = 0; k < n; k++) {
			fputs(k ? " | " : "| ", f);
			put_plain(f, esc_md, json_object_get(r, keys[k]));
		}
		fputs(" |\n", f);
	}
	fputs("\n", f);
}

static void hardware(FILE *f, const json_t *s)
{
	static const char *const keys[] = { "key", "found", "expected", "hosts" };
	static const char *const heads[] = { "what", "found", "the profile expects", "hosts" };

	generic(f, "Hardware against the profile", j_arr(s, "hardware"), keys, heads, 4,
		"Every host has the hardware the profile expects.");
}

static void diagnoses(FILE *f, const json_t *s)
{
	static const char *const keys[] = { "probe", "subject", "element", "verdict", "evidence" };
	static const char *const heads[] = { "probe", "subject", "element", "diagnosis", "evidence" };

	generic(f, "Diagnoses", j_arr(s, "diagnoses"), keys, heads, 5, "None.");
}

static void outliers(FILE *f, const json_t *s)
{
	const json_t *o;
	char buf[64];
	size_t i;

	fputs("## Outliers\n\n", f);
	if (!json_array_size(j_arr(s, "outliers"))) {
		fputs("None: no element stands out from its peers.\n\n", f);
		return;
	}
	fputs("| criterion | element | host | value | peer median | below median |\n"
	      "|---|---|---|---|---|---|\n", f);
	json_array_foreach(j_arr(s, "outliers"), i, o) {
		fputs("| ", f);
		E(f, "%s", j_str(o, "criterion"));
		fputs(" | ", f);
		E(f, "%s", j_text(json_object_get(o, "element"), buf, sizeof(buf)));
		fputs(" | ", f);
		E(f, "%s", j_str(o, "host"));
		fputs(" | ", f);
		value_unit(f, o, "value", j_str(o, "unit"));
		fputs(" | ", f);
		value_unit(f, o, "peer_median", j_str(o, "unit"));
		fputs(" | ", f);
		value_unit(f, o, "below_pct", "%");
		fputs(" |\n", f);
	}
	fputs("\n", f);
}

static void consistency(FILE *f, const json_t *s)
{
	const json_t *c, *v;
	size_t i, j;

	fputs("## Consistency across hosts\n\n", f);
	if (!json_array_size(j_arr(s, "consistency"))) {
		fputs("No differences between hosts.\n\n", f);
		return;
	}
	fputs("| setting | value | hosts |\n|---|---|---|\n", f);
	json_array_foreach(j_arr(s, "consistency"), i, c)
		json_array_foreach(j_arr(c, "values"), j, v) {
			fputs("| ", f);
			E(f, "%s", j_str(c, "key"));
			fputs(" | ", f);
			put_plain(f, esc_md, json_object_get(v, "value"));
			fputs(" | ", f);
			put_plain(f, esc_md, json_object_get(v, "hosts"));
			fputs(" |\n", f);
		}
	fputs("\n", f);
}

static void change_table(FILE *f, const char *what, const json_t *rows)
{
	const json_t *r;
	char buf[64];
	size_t i;

	fprintf(f, "### %s\n\n", what);
	if (!json_array_size(rows)) {
		fputs("None.\n\n", f);
		return;
	}
	fputs("| metric | element | baseline | now | change | run-to-run spread |\n"
	      "|---|---|---|---|---|---|\n", f);
	json_array_foreach(rows, i, r) {
		fputs("| ", f);
		E(f, "%s", j_str(r, "metric"));
		fputs(" | ", f);
		E(f, "%s", j_text(json_object_get(r, "element"), buf, sizeof(buf)));
		fputs(" | ", f);
		value_unit(f, r, "old", j_str(r, "unit"));
		fputs(" | ", f);
		value_unit(f, r, "new", j_str(r, "unit"));
		fputs(" | ", f);
		value_unit(f, r, "change_pct", "%");
		fputs(" | ", f);
		value_unit(f, r, "spread_pct", "%");
		fputs(" |\n", f);
	}
	fputs("\n", f);
}

/* the tolerance is a fraction: "5%" */
static void tolerance(FILE *f, const json_t *b)
{
	double t;

	if (j_num(b, "tolerance", &t))
		fprintf(f, "%g%%", t * 100);
	else
		fputs("n/a", f);
}

static void baseline(FILE *f, const json_t *s)
{
	const json_t *b = json_object_get(s, "baseline");

	fputs("## Baseline\n\n", f);
	if (!json_is_object(b)) {
		fputs("No baseline was given.\n\n", f);
		return;
	}
	fputs("Compared with ", f);
	E(f, "%s", j_str(b, "path"));
	fputs(": ", f);
	put_plain(f, esc_md, json_object_get(b, "compared"));
	fputs(" values compared, tolerance ", f);
	tolerance(f, b);
	fputs(".\n\n", f);
	change_table(f, "Regressions", j_arr(b, "regressions"));
	change_table(f, "Improvements", j_arr(b, "improvements"));
}

static void charts(FILE *f, const struct charts *c)
{
	int i;

	fputs("## Charts\n\n", f);
	if (c->status) {
		E(f, "%s", c->status);
		fputs(".\n\n", f);
	}
	for (i = 0; i < c->n; i++) {
		fputs("![", f);
		E(f, "%s", c->v[i].title);
		fprintf(f, "](%s)\n\n", c->v[i].file);    /* our own name, never a result string */
		if (c->v[i].note) {
			fputs("*", f);
			E(f, "%s", c->v[i].note);
			fputs("*\n\n", f);
		}
	}
	for (i = 0; i < c->nerr; i++) {
		fputs("- ", f);
		E(f, "%s", c->errors[i]);
		fputs("\n", f);
	}
	if (c->nerr)
		fputs("\n", f);
	if (!c->status && !c->n && !c->nerr)
		fputs("No chart data in the summary.\n\n", f);
}

static void kv_table(FILE *f, const json_t *o)
{
	const char *k;
	const json_t *v;

	fputs("| name | value |\n|---|---|\n", f);
	json_object_foreach((json_t *)o, k, v) {
		fputs("| ", f);
		E(f, "%s", k);
		fputs(" | ", f);
		put_plain(f, esc_md, v);
		fputs(" |\n", f);
	}
	fputs("\n", f);
}

static void inputs_table(FILE *f, const json_t *in, const json_t *src)
{
	const char *k;
	const json_t *v;

	fputs("| input | value | source |\n|---|---|---|\n", f);
	json_object_foreach((json_t *)in, k, v) {
		fputs("| ", f);
		E(f, "%s", k);
		fputs(" | ", f);
		put_plain(f, esc_md, v);
		fputs(" | ", f);
		E(f, "%s", json_string_value(json_object_get(src, k)) ?: "");
		fputs(" |\n", f);
	}
	fputs("\n", f);
}

/* a model's output is never mistaken for a measurement */
static void estimate(FILE *f, const json_t *s)
{
	const json_t *e = json_object_get(s, "estimate"), *n;
	size_t i;

	if (!json_is_object(e))
		return;
	fputs("## Estimate (a model, not a measurement)\n\n**", f);
	E(f, "%s", *j_str(e, "label") ? j_str(e, "label") : "model, not a measurement");
	fputs("**.", f);
	if (json_is_false(json_object_get(e, "made"))) {
		fputs(" Not made: ", f);
		E(f, "%s", j_str(e, "reason"));
		fputs(".", f);
	}
	fputs(" Every input of the model, and where it came from:\n\n", f);
	inputs_table(f, json_object_get(e, "inputs"), json_object_get(e, "sources"));
	if (json_is_object(json_object_get(e, "outputs"))) {
		fputs("Outputs of the model:\n\n", f);
		kv_table(f, json_object_get(e, "outputs"));
	}
	json_array_foreach(j_arr(e, "notes"), i, n) {
		fputs("- ", f);
		E(f, "%s", json_string_value(n) ?: "");
		fputs("\n", f);
	}
	if (json_array_size(j_arr(e, "notes")))
		fputs("\n", f);
}

static void inputs(FILE *f, const json_t *s)
{
	static const char *const keys[] = { "path", "run_id", "start_utc", "records", "end",
					     "hosts", "ranks", "features" };
	const json_t *in;
	size_t i, k;

	fputs("## Inputs\n\n| results file | run id | started (UTC) | records | end | hosts | ranks | features |\n"
	      "|---|---|---|---|---|---|---|---|\n", f);
	json_array_foreach(j_arr(s, "inputs"), i, in) {
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			fputs(k ? " | " : "| ", f);
			put_plain(f, esc_md, json_object_get(in, keys[k]));
		}
		fputs(" |\n", f);
	}
	fputs("\n", f);
}

static void profile(FILE *f, const json_t *s)
{
	const json_t *p = json_object_get(s, "profile");
	const json_t *x = json_object_get(p, "expected");
	const char *k;
	const json_t *v;

	fputs("## Profile\n\n- name: ", f);
	E(f, "%s", j_str(p, "name"));
	fputs("\n- file: ", f);
	E(f, "%s", j_str(p, "path"));
	fputs("\n- description: ", f);
	E(f, "%s", j_str(p, "description"));
	fputs("\n", f);
	json_object_foreach((json_t *)x, k, v) {
		fputs("- expected ", f);
		E(f, "%s", k);
		fputs(": ", f);
		put_plain(f, esc_md, v);
		fputs("\n", f);
	}
	fputs("\n", f);
}

int render_md(FILE *f, const json_t *s, const struct charts *c)
{
	header(f, s);
	criteria_table(f, s);
	criteria_details(f, s);
	problems(f, s);
	hardware(f, s);
	diagnoses(f, s);
	outliers(f, s);
	consistency(f, s);
	baseline(f, s);
	charts(f, c);
	estimate(f, s);
	inputs(f, s);
	profile(f, s);
	return ferror(f) ? -1 : 0;
}
