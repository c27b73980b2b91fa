/*
 * render/render_compare.c: compare.md and compare.html, the comparison
 * document written with the report's own markup (render_md.c,
 * render_html.c: struct markup) and charts (chart.c), and the terminal
 * text. Like the report's renderers they read only the document; every
 * string of it goes through the markup's esc (put_esc, put_plain), and the
 * terminal prints control characters as '?'.
 */
#include "render_compare.h"
#include "chart.h"
#include "chart_compare.h"
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

#define MAXC 64   /* clusters in one table */

static void num_cell(FILE *f, const struct markup *m, size_t k, const json_t *o, const char *key,
		     const char *none)
{
	char buf[64];

	m->td_open(f, k, "n");
	if (json_is_number(json_object_get(o, key))) {
		fmt_value(buf, sizeof(buf), json_object_get(o, key));
		fputs(buf, f);
	} else {
		put_esc(f, m->esc, "%s", none);
	}
	fputs(m->td_close, f);
}

/* a fraction of summary.json (comm_fraction) as people read it: "49.9" under a "(%)" head */
static void pct_cell(FILE *f, const struct markup *m, size_t k, const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	m->td_open(f, k, "n");
	if (json_is_number(v))
		fprintf(f, "%.1f", 100 * json_number_value(v));
	else
		put_esc(f, m->esc, "%s", "n/a");
	fputs(m->td_close, f);
}

static void text_cell(FILE *f, const struct markup *m, size_t k, const char *s)
{
	m->td_open(f, k, NULL);
	put_esc(f, m->esc, "%s", s);
	fputs(m->td_close, f);
}

/* table heads are literal markup: the cluster names in them are escaped first */
static void table_with_names(FILE *f, const struct markup *m, const char *const *fixed, size_t nf,
			     const json_t *clusters, const char *const *tail, size_t nt)
{
	const char *heads[MAXC + 16];
	char *own[MAXC];
	size_t n = 0, nc = 0, i;
	const json_t *c;

	for (i = 0; i < nf; i++)
		heads[n++] = fixed[i];
	json_array_foreach(clusters, i, c) {
		if (nc == MAXC)
			break;
		own[nc] = esc_str(m->esc, j_str(c, "name"));
		heads[n++] = own[nc] ? own[nc] : "?";
		nc++;
	}
	for (i = 0; i < nt; i++)
		heads[n++] = tail[i];
	m->table_open(f, heads, n);
	for (i = 0; i < nc; i++)
		free(own[i]);
}

static void clusters_section(FILE *f, const struct markup *m, const json_t *doc)
{
	static const char *const heads[] = { "cluster", "profile", "verdict", "nodes", "ranks (largest launch)",
					     "summary" };
	const json_t *c;
	size_t i;

	m->heading(f, 2, "clusters", "Clusters");
	m->table_open(f, heads, 6);
	json_array_foreach(j_arr(doc, "clusters"), i, c) {
		fputs(m->tr_open, f);
		text_cell(f, m, 0, j_str(c, "name"));
		text_cell(f, m, 1, j_str(c, "profile"));
		m->verdict_cell(f, 2, j_str(c, "verdict"));
		fputs(m->td_close, f);
		num_cell(f, m, 3, c, "nodes", "?");
		num_cell(f, m, 4, c, "ranks", "?");
		text_cell(f, m, 5, j_str(c, "path"));
		fputs(m->tr_close, f);
	}
	fputs(m->table_close, f);
}

