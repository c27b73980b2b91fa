#ifndef CCDIAG_RUN_H
#define CCDIAG_RUN_H

#include "mpictx.h"
#include "options.h"
#include "results.h"
#include "stats.h"

#include <jansson.h>

/* What a collective sweep or a probe gets to do its work. */
struct cc_run {
	const struct cc_options *opt;
	struct mpictx *mpi;
	struct results *res;     /* rank 0 only; NULL on the other ranks */
	double t_start;          /* timer_now() at the start of the run */
	const char *run_id;      /* the header's run_id (16 hex digits), the same on every rank */
	int failures;            /* rank 0: failed measurements so far (wrong data, errors) */
};

/* Seconds since the run started. */
double run_elapsed(const struct cc_run *run);

/*
 * Rank 0 writes rec (taken) as a record of the given type, adding
 * "elapsed_s"; other ranks just drop rec. Returns 0 or -1 on I/O error.
 */
int run_record(struct cc_run *run, const char *type, json_t *rec);

/*
 * Records that NAME did not run: rank 0 writes a "skip" record with the
 * reason and logs it. Call on every rank. A skip never counts as a pass.
 */
void run_skip(struct cc_run *run, const char *kind, const char *name, const char *reason);

/*
 * Records a failure of NAME (an "error" record, counted in run->failures).
 * Call on rank 0 with the message; other ranks may call it too (ignored).
 */
void run_error(struct cc_run *run, const char *kind, const char *name, const char *message);

/*
 * Gathers one JSON value per rank of comm to rank 0 (mine is taken; NULL =
 * nothing). Rank 0 gets an array in rank order, null where a rank sent
 * nothing; the other ranks get NULL. Collective over comm; out of memory on
 * rank 0 aborts the job (exit 3), as a half-gathered result would mislead.
 */
json_t *run_gather_json(MPI_Comm comm, json_t *mine);

/* The stats as a JSON object {n,min,median,mean,max,p99,cv}, values times scale. */
json_t *run_stats_json(const struct stats *s, double scale);

#endif
