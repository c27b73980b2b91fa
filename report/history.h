#ifndef CCDIAG_HISTORY_H
#define CCDIAG_HISTORY_H

/*
 * report/history.c: a cluster's runs over time in an SQLite database
 * (Debian's libsqlite3; docs/history.md). ccreport --history DB appends the
 * run just judged; ccreport history DB shows every criterion over time and
 * flags drift against the rolling median of the last k runs, naming the
 * element that moved. Writers take the database with BEGIN IMMEDIATE under
 * a busy timeout, so two reports at once queue instead of corrupting it.
 */
#include <jansson.h>
#include <stddef.h>

#define HISTORY_SCHEMA 1
#define HISTORY_K 5              /* runs in the rolling median */
#define HISTORY_MIN_RUNS 3       /* earlier runs needed before drift is judged */
#define HISTORY_TOL 0.05         /* default tolerance, fraction */
#define HISTORY_BUSY_MS 10000    /* default busy timeout; $CCREPORT_BUSY_TIMEOUT_MS overrides */

/*
 * Appends summary s (cluster name cluster; NULL = the first host's name) to
 * db, created when missing. Returns 0, or an exit code with one line in err:
 * 3 (RPT_EXIT_OUTPUT) when the database is locked or cannot be written,
 * 2 (RPT_EXIT_USAGE) when it is corrupt, not a database or another schema.
 */
int history_append(const json_t *s, const char *db, const char *cluster, char *err, size_t len);

/*
 * The history document of cluster (NULL: every cluster in db): runs,
 * criteria over time, drift (docs/history.md). 0, or an exit code with err.
 */
int history_build(const char *db, const char *cluster, int k, double tol, json_t **out, char *err,
		  size_t len);

#endif
