#ifndef CCDIAG_FAKE_H
#define CCDIAG_FAKE_H

/*
 * tests/fakes/: the test double of the CUDA runtime, NVML and NCCL calls the
 * GPU probes and the nccl backend make. Built by the Makefile into
 * build/tests/libfakecuda.so (every tests/fakes/fake*.c goes in) and
 * LD_PRELOADed by the tests (tests/lib.sh: t_fakecuda), with
 * build/tests/fakecuda/ on LD_LIBRARY_PATH so that dlopen("libnvidia-ml.so.1")
 * finds the same library. ccprobe sees the exported symbol
 * ccdiag_test_double and marks its records "transport": "fake", which
 * ccreport never judges.
 *
 * Configured per test through environment variables, or a file of KEY=VALUE
 * lines named by CCDIAG_FAKECUDA_CONFIG (the environment wins):
 *   CCDIAG_FAKECUDA_GPUS=N        physical GPUs of the host (unset: "no CUDA device")
 *   CCDIAG_FAKECUDA_BUS=B,B,...   their PCI bus ids (default: an HGX H100's 8)
 *   CUDA_VISIBLE_DEVICES=0,3      honoured as the runtime does (ordinals)
 *   CCDIAG_FAKECUDA_PCIE=I:L:W    link generation when idle (I), under a copy (L),
 *                                 width W; max is Gen5 x16 (default 1:5:16: a healthy
 *                                 H100 idling at 2.5 GT/s)
 *   CCDIAG_FAKECUDA_PCIE_GPU=D=I:L:W  the same for physical GPU D only
 *   CCDIAG_FAKECUDA_P2P=all|none|A-B,...  peer access (directed pairs), default all
 *   CCDIAG_FAKECUDA_RATES=h2d:d2h:d2d:p2p:staged[:kern]  copy rates in GB/s of bytes
 *                                 copied (default 55:55:1200:350:8:1450): d2d is the
 *                                 copy engines' (cudaMemcpyAsync within a GPU: 2400
 *                                 GB/s read + write, 72 % of the 3352 GB/s memory
 *                                 rate, as Hopper's 67-74 %), kern a copy kernel's
 *                                 (cuLaunchKernel of the hbm probe's PTX: 87 %);
 *                                 triad moves 3 x its size at the kernel's traffic rate
 *   CCDIAG_FAKECUDA_PTX=refuse    cuModuleLoadData fails as a driver older than the
 *                                 PTX's ISA does (CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
 *   CCDIAG_FAKECUDA_SLOW=D:F      physical GPU D copies F times slower
 *   CCDIAG_FAKECUDA_FAIL=D        creating a context on GPU D fails (uncorrectable ECC)
 *   CCDIAG_FAKECUDA_HANG=D|init[:RANK]  context creation on GPU D, or the first
 *                                 runtime call (cuInit) of world rank RANK (every
 *                                 rank when omitted), never returns
 *   CCDIAG_FAKECUDA_KMSG=denied   /dev/kmsg cannot be opened (EPERM), as for a user
 *                                 without CAP_SYSLOG under kernel.dmesg_restrict=1
 *   CCDIAG_FAKECUDA_MODE=exclusive  compute mode EXCLUSIVE_PROCESS: one process per
 *                                 GPU (a lock per GPU in /dev/shm): another process's
 *                                 context there fails (cudaErrorDevicesUnavailable)
 *   CCDIAG_FAKECUDA_REPORT=FILE   each process appends, at exit, its polls without a
 *                                 yield and the GPUs it created a context on
 * The driver API's module calls (cuModuleLoadData, cuModuleGetFunction,
 * cuLaunchKernel, cuModuleUnload) run the hbm probe's two kernels
 * (ccdiag_copy, ccdiag_triad) when the PTX names them.
 * Copies really copy (device memory is host memory) so data checks hold; their
 * time is virtual: bytes / rate, on the stream's clock, which events read.
 * Streams run their queued work when synchronised or queried, so a copy is
 * "in flight" (the PCIe link reads loaded) from its enqueue until then.
 *
 * Adding faked calls for another probe (e.g. cuBLASLt): write
 * tests/fakes/fake<lib>.c, include this header, and use fake_cfg() for its
 * settings, fake_current() / fake_touch() for the device and its faults and
 * fake_stream_work() to queue work that takes virtual time on a stream; NVML calls go in fakecuda.c
 * beside the others (one library answers dlopen("libnvidia-ml.so.1")).
 */
#include <stddef.h>

#define FAKE_MAX_GPUS 16

struct fake_gpu {
	int phys;                /* index on the host, as NVML numbers it */
	char bus[32];            /* "0000:18:00.0" */
	int idle_gen, load_gen, width, max_gen, max_width;
	double slow;             /* rates divided by this */
	int ctx;                 /* a context exists in this process */
	int pending;             /* copies queued and not yet run touching host memory */
};

/* A setting: the environment, else the config file; NULL when unset. */
const char *fake_cfg(const char *key);

/* How many GPUs this process sees (after CUDA_VISIBLE_DEVICES); -1: no CUDA device. */
int fake_count(void);

/* Visible ordinal -> the GPU, or NULL when out of range. */
struct fake_gpu *fake_gpu(int ordinal);

/* The GPU current in this thread (cudaSetDevice). */
struct fake_gpu *fake_current(void);

/* Creates dev's context now: hangs or fails as configured. Returns 0 or a cudaError_t. */
int fake_touch(struct fake_gpu *g);

/* The physical GPU whose memory p is in, or -1 for host memory. */
int fake_owner(const void *p);

/*
 * Queues work on stream (a cudaStream_t; NULL = the legacy stream, run at
 * once): when the stream runs, fn(arg) is called (may be NULL) and the
 * stream's clock advances by seconds. Returns 0 or a cudaError_t.
 */
int fake_stream_work(void *stream, double seconds, void (*fn)(void *), void *arg);

#endif
