/*
 * trainstep_host.c: the trainstep probe on host memory (trainstep.h):
 *  - each of L layers holds 12 h^2 parameters as four fp32 matrices (the
 *    attention's QKV h x 3h and output h x h, the MLP's h x 4h and 4h x h);
 *    the forward is 4 matmuls a layer over T tokens, the backward 8 (each
 *    weight's gradient and each input's): 6 x params x T FLOPs a step.
 *    Products through OpenBLAS (cblas_sgemm), opened at run time;
 *  - the gradients lie in one buffer in the order the backward writes them
 *    (last layer first), cut into buckets; a bucket is handed to this
 *    rank's communication thread as soon as its last gradient is written,
 *    and that thread all-reduces the buckets in turn with MPI_Allreduce
 *    while the backward goes on, as PyTorch DDP's reducer hands its buckets
 *    to gloo's worker thread (or to NCCL's stream). The reduction is the
 *    blocking MPI_Allreduce that the collective sweep times, so the
 *    estimate's busbw at the bucket size prices the same algorithm (a
 *    non-blocking MPI_Iallreduce is another one in Open MPI, and progresses
 *    only when the rank polls);
 *  - the step ends when every bucket is reduced.
 */
#include "trainstep.h"
#include "probe.h"
#include "../core/timer.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_OPENBLAS

#include <cblas.h>
#include <dlfcn.h>

/* OpenBLAS is opened when the probe runs, as gemm opens cuBLASLt: every other ccprobe skips its load */
static __typeof__(cblas_sgemm) *bl_sgemm;
static void (*bl_threads)(int);

static int blas_open(char *why, size_t len)
{
	static void *h;

	if (h)
		return 0;
	if (!(h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL))) {
		snprintf(why, len, "cannot load libopenblas.so.0: %s", dlerror());
		return -1;
	}
	*(void **)&bl_sgemm = dlsym(h, "cblas_sgemm");
	*(void **)&bl_threads = dlsym(h, "openblas_set_num_threads");
	if (!bl_sgemm) {
		snprintf(why, len, "libopenblas.so.0 has no cblas_sgemm");
		dlclose(h);
		h = NULL;
		return -1;
	}
	if (bl_threads)
		bl_threads(ts_blas_threads);
	return 0;
}

/* the communication thread: reduces buckets [done, ready) in order */
struct comm {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	MPI_Comm world;          /* its own copy of the world: the main thread's calls never mix in */
	long ready, done;        /* buckets handed over; reduced */
	int quit, failed, started;
};

struct host {
	struct ts *t;
	float *w, *g;            /* weights and gradients, [params] each; g in backward order */
	float *x, *q, *a, *u;    /* saved activations: [L+1][T h], [L][T 3h], [L][T h], [L][T 4h] */
	float *dx, *du, *da, *dn; /* scratch */
	long handed;             /* buckets handed over this step */
	long done_el;            /* gradient elements written this step */
	double t0;
	struct comm c;
};

