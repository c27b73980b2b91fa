#ifndef CCDIAG_BASELINE_H
#define CCDIAG_BASELINE_H

/* report/baseline.c: every criterion's values against an earlier run */
#include <jansson.h>
#include <stddef.h>

struct eval;

/*
 * Loads an earlier run (results files or folder, or an earlier summary.json)
 * and compares every criterion's value per element with e. Returns the
 * "baseline" object of the summary, or NULL with a message in err.
 */
json_t *baseline_compare(const struct eval *e, const char *old, double tol,
			 char *err, size_t len);

#endif
