/* The mpi backend: collectives on host memory through the MPI library. */
#include "backend.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MPI_Comm comm = MPI_COMM_NULL;
static char last_error[MPI_MAX_ERROR_STRING + 64];

static int mpi_fail(const char *call, int code)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;

	MPI_Error_string(code, msg, &len);
	snprintf(last_error, sizeof(last_error), "%s failed: %s", call, msg);
	return -1;
}

static int mpi_init(const struct mpictx *mpi, char *why, size_t len)
{
	int rc = MPI_Comm_dup(mpi->world, &comm);

	if (rc != MPI_SUCCESS) {
		snprintf(why, len, "cannot duplicate the world communicator");
		return -1;
	}
	/* errors come back as codes, so a failure is a record, not an abort */
	MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
	return 0;
}

static void mpi_fini(void)
{
	if (comm != MPI_COMM_NULL)
		MPI_Comm_free(&comm);
}

static MPI_Datatype mpi_type(enum cc_dtype t)
{
	switch (t) {
	case CC_FLOAT: return MPI_FLOAT;
	case CC_DOUBLE: return MPI_DOUBLE;
	default: return MPI_INT32_T;
	}
}

static MPI_Op mpi_op(enum cc_redop op)
{
	switch (op) {
	case CC_PROD: return MPI_PROD;
	case CC_MIN: return MPI_MIN;
	case CC_MAX: return MPI_MAX;
	default: return MPI_SUM;
	}
}

static int mpi_supports(enum coll_id id, enum cc_dtype t, enum cc_redop op)
{
	(void)id;
	return t < CC_NDTYPES && op < CC_NOPS;
}

static void *mpi_alloc(size_t bytes)
{
	void *p = NULL;

	/* page-aligned, like pinned buffers; at least one byte so it is never NULL */
	if (posix_memalign(&p, 4096, bytes ? bytes : 1))
		return NULL;
	return p;
}

static void mpi_release(void *p)
{
	free(p);
}

static int mpi_copy(void *dst, const void *src, size_t bytes)
{
	memcpy(dst, src, bytes);
	return 0;
}

static int mpi_start(const struct coll_args *a)
{
	MPI_Datatype t = mpi_type(a->dtype);
	int n = (int)a->count, rc;

	if (a->count > INT_MAX) {
		snprintf(last_error, sizeof(last_error),
			 "%zu elements exceed the int count of MPI calls", a->count);
		return -1;
	}
	switch (a->id) {
	case COLL_ALL_REDUCE:
		rc = MPI_Allreduce(a->send, a->recv, n, t, mpi_op(a->op), comm);
		return rc == MPI_SUCCESS ? 0 : mpi_fail("MPI_Allreduce", rc);
	case COLL_ALL_GATHER:
		rc = MPI_Allgather(a->send, n, t, a->recv, n, t, comm);
		return rc == MPI_SUCCESS ? 0 : mpi_fail("MPI_Allgather", rc);
	case COLL_REDUCE_SCATTER:
		rc = MPI_Reduce_scatter_block(a->send, a->recv, n, t, mpi_op(a->op), comm);
		return rc == MPI_SUCCESS ? 0 : mpi_fail("MPI_Reduce_scatter_block", rc);
	case COLL_ALLTOALL:
		rc = MPI_Alltoall(a->send, n, t, a->recv, n, t, comm);
		return rc == MPI_SUCCESS ? 0 : mpi_fail("MPI_Alltoall", rc);
	case COLL_BROADCAST: {
		int rank;

		/* the root sends from its input, the others receive into their output */
		MPI_Comm_rank(comm, &rank);
		rc = MPI_Bcast(rank == a->root ? (void *)a->send : a->recv, n, t, a->root, comm);
		return rc == MPI_SUCCESS ? 0 : mpi_fail("MPI_Bcast", rc);
	}
	}
	snprintf(last_error, sizeof(last_error), "unknown collective %d", (int)a->id);
	return -1;
}

static int mpi_wait(void)
{
	return 0;  /* MPI collectives above are blocking */
}

static const char *mpi_error(void)
{
	return last_error;
}

const struct backend backend_mpi = {
	.name = "mpi",
	.memory = "host",
	.init = mpi_init,
	.fini = mpi_fini,
	.supports = mpi_supports,
	.alloc = mpi_alloc,
	.release = mpi_release,
	.to_buffer = mpi_copy,
	.to_host = mpi_copy,
	.start = mpi_start,
	.wait = mpi_wait,
	.error = mpi_error,
};
