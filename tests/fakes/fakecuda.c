/*
 * tests/fakes/fakecuda.c: the test double of the CUDA runtime and NVML calls
 * ccprobe makes (tests/fakes/fake.h says what it fakes and how tests
 * configure it). Only the calls ccprobe uses are here; a call it does not
 * know falls through to the real library, which says "no CUDA device".
 */
#include "fake.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ccprobe looks this symbol up to mark its records as coming from a test double. */
const char ccdiag_test_double[] = "libfakecuda (tests/fakes)";

static const char *const hgx_bus[8] = {
	"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
	"0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0",
};

static struct {
	int ready;
	int nphys, nvis;
	struct fake_gpu gpu[FAKE_MAX_GPUS];
	int vis[FAKE_MAX_GPUS];          /* visible ordinal -> physical index */
	int p2p[FAKE_MAX_GPUS][FAKE_MAX_GPUS];
	double h2d, d2h, d2d, peer, staged; /* GB/s of bytes copied */
	double kern;                     /* a copy kernel's GB/s of bytes copied (traffic twice it) */
	int fail, hang, exclusive;       /* physical GPU, -1 none */
	int sleep;                       /* copies also take their virtual time in real time */
	int busy;                        /* cudaStreamQuery says "not ready" this many times first */
	long spins;                      /* "not ready" answers with no sched_yield since the last */
	char *file;                      /* the config file's text */
} fk = { .fail = -1, .hang = -1 };

#define FAKE_COPY_LAT_S 2e-6        /* every copy's fixed cost, so a 4-byte copy takes time */

static __thread int cur;             /* current visible ordinal */
static __thread int ctx_cur = -1;    /* physical GPU whose context is current here; -1 none */
static __thread int yielded;         /* this thread called sched_yield since its last poll */
static __thread int again;           /* its last poll was answered "not ready" */

const char *fake_cfg(const char *key)
{
	const char *v = getenv(key), *p;
	size_t n = strlen(key);
	static char buf[512];

	if (v || !fk.file)
		return v;
	for (p = fk.file; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, n) && p[n] == '=') {
			size_t l = strcspn(p + n + 1, "\n");

			snprintf(buf, sizeof(buf), "%.*s", (int)l, p + n + 1);
			return buf;
		}
	return NULL;
}

static void read_file(void)
{
	const char *path = getenv("CCDIAG_FAKECUDA_CONFIG");
	FILE *f = path ? fopen(path, "r") : NULL;
	long n;

	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	fk.file = calloc(1, (size_t)n + 1);
	if (fk.file && fread(fk.file, 1, (size_t)n, f) != (size_t)n)
		fk.file[0] = '\0';
	fclose(f);
}

static void set_pcie(struct fake_gpu *g, const char *s)
{
	sscanf(s, "%d:%d:%d", &g->idle_gen, &g->load_gen, &g->width);
}

static void hang_forever(void)
{
	for (;;)
		sleep(1);
}

