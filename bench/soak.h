#ifndef CCDIAG_SOAK_H
#define CCDIAG_SOAK_H

#include "../core/options.h"
#include "../core/run.h"
#include "backend.h"
#include "coll.h"

/*
 * --soak for a collective (docs/results.md, "soak"): one size (--soak-size,
 * else -e), the first type of -d and operator of --op, repeated for
 * o->soak_s seconds in intervals of about o->soak_interval: each interval
 * times back-to-back operations (the slowest rank's span), then checks the
 * data on separate, untimed operations (-c of them), and rank 0 writes one
 * record of kind "soak" per interval as it ends. Warm-up and setup are not
 * counted; each interval is armed on the watchdog. be must be started. Call
 * on every rank. Returns CC_EXIT_OK, CC_EXIT_FAIL (wrong data or a failed
 * call, recorded) or CC_EXIT_RUNTIME (out of memory).
 */
int soak_run(struct cc_run *run, const struct coll *coll, const struct backend *be);

/*
 * ccprobe --plan under --soak: seconds of coll's soak on nodes nodes of
 * o->plan_rpn ranks: the duration, the warm-up (one interval), the data
 * checks at the model's operation time and the backend start. A model.
 */
double soak_estimate(const struct cc_options *o, const struct coll *coll, int nodes);

#endif
