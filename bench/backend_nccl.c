/*
 * The nccl backend: collectives on GPU memory through NCCL, one GPU per rank
 * (local rank r uses GPU r, or the r-th of --gpus). The sweep (bench/sweep.c)
 * times, checks and records them exactly as it does for the mpi backend.
 *
 * Hangs: the communicator is created non-blocking (config.blocking = 0), so
 * no NCCL call blocks the host. wait() polls the stream and
 * ncclCommGetAsyncError; an asynchronous error aborts the communicator and
 * fails the measurement; passing the watchdog's deadline aborts the
 * communicator and leaves the rest to the watchdog, which writes the
 * timeout record naming the ranks not done and ends the job. The watchdog
 * also calls back here (watchdog_on_abort) to abort the communicator when
 * it ends the job while this rank was elsewhere.
 *
 * init/fini may run more than once, on any struct mpictx (a sub-communicator
 * of the job included): everything is derived from the mpictx given.
 */
#include "backend.h"
#include "../gpu/gpu.h"

#ifndef HAVE_NCCL
const struct backend backend_nccl = {
	.name = "nccl",
	.memory = "device",
#ifdef HAVE_CUDA
	.missing = "built without NCCL",
#else
	.missing = "built without CUDA and NCCL",
#endif
};
#else

#include "../core/log.h"
#include "../core/timer.h"
#include "../core/watchdog.h"

#include <cuda_runtime.h>
#include <nccl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NC_POLL_EVERY 256        /* stream polls between two async-error checks */
#define NC_HOOK_WAIT_S 2         /* the watchdog's abort waits this long for the lock */

static struct {
	ncclComm_t comm;
	cudaStream_t stream;
	int dev, rank, size;
	int aborted;                 /* the communicator was aborted (deadline or error) */
	pthread_mutex_t lock;        /* this thread's NCCL calls vs the watchdog's abort */
	char err[512];
} nc = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int nc_fail(const char *call, ncclResult_t r)
{
	const char *last = nc.comm ? ncclGetLastError(nc.comm) : NULL;

	snprintf(nc.err, sizeof(nc.err), "NCCL: %s: %s%s%s", call, ncclGetErrorString(r),
		 last && *last ? ": " : "", last && *last ? last : "");
	return -1;
}

static int nc_cuda_fail(const char *call, cudaError_t e)
{
	snprintf(nc.err, sizeof(nc.err), "CUDA: %s: %s", call, cudaGetErrorString(e));
	return -1;
}

/* Aborts the communicator once; call with nc.lock held. */
static void abort_locked(void)
{
	if (nc.comm && !nc.aborted) {
		ncclCommAbort(nc.comm);
		nc.aborted = 1;
		nc.comm = NULL;
	}
}

/* Called by the watchdog thread just before it ends the job. */
static void abort_hook(void)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += NC_HOOK_WAIT_S;
	/* the main thread may sit inside an NCCL call: the process exit cleans up then */
	if (pthread_mutex_timedlock(&nc.lock, &until))
		return;
	abort_locked();
	pthread_mutex_unlock(&nc.lock);
}

/*
 * With a non-blocking communicator a call may return ncclInProgress; no
 * other NCCL call may follow until ncclCommGetAsyncError says it is done.
 * Polls until then or until deadline (timer_now() clock, 0 = none); returns
 * the final state, ncclInProgress when the deadline passed.
 */
static ncclResult_t settle(ncclResult_t r, double deadline, int nap_us)
{
	while (r == ncclInProgress) {
		if (deadline > 0 && timer_now() > deadline)
			return ncclInProgress;
		if (nap_us)
			usleep((useconds_t)nap_us);
		else
			sched_yield();
		if (ncclCommGetAsyncError(nc.comm, &r) != ncclSuccess)
			return ncclInternalError;
	}
	return r;
}

static void release_stream(void)
{
	if (nc.stream) {
		cudaStreamDestroy(nc.stream);
		nc.stream = NULL;
	}
}

/* Creates the communicator on every rank of mpi->world; 0 or -1 with why. */
static int create_comm(const struct mpictx *mpi, char *why, size_t len)
{
	ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
	double t = watchdog_timeout(), deadline = t > 0 ? timer_now() + t : 0;
	ncclUniqueId id;
	ncclResult_t r = ncclSuccess;
	int mine = 0, rc;

	memset(&id, 0, sizeof(id));
	if (nc.rank == 0)
		r = ncclGetUniqueId(&id);
	MPI_Bcast(&r, (int)sizeof(r), MPI_BYTE, 0, mpi->world);
	if (r != ncclSuccess) {
		snprintf(why, len, "NCCL: ncclGetUniqueId on rank 0: %s", ncclGetErrorString(r));
		return -1;
	}
	MPI_Bcast(&id, (int)sizeof(id), MPI_BYTE, 0, mpi->world);
	cfg.blocking = 0;
	r = ncclCommInitRankConfig(&nc.comm, nc.size, id, nc.rank, &cfg);
	if (nc.comm)
		r = settle(r, deadline, 1000);
	if (r == ncclInProgress) {
		snprintf(why, len, "NCCL: the communicator was not created within %.0f s (--timeout)", t);
		mine = -1;
	} else if (r != ncclSuccess) {
		nc_fail("ncclCommInitRankConfig", r);
		snprintf(why, len, "%s", nc.err);
		mine = -1;
	}
	rc = run_agree(mpi->world, mine, mpi->host, why, len);
	if (rc) {
		pthread_mutex_lock(&nc.lock);
		abort_locked();
		pthread_mutex_unlock(&nc.lock);
	}
	return rc ? -1 : 0;
}

