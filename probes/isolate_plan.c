#include "isolate_plan.h"

#include <stdlib.h>
#include <string.h>

/*
 * A set of nodes still to decide. positive: a test (or the inference "its
 * other half passed") says it holds a bad node; else it is to be tested whole.
 */
struct iso_set {
	int *v;
	int n;
	int positive;
	int live;
	int group;      /* the group its nodes came from (for the confirmation's partner) */
	int half;       /* while a split is out: the size of the half under test */
	int partner;    /* a singleton that failed its first pair test: that partner, else -1 */
};

const char *iso_kind_name(int kind)
{
	static const char *const names[] = { "group", "cross", "split", "rest", "confirm",
					     "uplink-pair", "uplink-confirm" };

	return kind >= 0 && kind <= ISO_UCONFIRM ? names[kind] : "?";
}

void iso_free(struct iso_plan *p)
{
	for (int i = 0; i < p->nsets; i++)
		free(p->sets[i].v);
	free(p->sets);
	free(p->group);
	free(p->state);
	free(p->used);
	free(p->links);
	free(p->ustate);
	free(p->ureps);
	free(p->cur.tests);
	free(p->cur.nodes);
	memset(p, 0, sizeof(*p));
}

/* a new set of n nodes (copied); its index, or -1 */
static int set_add(struct iso_plan *p, const int *v, int n, int positive, int group)
{
	struct iso_set *s;

	if (p->nsets == p->capsets) {
		int cap = p->capsets ? 2 * p->capsets : 64;
		struct iso_set *ns = realloc(p->sets, (size_t)cap * sizeof(*ns));

		if (!ns)
			return -1;
		p->sets = ns;
		p->capsets = cap;
	}
	s = &p->sets[p->nsets];
	s->v = malloc((size_t)(n ? n : 1) * sizeof(int));
	if (!s->v)
		return -1;
	memcpy(s->v, v, (size_t)n * sizeof(int));
	s->n = n;
	s->positive = positive;
	s->live = 1;
	s->group = group;
	s->half = 0;
	s->partner = -1;
	return p->nsets++;
}

int iso_init(struct iso_plan *p, int n, const int *group_of, int ngroups)
{
	int *count = NULL, *members = NULL, *at = NULL, rc = -1;

	memset(p, 0, sizeof(*p));
	if (n < 1 || ngroups < 1 || ngroups > n)
		return -1;
	p->n = n;
	p->ngroups = ngroups;
	p->cross = -1;
	p->group = malloc((size_t)n * sizeof(int));
	p->state = calloc((size_t)n, 1);
	p->used = calloc((size_t)n, 1);
	p->links = malloc((size_t)n * 2 * sizeof(int));
	p->ustate = calloc((size_t)ngroups, 1);
	p->ureps = malloc((size_t)ngroups * sizeof(int));
	p->cur.tests = malloc((size_t)n * sizeof(struct iso_test));
	p->cur.nodes = malloc((size_t)n * sizeof(int));
	count = calloc((size_t)ngroups, sizeof(int));
	at = calloc((size_t)ngroups, sizeof(int));
	members = malloc((size_t)n * sizeof(int));
	if (!p->group || !p->state || !p->used || !p->links || !p->ustate || !p->ureps || !p->cur.tests || !p->cur.nodes || !count ||
	    !at || !members)
		goto out;
	for (int g = 0; g < ngroups; g++)
		p->ureps[g] = -1;
	for (int i = 0; i < n; i++) {
		if (group_of[i] < 0 || group_of[i] >= ngroups)
			goto out;
		p->group[i] = group_of[i];
		count[group_of[i]]++;
	}
	/* members grouped, each group's nodes in node order */
	for (int g = 1; g < ngroups; g++)
		at[g] = at[g - 1] + count[g - 1];
	for (int i = 0; i < n; i++)
		members[at[group_of[i]]++] = i;
	for (int g = 0, first = 0; g < ngroups; first += count[g], g++) {
		if (!count[g] || set_add(p, members + first, count[g], 0, g) < 0)
			goto out;
		if (count[g] > p->size)
			p->size = count[g];
	}
	rc = 0;
out:
	free(count);
	free(at);
	free(members);
	if (rc)
		iso_free(p);
	return rc;
}

/* appends a test of real nodes v[0..k) to the round; returns it */
static struct iso_test *test_add(struct iso_plan *p, int kind, int set, const int *v, int k)
{
	struct iso_round *r = &p->cur;
	struct iso_test *t = &r->tests[r->ntests++];

	t->kind = kind;
	t->set = set;
	t->first = r->nnodes;
	t->count = t->real = k;
	t->fail = 0;
	for (int i = 0; i < k; i++) {
		r->nodes[r->nnodes++] = v[i];
		p->used[v[i]] = 1;
	}
	return t;
}

/*
 * Pads the test (the last one added) with up to want known-good nodes not
 * yet in the round, those of group 'prefer' first (-1: none preferred).
 * Returns how many it added.
 */