static void criteria_section(FILE *f, const struct markup *m, const json_t *doc)
{
	static const char *const fixed[] = { "criterion", "bound" };
	static const char *const tail[] = { "compared" };
	const json_t *row, *cell;
	size_t i, k;
	char buf[64];

	m->heading(f, 2, "criteria", "Criteria side by side");
	m->p_open(f, "note");
	fputs("Each cell: the verdict, the worst value as a multiple of its own bound (above 1 is "
	      "inside the bound; for upper bounds, bound / value), the value and its element.", f);
	fputs(m->p_close, f);
	if (json_array_size(j_arr(doc, "clusters")) > MAXC) {
		m->p_open(f, "note");
		fprintf(f, "The table shows the first %d clusters; compare.json holds them all.", MAXC);
		fputs(m->p_close, f);
	}
	table_with_names(f, m, fixed, 2, j_arr(doc, "clusters"), tail, 1);
	json_array_foreach(j_arr(doc, "criteria"), i, row) {
		const json_t *bounds = j_arr(row, "bounds");

		fputs(m->tr_open, f);
		m->td_open(f, 0, NULL);
		put_esc(f, m->esc, "%s%s", j_str(row, "id"), json_is_true(json_object_get(row, "required")) ?
			"" : " (optional)");
		fputs(m->cell_br, f);
		put_esc(f, m->esc, "%s", j_str(row, "title"));
		fputs(m->td_close, f);
		text_cell(f, m, 1, json_string_value(json_array_get(bounds, 0)) ?
			  json_string_value(json_array_get(bounds, 0)) : "");
		json_array_foreach(j_arr(row, "clusters"), k, cell) {
			const char *v = j_str(cell, "verdict");

			if (k >= MAXC)
				break;
			if (!strcmp(v, "missing")) {
				text_cell(f, m, 2 + k, "not in its profile");
				continue;
			}
			m->verdict_cell(f, 2 + k, v);
			if (json_is_number(json_object_get(cell, "normalized"))) {
				fmt_value(buf, sizeof(buf), json_object_get(cell, "normalized"));
				fprintf(f, " %s×", buf);
			}
			fputs(m->cell_br, f);
			if (json_is_number(json_object_get(cell, "value"))) {
				fmt_value(buf, sizeof(buf), json_object_get(cell, "value"));
				put_esc(f, m->esc, "%s %s (%s)", buf, j_str(row, "unit"), j_str(cell, "element"));
			} else {
				put_esc(f, m->esc, "%s", j_str(cell, "reason"));
			}
			fputs(m->td_close, f);
		}
		text_cell(f, m, 2 + k, json_is_true(json_object_get(row, "comparable")) ? "yes" :
			  j_str(row, "why"));
		fputs(m->tr_close, f);
	}
	fputs(m->table_close, f);
}

static void workload_section(FILE *f, const struct markup *m, const json_t *doc)
{
	static const char *const heads[] = { "cluster", "busbw at the bucket (GB/s)", "sync (s)",
		"compute (s)", "step (s)", "days", "GPU-hours", "USD per GPU-hour", "cost (USD)",
		"exposed comm (% of the step)", "also from the run" };
	const json_t *wl = json_object_get(doc, "workload"), *w, *d;
	size_t i;

	m->heading(f, 2, "workload", "The workload on each cluster");
	fputs(m->box_open, f);
	m->p_open(f, "note");
	fputs("A model, not a measurement: the same model (docs/estimate.md) and inputs on every "
	      "cluster, each with its own measured all_reduce busbw.", f);
	fputs(m->p_close, f);
	m->table_open(f, heads, 11);
	json_array_foreach(j_arr(wl, "clusters"), i, w) {
		const json_t *in = json_object_get(w, "inputs"), *out = json_object_get(w, "outputs");
		char *also;

		fputs(m->tr_open, f);
		text_cell(f, m, 0, j_str(w, "name"));
		if (!json_is_true(json_object_get(w, "made"))) {
			m->td_open(f, 1, NULL);
			put_esc(f, m->esc, "not estimated: %s", j_str(w, "reason"));
			fputs(m->td_close, f);
			for (size_t k = 2; k < 11; k++)
				text_cell(f, m, k, "");
			fputs(m->tr_close, f);
			continue;
		}
		num_cell(f, m, 1, in, "busbw_GBps", "n/a");
		num_cell(f, m, 2, out, "sync_s", "n/a");
		num_cell(f, m, 3, out, "compute_s", "n/a");
		num_cell(f, m, 4, out, "step_s", "n/a");
		num_cell(f, m, 5, out, "days", "n/a");
		num_cell(f, m, 6, out, "gpu_hours", "n/a");
		if (json_is_number(json_object_get(out, "cost")))
			num_cell(f, m, 7, in, "price_per_gpu_hour", "n/a");
		else
			text_cell(f, m, 7, "no price");
		num_cell(f, m, 8, out, "cost", "no price");
		pct_cell(f, m, 9, out, "comm_fraction");
		also = json_object_size(json_object_get(w, "also")) ? j_plain(json_object_get(w, "also")) : NULL;
		text_cell(f, m, 10, also ? also : "none (no checkpoint or memory estimate in the run)");
		free(also);
		fputs(m->tr_close, f);
	}
	fputs(m->table_close, f);
	if (json_array_size(j_arr(wl, "inputs_differ"))) {
		m->p_open(f, NULL);
		fputs("Inputs that differ between the clusters:", f);
		fputs(m->p_close, f);
		m->list_open(f, NULL);
		json_array_foreach(j_arr(wl, "inputs_differ"), i, d) {
			fputs(m->li_open, f);
			put_esc(f, m->esc, "%s: ", j_str(d, "input"));
			put_plain(f, m->esc, json_object_get(d, "values"));
			fputs(m->li_close, f);
		}
		fputs(m->list_close, f);
	}
	fputs(m->box_close, f);
}

