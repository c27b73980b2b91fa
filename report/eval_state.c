/*
 * report/eval_state.c: the tables of an evaluation (struct eval) that eval.c
 * fills from the records and model*.c from what they derive: the cluster's
 * hosts, each criterion's elements, and the points kept of each element.
 */
#include "eval_state.h"
#include "htab.h"
#include "profile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int eval_host(struct eval *e, const char *name)
{
	int i = htab_get(&e->hosts, name);

	if (i >= 0)
		return i;
	if (e->nhosts == e->caphosts) {
		int cap = e->caphosts ? e->caphosts * 2 : 16;
		char **v = realloc(e->host_names, cap * sizeof(*v));

		if (!v)
			return -1;
		e->host_names = v;
		e->caphosts = cap;
	}
	e->host_names[e->nhosts] = strdup(name);
	if (!e->host_names[e->nhosts] || htab_put(&e->hosts, name, e->nhosts))
		return -1;
	return e->nhosts++;
}

int eval_worse(const struct criterion *c, double a, double b)
{
	return c->ge ? a < b : a > b;
}

struct elem *eval_elem(struct crit_state *s, const char *name, const char *host)
{
	const char *copy;
	struct elem *el;
	int i, h;

	/* the records of one element mostly come together: no table lookup for them */
	if (s->nel && s->last >= 0 && s->last < s->nel && !strcmp(s->el[s->last].name, name))
		return &s->el[s->last];
	if (s->nel == s->capel) {
		int cap = s->capel ? s->capel * 2 : 16;
		struct elem *v = realloc(s->el, cap * sizeof(*v));

		if (!v)
			return NULL;
		s->el = v;
		s->capel = cap;
	}
	/* one lookup: the element's index, or the next one entered */
	i = htab_add(&s->idx, name, s->nel, &copy);
	if (i < 0)
		return NULL;
	s->last = i;
	if (i < s->nel)
		return &s->el[i];
	/* names live once: in the element table, hosts in the eval's host table */
	el = &s->el[s->nel];
	memset(el, 0, sizeof(*el));
	h = host ? eval_host(s->e, host) : -1;
	if (host && h < 0)
		return NULL;
	el->name = copy;
	el->host = h >= 0 ? s->e->host_names[h] : "";
	s->nel++;
	return el;
}

/*
 * Keeps the point of a record: one per size (any size counts as one at
 * SIZE_ANY) and direction. Repeats of the same size and direction keep the
 * worst, or with "repeat = best" the best (a retest that clears a moment of
 * noise); directions are combined later, always by the worst.
 */
int eval_add_point(const struct criterion *c, struct elem *el, const struct pt *p)
{
	int i, small = -1;

	if (!el->cap) {
		el->cap = (c->size == SIZE_PLATEAU ? PLATEAU_SIZES : 1) * (c->repeat_best ? 2 : 1);
		el->pt = malloc(el->cap * sizeof(*el->pt));
		if (!el->pt) {
			el->cap = 0;
			return -1;
		}
	}
	for (i = 0; i < el->n; i++)
		if (el->pt[i].bytes == p->bytes && el->pt[i].dir == p->dir) {
			if (c->repeat_best ? eval_worse(c, el->pt[i].judged, p->judged)
					   : eval_worse(c, p->judged, el->pt[i].judged))
				el->pt[i] = *p;
			return 0;
		}
	if (el->n == el->cap) {
		/* the plateau needs only the largest sizes: the smallest one goes, all its directions */
		for (i = 0; i < el->n; i++)
			if (small < 0 || el->pt[i].bytes < el->pt[small].bytes)
				small = i;
		if (p->bytes < el->pt[small].bytes)
			return 0;
		long long drop = el->pt[small].bytes;

		for (i = 0; i < el->n;)
			if (el->pt[i].bytes == drop)
				el->pt[i] = el->pt[--el->n];
			else
				i++;
	}
	el->pt[el->n++] = *p;
	return 0;
}

/* a value the model derived (model.c): one element, judged like a record's */
int eval_add_value(struct crit_state *s, const char *element, double value)
{
	struct pt p = { .judged = value, .value = value };
	struct elem *el = eval_elem(s, element, NULL);

	if (!el)
		return -1;
	s->records++;
	el->records++;
	if (s->c->derived == DERIVED_SCALING && value > 100 * SCALING_EFF_MAX) {
		el->imp_value = value;
		el->imp_limit = 100 * SCALING_EFF_MAX;
	}
	return eval_add_point(s->c, el, &p);
}

/* a derived value with its host; not finite: measured without a value (soak.c) */
int eval_add_element(struct crit_state *s, const char *element, const char *host, double value)
{
	struct pt p = { .judged = value, .value = value };
	struct elem *el = eval_elem(s, element, host);

	if (!el)
		return -1;
	if (!isfinite(value)) {
		s->nometric++;
		el->nometric++;
		return 0;
	}
	s->records++;
	el->records++;
	return eval_add_point(s->c, el, &p);
}
