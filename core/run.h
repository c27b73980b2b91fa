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
	char **skipped;          /* rank 0: the names skipped so far (each said once on stderr) */
	int nskipped;
};

/* Seconds since the run started. */
double run_elapsed(const struct cc_run *run);

/*
 * Rank 0 writes rec (taken) as a record of the given type, adding
 * "elapsed_s"; other ranks just drop rec. Returns 0. When the results file
 * cannot be written (ENOSPC, EIO) the job ends at once with exit 3
 * (watchdog_abort): results_write has logged the file and errno and cut the
 * file back to its last complete record.
 */
int run_record(struct cc_run *run, const char *type, json_t *rec);

/*
 * Records that NAME did not run: rank 0 writes a "skip" record with the
 * reason and logs it. Call on every rank. A skip never counts as a pass.
 */
void run_skip(struct cc_run *run, const char *kind, const char *name, const char *reason);

/* Rank 0: 1 when NAME was skipped (run_skip) in this run, else 0. */
int run_skipped(const struct cc_run *run, const char *name);

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

/*
 * The collective decision over comm: every rank passes its own outcome
 * (0 run, 1 skip, -1 error) and why (its own reason, "" for none); all
 * ranks get the worst one, and the reason of the lowest rank that had it,
 * tagged "(rank R on HOST)". Returns 0, 1 or -1.
 */
int run_agree(MPI_Comm comm, int mine, const char *host, char *why, size_t len);

/*
 * Ends a measuring phase of probe name (collective over run->mpi->world):
 * every rank learns whether any failed (this rank's failure text in why),
 * and rank 0 writes one error record with the lowest failing rank's text.
 * Returns 0 when none failed, else -1.
 */
int run_phase_end(struct cc_run *run, const char *name, int failed, const char *why);

/*
 * This process's environment that changes how NCCL, UCX, Open MPI and CUDA
 * behave: every NCCL_*, UCX_*, OMPI_MCA_* and CUDA_VISIBLE_DEVICES
 * variable, as {NAME: value}; a new object.
 */
json_t *run_env_json(void);

/*
 * Whether variable name is one a host must share with the others (NCCL_*,
 * UCX_*, Open MPI's pml/btl/osc/mtl/coll choices), not one the launcher sets
 * per host or per process.
 */
int run_env_shared(const char *name);

/* The stats as a JSON object {n,min,median,mean,max,p99,cv}, values times scale. */
json_t *run_stats_json(const struct stats *s, double scale);

#endif
