#ifndef CCDIAG_ESTIMATE_H
#define CCDIAG_ESTIMATE_H

#include <jansson.h>
#include <stddef.h>

/*
 * The training-time and cost model of ccreport: what the measured collective
 * bandwidth means for one training run of a tp x pp x dp layout. A model, never a
 * measurement: every input is listed in its output. Formulas, sources and
 * assumptions in docs/estimate.md. Pure: no I/O.
 */

enum est_stage { EST_DDP, EST_ZERO1, EST_ZERO2, EST_ZERO3 };

/* measured busbw (GB/s) of the all-rank all_reduce at a payload of bytes; NaN: none there */
typedef double (*est_curve_fn)(double bytes, void *ctx);

struct est_inputs {
	double params;             /* model parameters (all of them, e.g. 7e9) */
	double bytes_per_grad;     /* bytes per gradient element: 2 bf16/fp16, 4 fp32 */
	double bytes_per_param;    /* bytes per parameter element the ZeRO all-gathers move; NaN = bytes_per_grad */
	int dp_size;               /* data-parallel degree dp */
	int tp, pp;                /* tensor- and pipeline-parallel degrees; 0 = 1 */
	int gpus;                  /* GPUs of the job: tp x pp x dp */
	int gpus_per_node;         /* GPUs sharing one node's NICs; 0 = gpus (one node) */
	int ga_steps;              /* micro-batches per step (gradient accumulation); 0 = 1 */
	double layers;             /* transformer layers (tp or pp > 1) */
	double act_bytes;          /* bytes of one layer's activation per micro-batch (tokens x hidden x bytes) */
	enum est_stage stage;      /* DDP, ZeRO-1, -2, -3 */
	double tokens_per_step;    /* global batch, tokens */
	double total_tokens;       /* tokens of the whole run */
	double peak_tflops;        /* per GPU, dense, in the training dtype: TFLOP/s = 1e12 FLOP/s */
	double mfu;                /* assumed model FLOPs utilisation, (0, 1] */
	double price_gpu_hour;     /* price per GPU-hour, any currency; 0 = no cost */
	double bucket_bytes;       /* gradient bucket: the payload of one collective call */
	double overlap;            /* fraction of compute time the data-parallel sync can hide under, [0, 1] */
	/* measured, by ccprobe */
	double busbw_GBps;         /* all-rank all_reduce busbw at the bucket payload (GB/s = 1e9 B/s) */
	est_curve_fn busbw_at;     /* the same at any payload (tails, groups); NULL: busbw_GBps at every size */
	void *curve;               /* busbw_at's context */
	double alpha_us;           /* Hockney fit of that all_reduce: alpha; NaN = none */
	double beta_GBps;          /* its beta (bytes of S per second), listed */
	double beta_busbw_GBps;    /* beta x busbw factor at the fit's ranks; NaN: from beta and fit_ranks */
	int fit_ranks;             /* ranks the fit measured; 0 = dp_size */
	double tp_busbw_GBps;      /* intra-node all_reduce busbw at act_bytes (tp > 1); NaN = none */
	double pair_GBps;          /* node-to-node bandwidth one pipeline send uses (pp > 1); NaN = none */
};

struct est_outputs {
	double k;                  /* data-parallel passes per step: 2, or 2 x ga_steps + 1 (ZeRO-3) */
	double grad_bytes;         /* S: gradient bytes each GPU syncs per pass */
	double param_bytes;        /* the parameter bytes of each all-gather (ZeRO) */
	double groups;             /* data-parallel rings crossing each node (tp of them when tp fills a node) */
	double dp_nodes;           /* nodes one data-parallel ring spans */
	double buckets;            /* ceil(S / bucket_bytes) */
	double sync_s;             /* data-parallel sync per step from busbw (+ latency_s), seconds */
	double latency_s;          /* the ring latency the measured ranks did not pay (from the fit) */
	double sync_fit_s;         /* the same from the Hockney fit; NaN without one */
	double tp_s;               /* tensor-parallel all_reduces per step; 0 when tp = 1 */
	double pp_s;               /* pipeline sends on the critical path per step; 0 when pp = 1 */
	double compute_s;          /* compute per step */
	double exposed_s;          /* communication not hidden under compute */
	double step_s;             /* compute + exposed */
	double comm_fraction;      /* exposed / step */
	double steps;              /* total_tokens / tokens_per_step */
	double days;               /* steps x step / 86400 */
	double gpu_hours;          /* gpus x steps x step / 3600 */
	double cost;               /* gpu_hours x price */
	double min_payload, max_payload; /* the payloads whose busbw was read */
};

/* The stage's name ("ddp", "zero1", "zero2", "zero3") and back (0, or -1 when unknown). */
const char *est_stage_name(enum est_stage s);
int est_stage_parse(const char *name, enum est_stage *s);

/*
 * Checks the inputs and computes the outputs. Returns 0, or -1 with one
 * line in err naming the input that is out of range.
 */
int est_compute(const struct est_inputs *in, struct est_outputs *out, char *err, size_t len);

/*
 * The summary.json "estimate" object:
 * {"label": "model, not a measurement", "inputs": {...}, "outputs": {...},
 *  "formulas": "docs/estimate.md"}, units in every name. NULL on no memory.
 */
json_t *est_json(const struct est_inputs *in, const struct est_outputs *out);

/*
 * The "inputs" of est_json, as summary.json recorded them, read back into e;
 * 0, or -1 when they cannot be read. The one place that maps those names to
 * struct est_inputs: a field added there is read here.
 */
int est_inputs_of(const json_t *inputs, struct est_inputs *e);

/* One point of a scaling curve and what ccreport shows for it. */
struct scale_point {
	int nodes;
	double busbw_GBps;         /* at the large-message plateau */
};

struct scale_eff {
	int nodes;
	double busbw_GBps;
	double ideal_GBps;         /* the base's busbw (flat: busbw is per link); NaN below the base */
	double eff_base;           /* busbw / ideal; NaN below the base */
	double eff_step;           /* busbw / busbw of the previous point; NaN for the base and below */
};

/*
 * Efficiency of each node count against ideal scaling. busbw is normalised
 * per link, so ideal scaling keeps it flat: the ideal line is the base's
 * busbw, the base being base_nodes, or (0) the smallest node count of at
 * least 2 with a busbw above 0 (one node measures no network). Node counts
 * of at least 2 below that base measured 0: a failed step, efficiency 0.
 * p must be sorted by nodes. Fills out[0..n). Returns the base's index, or
 * -1 when there is no usable base (no point at base_nodes or its busbw is
 * not above 0; no node count of at least 2 above 0).
 */
int est_scaling(const struct scale_point *p, size_t n, int base_nodes, struct scale_eff *out);

/*
 * e[0..n) as a JSON array of {"nodes", "busbw_GBps", "ideal_GBps",
 * "eff_base", "eff_step"} (null where NaN), for summary.json's
 * charts.scaling. NULL on no memory.
 */
json_t *est_scaling_json(const struct scale_eff *e, size_t n);

#endif