static int pad(struct iso_plan *p, struct iso_test *t, int want, int prefer, int exclude)
{
	int got = 0;

	for (int pass = prefer >= 0 ? 0 : 1; pass < 2 && got < want; pass++)
		for (int x = 0; x < p->n && got < want; x++) {
			if (p->state[x] != ISO_GOOD || p->used[x] || x == exclude ||
			    (pass == 0 && p->group[x] != prefer))
				continue;
			p->cur.nodes[p->cur.nnodes++] = x;
			p->used[x] = 1;
			got++;
		}
	t->count += got;
	return got;
}

int iso_next(struct iso_plan *p, struct iso_round *r)
{
	int good_groups = 0, any = 0;

	if (p->awaiting)
		return -1;
	p->cur.ntests = p->cur.nnodes = 0;
	memset(p->used, 0, (size_t)p->n);
	for (int i = 0; i < p->nsets; i++)
		any |= p->sets[i].live;
	/* round 2: the cross-group test, alone (its representatives' links are what it asks about) */
	if (p->rounds == 1 && p->cross < 0) {
		int *reps = malloc((size_t)p->ngroups * sizeof(int));
		unsigned char *seen = calloc((size_t)p->ngroups, 1);

		if (!reps || !seen) {
			free(reps);
			free(seen);
			return -1;
		}
		for (int x = 0; x < p->n; x++) {
			int g = p->group[x];

			if (seen[g])
				continue;
			seen[g] = 1;
			/* a group passed when its first node is good: round 1 decided groups whole */
			if (p->state[x] == ISO_GOOD)
				reps[good_groups++] = p->ureps[g] = x;
		}
		if (good_groups >= 2)
			test_add(p, ISO_CROSS, -1, reps, good_groups);
		free(reps);
		free(seen);
		if (good_groups < 2)
			p->cross = 0;   /* nothing to cross: no fault between groups to find */
	}
	/* the uplink's search, first in the round: its representatives are taken before padding */
	if (p->uphase == 1) {
		int prev = -1;

		for (int g = 0; g < p->ngroups; g++) {
			if (p->ureps[g] < 0)
				continue;
			if (prev < 0) {
				prev = g;
				continue;
			}
			{
				int v[2] = { p->ureps[prev], p->ureps[g] };

				test_add(p, ISO_UPAIR, prev, v, 2);
			}
			prev = -1;
		}
		if (prev >= 0)
			p->ustate[prev] = ISO_UP_CANDIDATE;   /* the odd one: tested with an ok one next */
	} else if (p->uphase == 2) {
		int ok = 0, cands = 0;

		for (int g = 0; g < p->ngroups; g++) {
			ok += p->ustate[g] == ISO_UP_OK;
			cands += p->ustate[g] == ISO_UP_CANDIDATE;
		}
		for (int g = 0; g < p->ngroups && ok; g++) {
			if (p->ustate[g] != ISO_UP_CANDIDATE)
				continue;
			for (int h = 0; h < p->ngroups; h++)
				if (p->ustate[h] == ISO_UP_OK && !p->used[p->ureps[h]]) {
					int v[2] = { p->ureps[g], p->ureps[h] };

					test_add(p, ISO_UCONFIRM, g, v, 2);
					break;
				}
		}
		if (!ok && cands >= 3 && p->urepaired < 2) {
			/*
			 * every pair failed, with three candidates or more: one bad uplink
			 * fails every pair it is in and no other, so pair them another way,
			 * twice at most, the list rotated by one each time (the rest sits
			 * out): a pair that passes is two ok groups to tell the others
			 * apart with. Three leaves with leaf1's uplink slow: 0-1 fails (2
			 * sits out), 1-2 fails, 2-0 passes; then 1 with 0: bad.
			 */
			int *c = malloc((size_t)cands * sizeof(int)), k = 0;

			if (!c)
				return -1;
			p->urepaired++;
			for (int g = 0; g < p->ngroups; g++)
				if (p->ustate[g] == ISO_UP_CANDIDATE)
					c[k++] = g;
			for (int i = 0; i + 1 < cands; i += 2) {
				int a = c[(i + p->urepaired) % cands], b = c[(i + 1 + p->urepaired) % cands];
				int v[2] = { p->ureps[a], p->ureps[b] };

				test_add(p, ISO_UPAIR, a, v, 2);
			}
			free(c);
		} else if (!ok) {
			/* two groups, or every pairing failed: nothing to tell the candidates apart */
			for (int g = 0; g < p->ngroups; g++)
				if (p->ustate[g] == ISO_UP_CANDIDATE)
					p->ustate[g] = ISO_UP_AMBIGUOUS;
			p->uphase = 0;
		} else if (!cands) {
			p->uphase = 0;
		}
	}
	if (!p->cur.ntests || p->uphase) {
		if (!any && !p->cur.ntests)
			return 0;
		for (int i = 0; any && i < p->nsets; i++) {
			struct iso_set *s = &p->sets[i];
			struct iso_test *t;
			int padding = p->rounds > 0 && p->cross != 1;

			if (!s->live)
				continue;
			if (!s->positive) {
				t = test_add(p, p->rounds ? ISO_REST : ISO_GROUP, i, s->v, s->n);
				if (padding && t->count < p->size && pad(p, t, p->size - t->count, -1, -1) <
				    p->size - t->real)
					p->short_pad++;
			} else if (s->n == 1) {
				/*
				 * the first partner under the same leaf (a node fault, not
				 * its uplink's); after a failure a second, other partner:
				 * the first may share a bad link with it and no bad node
				 */
				t = test_add(p, ISO_CONFIRM, i, s->v, 1);
				if (!pad(p, t, 1, s->group, s->partner))
					p->short_pad++;
			} else {
				s->half = s->n / 2;
				t = test_add(p, ISO_SPLIT, i, s->v, s->half);
				if (padding && pad(p, t, p->size - t->count, -1, -1) < p->size - t->real)
					p->short_pad++;
			}
		}
	}
	p->rounds++;
	p->tests += p->cur.ntests;
	p->cur.index = p->rounds;
	p->awaiting = 1;
	*r = p->cur;
	return r->ntests;
}

