#ifndef CCDIAG_NETPAIR_H
#define CCDIAG_NETPAIR_H

/*
 * The diagnosis of the netpair probe, as pure functions over measured
 * values: no MPI, so tests/unit/test_netpair.c drives it with matrices.
 * docs/netpair.md explains the rules; in short:
 *
 *  1. Reference: per metric, the median of the links that look healthy
 *     (within tolerance of the median of each node's best link), or the
 *     expected rate when one is given.
 *  2. Pass 1: a link is suspect when a metric is out of tolerance of the
 *     reference; the endpoints of suspect links are suspect nodes. A node
 *     with at least one good link is known-good enough to be a partner.
 *  3. Pass 2a: each suspect node is retested against known-good partners,
 *     preferring partners it already had a good link with; failing against
 *     every partner makes it bad, passing against one at least clears it.
 *  4. Pass 2b: a suspect link whose two nodes were both cleared is retested
 *     itself: still out of tolerance makes it a bad link (a link fault, not
 *     a node fault), else it was transient. A suspect link with a bad node is
 *     explained by that node; one whose nodes cannot be told apart (too few
 *     good nodes, e.g. a 2-node cluster) is ambiguous.
 *  5. Noise: every reading of a pair counts (pass 1 and each try), the best
 *     judged. A bad node or link must stand out against the run's own noise:
 *     below the lowest reading a pair that also read within tolerance gave
 *     (the noise floor) by as much again (at most 3x), or, with no such pair
 *     but a reference collapsed below half the link rate, a third of the
 *     tolerance; and its readings must not scatter more than 3x. Otherwise
 *     it is inconclusive: named, never blamed; a node's suspect links are
 *     then retested themselves. No node is bad while it has a good link, so
 *     every node is never blamed: with no good link anywhere all are
 *     ambiguous, a failed measurement.
 */

#define NP_MAX_PARTNERS 4
#define NP_MAX_CONFIRM 8

/* One measured pair a-b; bandwidths in GB/s (1e9 B/s), latency in us; <= 0: not measured. */
struct np_meas {
	double bw_ab;            /* a -> b, unidirectional */
	double bw_ba;            /* b -> a, unidirectional */
	double bidir;            /* both directions at once, the sum of both */
	double lat_us;           /* one-way latency: the probe gives its fastest round trip / 2 */
};

struct np_opts {
	double tol;              /* bandwidth suspect below tol x reference (0 < tol <= 1) */
	double bidir_tol;        /* the same for bidir; 0: recorded, not judged */
	double lat_tol;          /* latency suspect above lat_tol x reference; 0: not judged */
	double expect_GBps;      /* > 0: reference one-way bandwidth instead of the measured one */
	int partners;            /* known-good partners per suspect node, 1..NP_MAX_PARTNERS */
	int confirm;             /* measurements of a retest pair out of tolerance, best judged,
				  * 1..NP_MAX_CONFIRM (0: 2, the default before it was an option) */
	double rate_GBps;        /* the links' nominal one-way rate (the nodes' median); 0 unknown */
};

/* what "stands out against the run's noise" means (docs/netpair.md, "Noise") */
#define NP_SEP 3.0           /* at most this factor below the noise floor is always enough */
#define NP_SCATTER 3.0       /* readings of one node or link spread wider than this: no figure */
#define NP_COLLAPSE 0.5      /* a reference below this fraction of the link rate: a noisy run */

enum np_verdict {
	NP_OK,                   /* node or link fine (or cleared by the retest) */
	NP_BAD,                  /* node: failed against every known-good partner; link: a link fault */
	NP_SUSPECT,              /* node: failed against some partners only */
	NP_AMBIGUOUS,            /* cannot tell node from link fault (no known-good partner) */
	NP_EXPLAINED,            /* link: slow because one of its nodes is bad */
	NP_TRANSIENT,            /* link: out of tolerance in pass 1, not on retest */
	NP_INCONCLUSIVE,         /* node or link: slow, but not beyond the run's own noise (why) */
};

/* why a node or link is inconclusive */
enum np_why {
	NP_WHY_NONE,
	NP_WHY_NOISE,            /* its best reading is within the run's noise (noise_floor, collapse) */
	NP_WHY_SCATTER,          /* its readings scatter wider than NP_SCATTER */
};

/* Which metrics of a link are out of tolerance. */
#define NP_F_UNI   1u        /* the slower direction of bw_uni */
#define NP_F_BIDIR 2u
#define NP_F_LAT   4u

