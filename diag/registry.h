#ifndef CCDIAG_DIAG_REGISTRY_H
#define CCDIAG_DIAG_REGISTRY_H

/*
 * diag/registry.c: the probe registry's plan entries as ccprobe states them
 * (ccprobe --list, ccprobe --plan N[:R[:G]] NAME...): the planner's
 * struct plan_registry over a ccprobe binary, run with posix_spawn, its
 * answers kept so each question is asked once. ccdiag thereby links no MPI
 * and the registry's table stays the only list of probes.
 */
#include "plan.h"

struct ccprobe_registry {
	const char *ccprobe;           /* the binary */
	int loaded;
	struct strv names, phases;     /* each name's phase */
	struct strv soak_keys, est_keys;
	int *soak_vals;
	double *est_vals;
	char **est_errs;
};

/* the plan_registry over r (r->ccprobe set, the rest zero) */
void ccprobe_registry_init(struct ccprobe_registry *r, struct plan_registry *reg);
void ccprobe_registry_free(struct ccprobe_registry *r);

#endif
