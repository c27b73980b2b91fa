#ifndef CCDIAG_MODEL_CKPT_H
#define CCDIAG_MODEL_CKPT_H

#include <jansson.h>
#include <stddef.h>

/*
 * The checkpoint model of ccreport: how long saving the workload's
 * checkpoint takes at the storage write rate ccprobe's storage probe
 * measured, and what fraction of the run the job stalls for it. A model,
 * never a measurement. Formulas and sources in docs/estimate.md
 * ("Checkpoints"). Pure: no I/O.
 */
#define CKPT_BYTES_PER_PARAM 16.0  /* mixed-precision Adam: bf16 weights 2 + fp32 master 4 + m, v 8 + bf16 grads 2 */

struct ckpt_inputs {
	double bytes;              /* checkpoint bytes, the whole job's */
	double write_GBps;         /* measured aggregate write rate, GB/s = 1e9 bytes/s */
	double every_steps;        /* interval in training steps; 0: given as time */
	double every_s;            /* interval in seconds of training; 0: given as steps */
	double step_s;             /* one step (the training estimate), needed with every_steps; NaN none */
};

struct ckpt_outputs {
	double write_s;            /* bytes / write rate: the job stalls this long per checkpoint */
	double interval_s;         /* training time between two checkpoints */
	double stall_fraction;     /* write_s / (interval_s + write_s): the share of wall time stalled */
	double per_day;            /* checkpoints per day of wall time: 86400 / (interval_s + write_s) */
	double stall_h_per_day;    /* hours stalled per day of wall time */
};

/* Checks the inputs and computes the outputs. Returns 0, or -1 with one line in err. */
int ckpt_compute(const struct ckpt_inputs *in, struct ckpt_outputs *out, char *err, size_t len);

/* The outputs as a JSON object, units in every name; NULL on no memory. */
json_t *ckpt_outputs_json(const struct ckpt_outputs *out);

/* the model's side of the evaluation (eval_state.h) */
struct eval;
struct rv;

/* a storage probe record: keeps the aggregate write rate; 0 or -1 on no memory */
int ckpt_note(struct eval *e, const struct rv *r);
/* builds e->checkpoint and feeds the checkpoint_stall_fraction criteria; after model_build's estimate */
void ckpt_build(struct eval *e);

#endif
