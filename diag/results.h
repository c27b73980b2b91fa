#ifndef CCDIAG_DIAG_RESULTS_H
#define CCDIAG_DIAG_RESULTS_H

/*
 * diag/results.c: what ccdiag reads back: a phase's results file (the one
 * line of what it found, read record by record, never the whole file at
 * once) and the drain list of ccreport's summary.json (docs/ccdiag.md).
 */
#include <stdio.h>

#include "strv.h"

/*
 * The phase line's findings of results file path: measurements, bad nodes
 * and links, peak busbw, soak samples, errors, skips, the end status.
 * Returns a malloc'd line ("no results" when the file cannot be read).
 */
char *phase_found(const char *path);

/*
 * The drain list of summary.json at path, one line per blamed node:
 * NodeName=N State=DRAIN Reason="ccdiag PROFILE: ..." into nodes[i] (the
 * node) and reasons[i] (the reason, without quotes). profile: the name for
 * the reason, or NULL for the summary's own. A node name that is not one
 * Slurm node name is refused: one line for it in refused. Returns 0, or -1
 * with a message in err (not a summary.json).
 */
int drain_list(const char *path, const char *profile, struct strv *nodes, struct strv *reasons,
	       struct strv *refused, char *err, size_t errlen);

/* 1 when name is one node name Slurm accepts (no list, range, space or quote) */
int slurm_node_name_ok(const char *name);

#endif
