#ifndef CCDIAG_NODES_H
#define CCDIAG_NODES_H

#include <jansson.h>

/*
 * The "nodes" entry of cluster name in the comparison (how many nodes to
 * rent, docs/compare.md) from its summary and the estimate's inputs (est_json's
 * "inputs", compare's -w applied): the cheapest node count done within
 * deadline_days, or the fastest within budget_usd (0: none given). NULL when
 * the summary has no --scale curve or the inputs cannot be read.
 */
json_t *nodes_plan(const char *name, const json_t *summary, const json_t *inputs,
		   double deadline_days, double budget_usd);

#endif