/* Reads the configuration once; the first runtime call is where cuInit would run. */
static void setup(void)
{
	const char *v;

	if (fk.ready)
		return;
	fk.ready = 1;
	read_file();
	v = fake_cfg("CCDIAG_FAKECUDA_HANG");
	if (v && !strncmp(v, "init", 4)) {
		const char *me = getenv("OMPI_COMM_WORLD_RANK");

		if (v[4] != ':' || (me && atoi(v + 5) == atoi(me)))
			hang_forever();
	} else if (v) {
		fk.hang = atoi(v);
	}
	v = fake_cfg("CCDIAG_FAKECUDA_GPUS");
	fk.nphys = v ? atoi(v) : -1;
	if (fk.nphys > FAKE_MAX_GPUS)
		fk.nphys = FAKE_MAX_GPUS;
	v = fake_cfg("CCDIAG_FAKECUDA_FAIL");
	fk.fail = v ? atoi(v) : -1;
	v = fake_cfg("CCDIAG_FAKECUDA_MODE");
	fk.exclusive = v && !strcmp(v, "exclusive");
	v = fake_cfg("CCDIAG_FAKECUDA_SLEEP");
	fk.sleep = v && atoi(v) > 0;
	v = fake_cfg("CCDIAG_FAKECUDA_BUSY");
	fk.busy = v ? atoi(v) : 0;
	/*
	 * Hopper's: the copy engines move device memory at ~67-74 % of its rate
	 * (1200 GB/s copied, 2400 read + write: 72 % of the 3352 GB/s this double's
	 * clock and bus width give), a copy kernel at ~80-90 % (1450: 87 %)
	 */
	fk.h2d = 55, fk.d2h = 55, fk.d2d = 1200, fk.peer = 350, fk.staged = 8, fk.kern = 1450;
	if ((v = fake_cfg("CCDIAG_FAKECUDA_RATES")))
		sscanf(v, "%lf:%lf:%lf:%lf:%lf:%lf", &fk.h2d, &fk.d2h, &fk.d2d, &fk.peer, &fk.staged,
		       &fk.kern);
	for (int i = 0; i < fk.nphys; i++) {
		struct fake_gpu *g = &fk.gpu[i];
		const char *list = fake_cfg("CCDIAG_FAKECUDA_BUS");

		*g = (struct fake_gpu){ .phys = i, .idle_gen = 1, .load_gen = 5, .width = 16,
					.max_gen = 5, .max_width = 16, .slow = 1 };
		snprintf(g->bus, sizeof(g->bus), "%s", i < 8 ? hgx_bus[i] : "0000:ff:00.0");
		if (list) {
			const char *p = list;

			for (int k = 0; k < i && p; k++)
				p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
			if (p)
				snprintf(g->bus, sizeof(g->bus), "%.*s", (int)strcspn(p, ","), p);
		}
		if ((v = fake_cfg("CCDIAG_FAKECUDA_PCIE")))
			set_pcie(g, v);
		if ((v = fake_cfg("CCDIAG_FAKECUDA_PCIE_GPU")) && atoi(v) == i && strchr(v, '='))
			set_pcie(g, strchr(v, '=') + 1);
		if ((v = fake_cfg("CCDIAG_FAKECUDA_SLOW")) && atoi(v) == i && strchr(v, ':'))
			g->slow = atof(strchr(v, ':') + 1);
		for (int k = 0; k < fk.nphys; k++)
			fk.p2p[i][k] = i != k;
	}
	v = fake_cfg("CCDIAG_FAKECUDA_P2P");
	if (v && strcmp(v, "all")) {
		memset(fk.p2p, 0, sizeof(fk.p2p));
		for (const char *p = v; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
			int a, b;

			if (sscanf(p, "%d-%d", &a, &b) == 2 && a >= 0 && b >= 0 &&
			    a < FAKE_MAX_GPUS && b < FAKE_MAX_GPUS && a != b)
				fk.p2p[a][b] = 1;
		}
	}
	v = getenv("CUDA_VISIBLE_DEVICES");
	if (v && fk.nphys > 0) {
		/* as the runtime: ordinals up to the first invalid one */
		for (const char *p = v; p && *p && fk.nvis < fk.nphys;
		     p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
			char *end;
			long d = strtol(p, &end, 10);

			if (end == p || d < 0 || d >= fk.nphys)
				break;
			fk.vis[fk.nvis++] = (int)d;
		}
	} else {
		for (int i = 0; i < fk.nphys; i++)
			fk.vis[fk.nvis++] = i;
	}
}

int fake_count(void)
{
	setup();
	return fk.nphys < 0 ? -1 : fk.nvis;
}

struct fake_gpu *fake_gpu(int ordinal)
{
	setup();
	return ordinal >= 0 && ordinal < fk.nvis ? &fk.gpu[fk.vis[ordinal]] : NULL;
}

struct fake_gpu *fake_current(void)
{
	return fake_gpu(cur);
}

/*
 * EXCLUSIVE_PROCESS: one process per GPU. A lock file per GPU and job
 * (PMIX_NAMESPACE) in /dev/shm, held while this process has a context there;
 * another process's context creation fails as the driver's does.
 */
static int lock_fd[FAKE_MAX_GPUS];
static char lock_name[FAKE_MAX_GPUS][128];

