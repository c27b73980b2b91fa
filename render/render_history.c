/*
 * render/render_history.c: history.md, history.html (the report's markup,
 * render_doc.h), one chart per criterion of its worst and median value per
 * run (chart.c), and the terminal text of ccreport history. Reads only the
 * history document; every string of it goes through the markup's esc.
 */
#include "render_history.h"
#include "chart.h"
#include "escape.h"
#include "render.h"
#include "render_doc.h"
#include "render_html.h"
#include "render_md.h"
#include "../fmt/fmt.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define HISTORY_MAX_CHARTS 64

static void chart_history(struct chart_ctx *ctx, const json_t *doc)
{
	const json_t *cl, *cr, *p;
	size_t i, j, q;
	int k = 0;

	json_array_foreach(j_arr(doc, "clusters"), i, cl)
		json_array_foreach(j_arr(cl, "criteria"), j, cr) {
			char file[40], dat[40], title[400];
			FILE *d, *f;

			if (json_array_size(j_arr(cr, "points")) < 2 || k == HISTORY_MAX_CHARTS)
				continue;
			k++;
			snprintf(file, sizeof(file), "chart-history-%d.svg", k);
			snprintf(dat, sizeof(dat), "chart-history-%d.dat", k);
			d = chart_data(ctx, dat);
			if (!d)
				return;
			json_array_foreach(j_arr(cr, "points"), q, p) {
				double w = NAN, m = NAN;

				j_num(p, "worst", &w);
				j_num(p, "median", &m);
				fprintf(d, "%zu %.17g %.17g\n", q + 1, w, m);
			}
			fclose(d);
			snprintf(title, sizeof(title), "%s: %s over time (%s)", j_str(cl, "name"), j_str(cr, "id"),
				 j_str(cr, "unit"));
			f = chart_begin(ctx, file, 860, 360);
			if (!f)
				return;
			fputs("set title ", f);
			gp_quote(f, title);
			fputs("\nset grid\nset key outside right top\nset xlabel 'run (oldest first)'\nset ylabel ", f);
			gp_quote(f, j_str(cr, "unit"));
			fprintf(f, "\nset datafile missing 'nan'\nplot '%s' using 1:2 with linespoints lw 2 "
				"title 'worst', '%s' using 1:3 with linespoints lw 2 dt 2 title 'median'\n", dat, dat);
			chart_finish(ctx, f, file, title, NULL, -1);
		}
}

static void fmt_num(char *buf, size_t len, const json_t *o, const char *key)
{
	fmt_value(buf, len, json_object_get(o, key));
}

static void cell(FILE *f, const struct markup *m, size_t k, const char *s)
{
	m->td_open(f, k, NULL);
	put_esc(f, m->esc, "%s", s);
	fputs(m->td_close, f);
}

static void history_doc(FILE *f, const struct markup *m, const json_t *doc, const struct charts *c)
{
	static const char *const dheads[] = { "criterion", "run time", "element", "value", "rolling median",
		"worse by", "spread" };
	static const char *const pheads[] = { "run time", "verdict", "worst", "worst element", "median" };
	const json_t *cl, *x;
	size_t i, j, q;
	char b1[64], b2[64];
	double tol;

	m->heading(f, 1, NULL, "Cluster history");
	m->p_open(f, NULL);
	snprintf(b1, sizeof(b1), "%lld", (long long)json_integer_value(json_object_get(doc, "k")));
	/* the tolerance in the unit -t takes (%), as summary's fraction x 100 */
	if (j_num(doc, "tolerance", &tol))
		snprintf(b2, sizeof(b2), "%g %%", 100 * tol);
	else
		snprintf(b2, sizeof(b2), "n/a");
	put_esc(f, m->esc, "Database %s. Drift: a value worse than the rolling median of the last %s runs "
		"by more than the tolerance (%s) and more than its spread, naming the element that moved.",
		j_str(doc, "database"), b1, b2);
	fputs(m->p_close, f);
	json_array_foreach(j_arr(doc, "clusters"), i, cl) {
		m->heading(f, 2, NULL, "Cluster");
		m->p_open(f, NULL);
		fputs(m->b_open, f);
		put_esc(f, m->esc, "%s", j_str(cl, "name"));
		fputs(m->b_close, f);
		put_esc(f, m->esc, ": %zu runs.", json_array_size(j_arr(cl, "runs")));
		fputs(m->p_close, f);
		m->heading(f, 3, NULL, "Drift");
		if (!json_array_size(j_arr(cl, "drift"))) {
			m->p_open(f, NULL);
			fputs("None flagged.", f);
			fputs(m->p_close, f);
		} else {
			m->table_open(f, dheads, 7);
			json_array_foreach(j_arr(cl, "drift"), j, x) {
				fputs(m->tr_open, f);
				cell(f, m, 0, j_str(x, "criterion"));
				cell(f, m, 1, j_str(x, "time_utc"));
				m->td_open(f, 2, NULL);
				put_esc(f, m->esc, "%s (host %s)", j_str(x, "element"), j_str(x, "host"));
				fputs(m->td_close, f);
				fmt_num(b1, sizeof(b1), x, "value");
				m->td_open(f, 3, "n");
				put_esc(f, m->esc, "%s %s", b1, j_str(x, "unit"));
				fputs(m->td_close, f);
				fmt_num(b1, sizeof(b1), x, "rolling_median");
				cell(f, m, 4, b1);
				fmt_num(b1, sizeof(b1), x, "worse_pct");
				m->td_open(f, 5, "n");
				put_esc(f, m->esc, "%s%%", b1);
				fputs(m->td_close, f);
				fmt_num(b1, sizeof(b1), x, "spread_pct");
				m->td_open(f, 6, "n");
				put_esc(f, m->esc, "%s%%", b1);
				fputs(m->td_close, f);
				fputs(m->tr_close, f);
			}
			fputs(m->table_close, f);
		}
		json_array_foreach(j_arr(cl, "criteria"), j, x) {
			const json_t *p;

			m->heading(f, 3, NULL, "Criterion");
			m->p_open(f, NULL);
			put_esc(f, m->esc, "%s (%s)", j_str(x, "id"), j_str(x, "unit"));
			fputs(m->p_close, f);
			m->table_open(f, pheads, 5);
			json_array_foreach(j_arr(x, "points"), q, p) {
				fputs(m->tr_open, f);
				cell(f, m, 0, j_str(p, "time_utc"));
				m->verdict_cell(f, 1, j_str(p, "verdict"));
				fputs(m->td_close, f);
				fmt_num(b1, sizeof(b1), p, "worst");
				cell(f, m, 2, b1);
				cell(f, m, 3, j_str(p, "worst_element"));
				fmt_num(b1, sizeof(b1), p, "median");
				cell(f, m, 4, b1);
				fputs(m->tr_close, f);
			}
			fputs(m->table_close, f);
		}
	}
	render_doc_charts(f, m, c);
}