static int nccl_init(const struct mpictx *mpi, char *why, size_t len)
{
	int mine, rc;
	cudaError_t e;

	pthread_mutex_lock(&nc.lock);
	nc.comm = NULL;
	nc.aborted = 0;
	nc.err[0] = '\0';
	pthread_mutex_unlock(&nc.lock);
	nc.stream = NULL;
	why[0] = '\0';
	MPI_Comm_rank(mpi->world, &nc.rank);
	MPI_Comm_size(mpi->world, &nc.size);
	mine = gpu_select(mpi, &nc.dev, why, len);
	if (mine == 0 && (e = cudaStreamCreateWithFlags(&nc.stream, cudaStreamNonBlocking)) != cudaSuccess) {
		gpu_cuda_fail(e, "cudaStreamCreate", why, len);
		mine = 1;
	}
	/* every rank takes the same path: one rank without a GPU skips them all */
	rc = run_agree(mpi->world, mine, mpi->host, why, len);
	if (rc == 0)
		rc = create_comm(mpi, why, len);
	if (rc) {
		release_stream();
		return rc;
	}
	watchdog_on_abort(abort_hook);
	return 0;
}

static void nccl_fini(void)
{
	watchdog_on_abort(NULL);
	pthread_mutex_lock(&nc.lock);
	if (nc.comm && !nc.aborted) {
		double t = watchdog_timeout();
		ncclResult_t r = ncclCommFinalize(nc.comm);

		/* finalize is collective and may wait for the others; a stuck peer gets aborted */
		if (settle(r, t > 0 ? timer_now() + t : 0, 1000) == ncclSuccess)
			ncclCommDestroy(nc.comm);
		else
			ncclCommAbort(nc.comm);
	}
	nc.comm = NULL;
	nc.aborted = 0;
	pthread_mutex_unlock(&nc.lock);
	release_stream();
}

static int nccl_supports(enum coll_id id, enum cc_dtype t, enum cc_redop op)
{
	(void)id;
	return t < CC_NDTYPES && op < CC_NOPS;
}

static void *nccl_alloc(size_t bytes)
{
	void *p = NULL;

	if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess)
		return NULL;
	return p;
}

static void nccl_release(void *p)
{
	cudaFree(p);
}

/*
 * Staging copies go on the collectives' own stream and are waited for:
 * a plain cudaMemcpy runs on the default stream, which a non-blocking
 * stream does not wait for, and from pageable memory it may return before
 * its DMA has landed.
 */
static int nccl_to_buffer(void *dst, const void *host, size_t bytes)
{
	cudaError_t e = cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, nc.stream);

	if (e == cudaSuccess)
		e = cudaStreamSynchronize(nc.stream);
	return e == cudaSuccess ? 0 : nc_cuda_fail("copy to the device", e);
}

static int nccl_to_host(void *host, const void *src, size_t bytes)
{
	cudaError_t e = cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, nc.stream);

	if (e == cudaSuccess)
		e = cudaStreamSynchronize(nc.stream);
	return e == cudaSuccess ? 0 : nc_cuda_fail("copy to the host", e);
}

static ncclDataType_t nc_type(enum cc_dtype t)
{
	switch (t) {
	case CC_DOUBLE: return ncclDouble;
	case CC_INT32: return ncclInt32;
	default: return ncclFloat;
	}
}

static ncclRedOp_t nc_op(enum cc_redop op)
{
	switch (op) {
	case CC_PROD: return ncclProd;
	case CC_MIN: return ncclMin;
	case CC_MAX: return ncclMax;
	default: return ncclSum;
	}
}

/* Every rank sends block p of its input to rank p and receives block p from it. */
static ncclResult_t alltoall(const struct coll_args *a)
{
	size_t blk = a->count * dtype_size(a->dtype);
	ncclDataType_t t = nc_type(a->dtype);
	ncclResult_t r = ncclGroupStart();

	for (int p = 0; p < nc.size && r == ncclSuccess; p++) {
		r = ncclSend((const char *)a->send + (size_t)p * blk, a->count, t, p, nc.comm,
			     nc.stream);
		if (r == ncclSuccess)
			r = ncclRecv((char *)a->recv + (size_t)p * blk, a->count, t, p, nc.comm,
				     nc.stream);
	}
	/* the group is always closed, even after an error */
	if (r == ncclSuccess)
		return ncclGroupEnd();
	ncclGroupEnd();
	return r;
}

