/*
 * report/render_html.c: index.html, one self-contained page: inline CSS,
 * inline SVG charts, no script, no font, no external reference of any kind.
 * A Content-Security-Policy in the page forbids scripts and fetches as a
 * second line of defence; the first is that every string from the summary
 * goes through esc_html (put_esc, put_plain), and literal markup is written
 * with fputs only.
 */
#include "escape.h"
#include "render_priv.h"

#include <string.h>

/* failures listed under each criterion; summary.json lists them all */
#define HTML_MAX_FAILURES 1000
#define HTML_CELL_FAILURES 3

#define H(f, ...) put_esc(f, esc_html, __VA_ARGS__)

static const char css[] =
	"body{font-family:sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#222;"
	"background:#fff}\n"
	"h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}\n"
	".banner{padding:.8em 1.2em;border-radius:6px;color:#fff;font-size:1.3em;font-weight:bold}\n"
	".v-pass{background:#1e8449}.v-warn{background:#b9770e}.v-fail{background:#b03a2e}"
	".v-incomplete,.v-unknown{background:#5d6d7e}\n"
	"table{border-collapse:collapse;margin:.5em 0 1em}th,td{border:1px solid #ccc;"
	"padding:.3em .6em;text-align:left;vertical-align:top}th{background:#f2f3f4}\n"
	"td.n{text-align:right;white-space:nowrap}\n"
	".t-pass{color:#1e8449;font-weight:bold}.t-warn{color:#b9770e;font-weight:bold}"
	".t-fail{color:#b03a2e;font-weight:bold}.t-incomplete,.t-unknown{color:#5d6d7e;font-weight:bold}\n"
	"figure{margin:1em 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}\n"
	"figcaption{font-weight:bold;margin-bottom:.3em}.note{color:#555;font-style:italic}\n"
	".model{border:2px dashed #7d3c98;padding:.5em 1em;background:#f5eef8}\n"
	"ul.fail li{margin:.1em 0}\n";

/* "pass" -> "pass"; anything unknown -> "unknown": a CSS class, never a result string */
static const char *vclass(const char *v)
{
	static const char *const known[] = { "pass", "warn", "fail", "incomplete" };
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(v, known[i]))
			return known[i];
	return "unknown";
}

static void value_unit(FILE *f, const json_t *o, const char *key, const char *unit)
{
	char buf[128];

	fmt_value_unit(buf, sizeof(buf), o, key, unit);
	H(f, "%s", buf);
}

static void failure_text(FILE *f, const json_t *fl)
{
	char buf[1024];

	fmt_failure(buf, sizeof(buf), fl);
	H(f, "%s", buf);
}

static void head(FILE *f, const json_t *s)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>", f);
	H(f, "Cluster acceptance: %s (%s)", verdict_word(j_str(s, "verdict")),
	  j_str(json_object_get(s, "profile"), "name"));
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", css);
}

static void banner(FILE *f, const json_t *s)
{
	const char *v = j_str(s, "verdict");
	const json_t *crit;
	int count[4] = { 0 };
	char buf[64];
	size_t i;

	json_array_foreach(j_arr(s, "criteria"), i, crit) {
		const char *cv = j_str(crit, "verdict");

		count[!strcmp(cv, "fail") ? 0 : !strcmp(cv, "warn") ? 1 :
		      !strcmp(cv, "incomplete") ? 2 : 3]++;
	}
	fprintf(f, "<h1>Cluster acceptance report</h1>\n<div class=\"banner v-%s\">Verdict: %s "
		"(exit code ", vclass(v), verdict_word(v));
	H(f, "%s", j_text(json_object_get(s, "exit_code"), buf, sizeof(buf)));
	fprintf(f, ")</div>\n<p>%zu criteria: %d failed, %d warned, %d incomplete, %d passed. Profile <b>",
		json_array_size(j_arr(s, "criteria")), count[0], count[1], count[2], count[3]);
	H(f, "%s", j_str(json_object_get(s, "profile"), "name"));
	fputs("</b>; cluster of ", f);
	put_plain(f, esc_html, json_object_get(json_object_get(s, "cluster"), "nodes"));
	fputs(" nodes, ", f);
	put_plain(f, esc_html, json_object_get(json_object_get(s, "cluster"), "ranks"));
	fputs(" ranks. Generated ", f);
	H(f, "%s by %s %s", j_str(s, "generated_utc"), j_str(s, "tool"), j_str(s, "version"));
	fputs(".</p>\n", f);
}

