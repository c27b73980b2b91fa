/*
 * netpair_diag: the netpair probe's diagnosis (probes/netpair.h), pure
 * functions over a measured matrix: no MPI, so tests/unit/test_netpair.c
 * drives it with synthetic clusters. The measurement that feeds it, and the
 * retests it asks for, are in probes/netpair.c; the rules in docs/netpair.md.
 */
#include "netpair.h"
#include "../core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int link_index(int n, int a, int b)
{
	if (a > b) {
		int t = a;

		a = b;
		b = t;
	}
	return a * n - a * (a + 1) / 2 + (b - a - 1);
}

struct np_link *np_diag_link(const struct np_diag *d, int a, int b)
{
	if (a < 0 || b < 0 || a >= d->n || b >= d->n || a == b)
		return NULL;
	return &d->link[link_index(d->n, a, b)];
}

const char *np_verdict_name(enum np_verdict v)
{
	static const char *const names[] = { "ok", "bad", "suspect", "ambiguous", "explained",
					     "transient", "inconclusive" };

	return (unsigned)v < sizeof(names) / sizeof(names[0]) ? names[v] : "?";
}

const char *np_why_text(enum np_why w)
{
	static const char *const text[] = {
		"",
		"within the run's own noise",
		"its readings scatter too widely to give one figure",
	};

	return (unsigned)w < sizeof(text) / sizeof(text[0]) ? text[w] : "?";
}

int np_diag_init(struct np_diag *d, int n, const struct np_opts *opt)
{
	memset(d, 0, sizeof(*d));
	if (n < 2 || !(opt->tol > 0.0 && opt->tol <= 1.0) || opt->lat_tol < 0.0 || !(opt->rate_GBps >= 0.0) ||
	    !(opt->bidir_tol >= 0.0 && opt->bidir_tol <= 1.0) ||
	    opt->partners < 1 || opt->partners > NP_MAX_PARTNERS ||
	    opt->confirm < 0 || opt->confirm > NP_MAX_CONFIRM)
		return -1;
	d->n = n;
	d->opt = *opt;
	if (!d->opt.confirm)
		d->opt.confirm = 2;
	d->link = calloc((size_t)n * (size_t)(n - 1) / 2, sizeof(*d->link));
	d->node = calloc((size_t)n, sizeof(*d->node));
	if (!d->link || !d->node) {
		np_diag_free(d);
		return -1;
	}
	return 0;
}

void np_diag_free(struct np_diag *d)
{
	free(d->link);
	free(d->node);
	d->link = NULL;
	d->node = NULL;
}

/* m as seen from a: bw_ab is a -> b. */
static struct np_meas orient(const struct np_meas *m, int swap)
{
	struct np_meas o = *m;

	if (swap) {
		o.bw_ab = m->bw_ba;
		o.bw_ba = m->bw_ab;
	}
	return o;
}

void np_diag_set(struct np_diag *d, int a, int b, const struct np_meas *m)
{
	struct np_link *l = np_diag_link(d, a, b);

	if (!l)
		return;
	l->m = orient(m, a > b);
	l->measured = 1;
}

/* The metrics of a link: 0 when not measured. */
enum metric { M_UNI, M_BIDIR, M_LAT, M_COUNT };

static double metric(const struct np_meas *m, enum metric k)
{
	switch (k) {
	case M_UNI:
		/* the slower direction: a link is as good as its worse half */
		return m->bw_ab > 0 && m->bw_ba > 0 ? fmin(m->bw_ab, m->bw_ba) : 0.0;
	case M_BIDIR:
		return m->bidir > 0 ? m->bidir : 0.0;
	default:
		return m->lat_us > 0 ? m->lat_us : 0.0;
	}
}

/*
 * The reference of a metric: the median of the links that look healthy.
 * A plain median of all links fails when one bad node spoils most links
 * (with 3 nodes, 2 links of 3 touch it), so "healthy" is judged against a
 * robust first guess: the median over nodes of each node's best link. A node
 * has a good best link unless it is bad itself, so the guess holds while
 * fewer than half the nodes are bad.
 */
