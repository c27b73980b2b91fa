#ifndef CCDIAG_GROUPS_H
#define CCDIAG_GROUPS_H

#include "../core/mpictx.h"
#include "../core/options.h"

#include <jansson.h>

/*
 * The job's hosts in groups (docs/isolation.md), shared by the probes that
 * plan by groups (isolate, netpair, ib): from --topology (a file read by
 * core/topology.h, or "nvlink": one group per NVLink domain, from NVML's
 * fabric info on every host), else --group-size hosts (ceil(sqrt(N))) in host
 * order. Rank 0 reads the file and sends the groups to every rank, so only
 * rank 0 must see it.
 */
struct job_groups {
	int n;                   /* the job's nodes (mpi->nnodes) */
	int ngroups;
	int *group_of;           /* n: the node's group, 0..ngroups-1, numbered by first host */
	char **names;            /* ngroups: leaf switch, block, NVLink domain, "groupK" */
	char **spines;           /* ngroups: the switch above the group, or NULL */
	int given;               /* 1: from --topology; 0: the fallback in host order */
	char source[240];        /* "plain FILE", "none: groups of 32 hosts in host order", ... */
};

/*
 * The groups of this job, computed once per process and kept (later calls
 * return the same). Collective over mpi->world: every rank calls it, in the
 * same order relative to other collectives. Returns the groups, or NULL with
 * a one-line reason in err (the same on every rank): "FILE:LINE: ...", "host
 * 'X' is not in the topology (SOURCE)", an NVLink domain NVML cannot tell.
 */
const struct job_groups *job_groups(const struct cc_options *o, const struct mpictx *mpi,
				    char *err, size_t len);

/*
 * {source, given, groups: [{name, spine, hosts}]} of g for the results
 * header; hosts are mpi's names. A new object.
 */
json_t *job_groups_json(const struct job_groups *g, char *const *hosts);

/*
 * The results header's part of the probes that plan by groups (their
 * probe.header): "topology" (job_groups_json, or {error} when the groups
 * cannot be had) once, and for a node-pair probe (pairs != 0) "pair_schedule":
 * {schedule: "grouped" | "all-pairs", why, groups, rounds_inside,
 * rounds_across} as job_pair_plan decides it. Collective, like job_groups.
 */
void job_groups_header(const struct cc_options *o, const struct mpictx *mpi, json_t *rec,
		       int pairs);

/*
 * The node pairs of a node-pair probe on every rank: the grouped schedule
 * (probes/schedule.h) or the tournament, by o->pair_schedule and the groups
 * (schedule_use_grouped). pairs[2k] -> pairs[2k+1] in round round_of[k]
 * (malloc'd); *grouped 1 for the grouped schedule; *within its rounds inside
 * groups (0 for the tournament); *why the rule's phrase. Returns the number of
 * rounds, or -1 with err (groups unavailable, memory). Collective (job_groups).
 */
int job_pair_plan(const struct cc_options *o, const struct mpictx *mpi, int **pairs,
		  int **round_of, int *npairs, int *grouped, int *within, const char **why,
		  char *err, size_t len);

/*
 * The same decision for a plan (ccprobe --plan, no MPI): the rounds of the
 * schedule on n nodes with o's --topology (its first n hosts in file order;
 * fewer hosts than n: the rest in groups of ceil(sqrt(n)) after them) or the
 * fallback groups; *within, *grouped and *why (may be NULL) as job_pair_plan.
 * -1 when the file cannot be read or memory runs out.
 */
int plan_pair_rounds(const struct cc_options *o, int n, int *within, int *grouped, long *npairs,
		     const char **why);

/*
 * The plan's note of a node-pair probe (struct probe's plan_note): "model;
 * grouped schedule (auto: more than 128 nodes): 32 rounds inside groups + 31
 * across, 31744 pairs (all-pairs: 1023 rounds)", or "model; all-pairs: ...".
 */
void plan_pair_note(const struct cc_options *o, char *buf, size_t len);

#endif
