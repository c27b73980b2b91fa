/*
 * tests/fakes/fakenccl.c: the NCCL calls of the nccl backend, done with MPI
 * on the test double's "device" memory (host memory, tests/fakes/fake.h).
 * A communicator must span the whole job (MPI_COMM_WORLD, in rank order):
 * the backend's plain sweep; --scale's sub-communicators get ncclInvalidUsage.
 * Each call runs when it is enqueued, after the stream's earlier work.
 */
#ifdef HAVE_NCCL
#include "fake.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ncclComm {
	MPI_Comm comm;
	int rank, size;
	int phys;                /* the GPU current at init: the communicator's */
};

/* As NCCL, a buffer on another GPU than the communicator's is an error. */
#define CHECK_DEV(c, p) do { if (fake_owner(p) != (c)->phys) return wrong_gpu(c, p); } while (0)

static ncclResult_t fail(const char *msg);

static ncclResult_t wrong_gpu(ncclComm_t c, const void *p)
{
	char msg[200];

	snprintf(msg, sizeof(msg), "buffer %p is on GPU %d, the communicator on GPU %d", p,
		 fake_owner(p), c->phys);
	return fail(msg);
}

static int in_group;
static MPI_Request reqs[1024];
static int nreqs;
static char last[256];

static ncclResult_t fail(const char *msg)
{
	snprintf(last, sizeof(last), "%s (test double)", msg);
	return ncclInvalidUsage;
}

static MPI_Datatype mpi_type(ncclDataType_t t)
{
	switch (t) {
	case ncclFloat: return MPI_FLOAT;
	case ncclDouble: return MPI_DOUBLE;
	case ncclInt32: return MPI_INT;
	default: return MPI_DATATYPE_NULL;
	}
}

static size_t type_size(ncclDataType_t t)
{
	return t == ncclDouble ? 8 : 4;
}

static MPI_Op mpi_op(ncclRedOp_t op)
{
	switch (op) {
	case ncclProd: return MPI_PROD;
	case ncclMin: return MPI_MIN;
	case ncclMax: return MPI_MAX;
	default: return MPI_SUM;
	}
}

/* What the stream queued before this call has run. */
static void settle(cudaStream_t s)
{
	cudaStreamSynchronize(s);
}

/* The kernel's tail: the stream stays busy until polled (CCDIAG_FAKECUDA_BUSY). */
static ncclResult_t done(cudaStream_t s)
{
	return fake_stream_work(s, 1e-6, NULL, NULL) ? ncclSystemError : ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
	memset(id, 0, sizeof(*id));
	snprintf(id->internal, sizeof(id->internal), "ccdiag-fake-nccl");
	return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int n, ncclUniqueId id, int rank,
				    ncclConfig_t *cfg)
{
	int world, me;
	struct ncclComm *c;

	(void)id, (void)cfg;
	*comm = NULL;
	if (fake_count() < 1 || fake_touch(fake_current()))
		return fail("no usable device");
	MPI_Comm_size(MPI_COMM_WORLD, &world);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	if (n != world || rank != me)
		return fail("the test double's communicators span the whole job only");
	c = calloc(1, sizeof(*c));
	if (!c)
		return ncclSystemError;
	MPI_Comm_dup(MPI_COMM_WORLD, &c->comm);
	c->rank = rank;
	c->size = n;
	c->phys = fake_current()->phys;
	*comm = c;
	return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *r)
{
	(void)comm;
	*r = ncclSuccess;
	return ncclSuccess;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
	(void)comm;
	return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	if (comm) {
		MPI_Comm_free(&comm->comm);
		free(comm);
	}
	return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm)
{
	/* may run on the watchdog's thread, which must not call MPI: the exit cleans up */
	(void)comm;
	return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t r)
{
	return r == ncclSuccess ? "no error" : r == ncclInvalidUsage ? "invalid usage" :
	       "unhandled error";
}

const char *ncclGetLastError(ncclComm_t comm)
{
	(void)comm;
	return last;
}

ncclResult_t ncclAllReduce(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op,
			   ncclComm_t c, cudaStream_t st)
{
	CHECK_DEV(c, s);
	CHECK_DEV(c, r);
	settle(st);
	MPI_Allreduce(s == r ? MPI_IN_PLACE : s, r, (int)n, mpi_type(t), mpi_op(op), c->comm);
	return done(st);
}

ncclResult_t ncclAllGather(const void *s, void *r, size_t n, ncclDataType_t t, ncclComm_t c,
			   cudaStream_t st)
{
	void *tmp = malloc(n * type_size(t) + 1);

	if (!tmp)
		return ncclSystemError;
	if (fake_owner(s) != c->phys || fake_owner(r) != c->phys) {
		free(tmp);
		return wrong_gpu(c, fake_owner(s) != c->phys ? s : r);
	}
	settle(st);
	memcpy(tmp, s, n * type_size(t));
	MPI_Allgather(tmp, (int)n, mpi_type(t), r, (int)n, mpi_type(t), c->comm);
	free(tmp);
	return done(st);
}

ncclResult_t ncclReduceScatter(const void *s, void *r, size_t n, ncclDataType_t t,
			       ncclRedOp_t op, ncclComm_t c, cudaStream_t st)
{
	size_t all = n * type_size(t) * (size_t)c->size;
	void *tmp = malloc(all + 1);

	if (!tmp)
		return ncclSystemError;
	settle(st);
	memcpy(tmp, s, all);
	MPI_Reduce_scatter_block(tmp, r, (int)n, mpi_type(t), mpi_op(op), c->comm);
	free(tmp);
	return done(st);
}

ncclResult_t ncclBroadcast(const void *s, void *r, size_t n, ncclDataType_t t, int root,
			   ncclComm_t c, cudaStream_t st)
{
	settle(st);
	if (c->rank == root && s != r)
		memcpy(r, s, n * type_size(t));
	MPI_Bcast(r, (int)n, mpi_type(t), root, c->comm);
	return done(st);
}

ncclResult_t ncclGroupStart(void)
{
	in_group++;
	return ncclSuccess;
}

ncclResult_t ncclGroupEnd(void)
{
	if (in_group > 0 && --in_group == 0 && nreqs) {
		MPI_Waitall(nreqs, reqs, MPI_STATUSES_IGNORE);
		nreqs = 0;
	}
	return ncclSuccess;
}

static ncclResult_t p2p(int send, void *buf, size_t n, ncclDataType_t t, int peer, ncclComm_t c,
			cudaStream_t st)
{
	if (nreqs >= 1024)
		return fail("more than 1024 sends and receives in one group");
	settle(st);
	if (send)
		MPI_Isend(buf, (int)n, mpi_type(t), peer, 77, c->comm, &reqs[nreqs++]);
	else
		MPI_Irecv(buf, (int)n, mpi_type(t), peer, 77, c->comm, &reqs[nreqs++]);
	if (!in_group)
		return ncclGroupStart(), ncclGroupEnd();
	return ncclSuccess;
}

ncclResult_t ncclSend(const void *s, size_t n, ncclDataType_t t, int peer, ncclComm_t c,
		      cudaStream_t st)
{
	return p2p(1, (void *)s, n, t, peer, c, st);
}

ncclResult_t ncclRecv(void *r, size_t n, ncclDataType_t t, int peer, ncclComm_t c,
		      cudaStream_t st)
{
	return p2p(0, r, n, t, peer, c, st);
}
#endif /* HAVE_NCCL */
