#ifndef CCDIAG_GPU_INTERNAL_H
#define CCDIAG_GPU_INTERNAL_H

/* What the files of gpu/ share among themselves; not for probes. */
#include "gpu.h"

/* This rank's part of the inventory (gpu/inventory.c); a new object. */
json_t *gpu_local_inventory(const struct mpictx *mpi, const struct gpu_ctx *g);

/* Rank 0: merges the ranks' parts into one record per host and writes them. */
void gpu_write_inventory(struct cc_run *run, json_t *parts);

/* The --gpus value's device list for this rank: how many, 0 when not given, -1 (why) bad. */
int gpu_list_for_rank(int *list, char *why, size_t len);

/* Rank 0: fills "gpu"/"element" (or the pair's) of rec from its bus ids. */
void gpu_name_record(json_t *rec);

#endif