static int exclusive_take(int phys)
{
	const char *job = getenv("PMIX_NAMESPACE");
	unsigned h = 5381;
	int fd;

	for (const char *c = job ? job : ""; *c; c++)
		h = h * 33 + (unsigned char)*c;
	snprintf(lock_name[phys], sizeof(lock_name[phys]), "/dev/shm/ccdiag-fakecuda-%u-%x-gpu%d.lock",
		 (unsigned)getuid(), h, phys);
	fd = open(lock_name[phys], O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;            /* no lock to be had: as the default mode */
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		close(fd);
		lock_name[phys][0] = '\0';
		return -1;
	}
	lock_fd[phys] = fd + 1;
	return 0;
}

int fake_touch(struct fake_gpu *g)
{
	if (!g)
		return cudaErrorInvalidDevice;
	if (g->ctx)
		return cudaSuccess;
	if (g->phys == fk.hang)
		hang_forever();
	if (g->phys == fk.fail)
		return cudaErrorECCUncorrectable;
	if (fk.exclusive && exclusive_take(g->phys))
		return cudaErrorDevicesUnavailable;
	g->ctx = 1;
	return cudaSuccess;
}

/* The context of the current device is made current in this thread (the runtime's implicit init). */
static int touch_current(void)
{
	int e = fake_touch(fake_current());

	if (!e)
		ctx_cur = fake_current()->phys;
	return e;
}

/* ------------------------------------------------------------------ memory */

struct alloc {
	void *p;
	size_t n;
	int phys;
	struct alloc *next;
};
static struct alloc *allocs;

/* The physical GPU whose memory p is in, or -1 for host memory. */
static int owner(const void *p)
{
	for (struct alloc *a = allocs; a; a = a->next)
		if ((const char *)p >= (const char *)a->p && (const char *)p < (const char *)a->p + a->n)
			return a->phys;
	return -1;
}

int fake_owner(const void *p)
{
	return owner(p);
}

/* ------------------------------------------------------------------ streams */

enum op_kind { OP_COPY, OP_HOSTFN, OP_EVENT, OP_WORK, OP_WAIT };

struct op {
	enum op_kind kind;
	void *dst;
	const void *src;
	size_t bytes;
	double sec;
	struct fake_gpu *host_side;      /* a copy touching host memory: the link is loaded */
	cudaHostFn_t fn;
	void (*work)(void *);
	void *arg;
	struct fevent *ev;
	struct op *next;
};

struct fstream {
	int phys;
	double t;                        /* virtual seconds */
	struct op *head, *tail;
};

struct fevent {
	double t;
	int recorded;
	struct fstream *s;               /* where it was last recorded */
};

static cudaError_t sticky;           /* cudaGetLastError */

static void flush(struct fstream *s);

static void run_op(struct fstream *s, struct op *o)
{
	switch (o->kind) {
	case OP_COPY:
		memmove(o->dst, o->src, o->bytes);
		s->t += o->sec;
		if (fk.sleep)
			usleep((useconds_t)(o->sec * 1e6));
		if (o->host_side)
			o->host_side->pending--;
		break;
	case OP_HOSTFN:
		o->fn(o->arg);
		break;
	case OP_EVENT:
		o->ev->t = s->t;
		o->ev->recorded = 1;
		break;
	case OP_WORK:
		if (o->work)
			o->work(o->arg);
		s->t += o->sec;
		break;
	case OP_WAIT:
		/* cudaStreamWaitEvent: the event's stream runs up to it first; this one goes on from then */
		if (!o->ev->recorded && o->ev->s && o->ev->s != s)
			flush(o->ev->s);
		if (o->ev->recorded && o->ev->t > s->t)
			s->t = o->ev->t;
		break;
	}
}

static void flush(struct fstream *s)
{
	while (s && s->head) {
		struct op *o = s->head;

		s->head = o->next;
		if (!s->head)
			s->tail = NULL;
		run_op(s, o);
		free(o);
	}
}

#define MAX_STREAMS 256
static struct fstream *streams[MAX_STREAMS];

static void flush_all(int phys)
{
	for (int i = 0; i < MAX_STREAMS; i++)
		if (streams[i] && (phys < 0 || streams[i]->phys == phys))
			flush(streams[i]);
}

