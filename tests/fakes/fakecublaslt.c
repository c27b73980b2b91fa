/*
 * tests/fakes/fakecublaslt.c: the test double's cuBLASLt, and the CUDA
 * runtime and NVML calls only the gemm and gpuhealth probes make (beside
 * tests/fakes/fakecuda.c, in the same library; fake.h). A product takes
 * virtual time 2mnk / rate on its stream and writes a D that depends on A
 * and B only, so every GPU's checksum agrees unless a fault is set:
 *   CCDIAG_FAKEGEMM_TFLOPS=T        bf16/fp16 rate per GPU (default 750; tf32 half,
 *                                   fp8 twice with fast accumulation, 1.15 times less
 *                                   without); CCDIAG_FAKECUDA_SLOW=D:F divides it.
 *                                   CCDIAG_FAKECUDA_REPORT=FILE gets each process's
 *                                   fp8 products by accumulation mode
 *   CCDIAG_FAKEGEMM_CORRUPT=D       GPU D's products flip one bit of D (silent corruption)
 *   CCDIAG_FAKEGEMM_HANG=D          GPU D's products never finish (a hung kernel)
 *   CCDIAG_FAKENVML_THROTTLE=D:BITS GPU D reports clock-event reasons BITS (e.g. 0x40);
 *                                   every GPU with products queued also reports SW power
 *                                   cap (0x4), as a healthy Hopper board does under a GEMM
 *   CCDIAG_FAKENVML_REMAP_PENDING=D GPU D has a row remap pending
 *   CCDIAG_FAKENVML_XID=D:CODE      GPU D delivers one NVML XID event CODE
 *   CCDIAG_FAKECUDA_MEM_GB=D:G      GPU D has G GiB (others 80; free: 99 % of it)
 * Physical GPU numbers D as in fake.h.
 */
#include "fake.h"

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* "D:VALUE" settings: VALUE when key names GPU phys, else NULL */
static const char *for_gpu(const char *key, int phys)
{
	const char *v = fake_cfg(key), *colon;

	if (!v || atoi(v) != phys)
		return NULL;
	colon = strchr(v, ':');
	return colon ? colon + 1 : v;
}

static int hung(int phys)
{
	const char *v = fake_cfg("CCDIAG_FAKEGEMM_HANG");

	return v && atoi(v) == phys;
}

/* a product was queued on this hung GPU: nothing on it finishes any more */
static int stuck[FAKE_MAX_GPUS];

/* products queued and not yet run per GPU: the GPU is under load, at its power limit */
static int queued[FAKE_MAX_GPUS];

/* ------------------------------------------------------------------ runtime calls */

struct fill {
	void *p;
	int v;
	size_t n;
};

static void do_fill(void *arg)
{
	struct fill *f = arg;

	if (f->p)
		memset(f->p, f->v, f->n);
	free(f);
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t st)
{
	struct fill *f = malloc(sizeof(*f));
	struct fake_gpu *g = fake_current();

	if (!f || !g)
		return f ? cudaErrorNoDevice : cudaErrorMemoryAllocation;
	/* an L2 flush buffer's contents matter to nobody: time only, above 64 MiB */
	*f = (struct fill){ .p = n > ((size_t)64 << 20) ? NULL : p, .v = v, .n = n };
	return (cudaError_t)fake_stream_work(st, 2e-6 + n / 1500e9 * g->slow, do_fill, f);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind k)
{
	/* the legacy stream runs at once */
	return cudaMemcpyAsync(dst, src, n, k, NULL);
}

cudaError_t cudaEventQuery(cudaEvent_t ev)
{
	struct fake_gpu *g = fake_current();

	(void)ev;
	if (!g)
		return cudaErrorNoDevice;
	/* a hung GPU's products never run: its events stay not ready */
	if (stuck[g->phys])
		return cudaErrorNotReady;
	cudaStreamSynchronize(NULL);
	return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *fr, size_t *total)
{
	struct fake_gpu *g = fake_current();
	const char *v;
	double gib = 80;

	if (!g)
		return cudaErrorNoDevice;
	if ((v = for_gpu("CCDIAG_FAKECUDA_MEM_GB", g->phys)))
		gib = atof(v);
	*total = (size_t)(gib * (1 << 30));
	*fr = (size_t)(*total * 0.99);
	return cudaSuccess;
}

