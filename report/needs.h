#ifndef CCDIAG_NEEDS_H
#define CCDIAG_NEEDS_H

/* report/needs.c: what a profile needs measured (ccreport --needs) */
#include <jansson.h>

struct profile;

/*
 * What the criteria need measured (ccreport --needs, for ccdiag's plan):
 * {profile, path, gpus_per_node, nics_per_node, nic_rate_Gbps, criteria: [ID],
 * needs: [{kind (probe, collective, soak), name, backend?, tests, sizes, plateau,
 * scale, required, max_nodes?, workload?, of? (a soak's: probe or collective)}],
 * bucket_bytes?}. NULL only when out of memory.
 */
json_t *profile_needs(const struct profile *p);

#endif