static cudaError_t enqueue(cudaStream_t st, struct op *o)
{
	struct fstream *s = (struct fstream *)st, tmp = { 0 };

	if (!s) {
		/* the legacy default stream: waits for the others, runs at once */
		flush_all(-1);
		run_op(&tmp, o);
		free(o);
		return cudaSuccess;
	}
	o->next = NULL;
	if (s->tail)
		s->tail->next = o;
	else
		s->head = o;
	s->tail = o;
	return cudaSuccess;
}

int fake_stream_work(void *stream, double seconds, void (*fn)(void *), void *arg)
{
	struct op *o = calloc(1, sizeof(*o));

	if (!o)
		return cudaErrorMemoryAllocation;
	*o = (struct op){ .kind = OP_WORK, .sec = seconds, .work = fn, .arg = arg };
	return enqueue((cudaStream_t)stream, o);
}

/* ------------------------------------------------------------------ the runtime */

#define NEED_DEVICE() do { if (fake_count() < 0) return cudaErrorNoDevice; } while (0)

cudaError_t cudaGetDeviceCount(int *n)
{
	*n = 0;
	NEED_DEVICE();
	*n = fk.nvis;
	return fk.nvis ? cudaSuccess : cudaErrorNoDevice;
}

cudaError_t cudaSetDevice(int d)
{
	NEED_DEVICE();
	if (!fake_gpu(d))
		return cudaErrorInvalidDevice;
	cur = d;
	/* since CUDA 12 cudaSetDevice creates the primary context and makes it current */
	return (cudaError_t)touch_current();
}

/* The driver API's view: the context current in this thread (the primary context's GPU). */
int cuCtxGetCurrent(void **ctx)
{
	setup();
	*ctx = ctx_cur >= 0 ? (void *)&fk.gpu[ctx_cur] : NULL;
	return 0;                    /* CUDA_SUCCESS */
}

cudaError_t cudaGetDevice(int *d)
{
	NEED_DEVICE();
	*d = cur;
	return cudaSuccess;
}

cudaError_t cudaDeviceGetPCIBusId(char *id, int len, int d)
{
	NEED_DEVICE();
	if (!fake_gpu(d))
		return cudaErrorInvalidDevice;
	/* the runtime spells it upper case with an 8-digit domain */
	snprintf(id, (size_t)len, "0000%s", fake_gpu(d)->bus);
	for (char *c = id; *c; c++)
		if (*c >= 'a' && *c <= 'f')
			*c = (char)(*c - 'a' + 'A');
	return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int d)
{
	struct fake_gpu *g;

	NEED_DEVICE();
	if (!(g = fake_gpu(d)))
		return cudaErrorInvalidDevice;
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "NVIDIA H100 80GB HBM3 (ccdiag test double)");
	for (int i = 0; i < 16; i++)
		p->uuid.bytes[i] = (char)(i == 15 ? g->phys : 0xcd);
	p->totalGlobalMem = (size_t)80 << 30;
	p->major = 9;
	p->multiProcessorCount = 132;
	return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int d)
{
	NEED_DEVICE();
	if (!fake_gpu(d))
		return cudaErrorInvalidDevice;
	switch (a) {
	case cudaDevAttrMemoryClockRate: *v = 2619000; break;  /* kHz, H100 SXM */
	case cudaDevAttrGlobalMemoryBusWidth: *v = 5120; break;
	case cudaDevAttrMultiProcessorCount: *v = 132; break;
	case cudaDevAttrMaxThreadsPerMultiProcessor: *v = 2048; break;
	case cudaDevAttrComputeMode:
		*v = fk.exclusive ? cudaComputeModeExclusiveProcess : cudaComputeModeDefault;
		break;
	default: *v = 0;
	}
	return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int *can, int a, int b)
{
	NEED_DEVICE();
	if (!fake_gpu(a) || !fake_gpu(b))
		return cudaErrorInvalidDevice;
	*can = fk.p2p[fake_gpu(a)->phys][fake_gpu(b)->phys];
	return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags)
{
	(void)flags;
	NEED_DEVICE();
	if (!fake_gpu(peer) || !fk.p2p[fake_current()->phys][fake_gpu(peer)->phys])
		return cudaErrorPeerAccessUnsupported;
	return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *v)
{
	*v = 13000;
	return cudaSuccess;
}