static ncclResult_t enqueue(const struct coll_args *a)
{
	ncclDataType_t t = nc_type(a->dtype);

	switch (a->id) {
	case COLL_ALL_REDUCE:
		return ncclAllReduce(a->send, a->recv, a->count, t, nc_op(a->op), nc.comm, nc.stream);
	case COLL_ALL_GATHER:
		return ncclAllGather(a->send, a->recv, a->count, t, nc.comm, nc.stream);
	case COLL_REDUCE_SCATTER:
		return ncclReduceScatter(a->send, a->recv, a->count, t, nc_op(a->op), nc.comm,
					 nc.stream);
	case COLL_ALLTOALL:
		return alltoall(a);
	case COLL_BROADCAST:
		return ncclBroadcast(a->send, a->recv, a->count, t, a->root, nc.comm, nc.stream);
	}
	return ncclInvalidArgument;
}

static const char *call_name(enum coll_id id)
{
	static const char *const names[] = { "ncclAllReduce", "ncclAllGather", "ncclReduceScatter",
					     "ncclSend/ncclRecv group", "ncclBroadcast" };

	return (unsigned)id < sizeof(names) / sizeof(names[0]) ? names[id] : "?";
}

/* Past the deadline: abort the communicator and wait for the watchdog to end the job. */
static void park(void)
{
	pthread_mutex_lock(&nc.lock);
	abort_locked();
	pthread_mutex_unlock(&nc.lock);
	log_error("nccl: a collective passed its deadline; communicator aborted, waiting for "
		  "the watchdog to end the run");
	for (;;)
		sleep(1);
}

static int nccl_start(const struct coll_args *a)
{
	double deadline = watchdog_deadline();  /* read before the lock: see abort_hook */
	ncclResult_t r;

	pthread_mutex_lock(&nc.lock);
	if (nc.aborted || !nc.comm) {
		pthread_mutex_unlock(&nc.lock);
		snprintf(nc.err, sizeof(nc.err), "NCCL: the communicator was aborted earlier");
		return -1;
	}
	r = settle(enqueue(a), deadline, 0);
	if (r != ncclSuccess && r != ncclInProgress) {
		nc_fail(call_name(a->id), r);
		abort_locked();
	}
	pthread_mutex_unlock(&nc.lock);
	if (r == ncclInProgress)
		park();
	return r == ncclSuccess ? 0 : -1;
}

/* An asynchronous error (a peer died, the network failed) aborts the communicator. */
static int check_async(void)
{
	ncclResult_t st = ncclSuccess;
	int rc = 0;

	pthread_mutex_lock(&nc.lock);
	if (nc.aborted || !nc.comm) {
		snprintf(nc.err, sizeof(nc.err), "NCCL: the communicator was aborted");
		rc = -1;
	} else if (ncclCommGetAsyncError(nc.comm, &st) != ncclSuccess ||
		   (st != ncclSuccess && st != ncclInProgress)) {
		nc_fail("asynchronous error", st);
		abort_locked();
		rc = -1;
	}
	pthread_mutex_unlock(&nc.lock);
	return rc;
}

static int nccl_wait(void)
{
	double deadline = watchdog_deadline();

	for (unsigned k = 1;; k++) {
		cudaError_t e = cudaStreamQuery(nc.stream);

		if (e == cudaSuccess)
			return check_async();
		if (e != cudaErrorNotReady)
			return nc_cuda_fail("cudaStreamQuery", e);
		/* give the core away in each idle poll, as nccl-tests does: with one core
		 * per rank (srun's default, --bind-to core) a spin starves NCCL's proxy
		 * thread, which drives the inter-node transfers */
		sched_yield();
		if (k % NC_POLL_EVERY)
			continue;
		if (check_async())
			return -1;
		if (deadline > 0 && timer_now() > deadline)
			park();
	}
}

static const char *nccl_error(void)
{
	return nc.err;
}

static void *nccl_stream(void)
{
	return nc.stream;
}

const struct backend backend_nccl = {
	.name = "nccl",
	.memory = "device",
	.stream = nccl_stream,
	.init = nccl_init,
	.fini = nccl_fini,
	.supports = nccl_supports,
	.alloc = nccl_alloc,
	.release = nccl_release,
	.to_buffer = nccl_to_buffer,
	.to_host = nccl_to_host,
	.start = nccl_start,
	.wait = nccl_wait,
	.error = nccl_error,
	.transport = gpu_transport,
};
#endif
