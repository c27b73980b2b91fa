#ifndef CCDIAG_SUMMARY_H
#define CCDIAG_SUMMARY_H

/* report/summary.c: the summary document (docs/report.md) and the terminal summary */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

struct eval;

struct summary_opts {
	const char *profile_path;
	const char *baseline;    /* NULL = none */
	double baseline_tol;
	time_t now;
};
/* builds the summary document (docs/report.md); NULL with err on failure */
json_t *summary_build(struct eval *e, const struct summary_opts *o, char *err, size_t len);
/* prints the terminal summary: verdict first, then the worst problems */
void summary_print(const json_t *s, FILE *f, int max_problems);

#endif