static int md_fn(FILE *f, const json_t *doc, const struct charts *c)
{
	history_doc(f, markup_md(), doc, c);
	return ferror(f) ? -1 : 0;
}

static int html_fn(FILE *f, const json_t *doc, const struct charts *c)
{
	html_page_open(f, "Cluster history");
	history_doc(f, markup_html(), doc, c);
	fputs("</body>\n</html>\n", f);
	return ferror(f) ? -1 : 0;
}

int render_history(const json_t *doc, const struct render_opts *ro, char *err, size_t len)
{
	struct charts c;
	int rc;

	rc = charts_write(doc, ro, &c, chart_history, err, len) ||
	     render_write_file(ro->outdir, "history.md", NULL, md_fn, doc, &c, err, len) ||
	     render_write_file(ro->outdir, "history.html", NULL, html_fn, doc, &c, err, len) ? -1 : 0;
	charts_free(&c);
	return rc;
}

/* terminal: control characters as '?' */
static void tputs_safe(FILE *f, const char *s)
{
	for (; s && *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

void history_print(const json_t *doc, FILE *f)
{
	const json_t *cl, *x, *last;
	size_t i, j;
	char b1[64], b2[64], b3[64];

	json_array_foreach(j_arr(doc, "clusters"), i, cl) {
		fputs("ccreport history: cluster ", f);
		tputs_safe(f, j_str(cl, "name"));
		fprintf(f, ": %zu runs, %zu drift(s)\n", json_array_size(j_arr(cl, "runs")),
			json_array_size(j_arr(cl, "drift")));
		json_array_foreach(j_arr(cl, "criteria"), j, x) {
			last = json_array_get(j_arr(x, "points"), json_array_size(j_arr(x, "points")) - 1);
			fmt_num(b1, sizeof(b1), last, "worst");
			fmt_num(b2, sizeof(b2), last, "median");
			fputs("  ", f);
			tputs_safe(f, j_str(x, "id"));
			fprintf(f, ": %zu runs, last %s worst %s, median %s ", json_array_size(j_arr(x, "points")),
				verdict_word(j_str(last, "verdict")), b1, b2);
			tputs_safe(f, j_str(x, "unit"));
			fputc('\n', f);
		}
		json_array_foreach(j_arr(cl, "drift"), j, x) {
			fmt_num(b1, sizeof(b1), x, "value");
			fmt_num(b2, sizeof(b2), x, "rolling_median");
			fmt_num(b3, sizeof(b3), x, "worse_pct");
			fputs("  DRIFT ", f);
			tputs_safe(f, j_str(x, "criterion"));
			fputc(' ', f);
			tputs_safe(f, j_str(x, "element"));
			fputs(" (host ", f);
			tputs_safe(f, j_str(x, "host"));
			fputs(") at ", f);
			tputs_safe(f, j_str(x, "time_utc"));
			fprintf(f, ": %s vs rolling median %s ", b1, b2);
			tputs_safe(f, j_str(x, "unit"));
			fprintf(f, " (worse by %s%%)\n", b3);
		}
	}
}