static void rank_list(FILE *f, const struct markup *m, const json_t *a, const char *what, const char *key)
{
	const json_t *e;
	size_t i;
	char buf[64];

	m->p_open(f, NULL);
	fputs(m->b_open, f);
	fputs(what, f);
	fputs(m->b_close, f);
	if (!json_array_size(a))
		fputs(": none", f);
	fputs(m->p_close, f);
	if (!json_array_size(a))
		return;
	m->list_open(f, NULL);
	json_array_foreach(a, i, e) {
		fputs(m->li_open, f);
		if (key) {
			fmt_value(buf, sizeof(buf), json_object_get(e, key));
			put_esc(f, m->esc, "%zu. %s: %s %s", i + 1, j_str(e, "name"), buf,
				!strcmp(key, "cost") ? "USD" : "days");
		} else {
			put_esc(f, m->esc, "%s%s%s", j_str(e, "name"), *j_str(e, "reason") ? ": " : "",
				j_str(e, "reason"));
		}
		fputs(m->li_close, f);
	}
	fputs(m->list_close, f);
}

static void ranking_section(FILE *f, const struct markup *m, const json_t *doc)
{
	const json_t *r = json_object_get(doc, "ranking");

	m->heading(f, 2, "ranking", "Ranking (clusters that pass every required criterion)");
	rank_list(f, m, j_arr(r, "by_cost"), "By cost", "cost");
	rank_list(f, m, j_arr(r, "by_time"), "By time", "days");
	if (json_array_size(j_arr(r, "no_price")))
		rank_list(f, m, j_arr(r, "no_price"), "No price (ranked by time only)", NULL);
	if (json_array_size(j_arr(r, "not_estimated")))
		rank_list(f, m, j_arr(r, "not_estimated"), "Not estimated", NULL);
	rank_list(f, m, j_arr(r, "excluded"), "Excluded", NULL);
}

static void strings_section(FILE *f, const struct markup *m, const json_t *a, const char *id,
			    const char *title)
{
	const json_t *s;
	size_t i;

	m->heading(f, 2, id, title);
	if (!json_array_size(a)) {
		m->p_open(f, NULL);
		fputs("None.", f);
		fputs(m->p_close, f);
		return;
	}
	m->list_open(f, NULL);
	json_array_foreach(a, i, s) {
		fputs(m->li_open, f);
		put_plain(f, m->esc, s);
		fputs(m->li_close, f);
	}
	fputs(m->list_close, f);
}

