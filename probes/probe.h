#ifndef CCDIAG_PROBE_H
#define CCDIAG_PROBE_H

#include "../core/options.h"
#include "../core/run.h"

/*
 * ccdiag's phases, in the order they run (docs/ccdiag.md): each probe says
 * which it belongs to in its table entry; every collective is PHASE_COLLECTIVES.
 */
enum probe_phase { PHASE_NODE, PHASE_PAIRS, PHASE_COLLECTIVES, PHASE_STORAGE, PHASE_TRAIN, PHASE_N };

/* "node", "pairs", "collectives", "storage", "train" */
const char *probe_phase_name(int phase);

/*
 * Seconds of a sweep of the GPU probes' kind: for each size of -b..-e (or
 * min..max when no size is given), -w + -n x -r operations of copies x bytes
 * at GBps plus a per-operation start-up. A model for plans, not a measurement.
 */
double probe_sweep_seconds(const struct cc_options *o, size_t min, size_t max, double GBps,
			   int copies);

/*
 * A probe measures one part of the cluster (a link, a device, the network
 * between nodes). Each lives in its own file and exports one descriptor,
 * listed in probes/registry.c.
 */
struct probe {
	const char *name;                /* command-line name, e.g. "netpair" */
	const char *summary;             /* one line for --list */
	const char *missing;             /* non-NULL: not built in, and why */
	const struct cc_param *params;   /* its options, {NULL}-terminated; may be NULL */
	int phase;                       /* enum probe_phase: when ccdiag runs it */
	/*
	 * ccprobe --plan: about how many seconds it takes on o->plan_nodes
	 * nodes of o->plan_rpn ranks under the current options, on healthy
	 * hardware (a model from its options and nominal rates). May be NULL: 0.
	 */
	double (*estimate)(const struct cc_options *o);
	/*
	 * ccprobe --plan's note beside the estimate (its 4th column), e.g. the
	 * pair schedule of netpair and ib on o->plan_nodes nodes. May be NULL:
	 * "model".
	 */
	void (*plan_note)(const struct cc_options *o, char *buf, size_t len);
	/*
	 * Validates its options before MPI starts, so a bad value is a usage
	 * error (exit 2). Returns 0, or -1 with a one-line message. May be NULL.
	 */
	int (*check)(char *err, size_t len);
	/*
	 * Runs the probe on every rank (collective over run->mpi->world) and
	 * writes its records through run_record. Returns CC_EXIT_OK, CC_EXIT_FAIL
	 * when it measured a failure, or CC_EXIT_RUNTIME when it could not run.
	 */
	int (*run)(struct cc_run *run);
	/*
	 * 1: when named, it runs before every other probe and collective of
	 * the run and again after them (gpuhealth: counts that grow during the
	 * run), whatever its place on the command line.
	 */
	int around;
	/*
	 * --soak: repeats the probe's measurement for o->soak_s seconds and
	 * writes one "soak" record per element and interval as it goes
	 * (docs/results.md). NULL: the probe cannot soak (a usage error).
	 * Returns as run does.
	 */
	int (*soak)(struct cc_run *run);
	/* ccprobe --plan under --soak: its seconds, setup included. NULL: o->soak_s */
	double (*soak_estimate)(const struct cc_options *o);
	/*
	 * When named: adds its keys to the results header rec (isolate, netpair,
	 * ib: "topology", and the node-pair probes "pair_schedule"), leaving a key
	 * an earlier probe set. Called on every rank (it may be collective over
	 * mpi->world). May be NULL.
	 */
	void (*header)(const struct cc_options *o, const struct mpictx *mpi, json_t *rec);
};

/* The only list of probes: sorted by name, NULL-terminated. */
extern const struct probe *const probes[];

/* The probe called name, or NULL. */
const struct probe *probe_find(const char *name);

#endif
