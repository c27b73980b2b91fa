/*
 * netpair_uplink: blame at the switch (probes/netpair.h, docs/netpair.md).
 * With leaf switches for groups, a slow leaf uplink reads in the pair
 * diagnosis as "every node under the leaf is fine with its neighbours and
 * every link leaving the leaf is a link fault": the nodes are cleared by
 * their retests inside the leaf, the links crossing the uplink stay bad on
 * their own retests. Here those links are put on the uplink they share.
 * Pure: tests/unit/test_netpair.c drives it with matrices.
 */
#include "netpair.h"
#include "../core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* the link's one-way bandwidth, the slower direction, at its best measurement (GB/s) */
static double best_uni(const struct np_link *l)
{
	double a = fmin(l->m.bw_ab, l->m.bw_ba), b = l->retested ? fmin(l->rm.bw_ab, l->rm.bw_ba) : 0;

	return a > b ? a : b;
}

/* a link that says something about the switch: measured, no bad node at an end */
static int counts(const struct np_diag *d, const struct np_link *l, int a, int b)
{
	return l->measured && d->node[a].verdict != NP_BAD && d->node[b].verdict != NP_BAD;
}

int np_uplinks(struct np_diag *d, const int *group_of, int ngroups, struct np_uplink *up)
{
	int n = d->n, rc = -1, blamed = 0;
	/* per group: its inside and across values, in one array each, by offsets */
	int *nin = calloc((size_t)ngroups + 1, sizeof(int)), *nac = calloc((size_t)ngroups + 1, sizeof(int));
	int *oin = calloc((size_t)ngroups + 1, sizeof(int)), *oac = calloc((size_t)ngroups + 1, sizeof(int));
	unsigned char *cand = calloc((size_t)ngroups, 1), *okpeer = calloc((size_t)ngroups, 1);
	double *vin = NULL, *vac = NULL;

	if (!nin || !nac || !oin || !oac || !cand || !okpeer)
		goto out;
	memset(up, 0, (size_t)ngroups * sizeof(*up));
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++) {
			const struct np_link *l = np_diag_link(d, a, b);
			int ga = group_of[a], gb = group_of[b];

			if (!counts(d, l, a, b))
				continue;
			if (ga == gb) {
				nin[ga]++;
				up[ga].inside++;
				up[ga].slow_inside += l->verdict == NP_BAD;
			} else {
				nac[ga]++;
				nac[gb]++;
				up[ga].across++;
				up[gb].across++;
				up[ga].slow_across += l->verdict == NP_BAD;
				up[gb].slow_across += l->verdict == NP_BAD;
			}
		}
	for (int g = 0; g < ngroups; g++) {
		oin[g + 1] = oin[g] + nin[g];
		oac[g + 1] = oac[g] + nac[g];
		nin[g] = nac[g] = 0;
	}
	vin = malloc((size_t)(oin[ngroups] ? oin[ngroups] : 1) * sizeof(double));
	vac = malloc((size_t)(oac[ngroups] ? oac[ngroups] : 1) * sizeof(double));
	if (!vin || !vac)
		goto out;
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++) {
			const struct np_link *l = np_diag_link(d, a, b);
			int ga = group_of[a], gb = group_of[b];
			double v = best_uni(l);

			if (!counts(d, l, a, b))
				continue;
			if (ga == gb) {
				vin[oin[ga] + nin[ga]++] = v;
			} else {
				vac[oac[ga] + nac[ga]++] = v;
				vac[oac[gb] + nac[gb]++] = v;
			}
		}
	/* a candidate: everything across slow, nothing inside slow, one inside link at least */
	for (int g = 0; g < ngroups; g++) {
		struct np_uplink *u = &up[g];

		u->inside_GBps = nin[g] ? stats_median(vin + oin[g], (size_t)nin[g]) : 0;
		u->across_GBps = nac[g] ? stats_median(vac + oac[g], (size_t)nac[g]) : 0;
		u->inside_ratio = d->ref_uni > 0 ? u->inside_GBps / d->ref_uni : 0;
		u->across_ratio = d->ref_uni > 0 ? u->across_GBps / d->ref_uni : 0;
		cand[g] = u->across > 0 && u->slow_across == u->across && u->inside > 0 &&
			  !u->slow_inside;
	}
	/* told apart by a healthy peer: a group it crosses to that is no candidate */
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++) {
			const struct np_link *l = np_diag_link(d, a, b);
			int ga = group_of[a], gb = group_of[b];

			if (ga == gb || !counts(d, l, a, b))
				continue;
			if (cand[ga] && !cand[gb])
				okpeer[ga] = 1;
			if (cand[gb] && !cand[ga])
				okpeer[gb] = 1;
		}
	for (int g = 0; g < ngroups; g++) {
		if (!cand[g])
			continue;
		up[g].verdict = okpeer[g] ? NP_BAD : NP_AMBIGUOUS;
		d->bad_uplinks += okpeer[g];
		d->ambiguous_uplinks += !okpeer[g];
		blamed++;
	}
	/* the bad links that cross a blamed uplink are its, not faults of their own */
	for (int a = 0; blamed && a < n; a++)
		for (int b = a + 1; b < n; b++) {
			struct np_link *l = np_diag_link(d, a, b);
			int ga = group_of[a], gb = group_of[b];

			if (ga == gb || l->verdict != NP_BAD || (!cand[ga] && !cand[gb]))
				continue;
			l->verdict = NP_EXPLAINED;
			l->by = -1;
			l->uplink = (cand[ga] && (okpeer[ga] || !cand[gb] || !okpeer[gb]) ? ga : gb) + 1;
			d->bad_links--;
			d->explained_links++;
		}
	if (d->ambiguous_uplinks && !d->note)
		d->note = ngroups == 2 ?
			"2 groups: a slow path between them cannot be put on either leaf's uplink "
			"(or the spine) without a third group" :
			"every group's links across are slow: the spine, or every leaf's uplink";
	rc = blamed;
out:
	free(nin);
	free(nac);
	free(oin);
	free(oac);
	free(cand);
	free(okpeer);
	free(vin);
	free(vac);
	return rc;
}
