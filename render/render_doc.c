/*
 * render/render_doc.c: the sections of report.md and index.html, written
 * once. Each section walks the summary and writes through a struct markup
 * (render_doc.h): literal markup from its strings and hooks, everything
 * that came from the summary through m->esc (put_esc, put_plain).
 */
#include "render_doc.h"
#include "escape.h"
#include "render.h"
#include "../core/size.h"
#include "../fmt/fmt.h"

#include <stdlib.h>
#include <string.h>

/* failures named inside the criteria table cell */
#define CELL_FAILURES 3

#define E(f, m, ...) put_esc(f, (m)->esc, __VA_ARGS__)

/* one column of a table of numbers: text, or a number with the row's unit or "%" */
struct column {
	const char *key;
	enum { COL_TEXT, COL_UNIT, COL_PCT } kind;
};

static void para(FILE *f, const struct markup *m, const char *text)
{
	m->p_open(f, NULL);
	fputs(text, f);
	fputs(m->p_close, f);
}

/* a section's heading; 0, after saying so in one line, when it has no rows */
static int section(FILE *f, const struct markup *m, int level, const char *id,
		   const char *title, const json_t *rows, const char *none)
{
	m->heading(f, level, id, title);
	if (json_array_size(rows))
		return 1;
	para(f, m, none);
	return 0;
}

/* the number is ccreport's own formatting; only the unit came from results */
static void value_unit(FILE *f, const struct markup *m, const json_t *o, const char *key,
		       const char *unit)
{
	char buf[48];

	fmt_value(buf, sizeof(buf), json_object_get(o, key));
	fputs(buf, f);
	if (strcmp(buf, "n/a") && *unit) {
		fputs(strcmp(unit, "%") ? " " : "", f);
		m->esc(f, unit);
	}
}

static void failure_text(FILE *f, const struct markup *m, const json_t *fl)
{
	char buf[1024];

	fmt_failure(buf, sizeof(buf), fl);
	E(f, m, "%s", buf);
}

static void header(FILE *f, const struct markup *m, const json_t *s)
{
	const json_t *crit;
	int count[5] = { 0 };
	size_t i;

	json_array_foreach(j_arr(s, "criteria"), i, crit) {
		const char *cv = j_str(crit, "verdict");

		count[!strcmp(cv, "fail") ? 0 : !strcmp(cv, "warn") ? 1 :
		      !strcmp(cv, "incomplete") ? 2 : 3]++;
		count[4] += !strcmp(cv, "incomplete") && json_is_false(json_object_get(crit, "required"));
	}
	m->header(f, s, json_array_size(j_arr(s, "criteria")), count);
	if (json_is_object(json_object_get(s, "decision"))) {
		char judged[1024];

		fmt_judged(judged, sizeof(judged), json_object_get(json_object_get(s, "decision"), "judged"));
		fputs("; judged: ", f);
		E(f, m, "%s", judged);
	} else {
		fputs("; cluster of ", f);
		put_plain(f, m->esc, json_object_get(json_object_get(s, "cluster"), "nodes"));
		fputs(" nodes", f);
	}
	fputs(". Generated ", f);
	E(f, m, "%s by %s %s", j_str(s, "generated_utc"), j_str(s, "tool"), j_str(s, "version"));
	if (*j_str(s, "commit"))
		E(f, m, " (git %s)", j_str(s, "commit"));
	fputs(".", f);
	fputs(m->p_close, f);
}

/* a line of the decision's list: literal head, then summary text */
static void item(FILE *f, const struct markup *m, const char *head, const char *text)
{
	fputs(m->li_open, f);
	fputs(m->b_open, f);
	fputs(head, f);
	fputs(m->b_close, f);
	fputs(" ", f);
	E(f, m, "%s", text);
	fputs(m->li_close, f);
}

/*
 * What the verdict means and what to do, first (the summary's "decision",
 * report/decision.c): nodes to drain, links and rail pairs to check, warnings
 * to look at, the wrong hardware, the required checks not measured with their fix, the optional
 * ones counted, what was judged, the estimate's headline.
 */