static double reference(const struct np_diag *d, enum metric k, double tol)
{
	int n = d->n, nbest = 0, nh = 0;
	int higher = k != M_LAT;
	double *best = malloc((size_t)n * sizeof(double));
	double *h = malloc((size_t)n * (size_t)(n - 1) / 2 * sizeof(double));
	double guess, ref = 0.0;

	if (!best || !h)
		goto out;
	for (int x = 0; x < n; x++) {
		double b = 0.0;

		for (int y = 0; y < n; y++) {
			const struct np_link *l = np_diag_link(d, x, y);
			double v;

			if (!l || !l->measured || (v = metric(&l->m, k)) <= 0)
				continue;
			if (b == 0.0 || (higher ? v > b : v < b))
				b = v;
		}
		if (b > 0)
			best[nbest++] = b;
	}
	if (!nbest)
		goto out;
	guess = stats_median(best, (size_t)nbest);
	for (int i = 0; i < n * (n - 1) / 2; i++) {
		double v = d->link[i].measured ? metric(&d->link[i].m, k) : 0.0;

		if (v <= 0)
			continue;
		if (higher ? v >= tol * guess : (tol <= 0 || v <= tol * guess))
			h[nh++] = v;
	}
	ref = nh ? stats_median(h, (size_t)nh) : guess;
out:
	free(best);
	free(h);
	return ref;
}

/* Ratios of m to the references and the flags of what is out of tolerance. */
static struct np_ratios judge(const struct np_diag *d, const struct np_meas *m)
{
	struct np_ratios r = { 0 };
	double v;

	if (d->ref_uni > 0) {
		v = metric(m, M_UNI);
		r.uni = v / d->ref_uni;
		if (r.uni < d->opt.tol)
			r.flags |= NP_F_UNI;
	}
	if (d->ref_bidir > 0) {
		v = metric(m, M_BIDIR);
		r.bidir = v / d->ref_bidir;
		if (d->opt.bidir_tol > 0 && r.bidir < d->opt.bidir_tol)
			r.flags |= NP_F_BIDIR;
	}
	if (d->ref_lat > 0) {
		v = metric(m, M_LAT);
		r.lat = v / d->ref_lat;
		/* an unmeasured latency is a failure too */
		if (d->opt.lat_tol > 0 && (v <= 0 || r.lat > d->opt.lat_tol))
			r.flags |= NP_F_LAT;
	}
	return r;
}

/* Pass 1: references, ratios, suspect links and nodes, known-good nodes. */
static int pass1(struct np_diag *d)
{
	int n = d->n;
	double *v = malloc((size_t)n * sizeof(double)), *w = malloc((size_t)n * sizeof(double));

	if (!v || !w) {
		free(v);
		free(w);
		return -1;
	}
	if (d->opt.expect_GBps > 0) {
		/* full duplex: both directions at once should give twice one */
		d->ref_uni = d->opt.expect_GBps;
		d->ref_bidir = 2.0 * d->opt.expect_GBps;
		d->ref_expected = 1;
	} else {
		d->ref_uni = reference(d, M_UNI, d->opt.tol);
		d->ref_bidir = reference(d, M_BIDIR, d->opt.bidir_tol > 0 ? d->opt.bidir_tol :
					 d->opt.tol);
	}
	d->ref_lat = reference(d, M_LAT, d->opt.lat_tol);
	/* a reference far below the links' rate: the whole run was slowed (a busy machine) */
	if (d->opt.rate_GBps > 0 && d->ref_uni > 0 && !d->ref_expected) {
		d->ref_of_rate = d->ref_uni / d->opt.rate_GBps;
		d->collapsed = d->ref_of_rate < NP_COLLAPSE;
	}
	for (int i = 0; i < n * (n - 1) / 2; i++) {
		struct np_link *l = &d->link[i];

		l->r = judge(d, &l->m);
		if (!l->measured)
			l->r.flags |= NP_F_UNI;   /* never measured: not good */
		l->verdict = NP_OK;
		l->by = -1;
		d->suspect_links += l->r.flags != 0;
	}
	for (int x = 0; x < n; x++) {
		struct np_node *nd = &d->node[x];
		int nv = 0, nw = 0;

		for (int y = 0; y < n; y++) {
			const struct np_link *l = np_diag_link(d, x, y);

			if (!l || !l->measured)
				continue;
			nd->links++;
			v[nv++] = l->r.uni;
			if (l->r.lat > 0)
				w[nw++] = l->r.lat;
			if (!l->r.flags)
				nd->good_links++;
		}
		nd->ratio = stats_median(v, (size_t)nv);
		nd->lat_ratio = stats_median(w, (size_t)nw);
		nd->suspect = nd->good_links < n - 1;
		nd->known_good = nd->good_links > 0;
		nd->verdict = NP_OK;
	}
	free(v);
	free(w);
	return 0;
}