static void nodes_section(FILE *f, const struct markup *m, const json_t *doc)
{
	static const char *const heads[] = { "nodes", "GPUs", "busbw (GB/s)", "step (s)", "days",
		"GPU-hours", "cost (USD)", "exposed comm (% of the step)", "how" };
	const json_t *plan, *pt;
	size_t i, j;
	char buf[64];

	if (!json_array_size(j_arr(doc, "nodes")))
		return;
	m->heading(f, 2, "nodes", "How many nodes to rent");
	json_array_foreach(j_arr(doc, "nodes"), i, plan) {
		const json_t *ch = json_object_get(plan, "choice");

		fputs(m->box_open, f);
		m->p_open(f, NULL);
		fputs(m->b_open, f);
		put_esc(f, m->esc, "%s", j_str(plan, "cluster"));
		fputs(m->b_close, f);
		put_esc(f, m->esc, ": %s %s, a model, not a measurement; %s.", j_str(plan, "collective"),
			j_str(plan, "backend"), j_str(plan, "extrapolation"));
		fputs(m->p_close, f);
		m->table_open(f, heads, 9);
		json_array_foreach(j_arr(plan, "points"), j, pt) {
			int ex = json_is_true(json_object_get(pt, "extrapolated"));

			fputs(m->tr_open, f);
			num_cell(f, m, 0, pt, "nodes", "?");
			num_cell(f, m, 1, pt, "gpus", "?");
			num_cell(f, m, 2, pt, "busbw_GBps", "n/a");
			num_cell(f, m, 3, pt, "step_s", "n/a");
			num_cell(f, m, 4, pt, "days", "n/a");
			num_cell(f, m, 5, pt, "gpu_hours", "n/a");
			num_cell(f, m, 6, pt, "cost", "no price");
			pct_cell(f, m, 7, pt, "comm_fraction");
			text_cell(f, m, 8, ex ? "extrapolated (Hockney fit)" : "measured curve");
			fputs(m->tr_close, f);
		}
		fputs(m->table_close, f);
		m->p_open(f, NULL);
		fputs(m->b_open, f);
		if (json_is_number(json_object_get(ch, "nodes"))) {
			fmt_value(buf, sizeof(buf), json_object_get(ch, "nodes"));
			put_esc(f, m->esc, "Rent %s nodes", buf);
		} else {
			fputs("No choice", f);
		}
		fputs(m->b_close, f);
		put_esc(f, m->esc, ": %s%s.", j_str(ch, "why"),
			json_is_true(json_object_get(ch, "extrapolated")) ? " (an extrapolated node count)" : "");
		fputs(m->p_close, f);
		fputs(m->box_close, f);
	}
}

/* the decision in words, from the ranking: the cheapest and the fastest eligible cluster, how many excluded */
static void decision_words(char *buf, size_t len, const json_t *doc)
{
	const json_t *r = json_object_get(doc, "ranking");
	const json_t *c0 = json_array_get(j_arr(r, "by_cost"), 0), *t0 = json_array_get(j_arr(r, "by_time"), 0);
	size_t nx = json_array_size(j_arr(r, "excluded")), at = 0;
	char cost[48], days[48], tdays[48];

	buf[0] = '\0';
	if (!c0 && !t0) {
		snprintf(buf, len, "No cluster to rent as judged: none passes every required criterion with an "
			 "estimate (%zu excluded, listed below with why).", nx);
		return;
	}
	if (c0) {
		fmt_value(cost, sizeof(cost), json_object_get(c0, "cost"));
		fmt_value(days, sizeof(days), json_object_get(c0, "days"));
		at = (size_t)snprintf(buf, len, "%s costs least (%s USD, %s days)", j_str(c0, "name"), cost, days);
	}
	if (t0 && at < len) {
		fmt_value(tdays, sizeof(tdays), json_object_get(t0, "days"));
		at += (size_t)snprintf(buf + at, len - at, "%s%s finishes first (%s days)", at ? "; " : "",
				       j_str(t0, "name"), tdays);
	}
	if (at < len)
		at += (size_t)snprintf(buf + at, len - at, ", among the clusters that pass every required criterion");
	if (nx && at < len)
		snprintf(buf + at, len - at, "; %zu excluded (below, with why).", nx);
	else if (at < len)
		snprintf(buf + at, len - at, ".");
}

static void compare_doc(FILE *f, const struct markup *m, const json_t *doc, const struct charts *c)
{
	char words[1024], buf[64];

	m->heading(f, 1, NULL, "Choosing between offers: cluster comparison");
	m->p_open(f, NULL);
	snprintf(buf, sizeof(buf), "%zu", json_array_size(j_arr(doc, "clusters")));
	put_esc(f, m->esc, "%s clusters compared; generated %s by ccreport %s", buf,
		j_str(doc, "generated_utc"), j_str(doc, "version"));
	if (*j_str(doc, "commit"))
		put_esc(f, m->esc, " (git %s)", j_str(doc, "commit"));
	fputs(".", f);
	fputs(m->p_close, f);
	/* the decision and the ranking first, the evidence after */
	m->heading(f, 2, "decision", "Decision");
	decision_words(words, sizeof(words), doc);
	m->p_open(f, "decision");
	put_esc(f, m->esc, "%s", words);
	fputs(m->p_close, f);
	ranking_section(f, m, doc);
	workload_section(f, m, doc);
	nodes_section(f, m, doc);
	strings_section(f, m, j_arr(doc, "differences"), "differences", "Differences, from the evidence");
	clusters_section(f, m, doc);
	criteria_section(f, m, doc);
	render_doc_charts(f, m, c);
}

