/*
 * trainstep_gpu.c: the trainstep probe on GPUs (trainstep.h), one GPU per
 * rank, as the nccl backend picks it:
 *  - the layers of trainstep_host.c with bf16 weights and activations;
 *    the products run on cuBLASLt (the gemm probe's loader, lt.h) on the
 *    compute stream, fp32 accumulation; each weight's gradient is written
 *    in fp32 (as PyTorch's autocast leaves gradients of fp32 parameters,
 *    the ones DDP all-reduces) into one buffer in backward order;
 *  - when a bucket's last gradient product is queued, an event is recorded
 *    on the compute stream, the nccl backend's stream waits for it, and the
 *    bucket's ncclAllReduce is queued there: the reductions run on their
 *    own stream while the backward goes on, as DDP's do;
 *  - every time is a CUDA event pair: the step from its first product to
 *    the compute stream's end after waiting for the last reduction; ready
 *    is the last bucket's event.
 * The host waits with a deadline (the watchdog's): a bucket that never
 * completes stops the rank, the nccl backend aborts its communicator and
 * the watchdog's timeout record names the ranks not done.
 */
#include "trainstep.h"
#include "probe.h"

/* what the engine is, built or not */
#define TS_GPU_DESC .backend = "nccl", .dtype = "bf16", \
	.compute = "gpu: cuBLASLt bf16 products, fp32 gradients", .act_size = 2, .hidden_multiple = 8

#if defined(HAVE_CUDA) && defined(HAVE_CUBLASLT) && defined(HAVE_NCCL)

#include "lt.h"
#include "../bench/backend.h"
#include "../core/log.h"
#include "../core/timer.h"
#include "../core/watchdog.h"
#include "../gpu/gpu.h"

#include <cuda_runtime.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WORKSPACE ((size_t)32 << 20)   /* cuBLASLt workspace, as the gemm probe gives it */

/* the forward's 4 products, the backward's 8 */
enum { F_QKV, F_O, F_1, F_2, B_DW2, B_DU, B_DW1, B_DA, B_DWO, B_DWQ, B_DN1, B_DN2, NPLAN };

struct gpu {
	struct ts *t;
	int dev;
	cudaStream_t cs;                 /* the products */
	cudaStream_t ns;                 /* the nccl backend's: the reductions */
	cublasLtHandle_t lt;
	void *ws;
	uint16_t *w, *x, *q, *a, *u, *dx, *dn, *du, *da;  /* bf16 */
	float *g, *chk;                  /* gradients (fp32, backward order); the last bucket before its reduction */
	cudaEvent_t e0, e1, ecomm, *eb;
	struct lt_desc p[NPLAN];          /* one per product: row-major C = alpha op(A) op(B) + beta C */
	int comm_up;                     /* the nccl backend is initialised */
};

/* the nccl backend (bench/backend_nccl.c): communicator, stream, hang handling */
static const struct backend *nccl(void)
{
	return backend_find("nccl");
}

static int cuda_why(cudaError_t e, const char *what, struct ts *t, char *why, size_t len)
{
	if (e == cudaSuccess)
		return 0;
	snprintf(why, len, "%s:%d: GPU: %s: CUDA: %s", t->mpi->host, t->mpi->rank, what, cudaGetErrorString(e));
	return -1;
}

/* bf16 of x, rounded to nearest even */
static uint16_t bf16(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof(u));
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

/* n bf16 values uniform in [-r, r] into device memory at d, from the xorshift state s */
static cudaError_t fill_bf16(uint16_t *d, size_t n, float r, unsigned long long *s)
{
	size_t chunk = (size_t)1 << 20;
	float *f = malloc(chunk * sizeof(float));
	uint16_t *h = malloc(chunk * sizeof(uint16_t));
	cudaError_t e = f && h ? cudaSuccess : cudaErrorMemoryAllocation;

	for (size_t off = 0; off < n && e == cudaSuccess; off += chunk) {
		size_t k = n - off < chunk ? n - off : chunk;

		ts_fill(f, k, r, s);
		for (size_t i = 0; i < k; i++)
			h[i] = bf16(f[i]);
		e = cudaMemcpy(d + off, h, k * sizeof(uint16_t), cudaMemcpyHostToDevice);
	}
	free(f);
	free(h);
	return e;
}

