#ifndef CCDIAG_WORKLOAD_H
#define CCDIAG_WORKLOAD_H

/* report/workload.c: the target workload of the training estimate (docs/estimate.md) */
#include <stddef.h>

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

#endif