static void mark(struct iso_plan *p, const int *v, int n, int state)
{
	for (int i = 0; i < n; i++)
		p->state[v[i]] = (unsigned char)state;
}

int iso_result(struct iso_plan *p, const struct iso_round *r)
{
	if (!p->awaiting || r->ntests != p->cur.ntests)
		return -1;
	p->awaiting = 0;
	for (int i = 0; i < r->ntests; i++) {
		const struct iso_test *t = &r->tests[i];
		struct iso_set *s = t->set >= 0 ? &p->sets[t->set] : NULL;

		switch (t->kind) {
		case ISO_CROSS:
			p->cross = !!t->fail;
			p->uphase = t->fail ? 1 : 0;
			break;
		case ISO_UPAIR: {
			int a = t->set, b = p->group[r->nodes[t->first + 1]];

			p->ustate[a] = p->ustate[b] = t->fail ? ISO_UP_CANDIDATE : ISO_UP_OK;
			p->uphase = 2;
			break;
		}
		case ISO_UCONFIRM:
			p->ustate[t->set] = t->fail ? ISO_UP_BAD : ISO_UP_OK;
			break;
		case ISO_GROUP:
		case ISO_REST:
			if (t->fail) {
				s->positive = 1;
			} else {
				mark(p, s->v, s->n, ISO_GOOD);
				s->live = 0;
			}
			break;
		case ISO_CONFIRM: {
			int partner = t->count > 1 ? r->nodes[t->first + 1] : -1;

			if (t->fail && s->partner < 0 && partner >= 0) {
				s->partner = partner;      /* once more, with another partner */
				break;
			}
			if (!t->fail && s->partner >= 0 && p->nlinks < p->n) {
				/* failed with one good node, passed with another: their link */
				p->links[2 * p->nlinks] = s->v[0];
				p->links[2 * p->nlinks + 1] = s->partner;
				p->nlinks++;
			}
			mark(p, s->v, 1, t->fail ? ISO_BAD : ISO_CLEARED);
			p->unlocated += !t->fail;
			s->live = 0;
			break;
		}
		case ISO_SPLIT: {
			int h = s->half;

			if (!t->fail) {
				/* the half passed: the other holds the bad node (OR-model) */
				mark(p, s->v, h, ISO_GOOD);
				memmove(s->v, s->v + h, (size_t)(s->n - h) * sizeof(int));
				s->n -= h;
			} else {
				/* the half failed: split on; the other half may hold a second one */
				int j = set_add(p, p->sets[t->set].v + h, p->sets[t->set].n - h, 0,
						p->sets[t->set].group);

				if (j < 0)
					return -1;
				s = &p->sets[t->set];   /* set_add may have moved the array */
				s->n = h;
			}
			break;
		}
		default:
			return -1;
		}
	}
	/* a node still in a live set that a test cleared cannot happen: sets are disjoint */
	return 0;
}

int iso_run(struct iso_plan *p, int (*oracle)(void *ctx, struct iso_round *r), void *ctx)
{
	struct iso_round r;
	int k;

	while ((k = iso_next(p, &r)) > 0)
		if (oracle(ctx, &r) || iso_result(p, &r))
			return -1;
	return k < 0 ? -1 : p->rounds;
}

int iso_bad_count(const struct iso_plan *p)
{
	int k = 0;

	for (int i = 0; i < p->n; i++)
		k += p->state[i] == ISO_BAD;
	return k;
}

int iso_set_partner(const struct iso_plan *p, int set)
{
	return set >= 0 && set < p->nsets ? p->sets[set].partner : -1;
}