static cublasStatus_t plan_make(struct gpu *gs, struct lt_desc *p, int ta, int tb, long m, long n, long k,
				int out32)
{
	cublasOperation_t opa = tb ? CUBLAS_OP_T : CUBLAS_OP_N, opb = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
	cublasLtMatmulPreference_t pref = NULL;
	cublasLtMatmulHeuristicResult_t res;
	size_t ws = WORKSPACE;
	/* every operand starts 16 B aligned (hidden a multiple of 8: trainstep.c), not the 256 B the
	 * heuristic assumes by default: an algorithm that needs more would refuse the pointer */
	uint32_t align = 16;
	int got = 0;
	cublasStatus_t st;

	/* column-major, the row-major product transposed: C^T (n x m) = op(B)^T op(A)^T */
	if ((st = cublasLtMatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F)) ||
	    (st = cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof(opa))) ||
	    (st = cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof(opb))) ||
	    (st = cublasLtMatrixLayoutCreate(&p->la, CUDA_R_16BF, (uint64_t)(tb ? k : n), (uint64_t)(tb ? n : k),
					     tb ? k : n)) ||
	    (st = cublasLtMatrixLayoutCreate(&p->lb, CUDA_R_16BF, (uint64_t)(ta ? m : k), (uint64_t)(ta ? k : m),
					     ta ? m : k)) ||
	    (st = cublasLtMatrixLayoutCreate(&p->lc, out32 ? CUDA_R_32F : CUDA_R_16BF, (uint64_t)n, (uint64_t)m,
					     n)) ||
	    (st = cublasLtMatmulPreferenceCreate(&pref)) ||
	    (st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
							sizeof(ws))) ||
	    (st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align,
							sizeof(align))) ||
	    (st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align,
							sizeof(align))) ||
	    (st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align,
							sizeof(align))) ||
	    (st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align,
							sizeof(align))) ||
	    (st = cublasLtMatmulAlgoGetHeuristic(gs->lt, p->op, p->la, p->lb, p->lc, p->lc, pref, 1, &res, &got)))
		goto out;
	if (got < 1 || res.state != CUBLAS_STATUS_SUCCESS)
		st = CUBLAS_STATUS_NOT_SUPPORTED;
	else
		p->algo = res.algo;
out:
	if (pref)
		cublasLtMatmulPreferenceDestroy(pref);
	return st;
}

/* queues plan k: C = alpha op(A) op(B) + beta C on the compute stream */
static int mm(struct gpu *gs, int k, const void *A, const void *B, float alpha, float beta, void *C)
{
	struct lt_desc *p = &gs->p[k];

	return cublasLtMatmul(gs->lt, p->op, &alpha, B, p->la, A, p->lb, &beta, C, p->lc, C, p->lc, &p->algo,
			      gs->ws, WORKSPACE, gs->cs) == CUBLAS_STATUS_SUCCESS ? 0 : -1;
}

static uint16_t *wq(struct gpu *gs, long l) { return gs->w + l * 12 * gs->t->sh.h * gs->t->sh.h; }
static uint16_t *wo(struct gpu *gs, long l) { return wq(gs, l) + 3 * gs->t->sh.h * gs->t->sh.h; }
static uint16_t *w1(struct gpu *gs, long l) { return wo(gs, l) + gs->t->sh.h * gs->t->sh.h; }
static uint16_t *w2(struct gpu *gs, long l) { return w1(gs, l) + 4 * gs->t->sh.h * gs->t->sh.h; }

/*
 * Waits for ev, giving the core away between polls, until the watchdog's
 * deadline less a margin: then the backend's communicator is aborted and
 * this rank waits for the watchdog to end the job (its record names the
 * ranks not done). Returns 0, or -1 with why on a CUDA error.
 */