/* Unordered pair list with dedup; pairs[2i] < pairs[2i+1]. */
struct pairlist {
	int *p;
	int n, cap;
};

static int pairlist_find(const struct pairlist *pl, int a, int b)
{
	if (a > b) {
		int t = a;

		a = b;
		b = t;
	}
	for (int i = 0; i < pl->n; i++)
		if (pl->p[2 * i] == a && pl->p[2 * i + 1] == b)
			return i;
	return -1;
}

static int pairlist_add(struct pairlist *pl, int a, int b)
{
	int i = pairlist_find(pl, a, b);

	if (i >= 0)
		return i;
	if (pl->n == pl->cap) {
		int cap = pl->cap ? 2 * pl->cap : 16;
		int *p = realloc(pl->p, (size_t)cap * 2 * sizeof(int));

		if (!p)
			return -1;
		pl->p = p;
		pl->cap = cap;
	}
	pl->p[2 * pl->n] = a < b ? a : b;
	pl->p[2 * pl->n + 1] = a < b ? b : a;
	return pl->n++;
}

/* Is p a usable retest partner for x? (class: 1 clean, 2 fallback, 0 no) */
static int partner_class(const struct np_diag *d, int x, int p)
{
	const struct np_link *l = np_diag_link(d, x, p);

	if (!l || !d->node[p].known_good)
		return 0;
	return l->measured && !l->r.flags ? 1 : 2;
}

/*
 * Chooses the retest partners of every suspect node. Partners are
 * known-good nodes; a node that had a good link in pass 1 is retested
 * against such clean partners only (a victim of a bad node is then cleared
 * by partners that vouch for it), and only a node with no good link at all
 * falls back to known-good nodes it failed with (the culprit). Among equals
 * the least loaded partner is taken so that the retests spread over rounds.
 */
