#ifndef CCDIAG_MODEL_STEP_H
#define CCDIAG_MODEL_STEP_H

/*
 * report/model_step.c: the estimate beside a measured training step
 * (docs/estimate.md, "Measured against a real step"): ccprobe's trainstep
 * proxy and workloads/torch_step.py's DDP step. For each, the model is run
 * on the shape that was measured, with the compute measured and the overlap
 * measured (and, beside it, assumed), and its signed error against the
 * measured step is kept; the criterion metric estimate_error judges it.
 * Stalls (steps above 3x the median) and the rank the step waited for are
 * named; goodput is the productive share of the steps' time. A framework's
 * step (torch_step) also feeds the metric framework_ready: the readiness
 * checks it failed (every rank joined the backend within its deadline, the
 * steps ran, losses finite, losses identical across data-parallel ranks).
 */
#include "model.h"

#include <jansson.h>

struct rv;

#define STEP_STALL_FACTOR 3.0   /* a step above this x the median is a stall */
#define STEP_STEADY_CV 0.15     /* measured steps whose cv is above this are too noisy to compare */
#define STEP_MAX_STEPS 100000   /* steps kept per source */

/* a trainstep or torch_step record: kept for step_build; 0, or -1 on no memory */
int step_note(struct eval *e, const struct rv *r);

/* a skip (skip 1) or error record of trainstep or torch_step: its text kept; 0, or -1 on no memory */
int step_note_missing(struct eval *e, const char *name, int skip, const char *why);

/*
 * After the estimate (model_build): e->estimate gains "measured_steps" (one
 * object per source measured, the estimate of its shape, the signed error)
 * and, when a measured step stands for the workload, days and cost from it;
 * feeds the estimate_error criteria.
 */
void step_build(struct eval *e);

#endif
