#ifndef CCDIAG_DECISION_H
#define CCDIAG_DECISION_H

/*
 * report/decision.c: the summary's "decision" object (docs/report.md), built
 * from the rest of the summary S: the verdict in words, the nodes to drain
 * with their reasons, the links and rail pairs to check, the warnings to
 * look at (criteria and version differences), the hardware the profile did
 * not find, the required checks not measured with their fix,
 * the count of optional ones, what was judged and the estimate's headline.
 * Returns a new object (never NULL unless out of memory).
 */
#include <jansson.h>

json_t *decision_build(const json_t *s);
/*
 * The hosts at the two ends of a link or rail pair ("A-B", "A/x-B/y",
 * "A#1/x-B#2/y") into a and b (len bytes each), matched on the cluster's
 * host names HOSTS (an array of strings), which may hold '-' themselves
 * ("gpu-node-2-gpu-node-3"): the first split whose two ends are both hosts.
 * With no HOSTS, the first '-'. 0, or -1 when no split fits.
 */
int link_ends(const char *element, const json_t *hosts, char *a, char *b, size_t len);

#endif
