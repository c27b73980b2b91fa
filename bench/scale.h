#ifndef CCDIAG_SCALE_H
#define CCDIAG_SCALE_H

#include "../core/mpictx.h"
#include "../core/run.h"
#include "backend.h"
#include "coll.h"

#define SCALE_MAX_STEPS 64

/*
 * The node counts --scale measures for a job of nnodes nodes: 1, 2, 4, ...
 * (powers of two below nnodes), then nnodes itself, so a job of 6 nodes
 * gives 1, 2, 4, 6. Writes at most max into out; returns how many.
 */
int scale_counts(int nnodes, int *out, int max);

/*
 * Builds sub, the context of the first k nodes of parent (every rank on
 * them, ordered by world rank, so world rank 0 is rank 0 of sub): its own
 * communicators, node map and world_ranks. Collective over parent->world.
 * On ranks outside, sub->world is MPI_COMM_NULL. Returns 0 or -1 (logged).
 * parent must be the world context (world_ranks NULL).
 */
int scale_subctx(const struct mpictx *parent, int k, struct mpictx *sub);

/* Frees what scale_subctx made (not MPI). Safe on a zeroed or failed sub. */
void scale_subctx_free(struct mpictx *sub);

/*
 * Runs the sweeps of list[0..n) under --scale: for each node count of
 * scale_counts, the ranks of the first k nodes start the backend on their
 * sub-context, sweep every collective and stop it; the other ranks wait at
 * a barrier on the world, napping rather than polling. Call on every rank.
 * Returns the worst exit code (rank 0's view on every rank).
 */
int scale_run(struct cc_run *run, const struct coll *const *list, int n,
	      const struct backend *be);

#endif
