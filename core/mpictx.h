#ifndef CCDIAG_MPICTX_H
#define CCDIAG_MPICTX_H

#include <mpi.h>

/* Where this rank sits in the job. Filled by mpictx_init on every rank. */
struct mpictx {
	int rank, size;          /* MPI_COMM_WORLD */
	int local_rank;          /* rank among the ranks of this host */
	int local_size;          /* ranks on this host */
	int node;                /* index of this host, 0..nnodes-1, in order of lowest rank */
	int nnodes;
	int thread_level;        /* what MPI_Init_thread provided */
	char host[256];          /* this rank's host name */
	char **hosts;            /* [nnodes] host names, by node index */
	int *rank_node;          /* [size] node index of each rank */
	int *node_leader;        /* [nnodes] lowest world rank on each node */
	int *node_ranks;         /* [nnodes] number of ranks on each node */
	int *world_ranks;        /* [size] world rank of each rank; NULL: the same (the world) */
	MPI_Comm world;          /* duplicate of MPI_COMM_WORLD for measurements */
	MPI_Comm local;          /* ranks of this host (MPI_Comm_split_type SHARED) */
	MPI_Comm leaders;        /* local rank 0 of each host, by node; MPI_COMM_NULL elsewhere */
	char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING];
};

/* The MPI_COMM_WORLD rank of rank r of ctx (ctx may be a sub-context, bench/scale.h). */
static inline int mpictx_world_rank(const struct mpictx *ctx, int r)
{
	return ctx->world_ranks ? ctx->world_ranks[r] : r;
}

/*
 * Initialises MPI (asking for MPI_THREAD_MULTIPLE, which the watchdog uses)
 * and fills ctx. Returns 0 or -1 after logging why.
 */
int mpictx_init(struct mpictx *ctx, int *argc, char ***argv);

/* Frees ctx and finalises MPI. */
void mpictx_fini(struct mpictx *ctx);

/*
 * The world rank the launcher assigned to this process, read from its
 * environment before MPI_Init (Open MPI, PMIx, Slurm, MPICH); 0 when not
 * launched by one. Lets usage errors print once, without starting MPI.
 */
int mpictx_env_rank(void);

/*
 * Waits for req by testing it between naps of 0.1 ms instead of spinning in
 * MPI's progress loop: for ranks that wait on others (idle ranks of a pair
 * tournament, ranks done with their file while the slowest still writes), so
 * that they leave the cores to the ranks working and, where several hosts
 * share one kernel (an emulated cluster), to its network stack and
 * filesystem daemons. Never inside a timed region that waits on the network.
 * Returns 0, or -1 when MPI failed.
 */
int mpictx_nap_wait(MPI_Request *req);
/* MPI_Barrier and MPI_Bcast (root 0) completed by mpictx_nap_wait. */
int mpictx_nap_barrier(MPI_Comm comm);
int mpictx_nap_bcast(void *buf, int count, MPI_Datatype type, MPI_Comm comm);
#endif