struct np_ratios {
	double uni;              /* min(bw_ab, bw_ba) / reference */
	double bidir;            /* bidir / reference */
	double lat;              /* lat_us / reference (higher is worse) */
	unsigned flags;          /* NP_F_* out of tolerance */
};

struct np_link {
	struct np_meas m;        /* pass 1 */
	struct np_ratios r;
	int measured;            /* pass 1 has a value */
	int retested;            /* pass 2b measured the link itself */
	struct np_meas rm;       /* pass 2b: the best of its readings, pass 1 and each try */
	struct np_ratios rr;
	double lo;               /* pass 2b: its lowest one-way reading, ratio to the reference */
	enum np_verdict verdict;
	int by;                  /* NP_EXPLAINED: the bad node; -1 when both are bad */
	enum np_why why;         /* NP_INCONCLUSIVE: why */
};

struct np_node {
	double ratio;            /* median uni ratio over the node's links, pass 1 */
	double lat_ratio;        /* median latency ratio, pass 1 (0 when not measured) */
	int links;               /* measured links */
	int good_links;          /* links with no flag in pass 1 */
	int suspect;             /* has a suspect link in pass 1 */
	int known_good;          /* may serve as a retest partner: has a good link */
	int npartners;           /* pass 2a */
	int partner[NP_MAX_PARTNERS];
	struct np_meas pm[NP_MAX_PARTNERS];  /* oriented node -> partner */
	struct np_ratios pr[NP_MAX_PARTNERS];
	int fails;               /* retests out of tolerance */
	double best, lo;         /* pass 2a: its best and lowest one-way reading over its partners */
	enum np_verdict verdict;
	enum np_why why;         /* NP_INCONCLUSIVE: why */
};

struct np_diag {
	int n;
	struct np_opts opt;
	double ref_uni, ref_bidir, ref_lat;  /* GB/s, GB/s, us; 0: no reference */
	int ref_expected;        /* ref_uni/ref_bidir come from expect_GBps */
	struct np_link *link;    /* n(n-1)/2, see np_link */
	struct np_node *node;    /* n */
	int suspect_links;       /* pass 1 */
	int bad_nodes, suspect_nodes, ambiguous_nodes;
	int bad_links, explained_links, ambiguous_links, transient_links;
	int inconclusive_nodes, inconclusive_links;
	double noise_floor;      /* lowest one-way reading (ratio) of a pair that also read within
				  * tolerance, pass 2; 0: none seen */
	double ref_of_rate;      /* ref_uni / opt.rate_GBps; 0 when the rate is unknown */
	int collapsed;           /* ref_of_rate below NP_COLLAPSE */
	int retests[2];          /* pairs measured in pass 2a and 2b */
	const char *note;        /* why the verdict is weaker than usual, or NULL */
};

/*
 * Measures npairs pairs (pairs[2i] -> pairs[2i+1] is the a -> b of out[i]);
 * stage is 1 (node retests) or 2 (link retests). Returns 0 or -1.
 */
typedef int (*np_measure_fn)(void *ctx, int stage, const int *pairs, int npairs,
			     struct np_meas *out);

/* what np_why says, in words ("" for NP_WHY_NONE) */
const char *np_why_text(enum np_why w);

/* Sets up d for n nodes with no link measured. Returns 0 or -1 (n < 2, bad opt, memory). */
int np_diag_init(struct np_diag *d, int n, const struct np_opts *opt);

void np_diag_free(struct np_diag *d);

/* The link a-b (a != b, either order), or NULL when out of range. */
struct np_link *np_diag_link(const struct np_diag *d, int a, int b);

/* Stores the pass-1 measurement of a -> b (m->bw_ab is a -> b even when a > b). */
void np_diag_set(struct np_diag *d, int a, int b, const struct np_meas *m);

/*
 * Runs the diagnosis on the pass-1 values: references, ratios, suspects, then
 * pass 2 through measure (NULL: judge the retests on the pass-1 values of the
 * same pairs, which every all-pairs run already has). Fills every verdict.
 * Returns 0, or -1 when measure fails or memory runs out.
 */
int np_diagnose(struct np_diag *d, np_measure_fn measure, void *ctx);

/* "ok", "bad", "suspect", "ambiguous", "explained", "transient", "inconclusive". */
const char *np_verdict_name(enum np_verdict v);

#endif
