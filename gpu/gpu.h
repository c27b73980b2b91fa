#ifndef CCDIAG_GPU_H
#define CCDIAG_GPU_H

/*
 * The GPU layer: what the GPU probes (pcie, nvlink, hbm) and the nccl
 * backend share, beneath both probes/ and bench/: device selection
 * (--gpus; gpu/select.c), the per-host GPU inventory record and GPU names
 * (gpu/inventory.c), NVML loaded at run time (gpu/nvml.h), NUMA-local
 * pinned host buffers (gpu/mem.c), copy timing with CUDA events and the
 * per-host matrix printed on stdout (gpu/copy.c). docs/gpu.md describes the
 * methods and records.
 *
 * The pure helpers (parsing, picking, naming, formatting, arithmetic) are
 * built with or without CUDA, so unit tests cover them everywhere.
 */
#include "../core/mpictx.h"
#include "../core/options.h"
#include "../core/pci.h"
#include "../core/run.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#define GPU_MAX 64               /* devices one rank or host can list */
#define GPU_BUS_LEN 24           /* "0000:17:00.0", or an 8-digit domain, and the NUL */
#define GPU_GATE_MAX_COPIES 64   /* most copies queued behind a gate (see gpu_time_copies) */

/* --gpus, shared by every GPU probe and the nccl backend (listed by the pcie probe). */
extern const struct cc_param gpu_params[];

/* Validates --gpus before MPI starts (struct probe's check). Returns 0 or -1 with err. */
int gpu_check_params(char *err, size_t len);

/* The --gpus value, or NULL when not given. */
const char *gpu_list_option(void);

/*
 * The devices --gpus names that exist among ndev (in its order), or all
 * ndev when it is not given or does not parse. Returns how many (<= max).
 */
int gpu_devices(int ndev, int *out, int max);

/* ------------------------------------------------------------------ pure helpers */

/*
 * Parses a --gpus list of device ordinals: "0,2,5", ranges "0-3", or both
 * ("0-1,4"). Returns how many were written to out (at most max), or -1
 * with a one-line message in err (empty item, not a number, a range
 * running backwards, a repeated device, too many).
 */
int gpu_parse_list(const char *s, int *out, int max, char *err, size_t len);

/*
 * The device that local rank local_rank uses when the rank sees ndev
 * devices: list[local_rank] when a list is given (nlist > 0), else
 * local_rank. Returns -1 when that rank has none (more ranks than devices
 * or list entries, or a listed device it cannot see).
 */
int gpu_pick(int local_rank, int ndev, const int *list, int nlist);

/*
 * The devices of the ranks of one host from their views (per-rank
 * CUDA_VISIBLE_DEVICES: Slurm's --gpus-per-task, --gpu-bind=closest): rank
 * r sees count[r] devices whose bus ids, in ordinal order, are
 * views[r * GPU_MAX + 0 .. count[r] - 1] (GPU_BUS_LEN each). Among the ranks
 * sharing one view the k-th (in rank order) takes the view's k-th device;
 * ord[r] is that ordinal, -1 when the view has fewer devices than ranks.
 * Returns 0 when the chosen GPUs are distinct, -1 when two ranks with
 * overlapping views would drive one GPU (ord[] is then not to be used).
 */
int gpu_view_assign(const char *views, const int *count, int nranks, int *ord);

/*
 * Writes a PCI bus id in sysfs form: lower case, 4-digit domain when the
 * domain fits ("00000000:17:00.0" from NVML and "0000:17:00.0" from CUDA
 * both give "0000:17:00.0"). out holds GPU_BUS_LEN bytes or more.
 */
void gpu_bus_norm(const char *in, char *out, size_t len);

/*
 * The index of bus in the sorted, de-duplicated list bus[0..n): the "N" of
 * HOST/gpuN, which then matches nvidia-smi's PCI order. -1 when absent.
 */
int gpu_bus_index(char (*bus)[GPU_BUS_LEN], int n, const char *id);

/*
 * Adds id to the sorted list bus[0..*n) (capacity max) unless present.
 * Returns 0, or -1 when the list is full.
 */
int gpu_bus_add(char (*bus)[GPU_BUS_LEN], int *n, int max, const char *id);

/*
 * The copy sizes of a GPU probe: the -b/-e/-f/-i sweep when -b or -e was
 * given, else dmin..dmax by factors of 2. Returns how many were written.
 */
size_t gpu_copy_sizes(const struct cc_options *o, size_t dmin, size_t dmax, size_t *out,
		      size_t max_out);

/*
 * Theoretical device-memory bandwidth in GB/s from the memory clock in kHz
 * (as cudaDevAttrMemoryClockRate gives it) and the bus width in bits:
 * 2 transfers per clock (DDR and HBM) x width / 8. 0 when either is unknown.
 */
double gpu_mem_rate_GBps(int clock_khz, int bus_bits);