#ifdef HAVE_CUBLASLT
#include <cublasLt.h>

/* ------------------------------------------------------------------ cuBLASLt */

struct fdesc {
	cublasComputeType_t ct;
	int8_t fast_accum;       /* CUBLASLT_MATMUL_DESC_FAST_ACCUM */
};

/* fp8 products run by accumulation mode; CCDIAG_FAKECUDA_REPORT gets them at exit */
static long fp8_fast, fp8_split;

__attribute__((destructor)) static void report_fp8(void)
{
	const char *path = getenv("CCDIAG_FAKECUDA_REPORT");
	FILE *f = path && (fp8_fast || fp8_split) ? fopen(path, "a") : NULL;

	if (!f)
		return;
	fprintf(f, "pid %d fp8_products fast_accum %ld split_accum %ld\n", (int)getpid(), fp8_fast,
		fp8_split);
	fclose(f);
}
struct flayout {
	cudaDataType_t type;
	uint64_t rows, cols;
};

size_t cublasLtGetVersion(void)
{
	return 130000;
}

cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
	*h = (cublasLtHandle_t)calloc(1, 16);
	return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t h)
{
	free(h);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t ct,
					cudaDataType_t scale)
{
	struct fdesc *f = calloc(1, sizeof(*f));

	(void)scale;
	if (!f)
		return CUBLAS_STATUS_ALLOC_FAILED;
	f->ct = ct;
	*d = (cublasLtMatmulDesc_t)f;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
	free(d);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a,
					      const void *buf, size_t n)
{
	if (a == CUBLASLT_MATMUL_DESC_FAST_ACCUM) {
		if (n != sizeof(int8_t))
			return CUBLAS_STATUS_INVALID_VALUE;
		((struct fdesc *)d)->fast_accum = *(const int8_t *)buf;
	}
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type, uint64_t rows,
					  uint64_t cols, int64_t ld)
{
	struct flayout *f = calloc(1, sizeof(*f));

	(void)ld;
	if (!f)
		return CUBLAS_STATUS_ALLOC_FAILED;
	*f = (struct flayout){ .type = type, .rows = rows, .cols = cols };
	*l = (cublasLtMatrixLayout_t)f;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
	free(l);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p)
{
	*p = (cublasLtMatmulPreference_t)calloc(1, 16);
	return *p ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p)
{
	free(p);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
						    cublasLtMatmulPreferenceAttributes_t a,
						    const void *buf, size_t n)
{
	(void)p, (void)a, (void)buf, (void)n;
	return CUBLAS_STATUS_SUCCESS;
}

/* algorithm i: data[0] its id, data[1] its split-K count (the first two split K) */
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t op,
					      cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
					      cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
					      cublasLtMatmulPreference_t pref, int want,
					      cublasLtMatmulHeuristicResult_t *res, int *got)
{
	(void)h, (void)op, (void)a, (void)b, (void)c, (void)d, (void)pref;
	*got = want < 4 ? want : 4;
	for (int i = 0; i < *got; i++) {
		memset(&res[i], 0, sizeof(res[i]));
		res[i].algo.data[0] = 20 + (uint64_t)i;
		res[i].algo.data[1] = i < 2 ? 4 : 1;
		res[i].state = CUBLAS_STATUS_SUCCESS;
		res[i].workspaceSize = (size_t)1 << 20;
	}
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t *algo,
						    cublasLtMatmulAlgoConfigAttributes_t attr,
						    void *buf, size_t n, size_t *written)
{
	uint32_t v = attr == CUBLASLT_ALGO_CONFIG_ID ? (uint32_t)algo->data[0] :
		     attr == CUBLASLT_ALGO_CONFIG_SPLITK_NUM ? (uint32_t)algo->data[1] :
		     attr == CUBLASLT_ALGO_CONFIG_TILE_ID ? 18 : 0;

	if (n < sizeof(v))
		return CUBLAS_STATUS_INVALID_VALUE;
	memcpy(buf, &v, sizeof(v));
	*written = sizeof(v);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoCheck(cublasLtHandle_t h, cublasLtMatmulDesc_t op,
				       cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
				       cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
				       const cublasLtMatmulAlgo_t *algo,
				       cublasLtMatmulHeuristicResult_t *res)
{
	(void)h, (void)op, (void)a, (void)b, (void)c, (void)d;
	memset(res, 0, sizeof(*res));
	res->algo = *algo;
	res->workspaceSize = (size_t)1 << 20;
	return algo->data[0] >= 20 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}

struct product {
	unsigned char *d;
	const unsigned char *a, *b;
	size_t nd, na, nb;
	int corrupt;
	int phys;                /* the GPU it runs on */
	size_t elt;              /* bytes of a D element */
};

/* D from A and B alone (a cheap stand-in for the product): the same on every healthy GPU */
static void do_product(void *arg)
{
	struct product *p = arg;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < p->na && i < 4096; i++)
		h = (h ^ p->a[i]) * 0x100000001b3ULL;
	for (size_t i = 0; i < p->nb && i < 4096; i++)
		h = (h ^ p->b[i]) * 0x100000001b3ULL;
	for (size_t i = 0; i < p->nd; i++)
		p->d[i] = (unsigned char)(h >> (8 * (i % 8))) ^ (unsigned char)i;
	/* fp32, bf16 and fp16 elements stay finite and below 2 in magnitude (a sum of them stays finite):
	 * the exponent's top bit clear in each element's top byte (little-endian) */
	if (p->elt == 2 || p->elt == 4)
		for (size_t i = p->elt - 1; i < p->nd; i += p->elt)
			p->d[i] &= 0xbf;
	if (p->corrupt && p->nd)
		p->d[p->nd / 2] ^= 0x10;
	queued[p->phys]--;
	free(p);
}

