#ifndef CCDIAG_SCHEDULE_H
#define CCDIAG_SCHEDULE_H

/*
 * Pairings of n nodes into rounds of simultaneous, disjoint pairs. Pure
 * functions of their arguments; no MPI, no allocation except where stated.
 *
 * The all-pairs schedule is a round-robin tournament by the circle method:
 * for even n, n-1 rounds of n/2 pairs; for odd n, n rounds of (n-1)/2 pairs
 * and one idle node (a bye) per round. Every unordered pair meets exactly
 * once and no node appears twice in a round.
 */

/* Rounds of the all-pairs schedule: n-1 for even n, n for odd n, 0 for n < 2. */
int schedule_rounds(int n);

/*
 * The partner of node in round (0 <= round < schedule_rounds(n)), or -1 when
 * node sits out that round (odd n) or an argument is out of range. O(1).
 */
int schedule_pair(int n, int round, int node);

/*
 * Fills partner[0..n) for one round (partner[x] = schedule_pair(n, round, x)).
 * Returns the number of pairs in the round, or -1 for a bad argument.
 */
int schedule_round(int n, int round, int *partner);

/*
 * Packs npairs arbitrary pairs (pairs[2i], pairs[2i+1], nodes in 0..n) into
 * rounds in which no node appears twice, greedily and in the given order:
 * round_of[i] gets the round of pair i. Used to run retests of chosen pairs
 * as few rounds of simultaneous measurements. Returns the number of rounds,
 * or -1 for a bad pair (a node out of range, or a node paired with itself)
 * or when memory runs out.
 */
int schedule_pack(int n, const int *pairs, int npairs, int *round_of);

/*
 * Splits rounds so that none has more than k pairs: the pairs of round r
 * keep their order and fill sub-rounds of k. round_of[npairs] (rounds
 * 0..nrounds) is renumbered in place. k < 1 leaves it as it is. Returns the
 * new number of rounds, or -1 for a bad argument or no memory.
 */
int schedule_cap(int *round_of, int npairs, int nrounds, int k);

/*
 * netpair at scale (docs/netpair.md): the pairs inside every group first,
 * complete (each group its own circle method, all groups in the same rounds),
 * then a sampled cross-group matrix: the groups play a circle-method
 * tournament of their own, and when groups A and B meet in round r, A's i-th
 * node plays B's ((i + r) mod |B|)-th for i < min(|A|, |B|); a node that
 * never crossed (its group larger than every group it met) gets one pair
 * with another group's node, packed into rounds at the end. Every pair of
 * groups is covered, every node crosses at least once (when there are two
 * groups or more), no node plays twice in a round; rounds grow with the
 * group size and the number of groups (about 2 sqrt(n) for groups of
 * sqrt(n)), not with n.
 *
 * group_of[0..n) in 0..ngroups-1. *pairs (2 x *npairs nodes) and *round_of
 * (*npairs) are malloc'd. Returns the number of rounds, or -1 for a bad
 * argument or no memory; *within gets the rounds of the first part.
 */
int schedule_grouped(int n, const int *group_of, int ngroups, int **pairs, int **round_of,
		     int *npairs, int *within);

/*
 * The most nodes that play every pair by default (--pair-schedule auto with
 * no topology): 127 rounds, about a minute of netpair at its defaults, and
 * the complete matrix keeps every pair-specific fault in view. Above it the
 * grouped schedule, groups of ceil(sqrt(n)) in host order.
 */
#define SCHEDULE_ALL_PAIRS_MAX 128

/*
 * Whether to run the grouped schedule: mode is enum cc_pair_schedule (auto 0,
 * all-pairs 1, grouped 2), ngroups the groups a topology puts the job's n
 * nodes in (0: no topology given). auto: grouped when the topology has two
 * groups or more, or n > SCHEDULE_ALL_PAIRS_MAX. *why (if not NULL) gets a
 * static phrase for the results ("--topology: 2 groups", ...).
 */
int schedule_use_grouped(int mode, int n, int ngroups, const char **why);

/*
 * The all-pairs tournament as a pair list: pairs[2k] -> pairs[2k+1] in round
 * round_of[k] (n(n-1)/2 pairs, malloc'd), who goes first alternating so that
 * no node always leads. Returns the number of rounds, or -1 (n < 2, memory).
 */
int schedule_all_pairs(int n, int **pairs, int **round_of);

#endif
