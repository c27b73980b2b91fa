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

#endif
