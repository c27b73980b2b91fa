#include "mpictx.h"
#include "log.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int mpictx_env_rank(void)
{
	static const char *const vars[] = {
		"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", NULL
	};

	for (int i = 0; vars[i]; i++) {
		const char *v = getenv(vars[i]);

		if (v && *v)
			return atoi(v);
	}
	return 0;
}

/* Gathers every rank's host name and numbers the hosts by lowest rank. */
static int map_hosts(struct mpictx *ctx)
{
	char *all = malloc((size_t)ctx->size * sizeof(ctx->host));
	int rc = -1;

	ctx->rank_node = calloc((size_t)ctx->size, sizeof(int));
	ctx->hosts = calloc((size_t)ctx->size, sizeof(char *));
	ctx->node_leader = calloc((size_t)ctx->size, sizeof(int));
	ctx->node_ranks = calloc((size_t)ctx->size, sizeof(int));
	if (!all || !ctx->rank_node || !ctx->hosts || !ctx->node_leader || !ctx->node_ranks) {
		log_error("out of memory mapping %d ranks to hosts", ctx->size);
		goto out;
	}
	if (MPI_Allgather(ctx->host, sizeof(ctx->host), MPI_CHAR, all, sizeof(ctx->host),
			  MPI_CHAR, MPI_COMM_WORLD) != MPI_SUCCESS) {
		log_error("cannot exchange host names");
		goto out;
	}
	ctx->nnodes = 0;
	for (int r = 0; r < ctx->size; r++) {
		const char *h = all + (size_t)r * sizeof(ctx->host);
		int n;

		for (n = 0; n < ctx->nnodes; n++)
			if (!strcmp(ctx->hosts[n], h))
				break;
		if (n == ctx->nnodes) {
			ctx->hosts[n] = strdup(h);
			if (!ctx->hosts[n])
				goto out;
			ctx->node_leader[n] = r;
			ctx->nnodes++;
		}
		ctx->rank_node[r] = n;
		ctx->node_ranks[n]++;
	}
	ctx->node = ctx->rank_node[ctx->rank];
	rc = 0;
out:
	free(all);
	return rc;
}

int mpictx_init(struct mpictx *ctx, int *argc, char ***argv)
{
	int len = 0;

	memset(ctx, 0, sizeof(*ctx));
	ctx->world = ctx->local = ctx->leaders = MPI_COMM_NULL;
	if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &ctx->thread_level) != MPI_SUCCESS) {
		log_error("MPI_Init_thread failed");
		return -1;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &ctx->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ctx->size);
	if (gethostname(ctx->host, sizeof(ctx->host) - 1))
		strcpy(ctx->host, "unknown");
	/* short names: "node07", not "node07.cluster.example" */
	ctx->host[strcspn(ctx->host, ".")] = '\0';
	log_init(ctx->host, ctx->rank);
	MPI_Get_library_version(ctx->mpi_version, &len);
	ctx->mpi_version[strcspn(ctx->mpi_version, "\n")] = '\0';

	if (MPI_Comm_dup(MPI_COMM_WORLD, &ctx->world) != MPI_SUCCESS ||
	    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, ctx->rank,
				MPI_INFO_NULL, &ctx->local) != MPI_SUCCESS) {
		log_error("cannot create communicators");
		return -1;
	}
	MPI_Comm_rank(ctx->local, &ctx->local_rank);
	MPI_Comm_size(ctx->local, &ctx->local_size);
	if (map_hosts(ctx))
		return -1;
	/*
	 * Leaders by host name rather than by the shared-memory split: they agree
	 * on real clusters, and on an emulated one (namespaces on one machine) the
	 * host name is the truth.
	 */
	if (MPI_Comm_split(MPI_COMM_WORLD,
			   ctx->node_leader[ctx->node] == ctx->rank ? 0 : MPI_UNDEFINED,
			   ctx->node, &ctx->leaders) != MPI_SUCCESS) {
		log_error("cannot create the leaders communicator");
		return -1;
	}
	return 0;
}

void mpictx_fini(struct mpictx *ctx)
{
	if (ctx->leaders != MPI_COMM_NULL)
		MPI_Comm_free(&ctx->leaders);
	if (ctx->local != MPI_COMM_NULL)
		MPI_Comm_free(&ctx->local);
	if (ctx->world != MPI_COMM_NULL)
		MPI_Comm_free(&ctx->world);
	for (int n = 0; ctx->hosts && n < ctx->nnodes; n++)
		free(ctx->hosts[n]);
	free(ctx->hosts);
	free(ctx->rank_node);
	free(ctx->node_leader);
	free(ctx->node_ranks);
	MPI_Finalize();
}

int mpictx_nap_wait(MPI_Request *req)
{
	const struct timespec nap = { 0, 100000 };
	int done = 0;

	for (;;) {
		if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return -1;
		if (done)
			return 0;
		nanosleep(&nap, NULL);
	}
}

int mpictx_nap_barrier(MPI_Comm comm)
{
	MPI_Request req;

	if (MPI_Ibarrier(comm, &req) != MPI_SUCCESS)
		return -1;
	return mpictx_nap_wait(&req);
}

int mpictx_nap_bcast(void *buf, int count, MPI_Datatype type, MPI_Comm comm)
{
	MPI_Request req;

	if (MPI_Ibcast(buf, count, type, 0, comm, &req) != MPI_SUCCESS)
		return -1;
	return mpictx_nap_wait(&req);
}
