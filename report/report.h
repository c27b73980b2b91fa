#ifndef CCDIAG_REPORT_H
#define CCDIAG_REPORT_H

/*
 * ccreport's engine: profiles (profile.c), the streaming results reader
 * (load.c), per-criterion aggregation and verdicts (eval.c), cross-node
 * consistency (consistency.c), baseline comparison (baseline.c) and the
 * summary document (summary.c). It links no MPI, CUDA, NCCL or verbs.
 * docs/report.md is the contract of the summary document; docs/profiles.md
 * the profile format.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#define RPT_VERSION "0.1.0"

struct rv;

/* exit codes of ccreport (README.md, --help) */
enum rpt_exit {
	RPT_EXIT_PASS = 0,        /* pass, warnings allowed */
	RPT_EXIT_FAIL = 1,        /* a criterion failed, or a regression against the baseline */
	RPT_EXIT_USAGE = 2,       /* bad command line, unreadable or malformed input or profile */
	RPT_EXIT_OUTPUT = 3,      /* the outputs could not be written */
	RPT_EXIT_INCOMPLETE = 4,  /* a required criterion could not be judged */
};

/* worst last: the overall verdict is the maximum */
enum rpt_verdict { V_PASS, V_WARN, V_INCOMPLETE, V_FAIL };

enum rpt_scope { SC_GPU, SC_GPU_PAIR, SC_NIC, SC_RAIL_PAIR, SC_LINK, SC_NODE, SC_CLUSTER, SC_N };

const char *rpt_verdict_name(int v);
const char *rpt_scope_name(int s);

/* ---- small string -> index hash table (htab.c) ---- */
struct htab {
	char **keys;      /* owned copies; NULL = empty slot */
	int *vals;
	size_t cap, n;
};
/* index stored under key, or -1 */
int htab_get(const struct htab *h, const char *key);
/* stores key -> val (replacing); returns 0, or -1 when out of memory */
int htab_put(struct htab *h, const char *key, int val);
/* the table's own copy of key (stable until htab_free), or NULL */
const char *htab_key(const struct htab *h, const char *key);
void htab_free(struct htab *h);

/* ---- profiles (profile.c) ---- */
#define SIZE_PLATEAU (-1LL)
#define SIZE_ANY (-2LL)
#define PLATEAU_SIZES 3   /* the plateau: the largest sizes measured (docs/profiles.md) */

struct criterion {
	char *id;                /* from [criterion ID] */
	char *title;
	char *probe;             /* probe name, or NULL for a collective */
	char *collective;        /* collective name, or NULL for a probe */
	char *backend;           /* collectives: mpi, nccl; NULL = any */
	char *test, *dtype, *op; /* NULL = any */
	int min_nodes, max_nodes;  /* collectives: job size selected; 0 = any */
	char *metric;            /* field path as written, e.g. "lat_us.p99" */
	char *path[3];           /* its components */
	int npath;
	const char *unit;        /* "GB/s", "Gb/s", "us", "%", "count" */
	const char *spread_of;   /* stats object whose cv is the spread, or NULL */
	int scope;               /* enum rpt_scope */
	long long size;          /* bytes, SIZE_PLATEAU or SIZE_ANY */
	int ge;                  /* 1: value >= bound passes; 0: value <= bound */
	double bound;            /* absolute bound in the metric's unit (when relative == 0) */
	double relative;         /* > 0: the bound is this fraction of the record's rate_GBps */
	int node_best;           /* with relative: of the best element of the same host instead */
	int higher;              /* the metric's direction from the metric table: 1 higher is better */
	char *bound_text;        /* as written, for the report */
	int fail;                /* severity: 1 fail, 0 warn */
	int repeat_best;         /* repeats of one size and direction: 1 the best, 0 the worst */
	int required;
	double outlier_tol;      /* fraction below the peers' median that is flagged; < 0 off */
	int line;                /* profile line of the section's first key, for messages */
	int bound_line;
	int derived;             /* DERIVED_*: judged from the model, not from records (model.c) */
	int base_nodes;          /* scaling_efficiency: the reference node count; 0 = smallest >= 2 */
	double drop_below;       /* soak_drops: a drop is below this fraction of the median (soak.h) */
};

