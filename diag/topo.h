#ifndef CCDIAG_DIAG_TOPO_H
#define CCDIAG_DIAG_TOPO_H

/*
 * diag/topo.c: the run's topology (docs/ccdiag.md, "Topology"): --topology
 * FILE, or inside Slurm what `scontrol show topology` prints (else the
 * topology.conf beside slurm.conf), or the emulated cluster's leaves
 * (--emulated N --leaves K); read with core/topology.h, mapped onto the job's
 * hosts when they are known, shown in the plan, and copied into the results
 * folder for every phase's ccprobe (--topology DIR/topology.txt): the
 * launch's rank 0 sees the folder, whatever host it runs on.
 */
#include "plan.h"
#include "strv.h"

struct diag_topo {
	char *text;              /* the file's bytes (NULL: no topology) */
	char *path;              /* where the plan reads it: the file given, or a temporary copy */
	char *origin;            /* "--topology FILE", "scontrol show topology", ... */
	char *tmp;               /* a temporary file to remove, or NULL */
	char *note;              /* why there is none (inside Slurm), for the plan; or NULL */
	struct strv lines;       /* the plan's lines about it */
};

/*
 * Finds the topology: given (--topology, may be NULL), else by the launcher
 * (srun: Slurm; emulated with leaves > 0: its leaves over nodes hosts). hosts
 * (may be empty: unknown) are the job's, checked to be in it. Returns 0, or
 * -1 with a one-line reason in err ("FILE:LINE: ...", "host 'X' is not in the
 * topology (SOURCE)").
 */
int diag_topo_find(struct diag_topo *t, const char *given, enum plan_launch launch, int nodes,
		   int leaves, const struct strv *hosts, char *err, size_t len);

/* Writes the topology to DIR/topology.txt and returns that path (malloc'd), NULL when none or on error. */
char *diag_topo_place(const struct diag_topo *t, const char *dir);

void diag_topo_free(struct diag_topo *t);

#endif