static int wait_event(struct ts *t, cudaEvent_t ev, char *why, size_t len)
{
	double dl = watchdog_deadline(), margin = fmin(30, watchdog_timeout() / 10);

	for (;;) {
		cudaError_t e = cudaEventQuery(ev);

		if (e == cudaSuccess)
			return 0;
		if (e != cudaErrorNotReady)
			return cuda_why(e, "waiting for the step", t, why, len);
		if (dl > 0 && timer_now() > dl - margin) {
			log_error("trainstep: GPU %s: a step did not complete before its deadline (a hung product "
				  "or bucket); waiting for the watchdog to end the run", t->mpi->host);
			for (;;)
				sleep(1);
		}
		sched_yield();
	}
}

/* the last bucket's gradients written: kept for its check, before the reduction changes them */
static int hand_over(struct gpu *gs, long b, enum ts_mode m)
{
	struct ts *t = gs->t;
	const struct backend *be = nccl();
	float *p = gs->g + (size_t)b * t->bucket_el;
	size_t n = ts_bucket_len(t, b);
	struct coll_args a = { .id = COLL_ALL_REDUCE, .send = p, .recv = p, .count = n, .dtype = CC_FLOAT,
			       .op = CC_SUM };

	if (b == t->nb - 1 &&
	    cudaMemcpyAsync(gs->chk, p, n * sizeof(float), cudaMemcpyDeviceToDevice, gs->cs) != cudaSuccess)
		return -1;
	if (cudaEventRecord(gs->eb[b], gs->cs) != cudaSuccess)
		return -1;
	if (m != TS_FULL)
		return 0;
	if (cudaStreamWaitEvent(gs->ns, gs->eb[b], 0) != cudaSuccess)
		return -1;
	return be->start(&a);
}

