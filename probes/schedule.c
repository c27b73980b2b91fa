#include "schedule.h"

#include <stdlib.h>
#include <string.h>

/*
 * Circle method. With m = n rounded up to even, the m-1 "moving" positions
 * 0..m-2 sit on a circle and position m-1 in the centre. In round r the
 * node at r plays the centre and every other node x plays the node
 * opposite it across the axis through r, which is (2r - x) mod (m-1): the
 * pairs {r+i, r-i}. For odd n the centre is a phantom (m-1 == n), so the
 * node at r has the bye. Each pair {x, y} (x, y < m-1) meets in the single
 * round with 2r = x + y mod (m-1), which exists and is unique because m-1
 * is odd; the centre meets every x once, in round x.
 */
int schedule_rounds(int n)
{
	if (n < 2)
		return 0;
	return n % 2 ? n : n - 1;
}

int schedule_pair(int n, int round, int node)
{
	int k = n % 2 ? n : n - 1;   /* positions on the circle */
	int p;

	if (n < 2 || round < 0 || round >= k || node < 0 || node >= n)
		return -1;
	if (node == k)                /* the centre (even n only) */
		return round;
	if (node == round)
		return n % 2 ? -1 : k;
	p = (2 * round - node) % k;
	return p < 0 ? p + k : p;
}

int schedule_round(int n, int round, int *partner)
{
	int pairs = 0;

	if (n < 2 || round < 0 || round >= schedule_rounds(n))
		return -1;
	for (int x = 0; x < n; x++) {
		partner[x] = schedule_pair(n, round, x);
		if (partner[x] > x)
			pairs++;
	}
	return pairs;
}

int schedule_pack(int n, const int *pairs, int npairs, int *round_of)
{
	/* busy[r * n + x]: node x already plays in round r; at most npairs rounds */
	unsigned char *busy;
	int rounds = 0;

	if (n < 1 || npairs < 0)
		return -1;
	if (npairs == 0)
		return 0;
	busy = calloc((size_t)npairs * (size_t)n, 1);
	if (!busy)
		return -1;
	for (int i = 0; i < npairs; i++) {
		int a = pairs[2 * i], b = pairs[2 * i + 1], r;

		if (a < 0 || a >= n || b < 0 || b >= n || a == b) {
			free(busy);
			return -1;
		}
		for (r = 0; busy[(size_t)r * n + a] || busy[(size_t)r * n + b]; r++)
			;
		busy[(size_t)r * n + a] = busy[(size_t)r * n + b] = 1;
		round_of[i] = r;
		if (r + 1 > rounds)
			rounds = r + 1;
	}
	free(busy);
	return rounds;
}

int schedule_cap(int *round_of, int npairs, int nrounds, int k)
{
	int *count, *first, total = 0;

	if (npairs < 0 || nrounds < 0)
		return -1;
	if (k < 1)
		return nrounds;
	count = calloc((size_t)nrounds + 1, sizeof(int));
	first = calloc((size_t)nrounds + 1, sizeof(int));
	if (!count || !first) {
		free(count);
		free(first);
		return -1;
	}
	for (int i = 0; i < npairs; i++) {
		if (round_of[i] < 0 || round_of[i] >= nrounds) {
			free(count);
			free(first);
			return -1;
		}
		count[round_of[i]]++;
	}
	/* first[r]: the first new round of old round r */
	for (int r = 0; r < nrounds; r++) {
		first[r] = total;
		total += (count[r] + k - 1) / k;
		count[r] = 0;
	}
	for (int i = 0; i < npairs; i++) {
		int r = round_of[i];

		round_of[i] = first[r] + count[r]++ / k;
	}
	free(count);
	free(first);
	return total;
}

/* appends pair (a, b) in round r; -1 when memory runs out */
static int push_pair(int **pairs, int **round_of, int *np, int *cap, int a, int b, int r)
{
	if (*np == *cap) {
		int c = *cap ? 2 * *cap : 256;
		int *p = realloc(*pairs, (size_t)c * 2 * sizeof(int));
		int *q;

		if (!p)
			return -1;
		*pairs = p;
		q = realloc(*round_of, (size_t)c * sizeof(int));
		if (!q)
			return -1;
		*round_of = q;
		*cap = c;
	}
	(*pairs)[2 * *np] = a;
	(*pairs)[2 * *np + 1] = b;
	(*round_of)[*np] = r;
	(*np)++;
	return 0;
}

