#ifndef CCDIAG_MODEL_COMPUTE_H
#define CCDIAG_MODEL_COMPUTE_H

/* report/model_compute.c: measured compute and memory in the estimate (docs/compute.md) */
#include <jansson.h>
#include <stddef.h>

struct est_inputs;
struct eval;
struct rv;

/* notes a gemm or gpuhealth measurement for the estimate; 0 or -1 on no memory */
int compute_note(struct eval *e, const struct rv *r);
/* notes a GPU's memory (bytes; free NaN when unknown) from an inventory or gpuhealth */
void compute_note_memory(struct eval *e, const char *element, const char *host, double total,
			 double free_bytes);
/*
 * The hardware check of GPU memory: [{key, expected, found, hosts, element}]
 * for each GPU whose total memory is below the profile's gpu_memory; a new array.
 */
json_t *compute_memory_check(const struct eval *e);
/*
 * Before est_compute: replaces in->peak_tflops and in->mfu by the measured
 * TFLOP/s of the slowest GPU and the workload's matmul_efficiency when gemm
 * measured the workload's compute dtype. Returns the "compute" object of the
 * estimate (what was used, and why), a new reference.
 */
json_t *compute_rate(const struct eval *e, struct est_inputs *in);
/*
 * The memory fit of the model states per GPU against the measured usable
 * memory: the "memory_fit" object (a new reference). *fits is 0 when the
 * states do not fit (then why says so, and what would fit), else 1 (also
 * when nothing was measured: then the object says so).
 */
json_t *compute_memory_fit(const struct eval *e, const struct est_inputs *in, int *fits,
			   char *why, size_t len);
/* after est_json: labels the compute inputs of estimate j as compute_rate chose them */
void compute_label(json_t *j, const json_t *compute);
/* sets j's "memory_fit" to mem (taken) and says in its notes what it found */
void compute_memory_note(json_t *j, json_t *mem);

#endif
