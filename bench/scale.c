/*
 * --scale: the collective sweep on the first 1, 2, 4 ... N nodes of the
 * job, in one launch. Each step gets its own sub-context (struct mpictx)
 * so the sweep and the backends run on it unchanged; the watchdog is told
 * who takes part, so ranks left out are never reported as hung.
 */
#include "scale.h"
#include "sweep.h"
#include "../core/log.h"
#include "../core/watchdog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int scale_counts(int nnodes, int *out, int max)
{
	int n = 0;

	for (int k = 1; k < nnodes && n < max; k *= 2)
		out[n++] = k;
	if (nnodes >= 1 && n < max)
		out[n++] = nnodes;
	return n;
}

void scale_subctx_free(struct mpictx *sub)
{
	if (sub->leaders != MPI_COMM_NULL)
		MPI_Comm_free(&sub->leaders);
	if (sub->local != MPI_COMM_NULL)
		MPI_Comm_free(&sub->local);
	if (sub->world != MPI_COMM_NULL)
		MPI_Comm_free(&sub->world);
	/* host names are the parent's: only the arrays are ours */
	free(sub->hosts);
	free(sub->rank_node);
	free(sub->node_leader);
	free(sub->node_ranks);
	free(sub->world_ranks);
	memset(sub, 0, sizeof(*sub));
	sub->world = sub->local = sub->leaders = MPI_COMM_NULL;
}

/* The node map of sub from the parent's, for the first k nodes. */
static int map_sub(const struct mpictx *parent, int k, struct mpictx *sub)
{
	int i = 0;

	sub->hosts = calloc((size_t)k, sizeof(char *));
	sub->node_leader = calloc((size_t)k, sizeof(int));
	sub->node_ranks = calloc((size_t)k, sizeof(int));
	sub->rank_node = calloc((size_t)sub->size, sizeof(int));
	sub->world_ranks = calloc((size_t)sub->size, sizeof(int));
	if (!sub->hosts || !sub->node_leader || !sub->node_ranks || !sub->rank_node ||
	    !sub->world_ranks)
		return -1;
	for (int n = 0; n < k; n++) {
		sub->hosts[n] = parent->hosts[n];
		sub->node_ranks[n] = parent->node_ranks[n];
		sub->node_leader[n] = -1;
	}
	/* MPI_Comm_split with key = world rank keeps world order */
	for (int r = 0; r < parent->size; r++) {
		int n = parent->rank_node[r];

		if (n >= k)
			continue;
		if (i >= sub->size)
			return -1;
		sub->world_ranks[i] = r;
		sub->rank_node[i] = n;
		if (sub->node_leader[n] < 0)
			sub->node_leader[n] = i;
		i++;
	}
	return i == sub->size ? 0 : -1;
}

int scale_subctx(const struct mpictx *parent, int k, struct mpictx *sub)
{
	int member = parent->node < k, ok = 1, allok;

	memset(sub, 0, sizeof(*sub));
	sub->world = sub->local = sub->leaders = MPI_COMM_NULL;
	if (MPI_Comm_split(parent->world, member ? 0 : MPI_UNDEFINED, parent->rank,
			   &sub->world) != MPI_SUCCESS)
		ok = 0;
	if (ok && member) {
		MPI_Comm_rank(sub->world, &sub->rank);
		MPI_Comm_size(sub->world, &sub->size);
		sub->local_rank = parent->local_rank;
		sub->local_size = parent->local_size;
		sub->node = parent->node;
		sub->nnodes = k;
		sub->thread_level = parent->thread_level;
		memcpy(sub->host, parent->host, sizeof(sub->host));
		memcpy(sub->mpi_version, parent->mpi_version, sizeof(sub->mpi_version));
		ok = map_sub(parent, k, sub) == 0;
		/* by host name, as mpictx does: the truth on an emulated cluster too */
		if (MPI_Comm_split(sub->world, sub->node, sub->rank, &sub->local) != MPI_SUCCESS ||
		    MPI_Comm_split(sub->world, parent->local_rank == 0 ? 0 : MPI_UNDEFINED,
				   sub->node, &sub->leaders) != MPI_SUCCESS)
			ok = 0;
	}
	MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, parent->world);
	if (!allok) {
		if (!ok)
			log_error("cannot build the context of the first %d node(s)", k);
		scale_subctx_free(sub);
		return -1;
	}
	return 0;
}

/*
 * A barrier that naps: ranks left out of a step wait here for minutes, and
 * on nodes that share a kernel (an emulated cluster) a busy-polling wait
 * would take the CPU from the ranks being measured.
 */