static void decision(FILE *f, const struct markup *m, const json_t *s)
{
	const json_t *d = json_object_get(s, "decision"), *v, *h;
	char buf[2048], head[256];
	size_t i, k, at;
	double nopt = 0;

	if (!json_is_object(d))
		return;
	m->heading(f, 2, "decision", "Decision");
	m->p_open(f, "decision");
	E(f, m, "%s", j_str(d, "words"));
	fputs(m->p_close, f);
	m->list_open(f, "decision");
	json_array_foreach(j_arr(d, "drain"), i, v) {
		snprintf(head, sizeof(head), "Drain %s:", j_str(v, "node"));
		fputs(m->li_open, f);
		fputs(m->b_open, f);
		E(f, m, "%s", head);
		fputs(m->b_close, f);
		fputs(" ", f);
		E(f, m, "%s", j_str(v, "reason"));
		fputs(m->li_close, f);
	}
	json_array_foreach(j_arr(d, "check"), i, v) {
		if (i == 20) {
			snprintf(buf, sizeof(buf), "%zu more in the criteria below", json_array_size(j_arr(d, "check")) - i);
			item(f, m, "And:", buf);
			break;
		}
		snprintf(buf, sizeof(buf), "the %s %s: %s", j_str(v, "what"), j_str(v, "element"), j_str(v, "reason"));
		item(f, m, "Check:", buf);
	}
	json_array_foreach(j_arr(d, "look_at"), i, v) {
		snprintf(buf, sizeof(buf), "%s: %s", j_str(v, "criterion"), j_str(v, "reason"));
		item(f, m, "Look at:", buf);
	}
	json_array_foreach(j_arr(d, "hardware"), i, v) {
		at = (size_t)snprintf(buf, sizeof(buf), "%s '%s' on ", j_str(v, "key"), j_str(v, "found"));
		json_array_foreach(j_arr(v, "hosts"), k, h)
			if (at < sizeof(buf))
				at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%s", k ? ", " : "",
						       json_string_value(h) ?: "");
		if (at < sizeof(buf))
			snprintf(buf + at, sizeof(buf) - at, "; the profile expects %s", j_str(v, "expected"));
		item(f, m, "Wrong hardware:", buf);
	}
	json_array_foreach(j_arr(d, "hardware_not_checked"), i, v) {
		snprintf(buf, sizeof(buf), "%s; fix: %s", j_str(v, "what"), j_str(v, "fix"));
		item(f, m, "Hardware not checked:", buf);
	}
	json_array_foreach(j_arr(d, "unfinished"), i, v) {
		snprintf(buf, sizeof(buf), "%s (end: %s)", j_str(v, "path"), j_str(v, "end"));
		item(f, m, "Run not finished:", buf);
	}
	json_array_foreach(j_arr(d, "to_measure"), i, v) {
		char *ids = j_plain(json_object_get(v, "criteria"));

		snprintf(buf, sizeof(buf), "%s: %s", ids ? ids : "", j_str(v, "fix"));
		free(ids);
		item(f, m, "Not measured (required):", buf);
	}
	if (j_num(d, "optional_not_measured", &nopt) && nopt > 0) {
		snprintf(buf, sizeof(buf), "%.0f (listed last in the criteria; they do not change the verdict)", nopt);
		item(f, m, "Optional checks not measured:", buf);
	}
	fmt_judged(buf, sizeof(buf), json_object_get(d, "judged"));
	item(f, m, "Judged:", buf);
	/* without a workload, how to give one */
	fmt_headline(buf, sizeof(buf), json_object_get(d, "estimate"));
	item(f, m, "Estimate (a model, not a measurement):", buf);
	fputs(m->list_close, f);
}

/* the criteria's order in the table: fail, warn, required incomplete, pass, optional not judged */
static int crit_rank(const json_t *crit)
{
	const char *v = j_str(crit, "verdict");

	return !strcmp(v, "fail") ? 0 : !strcmp(v, "warn") ? 1 :
	       !strcmp(v, "incomplete") ? (json_is_false(json_object_get(crit, "required")) ? 4 : 2) :
	       !strcmp(v, "pass") ? 3 : 5;
}

/* the criteria in that order (stable: profile order within a rank); n set; NULL on no memory */
static const json_t **crit_sorted(const json_t *s, size_t *n)
{
	const json_t *a = j_arr(s, "criteria"), **out;
	size_t i, k = 0;

	*n = json_array_size(a);
	out = calloc(*n ? *n : 1, sizeof(*out));
	if (!out)
		return NULL;
	for (int r = 0; r <= 5; r++)
		for (i = 0; i < *n; i++)
			if (crit_rank(json_array_get(a, i)) == r)
				out[k++] = json_array_get(a, i);
	return out;
}

static void criteria_row(FILE *f, const struct markup *m, const json_t *crit)
{
	const json_t *worst = json_object_get(crit, "worst"), *fl;
	char buf[160];
	const char *el = j_text(json_object_get(worst, "element"), buf, sizeof(buf));
	size_t j, nf;

	fputs(m->tr_open, f);
	m->td_open(f, 0, NULL);
	m->crit_name(f, crit);
	fputs(m->td_close, f);
	m->verdict_cell(f, 1, j_str(crit, "verdict"));
	fputs(m->td_close, f);
	m->td_open(f, 2, NULL);
	fputs(json_is_false(json_object_get(crit, "required")) ? "optional" : "required", f);
	fputs(m->td_close, f);
	m->td_open(f, 3, "n");
	value_unit(f, m, worst, "value", j_str(worst, "unit"));
	if (*el) {
		fputs(m->cell_br, f);
		E(f, m, "at %s", el);
	}
	/* the sizes whose median the plateau value is */
	json_array_foreach(j_arr(worst, "plateau"), j, fl) {
		char sz[32];

		fputs(j ? ", " : m->cell_br, f);
		E(f, m, "%s%s", j ? "" : "plateau of ", size_human(json_number_value(json_array_get(fl, 0)), sz, sizeof(sz)));
	}
	fputs(m->td_close, f);
	m->td_open(f, 4, NULL);
	fmt_bound(buf, sizeof(buf), crit);
	E(f, m, "%s", buf);
	fputs(m->td_close, f);
	m->td_open(f, 5, "n");
	put_plain(f, m->esc, json_object_get(crit, "elements"));
	fputs(m->td_close, f);
	m->td_open(f, 6, NULL);
	nf = json_array_size(j_arr(crit, "failures"));
	json_array_foreach(j_arr(crit, "failures"), j, fl) {
		if (j == CELL_FAILURES) {
			fprintf(f, "%sand %zu more", m->fail_sep, nf - j);
			break;
		}
		fputs(j ? m->fail_sep : "", f);
		failure_text(f, m, fl);
	}
	fputs(nf ? "" : "none", f);
	fputs(m->td_close, f);
	fputs(m->tr_close, f);
}