/* criteria whose values ccreport derives (model.c): metric scaling_efficiency, comm_fraction;
 * (model_ckpt.c) checkpoint_stall_fraction; (soak.c) soak_cv, soak_worst, soak_drops */
enum { DERIVED_NONE, DERIVED_SCALING, DERIVED_COMM, DERIVED_CKPT, DERIVED_SOAK };

/* ---- the target workload of the training estimate (workload.c, docs/estimate.md) ---- */
enum wl_key {
	WL_PARAMS, WL_BYTES_PER_GRAD, WL_DP_SIZE, WL_GPUS, WL_STAGE, WL_TOKENS_PER_STEP,
	WL_TOTAL_TOKENS, WL_PEAK_TFLOPS, WL_MFU, WL_PRICE, WL_BUCKET, WL_OVERLAP,
	WL_BACKEND, WL_DTYPE,
	/* the parallel layout (issue 15) */
	WL_TP, WL_PP, WL_GPUS_PER_NODE, WL_GA_STEPS, WL_BYTES_PER_PARAM, WL_LAYERS, WL_ACT_BYTES,
	/* measured compute and memory (model_compute.c) */
	WL_COMPUTE_DTYPE, WL_MATMUL_EFF, WL_WEIGHT_BYTES, WL_OPTIM_BYTES,
	WL_CKPT_BYTES, WL_CKPT_EVERY,  /* the checkpoint estimate (model_ckpt.c) */
	WL_N
};
struct workload {
	double v[WL_N];          /* numbers (stage: enum est_stage; checkpoint_every: > 0 steps, < 0 -seconds) */
	char *s[WL_N];           /* backend, dtype */
	int from[WL_N];          /* 0 default, > 0 the profile line, -1 --workload */
	int line;                /* profile line of [workload]'s first key; 0 = no section */
	int any;                 /* a key was given (profile or flag): an estimate is wanted */
};
/* the key's name in the profile, flags and summary.json */
const char *wl_key_name(int k);
/*
 * Sets KEY to VALUE (from = profile line, or -1 for a flag). Returns 0, or -1
 * with "what is wrong" (no file or line) in err.
 */
int workload_set(struct workload *w, const char *key, const char *value, int from,
		 char *err, size_t len);
/* "KEY=VALUE" of --workload; the same */
int workload_flag(struct workload *w, const char *arg, char *err, size_t len);
/* after profile and flags: the keys the estimate needs are there; -1 with err */
int workload_check(const struct workload *w, const char *profile_name, char *err, size_t len);
/* the value of key k: given, or its default (NaN: none; dp_size and gpus come from the run) */
double workload_value(const struct workload *w, int k);
/* where key k came from: "profile line N", "--workload" or "default", in buf */
const char *workload_source(const struct workload *w, int k, char *buf, size_t len);
void workload_free(struct workload *w);

struct profile {
	char *name, *path, *description;
	char *gpu_model;
	int gpus_per_node, nics_per_node;
	double nic_rate_gbps;
	double outlier_tol;      /* default for criteria: fraction */
	double baseline_tol;     /* fraction */
	int consistency_fail;    /* version mismatch: 1 fail, 0 warn */
	double gpu_memory_gb;    /* [hardware] gpu_memory: least memory per GPU, GB = 1e9 B; 0 = any */
	struct workload wl;      /* [workload] and --workload */
	struct criterion *crit;
	int ncrit;
};

/*
 * Parses the profile at path. Returns 0, or -1 with "path:line: what is
 * wrong" (or "path: what") in err. On error *p is freed.
 */
int profile_load(struct profile *p, const char *path, char *err, size_t len);
/* the same from a string (fuzzing, tests); name is used in messages */
int profile_parse_string(struct profile *p, const char *text, const char *name,
			 char *err, size_t len);
/*
 * Finds a profile: an existing path, else NAME.ini in $CCREPORT_PROFILES,
 * ./profiles, the folder beside the executable's ../profiles and the
 * installed share folder. Returns a malloc'd path or NULL.
 */