cudaError_t cudaGetLastError(void)
{
	cudaError_t e = sticky;

	sticky = cudaSuccess;
	return e;
}

cudaError_t cudaMalloc(void **p, size_t n)
{
	struct alloc *a;
	int e;

	NEED_DEVICE();
	if ((e = touch_current()))
		return (cudaError_t)e;
	a = calloc(1, sizeof(*a));
	*p = a ? malloc(n ? n : 1) : NULL;
	if (!*p) {
		free(a);
		return cudaErrorMemoryAllocation;
	}
	*a = (struct alloc){ .p = *p, .n = n ? n : 1, .phys = fake_current()->phys, .next = allocs };
	allocs = a;
	return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
	NEED_DEVICE();
	if (!p)  /* cudaFree(NULL): the usual way to create the context now */
		return (cudaError_t)touch_current();
	for (struct alloc **a = &allocs; *a; a = &(*a)->next)
		if ((*a)->p == p) {
			struct alloc *x = *a;

			*a = x->next;
			free(x->p);
			free(x);
			return cudaSuccess;
		}
	return cudaErrorInvalidValue;
}

cudaError_t cudaMemset(void *p, int v, size_t n)
{
	NEED_DEVICE();
	flush_all(-1);
	memset(p, v, n);
	return cudaSuccess;
}

cudaError_t cudaHostRegister(void *p, size_t n, unsigned int flags)
{
	(void)p, (void)n, (void)flags;
	NEED_DEVICE();
	return cudaSuccess;
}

cudaError_t cudaHostUnregister(void *p)
{
	(void)p;
	return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *st, unsigned int flags)
{
	struct fstream *s;
	int e;

	(void)flags;
	NEED_DEVICE();
	if ((e = touch_current()))
		return (cudaError_t)e;
	for (int i = 0; i < MAX_STREAMS; i++)
		if (!streams[i]) {
			s = calloc(1, sizeof(*s));
			if (!s)
				return cudaErrorMemoryAllocation;
			s->phys = fake_current()->phys;
			streams[i] = s;
			*st = (cudaStream_t)s;
			return cudaSuccess;
		}
	return cudaErrorMemoryAllocation;
}

cudaError_t cudaStreamDestroy(cudaStream_t st)
{
	for (int i = 0; i < MAX_STREAMS; i++)
		if (streams[i] == (struct fstream *)st) {
			flush(streams[i]);
			free(streams[i]);
			streams[i] = NULL;
			return cudaSuccess;
		}
	return cudaErrorInvalidResourceHandle;
}

cudaError_t cudaStreamSynchronize(cudaStream_t st)
{
	if (st)
		flush((struct fstream *)st);
	else
		flush_all(-1);
	return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t st)
{
	static int asked;

	/* CCDIAG_FAKECUDA_BUSY: a stream that is still running when first polled */
	/* a "not ready" answer, then another poll with no sched_yield between: a spin */
	if (again && !yielded)
		fk.spins++;
	yielded = 0;
	again = 0;
	if (st && ((struct fstream *)st)->head && asked < fk.busy) {
		asked++;
		again = 1;
		return cudaErrorNotReady;
	}
	asked = 0;
	/* the queued work "finishes" when someone looks */
	return cudaStreamSynchronize(st);
}

/* Counts the yields of a polling loop (CCDIAG_FAKECUDA_BUSY), then yields. */
int sched_yield(void)
{
	yielded = 1;
	return (int)syscall(SYS_sched_yield);
}

/* CCDIAG_FAKECUDA_REPORT=FILE: each process appends what it saw, at exit. */
__attribute__((destructor)) static void report(void)
{
	const char *path = getenv("CCDIAG_FAKECUDA_REPORT");
	FILE *f = path ? fopen(path, "a") : NULL;
	const char *rank = getenv("OMPI_COMM_WORLD_RANK");

	for (int i = 0; i < FAKE_MAX_GPUS; i++)
		if (lock_fd[i] > 0 && lock_name[i][0])
			unlink(lock_name[i]);    /* held: nobody else has it open as a lock */
	if (!f)
		return;
	fprintf(f, "pid %d polls_without_yield %ld\n", (int)getpid(), fk.spins);
	/* the GPUs this process created a context on: one process per GPU shows here */
	fprintf(f, "pid %d rank %s contexts", (int)getpid(), rank ? rank : "-");
	for (int i = 0, n = 0; i < fk.nphys; i++)
		if (fk.gpu[i].ctx)
			fprintf(f, "%s%d", n++ ? "," : " ", i);
	fprintf(f, "\n");
	fclose(f);
}

