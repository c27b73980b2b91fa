#ifndef CCDIAG_TRAINSTEP_H
#define CCDIAG_TRAINSTEP_H

/*
 * The parts of the trainstep probe: trainstep.c (options, the shape, the
 * loop of steps, the records) drives one engine per rank through struct
 * ts_engine: trainstep_host.c (OpenBLAS sgemm, buckets all-reduced by a
 * communication thread with MPI_Allreduce) or trainstep_gpu.c (cuBLASLt
 * bf16 products, buckets all-reduced by NCCL on a communication stream).
 * docs/estimate.md, "Measured against a real step", has the method.
 */
#include "../core/mpictx.h"
#include "../core/run.h"

#include <stddef.h>

enum ts_mode { TS_FULL, TS_COMPUTE, TS_COMM };

/* the model run: hidden from params unless given, then scaled down to fit the memory */
struct ts_shape {
	long h, L, T;                /* hidden, layers, tokens per rank */
	double params, params_asked, scale;  /* scale = run / asked */
	double bytes;                /* one rank's weights, gradients, activations and scratch */
};

/* Bytes one rank needs for hidden h, L layers, T tokens (weights and gradients fp32; act_size per activation element) */
double ts_shape_bytes(long h, long L, long T, double act_size);

/* The shape of the options, h reduced by 10 % steps until ts_shape_bytes fits mem, then to a multiple of mult */
void ts_shape_of(struct ts_shape *s, double params, int hidden, int layers, int tokens, double mem,
		 double act_size, int mult);

/* One rank's step, as trainstep.c asks for it. */
struct ts {
	struct cc_run *run;
	struct mpictx *mpi;
	struct ts_shape sh;
	size_t bucket_bytes;         /* --train-bucket */
	size_t bucket_el;            /* gradient elements of a full bucket (fp32) */
	long nb;                     /* buckets */
	double slow;                 /* CCPROBE_FAULT=slow:RANK[:F]: compute F times as long */
	double chk_local[2];         /* the last bucket before its reduction: sum, sum of |.| */
	double ready;                /* seconds from the step's start to its last bucket's hand-over */
	void *dev;                   /* the engine's own state */
};

/* Elements of bucket b (the last may be partial). */
size_t ts_bucket_len(const struct ts *t, long b);

struct ts_engine {
	const char *backend;         /* "mpi", "nccl" */
	const char *dtype;           /* of the products: "float", "bf16" */
	const char *compute;         /* what runs the products, for the records */
	double act_size;             /* bytes of an activation element */
	int hidden_multiple;         /* hidden is rounded down to a multiple of this (0, 1: any) */
	/* why this engine cannot run in this build, or NULL */
	const char *missing;
	/*
	 * Prepares this rank: its device, its buffers. Called on every rank
	 * (it may take part in collectives over the node's ranks). Returns 0,
	 * 1 to skip or -1 on error, with why; the caller agrees on the worst.
	 */
	int (*open)(struct ts *t, char *why, size_t len);
	/*
	 * Once every rank opened (collective): what needs the others (a
	 * communicator, a thread on it). Returns 0, 1 to skip or -1 with why,
	 * the same on every rank.
	 */
	int (*start)(struct ts *t, char *why, size_t len);
	/*
	 * One step of mode m: the full step, compute alone (no reductions) or
	 * the buckets' reductions alone, one after the other. *sec gets this
	 * rank's seconds from its start to its end, t->ready the hand-over of
	 * its last bucket (full step). Returns 0 or -1 with why.
	 */
	int (*step)(struct ts *t, enum ts_mode m, double *sec, char *why, size_t len);
	/* After a full step: the reduced last bucket's sum into *got (this rank's copy). 0 or -1. */
	int (*last_sum)(struct ts *t, double *got, char *why, size_t len);
	/* "fake" when a test double ran it, else NULL */
	const char *(*transport)(void);
	void (*close)(struct ts *t);
};

extern const struct ts_engine ts_host, ts_gpu;

/* --train-threads: BLAS threads per rank (host) */
extern int ts_blas_threads;

/* Uniform in [-r, r] from a xorshift state (the same numbers on every machine). */
void ts_fill(float *v, size_t n, float r, unsigned long long *s);

#endif