char *profile_find(const char *arg, const char *argv0);
void profile_free(struct profile *p);
/*
 * What the criteria need measured (ccreport --needs, for ccdiag's plan):
 * {profile, path, gpus_per_node, nics_per_node, nic_rate_Gbps, criteria: [ID],
 * needs: [{kind (probe, collective, soak), name, backend?, tests, sizes, plateau,
 * scale, required, max_nodes?, workload?, of? (a soak's: probe or collective)}],
 * bucket_bytes?}. NULL only when out of memory.
 */
json_t *profile_needs(const struct profile *p);
/* size_parse() (core/size.h) as a long long: "8", "64K", "4M", "1G"; -1 on error */
int rpt_parse_size(const char *s, long long *out);

/* ---- the results reader (load.c) ---- */
struct input_info {
	char *path;
	char *run_id, *start_utc;
	long records;
	char end[16];            /* complete, timeout, interrupted, missing */
	json_t *header;          /* the run record (owned) */
};

/* where the reader sends records */
struct results_sink {
	int (*record)(json_t *rec, long line, void *ctx);             /* run, skip, end, ...: read by jansson */
	int (*measurement)(const struct rv *r, long line, void *ctx); /* measurements; NULL: to record */
	void *ctx;
};

/*
 * Reads one results file line by line: checks the header (schema 1), then
 * sends every record, the header first, to the sink. Measurements are read
 * by the scanner of record.c, the rest (and whatever the scanner leaves) by
 * jansson. A sink function returns 0, or -1 to stop with a message it left
 * in err. Returns 0, or -1 with "path:line: what is wrong" in err.
 */
int results_read(const char *path, struct input_info *in, const struct results_sink *sink,
		 char *err, size_t len);
/* the same over a memory buffer (fuzzing) */
int results_read_mem(const char *buf, size_t size, const char *name, struct input_info *in,
		     const struct results_sink *sink, char *err, size_t len);
void input_info_free(struct input_info *in);
/*
 * Expands the command line's inputs: files as given, folders to their
 * *.jsonl files in name order. Returns the count, or -1 with a message.
 */
int results_expand(char **args, int nargs, char ***paths, char *err, size_t len);

/* ---- a flat view of a measurement record (record.c) ---- */
#define RV_MAX_FIELDS 96
struct rv_field {
	const char *parent;      /* NULL: a field of the record; else the key of the object holding it */
	const char *key;
	unsigned hash;           /* of key */
	char type;               /* s string, i integer, r real, b boolean, z null, o object, a array */
	const char *str;         /* strings; numbers as written, converted by rv_num */
	double num;              /* numbers already converted (NaN: convert str), booleans */
};
struct rv {
	int n, overflow;
	struct rv_field f[RV_MAX_FIELDS];
};
/*
 * Scans one line (modified in place: strings are NUL-terminated there).
 * Returns 0, or -1 when the line is not plain JSON this scanner reads: then
 * jansson must read the (unmodified) line and decide.
 */
int rv_scan(char *line, size_t len, struct rv *r);
/* the same view of a record read by jansson; valid while rec lives */
int rv_from_json(const json_t *rec, struct rv *r);
/* a string field of the record, or NULL */
const char *rv_str(const struct rv *r, const char *key);
/* a number: field key of the record (parent NULL) or of its object parent; 0 or -1 */
int rv_num(const struct rv *r, const char *parent, const char *key, double *v);
int rv_has(const struct rv *r, const char *key);

/* ---- evaluation (eval.c) ---- */
struct pt {                      /* the worst (or best) value seen at one size and direction */
	long long bytes;         /* 0 for criteria of any size */
	int dir;                 /* 1: measured from the later name to the earlier */
	double judged;           /* the value compared: value, or value / rate */
	double value;            /* in the metric's unit */
	double rate;             /* the record's rate in the metric's unit; 0 = none */
	double spread;           /* % */
};

struct elem {
	const char *name;        /* the element table's key */
	const char *host;        /* the eval's host name, "" when none */
	int n, cap;              /* points used, allocated: 1, or PLATEAU_SIZES at the plateau */
	struct pt *pt;
	long records;
	long norate;             /* records without rate_GBps under a relative bound */
	long nometric;           /* records without a usable value of the metric */
	double imp_value, imp_limit; /* the most implausible value seen, and its limit; 0 = none */
};

