/*
 * make bench-isolate: the group-testing planner's counts on simulated
 * clusters (tests/unit/isolate_sim.h), printed, never judged: for n = 64,
 * 256, 1,024 and 4,096 nodes in groups of ceil(sqrt(n)) and d = 0..8 bad
 * nodes placed at random, TRIALS runs each (argv[1], 1000): tests and rounds
 * (mean, worst), the worst ratio to d log2(n/d) + groups, and exhaustive
 * pairs for comparison (n(n-1)/2 pair tests in n-1 rounds).
 *
 * bench_isolate predict N K BAD...: the planner's rounds and tests for N
 * nodes in groups of K in node order with the given nodes bad ("rounds
 * tests"), the prediction tests/integration/test_isolate.sh holds a real run to.
 *
 * Last, netpair at scale (probes/schedule.h, schedule_grouped): rounds and
 * pairs at 256, 1,024 and 4,096 healthy nodes in groups of ceil(sqrt(n)),
 * and the time at netpair's per-round model with its defaults at 400 Gb/s
 * (probes/netpair.c, netpair_estimate: three bandwidth steps of
 * --pair-time 0.15 s, 1,000 ping-pongs at 30 us, 20 ms of barriers: ~0.50 s
 * a round) against the full tournament's n - 1 rounds.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../unit/isolate_sim.h"
#include "../../probes/schedule.h"

static int predict(int argc, char **argv)
{
	struct sim s;
	struct iso_plan p;
	int n = argc > 2 ? atoi(argv[2]) : 0, k = argc > 3 ? atoi(argv[3]) : 0, rounds;

	if (n < 1 || k < 1 || sim_init(&s, n, 1)) {
		fprintf(stderr, "usage: bench_isolate predict N K [BAD...]\n");
		return 2;
	}
	s.ngroups = (n + k - 1) / k;
	for (int i = 0; i < n; i++)
		s.group[i] = i / k;
	for (int i = 4; i < argc; i++) {
		int x = atoi(argv[i]);

		if (x < 0 || x >= n) {
			fprintf(stderr, "bench_isolate: node %d out of range\n", x);
			return 2;
		}
		s.bad[x] = 1;
	}
	if (iso_init(&p, n, s.group, s.ngroups) || (rounds = iso_run(&p, sim_oracle, &s)) < 0)
		return 1;
	printf("%d %d\n", rounds, p.tests);
	iso_free(&p);
	sim_free(&s);
	return 0;
}

int main(int argc, char **argv)
{
	static const int ns[] = { 64, 256, 1024, 4096 };
	int trials;

	if (argc > 1 && !strcmp(argv[1], "predict"))
		return predict(argc, argv);
	trials = argc > 1 ? atoi(argv[1]) : 1000;

	if (trials < 1) {
		fprintf(stderr, "usage: bench_isolate [TRIALS]\n");
		return 2;
	}
	printf("group testing, %d trials per row (tests = all_reduce tests; exhaustive pairs below)\n",
	       trials);
	printf("%6s %6s %2s %9s %6s %9s %6s %6s %7s\n", "nodes", "groups", "d", "tests", "worst",
	       "rounds", "worst", "bound", "ratio");
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		struct sim s;

		if (sim_init(&s, ns[i], (uint64_t)ns[i] * 7919)) {
			fprintf(stderr, "bench_isolate: out of memory\n");
			return 1;
		}
		for (int d = 0; d <= 8; d++) {
			double tsum = 0, rsum = 0, ratio = 0, bound = sim_bound(s.n, d, s.ngroups);
			int tworst = 0, rworst = 0, wrong = 0;

			for (int t = 0; t < trials; t++) {
				struct iso_plan p;
				int rounds;

				sim_draw(&s, d);
				if (iso_init(&p, s.n, s.group, s.ngroups) ||
				    (rounds = iso_run(&p, sim_oracle, &s)) < 0) {
					fprintf(stderr, "bench_isolate: the planner failed\n");
					return 1;
				}
				wrong += iso_bad_count(&p) != d;
				tsum += p.tests;
				rsum += rounds;
				if (p.tests > tworst)
					tworst = p.tests;
				if (rounds > rworst)
					rworst = rounds;
				if (p.tests / bound > ratio)
					ratio = p.tests / bound;
				iso_free(&p);
			}
			printf("%6d %6d %2d %9.1f %6d %9.2f %6d %6.1f %7.2f%s\n", s.n, s.ngroups, d,
			       tsum / trials, tworst, rsum / trials, rworst, bound, ratio,
			       wrong ? "  WRONG" : "");
		}
		printf("%6d exhaustive pairs: %ld pair tests in %d rounds\n", s.n,
		       (long)s.n * (s.n - 1) / 2, s.n - 1);
		sim_free(&s);
	}
	{
		static const int sn[] = { 256, 1024, 4096 };
		const double msg = 4.0 * 1048576 * 8 / 400e9, bw = 0.15 > msg ? 0.15 : msg;
		const double round_s = 3 * (bw + msg) + 1000 * 30e-6 + 0.02;

		printf("\nnetpair at scale (healthy, netpair's model at 400 Gb/s: %.2f s a round)\n", round_s);
		printf("%6s %6s %8s %8s %9s %8s %11s %9s\n", "nodes", "groups", "inside", "across",
		       "pairs", "time", "tournament", "time");
		for (size_t i = 0; i < sizeof(sn) / sizeof(sn[0]); i++) {
			int n = sn[i], k = (int)ceil(sqrt((double)n)), *g = malloc((size_t)n * sizeof(int));
			int *pairs, *round_of, np, within, rounds;

			if (!g)
				return 1;
			for (int x = 0; x < n; x++)
				g[x] = x / k;
			rounds = schedule_grouped(n, g, (n + k - 1) / k, &pairs, &round_of, &np, &within);
			if (rounds < 0)
				return 1;
			printf("%6d %6d %8d %8d %9d %7.0fs %11d %8.0fs\n", n, (n + k - 1) / k, within,
			       rounds - within, np, rounds * round_s, n - 1, (n - 1) * round_s);
			free(pairs);
			free(round_of);
			free(g);
		}
	}
	return 0;
}
