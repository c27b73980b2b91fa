#ifndef CCDIAG_ISOLATE_PLAN_H
#define CCDIAG_ISOLATE_PLAN_H

/*
 * The group-testing planner of `ccprobe isolate` (docs/isolation.md): which
 * sets of nodes to test together, round by round, to find the bad nodes of n
 * with few tests. Pure: no MPI, no clock; the caller runs each round's tests
 * (one all_reduce per test, all tests of a round at once) and hands back
 * pass or fail. Every rank of a job runs the same planner on the same
 * results, so all agree on the next round without sending it.
 *
 * The model is the OR-model of group testing: a test fails when it holds at
 * least one bad node. Rounds:
 *   1. one test per group (a leaf switch, or ceil(sqrt(n)) nodes);
 *   2. when two groups or more passed: one test of a representative (the
 *      first node) of each passed group, for a fault between groups (a spine,
 *      a leaf's uplink); once one is seen, tests are no longer padded, since
 *      padding crosses groups, and the uplink is looked for beside the other
 *      tests: the representatives in pairs (one round; when every pair
 *      failed and three candidates or more remain, paired another way, twice
 *      at most), then each of a failed pair (and an odd one left over) with the
 *      representative of a group whose pair passed: fail = that group's
 *      uplink is bad (ustate);
 *   3... binary splitting of each failed set, all sets at once: a test of its
 *      first half, padded with known-good nodes to the size of the largest
 *      group (so every test has the same size); a passing half clears its
 *      nodes and leaves the other half failed by inference; a failing half is
 *      split on and the other half becomes a set to test whole (it may hold a
 *      second bad node), which is Hwang's generalized binary splitting with
 *      one bad node expected per failed set and its remainders tested in the
 *      same rounds;
 *   last: a single failed node is confirmed by a pair test with a known-good
 *      node (of its own group where there is one). Pass: cleared, its fault
 *      needs a combination of nodes the pair lacks (the OR-model's limit),
 *      counted in 'unlocated'. Fail: a second pair test with another
 *      known-good node, next round (the first may share a bad link with it,
 *      a pair fault the OR-model cannot see): fail again = bad; pass = the
 *      link to the first partner is named (links), the node cleared.
 */

enum iso_state {
	ISO_UNTESTED,   /* in a set not yet decided */
	ISO_GOOD,       /* passed a test */
	ISO_BAD,        /* failed pair tests with two known-good nodes (one when only one is known) */
	ISO_CLEARED,    /* narrowed down to it, then passed the pair test */
};

enum iso_kind {
	ISO_GROUP,      /* round 1: one group */
	ISO_CROSS,      /* one representative per passed group */
	ISO_SPLIT,      /* the first half of a failed set, padded */
	ISO_REST,       /* the untested remainder of a split set, padded */
	ISO_CONFIRM,    /* a suspect node with one known-good node */
	ISO_UPAIR,      /* after a cross failure: two groups' representatives */
	ISO_UCONFIRM,   /* a candidate group's representative with an ok group's */
};

/* what the plan says of a group's uplink (ustate) */
enum iso_uplink {
	ISO_UP_UNTESTED,
	ISO_UP_CANDIDATE,  /* in a failed pair of representatives, or left over */
	ISO_UP_OK,
	ISO_UP_BAD,        /* failed with an ok group's representative */
	ISO_UP_AMBIGUOUS,  /* a candidate with no ok group to tell it apart (two groups only) */
};

/* "group", "cross", "split", "rest", "confirm", "uplink-pair", "uplink-confirm" */
const char *iso_kind_name(int kind);

struct iso_test {
	int kind;       /* enum iso_kind */
	int set;        /* the set it decides (internal), -1 for a cross test */
	int first;      /* its nodes: round.nodes[first .. first + count) */
	int count;
	int real;       /* the first 'real' nodes are under test, the rest known-good padding */
	int fail;       /* the result, set by the caller before iso_result */
};

struct iso_round {
	int index;      /* 1, 2, ... */
	int ntests;
	struct iso_test *tests;
	int *nodes;     /* the nodes of every test; no node twice in a round */
	int nnodes;
};

struct iso_set;

struct iso_plan {
	int n, ngroups;
	int size;              /* a test's size: the largest group's */
	int *group;            /* n: the node's group (a copy) */
	unsigned char *state;  /* n: enum iso_state */
	int rounds, tests;     /* planned so far */
	int cross;             /* -1: not tested; 0: passed; 1: a fault between groups */
	int short_pad;         /* tests that got less padding than their size needed */
	int unlocated;         /* suspects cleared by a pair test */
	int *links;            /* nlinks pairs (a, b): a failed with b, passed with another */
	int nlinks;
	unsigned char *ustate; /* ngroups: enum iso_uplink */
	/* internal */
	int *ureps;            /* ngroups: the group's representative, -1 for a failed group */
	int uphase;            /* 0 none, 1 pairs next, 2 confirmations next */
	int urepaired;         /* the candidates were paired another way (every pair failed): 0..2 */
	struct iso_set *sets;
	int nsets, capsets, awaiting;
	unsigned char *used;   /* n: in a test of the round being planned */
	struct iso_round cur;
};

/*
 * Starts a plan for n nodes whose groups are group_of[0..n) (0..ngroups-1,
 * none empty). Returns 0, or -1 for a bad argument or no memory.
 */
int iso_init(struct iso_plan *p, int n, const int *group_of, int ngroups);

/*
 * Plans the next round into *r (valid until the next call): returns its
 * number of tests, 0 when the plan is done, -1 when the previous round's
 * results are still due or memory ran out.
 */
int iso_next(struct iso_plan *p, struct iso_round *r);

/* Takes the results (r->tests[i].fail) of the round iso_next returned. 0, or -1. */
int iso_result(struct iso_plan *p, const struct iso_round *r);

/*
 * Runs the whole plan with an oracle that sets tests[i].fail for every test
 * of a round (returns 0, or -1 to stop). Returns the number of rounds, or -1.
 */
int iso_run(struct iso_plan *p, int (*oracle)(void *ctx, struct iso_round *r), void *ctx);

/* The first partner of set's failed pair test (its next is the second), or -1. */
int iso_set_partner(const struct iso_plan *p, int set);

/* Nodes found bad (state ISO_BAD). */
int iso_bad_count(const struct iso_plan *p);

void iso_free(struct iso_plan *p);

#endif