static void criteria_table(FILE *f, const json_t *s)
{
	const json_t *crit, *fl;
	char buf[160];
	size_t i, j, nf;

	fputs("<h2 id=\"criteria\">Criteria</h2>\n", f);
	if (!json_array_size(j_arr(s, "criteria"))) {
		fputs("<p>No criteria were judged.</p>\n", f);
		return;
	}
	fputs("<table>\n<tr><th>criterion</th><th>verdict</th><th>measured worst</th><th>bound</th>"
	      "<th>elements</th><th>failures</th></tr>\n", f);
	json_array_foreach(j_arr(s, "criteria"), i, crit) {
		const json_t *worst = json_object_get(crit, "worst");
		const char *v = j_str(crit, "verdict");

		fputs("<tr><td><b>", f);
		H(f, "%s", j_str(crit, "id"));
		fputs("</b><br>", f);
		H(f, "%s", j_str(crit, "title"));
		fprintf(f, "</td><td class=\"t-%s\">%s</td><td class=\"n\">", vclass(v), verdict_word(v));
		value_unit(f, worst, "value", j_str(worst, "unit"));
		if (*j_text(json_object_get(worst, "element"), buf, sizeof(buf))) {
			fputs("<br>at ", f);
			H(f, "%s", j_text(json_object_get(worst, "element"), buf, sizeof(buf)));
		}
		fputs("</td><td>", f);
		fmt_bound(buf, sizeof(buf), crit);
		H(f, "%s", buf);
		fputs("</td><td class=\"n\">", f);
		put_plain(f, esc_html, json_object_get(crit, "elements"));
		fputs("</td><td>", f);
		nf = json_array_size(j_arr(crit, "failures"));
		json_array_foreach(j_arr(crit, "failures"), j, fl) {
			if (j == HTML_CELL_FAILURES) {
				fprintf(f, "<br>and %zu more", nf - j);
				break;
			}
			fputs(j ? "<br>" : "", f);
			failure_text(f, fl);
		}
		fputs(nf ? "</td></tr>\n" : "none</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void criteria_details(FILE *f, const json_t *s)
{
	const json_t *crit, *fl;
	size_t i, j, nf;
	int any = 0;

	json_array_foreach(j_arr(s, "criteria"), i, crit) {
		const char *v = j_str(crit, "verdict");

		if (!strcmp(v, "pass"))
			continue;
		if (!any++)
			fputs("<h3>Criteria that did not pass</h3>\n", f);
		fputs("<p><b>", f);
		H(f, "%s", j_str(crit, "id"));
		fprintf(f, "</b> <span class=\"t-%s\">%s</span>: ", vclass(v), verdict_word(v));
		H(f, "%s", j_str(crit, "reason"));
		fputs("</p>\n", f);
		nf = json_array_size(j_arr(crit, "failures"));
		if (!nf)
			continue;
		fprintf(f, "<details%s><summary>%zu failing element%s</summary>\n<ul class=\"fail\">\n",
			nf <= 20 ? " open" : "", nf, nf == 1 ? "" : "s");
		json_array_foreach(j_arr(crit, "failures"), j, fl) {
			if (j == HTML_MAX_FAILURES) {
				fprintf(f, "<li>and %zu more (summary.json lists every one)</li>\n", nf - j);
				break;
			}
			fputs("<li>", f);
			failure_text(f, fl);
			fputs("</li>\n", f);
		}
		fputs("</ul>\n</details>\n", f);
	}
}

static void problems(FILE *f, const json_t *s)
{
	const json_t *p;
	size_t i;

	fputs("<h2 id=\"problems\">Problems</h2>\n", f);
	if (!json_array_size(j_arr(s, "problems"))) {
		fputs("<p>None.</p>\n", f);
		return;
	}
	fputs("<ul>\n", f);
	json_array_foreach(j_arr(s, "problems"), i, p) {
		fputs("<li>", f);
		put_plain(f, esc_html, p);
		fputs("</li>\n", f);
	}
	fputs("</ul>\n", f);
}

/* a table of rows (objects), as in render_md.c's generic() */
static void generic(FILE *f, const char *id, const char *heading, const json_t *rows,
		    const char *const *keys, const char *const *heads, size_t n, const char *none)
{
	const json_t *r;
	size_t i, k;

	if (!rows)
		return;
	fprintf(f, "<h2 id=\"%s\">%s</h2>\n", id, heading);
	if (!json_array_size(rows)) {
		fprintf(f, "<p>%s</p>\n", none);
		return;
	}
	fputs("<table>\n<tr>", f);
	for (k = 0; k < n; k++)
		fprintf(f, "<th>%s</th>", heads[k]);
	fputs("</tr>\n", f);
	json_array_foreach(rows, i, r) {
		fputs("<tr>", f);
		for (k = 0; k < n; k++) {
			fputs("<td>", f);
			put_plain(f, esc_html, json_object_get(r, keys[k]));
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void hardware(FILE *f, const json_t *s)
{
	static const char *const keys[] = { "key", "found", "expected", "hosts" };
	static const char *const heads[] = { "what", "found", "the profile expects", "hosts" };

	generic(f, "hardware", "Hardware against the profile", j_arr(s, "hardware"), keys, heads, 4,
		"Every host has the hardware the profile expects.");
}

static void diagnoses(FILE *f, const json_t *s)
{
	static const char *const keys[] = { "probe", "subject", "element", "verdict", "evidence" };
	static const char *const heads[] = { "probe", "subject", "element", "diagnosis", "evidence" };

	generic(f, "diagnoses", "Diagnoses", j_arr(s, "diagnoses"), keys, heads, 5, "None.");
}

/* a <tr> of cells: for each key, a number with unit (unit_key/unit) or plain text */
static void row(FILE *f, const json_t *o, const char *const *keys, size_t n, const char *unit)
{
	char buf[64];
	size_t i;

	fputs("<tr>", f);
	for (i = 0; i < n; i++) {
		const json_t *v = json_object_get(o, keys[i]);
		const char *u = strstr(keys[i], "_pct") ? "%" : unit;

		if (json_is_number(v) && strcmp(keys[i], "element")) {
			fputs("<td class=\"n\">", f);
			value_unit(f, o, keys[i], u);
		} else {
			fputs("<td>", f);
			H(f, "%s", j_text(v, buf, sizeof(buf)));
		}
		fputs("</td>", f);
	}
	fputs("</tr>\n", f);
}

static void outliers(FILE *f, const json_t *s)
{
	static const char *const keys[] = { "criterion", "element", "host", "value",
					     "peer_median", "below_pct" };
	const json_t *o;
	size_t i;

	fputs("<h2 id=\"outliers\">Outliers</h2>\n", f);
	if (!json_array_size(j_arr(s, "outliers"))) {
		fputs("<p>None: no element stands out from its peers.</p>\n", f);
		return;
	}
	fputs("<table>\n<tr><th>criterion</th><th>element</th><th>host</th><th>value</th>"
	      "<th>peer median</th><th>below median</th></tr>\n", f);
	json_array_foreach(j_arr(s, "outliers"), i, o)
		row(f, o, keys, 6, j_str(o, "unit"));
	fputs("</table>\n", f);
}

static void consistency(FILE *f, const json_t *s)
{
	const json_t *c, *v;
	size_t i, j;

	fputs("<h2 id=\"consistency\">Consistency across hosts</h2>\n", f);
	if (!json_array_size(j_arr(s, "consistency"))) {
		fputs("<p>No differences between hosts.</p>\n", f);
		return;
	}
	fputs("<table>\n<tr><th>setting</th><th>value</th><th>hosts</th></tr>\n", f);
	json_array_foreach(j_arr(s, "consistency"), i, c)
		json_array_foreach(j_arr(c, "values"), j, v) {
			fputs("<tr><td>", f);
			H(f, "%s", j_str(c, "key"));
			fputs("</td><td>", f);
			put_plain(f, esc_html, json_object_get(v, "value"));
			fputs("</td><td>", f);
			put_plain(f, esc_html, json_object_get(v, "hosts"));
			fputs("</td></tr>\n", f);
		}
	fputs("</table>\n", f);
}

static void change_table(FILE *f, const char *what, const json_t *rows)
{
	static const char *const keys[] = { "metric", "element", "old", "new",
					     "change_pct", "spread_pct" };
	const json_t *r;
	size_t i;

	fprintf(f, "<h3>%s</h3>\n", what);
	if (!json_array_size(rows)) {
		fputs("<p>None.</p>\n", f);
		return;
	}
	fputs("<table>\n<tr><th>metric</th><th>element</th><th>baseline</th><th>now</th>"
	      "<th>change</th><th>run-to-run spread</th></tr>\n", f);
	json_array_foreach(rows, i, r)
		row(f, r, keys, 6, j_str(r, "unit"));
	fputs("</table>\n", f);
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

	fputs("<h2 id=\"baseline\">Baseline</h2>\n", f);
	if (!json_is_object(b)) {
		fputs("<p>No baseline was given.</p>\n", f);
		return;
	}
	fputs("<p>Compared with ", f);
	H(f, "%s", j_str(b, "path"));
	fputs(": ", f);
	put_plain(f, esc_html, json_object_get(b, "compared"));
	fputs(" values compared, tolerance ", f);
	tolerance(f, b);
	fputs(".</p>\n", f);
	change_table(f, "Regressions", j_arr(b, "regressions"));
	change_table(f, "Improvements", j_arr(b, "improvements"));
}

static void charts(FILE *f, const struct charts *c)
{
	int i;

	fputs("<h2 id=\"charts\">Charts</h2>\n", f);
	if (c->status) {
		fputs("<p class=\"note\">", f);
		H(f, "%s", c->status);
		fputs(".</p>\n", f);
	}
	for (i = 0; i < c->n; i++) {
		fputs("<figure>\n<figcaption>", f);
		H(f, "%s", c->v[i].title);
		fputs("</figcaption>\n", f);
		if (c->v[i].note) {
			fputs("<p class=\"note\">", f);
			H(f, "%s", c->v[i].note);
			fputs("</p>\n", f);
		}
		/* gnuplot's own output: it escapes the text it draws (chart.c checks the rest) */
		fputs(c->v[i].inline_svg, f);
		fputs("\n</figure>\n", f);
	}
	if (c->nerr) {
		fputs("<ul>\n", f);
		for (i = 0; i < c->nerr; i++) {
			fputs("<li>", f);
			H(f, "%s", c->errors[i]);
			fputs("</li>\n", f);
		}
		fputs("</ul>\n", f);
	}
	if (!c->status && !c->n && !c->nerr)
		fputs("<p>No chart data in the summary.</p>\n", f);
}

static void kv_table(FILE *f, const json_t *o)
{
	const char *k;
	const json_t *v;

	fputs("<table>\n<tr><th>name</th><th>value</th></tr>\n", f);
	json_object_foreach((json_t *)o, k, v) {
		fputs("<tr><td>", f);
		H(f, "%s", k);
		fputs("</td><td>", f);
		put_plain(f, esc_html, v);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void inputs_table(FILE *f, const json_t *in, const json_t *src)
{
	const char *k;
	const json_t *v;

	fputs("<table>\n<tr><th>input</th><th>value</th><th>source</th></tr>\n", f);
	json_object_foreach((json_t *)in, k, v) {
		fputs("<tr><td>", f);
		H(f, "%s", k);
		fputs("</td><td>", f);
		put_plain(f, esc_html, v);
		fputs("</td><td>", f);
		H(f, "%s", json_string_value(json_object_get(src, k)) ?: "");
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void estimate(FILE *f, const json_t *s)
{
	const json_t *e = json_object_get(s, "estimate"), *n;
	size_t i;

	if (!json_is_object(e))
		return;
	fputs("<h2 id=\"estimate\">Estimate (a model, not a measurement)</h2>\n<div class=\"model\">\n<p><b>", f);
	H(f, "%s", *j_str(e, "label") ? j_str(e, "label") : "model, not a measurement");
	fputs("</b>.", f);
	if (json_is_false(json_object_get(e, "made"))) {
		fputs(" Not made: ", f);
		H(f, "%s", j_str(e, "reason"));
		fputs(".", f);
	}
	fputs(" Every input of the model, and where it came from:</p>\n", f);
	inputs_table(f, json_object_get(e, "inputs"), json_object_get(e, "sources"));
	if (json_is_object(json_object_get(e, "outputs"))) {
		fputs("<p>Outputs of the model:</p>\n", f);
		kv_table(f, json_object_get(e, "outputs"));
	}
	if (json_array_size(j_arr(e, "notes")))
		fputs("<ul>\n", f);
	json_array_foreach(j_arr(e, "notes"), i, n) {
		fputs("<li>", f);
		H(f, "%s", json_string_value(n) ?: "");
		fputs("</li>\n", f);
	}
	if (json_array_size(j_arr(e, "notes")))
		fputs("</ul>\n", f);
	fputs("</div>\n", f);
}

static void inputs(FILE *f, const json_t *s)
{
	static const char *const keys[] = { "path", "run_id", "start_utc", "records", "end",
					     "hosts", "ranks", "features" };
	const json_t *in;
	size_t i, k;

	fputs("<h2 id=\"inputs\">Inputs</h2>\n<table>\n<tr><th>results file</th><th>run id</th>"
	      "<th>started (UTC)</th><th>records</th><th>end</th><th>hosts</th><th>ranks</th>"
	      "<th>features</th></tr>\n", f);
	json_array_foreach(j_arr(s, "inputs"), i, in) {
		fputs("<tr>", f);
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			fputs("<td>", f);
			put_plain(f, esc_html, json_object_get(in, keys[k]));
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void profile(FILE *f, const json_t *s)
{
	const json_t *p = json_object_get(s, "profile");
	const char *k;
	const json_t *v;

	fputs("<h2 id=\"profile\">Profile</h2>\n<table>\n<tr><th>name</th><td>", f);
	H(f, "%s", j_str(p, "name"));
	fputs("</td></tr>\n<tr><th>file</th><td>", f);
	H(f, "%s", j_str(p, "path"));
	fputs("</td></tr>\n<tr><th>description</th><td>", f);
	H(f, "%s", j_str(p, "description"));
	fputs("</td></tr>\n", f);
	json_object_foreach(json_object_get(p, "expected"), k, v) {
		fputs("<tr><th>expected ", f);
		H(f, "%s", k);
		fputs("</th><td>", f);
		put_plain(f, esc_html, v);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

int render_html(FILE *f, const json_t *s, const struct charts *c)
{
	head(f, s);
	banner(f, s);
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
	fputs("</body>\n</html>\n", f);
	return ferror(f) ? -1 : 0;
}