static void criteria_table(FILE *f, const struct markup *m, const json_t *s)
{
	static const char *const heads[] = { "criterion", "verdict", "required", "measured worst", "bound",
					     "elements judged", "failures" };
	const json_t **crit;
	size_t i, n;

	if (!section(f, m, 2, "criteria", "Criteria (failed, warned, required not judged, passed, "
		     "optional not judged)", j_arr(s, "criteria"), "No criteria were judged."))
		return;
	crit = crit_sorted(s, &n);
	if (!crit)
		return;
	m->table_open(f, heads, 7);
	for (i = 0; i < n; i++)
		criteria_row(f, m, crit[i]);
	fputs(m->table_close, f);
	free((void *)crit);
}

/* the reason and every failure of each criterion that did not pass, in the table's order */
static void criteria_details(FILE *f, const struct markup *m, const json_t *s)
{
	size_t nc;
	const json_t **sorted = crit_sorted(s, &nc), *crit, *fl;
	size_t i, j, nf;
	int any = 0;

	for (i = 0; sorted && i < nc; i++) {
		const char *v = j_str(sorted[i], "verdict");

		crit = sorted[i];

		if (!strcmp(v, "pass"))
			continue;
		if (!any++)
			m->heading(f, 3, NULL, "Criteria that did not pass");
		m->p_open(f, NULL);
		fputs(m->b_open, f);
		E(f, m, "%s", j_str(crit, "id"));
		fputs(m->b_close, f);
		m->verdict_inline(f, v);
		fputs(": ", f);
		E(f, m, "%s", j_str(crit, "reason"));
		fputs(m->p_close, f);
		nf = json_array_size(j_arr(crit, "failures"));
		if (!nf)
			continue;
		m->failures_open(f, nf);
		m->list_open(f, "fail");
		json_array_foreach(j_arr(crit, "failures"), j, fl) {
			fputs(m->li_open, f);
			if (j == (size_t)m->max_failures) {
				fprintf(f, "and %zu more (summary.json lists every one)%s",
					nf - j, m->li_close);
				break;
			}
			failure_text(f, m, fl);
			fputs(m->li_close, f);
		}
		fputs(m->list_close, f);
		fputs(m->failures_close, f);
	}
	free((void *)sorted);
}

static void problems(FILE *f, const struct markup *m, const json_t *s)
{
	const json_t *p;
	size_t i;

	if (!section(f, m, 2, "problems", "Problems", j_arr(s, "problems"), "None."))
		return;
	m->list_open(f, NULL);
	json_array_foreach(j_arr(s, "problems"), i, p) {
		fputs(m->li_open, f);
		put_plain(f, m->esc, p);
		fputs(m->li_close, f);
	}
	fputs(m->list_close, f);
}

/*
 * A table of rows (objects) under a heading, one column per key; values
 * rendered as plain text. Sections the summary does not have are left out;
 * an empty one says so in one line.
 */
static void generic(FILE *f, const struct markup *m, const char *id, const char *heading,
		    const json_t *rows, const char *const *keys, const char *const *heads,
		    size_t n, const char *none)
{
	const json_t *r;
	size_t i, k;

	if (!rows || !section(f, m, 2, id, heading, rows, none))
		return;
	m->table_open(f, heads, n);
	json_array_foreach(rows, i, r) {
		fputs(m->tr_open, f);
		for (k = 0; k < n; k++) {
			m->td_open(f, k, NULL);
			put_plain(f, m->esc, json_object_get(r, keys[k]));
			fputs(m->td_close, f);
		}
		fputs(m->tr_close, f);
	}
	fputs(m->table_close, f);
}

static void hardware(FILE *f, const struct markup *m, const json_t *s)
{
	static const char *const keys[] = { "key", "found", "expected", "hosts" };
	static const char *const heads[] = { "what", "found", "the profile expects", "hosts" };

	const json_t *miss = j_arr(s, "hardware_missing"), *v;
	size_t i;

	generic(f, m, "hardware", "Hardware against the profile", j_arr(s, "hardware"),
		keys, heads, 4, json_array_size(miss) ? "Not every host could be checked:" :
		"Every host has the hardware the profile expects.");
	/* what the profile states and no inventory showed is not checked, never "as expected" */
	if (!json_array_size(miss) || !j_arr(s, "hardware"))
		return;
	m->list_open(f, NULL);
	json_array_foreach(miss, i, v) {
		fputs(m->li_open, f);
		E(f, m, "not checked: %s", json_string_value(v) ?: "");
		fputs(m->li_close, f);
	}
	fputs(m->list_close, f);
}

