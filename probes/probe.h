#ifndef CCDIAG_PROBE_H
#define CCDIAG_PROBE_H

#include "../core/options.h"
#include "../core/run.h"

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
};

/* The only list of probes: sorted by name, NULL-terminated. */
extern const struct probe *const probes[];

/* The probe called name, or NULL. */
const struct probe *probe_find(const char *name);

#endif