cudaError_t cudaDeviceSynchronize(void)
{
	NEED_DEVICE();
	flush_all(fake_current()->phys);
	return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *ev)
{
	*ev = (cudaEvent_t)calloc(1, sizeof(struct fevent));
	return *ev ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaEventDestroy(cudaEvent_t ev)
{
	free(ev);
	return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t st)
{
	struct op *o = calloc(1, sizeof(*o));

	if (!o)
		return cudaErrorMemoryAllocation;
	((struct fevent *)ev)->recorded = 0;
	((struct fevent *)ev)->s = (struct fstream *)st;
	*o = (struct op){ .kind = OP_EVENT, .ev = (struct fevent *)ev };
	return enqueue(st, o);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t st, cudaEvent_t ev, unsigned int flags)
{
	struct op *o = calloc(1, sizeof(*o));

	(void)flags;
	if (!o)
		return cudaErrorMemoryAllocation;
	*o = (struct op){ .kind = OP_WAIT, .ev = (struct fevent *)ev };
	return enqueue(st, o);
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
	struct fevent *x = (struct fevent *)a, *y = (struct fevent *)b;

	if (!x->recorded || !y->recorded)
		return cudaErrorNotReady;
	*ms = (float)((y->t - x->t) * 1e3);
	return cudaSuccess;
}

cudaError_t cudaLaunchHostFunc(cudaStream_t st, cudaHostFn_t fn, void *arg)
{
	struct op *o = calloc(1, sizeof(*o));

	if (!o)
		return cudaErrorMemoryAllocation;
	*o = (struct op){ .kind = OP_HOSTFN, .fn = fn, .arg = arg };
	return enqueue(st, o);
}

/* A copy: its rate from where its ends are, and the host side's link loaded while queued. */
static cudaError_t copy(void *dst, const void *src, size_t n, cudaStream_t st)
{
	int from = owner(src), to = owner(dst);
	struct op *o;
	double rate;
	struct fake_gpu *g;

	NEED_DEVICE();
	o = calloc(1, sizeof(*o));
	if (!o)
		return cudaErrorMemoryAllocation;
	if (from < 0 && to < 0)
		rate = fk.d2h, g = NULL;
	else if (from < 0)
		rate = fk.h2d, g = &fk.gpu[to];
	else if (to < 0)
		rate = fk.d2h, g = &fk.gpu[from];
	else if (from == to)
		rate = fk.d2d, g = NULL;
	else
		rate = fk.p2p[from][to] ? fk.peer : fk.staged, g = NULL;
	rate /= fk.gpu[from >= 0 ? from : to >= 0 ? to : 0].slow;
	*o = (struct op){ .kind = OP_COPY, .dst = dst, .src = src, .bytes = n,
			  .sec = FAKE_COPY_LAT_S + (double)n / (rate * 1e9), .host_side = st ? g : NULL };
	if (o->host_side)
		g->pending++;
	return enqueue(st, o);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k,
			    cudaStream_t st)
{
	(void)k;
	return copy(dst, src, n, st);
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dd, const void *src, int sd, size_t n,
				cudaStream_t st)
{
	(void)dd, (void)sd;
	return copy(dst, src, n, st);
}

/* ------------------------------------------------------------------ the driver API: kernels */

/*
 * cuModuleLoadData, cuModuleGetFunction, cuLaunchKernel, cuModuleUnload, as
 * the hbm probe uses them (gpu/driver.c): a module is the PTX text, a
 * function one of its .entry names this double knows how to run; a launch
 * does the kernel's work on the host when the stream runs, and takes the
 * virtual time of its memory traffic at the kernel rate (RATES' sixth field).
 */
enum { CU_OK = 0, CU_INVALID_VALUE = 1, CU_INVALID_IMAGE = 200, CU_PTX_VERSION = 222,
       CU_NOT_FOUND = 500 };

struct fmodule {
	char *ptx;
};

enum fkernel { K_COPY, K_TRIAD };

struct fkernel_call {
	enum fkernel kind;
	void *a, *b, *c;
	double s;
	unsigned long long n;            /* elements of 16 bytes */
};

int cuModuleLoadData(void **mod, const void *image)
{
	struct fmodule *m;
	int e;

	setup();
	if (fake_count() < 0)
		return 100;                  /* CUDA_ERROR_NO_DEVICE */
	if ((e = touch_current()))
		return 3;                    /* CUDA_ERROR_NOT_INITIALIZED */
	/* CCDIAG_FAKECUDA_PTX=refuse: a driver older than the PTX's ISA version */
	if (fake_cfg("CCDIAG_FAKECUDA_PTX") && !strcmp(fake_cfg("CCDIAG_FAKECUDA_PTX"), "refuse"))
		return CU_PTX_VERSION;
	/* PTX is text with a version and at least one entry */
	if (!image || !strstr(image, ".version") || !strstr(image, ".entry"))
		return CU_INVALID_IMAGE;
	m = calloc(1, sizeof(*m));
	if (!m || !(m->ptx = strdup(image))) {
		free(m);
		return 2;                    /* CUDA_ERROR_OUT_OF_MEMORY */
	}
	*mod = m;
	return CU_OK;
}

int cuModuleGetFunction(void **fn, void *mod, const char *name)
{
	static const enum fkernel kinds[] = { K_COPY, K_TRIAD };
	static const char *const names[] = { "ccdiag_copy", "ccdiag_triad" };
	struct fmodule *m = mod;
	char entry[96];

	if (!m || !name)
		return CU_INVALID_VALUE;
	snprintf(entry, sizeof(entry), ".entry %s(", name);
	for (int i = 0; i < 2; i++)
		if (!strcmp(name, names[i]) && strstr(m->ptx, entry)) {
			*fn = (void *)&kinds[i];
			return CU_OK;
		}
	return CU_NOT_FOUND;
}

int cuModuleUnload(void *mod)
{
	struct fmodule *m = mod;

	if (m)
		free(m->ptx);
	free(m);
	return CU_OK;
}

static void kernel_run(void *arg)
{
	struct fkernel_call *k = arg;

	if (k->kind == K_COPY) {
		memmove(k->b, k->a, k->n * 16);
	} else {
		double *a = k->a;
		const double *b = k->b, *c = k->c;

		for (unsigned long long i = 0; i < 2 * k->n; i++)
			a[i] = b[i] + k->s * c[i];
	}
	free(k);
}

int cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		   unsigned bz, unsigned shmem, void *stream, void **params, void **extra)
{
	struct fkernel_call *k;
	struct fake_gpu *g = fake_current();
	double traffic;

	(void)shmem, (void)extra;
	if (!fn || !params || !g || !gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024)
		return CU_INVALID_VALUE;
	k = calloc(1, sizeof(*k));
	if (!k)
		return 2;
	/* the arguments are read now, as the driver does: they point at the caller's variables */
	k->kind = *(const enum fkernel *)fn;
	k->a = *(void **)params[0];
	k->b = *(void **)params[1];
	if (k->kind == K_COPY) {
		k->n = *(unsigned long long *)params[2];
		traffic = 2.0 * k->n * 16;
	} else {
		k->c = *(void **)params[2];
		k->s = *(double *)params[3];
		k->n = *(unsigned long long *)params[4];
		traffic = 3.0 * k->n * 16;
	}
	/* the kernel rate is of bytes copied: a copy's traffic is twice them */
	if (fake_stream_work(stream, FAKE_COPY_LAT_S + traffic / (2 * fk.kern * 1e9 / g->slow),
			     kernel_run, k)) {
		free(k);
		return 2;
	}
	return CU_OK;
}

