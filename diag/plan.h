#ifndef CCDIAG_DIAG_PLAN_H
#define CCDIAG_DIAG_PLAN_H

/*
 * diag/plan.c: ccdiag's planner (docs/ccdiag.md, "The plan" and "Budget").
 * A pure function of three inputs: the profile as report/profile.c parsed it,
 * the probe registry's plan entries (struct plan_registry: ccprobe --plan
 * behind callbacks, so ccdiag links no MPI and the registry stays the only
 * list) and the node and GPU counts. It computes the phases, what each runs,
 * ranks per node, each phase's ccprobe options at each shrink level, the
 * estimates, the level that fits --budget and the cuts, the notes of the plan
 * and, for ccdiag quick, the criteria kept. It reads no file and starts
 * nothing itself.
 */
#include "strv.h"

struct profile;

enum plan_launch { PLAN_LOCAL, PLAN_MPIRUN, PLAN_SRUN, PLAN_EMULATED };
enum plan_kind { PK_PROBE, PK_COLLECTIVE, PK_SOAK, PK_FRAMEWORK };

/* the probe registry as the planner sees it (ccprobe --plan; a table in the unit tests) */
struct plan_registry {
	/* the phase of a probe or collective ("node", "pairs", "collectives", "storage"),
	 * or NULL when this ccprobe has no such name */
	const char *(*phase)(void *ctx, const char *name);
	/* 1 when this ccprobe can soak name on nodes nodes */
	int (*can_soak)(void *ctx, const char *name, int nodes);
	/* seconds of ccprobe's argv (options and names) on nodes of rpn ranks at gbps Gb/s
	 * each; -1 with a one-line reason in err when ccprobe refuses the options */
	double (*estimate)(void *ctx, int nodes, int rpn, double gbps, const struct strv *argv,
			   char *err, size_t errlen);
	void *ctx;
};

struct plan_input {
	const struct profile *prof;
	int nodes;                 /* the job's nodes (1 on this host) */
	enum plan_launch launch;
	double emu_gbps;           /* --emulated: each host's rate in Gb/s (--rate) */
	int ncpu;                  /* this machine's CPUs (the emulated pairs' concurrency) */
	const char *tps;           /* --time-per-size as given ("2") */
	const char *max_size;      /* --max-size, or NULL: mpi 1M, nccl 8G */
	long soak_s;               /* --soak seconds; 0 none */
	long budget_s;             /* --budget seconds; -1 none */
	int shrink;                /* --shrink */
	int quick;                 /* ccdiag quick: the node phase alone, short */
	const char *storage_dir;   /* --storage-dir (or the emulated volume), or NULL */
	const struct strv *extra;  /* options after --: every ccprobe phase's, first */
	/* the framework of the train phase (workloads/torch_step.py), when the profile has a
	 * [workload]: 1 present (python: the interpreter that imports torch), 0 absent
	 * (framework_why says why), -1 not known until the hosts are up (checked then) */
	int framework;
	const char *framework_why;
};

#define PLAN_MAX_PHASES 8
#define PLAN_MAX_LEVELS 6

struct plan_phase {
	char name[32];             /* node, pairs, collectives-BACKEND, soak, storage */
	enum plan_kind kind;
	int rpn;                   /* ranks per node */
	struct strv names;         /* the probes or collectives it runs */
	struct strv args;          /* its own ccprobe options and names, unshrunk */
	int skipped;               /* planned but cannot run: a storage phase without a directory,
				    * a train phase without its framework */
	char skip_why[400];        /* why, when skipped */
	double est[PLAN_MAX_LEVELS]; /* seconds at each shrink level */
};

struct plan {
	struct plan_phase ph[PLAN_MAX_PHASES];
	int nph;
	int gpus, nics;            /* the profile's per node */
	double gbps;               /* each node's network rate in Gb/s, for the estimates */
	char *cut[PLAN_MAX_LEVELS]; /* cut[l]: what level l adds; cut[0] unused */
	int nlevels, level;        /* the level chosen */
	int soak_first;            /* a soak phase: level 1 cuts the soak */
	long soak_s, soak_cut;     /* --soak and its length at levels >= 1 */
	double total;              /* estimated seconds at the chosen level */
	int over_budget;           /* refused for --budget: the plan is whole (at its level), for --dry-run */
	struct strv unrunnable;    /* "probe X: not a probe of this ccprobe", ... */
	char *soak_note;           /* or NULL */
	int soak_needed;           /* required soak criteria and no --soak */
	struct strv quick_keep;    /* quick: the ids of the criteria kept */
	struct strv estimate_errors; /* phases whose options ccprobe --plan refused */
	const struct plan_input *in;
	const struct plan_registry *reg;
};

/*
 * Computes the plan. Returns 0, or 2 (bad input) with one line in err: a
 * profile with nothing runnable, quick without a node phase, an invalid
 * --max-size, a plan over --budget, a budget the minimal plan does not fit
 * (over_budget set: the plan refused is complete, to be shown).
 * The plan keeps pointers to in and reg; plan_free releases it either way.
 */
int plan_make(struct plan *pl, const struct plan_input *in, const struct plan_registry *reg,
	      char *err, size_t errlen);
void plan_free(struct plan *pl);
/* the ccprobe options of phase k at shrink level (--extra first); into out */
void plan_args(const struct plan *pl, int k, int level, struct strv *out);
/* the train phase's workload shape as options: ccprobe trainstep's (--train-*) or, for
 * torch_step.py, its own (--params ...); every ccprobe and script option of phase k */
/* the seconds of launching one phase on the plan's nodes (the launcher, MPI_Init) */
double plan_launch_seconds(const struct plan *pl);

#endif
