#ifndef CCDIAG_MODEL_H
#define CCDIAG_MODEL_H

/*
 * report/model.c: what ccreport derives from the collective records: the
 * scaling chart and the training estimate (docs/estimate.md).
 */

#include <stddef.h>

struct eval;
struct rv;
struct est_outputs;

/* the shape a step measured, for the model (model.c: model_shape_estimate) */
struct step_shape {
	double params;             /* parameters of the model run */
	double bytes_per_grad;     /* 4 fp32, 2 bf16 */
	int ranks, nodes;          /* data-parallel ranks and the hosts they ran on */
	double tokens_per_step;    /* tokens per rank x ranks */
	double bucket_bytes;
	double flops_per_rank;     /* measured: 6 x params x tokens per rank / compute alone */
	double overlap;            /* the model's: the share of compute the sync hides under, [0, 1] */
	const char *backend;       /* the all_reduce series that prices the sync: the step's backend */
	double sync_s;             /* > 0: the sync as measured (no series), e.g. the step's comm alone */
	char sync_source[400];     /* out: what priced the sync (a series) */
	double sync_cv;            /* out: the largest spread (cv) of the series' records at the bucket; 0 for sync_s */
};

/* a fit record (kind "fit"); 0 or -1 on no memory */
int model_note_fit(struct eval *e, const struct rv *r);
/* builds e->scaling and e->estimate and feeds the comm criteria; before judging, and before
 * step_build (model_step.h) and ckpt_build (model_ckpt.h), which read the estimate */
void model_build(struct eval *e);

/*
 * The model on the measured shape, its sync priced by the all_reduce series
 * of sh->backend (sh->sync_source says which), or by sh->sync_s when above 0.
 * 0, or -1 with why (model_step.c uses it).
 */
int model_shape_estimate(const struct eval *e, struct step_shape *sh, struct est_outputs *out,
			 char *why, size_t len);

#endif