static size_t elt(cudaDataType_t t)
{
	return t == CUDA_R_8F_E4M3 ? 1 : t == CUDA_R_32F ? 4 : 2;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t op, const void *alpha,
			      const void *A, cublasLtMatrixLayout_t la, const void *B,
			      cublasLtMatrixLayout_t lb, const void *beta, const void *C,
			      cublasLtMatrixLayout_t lc, void *D, cublasLtMatrixLayout_t ld,
			      const cublasLtMatmulAlgo_t *algo, void *ws, size_t wsn, cudaStream_t st)
{
	struct flayout *a = (struct flayout *)la, *b = (struct flayout *)lb, *d = (struct flayout *)ld;
	struct fake_gpu *g = fake_current();
	const char *v = fake_cfg("CCDIAG_FAKEGEMM_TFLOPS");
	double rate = v ? atof(v) : 750, flops;
	struct product *p;

	(void)h, (void)alpha, (void)beta, (void)C, (void)lc, (void)algo, (void)ws, (void)wsn;
	if (!g)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (hung(g->phys)) {
		/* queued behind a kernel that never ends: nothing after it runs */
		stuck[g->phys] = 1;
		return CUBLAS_STATUS_SUCCESS;
	}
	if (((struct fdesc *)op)->ct == CUBLAS_COMPUTE_32F_FAST_TF32)
		rate /= 2;
	else if (a->type == CUDA_R_8F_E4M3 && ((struct fdesc *)op)->fast_accum)
		rate *= 2, fp8_fast++;
	else if (a->type == CUDA_R_8F_E4M3)
		rate *= 2 / 1.15, fp8_split++;   /* the split accumulator, as Hopper runs it */
	flops = 2.0 * (double)a->cols * (double)b->cols * (double)a->rows;
	p = malloc(sizeof(*p));
	if (!p)
		return CUBLAS_STATUS_ALLOC_FAILED;
	*p = (struct product){ .d = D, .a = A, .b = B, .nd = d->rows * d->cols * elt(d->type),
			       .na = a->rows * a->cols * elt(a->type),
			       .nb = b->rows * b->cols * elt(b->type),
			       .corrupt = fake_cfg("CCDIAG_FAKEGEMM_CORRUPT") &&
					  atoi(fake_cfg("CCDIAG_FAKEGEMM_CORRUPT")) == g->phys,
			       .phys = g->phys, .elt = elt(d->type) };
	queued[g->phys]++;
	return fake_stream_work(st, flops / (rate * 1e12) * g->slow, do_product, p) ?
	       CUBLAS_STATUS_EXECUTION_FAILED : CUBLAS_STATUS_SUCCESS;
}
#endif

/* ------------------------------------------------------------------ NVML */

typedef int nvmlReturn_t;
typedef struct fake_gpu *nvmlDevice_t;