struct crit_state {
	const struct criterion *c;
	struct eval *e;
	struct htab idx;
	struct elem *el;
	int nel, capel;
	long records, nometric, skips, errors, scope_mismatch;
	long fake;               /* records of the test transport (transport "fake"), never judged */
	long other_size;         /* records of other sizes than the criterion's */
	char *skip_reason, *error_msg;
	char *why_none;          /* derived criteria: why the model gave no value */
	char *caveat;            /* derived criteria: why the value is a warn, never a pass or fail */
	/* results of eval_finish */
	int verdict;
	char *reason;
	int worst;               /* element with the worst value, or -1 */
	struct pt worst_pt;
	json_t *failures, *values;
	json_t *incomplete;      /* names of the elements measured without the metric or the rate */
	json_t *implausible;     /* [{element, host, value, limit, unit, why}]: measurement faults */
	json_t *plateau;         /* [{element, host, shape, points}]: plateaus that never flattened or collapsed */
	long values_total;       /* elements judged; values holds at most VALUES_MAX of them */
};
#define VALUES_MAX 10000         /* per criterion in summary.json: the worst first beyond it */
#define RATE_MARGIN 0.10         /* a bandwidth above its rate by more than this is implausible */
#define SCALING_EFF_MAX 1.5      /* a scaling efficiency above this is implausible */

struct eval {
	const struct profile *p;
	struct crit_state *cs;
	int ncs;
	/* cluster */
	struct htab hosts;
	char **host_names;
	int nhosts, caphosts;
	long ranks;
	/* inputs */
	struct input_info *in;
	int nin;
	/* collected on the way */
	json_t *series;          /* collective curves: key -> {name, backend, dtype, op, nodes, points} */
	json_t *diagnoses;       /* netpair node/link verdicts other than ok */
	json_t *timeouts;        /* one line each */
	json_t *versions;        /* key -> value -> [hosts] (consistency.c) */
	struct htab vseen;       /* key, value, host noted */
	json_t *outliers;        /* filled by eval_finish */
	/* netpair matrix: one-way pass-1 bandwidth, Gb/s, row = sender */
	float *np;
	int npn;
	/* the model (model.c) */
	json_t *fits;            /* Hockney fit records: series key -> the record's numbers */
	json_t *ranks_of;        /* series key -> ranks */
	json_t *scaling;         /* charts.scaling, filled by eval_finish */
	json_t *estimate;        /* summary.estimate: null, or the model (or why there is none) */
	json_t *compute;         /* gemm and gpuhealth figures for the estimate (model_compute.c) */
	/* node-to-node bandwidth for pipeline sends: [0] ib write_bw, [1] netpair bw_uni (pass 1) */
	struct pair_bw {
		double bytes;    /* the largest size seen */
		double Gbps;     /* the worst element at it, Gb/s */
		long n;          /* records at it */
	} pair[2];
	json_t *storage_write;   /* the slowest aggregate storage write record seen (model_ckpt.c); NULL none */
	json_t *checkpoint;      /* summary.checkpoint: null, or the checkpoint model (or why none) */
	struct soak_state *soak; /* the soak series (soak.c); NULL before the first soak record */
};

/* ---- scaling and the training estimate (model.c) ---- */
/* the key of a collective series: name|backend|dtype|op|nodes[|scale] */
void series_key_of(char *buf, size_t len, const char *name, const char *be, const char *dt,
		   const char *op, double nodes, int scale);
/* a boolean field of the record is true */
int rv_true(const struct rv *r, const char *key);
/* a fit record (kind "fit"); 0 or -1 on no memory */
int model_note_fit(struct eval *e, const struct rv *r);
/* feeds a derived criterion one element's value; 0 or -1 on no memory (eval.c) */
int eval_add_value(struct crit_state *s, const char *element, double value);
/*
 * The same with the element's host (may be NULL); a value that is not finite
 * names the element as measured without a value (incomplete, never judged).
 */
int eval_add_element(struct crit_state *s, const char *element, const char *host, double value);
/* builds e->scaling and e->estimate and feeds the derived criteria; before judging */
void model_build(struct eval *e);
/* ---- the checkpoint estimate (model_ckpt.c) ---- */
/* a storage probe record: keeps the aggregate write rate; 0 or -1 on no memory */
int ckpt_note(struct eval *e, const struct rv *r);
/* builds e->checkpoint and feeds the checkpoint_stall_fraction criteria; after model_build's estimate */
void ckpt_build(struct eval *e);