int cuGetErrorName(int r, const char **name)
{
	*name = r == CU_OK ? "CUDA_SUCCESS" : r == CU_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE" :
		r == CU_INVALID_IMAGE ? "CUDA_ERROR_INVALID_IMAGE" : r == CU_PTX_VERSION ?
		"CUDA_ERROR_UNSUPPORTED_PTX_VERSION" : r == CU_NOT_FOUND ?
		"CUDA_ERROR_NOT_FOUND" : "CUDA_ERROR_UNKNOWN";
	return CU_OK;
}

/* Error texts: the real runtime's, which needs no device. */
const char *cudaGetErrorString(cudaError_t e)
{
	const char *(*real)(cudaError_t) = (const char *(*)(cudaError_t))dlsym(RTLD_NEXT,
									      "cudaGetErrorString");

	return real ? real(e) : "unknown error (test double)";
}

const char *cudaGetErrorName(cudaError_t e)
{
	const char *(*real)(cudaError_t) = (const char *(*)(cudaError_t))dlsym(RTLD_NEXT,
									      "cudaGetErrorName");

	return real ? real(e) : "cudaErrorUnknown";
}

/* ------------------------------------------------------------------ the kernel log */

/*
 * CCDIAG_FAKECUDA_KMSG=denied: /dev/kmsg cannot be opened, as for a user
 * without CAP_SYSLOG where kernel.dmesg_restrict is 1 (Ubuntu, DGX OS).
 */