enum { NV_OK = 0, NV_NOT_SUPPORTED = 3, NV_TIMEOUT = 10 };

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned *mhz)
{
	const char *t = for_gpu("CCDIAG_FAKENVML_THROTTLE", d->phys);

	/* a throttled GPU runs its SM clock at half the boost clock */
	*mhz = type == 2 ? 2619 : t ? 990 : 1980;
	return NV_OK;
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned *mhz)
{
	(void)d;
	*mhz = type == 2 ? 2619 : 1980;
	return NV_OK;
}

nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t d, int type, unsigned *mhz)
{
	return nvmlDeviceGetMaxClockInfo(d, type, mhz);
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned *mw)
{
	(void)d;
	*mw = 650000;
	return NV_OK;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned *c)
{
	(void)sensor;
	*c = for_gpu("CCDIAG_FAKENVML_THROTTLE", d->phys) ? 92 : 61;
	return NV_OK;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *r)
{
	const char *t = for_gpu("CCDIAG_FAKENVML_THROTTLE", d->phys);

	*r = t ? strtoull(t, NULL, 0) : 0;
	/* as on Hopper: a GEMM holds a healthy board at its power limit in nearly every sample */
	if (d->phys >= 0 && d->phys < FAKE_MAX_GPUS && queued[d->phys] > 0)
		*r |= 0x4;               /* SW power cap */
	return NV_OK;
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, int *cur, int *pend)
{
	(void)d;
	*cur = *pend = 1;
	return NV_OK;
}

nvmlReturn_t nvmlDeviceGetMemoryErrorCounter(nvmlDevice_t d, int err, int cnt, int loc,
					     unsigned long long *v)
{
	(void)d, (void)err, (void)cnt;
	if (loc != 2 && loc != 7)
		return NV_NOT_SUPPORTED;
	*v = 0;
	return NV_OK;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int err, int cnt, unsigned long long *v)
{
	(void)d, (void)err, (void)cnt;
	*v = 0;
	return NV_OK;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned *corr, unsigned *unc,
				       unsigned *pending, unsigned *failed)
{
	*corr = *unc = *failed = 0;
	*pending = fake_cfg("CCDIAG_FAKENVML_REMAP_PENDING") &&
		   atoi(fake_cfg("CCDIAG_FAKENVML_REMAP_PENDING")) == d->phys;
	return NV_OK;
}

nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t d, int cause, unsigned *count,
				       unsigned long long *addr)
{
	(void)d, (void)cause, (void)addr;
	*count = 0;
	return NV_OK;
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, int *pending)
{
	(void)d;
	*pending = 0;
	return NV_OK;
}

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int *on)
{
	(void)d;
	*on = 1;
	return NV_OK;
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned *mw)
{
	(void)d;
	*mw = 700000;
	return NV_OK;
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t d, unsigned *mw)
{
	return nvmlDeviceGetPowerManagementLimit(d, mw);
}

nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t d, unsigned *v)
{
	(void)d;
	*v = 0;
	return NV_OK;
}

nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t d, unsigned link, int c,
					     unsigned long long *v)
{
	(void)d, (void)c;
	if (link >= 18)
		return NV_NOT_SUPPORTED;
	*v = 0;
	return NV_OK;
}

/* one event set per process is all the probes use */
static struct { int phys, delivered; } evset = { -1, 0 };

typedef struct {
	nvmlDevice_t device;
	unsigned long long type, data;
	unsigned int gi, ci;
} nv_event;

nvmlReturn_t nvmlEventSetCreate(void **set)
{
	*set = &evset;
	return NV_OK;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, void *set)
{
	(void)types, (void)set;
	evset.phys = d->phys;
	return NV_OK;
}

nvmlReturn_t nvmlEventSetWait_v2(void *set, nv_event *ev, unsigned ms)
{
	const char *code = evset.phys >= 0 ? for_gpu("CCDIAG_FAKENVML_XID", evset.phys) : NULL;

	(void)set, (void)ms;
	if (!code || evset.delivered)
		return NV_TIMEOUT;
	evset.delivered = 1;
	memset(ev, 0, sizeof(*ev));
	ev->type = 0x8;
	ev->data = strtoull(code, NULL, 10);
	return NV_OK;
}

nvmlReturn_t nvmlEventSetFree(void *set)
{
	(void)set;
	return NV_OK;
}
