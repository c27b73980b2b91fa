#ifndef CCDIAG_RENDER_H
#define CCDIAG_RENDER_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

/*
 * The renderers of ccreport (render/). They read only the documents ccreport
 * writes (summary.json, docs/report.md; compare.json; the history document),
 * never the results files, so every output says exactly what its document
 * says. render.c holds what all of them share: the options, the charts
 * drawn for a document, and writing the output files.
 */
struct render_opts {
	const char *outdir;      /* existing folder the files are written into */
	int charts;              /* 1: draw charts with gnuplot when it is installed; 0: tables only */
	const char *gnuplot;     /* gnuplot command; NULL = "gnuplot" from PATH */
	int chart_timeout_s;     /* a gnuplot run longer than this is killed; 0 = 30 s */
};

/* One chart drawn by gnuplot (chart.c), kept in memory for every renderer. */
struct chart {
	char file[40];      /* "chart-busbw-1.svg": written beside report.md; never a result string */
	char *title;        /* plain text: renderers escape it */
	char *note;         /* plain text such as "worst 64 of 8192 elements shown", or NULL */
	char *svg;          /* the file as gnuplot wrote it */
	char *inline_svg;   /* prolog and namespace URIs stripped, ids prefixed: for index.html */
	int crit;           /* index into criteria[] for per-element bars, -1 otherwise */
};

struct charts {
	struct chart *v;
	int n;
	char *status;       /* NULL when charts were drawn, else why none were ("charts not drawn: ...") */
	char **errors;      /* one line per chart that failed; the others are still drawn */
	int nerr;
};

/* writes DIR/NAME through fn (what: literal contents instead); 0, or -1 with err */
int render_write_file(const char *dir, const char *name, const char *what,
		      int (*fn)(FILE *, const json_t *, const struct charts *),
		      const json_t *s, const struct charts *c, char *err, size_t len);
/* removes the chart-*.svg an earlier report left in dir */
void render_remove_old_charts(const char *dir);

/* mkdir -p; 0, or -1 with errno */
int render_mkdirs(const char *path);
/* now, or SOURCE_DATE_EPOCH when set (reproducible output) */
time_t render_report_time(void);

#endif