/*
 * Prints an n x n matrix (row = source GPU, column = destination) in the
 * layout of p2pBandwidthLatencyTest: a title line, a header of column
 * indices, one row per source. A NaN cell prints "n/a" (no P2P access or
 * not measured), the diagonal "-". decimals: digits after the point.
 */
void gpu_matrix_print(FILE *f, const char *title, int n, const double *m, int decimals);

/*
 * The GB/s of reps samples: out[r] = bytes / sec[r * stride] / 1e9, 0 for a
 * sample that took no time. stride 2 with sec + i reads stream i of the
 * each[] that gpu_sample fills for 2 streams.
 */
void gpu_rates_GBps(const double *sec, int reps, int stride, double bytes, double *out);

/*
 * Sets "bw_GBps" (the median) and "bw_stats_GBps" {n,min,median,mean,max,
 * p99,cv} of rec from n bandwidth samples in GB/s. Returns the median.
 */
double gpu_bw_fields(json_t *rec, const double *bw, int n);

/* The PTX of gpu/kernels.cu (gpu/kernels_ptx.c, made by scripts/gen-ptx.sh). */
extern const char gpu_kernels_ptx[];

/* ------------------------------------------------------------------ CUDA side */

/* One rank's view of its GPU, filled by gpu_open. */
struct gpu_ctx {
	int ndev;                 /* devices this rank sees; 0 when CUDA failed */
	int dev;                  /* this rank's device ordinal; -1: none (rank idles) */
	char bus_id[GPU_BUS_LEN]; /* its PCI bus id, sysfs form */
	struct pci_link link;     /* its PCIe link at open, GPU idle (numa_node -1 when unknown) */
	const char *link_source;  /* "nvml" or "sysfs": where link was read */
	const char *selection;    /* how dev was chosen: "--gpus", "local rank",
				   * "per-rank visibility" (CUDA_VISIBLE_DEVICES per rank), "none" */
	int open_failed;          /* its context could not be created: an error record names it */
};

/*
 * Brings up CUDA for probe on every rank of run->mpi->world (collective),
 * under the watchdog's "gpu open" deadline (a hung cuInit ends as a timeout
 * naming the host): counts devices, picks this rank's (--gpus, local rank,
 * or per-rank visibility: see docs/gpu.md), creates its context and reads
 * its PCIe link. A GPU whose context cannot be created gets an error record
 * naming it (host, GPU, CUDA's text) and its rank idles (dev -1) while the
 * others are measured; the run then exits 1. Every rank returns the same:
 * 0 to run, 1 to skip (why: "CUDA: <cudaGetErrorString> (rank R on HOST)"
 * or "no CUDA device ..."), -1 on a bad --gpus list or when no GPU could be
 * opened (why says so). On first success it also writes the per-host
 * "inventory" records (once per run).
 */
int gpu_open(struct cc_run *run, const char *probe, struct gpu_ctx *g, char *why, size_t len);

/*
 * Records the outcome rc of gpu_open for probe name: a skip record
 * "skipped: <why>" for 1, an error record for -1. Returns the probe's exit
 * code (CC_EXIT_OK for a skip, CC_EXIT_RUNTIME for an error).
 */
int gpu_open_failed(struct cc_run *run, const char *name, int rc, const char *why);

/*
 * Selects this rank's device only (no inventory, no host tables): what the
 * nccl backend needs; the same rule as gpu_open. Collective over
 * mpi->local. Returns 0 with *dev set (and current), 1 when this rank has
 * no device or CUDA failed (why), -1 on a bad --gpus list (why).
 */
int gpu_select(const struct mpictx *mpi, int *dev, char *why, size_t len);

/*
 * The device gpu_select would choose for this rank, without making it
 * current or creating its context (the ib probe's GPUDirect buffers).
 * Collective over mpi->local; returns as gpu_select.
 */
int gpu_rank_device(const struct mpictx *mpi, int *dev, char *why, size_t len);

/*
 * "fake" when the CUDA calls are answered by the test double (tests/fakes/,
 * which exports ccdiag_test_double), else NULL. Records of a test double
 * carry "transport": "fake", and ccreport never judges them.
 */
const char *gpu_transport(void);

/*
 * Error records of GPUs (collective over run->mpi->world): mine is this
 * rank's object {host, bus_id or src_bus/dst_bus, message}, an array of
 * them, or NULL (taken). Rank 0 names each GPU as gpu_emit does, writes it
 * as an "error" record of probe and counts it in run->failures.
 */
void gpu_errors(struct cc_run *run, const char *probe, json_t *mine);

/* The versions this binary links: {cuda_runtime, nccl} (built-in parts only); a new object. */
json_t *gpu_build_versions(void);

/*
 * Gathers every rank's array of records (mine, taken; may be empty) to rank
 * 0, which names the GPUs in them (fills "gpu"/"element" from "bus_id",
 * or "src_gpu"/"dst_gpu"/"element" from "src_bus"/"dst_bus") and writes
 * each as a "measurement" record, or as the record type its "type" member
 * names ("error", counted as a failure, or "skip": one GPU's failure or
 * skip). Collective over run->mpi->world. Returns
 * on rank 0 the array of all records (new reference), NULL elsewhere.
 */