static int tsg_step(struct ts *t, enum ts_mode m, double *sec, char *why, size_t len)
{
	struct gpu *gs = t->dev;
	const struct backend *be = nccl();
	long h = t->sh.h, T = t->sh.T, L = t->sh.L;
	size_t done = 0;
	long handed = 0;
	float *g = gs->g, ms = 0;
	const float k = 0.70710678f;   /* dx = (da Wo^T + dq Wqkv^T) / sqrt(2): the synthetic gradient's scale */
	int bad = 0;

	t->ready = 0;
	if (m == TS_COMM) {
		struct coll_args a = { .id = COLL_ALL_REDUCE, .dtype = CC_FLOAT, .op = CC_SUM };

		bad |= cudaEventRecord(gs->e0, gs->ns) != cudaSuccess;
		for (long b = 0; b < t->nb && !bad; b++) {
			a.send = a.recv = gs->g + (size_t)b * t->bucket_el;
			a.count = ts_bucket_len(t, b);
			bad |= be->start(&a) != 0;
		}
		bad |= cudaEventRecord(gs->e1, gs->ns) != cudaSuccess;
	} else {
		bad |= cudaEventRecord(gs->e0, gs->cs) != cudaSuccess;
		for (long l = 0; l < L && !bad; l++) {
			uint16_t *x = gs->x + l * T * h;

			bad |= mm(gs, F_QKV, x, wq(gs, l), 1, 0, gs->q + l * T * 3 * h) ||
			       mm(gs, F_O, x, wo(gs, l), 1, 0, gs->a + l * T * h) ||
			       mm(gs, F_1, gs->a + l * T * h, w1(gs, l), 1, 0, gs->u + l * T * 4 * h) ||
			       mm(gs, F_2, gs->u + l * T * 4 * h, w2(gs, l), 1, 0, x + T * h);
		}
		/* the loss's gradient: the output itself */
		bad |= cudaMemcpyAsync(gs->dx, gs->x + L * T * h, sizeof(uint16_t) * T * h, cudaMemcpyDeviceToDevice,
				       gs->cs) != cudaSuccess;
		for (long l = L - 1; l >= 0 && !bad; l--) {
			uint16_t *x = gs->x + l * T * h, *q = gs->q + l * T * 3 * h, *a = gs->a + l * T * h,
				 *u = gs->u + l * T * 4 * h, *sw;
			float *gW2 = g, *gW1 = gW2 + 4 * h * h, *gWo = gW1 + 4 * h * h, *gWq = gWo + h * h;
			size_t sizes[4] = { 4 * h * h, 4 * h * h, h * h, 3 * h * h };

			for (int step = 0; step < 4 && !bad; step++) {
				switch (step) {
				case 0:
					bad |= mm(gs, B_DW2, u, gs->dx, 1, 0, gW2);
					break;
				case 1:
					bad |= mm(gs, B_DU, gs->dx, w2(gs, l), 1, 0, gs->du) ||
					       mm(gs, B_DW1, a, gs->du, 1, 0, gW1);
					break;
				case 2:
					bad |= mm(gs, B_DA, gs->du, w1(gs, l), 1, 0, gs->da) ||
					       mm(gs, B_DWO, x, gs->da, 1, 0, gWo);
					break;
				default:
					bad |= mm(gs, B_DWQ, x, q, 1, 0, gWq);
				}
				done += sizes[step];
				while (!bad && handed < t->nb &&
				       (size_t)handed * t->bucket_el + ts_bucket_len(t, handed) <= done)
					bad |= hand_over(gs, handed++, m) != 0;
			}
			bad |= mm(gs, B_DN1, gs->da, wo(gs, l), k, 0, gs->dn) ||
			       mm(gs, B_DN2, q, wq(gs, l), k, 1, gs->dn);
			sw = gs->dx;
			gs->dx = gs->dn;
			gs->dn = sw;
			g = gWq + 3 * h * h;
		}
		if (m == TS_FULL) {
			bad |= cudaEventRecord(gs->ecomm, gs->ns) != cudaSuccess ||
			       cudaStreamWaitEvent(gs->cs, gs->ecomm, 0) != cudaSuccess;
		}
		bad |= cudaEventRecord(gs->e1, gs->cs) != cudaSuccess;
	}
	if (bad) {
		snprintf(why, len, "%s:%d: GPU: queueing the %s failed: %s", t->mpi->host, t->mpi->rank,
			 m == TS_COMM ? "reductions" : "step", be->error() ?: cudaGetErrorString(cudaGetLastError()));
		return -1;
	}
	/* the reductions (the backend's wait: async errors, its deadline), then the step's end */
	if (m != TS_COMPUTE && be->wait()) {
		snprintf(why, len, "%s:%d: %s", t->mpi->host, t->mpi->rank, be->error());
		return -1;
	}
	if (wait_event(t, gs->e1, why, len) ||
	    cuda_why(cudaEventElapsedTime(&ms, gs->e0, gs->e1), "cudaEventElapsedTime", t, why, len))
		return -1;
	*sec = ms / 1e3;
	if (m != TS_COMM) {
		float r = 0;

		if (cudaEventElapsedTime(&r, gs->e0, gs->eb[t->nb - 1]) == cudaSuccess)
			t->ready = r / 1e3;
	}
	return 0;
}

/* the last bucket, reduced and as it was before: sums on the host */
static int tsg_last_sum(struct ts *t, double *got, char *why, size_t len)
{
	struct gpu *gs = t->dev;
	size_t n = ts_bucket_len(t, t->nb - 1);
	float *h = malloc(2 * n * sizeof(float));
	int rc = 0;

	*got = 0;
	if (!h) {
		snprintf(why, len, "out of host memory");
		return -1;
	}
	if (cuda_why(cudaMemcpy(h, gs->g + (size_t)(t->nb - 1) * t->bucket_el, n * sizeof(float),
				cudaMemcpyDeviceToHost), "copying the last bucket", t, why, len) ||
	    cuda_why(cudaMemcpy(h + n, gs->chk, n * sizeof(float), cudaMemcpyDeviceToHost),
		     "copying the last bucket", t, why, len)) {
		rc = -1;
	} else {
		t->chk_local[0] = t->chk_local[1] = 0;
		for (size_t i = 0; i < n; i++) {
			*got += h[i];
			t->chk_local[0] += h[n + i];
			t->chk_local[1] += fabs(h[n + i]);
		}
	}
	free(h);
	return rc;
}

