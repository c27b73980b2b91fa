#ifndef CCDIAG_CHART_H
#define CCDIAG_CHART_H

/*
 * render/chart.c: the gnuplot machinery of the renderers. A document's
 * charts are listed by one draw function (chart_kinds.c for the summary,
 * chart_compare.c, render_history.c) that charts_draw_with runs; each chart
 * it starts with chart_begin and ends with chart_finish.
 */
#include <jansson.h>
#include <limits.h>
#include <stdio.h>

#include "render.h"

/* the longest a gnuplot child may run before it is killed, unless render_opts says */
#define CHART_TIMEOUT_S 30
/* per-element bar charts show at most this many elements, the worst ones */
#define CHART_MAX_BARS 64

struct chart_ctx {
	const char *gnuplot;          /* command found on PATH, or the one render_opts named */
	char dir[PATH_MAX];           /* private temp dir: data files, scripts, gnuplot's output */
	int timeout_s;
	int stopped;                  /* a run was killed for time: the rest are not started */
	struct charts *out;
};

/*
 * Draws the charts draw adds for doc into c (c->status says why none were
 * drawn: turned off, no gnuplot, no temp dir); never fails the report.
 */
void charts_draw_with(const json_t *doc, const struct render_opts *o, struct charts *c,
		      void (*draw)(struct chart_ctx *, const json_t *));
/*
 * The same, and each chart written as its file into o->outdir, where the
 * chart-*.svg an earlier report left are removed first. 0, or -1 with err
 * when a file cannot be written; c is filled either way.
 */
int charts_write(const json_t *doc, const struct render_opts *o, struct charts *c,
		 void (*draw)(struct chart_ctx *, const json_t *), char *err, size_t len);
void charts_free(struct charts *c);

/*
 * chart_begin: opens a new script in ctx->dir named after file ("x.svg" ->
 * "x.gp") with the terminal and output already set; the caller writes the
 * plot commands. chart_finish runs gnuplot on it and adds the chart (title
 * and note are copied), or one line to out->errors. data_path gives the
 * path of a data file in ctx->dir (the script refers to it by bare name).
 */
FILE *chart_begin(struct chart_ctx *ctx, const char *file, int width, int height);
void chart_finish(struct chart_ctx *ctx, FILE *script, const char *file,
		  const char *title, const char *note, int crit);
FILE *chart_data(struct chart_ctx *ctx, const char *name);
void chart_fail(struct chart_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* quotes s as a gnuplot single-quoted string, escaped (escape.h) */
void gp_quote(FILE *f, const char *s);
/* the same for a tic label: cut to CHART_LABEL_MAX bytes with "...", '%' doubled */
void gp_label(FILE *f, const char *s);
#define CHART_LABEL_MAX 28
/* heatmaps of more hosts are drawn as one embedded PNG, not a rectangle per cell */
#define CHART_PIXELS_MAX 64
/* beyond this many hosts no heatmap (2048: about 4 s of gnuplot and a 5 MB SVG) */
#define CHART_HEATMAP_MAX 2048

#endif
