#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../probes/schedule.h"

/*
 * Checks the all-pairs schedule for n: the round count, every node at most
 * once per round (partners are mutual), a bye only for odd n and exactly one
 * per round, and every unordered pair exactly once over all rounds. The
 * pair table is a bitmap of n*n bits (2 MiB at n = 4096); each n costs
 * O(n^2).
 */
static void check_n(int n)
{
	int rounds = schedule_rounds(n);
	int *partner = malloc((size_t)n * sizeof(int));
	unsigned char *seen = calloc(((size_t)n * n + 7) / 8, 1);
	long pairs = 0, bad = 0;

	assert_non_null(partner);
	assert_non_null(seen);
	assert_int_equal(rounds, n % 2 ? n : n - 1);
	for (int r = 0; r < rounds; r++) {
		int npairs = schedule_round(n, r, partner), byes = 0;

		assert_int_equal(npairs, n / 2);
		/* plain tests in the O(n^2) loop: cmocka's asserts are calls */
		for (int x = 0; x < n; x++) {
			int p = partner[x];

			if (p < 0) {
				byes++;
				continue;
			}
			/* mutual partners: no node can appear in two pairs of a round */
			if (p >= n || p == x || partner[p] != x) {
				bad++;
				continue;
			}
			if (p > x) {
				size_t bit = (size_t)x * n + p;

				bad += !!(seen[bit / 8] & (1u << (bit % 8)));   /* a repeat */
				seen[bit / 8] |= (unsigned char)(1u << (bit % 8));
				pairs++;
			}
		}
		assert_int_equal(byes, n % 2);
	}
	assert_int_equal(bad, 0);
	/* exactly once: no repeats (above) and the count of all pairs */
	assert_int_equal(pairs, (long)n * (n - 1) / 2);
	free(seen);
	free(partner);
}

static void test_small_n(void **state)
{
	(void)state;
	for (int n = 2; n <= 512; n++)
		check_n(n);
}

/* Above 512 a spread around powers of two and odd sizes, and 4096 itself. */
static void test_large_n(void **state)
{
	static const int ns[] = { 513, 640, 767, 1000, 1023, 1024, 1025, 1536, 2047,
				  2048, 2049, 3001, 3072, 4093, 4095, 4096 };
	(void)state;
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		check_n(ns[i]);
}

static void test_single_round_agrees(void **state)
{
	int partner[9];
	(void)state;
	assert_int_equal(schedule_round(9, 4, partner), 4);
	for (int x = 0; x < 9; x++)
		assert_int_equal(partner[x], schedule_pair(9, 4, x));
}

static void test_bad_arguments(void **state)
{
	int partner[4];
	(void)state;
	assert_int_equal(schedule_rounds(0), 0);
	assert_int_equal(schedule_rounds(1), 0);
	assert_int_equal(schedule_rounds(2), 1);
	assert_int_equal(schedule_pair(2, 0, 0), 1);
	assert_int_equal(schedule_pair(2, 0, 1), 0);
	assert_int_equal(schedule_pair(1, 0, 0), -1);
	assert_int_equal(schedule_pair(4, 3, 0), -1);   /* round out of range */
	assert_int_equal(schedule_pair(4, -1, 0), -1);
	assert_int_equal(schedule_pair(4, 0, 4), -1);   /* node out of range */
	assert_int_equal(schedule_round(4, 3, partner), -1);
	assert_int_equal(schedule_round(1, 0, partner), -1);
}

static void test_pack(void **state)
{
	/* a star around node 0 needs one round per pair; disjoint pairs share one */
	const int star[] = { 0, 1, 0, 2, 0, 3, 1, 2 };
	const int disjoint[] = { 0, 1, 2, 3, 4, 5 };
	const int self[] = { 1, 1 };
	const int range[] = { 0, 6 };
	int round_of[4];
	(void)state;
	assert_int_equal(schedule_pack(4, star, 4, round_of), 3);
	assert_int_equal(round_of[0], 0);
	assert_int_equal(round_of[1], 1);
	assert_int_equal(round_of[2], 2);
	assert_int_equal(round_of[3], 2);   /* 1 plays in round 0, 2 in round 1 */
	assert_int_equal(schedule_pack(6, disjoint, 3, round_of), 1);
	assert_int_equal(schedule_pack(4, self, 1, round_of), -1);
	assert_int_equal(schedule_pack(6, range, 1, round_of), -1);
	assert_int_equal(schedule_pack(6, disjoint, 0, round_of), 0);
}

static void test_cap(void **state)
{
	/* rounds 0: 3 pairs, 1: 1 pair, 2: none, 3: 2 pairs */
	int round_of[] = { 0, 0, 1, 0, 3, 3 };
	int copy[6];
	(void)state;
	memcpy(copy, round_of, sizeof(copy));
	assert_int_equal(schedule_cap(copy, 6, 4, 0), 4);   /* k < 1: unchanged */
	assert_memory_equal(copy, round_of, sizeof(copy));
	assert_int_equal(schedule_cap(copy, 6, 4, 2), 4);
	assert_int_equal(copy[0], 0);
	assert_int_equal(copy[1], 0);
	assert_int_equal(copy[3], 1);   /* the third pair of round 0 */
	assert_int_equal(copy[2], 2);
	assert_int_equal(copy[4], 3);
	assert_int_equal(copy[5], 3);
	memcpy(copy, round_of, sizeof(copy));
	assert_int_equal(schedule_cap(copy, 6, 4, 1), 6);   /* serial */
	for (int i = 0; i < 6; i++)
		for (int j = i + 1; j < 6; j++)
			assert_int_not_equal(copy[i], copy[j]);
	copy[0] = 9;
	assert_int_equal(schedule_cap(copy, 6, 4, 1), -1);
}

