#ifndef CCDIAG_PROFILE_H
#define CCDIAG_PROFILE_H

/*
 * report/profile.c: acceptance profiles (docs/profiles.md): the criteria,
 * the hardware expected and the workload of the estimate.
 */
#include <stddef.h>

#include "workload.h"

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
	const char *fix;         /* from the metric table: how its evidence is had, or NULL (ccprobe PROBE) */
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
 * (model_ckpt.c) checkpoint_stall_fraction; (soak.c) soak_cv, soak_worst, soak_drops;
 * (model_step.c) estimate_error: |estimate - measured step| / measured, %; framework_ready: the
 * readiness checks a framework step failed, count */
enum { DERIVED_NONE, DERIVED_SCALING, DERIVED_COMM, DERIVED_CKPT, DERIVED_SOAK, DERIVED_STEP };

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
	char **warnings;         /* "path:line: ..." of what loads but judges nothing (a bound that cannot fail) */
	int nwarnings;
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
/*
 * The one line for a profile ARG that profile_find did not find, into buf:
 * "profile 'ARG' not found (...); the profiles found: a100-..., emu-1g, ..."
 * (the NAMEs of every folder profile_find looks in, sorted).
 */
void profile_not_found(char *buf, size_t len, const char *arg, const char *argv0);
void profile_free(struct profile *p);

/* the name of scope s (enum rpt_scope) in profiles and summary.json */
const char *rpt_scope_name(int s);

#endif