/* what each diagnosis blames, at its granularity: node, link, leaf uplink (its subject before there was one) */
static void diagnoses(FILE *f, const struct markup *m, const json_t *s)
{
	static const char *const keys[] = { "probe", "granularity", "element", "verdict", "evidence" };
	static const char *const heads[] = { "probe", "granularity", "element", "diagnosis", "evidence" };
	json_t *rows = json_deep_copy(j_arr(s, "diagnoses")), *d;
	size_t i;

	json_array_foreach(rows, i, d)
		if (!json_object_get(d, "granularity") && json_object_get(d, "subject"))
			json_object_set(d, "granularity", json_object_get(d, "subject"));
	generic(f, m, "diagnoses", "Diagnoses", rows, keys, heads, 5, "None.");
	json_decref(rows);
}

/* isolate's rounds (docs/isolation.md): every test, its hosts, padding, result and the planner's decision */
static void isolate_rounds(FILE *f, const struct markup *m, const json_t *s)
{
	static const char *const keys[] = { "round", "role", "group", "nodes", "padding", "ratio", "result",
					    "tries", "decision" };
	static const char *const heads[] = { "round", "test", "group", "hosts tested", "known-good padding",
					     "busbw / reference", "result", "tries", "decision" };

	generic(f, m, "isolate-rounds", "Group testing rounds (isolate)", j_arr(s, "isolate_rounds"), keys,
		heads, 9, NULL);
}

/* one row of numbers: a number's cell is right-aligned where the markup can */
static void number_row(FILE *f, const struct markup *m, const json_t *o,
		       const struct column *col, size_t n)
{
	char buf[64];
	size_t k;

	fputs(m->tr_open, f);
	for (k = 0; k < n; k++) {
		const json_t *v = json_object_get(o, col[k].key);

		if (col[k].kind == COL_TEXT) {
			m->td_open(f, k, NULL);
			E(f, m, "%s", j_text(v, buf, sizeof(buf)));
		} else {
			m->td_open(f, k, json_is_number(v) ? "n" : NULL);
			value_unit(f, m, o, col[k].key,
				   col[k].kind == COL_PCT ? "%" : j_str(o, "unit"));
		}
		fputs(m->td_close, f);
	}
	fputs(m->tr_close, f);
}

static void number_table(FILE *f, const struct markup *m, const json_t *rows,
			 const struct column *col, const char *const *heads, size_t n)
{
	const json_t *r;
	size_t i;

	m->table_open(f, heads, n);
	json_array_foreach(rows, i, r)
		number_row(f, m, r, col, n);
	fputs(m->table_close, f);
}

static void outliers(FILE *f, const struct markup *m, const json_t *s)
{
	static const struct column col[] = {
		{ "criterion", COL_TEXT }, { "element", COL_TEXT }, { "host", COL_TEXT },
		{ "value", COL_UNIT }, { "peer_reference", COL_UNIT }, { "below_pct", COL_PCT },
		{ "tolerance_pct", COL_PCT },
	};
	static const char *const heads[] = { "criterion", "element", "host", "value",
					     "peer quartile", "worse by", "tolerance" };

	if (section(f, m, 2, "outliers", "Outliers", j_arr(s, "outliers"),
		    "None: no element stands out from its peers."))
		number_table(f, m, j_arr(s, "outliers"), col, heads, 7);
}

static void consistency(FILE *f, const struct markup *m, const json_t *s)
{
	static const char *const heads[] = { "setting", "value", "hosts" };
	const json_t *c, *v;
	size_t i, j;

	if (!section(f, m, 2, "consistency", "Consistency across hosts", j_arr(s, "consistency"),
		     "No differences between hosts."))
		return;
	m->table_open(f, heads, 3);
	json_array_foreach(j_arr(s, "consistency"), i, c)
		json_array_foreach(j_arr(c, "values"), j, v) {
			fputs(m->tr_open, f);
			m->td_open(f, 0, NULL);
			E(f, m, "%s", j_str(c, "key"));
			fputs(m->td_close, f);
			m->td_open(f, 1, NULL);
			put_plain(f, m->esc, json_object_get(v, "value"));
			fputs(m->td_close, f);
			m->td_open(f, 2, NULL);
			put_plain(f, m->esc, json_object_get(v, "hosts"));
			fputs(m->td_close, f);
			fputs(m->tr_close, f);
		}
	fputs(m->table_close, f);
}