static void tsg_close(struct ts *t)
{
	struct gpu *gs = t->dev;

	if (!gs)
		return;
	if (gs->comm_up)
		nccl()->fini();
	if (gs->dev >= 0) {
		cudaDeviceSynchronize();
		for (int i = 0; i < NPLAN; i++)
			lt_desc_free(&gs->p[i]);
		if (gs->lt)
			cublasLtDestroy(gs->lt);
		for (long b = 0; gs->eb && b < t->nb; b++)
			if (gs->eb[b])
				cudaEventDestroy(gs->eb[b]);
		if (gs->e0)
			cudaEventDestroy(gs->e0);
		if (gs->e1)
			cudaEventDestroy(gs->e1);
		if (gs->ecomm)
			cudaEventDestroy(gs->ecomm);
		cudaFree(gs->w);
		cudaFree(gs->x);
		cudaFree(gs->q);
		cudaFree(gs->a);
		cudaFree(gs->u);
		cudaFree(gs->dx);
		cudaFree(gs->dn);
		cudaFree(gs->du);
		cudaFree(gs->da);
		cudaFree(gs->g);
		cudaFree(gs->chk);
		cudaFree(gs->ws);
		if (gs->cs)
			cudaStreamDestroy(gs->cs);
	}
	free(gs->eb);
	free(gs);
	t->dev = NULL;
}

