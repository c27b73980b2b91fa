#ifndef CCDIAG_DIAG_SPOTCHECK_H
#define CCDIAG_DIAG_SPOTCHECK_H

/*
 * diag/spotcheck.c: ccdiag spot-check (docs/provenance.md, "Spot-check"):
 * reruns a small random sample of a received run on the customer's own
 * allocation (the profile's node phase on k random nodes, its pairs phase on
 * the hosts of k random links) and compares each figure the profile judges
 * with the received one. Both sides are judged by ccreport from the results
 * files (never from a received summary.json), so a figure means the same on
 * both. What is launched, and how, is main.c's (spot_ops).
 */
#include "strv.h"

struct spot_ops {
	/*
	 * Runs the profile's phase NAME ("node": the quick node phase; "pairs") on
	 * hosts, its files into dir. Returns the results file (malloc'd), or NULL
	 * when the profile has no such phase (said).
	 */
	char *(*run)(void *ctx, const char *phase, const struct strv *hosts, const char *dir);
	void *ctx;
};

struct spot_args {
	const char *profile;         /* the profile's path */
	const char *against;         /* the received run's folder (phase-*.jsonl) */
	const char *out;             /* the spot-check's folder */
	const char *ccreport;        /* the ccreport binary */
	int k;                       /* nodes and links sampled */
	unsigned long long seed;     /* the sample's seed */
	double tol;                  /* the least tolerance, a fraction (0.5 = 50 %) */
	const struct strv *reach;    /* the hosts the launcher can run on; NULL: any */
};

/*
 * Runs the spot-check and prints what it found. Returns the exit code:
 * 0 every figure reproduced, 1 a received figure the cluster could not
 * reproduce and that stands out against what it does now, 2 bad input
 * (no results in the folder, a results file ccreport refuses, a host the
 * launcher cannot reach), 4 could not reproduce: the cluster is slower now
 * across the board, or nothing comparable was measured.
 */
int spotcheck(const struct spot_args *a, const struct spot_ops *ops);

#endif