static void change_table(FILE *f, const struct markup *m, const char *what, const json_t *rows)
{
	static const struct column col[] = {
		{ "metric", COL_TEXT }, { "element", COL_TEXT }, { "old", COL_UNIT },
		{ "new", COL_UNIT }, { "change_pct", COL_PCT }, { "spread_pct", COL_PCT },
	};
	static const char *const heads[] = { "metric", "element", "baseline", "now", "change",
					     "run-to-run spread" };

	if (section(f, m, 3, NULL, what, rows, "None."))
		number_table(f, m, rows, col, heads, 6);
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

static void baseline(FILE *f, const struct markup *m, const json_t *s)
{
	const json_t *b = json_object_get(s, "baseline");

	m->heading(f, 2, "baseline", "Baseline");
	if (!json_is_object(b)) {
		para(f, m, "No baseline was given.");
		return;
	}
	m->p_open(f, NULL);
	fputs("Compared with ", f);
	E(f, m, "%s", j_str(b, "path"));
	fputs(": ", f);
	put_plain(f, m->esc, json_object_get(b, "compared"));
	fputs(" values compared, tolerance ", f);
	tolerance(f, b);
	fputs(".", f);
	fputs(m->p_close, f);
	change_table(f, m, "Regressions", j_arr(b, "regressions"));
	change_table(f, m, "Improvements", j_arr(b, "improvements"));
}

static void charts(FILE *f, const struct markup *m, const struct charts *c)
{
	int i;

	m->heading(f, 2, "charts", "Charts");
	if (c->status) {
		m->p_open(f, "note");
		E(f, m, "%s", c->status);
		fputs(".", f);
		fputs(m->p_close, f);
	}
	for (i = 0; i < c->n; i++)
		m->chart(f, &c->v[i]);
	if (c->nerr) {
		m->list_open(f, NULL);
		for (i = 0; i < c->nerr; i++) {
			fputs(m->li_open, f);
			E(f, m, "%s", c->errors[i]);
			fputs(m->li_close, f);
		}
		fputs(m->list_close, f);
	}
	if (!c->status && !c->n && !c->nerr)
		para(f, m, "No chart data in the summary.");
}

/* name, value and, in a third column, where the value came from (src) */
static void kv_table(FILE *f, const struct markup *m, const json_t *o, const json_t *src,
		     const char *const *heads, size_t n)
{
	const char *k;
	const json_t *v;

	m->table_open(f, heads, n);
	json_object_foreach((json_t *)o, k, v) {
		fputs(m->tr_open, f);
		m->td_open(f, 0, NULL);
		E(f, m, "%s", k);
		fputs(m->td_close, f);
		m->td_open(f, 1, NULL);
		if (json_is_number(v) && strlen(k) > 6 && !strcmp(k + strlen(k) - 6, "_bytes")) {
			char sz[32];

			E(f, m, "%s", size_human(json_number_value(v), sz, sizeof(sz)));
		} else {
			put_plain(f, m->esc, v);
		}
		fputs(m->td_close, f);
		if (n == 3) {
			m->td_open(f, 2, NULL);
			E(f, m, "%s", json_string_value(json_object_get(src, k)) ?: "");
			fputs(m->td_close, f);
		}
		fputs(m->tr_close, f);
	}
	fputs(m->table_close, f);
}

/*
 * The heading, box and first paragraph of a model's section (the estimate,
 * the checkpoint model): its label, and why it was not made; the paragraph
 * is left open for the caller.
 */
static void model_open(FILE *f, const struct markup *m, const json_t *e, const char *id,
		       const char *title)
{
	m->heading(f, 2, id, title);
	fputs(m->box_open, f);
	m->p_open(f, NULL);
	fputs(m->b_open, f);
	E(f, m, "%s", *j_str(e, "label") ? j_str(e, "label") : "model, not a measurement");
	fputs(m->b_close, f);
	fputs(".", f);
	if (json_is_false(json_object_get(e, "made"))) {
		fputs(" Not made: ", f);
		E(f, m, "%s", j_str(e, "reason"));
		fputs(".", f);
	}
}

/* an output's unit from its name (docs/estimate.md): fractions are shown in % */
static const char *out_unit(const char *k, double *scale)
{
	size_t n = strlen(k);

	*scale = 1;
	if (!strcmp(k, "days"))
		return "days";
	if (!strcmp(k, "gpu_hours"))
		return "GPU-hours";
	if (!strcmp(k, "cost"))
		return "USD";
	if (n > 9 && !strcmp(k + n - 9, "_fraction")) {
		*scale = 100;
		return "%";
	}
	if (n > 2 && !strcmp(k + n - 2, "_s"))
		return "s";
	if (n > 6 && !strcmp(k + n - 6, "_bytes"))
		return "B";
	return "";
}

static void output_row(FILE *f, const struct markup *m, const char *k, const json_t *v)
{
	char buf[64];
	double scale;
	const char *unit = out_unit(k, &scale);

	fputs(m->tr_open, f);
	m->td_open(f, 0, NULL);
	E(f, m, "%s", k);
	fputs(m->td_close, f);
	m->td_open(f, 1, json_is_number(v) ? "n" : NULL);
	if (json_is_number(v) && !strcmp(k, "cost") && json_number_value(v) == 0) {
		E(f, m, "%s", "no price (-w price_per_gpu_hour=USD)");
	} else if (json_is_number(v) && !strcmp(unit, "B")) {
		E(f, m, "%s", size_human(json_number_value(v), buf, sizeof(buf)));
	} else if (json_is_number(v)) {
		double x = json_number_value(v) * scale;
		json_t *xv = json_real(x);

		if (x == (double)(long long)x && x > -1e15 && x < 1e15)
			snprintf(buf, sizeof(buf), "%.0f", x);
		else
			fmt_value(buf, sizeof(buf), xv);
		json_decref(xv);
		/* the number is ccreport's own formatting; the unit is ours too */
		fprintf(f, "%s%s%s", buf, *unit && strcmp(unit, "%") ? " " : "", unit);
	} else {
		put_plain(f, m->esc, v);
	}
	fputs(m->td_close, f);
	fputs(m->tr_close, f);
}

/* the outputs, the headline first (days, GPU-hours, cost, communication share, step), with units */
static void outputs_table(FILE *f, const struct markup *m, const json_t *o)
{
	static const char *const heads[] = { "output", "value" };
	static const char *const first[] = { "days", "gpu_hours", "cost", "comm_fraction", "stall_fraction",
					      "step_s", NULL };
	const char *k;
	const json_t *v;

	m->table_open(f, heads, 2);
	for (const char *const *q = first; *q; q++)
		if (json_object_get(o, *q))
			output_row(f, m, *q, json_object_get(o, *q));
	json_object_foreach((json_t *)o, k, v) {
		int seen = 0;

		for (const char *const *q = first; *q; q++)
			seen |= !strcmp(k, *q);
		if (!seen)
			output_row(f, m, k, v);
	}
	fputs(m->table_close, f);
}

/* seconds, signed %, plain numbers: ccreport's figures with our units */
static void num_cell(FILE *f, const struct markup *m, const json_t *o, const char *key, const char *unit,
		     double scale, int sign)
{
	char buf[48];
	double x;

	m->td_open(f, 1, "n");
	if (j_num(o, key, &x)) {
		json_t *v = json_real(x * scale);

		fmt_value(buf, sizeof(buf), v);
		json_decref(v);
		fprintf(f, "%s%s%s%s", sign && x > 0 ? "+" : "", buf, *unit && strcmp(unit, "%") ? " " : "", unit);
	} else {
		fputs("n/a", f);
	}
	fputs(m->td_close, f);
}

/* "name value unit (source)" for one input of a measured step's estimate */
static void input_text(FILE *f, const struct markup *m, const char *name, const json_t *o, const char *key,
		       const char *unit, double scale, const char *src)
{
	char buf[48];
	double x;
	json_t *v;

	if (!j_num(o, key, &x))
		return;
	v = json_real(x * scale);
	fmt_value(buf, sizeof(buf), v);
	json_decref(v);
	E(f, m, "%s %s%s%s (%s); ", name, buf, *unit && strcmp(unit, "%") ? " " : "", unit, src);
}

/*
 * The estimate beside the steps that ran (report/model_step.c): for each, the
 * model on its shape, the measured step with its spread, the signed error and
 * every input, measured or assumed; then what the steps say of the cluster.
 */
static void measured_steps(FILE *f, const struct markup *m, const json_t *e)
{
	static const char *const heads[] = { "step", "estimated", "measured", "error", "spread (cv)", "inputs" };
	const json_t *ms = j_arr(e, "measured_steps"), *ent, *fm = json_object_get(e, "from_measured");
	size_t i;

	if (!json_array_size(ms))
		return;
	para(f, m, "The model against training steps that ran, each on the shape it ran (the model given "
	     "its measured compute and overlap; the sync as its source says):");
	m->table_open(f, heads, 6);
	if (json_is_object(json_object_get(e, "outputs"))) {
		fputs(m->tr_open, f);
		m->td_open(f, 0, NULL);
		E(f, m, "%s", "the workload (the model)");
		fputs(m->td_close, f);
		num_cell(f, m, json_object_get(e, "outputs"), "step_s", "s", 1, 0);
		m->td_open(f, 1, NULL);
		fputs(m->td_close, f);
		m->td_open(f, 1, NULL);
		fputs(m->td_close, f);
		m->td_open(f, 1, NULL);
		fputs(m->td_close, f);
		m->td_open(f, 2, NULL);
		E(f, m, "%s", "every input as listed below");
		fputs(m->td_close, f);
		fputs(m->tr_close, f);
	}
	json_array_foreach(ms, i, ent) {
		const json_t *me = json_object_get(ent, "measured"), *es = json_object_get(ent, "estimate"),
			     *sh = json_object_get(ent, "shape"), *src = json_object_get(ent, "sources");
		const char *name = j_str(ent, "source");
		int made = json_is_true(json_object_get(ent, "made"));
		double x;

		fputs(m->tr_open, f);
		m->td_open(f, 0, NULL);
		E(f, m, "%s (%s, %s", name, !strcmp(name, "torch_step") ? "framework" : "proxy", j_str(ent, "backend"));
		if (j_num(sh, "ranks", &x))
			E(f, m, ", %.0f ranks", x);
		if (j_num(sh, "params", &x))
			E(f, m, ", %.3g parameters", x);
		if (j_num(sh, "tokens_per_rank", &x))
			E(f, m, ", %.0f tokens a rank", x);
		if (*j_str(ent, "framework"))
			E(f, m, ", %s", j_str(ent, "framework"));
		E(f, m, "%s", ")");
		fputs(m->td_close, f);
		if (!made) {
			m->td_open(f, 1, NULL);
			fputs(m->td_close, f);
			num_cell(f, m, me, "step_s", "s", 1, 0);
			m->td_open(f, 1, NULL);
			fputs("n/a", f);
			fputs(m->td_close, f);
			num_cell(f, m, me, "step_cv", "%", 100, 0);
			m->td_open(f, 2, NULL);
			E(f, m, "not compared: %s", j_str(ent, "reason"));
			fputs(m->td_close, f);
			fputs(m->tr_close, f);
			continue;
		}
		num_cell(f, m, es, "step_s", "s", 1, 0);
		num_cell(f, m, me, "step_s", "s", 1, 0);
		num_cell(f, m, ent, "error_pct", "%", 1, 1);
		num_cell(f, m, me, "step_cv", "%", 100, 0);
		m->td_open(f, 2, NULL);
		input_text(f, m, "compute", me, "compute_s", "s", 1, "measured");
		input_text(f, m, "overlap", es, "overlap", "%", 100, "measured, share of compute");
		input_text(f, m, "sync", es, "sync_s", "s", 1, j_str(src, "sync"));
		input_text(f, m, "comm alone", me, "comm_alone_s", "s", 1, "measured");
		if (j_num(ent, "error_pct_overlap_assumed", &x))
			E(f, m, "with the assumed overlap (%s): %+.1f %%; ", j_str(src, "overlap_assumed"), x);
		if (j_num(ent, "error_pct_other_sweep", &x))
			E(f, m, "priced instead by the sweep of another collective (%s): %+.1f %%; ",
			  j_str(json_object_get(ent, "estimate_other_sweep"), "sync_source"), x);
		if (*j_str(ent, "note"))
			E(f, m, "%s", j_str(ent, "note"));
		else
			E(f, m, "%s", "steady");
		fputs(m->td_close, f);
		fputs(m->tr_close, f);
	}
	fputs(m->table_close, f);
	/* what the steps say: the rank waited for, stalls, goodput */
	m->list_open(f, NULL);
	json_array_foreach(ms, i, ent) {
		const json_t *w = json_object_get(ent, "waits_for"), *st;
		double x;
		size_t k;

		if (!json_is_object(json_object_get(ent, "measured")))
			continue;
		fputs(m->li_open, f);
		E(f, m, "%s: ", j_str(ent, "source"));
		if (json_is_object(w) && j_num(w, "rank", &x))
			E(f, m, "the step waits for rank %.0f on %s (its %s)", x, j_str(w, "host"),
			  !strcmp(j_str(w, "cause"), "network") ? "links" : j_str(w, "cause"));
		else
			E(f, m, "%s", "no rank the step waits for stands out");
		if (j_num(ent, "goodput", &x))
			E(f, m, "; goodput %.1f %%", 100 * x);
		json_array_foreach(j_arr(ent, "stalls"), k, st) {
			double t = 0, r = -1;

			j_num(st, "step_s", &t);
			j_num(st, "rank", &r);
			E(f, m, "%s step %.0f took %.3g s", k ? "," : "; stalls:", json_number_value(json_object_get(st,
				"step")), t);
			if (r >= 0)
				E(f, m, " (rank %.0f on %s last ready)", r, j_str(st, "host"));
		}
		if (*j_str(ent, "python"))
			E(f, m, "; interpreter %s", j_str(ent, "python"));
		fputs(m->li_close, f);
	}
	if (json_is_object(fm)) {
		double d = 0, md = 0;

		j_num(fm, "days", &d);
		j_num(fm, "model_days", &md);
		fputs(m->li_open, f);
		E(f, m, "Days quoted from the measured step (%s): %.3g days (the model alone: %.3g days); %s",
		  j_str(fm, "source"), d, md, j_str(fm, "basis"));
		fputs(m->li_close, f);
	}
	fputs(m->list_close, f);
}

/* a model's output is never mistaken for a measurement: outputs first, then every input */
static void estimate(FILE *f, const struct markup *m, const json_t *s)
{
	static const char *const in_heads[] = { "input", "value", "source" };
	const json_t *e = json_object_get(s, "estimate"), *n;
	size_t i;

	if (!json_is_object(e))
		return;
	model_open(f, m, e, "estimate", "Estimate (a model, not a measurement)");
	fputs(m->p_close, f);
	if (*j_str(e, "extrapolated")) {
		m->p_open(f, "warnbox");
		fputs(m->b_open, f);
		fputs("Extrapolated:", f);
		fputs(m->b_close, f);
		E(f, m, " %s", j_str(e, "extrapolated"));
		fputs(m->p_close, f);
	}
	measured_steps(f, m, e);
	if (json_is_object(json_object_get(e, "outputs"))) {
		para(f, m, "Outputs of the model:");
		outputs_table(f, m, json_object_get(e, "outputs"));
	}
	measured_steps(f, m, e);
	para(f, m, "Every input of the model, and where it came from:");
	kv_table(f, m, json_object_get(e, "inputs"), json_object_get(e, "sources"), in_heads, 3);
	if (json_array_size(j_arr(e, "notes")))
		m->list_open(f, NULL);
	json_array_foreach(j_arr(e, "notes"), i, n) {
		fputs(m->li_open, f);
		E(f, m, "%s", json_string_value(n) ?: "");
		fputs(m->li_close, f);
	}
	if (json_array_size(j_arr(e, "notes")))
		fputs(m->list_close, f);
	fputs(m->box_close, f);
}

/* the checkpoint model (report/model_ckpt.c), beside the estimate and as plainly a model */
static void checkpoint(FILE *f, const struct markup *m, const json_t *s)
{
	static const char *const in_heads[] = { "input", "value", "source" };
	const json_t *e = json_object_get(s, "checkpoint");

	if (!json_is_object(e))
		return;
	model_open(f, m, e, "checkpoint", "Checkpoints (a model, not a measurement)");
	fputs(m->p_close, f);
	if (json_is_object(json_object_get(e, "outputs"))) {
		para(f, m, "Outputs of the model:");
		outputs_table(f, m, json_object_get(e, "outputs"));
	}
	if (json_is_object(json_object_get(e, "inputs")))
		kv_table(f, m, json_object_get(e, "inputs"), json_object_get(e, "sources"), in_heads, 3);
	fputs(m->box_close, f);
}

static void inputs(FILE *f, const struct markup *m, const json_t *s)
{
	static const char *const keys[] = { "path", "run_id", "start_utc", "records", "end",
					     "hosts", "ranks", "features" };
	static const char *const heads[] = { "results file", "run id", "started (UTC)", "records",
					     "end", "hosts", "ranks", "features" };
	const json_t *in;
	size_t i, k;

	m->heading(f, 2, "inputs", "Inputs");
	m->table_open(f, heads, 8);
	json_array_foreach(j_arr(s, "inputs"), i, in) {
		fputs(m->tr_open, f);
		for (k = 0; k < 8; k++) {
			m->td_open(f, k, NULL);
			put_plain(f, m->esc, json_object_get(in, keys[k]));
			fputs(m->td_close, f);
		}
		fputs(m->tr_close, f);
	}
	fputs(m->table_close, f);
	/* the groups each run planned by, and its pair schedule (docs/netpair.md) */
	json_array_foreach(j_arr(s, "inputs"), i, in) {
		const json_t *t = json_object_get(in, "topology");
		const char *sched = json_string_value(json_object_get(t, "pair_schedule"));

		if (!t)
			continue;
		m->p_open(f, "note");
		if (*j_str(t, "error"))
			E(f, m, "Topology of %s: none, %s.", j_str(in, "path"), j_str(t, "error"));
		else
			E(f, m, "Topology of %s: %s, %lld group(s)%s%s%s%s.", j_str(in, "path"),
			  j_str(t, "source"), (long long)json_integer_value(json_object_get(t, "groups")),
			  sched ? "; node pairs: " : "", sched ?: "", sched ? " schedule, " : "",
			  sched ? j_str(t, "why") : "");
		if (sched && !strcmp(sched, "grouped"))
			E(f, m, " %lld round(s) inside groups (every pair), %lld across (sampled).",
			  (long long)json_integer_value(json_object_get(t, "rounds_inside")),
			  (long long)json_integer_value(json_object_get(t, "rounds_across")));
		fputs(m->p_close, f);
	}
	/* evidence another tool wrote, converted by ccreport (docs/import.md) */
	json_array_foreach(j_arr(s, "inputs"), i, in) {
		const json_t *imp = json_object_get(in, "imported");

		if (!imp)
			continue;
		m->p_open(f, "note");
		E(f, m, "Imported evidence: %s is the output of %s %s, converted by ccreport "
		  "(docs/import.md); what that tool does not print is not known.",
		  json_string_value(json_object_get(in, "path")) ?: "?",
		  json_string_value(json_object_get(imp, "tool")) ?: "?",
		  json_string_value(json_object_get(imp, "version")) ?: "unknown");
		fputs(m->p_close, f);
	}
}

static void profile_line(FILE *f, const struct markup *m, const char *name, const char *value)
{
	fputs(m->dt_open, f);
	fputs(name, f);
	fputs(m->dt_close, f);
	E(f, m, "%s", value);
	fputs(m->dd_close, f);
}

static void profile(FILE *f, const struct markup *m, const json_t *s)
{
	const json_t *p = json_object_get(s, "profile");
	const char *k;
	const json_t *v;

	m->heading(f, 2, "profile", "Profile");
	fputs(m->dl_open, f);
	profile_line(f, m, "name", j_str(p, "name"));
	profile_line(f, m, "file", j_str(p, "path"));
	profile_line(f, m, "description", j_str(p, "description"));
	json_object_foreach(json_object_get(p, "expected"), k, v) {
		fputs(m->dt_open, f);
		fputs("expected ", f);
		E(f, m, "%s", k);
		fputs(m->dt_close, f);
		put_plain(f, m->esc, v);
		fputs(m->dd_close, f);
	}
	fputs(m->dl_close, f);
}

void render_doc(FILE *f, const struct markup *m, const json_t *s, const struct charts *c)
{
	header(f, m, s);
	decision(f, m, s);
	criteria_table(f, m, s);
	criteria_details(f, m, s);
	problems(f, m, s);
	hardware(f, m, s);
	diagnoses(f, m, s);
	isolate_rounds(f, m, s);
	outliers(f, m, s);
	consistency(f, m, s);
	baseline(f, m, s);
	charts(f, m, c);
	estimate(f, m, s);
	checkpoint(f, m, s);
	inputs(f, m, s);
	profile(f, m, s);
}

void render_doc_charts(FILE *f, const struct markup *m, const struct charts *c)
{
	int i;

	m->heading(f, 2, "charts", "Charts");
	if (c->status) {
		m->p_open(f, "note");
		put_esc(f, m->esc, "%s", c->status);
		fputs(m->p_close, f);
	}
	for (i = 0; i < c->nerr; i++) {
		m->p_open(f, "note");
		put_esc(f, m->esc, "%s", c->errors[i]);
		fputs(m->p_close, f);
	}
	for (i = 0; i < c->n; i++)
		m->chart(f, &c->v[i]);
}