json_t *gpu_emit(struct cc_run *run, json_t *mine);

#ifdef HAVE_CUDA
#include <cuda_runtime.h>

/*
 * A CUDA driver API function (cuModuleLoadData, cuCtxGetCurrent, ...): the
 * process's own first (the test double, LD_PRELOADed, answers there), else
 * libcuda.so.1's. NULL when neither has it, with why ("cannot load
 * libcuda.so.1: ...", "the CUDA driver ... has no NAME") when why is given.
 */
void *gpu_driver_sym(const char *name, char *why, size_t len);

/* Pinned host memory placed on one NUMA node (or wherever the kernel puts it). */
struct gpu_host_buf {
	void *p;
	size_t bytes;
	int numa_node;           /* the node it is bound to; -1 when not bound */
};

/*
 * Allocates bytes of page-locked host memory, bound to NUMA node numa when
 * numa >= 0 and the kernel allows it, pages touched, registered with CUDA
 * for every device (portable). Returns 0, or -1 with why.
 */
int gpu_host_alloc(struct gpu_host_buf *b, size_t bytes, int numa, char *why, size_t len);
void gpu_host_free(struct gpu_host_buf *b);

/* The kernels of gpu/kernels.cu (gpu/kernels_ptx.c), loaded into one context. */
struct gpu_kernels {
	void *module;            /* CUmodule */
	void *copy, *triad;      /* CUfunction: ccdiag_copy, ccdiag_triad */
	unsigned grid, block;    /* launch shape: block threads; the blocks the GPU holds at once */
};

/*
 * Loads the PTX kernels into the current context (dev's, made current by
 * the caller) with the driver API: cuModuleLoadData (the driver compiles the
 * PTX for the GPU), cuModuleGetFunction. Returns 0, or -1 with why (no
 * libcuda, a driver without the calls, the driver's CUresult by name).
 */
int gpu_kernels_load(int dev, struct gpu_kernels *k, char *why, size_t len);
void gpu_kernels_unload(struct gpu_kernels *k);

/* cuLaunchKernel of fn (one of k's) on stream s. Returns 0, or -1 with why. */
int gpu_kernel_launch(const struct gpu_kernels *k, void *fn, void **params, cudaStream_t s,
		      char *why, size_t len);

/* One stream of copies for gpu_time_copies. */
struct gpu_copy {
	void *dst;
	const void *src;
	size_t bytes;
	int dev;                 /* the device whose stream runs the copies */
	int peer_dst, peer_src;  /* devices for cudaMemcpyPeerAsync; peer_dst < 0: cudaMemcpyAsync */
	cudaStream_t stream;
	int gate;                /* hold the stream until every copy is queued */
	int times;               /* copies per iteration (0 = 1): 2 makes an interfering
				  * stream outlast the timed one (nvbandwidth's bidir) */
	const struct gpu_kernels *kern; /* non-NULL: each "copy" launches fn(params) of kern */
	void *fn;
	void **params;
};

/*
 * Times iters back-to-back copies on each of n streams (1 or 2), started
 * together (a "copy" is cudaMemcpyAsync or cudaMemcpyPeerAsync, or a launch
 * of c->fn when c->kern is set: the hbm probe's kernels): copies are queued
 * in turn on the streams; streams with gate
 * set are first held by a host function (cudaLaunchHostFunc) that returns
 * only once every copy is queued (at most GPU_GATE_MAX_COPIES; above that
 * no gate), so the timed span is the copy engines' work, not the host's
 * queueing. A CUDA event pair on each stream gives sec[i], the seconds of
 * stream i. Returns 0, or -1 with why (the CUDA error text).
 */
int gpu_time_copies(const struct gpu_copy *c, int n, int iters, double *sec,
		    char *why, size_t len);

/*
 * warmup untimed copies, then reps samples of gpu_time_copies(iters):
 * span[r] is sample r's longest stream time in seconds; each[r * n + i]
 * (when each is not NULL) stream i's. Returns 0, or -1 with why.
 */
int gpu_sample(const struct gpu_copy *c, int n, int warmup, int iters, int reps, double *span,
	       double *each, char *why, size_t len);

/* The PCI bus id of device dev in sysfs form ("unknown-N" when CUDA cannot say). */
void gpu_bus_of(int dev, char *out, size_t len);

/*
 * The PCIe link of the GPU at bus now: generation and width from NVML when
 * it is up (as nvidia-smi reads them), else sysfs; numa_node from sysfs.
 * NVIDIA GPUs idle at 2.5 GT/s: read it while a copy runs to see what the
 * link trains to. *source says "nvml" or "sysfs". Returns 0, or -1 when
 * neither knows the device.
 */
int gpu_read_link(const char *bus, struct pci_link *l, const char **source);

/* "CUDA: <error string>" for e into why; returns -1 for use in return statements. */
int gpu_cuda_fail(cudaError_t e, const char *call, char *why, size_t len);
#endif

#endif