static void *comm_main(void *arg)
{
	struct host *hs = arg;
	struct comm *c = &hs->c;

	pthread_mutex_lock(&c->mu);
	while (!c->quit) {
		if (c->done < c->ready) {
			long b = c->done;
			float *p = hs->g + (size_t)b * hs->t->bucket_el;
			int rc;

			pthread_mutex_unlock(&c->mu);
			rc = MPI_Allreduce(MPI_IN_PLACE, p, (int)ts_bucket_len(hs->t, b), MPI_FLOAT, MPI_SUM, c->world);
			pthread_mutex_lock(&c->mu);
			if (rc != MPI_SUCCESS)
				c->failed = 1;
			c->done++;
			pthread_cond_broadcast(&c->cv);
		} else {
			pthread_cond_wait(&c->cv, &c->mu);
		}
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* weight offsets of layer l: Wqkv [h x 3h], Wo [h x h], W1 [h x 4h], W2 [4h x h] */
static float *wq(struct host *hs, long l) { return hs->w + l * 12 * hs->t->sh.h * hs->t->sh.h; }
static float *wo(struct host *hs, long l) { return wq(hs, l) + 3 * hs->t->sh.h * hs->t->sh.h; }
static float *w1(struct host *hs, long l) { return wo(hs, l) + hs->t->sh.h * hs->t->sh.h; }
static float *w2(struct host *hs, long l) { return w1(hs, l) + 4 * hs->t->sh.h * hs->t->sh.h; }

static void spin_for(double s)
{
	double end = timer_now() + s;

	while (timer_now() < end)
		;
}

/* C[m x n] = (beta) C + op(A) op(B), row-major */
static void mm(struct host *hs, int ta, int tb, long m, long n, long k, const float *A, const float *B,
	       float beta, float *C)
{
	double slow = hs->t->slow, t0 = slow > 1 ? timer_now() : 0;

	bl_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m,
		 (int)n, (int)k, 1.0f, A, ta ? (int)m : (int)k, B, tb ? (int)k : (int)n, beta, C, (int)n);
	if (slow > 1)
		spin_for((slow - 1) * (timer_now() - t0));
}

/* bucket b to the communication thread */
static void hand_over(struct host *hs, long b)
{
	struct ts *t = hs->t;

	if (b == t->nb - 1) {
		const float *p = hs->g + (size_t)b * t->bucket_el;
		size_t n = ts_bucket_len(t, b);

		t->chk_local[0] = t->chk_local[1] = 0;
		for (size_t i = 0; i < n; i++) {
			t->chk_local[0] += p[i];
			t->chk_local[1] += fabs(p[i]);
		}
		t->ready = timer_now() - hs->t0;
	}
	pthread_mutex_lock(&hs->c.mu);
	hs->c.ready = b + 1;
	pthread_cond_broadcast(&hs->c.cv);
	pthread_mutex_unlock(&hs->c.mu);
}

/* n more gradient elements written: hand over the buckets now complete */
static void grads_written(struct host *hs, enum ts_mode m, size_t n)
{
	struct ts *t = hs->t;

	hs->done_el += (long)n;
	if (m != TS_FULL)
		return;
	while (hs->handed < t->nb &&
	       (size_t)hs->handed * t->bucket_el + ts_bucket_len(t, hs->handed) <= (size_t)hs->done_el)
		hand_over(hs, hs->handed++);
}

/* until the communication thread has reduced every bucket; -1 when one failed */
static int wait_reduced(struct host *hs)
{
	int failed;

	pthread_mutex_lock(&hs->c.mu);
	while (hs->c.done < hs->t->nb && !hs->c.failed)
		pthread_cond_wait(&hs->c.cv, &hs->c.mu);
	failed = hs->c.failed;
	pthread_mutex_unlock(&hs->c.mu);
	return failed ? -1 : 0;
}

static void layer_forward(struct host *hs, long l)
{
	long h = hs->t->sh.h, T = hs->t->sh.T;
	float *x = hs->x + l * T * h;

	mm(hs, 0, 0, T, 3 * h, h, x, wq(hs, l), 0, hs->q + l * T * 3 * h);
	mm(hs, 0, 0, T, h, h, x, wo(hs, l), 0, hs->a + l * T * h);
	mm(hs, 0, 0, T, 4 * h, h, hs->a + l * T * h, w1(hs, l), 0, hs->u + l * T * 4 * h);
	mm(hs, 0, 0, T, h, 4 * h, hs->u + l * T * 4 * h, w2(hs, l), 0, x + T * h);
}

static int host_step(struct ts *t, enum ts_mode m, double *sec, char *why, size_t len)
{
	struct host *hs = t->dev;
	long h = t->sh.h, T = t->sh.T, L = t->sh.L;
	float *g = hs->g;

	pthread_mutex_lock(&hs->c.mu);
	hs->c.ready = hs->c.done = 0;
	pthread_mutex_unlock(&hs->c.mu);
	hs->handed = 0;
	hs->done_el = 0;
	t->ready = 0;
	hs->t0 = timer_now();
	if (m == TS_COMM) {
		/* the same buckets, reduced one after the other with nothing to hide under */
		hs->handed = t->nb;
		hand_over(hs, t->nb - 1);
		t->ready = 0;
	} else {
		for (long l = 0; l < L; l++)
			layer_forward(hs, l);
		/* the loss's gradient: the output itself */
		memcpy(hs->dx, hs->x + L * T * h, sizeof(float) * T * h);
		for (long l = L - 1; l >= 0; l--) {
			float *x = hs->x + l * T * h, *q = hs->q + l * T * 3 * h, *a = hs->a + l * T * h,
			      *u = hs->u + l * T * 4 * h;
			float *gW2 = g, *gW1 = gW2 + 4 * h * h, *gWo = gW1 + 4 * h * h, *gWq = gWo + h * h;

			mm(hs, 1, 0, 4 * h, h, T, u, hs->dx, 0, gW2);            /* dW2 = u^T dx */
			grads_written(hs, m, 4 * h * h);
			mm(hs, 0, 1, T, 4 * h, h, hs->dx, w2(hs, l), 0, hs->du); /* du = dx W2^T */
			mm(hs, 1, 0, h, 4 * h, T, a, hs->du, 0, gW1);            /* dW1 = a^T du */
			grads_written(hs, m, 4 * h * h);
			mm(hs, 0, 1, T, h, 4 * h, hs->du, w1(hs, l), 0, hs->da); /* da = du W1^T */
			mm(hs, 1, 0, h, h, T, x, hs->da, 0, gWo);                /* dWo = x^T da */
			grads_written(hs, m, h * h);
			mm(hs, 1, 0, h, 3 * h, T, x, q, 0, gWq);                 /* dWqkv = x^T dq (dq: q) */
			grads_written(hs, m, 3 * h * h);
			mm(hs, 0, 1, T, h, h, hs->da, wo(hs, l), 0, hs->dn);     /* dx = da Wo^T + dq Wqkv^T */
			mm(hs, 0, 1, T, h, 3 * h, q, wq(hs, l), 1, hs->dn);
			/* keep the synthetic gradient's scale: 1/sqrt(2) a layer (two paths add) */
			for (long i = 0; i < T * h; i++)
				hs->dx[i] = hs->dn[i] * 0.70710678f;
			g = gWq + 3 * h * h;
		}
		if (m == TS_COMPUTE)
			t->ready = timer_now() - hs->t0;
	}
	if (m != TS_COMPUTE && wait_reduced(hs)) {
		snprintf(why, len, "%s:%d: MPI_Allreduce of a gradient bucket failed", t->mpi->host, t->mpi->rank);
		return -1;
	}
	*sec = timer_now() - hs->t0;
	return 0;
}

static int host_last_sum(struct ts *t, double *got, char *why, size_t len)
{
	struct host *hs = t->dev;
	const float *p = hs->g + (size_t)(t->nb - 1) * t->bucket_el;
	size_t n = ts_bucket_len(t, t->nb - 1);

	(void)why, (void)len;
	*got = 0;
	for (size_t i = 0; i < n; i++)
		*got += p[i];
	return 0;
}

static void host_close(struct ts *t)
{
	struct host *hs = t->dev;

	if (!hs)
		return;
	if (hs->c.started) {
		pthread_mutex_lock(&hs->c.mu);
		hs->c.quit = 1;
		pthread_cond_broadcast(&hs->c.cv);
		pthread_mutex_unlock(&hs->c.mu);
		pthread_join(hs->c.th, NULL);
	}
	if (hs->c.world != MPI_COMM_NULL)
		MPI_Comm_free(&hs->c.world);
	free(hs->w);
	free(hs->g);
	free(hs->x);
	free(hs->q);
	free(hs->a);
	free(hs->u);
	free(hs->dx);
	free(hs->du);
	free(hs->da);
	free(hs->dn);
	free(hs);
	t->dev = NULL;
}

static int host_open(struct ts *t, char *why, size_t len)
{
	long h = t->sh.h, T = t->sh.T, L = t->sh.L;
	size_t P = (size_t)t->sh.params;
	unsigned long long seed = 0x9e3779b97f4a7c15ULL ^ (unsigned long long)(t->mpi->rank + 1) * 7919;
	struct host *hs;

	if (t->mpi->thread_level < MPI_THREAD_MULTIPLE) {
		snprintf(why, len, "trainstep needs MPI_THREAD_MULTIPLE (its communication thread): this MPI "
			 "gave less");
		return 1;
	}
	if (blas_open(why, len))
		return 1;
	if (!(hs = calloc(1, sizeof(*hs))))
		goto nomem;
	t->dev = hs;
	hs->t = t;
	hs->c.world = MPI_COMM_NULL;
	hs->w = malloc(sizeof(float) * P);
	hs->g = calloc(P, sizeof(float));
	hs->x = malloc(sizeof(float) * (size_t)((L + 1) * T * h));
	hs->q = malloc(sizeof(float) * (size_t)(L * T * 3 * h));
	hs->a = malloc(sizeof(float) * (size_t)(L * T * h));
	hs->u = malloc(sizeof(float) * (size_t)(L * T * 4 * h));
	hs->dx = malloc(sizeof(float) * (size_t)(T * h));
	hs->du = malloc(sizeof(float) * (size_t)(T * 4 * h));
	hs->da = malloc(sizeof(float) * (size_t)(T * h));
	hs->dn = malloc(sizeof(float) * (size_t)(T * h));
	if (!hs->w || !hs->g || !hs->x || !hs->q || !hs->a || !hs->u || !hs->dx || !hs->du || !hs->da || !hs->dn)
		goto nomem;
	/* variance-kept weights (uniform, std 1/sqrt(fan-in)); the same on every rank, inputs per rank */
	{
		unsigned long long ws = 0x243f6a8885a308d3ULL;

		for (long l = 0; l < L; l++) {
			ts_fill(wq(hs, l), (size_t)(3 * h * h), (float)sqrt(3.0 / h), &ws);
			ts_fill(wo(hs, l), (size_t)(h * h), (float)sqrt(3.0 / h), &ws);
			ts_fill(w1(hs, l), (size_t)(4 * h * h), (float)sqrt(3.0 / h), &ws);
			ts_fill(w2(hs, l), (size_t)(4 * h * h), (float)sqrt(3.0 / (4 * h)), &ws);
		}
	}
	ts_fill(hs->x, (size_t)(T * h), 1.0f, &seed);
	return 0;
nomem:
	snprintf(why, len, "cannot allocate %.0f bytes for the model", t->sh.bytes);
	return -1;
}

/* collective, once every rank opened: the communication thread on its own copy of the world */
static int host_start(struct ts *t, char *why, size_t len)
{
	struct host *hs = t->dev;

	if (MPI_Comm_dup(t->mpi->world, &hs->c.world) != MPI_SUCCESS) {
		hs->c.world = MPI_COMM_NULL;
		snprintf(why, len, "cannot duplicate the world communicator");
		return -1;
	}
	pthread_mutex_init(&hs->c.mu, NULL);
	pthread_cond_init(&hs->c.cv, NULL);
	if (pthread_create(&hs->c.th, NULL, comm_main, hs)) {
		snprintf(why, len, "cannot start the communication thread");
		return -1;
	}
	hs->c.started = 1;
	return 0;
}

const struct ts_engine ts_host = {
	.backend = "mpi",
	.dtype = "float",
	.compute = "host: OpenBLAS sgemm",
	.act_size = 4,
	.open = host_open,
	.start = host_start,
	.step = host_step,
	.last_sum = host_last_sum,
	.close = host_close,
};

#else

const struct ts_engine ts_host = {
	.backend = "mpi",
	.dtype = "float",
	.compute = "host: OpenBLAS sgemm",
	.act_size = 4,
	.missing = "built without OpenBLAS (libopenblas-dev): the host matmuls",
};

#endif