int schedule_grouped(int n, const int *group_of, int ngroups, int **pairs, int **round_of,
		     int *npairs, int *within)
{
	int *count = NULL, *start = NULL, *member = NULL, *at = NULL, *partner = NULL;
	unsigned char *crossed = NULL;
	int np = 0, cap = 0, rounds = 0, gmax = 0, rc = -1;

	*pairs = *round_of = NULL;
	*npairs = 0;
	*within = 0;
	if (n < 1 || ngroups < 1)
		return -1;
	count = calloc((size_t)ngroups, sizeof(int));
	start = calloc((size_t)ngroups + 1, sizeof(int));
	at = calloc((size_t)ngroups, sizeof(int));
	member = malloc((size_t)n * sizeof(int));
	partner = malloc((size_t)(n > ngroups ? n : ngroups) * sizeof(int));
	crossed = calloc((size_t)n, 1);
	if (!count || !start || !at || !member || !partner || !crossed)
		goto out;
	for (int x = 0; x < n; x++) {
		if (group_of[x] < 0 || group_of[x] >= ngroups)
			goto out;
		count[group_of[x]]++;
	}
	for (int g = 0; g < ngroups; g++) {
		start[g + 1] = start[g] + count[g];
		if (count[g] > gmax)
			gmax = count[g];
	}
	for (int x = 0; x < n; x++)
		member[start[group_of[x]] + at[group_of[x]]++] = x;
	/* inside the groups: round r of every group's own tournament, at once */
	*within = schedule_rounds(gmax);
	for (int r = 0; r < *within; r++)
		for (int g = 0; g < ngroups; g++) {
			int k = count[g];

			if (r >= schedule_rounds(k))
				continue;
			schedule_round(k, r, partner);
			for (int i = 0; i < k; i++)
				if (partner[i] > i && push_pair(pairs, round_of, &np, &cap,
					member[start[g] + i], member[start[g] + partner[i]], r))
					goto out;
		}
	rounds = *within;
	/* across: the groups' own tournament, node i of one with node i + r of the other */
	if (ngroups >= 2) {
		int grounds = schedule_rounds(ngroups), first_extra = np;

		for (int r = 0; r < grounds; r++) {
			schedule_round(ngroups, r, partner);
			for (int a = 0; a < ngroups; a++) {
				int b = partner[a], k;

				if (b < a)
					continue;   /* each meeting once; -1: a bye */
				k = count[a] < count[b] ? count[a] : count[b];
				for (int i = 0; i < k; i++) {
					int x = member[start[a] + i];
					int y = member[start[b] + (i + r) % count[b]];

					crossed[x] = crossed[y] = 1;
					if (push_pair(pairs, round_of, &np, &cap, x, y, rounds + r))
						goto out;
				}
			}
		}
		rounds += grounds;
		/* nodes that never crossed: one pair each with a node of another group */
		first_extra = np;
		for (int x = 0; x < n; x++) {
			int g = group_of[x], h = (g + 1) % ngroups;

			if (crossed[x])
				continue;
			/* the other group's members in turn, so the extras spread */
			if (push_pair(pairs, round_of, &np, &cap, x,
				      member[start[h] + x % count[h]], 0))
				goto out;
			crossed[x] = 1;
		}
		if (np > first_extra) {
			int extra = schedule_pack(n, *pairs + 2 * first_extra, np - first_extra,
						  *round_of + first_extra);

			if (extra < 0)
				goto out;
			for (int i = first_extra; i < np; i++)
				(*round_of)[i] += rounds;
			rounds += extra;
		}
	}
	*npairs = np;
	rc = rounds;
out:
	if (rc < 0) {
		free(*pairs);
		free(*round_of);
		*pairs = *round_of = NULL;
	}
	free(count);
	free(start);
	free(at);
	free(member);
	free(partner);
	free(crossed);
	return rc;
}

int schedule_use_grouped(int mode, int n, int ngroups, const char **why)
{
	const char *w;
	int g;

	if (mode == 1) {
		g = 0;
		w = "--pair-schedule all-pairs";
	} else if (mode == 2) {
		g = 1;
		w = "--pair-schedule grouped";
	} else if (ngroups >= 2) {
		g = 1;
		w = "auto: a topology of 2 groups or more";
	} else if (n > SCHEDULE_ALL_PAIRS_MAX) {
		g = 1;
		w = "auto: more than 128 nodes";
	} else {
		g = 0;
		w = ngroups == 1 ? "auto: the topology puts every node in one group" :
				   "auto: 128 nodes or fewer and no topology";
	}
	if (why)
		*why = w;
	return g;
}

int schedule_all_pairs(int n, int **pairs_out, int **round_out)
{
	int np = n * (n - 1) / 2, k = 0, nrounds = schedule_rounds(n);
	int *pairs, *round_of;

	*pairs_out = *round_out = NULL;
	if (n < 2)
		return -1;
	pairs = malloc((size_t)np * 2 * sizeof(int));
	round_of = malloc((size_t)np * sizeof(int));
	if (!pairs || !round_of) {
		free(pairs);
		free(round_of);
		return -1;
	}
	for (int r = 0; r < nrounds; r++)
		for (int x = 0; x < n; x++) {
			int y = schedule_pair(n, r, x);

			if (y <= x)
				continue;
			pairs[2 * k] = (r + x) % 2 ? y : x;
			pairs[2 * k + 1] = (r + x) % 2 ? x : y;
			round_of[k] = r;
			k++;
		}
	*pairs_out = pairs;
	*round_out = round_of;
	return nrounds;
}