static void idle_barrier(MPI_Comm comm)
{
	const struct timespec nap = { 0, 1000000 };  /* 1 ms */
	MPI_Request req;
	int done = 0;

	if (MPI_Ibarrier(comm, &req) != MPI_SUCCESS) {
		MPI_Barrier(comm);
		return;
	}
	while (!done) {
		MPI_Test(&req, &done, MPI_STATUS_IGNORE);
		if (!done)
			nanosleep(&nap, NULL);
	}
}

/* Skip or error records for every collective of the list. */
static void skip_all(struct cc_run *run, const struct coll *const *list, int n, int error,
		     const char *why)
{
	for (int i = 0; i < n; i++)
		if (error)
			run_error(run, "collective", list[i]->name, why);
		else
			run_skip(run, "collective", list[i]->name, why);
}

/* Starts the backend on sub's ranks: 0, 1 (skip, recorded) or -1 (error, recorded). */
static int start_backend(struct cc_run *sr, const struct coll *const *list, int n,
			 const struct backend *be)
{
	char why[256] = "", msg[400], what[128];
	int worst;

	snprintf(what, sizeof(what), "backend %s start on %d node(s)", be->name, sr->mpi->nnodes);
	watchdog_arm(what, json_pack("{s:s, s:s, s:i}", "kind", "setup", "backend", be->name,
				     "nodes", sr->mpi->nnodes));
	worst = sweep_backend_start(be, sr->mpi, why, sizeof(why));
	watchdog_disarm();
	if (worst == 0)
		return 0;
	snprintf(msg, sizeof(msg), "%s%s (--scale, %d node(s))", worst == 1 ? "skipped: " : "",
		 why, sr->mpi->nnodes);
	skip_all(sr, list, n, worst != 1, msg);
	return worst == 1 ? 1 : -1;
}

/* One step on the ranks of sub: start, every sweep, stop. Returns an exit code. */
static int run_step(struct cc_run *run, struct mpictx *sub, const struct coll *const *list,
		    int n, const struct backend *be, int *stop)
{
	struct cc_run sr = *run;
	char what[128];
	int rc = CC_EXIT_OK, st;

	sr.mpi = sub;
	sr.failures = 0;
	if (sub->rank == 0 && !run->opt->quiet) {
		printf("# --scale: %d of %d node(s), %d rank(s)\n#\n", sub->nnodes,
		       run->mpi->nnodes, sub->size);
		fflush(stdout);
	}
	st = start_backend(&sr, list, n, be);
	if (st) {
		/* the same backend will not start on more nodes: stop here */
		*stop = 1;
		rc = st < 0 ? CC_EXIT_RUNTIME : CC_EXIT_OK;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		int r = sweep_run(&sr, list[i], be);

		if (r > rc)
			rc = r;
		if (r == CC_EXIT_RUNTIME) {
			*stop = 1;
			break;
		}
	}
	snprintf(what, sizeof(what), "backend %s stop on %d node(s)", be->name, sub->nnodes);
	watchdog_arm(what, json_pack("{s:s, s:s, s:i}", "kind", "setup", "backend", be->name,
				     "nodes", sub->nnodes));
	be->fini();
	watchdog_disarm();
out:
	run->failures += sr.failures;
	return rc;
}

int scale_run(struct cc_run *run, const struct coll *const *list, int n,
	      const struct backend *be)
{
	struct mpictx *mpi = run->mpi;
	int counts[SCALE_MAX_STEPS], nc = scale_counts(mpi->nnodes, counts, SCALE_MAX_STEPS);
	char *member = malloc((size_t)mpi->size);
	int rc = CC_EXIT_OK;

	if (!member) {
		log_error("out of memory");
		return CC_EXIT_RUNTIME;
	}
	if (be->missing) {
		char why[256];

		snprintf(why, sizeof(why), "not built: %s", be->missing);
		skip_all(run, list, n, 0, why);
		free(member);
		return CC_EXIT_OK;
	}
	for (int s = 0; s < nc; s++) {
		struct mpictx sub;
		int k = counts[s], stop = 0, r = CC_EXIT_OK, state[2];

		for (int w = 0; w < mpi->size; w++)
			member[w] = mpi->rank_node[w] < k;
		if (scale_subctx(mpi, k, &sub)) {
			run_error(run, "collective", "scale", "cannot build a sub-communicator");
			rc = CC_EXIT_RUNTIME;
			break;
		}
		watchdog_members(member);
		if (sub.world != MPI_COMM_NULL)
			r = run_step(run, &sub, list, n, be, &stop);
		idle_barrier(mpi->world);
		scale_subctx_free(&sub);
		/* rank 0 (always a member) decides for everyone whether to go on */
		state[0] = r;
		state[1] = stop;
		MPI_Bcast(state, 2, MPI_INT, 0, mpi->world);
		if (state[0] > rc)
			rc = state[0];
		if (state[1])
			break;
	}
	watchdog_members(NULL);
	free(member);
	return rc;
}
