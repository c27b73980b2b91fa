#ifndef CCDIAG_RENDER_H
#define CCDIAG_RENDER_H

#include <jansson.h>
#include <stddef.h>
#include <time.h>

/*
 * The renderers of ccreport. They read only the summary document (the
 * contents of summary.json, docs/report.md), never the results files, so
 * every output says exactly what summary.json says.
 */
struct render_opts {
	const char *outdir;      /* existing folder the files are written into */
	int charts;              /* 1: draw charts with gnuplot when it is installed; 0: tables only */
	const char *gnuplot;     /* gnuplot command; NULL = "gnuplot" from PATH */
	int chart_timeout_s;     /* a gnuplot run longer than this is killed; 0 = 30 s */
};

/*
 * Writes report.md, index.html and junit.xml into o->outdir (charts drawn by
 * gnuplot inline in index.html, as separate chart-*.svg files beside
 * report.md). A chart gnuplot cannot draw, or no gnuplot at all, is said in
 * the outputs and is not an error. Returns 0, or -1 with a one-line message
 * in err when an output file cannot be written. docs/rendering.md.
 */
int render_all(const json_t *summary, const struct render_opts *o, char *err, size_t len);

/* mkdir -p; 0, or -1 with errno */
int render_mkdirs(const char *path);
/* now, or SOURCE_DATE_EPOCH when set (reproducible output) */
time_t render_report_time(void);

#endif