static int kmsg_denied(const char *path)
{
	const char *v = fake_cfg("CCDIAG_FAKECUDA_KMSG");

	if (!path || strcmp(path, "/dev/kmsg") || !v || strcmp(v, "denied"))
		return 0;
	errno = EPERM;
	return 1;
}

#define FORWARD_OPEN(name)                                                            \
int name(const char *path, int flags, ...)                                            \
{                                                                                     \
	int (*real)(const char *, int, ...) =                                         \
		(int (*)(const char *, int, ...))dlsym(RTLD_NEXT, #name);             \
	va_list ap;                                                                   \
	mode_t mode;                                                                  \
                                                                                      \
	if (kmsg_denied(path))                                                        \
		return -1;                                                            \
	va_start(ap, flags);                                                          \
	mode = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, mode_t) : 0; \
	va_end(ap);                                                                   \
	return real(path, flags, mode);                                               \
}
FORWARD_OPEN(open)
FORWARD_OPEN(open64)

/* ------------------------------------------------------------------ NVML */

typedef int nvmlReturn_t;            /* NVML_SUCCESS 0, NOT_FOUND 6, UNINITIALIZED 1 */
typedef struct fake_gpu *nvmlDevice_t;

nvmlReturn_t nvmlInit_v2(void)
{
	return fake_count() < 0 ? 9 /* NVML_ERROR_DRIVER_NOT_LOADED */ : 0;
}

nvmlReturn_t nvmlShutdown(void)
{
	return 0;
}

const char *nvmlErrorString(nvmlReturn_t r)
{
	return r == 0 ? "Success" : r == 6 ? "Not Found" : r == 9 ? "Driver Not Loaded" :
	       "Unknown Error";
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *buf, unsigned int len)
{
	snprintf(buf, len, "580.00.00-fake");
	return 0;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bus, nvmlDevice_t *d)
{
	setup();
	/* NVML sees every GPU of the host, whatever CUDA_VISIBLE_DEVICES says */
	for (int i = 0; i < fk.nphys; i++)
		if (!strcasecmp(fk.gpu[i].bus, bus) ||
		    (strlen(bus) == 16 && !strcasecmp(fk.gpu[i].bus, bus + 4))) {
			*d = &fk.gpu[i];
			return 0;
		}
	return 6;
}

static int any_peer(const struct fake_gpu *g)
{
	for (int k = 0; k < fk.nphys; k++)
		if (fk.p2p[g->phys][k])
			return 1;
	return 0;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, int *on)
{
	if (link >= 18)
		return 6;
	*on = any_peer(d);
	return 0;
}

nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t d, unsigned int link, unsigned int *v)
{
	(void)d;
	if (link >= 18)
		return 6;
	*v = 4;
	return 0;
}

/* The link trains up while a copy to or from host memory is queued on the GPU. */
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int *gen)
{
	*gen = (unsigned)(d->pending > 0 ? d->load_gen : d->idle_gen);
	return 0;
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int *w)
{
	*w = (unsigned)d->width;
	return 0;
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *gen)
{
	*gen = (unsigned)d->max_gen;
	return 0;
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int *w)
{
	*w = (unsigned)d->max_width;
	return 0;
}