static int plan_partners(struct np_diag *d, struct pairlist *pl)
{
	int n = d->n, rc = 0;
	int *order = malloc((size_t)n * sizeof(int)), *load = calloc((size_t)n, sizeof(int));
	int no = 0;

	if (!order || !load) {
		rc = -1;
		goto out;
	}
	for (int x = 0; x < n; x++)
		if (d->node[x].suspect)
			order[no++] = x;
	/* worst first: the likely culprit picks its partners before the victims */
	for (int i = 1; i < no; i++)
		for (int j = i; j > 0 && d->node[order[j]].ratio < d->node[order[j - 1]].ratio; j--) {
			int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (int i = 0; i < no; i++) {
		int x = order[i], want;
		struct np_node *nd = &d->node[x];

		/* clean partners if there is any, else the fallback ones */
		want = 2;
		for (int p = 0; p < n; p++)
			if (p != x && partner_class(d, x, p) == 1)
				want = 1;
		/* pairs already planned (another node chose x) count first */
		for (int p = 0; p < n && nd->npartners < d->opt.partners; p++)
			if (p != x && partner_class(d, x, p) == want && pairlist_find(pl, x, p) >= 0)
				nd->partner[nd->npartners++] = p;
		while (nd->npartners < d->opt.partners) {
			int best = -1;

			for (int p = 0; p < n; p++) {
				int dup = 0;

				if (p == x || partner_class(d, x, p) != want)
					continue;
				for (int k = 0; k < nd->npartners; k++)
					dup |= nd->partner[k] == p;
				if (dup)
					continue;
				if (best < 0 || load[p] < load[best] ||
				    (load[p] == load[best] &&
				     (d->node[p].good_links > d->node[best].good_links ||
				      (d->node[p].good_links == d->node[best].good_links &&
				       d->node[p].ratio > d->node[best].ratio))))
					best = p;
			}
			if (best < 0)
				break;
			if (pairlist_add(pl, x, best) < 0) {
				rc = -1;
				goto out;
			}
			load[best]++;
			load[x]++;
			nd->partner[nd->npartners++] = best;
		}
	}
out:
	free(order);
	free(load);
	return rc;
}

/* The better of two measurements of one pair, metric by metric. */
static void keep_best(struct np_meas *m, const struct np_meas *again)
{
	m->bw_ab = again->bw_ab > m->bw_ab ? again->bw_ab : m->bw_ab;
	m->bw_ba = again->bw_ba > m->bw_ba ? again->bw_ba : m->bw_ba;
	m->bidir = again->bidir > m->bidir ? again->bidir : m->bidir;
	if (again->lat_us > 0 && (m->lat_us <= 0 || again->lat_us < m->lat_us))
		m->lat_us = again->lat_us;
}

/* the lower of two one-way readings that were measured (0: not measured) */
static double lower(double a, double b)
{
	return a > 0 && (b <= 0 || a < b) ? a : b;
}

/*
 * Measures pl through measure, or takes the pass-1 values when measure is
 * NULL. Every reading counts: out[i] starts from the pair's pass-1
 * measurement and keeps the best of it and each try, lo[i] the lowest one-way
 * reading of them (GB/s). The pairs are measured once, and a pair whose best
 * is still out of tolerance again, up to opt.confirm tries in all: noise (a
 * busy CPU, other traffic) only ever slows a link down, so a node or link is
 * condemned by a fault that holds in every reading, not by a bad moment.
 */
static int measure_pairs(struct np_diag *d, int stage, const struct pairlist *pl,
			 np_measure_fn measure, void *ctx, struct np_meas *out, double *lo)
{
	struct np_meas *again;
	int *idx, *pairs, k, rc = 0;

	for (int i = 0; i < pl->n; i++) {
		out[i] = np_diag_link(d, pl->p[2 * i], pl->p[2 * i + 1])->m;
		lo[i] = metric(&out[i], M_UNI);
	}
	if (!pl->n || !measure)
		return 0;
	idx = malloc((size_t)pl->n * sizeof(*idx));
	pairs = malloc((size_t)pl->n * 2 * sizeof(*pairs));
	again = calloc((size_t)pl->n, sizeof(*again));
	rc = idx && pairs && again ? 0 : -1;
	for (int rep = 0; !rc && rep < d->opt.confirm; rep++) {
		k = 0;
		for (int i = 0; i < pl->n; i++) {
			/* the first try measures every pair: it is the retest */
			if (rep && !judge(d, &out[i]).flags)
				continue;
			idx[k] = i;
			pairs[2 * k] = pl->p[2 * i];
			pairs[2 * k + 1] = pl->p[2 * i + 1];
			k++;
		}
		if (!k)
			break;
		rc = measure(ctx, stage, pairs, k, again);
		for (int j = 0; !rc && j < k; j++) {
			keep_best(&out[idx[j]], &again[j]);
			lo[idx[j]] = lower(metric(&again[j], M_UNI), lo[idx[j]]);
		}
	}
	free(idx);
	free(pairs);
	free(again);
	return rc;
}

/*
 * The run's noise floor: the lowest one-way reading of a pair that also read
 * within tolerance (its best), as a ratio of the reference. Noise only slows
 * a pair down, so that pair is healthy and its low reading was noise.
 */
static void note_noise(struct np_diag *d, const struct np_meas *best, double lo)
{
	double b = metric(best, M_UNI), r = lo / d->ref_uni;

	if (d->ref_uni > 0 && lo > 0 && b >= d->opt.tol * d->ref_uni && r < d->opt.tol &&
	    (d->noise_floor == 0 || r < d->noise_floor))
		d->noise_floor = r;
}

/*
 * The noise level a blamed node or link must stand out against (docs/netpair.md,
 * "Noise"): the run's noise floor, or, when none was seen but the reference
 * collapsed, the tolerance itself with the full NP_SEP. It only goes down: the
 * best of each one judged inconclusive lowers it for the next.
 */
struct noise {
	int on;                  /* a noisy run: a floor seen or a collapsed reference */
	double level;            /* ratio to the reference */
	int fixed;               /* the level was not measured: NP_SEP applies in full */
};

static void noise_update(const struct np_diag *d, struct noise *nz)
{
	if (d->noise_floor > 0 && (!nz->on || nz->fixed || d->noise_floor < nz->level)) {
		nz->level = d->noise_floor;
		nz->fixed = 0;
	} else if (!nz->on && d->collapsed) {
		nz->level = d->opt.tol;
		nz->fixed = 1;
	}
	nz->on = d->noise_floor > 0 || d->collapsed;
}

/* one blamed node or link: its best and lowest one-way ratio, where its verdict lives */
struct cand {
	double best, lo;
	enum np_verdict *verdict;
	enum np_why *why;
};

static int cand_desc(const void *x, const void *y)
{
	const struct cand *p = x, *q = y;

	return (p->best < q->best) - (p->best > q->best);
}

/*
 * Only a fault that stands out against the run's own noise is blamed. In a
 * noisy run the blamed ones are taken from the fastest down: one whose
 * readings scatter wider than NP_SCATTER, or whose best is not below the
 * level by as much as the level is below the reference (a factor NP_SEP at
 * most), is inconclusive, and its best lowers the level for the next; the
 * first that stands out, and every one slower, stay bad.
 */
static void stand_out(struct noise *nz, struct cand *c, int nc)
{
	if (!nz->on)
		return;
	qsort(c, (size_t)nc, sizeof(*c), cand_desc);
	for (int i = 0; i < nc; i++) {
		double sep = nz->fixed || nz->level < 1.0 / NP_SEP ? 1.0 / NP_SEP : nz->level;

		if (c[i].lo > 0 && c[i].best / c[i].lo > NP_SCATTER)
			*c[i].why = NP_WHY_SCATTER;
		else if (c[i].best >= nz->level * sep)
			*c[i].why = NP_WHY_NOISE;
		else
			break;   /* stands out: it and every slower one stay bad */
		*c[i].verdict = NP_INCONCLUSIVE;
		if (c[i].best < nz->level) {
			nz->level = c[i].best;
			nz->fixed = 0;
		}
	}
}

int np_diagnose(struct np_diag *d, np_measure_fn measure, void *ctx)
{
	struct pairlist pl = { 0 }, ll = { 0 };
	struct np_meas *out = NULL, *lout = NULL;
	double *lo = NULL, *llo = NULL;
	struct noise nz = { 0 };
	struct cand *c = NULL;
	int n = d->n, rc = -1, nc = 0;

	if (pass1(d))
		return -1;
	c = calloc((size_t)n + (size_t)n * (size_t)(n - 1) / 2, sizeof(*c));
	if (!c)
		goto out;
	/* pass 2a: suspect nodes against known-good partners */
	if (plan_partners(d, &pl))
		goto out;
	out = calloc((size_t)(pl.n ? pl.n : 1), sizeof(*out));
	lo = calloc((size_t)(pl.n ? pl.n : 1), sizeof(*lo));
	if (!out || !lo || measure_pairs(d, 1, &pl, measure, ctx, out, lo))
		goto out;
	d->retests[0] = measure ? pl.n : 0;
	for (int i = 0; measure && i < pl.n; i++)
		note_noise(d, &out[i], lo[i]);
	for (int x = 0; x < n; x++) {
		struct np_node *nd = &d->node[x];

		if (!nd->suspect)
			continue;
		for (int k = 0; k < nd->npartners; k++) {
			int i = pairlist_find(&pl, x, nd->partner[k]);

			nd->pm[k] = orient(&out[i], pl.p[2 * i] != x);
			nd->pr[k] = judge(d, &nd->pm[k]);
			nd->fails += nd->pr[k].flags != 0;
			if (nd->pr[k].uni > nd->best)
				nd->best = nd->pr[k].uni;
			if (d->ref_uni > 0 && lo[i] > 0 && (nd->lo == 0 || lo[i] / d->ref_uni < nd->lo))
				nd->lo = lo[i] / d->ref_uni;
		}
		/*
		 * Cleared by one pass: noise only slows a pair down, so a node that ran
		 * at full rate with a known-good partner (the best of its tries) is not
		 * the fault. Its failures against other partners are theirs or their
		 * links', and the links it was suspect on are retested themselves in
		 * pass 2b. (Mixed results once left a node "suspect" and its links
		 * "ambiguous": a node that ran slow to everyone in pass 1 by a busy
		 * moment hid the one bad link it had.)
		 */
		if (!nd->npartners)
			nd->verdict = NP_AMBIGUOUS;
		else if (nd->fails == nd->npartners)
			nd->verdict = NP_BAD;
		else
			nd->verdict = NP_OK;
		/* judged against the noise: a node slow in one-way bandwidth to every partner */
		if (nd->verdict == NP_BAD && nd->best > 0) {
			int uni = 1;

			for (int k = 0; k < nd->npartners; k++)
				uni &= (nd->pr[k].flags & NP_F_UNI) != 0;
			if (uni)
				c[nc++] = (struct cand){ nd->best, nd->lo, &nd->verdict, &nd->why };
		}
	}
	/* a node that does not stand out against the noise is not blamed; its links are then
	 * retested themselves, as a cleared node's */
	noise_update(d, &nz);
	stand_out(&nz, c, nc);
	/* pass 2b: suspect links between cleared nodes, retested themselves */
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++) {
			struct np_link *l = np_diag_link(d, a, b);
			enum np_verdict va = d->node[a].verdict, vb = d->node[b].verdict;

			if (!l->r.flags)
				continue;
			if (va == NP_BAD || vb == NP_BAD) {
				l->verdict = NP_EXPLAINED;
				l->by = va == NP_BAD && vb == NP_BAD ? -1 : va == NP_BAD ? a : b;
			} else if ((va != NP_OK && va != NP_INCONCLUSIVE) || (vb != NP_OK && vb != NP_INCONCLUSIVE)) {
				l->verdict = NP_AMBIGUOUS;
			} else if (pairlist_add(&ll, a, b) < 0) {
				goto out;
			}
		}
	lout = calloc((size_t)(ll.n ? ll.n : 1), sizeof(*lout));
	llo = calloc((size_t)(ll.n ? ll.n : 1), sizeof(*llo));
	if (!lout || !llo || measure_pairs(d, 2, &ll, measure, ctx, lout, llo))
		goto out;
	d->retests[1] = measure ? ll.n : 0;
	for (int i = 0; i < ll.n; i++) {
		struct np_link *l = np_diag_link(d, ll.p[2 * i], ll.p[2 * i + 1]);

		l->retested = 1;
		l->rm = lout[i];
		l->lo = llo[i];
		l->rr = judge(d, &l->rm);
		l->verdict = l->rr.flags ? NP_BAD : NP_TRANSIENT;
		if (measure)
			note_noise(d, &lout[i], llo[i]);
	}
	nc = 0;
	for (int i = 0; i < ll.n; i++) {
		struct np_link *l = np_diag_link(d, ll.p[2 * i], ll.p[2 * i + 1]);

		if (l->verdict == NP_BAD && (l->rr.flags & NP_F_UNI))
			c[nc++] = (struct cand){ l->rr.uni, l->lo / d->ref_uni, &l->verdict, &l->why };
	}
	noise_update(d, &nz);
	stand_out(&nz, c, nc);
	for (int x = 0; x < n; x++) {
		d->bad_nodes += d->node[x].verdict == NP_BAD;
		d->suspect_nodes += d->node[x].verdict == NP_SUSPECT;
		d->ambiguous_nodes += d->node[x].verdict == NP_AMBIGUOUS;
		d->inconclusive_nodes += d->node[x].verdict == NP_INCONCLUSIVE;
	}
	for (int i = 0; i < n * (n - 1) / 2; i++) {
		d->bad_links += d->link[i].verdict == NP_BAD;
		d->explained_links += d->link[i].verdict == NP_EXPLAINED;
		d->ambiguous_links += d->link[i].verdict == NP_AMBIGUOUS;
		d->transient_links += d->link[i].verdict == NP_TRANSIENT;
		d->inconclusive_links += d->link[i].verdict == NP_INCONCLUSIVE;
	}
	if (n >= 3 && d->ambiguous_nodes == n)
		d->note = "no node has a good link: a failed measurement (a busy machine, or the whole "
			  "network slow), not a diagnosis of every node";
	else if (d->inconclusive_nodes || d->inconclusive_links)
		d->note = "some slow nodes or links do not stand out against this run's own noise: "
			  "named inconclusive, not blamed; measure again on a quiet cluster";
	else if (d->ambiguous_nodes)
		d->note = n == 2 ?
			"2 nodes: a slow pair cannot be split into a node or a link fault "
			"without a third, known-good node" :
			"some suspect nodes have no known-good partner (no node with a good "
			"link) to tell a node fault from a link fault";
	else if (d->collapsed)
		d->note = "the reference is below half the links' rate (ref_of_rate): the run was slowed "
			  "as a whole, so a fault within that is not seen and nothing flagged is no pass; "
			  "measure again on a quiet cluster";
	else if (n == 2 && !d->ref_expected)
		d->note = "2 nodes: the only link is its own reference, so nothing can be "
			  "flagged; give --pair-expect-gbps to judge it";
	rc = 0;
out:
	free(pl.p);
	free(ll.p);
	free(out);
	free(lout);
	free(lo);
	free(llo);
	free(c);
	return rc;
}