static int tsg_open(struct ts *t, char *why, size_t len)
{
	long h = t->sh.h, T = t->sh.T, L = t->sh.L;
	size_t P = (size_t)t->sh.params;
	unsigned long long seed = 0x9e3779b97f4a7c15ULL ^ (unsigned long long)(t->mpi->rank + 1) * 7919;
	unsigned long long ws_seed = 0x243f6a8885a308d3ULL;
	struct gpu *gs;
	cudaError_t e;
	int rc;
	static const struct { int ta, tb, out32; } kind[NPLAN] = {
		[F_QKV] = { 0, 0, 0 }, [F_O] = { 0, 0, 0 }, [F_1] = { 0, 0, 0 }, [F_2] = { 0, 0, 0 },
		[B_DW2] = { 1, 0, 1 }, [B_DU] = { 0, 1, 0 }, [B_DW1] = { 1, 0, 1 }, [B_DA] = { 0, 1, 0 },
		[B_DWO] = { 1, 0, 1 }, [B_DWQ] = { 1, 0, 1 }, [B_DN1] = { 0, 1, 0 }, [B_DN2] = { 0, 1, 0 },
	};
	const long dims[NPLAN][3] = {
		[F_QKV] = { T, 3 * h, h }, [F_O] = { T, h, h }, [F_1] = { T, 4 * h, h }, [F_2] = { T, h, 4 * h },
		[B_DW2] = { 4 * h, h, T }, [B_DU] = { T, 4 * h, h }, [B_DW1] = { h, 4 * h, T },
		[B_DA] = { T, h, 4 * h }, [B_DWO] = { h, h, T }, [B_DWQ] = { h, 3 * h, T },
		[B_DN1] = { T, h, h }, [B_DN2] = { T, h, 3 * h },
	};

	if (!(gs = calloc(1, sizeof(*gs)))) {
		snprintf(why, len, "out of host memory");
		return -1;
	}
	t->dev = gs;
	gs->t = t;
	gs->dev = -1;
	/* this rank's GPU, as the nccl backend picks it (collective over the node's ranks) */
	rc = gpu_select(t->mpi, &gs->dev, why, len);
	if (rc) {
		gs->dev = -1;
		return rc;
	}
	if (lt_open(why, len))
		return 1;
	if (!(gs->eb = calloc((size_t)t->nb, sizeof(cudaEvent_t)))) {
		snprintf(why, len, "out of host memory");
		return -1;
	}
#define DMALLOC(p, n) cuda_why(cudaMalloc((void **)&(p), (n)), "cudaMalloc " #p, t, why, len)
	if (cuda_why(cudaStreamCreateWithFlags(&gs->cs, cudaStreamNonBlocking), "cudaStreamCreate", t, why, len) ||
	    DMALLOC(gs->w, 2 * P) || DMALLOC(gs->g, 4 * P) || DMALLOC(gs->x, 2 * (size_t)((L + 1) * T * h)) ||
	    DMALLOC(gs->q, 2 * (size_t)(L * T * 3 * h)) || DMALLOC(gs->a, 2 * (size_t)(L * T * h)) ||
	    DMALLOC(gs->u, 2 * (size_t)(L * T * 4 * h)) || DMALLOC(gs->dx, 2 * (size_t)(T * h)) ||
	    DMALLOC(gs->dn, 2 * (size_t)(T * h)) || DMALLOC(gs->du, 2 * (size_t)(T * 4 * h)) ||
	    DMALLOC(gs->da, 2 * (size_t)(T * h)) || DMALLOC(gs->chk, 4 * t->bucket_el) || DMALLOC(gs->ws, WORKSPACE))
		return -1;
#undef DMALLOC
	if (cuda_why(cudaEventCreate(&gs->e0), "cudaEventCreate", t, why, len) ||
	    cuda_why(cudaEventCreate(&gs->e1), "cudaEventCreate", t, why, len) ||
	    cuda_why(cudaEventCreate(&gs->ecomm), "cudaEventCreate", t, why, len))
		return -1;
	for (long b = 0; b < t->nb; b++)
		if (cuda_why(cudaEventCreate(&gs->eb[b]), "cudaEventCreate", t, why, len))
			return -1;
	if (cublasLtCreate(&gs->lt) != CUBLAS_STATUS_SUCCESS) {
		snprintf(why, len, "%s:%d: GPU: cublasLtCreate failed", t->mpi->host, t->mpi->rank);
		return -1;
	}
	for (int i = 0; i < NPLAN; i++) {
		cublasStatus_t st = plan_make(gs, &gs->p[i], kind[i].ta, kind[i].tb, dims[i][0], dims[i][1],
					      dims[i][2], kind[i].out32);

		if (st != CUBLAS_STATUS_SUCCESS) {
			snprintf(why, len, "%s:%d: GPU: no cuBLASLt algorithm for the %ldx%ldx%ld bf16 product "
				 "(status %d)", t->mpi->host, t->mpi->rank, dims[i][0], dims[i][1], dims[i][2], (int)st);
			return -1;
		}
	}
	/* variance-kept weights, the same on every rank; inputs per rank (as on the host) */
	for (long l = 0; l < L; l++)
		if ((e = fill_bf16(wq(gs, l), (size_t)(3 * h * h), (float)sqrt(3.0 / h), &ws_seed)) ||
		    (e = fill_bf16(wo(gs, l), (size_t)(h * h), (float)sqrt(3.0 / h), &ws_seed)) ||
		    (e = fill_bf16(w1(gs, l), (size_t)(4 * h * h), (float)sqrt(3.0 / h), &ws_seed)) ||
		    (e = fill_bf16(w2(gs, l), (size_t)(4 * h * h), (float)sqrt(3.0 / (4 * h)), &ws_seed)))
			return cuda_why(e, "filling the weights", t, why, len);
	if ((e = fill_bf16(gs->x, (size_t)(T * h), 1.0f, &seed)) ||
	    (e = cudaMemset(gs->g, 0, 4 * P)))
		return cuda_why(e, "filling the inputs", t, why, len);
	return 0;
}

/* collective: the nccl backend's communicator; the reductions go on its stream */
static int tsg_start(struct ts *t, char *why, size_t len)
{
	struct gpu *gs = t->dev;
	int rc = nccl()->init(t->mpi, why, len);

	if (rc)
		return rc;
	gs->comm_up = 1;
	gs->ns = (cudaStream_t)nccl()->stream();
	return 0;
}

const struct ts_engine ts_gpu = {
	TS_GPU_DESC,
	.open = tsg_open,
	.start = tsg_start,
	.step = tsg_step,
	.last_sum = tsg_last_sum,
	.transport = gpu_transport,
	.close = tsg_close,
};

#else

const struct ts_engine ts_gpu = {
	TS_GPU_DESC,
#if !defined(HAVE_CUDA)
	.missing = "built without CUDA: the GPU step (cuBLASLt, NCCL)",
#elif !defined(HAVE_CUBLASLT)
	.missing = "built without cuBLASLt: the GPU step's products",
#else
	.missing = "built without NCCL: the GPU step's reductions",
#endif
};

#endif