static int md_fn(FILE *f, const json_t *doc, const struct charts *c)
{
	compare_doc(f, markup_md(), doc, c);
	return ferror(f) ? -1 : 0;
}

static int html_fn(FILE *f, const json_t *doc, const struct charts *c)
{
	html_page_open(f, "Cluster comparison");
	compare_doc(f, markup_html(), doc, c);
	fputs("</body>\n</html>\n", f);
	return ferror(f) ? -1 : 0;
}

int render_compare(const json_t *doc, const struct render_opts *ro, char *err, size_t len)
{
	struct charts c;
	int rc;

	rc = charts_write(doc, ro, &c, chart_compare, err, len) ||
	     render_write_file(ro->outdir, "compare.md", NULL, md_fn, doc, &c, err, len) ||
	     render_write_file(ro->outdir, "compare.html", NULL, html_fn, doc, &c, err, len) ? -1 : 0;
	charts_free(&c);
	return rc;
}

/* ---- the terminal ---- */

/* prints one line (the format has no new line of its own) */
static void tprint(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tprint(FILE *f, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	/* one line: a new line inside a name is a '?' like every control character */
	for (const char *q = s; q && *q; q++)
		fputc((unsigned char)*q < 0x20 || *q == 0x7f ? '?' : *q, f);
	fputc('\n', f);
	free(s);
}

void compare_print(const json_t *doc, FILE *f)
{
	const json_t *r = json_object_get(doc, "ranking"), *e, *plan;
	size_t i;
	char b1[64], b2[64], b3w[1024];

	tprint(f, "ccreport compare: %zu clusters", json_array_size(j_arr(doc, "clusters")));
	decision_words(b3w, sizeof(b3w), doc);
	tprint(f, "ccreport compare: %s", b3w);
	json_array_foreach(j_arr(r, "by_cost"), i, e) {
		fmt_value(b1, sizeof(b1), json_object_get(e, "cost"));
		fmt_value(b2, sizeof(b2), json_object_get(e, "days"));
		tprint(f, "  by cost %zu. %s: %s USD, %s days", i + 1, j_str(e, "name"), b1, b2);
	}
	json_array_foreach(j_arr(r, "by_time"), i, e) {
		fmt_value(b2, sizeof(b2), json_object_get(e, "days"));
		tprint(f, "  by time %zu. %s: %s days", i + 1, j_str(e, "name"), b2);
	}
	json_array_foreach(j_arr(r, "no_price"), i, e)
		tprint(f, "  %s: no price (ranked by time only)", j_str(e, "name"));
	json_array_foreach(j_arr(r, "not_estimated"), i, e)
		tprint(f, "  %s: not estimated: %s", j_str(e, "name"), j_str(e, "reason"));
	json_array_foreach(j_arr(r, "excluded"), i, e)
		tprint(f, "  excluded %s: %s", j_str(e, "name"), j_str(e, "reason"));
	json_array_foreach(j_arr(doc, "differences"), i, e)
		tprint(f, "  - %s", json_string_value(e) ? json_string_value(e) : "");
	json_array_foreach(j_arr(doc, "nodes"), i, plan) {
		const json_t *ch = json_object_get(plan, "choice"), *pt;
		size_t j;

		json_array_foreach(j_arr(plan, "points"), j, pt) {
			char b3[64];

			fmt_value(b1, sizeof(b1), json_object_get(pt, "nodes"));
			fmt_value(b2, sizeof(b2), json_object_get(pt, "days"));
			fmt_value(b3, sizeof(b3), json_object_get(pt, "cost"));
			tprint(f, "  %s: %s nodes: %s days, %s USD%s", j_str(plan, "cluster"), b1, b2,
			       json_is_number(json_object_get(pt, "cost")) ? b3 : "no price",
			       json_is_true(json_object_get(pt, "extrapolated")) ? " (extrapolated)" : "");
		}
		fmt_value(b1, sizeof(b1), json_object_get(ch, "nodes"));
		tprint(f, "  %s: rent %s nodes: %s", j_str(plan, "cluster"),
		       json_is_number(json_object_get(ch, "nodes")) ? b1 : "no", j_str(ch, "why"));
	}
}
