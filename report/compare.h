#ifndef CCDIAG_COMPARE_H
#define CCDIAG_COMPARE_H

/*
 * ccreport compare: several clusters' summaries side by side for one
 * workload (docs/compare.md). compare.c reads the summaries and builds the
 * comparison document (compare.json); nodes.c sizes a rental from a
 * --scale curve; render/render_compare.c and render/chart_compare.c render
 * the document with the markup and the chart machinery of the single-run
 * report.
 */
#include <jansson.h>
#include <stddef.h>
#include <time.h>

struct workload;
struct est_inputs;

struct cmp_run {
	char *name;              /* NAME of NAME=RUN */
	char *path;              /* the summary.json read */
	json_t *s;               /* its document */
	double price;            /* USD per GPU-hour; < 0 = none given by --price */
};

struct cmp_opts {
	const struct workload *wl;   /* -w overrides (from == -1 marks those given) */
	double deadline_days;        /* -w deadline_days; 0 = none */
	double budget_usd;           /* -w budget_usd; 0 = none */
	const char *generated_utc;
};

/* how RUNs that hold results are judged: compare's -p and -w */
struct cmp_judge {
	const char *profile;     /* -p NAME|FILE; NULL: results cannot be judged */
	const char *argv0;       /* for profile_find */
	char **wl;               /* the -w KEY=VALUE flags of the estimate, in order */
	int nwl;
	time_t now;              /* the judged summaries' time (render_report_time) */
};

/*
 * Reads NAME=RUN: RUN a summary.json or a folder holding one, or results
 * (a .jsonl file, a folder of them) judged with j's profile. Returns 0, or
 * -1 with one line naming the run in err.
 */
int cmp_run_load(struct cmp_run *r, const char *arg, const struct cmp_judge *j, char *err, size_t len);
void cmp_run_free(struct cmp_run *r);

/* the comparison document (docs/compare.md); NULL with err on no memory */
json_t *compare_build(struct cmp_run *runs, int n, const struct cmp_opts *o, char *err, size_t len);

#endif
