#ifndef CCDIAG_SWEEP_H
#define CCDIAG_SWEEP_H

#include "../core/options.h"
#include "../core/run.h"
#include "backend.h"
#include "coll.h"

#define SWEEP_MAX_SIZES 4096
/* the fewest repetitions --time-per-size leaves a size (-r below it is kept) */
#define SWEEP_MIN_REPS 3

/* Buffers of one sweep or soak, sized for its largest message. */
struct sweep_bufs {
	void *send, *recv;            /* the backend's */
	void *host_send, *host_recv;  /* staging for the data check */
	size_t send_bytes, recv_bytes;
};

/* Allocates b on be. Returns 0, or -1 when any part failed (free it with sweep_bufs_free). */
int sweep_bufs_alloc(const struct backend *be, struct sweep_bufs *b, size_t send_bytes,
		     size_t recv_bytes);
/* Releases what sweep_bufs_alloc made; b is zeroed. */
void sweep_bufs_free(const struct backend *be, struct sweep_bufs *b);

/*
 * One data-check operation, untimed: poisons the receive buffer, runs a
 * (whose send buffer holds the pattern), copies the result to the host and
 * counts the elements that differ from what the pattern must give. *err is
 * nonzero (and 0 returned) when a backend call failed.
 */
size_t sweep_check(const struct backend *be, const struct coll *coll, struct sweep_bufs *b,
		   const struct coll_args *a, const struct coll_counts *c, int rank, int nranks,
		   int *err);

/*
 * Parses the -d and --op lists. Returns 0, or -1 with a one-line message.
 */
int sweep_parse_lists(const struct cc_options *o, enum cc_dtype *types, int *ntypes,
		      enum cc_redop *ops, int *nops, char *err, size_t len);

/*
 * Starts be on every rank of mpi (collective). Returns the worst result over
 * the ranks: 0, 1 (cannot run here: a skip) or -1 (error); when not 0, be is
 * stopped again where it started and why (len bytes, "" on entry) says why.
 */
int sweep_backend_start(const struct backend *be, const struct mpictx *mpi, char *why,
			size_t len);

/*
 * Runs the whole sweep of one collective on an initialised backend, on every
 * rank: for each type, operator and size, warm-up, timed repetitions and a
 * data check; rank 0 writes one measurement record per size and a table
 * line on stdout. Returns CC_EXIT_OK, CC_EXIT_FAIL (wrong data or a failed
 * call, recorded) or CC_EXIT_RUNTIME (out of memory).
 */
int sweep_run(struct cc_run *run, const struct coll *coll, const struct backend *be);

/*
 * ccprobe --plan: about how many seconds the sweep of coll takes on nodes
 * nodes of o->plan_rpn ranks at o->plan_gbps per node (a Hockney model with
 * nominal start-up, under --time-per-size), the backend start included;
 * under --scale the sum over the node counts of scale_steps. A model for
 * plans, not a measurement. nsizes (may be NULL) gets the sizes per series.
 */
double sweep_estimate(const struct cc_options *o, const struct coll *coll, int nodes,
		      size_t *nsizes);

#endif