/* ---- measured compute and memory in the estimate (model_compute.c, docs/compute.md) ---- */
struct est_inputs;
/* notes a gemm or gpuhealth measurement for the estimate; 0 or -1 on no memory */
int compute_note(struct eval *e, const struct rv *r);
/* notes a GPU's memory (bytes; free NaN when unknown) from an inventory or gpuhealth */
void compute_note_memory(struct eval *e, const char *element, const char *host, double total,
			 double free_bytes);
/*
 * The hardware check of GPU memory: [{key, expected, found, hosts, element}]
 * for each GPU whose total memory is below the profile's gpu_memory; a new array.
 */
json_t *compute_memory_check(const struct eval *e);
/*
 * Before est_compute: replaces in->peak_tflops and in->mfu by the measured
 * TFLOP/s of the slowest GPU and the workload's matmul_efficiency when gemm
 * measured the workload's compute dtype. Returns the "compute" object of the
 * estimate (what was used, and why), a new reference.
 */
json_t *compute_rate(const struct eval *e, struct est_inputs *in);
/*
 * The memory fit of the model states per GPU against the measured usable
 * memory: the "memory_fit" object (a new reference). *fits is 0 when the
 * states do not fit (then why says so, and what would fit), else 1 (also
 * when nothing was measured: then the object says so).
 */
json_t *compute_memory_fit(const struct eval *e, const struct est_inputs *in, int *fits,
			   char *why, size_t len);
/* after est_json: labels the compute inputs of estimate j as compute_rate chose them */
void compute_label(json_t *j, const json_t *compute);
/* sets j's "memory_fit" to mem (taken) and says in its notes what it found */
void compute_memory_note(json_t *j, json_t *mem);

int eval_init(struct eval *e, const struct profile *p);
/* feeds one record (the header included); returns 0 or -1 with err */
int eval_record(struct eval *e, json_t *rec, long line, char *err, size_t len);
/* feeds one measurement */
int eval_measurement(struct eval *e, const struct rv *r, char *err, size_t len);
/* judges every criterion; call once after all inputs */
void eval_finish(struct eval *e);
void eval_free(struct eval *e);
/*
 * Reads every input path into e (which must be initialised). Returns 0, or
 * -1 with "path:line: what" in err.
 */
int eval_read_inputs(struct eval *e, char **paths, int npaths, char *err, size_t len);
/* Reads results held in memory (named name in errors) as one more input; the same. */
int eval_read_mem(struct eval *e, const char *buf, size_t size, const char *name, char *err,
		  size_t len);
/* the value judged for an element (docs/profiles.md, aggregation) */
void elem_value(const struct criterion *c, const struct elem *el, struct pt *out);
/* [[bytes, value], ...]: the sizes that made the element's plateau, smallest first */
json_t *elem_plateau_json(const struct criterion *c, const struct elem *el);

/* ---- consistency (consistency.c) ---- */
/* notes that host has value for key (once per key, value and host: seen remembers) */
void consistency_note(json_t *versions, struct htab *seen, const char *key, const char *value,
		      const char *host);
/* [{key, values: [{value, hosts}]}] for the keys whose hosts disagree */
json_t *consistency_diff(json_t *versions);

/* ---- baseline (baseline.c) ---- */
/*
 * Loads an earlier run (results files or folder, or an earlier summary.json)
 * and compares every criterion's value per element with e. Returns the
 * "baseline" object of the summary, or NULL with a message in err.
 */
json_t *baseline_compare(const struct eval *e, const char *old, double tol,
			 char *err, size_t len);

/* ---- the summary document (summary.c) ---- */
struct summary_opts {
	const char *profile_path;
	const char *baseline;    /* NULL = none */
	double baseline_tol;
	time_t now;
};
/* builds the summary document (docs/report.md); NULL with err on failure */
json_t *summary_build(struct eval *e, const struct summary_opts *o, char *err, size_t len);
/* charts.collectives of the summary from eval.series (with spread_pct per point) */
json_t *summary_series(const json_t *series);
/* prints the terminal summary: verdict first, then the worst problems */
void summary_print(const json_t *s, FILE *f, int max_problems);

#endif