/*
 * netpair at scale: n nodes in groups of k (the last shorter). Every pair
 * inside a group exactly once and in the first part; every pair of groups
 * met; every node crossing; no node twice in a round; rounds bounded by the
 * two tournaments plus the extras' packing.
 */
static void check_grouped(int n, int k)
{
	int ng = (n + k - 1) / k, *g = malloc((size_t)n * sizeof(int)), *pairs, *round_of, np;
	int within, rounds, last = n - (ng - 1) * k;
	unsigned char *seen = calloc((size_t)n * n, 1), *met = calloc((size_t)ng * ng, 1);
	unsigned char *crossed = calloc((size_t)n, 1);
	long inside = 0, bad = 0;

	assert_non_null(g);
	assert_non_null(seen);
	for (int x = 0; x < n; x++)
		g[x] = x / k;
	rounds = schedule_grouped(n, g, ng, &pairs, &round_of, &np, &within);
	assert_true(rounds >= 0);
	assert_int_equal(within, schedule_rounds(k < n ? k : n));
	{
		unsigned char *busy = calloc((size_t)(rounds ? rounds : 1) * n, 1);

		assert_non_null(busy);
		for (int i = 0; i < np; i++) {
			int a = pairs[2 * i], b = pairs[2 * i + 1], r = round_of[i];

			if (a < 0 || a >= n || b < 0 || b >= n || a == b || r < 0 || r >= rounds) {
				bad++;
				continue;
			}
			bad += busy[(size_t)r * n + a] || busy[(size_t)r * n + b];
			busy[(size_t)r * n + a] = busy[(size_t)r * n + b] = 1;
			if (g[a] == g[b]) {
				bad += seen[(size_t)a * n + b] || seen[(size_t)b * n + a] || r >= within;
				seen[(size_t)a * n + b] = 1;
				inside++;
			} else {
				met[g[a] * ng + g[b]] = met[g[b] * ng + g[a]] = 1;
				crossed[a] = crossed[b] = 1;
			}
		}
		free(busy);
	}
	assert_int_equal(bad, 0);
	/* complete inside: (ng - 1) full groups and the last */
	assert_int_equal(inside, (long)(ng - 1) * k * (k - 1) / 2 + (long)last * (last - 1) / 2);
	for (int a = 0; a < ng; a++)
		for (int b = a + 1; b < ng; b++)
			assert_true(met[a * ng + b]);
	for (int x = 0; ng > 1 && x < n; x++)
		assert_true(crossed[x]);
	/* the two tournaments, and at most a few rounds of extras (a short last group) */
	assert_true(rounds <= within + (ng > 1 ? schedule_rounds(ng) + k : 0));
	free(pairs);
	free(round_of);
	free(g);
	free(seen);
	free(met);
	free(crossed);
}

static void test_grouped(void **state)
{
	int *p, *r, np, w, bad_group[3] = { 0, 3, 1 };

	(void)state;
	for (int n = 1; n <= 40; n++)
		for (int k = 1; k <= n; k++)
			check_grouped(n, k);
	check_grouped(256, 16);
	check_grouped(1024, 32);
	check_grouped(1000, 32);
	assert_int_equal(schedule_grouped(3, bad_group, 2, &p, &r, &np, &w), -1);
	assert_null(p);
	assert_int_equal(schedule_grouped(0, bad_group, 1, &p, &r, &np, &w), -1);
}

/*
 * --pair-schedule's rule: all-pairs and grouped as asked; auto groups with a
 * topology of 2 groups or more, or above SCHEDULE_ALL_PAIRS_MAX nodes.
 */
static void test_use_grouped(void **state)
{
	const char *why = NULL;
	(void)state;
	assert_int_equal(schedule_use_grouped(0, 6, 0, &why), 0);
	assert_non_null(strstr(why, "128 nodes or fewer"));
	assert_int_equal(schedule_use_grouped(0, SCHEDULE_ALL_PAIRS_MAX, 0, NULL), 0);
	assert_int_equal(schedule_use_grouped(0, SCHEDULE_ALL_PAIRS_MAX + 1, 0, &why), 1);
	assert_non_null(strstr(why, "more than 128"));
	assert_int_equal(schedule_use_grouped(0, 6, 2, &why), 1);
	assert_non_null(strstr(why, "topology"));
	assert_int_equal(schedule_use_grouped(0, 6, 1, &why), 0);
	assert_int_equal(schedule_use_grouped(1, 4096, 64, &why), 0);
	assert_string_equal(why, "--pair-schedule all-pairs");
	assert_int_equal(schedule_use_grouped(2, 4, 0, &why), 1);
}

/* the tournament as a pair list: every pair once, the rounds of schedule_rounds */
static void test_all_pairs_list(void **state)
{
	(void)state;
	for (int n = 2; n <= 11; n++) {
		int *pairs, *round_of, seen[11][11] = { { 0 } };

		assert_int_equal(schedule_all_pairs(n, &pairs, &round_of), schedule_rounds(n));
		for (int k = 0; k < n * (n - 1) / 2; k++) {
			int a = pairs[2 * k], b = pairs[2 * k + 1];

			assert_int_equal(schedule_pair(n, round_of[k], a), b);
			assert_int_equal(seen[a][b]++ + seen[b][a], 0);
		}
		free(pairs);
		free(round_of);
	}
	assert_int_equal(schedule_all_pairs(1, (int *[]){ NULL }, (int *[]){ NULL }), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_n),
		cmocka_unit_test(test_large_n),
		cmocka_unit_test(test_single_round_agrees),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_pack),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_grouped),
		cmocka_unit_test(test_use_grouped),
		cmocka_unit_test(test_all_pairs_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
