/*
 * A simulated cluster for the group-testing planner (probes/isolate_plan.h):
 * n nodes in groups of ceil(sqrt(n)) in node order, d bad nodes drawn at
 * random, and oracles that fail a test as the fault would. Shared by
 * tests/unit/test_isolate_plan.c and tests/bench/bench_isolate.c.
 */
#ifndef CCDIAG_ISOLATE_SIM_H
#define CCDIAG_ISOLATE_SIM_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../probes/isolate_plan.h"

struct sim {
	int n, ngroups;
	int *group;            /* n */
	unsigned char *bad;    /* n: the OR-model's bad nodes */
	int pair[2];           /* a fault only when both are in one test; -1: none */
	int uplink;            /* a group whose tests with another group fail; -1: none */
	uint64_t rng;
};

static uint64_t sim_rand(struct sim *s)
{
	/* xorshift64*: seeded, so every run draws the same clusters */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 2685821657736338717ULL;
}

static int sim_init(struct sim *s, int n, uint64_t seed)
{
	int k = (int)ceil(sqrt((double)n));

	memset(s, 0, sizeof(*s));
	s->n = n;
	s->ngroups = (n + k - 1) / k;
	s->group = malloc((size_t)n * sizeof(int));
	s->bad = calloc((size_t)n, 1);
	s->pair[0] = s->pair[1] = -1;
	s->uplink = -1;
	s->rng = seed ? seed : 1;
	if (!s->group || !s->bad)
		return -1;
	for (int i = 0; i < n; i++)
		s->group[i] = i / k;
	return 0;
}

/* d distinct bad nodes at random */
static void sim_draw(struct sim *s, int d)
{
	memset(s->bad, 0, (size_t)s->n);
	for (int placed = 0; placed < d;) {
		int x = (int)(sim_rand(s) % (uint64_t)s->n);

		if (!s->bad[x]) {
			s->bad[x] = 1;
			placed++;
		}
	}
}

static void sim_free(struct sim *s)
{
	free(s->group);
	free(s->bad);
}

/* fails a test holding a bad node, both nodes of the pair, or the uplink's group and another */
static int sim_oracle(void *ctx, struct iso_round *r)
{
	struct sim *s = ctx;

	for (int i = 0; i < r->ntests; i++) {
		struct iso_test *t = &r->tests[i];
		const int *v = r->nodes + t->first;
		int fail = 0, pa = 0, pb = 0, up = 0, other = 0;

		for (int j = 0; j < t->count; j++) {
			fail |= s->bad[v[j]];
			pa |= v[j] == s->pair[0];
			pb |= v[j] == s->pair[1];
			if (s->uplink >= 0) {
				up |= s->group[v[j]] == s->uplink;
				other |= s->group[v[j]] != s->uplink;
			}
		}
		t->fail = fail || (pa && pb) || (up && other);
	}
	return 0;
}

/* d log2(n/d) + groups: the information bound's term plus round 1 */
static double sim_bound(int n, int d, int ngroups)
{
	return (d ? d * log2((double)n / d) : 0) + ngroups;
}

#endif
