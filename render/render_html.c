/*
 * render/render_html.c: index.html, one self-contained page: inline CSS,
 * inline SVG charts, no script, no font, no external reference of any kind;
 * its sections are render_doc.c's, written with the markup below.
 * A Content-Security-Policy in the page forbids scripts and fetches as a
 * second line of defence; the first is that every string from the summary
 * goes through esc_html (put_esc, put_plain), and literal markup is written
 * with fputs only.
 */
#include "render_html.h"
#include "escape.h"
#include "render.h"
#include "render_doc.h"
#include "../fmt/fmt.h"

#include <string.h>

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
	"ul.fail li{margin:.1em 0}\n"
	"p.decision{font-size:1.2em;font-weight:bold;margin:.6em 0}ul.decision{font-size:1.05em}"
	"ul.decision li{margin:.25em 0}\n.warnbox{border:2px solid #b9770e;padding:.4em .8em;background:#fef5e7}\n";

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

void html_page_open(FILE *f, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>", f);
	H(f, "%s", title);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", css);
}

static void head(FILE *f, const json_t *s)
{
	char title[600];

	snprintf(title, sizeof(title), "Cluster acceptance: %s (%s)", verdict_word(j_str(s, "verdict")),
		 j_str(json_object_get(s, "profile"), "name"));
	html_page_open(f, title);
}

static void html_header(FILE *f, const json_t *s, size_t n, const int count[5])
{
	const char *v = j_str(s, "verdict");
	char buf[64];

	fprintf(f, "<h1>Cluster acceptance report</h1>\n<div class=\"banner v-%s\">Verdict: %s "
		"(exit code ", vclass(v), verdict_word(v));
	H(f, "%s", j_text(json_object_get(s, "exit_code"), buf, sizeof(buf)));
	fprintf(f, ")</div>\n<p>%zu criteria: %d failed, %d warned, %d incomplete", n, count[0], count[1], count[2]);
	if (count[4])
		fprintf(f, " (%d of them optional)", count[4]);
	fprintf(f, ", %d passed. Profile <b>", count[3]);
	H(f, "%s", j_str(json_object_get(s, "profile"), "name"));
	fputs("</b>", f);
}

/* id and text are ours, never a result string */
static void html_heading(FILE *f, int level, const char *id, const char *text)
{
	if (id)
		fprintf(f, "<h%d id=\"%s\">%s</h%d>\n", level, id, text, level);
	else
		fprintf(f, "<h%d>%s</h%d>\n", level, text, level);
}

static void html_p_open(FILE *f, const char *cls)
{
	if (cls)
		fprintf(f, "<p class=\"%s\">", cls);
	else
		fputs("<p>", f);
}

static void html_list_open(FILE *f, const char *cls)
{
	if (cls)
		fprintf(f, "<ul class=\"%s\">\n", cls);
	else
		fputs("<ul>\n", f);
}

static void html_table_open(FILE *f, const char *const *heads, size_t n)
{
	size_t k;

	fputs("<table>\n<tr>", f);
	for (k = 0; k < n; k++)
		fprintf(f, "<th>%s</th>", heads[k]);
	fputs("</tr>\n", f);
}

static void html_td_open(FILE *f, size_t k, const char *cls)
{
	(void)k;
	if (cls)
		fprintf(f, "<td class=\"%s\">", cls);
	else
		fputs("<td>", f);
}

static void html_crit_name(FILE *f, const json_t *crit)
{
	fputs("<b>", f);
	H(f, "%s", j_str(crit, "id"));
	fputs("</b><br>", f);
	H(f, "%s", j_str(crit, "title"));
}

static void html_verdict_cell(FILE *f, size_t k, const char *v)
{
	(void)k;
	fprintf(f, "<td class=\"t-%s\">%s", vclass(v), verdict_word(v));
}

static void html_verdict_inline(FILE *f, const char *v)
{
	fprintf(f, " <span class=\"t-%s\">%s</span>", vclass(v), verdict_word(v));
}

/* a long list starts folded */
static void html_failures_open(FILE *f, size_t n)
{
	fprintf(f, "<details%s><summary>%zu failing element%s</summary>\n",
		n <= 20 ? " open" : "", n, n == 1 ? "" : "s");
}

static void html_chart(FILE *f, const struct chart *c)
{
	fputs("<figure>\n<figcaption>", f);
	H(f, "%s", c->title);
	fputs("</figcaption>\n", f);
	if (c->note) {
		fputs("<p class=\"note\">", f);
		H(f, "%s", c->note);
		fputs("</p>\n", f);
	}
	/* gnuplot's own output: it escapes the text it draws (chart.c checks the rest) */
	fputs(c->inline_svg, f);
	fputs("\n</figure>\n", f);
}

static const struct markup html = {
	.esc = esc_html,
	.max_failures = 1000,
	.header = html_header,
	.heading = html_heading,
	.p_open = html_p_open, .p_close = "</p>\n",
	.b_open = "<b>", .b_close = "</b>",
	.list_open = html_list_open, .list_close = "</ul>\n", .li_open = "<li>", .li_close = "</li>\n",
	.table_open = html_table_open, .tr_open = "<tr>", .tr_close = "</tr>\n",
	.table_close = "</table>\n",
	.td_open = html_td_open, .td_close = "</td>",
	.cell_br = "<br>", .fail_sep = "<br>",
	.crit_name = html_crit_name,
	.verdict_cell = html_verdict_cell,
	.verdict_inline = html_verdict_inline,
	.failures_open = html_failures_open, .failures_close = "</details>\n",
	.box_open = "<div class=\"model\">\n", .box_close = "</div>\n",
	.dl_open = "<table>\n", .dt_open = "<tr><th>", .dt_close = "</th><td>",
	.dd_close = "</td></tr>\n", .dl_close = "</table>\n",
	.chart = html_chart,
};

const struct markup *markup_html(void)
{
	return &html;
}

int render_html(FILE *f, const json_t *s, const struct charts *c)
{
	head(f, s);
	render_doc(f, &html, s, c);
	fputs("</body>\n</html>\n", f);
	return ferror(f) ? -1 : 0;
}
