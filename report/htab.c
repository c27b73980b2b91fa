/* report/htab.c: string -> index table for elements and hosts (open addressing). */
#include "htab.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;     /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static size_t slot(const struct htab *h, const char *key)
{
	size_t i = hash(key) & (h->cap - 1);

	while (h->keys[i] && strcmp(h->keys[i], key))
		i = (i + 1) & (h->cap - 1);
	return i;
}

int htab_get(const struct htab *h, const char *key)
{
	size_t i;

	if (!h->cap)
		return -1;
	i = slot(h, key);
	return h->keys[i] ? h->vals[i] : -1;
}

static int grow(struct htab *h)
{
	struct htab n = { .cap = h->cap ? h->cap * 2 : 64 };

	n.keys = calloc(n.cap, sizeof(*n.keys));
	n.vals = calloc(n.cap, sizeof(*n.vals));
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return -1;
	}
	for (size_t i = 0; i < h->cap; i++) {
		if (!h->keys[i])
			continue;
		size_t j = slot(&n, h->keys[i]);

		n.keys[j] = h->keys[i];
		n.vals[j] = h->vals[i];
	}
	n.n = h->n;
	free(h->keys);
	free(h->vals);
	*h = n;
	return 0;
}

const char *htab_key(const struct htab *h, const char *key)
{
	size_t i;

	if (!h->cap)
		return NULL;
	i = slot(h, key);
	return h->keys[i];
}

int htab_put(struct htab *h, const char *key, int val)
{
	size_t i;

	/* keep the load under 1/2 so probes stay short */
	if ((h->n + 1) * 2 > h->cap && grow(h))
		return -1;
	i = slot(h, key);
	if (!h->keys[i]) {
		h->keys[i] = strdup(key);
		if (!h->keys[i])
			return -1;
		h->n++;
	}
	h->vals[i] = val;
	return 0;
}

void htab_free(struct htab *h)
{
	for (size_t i = 0; i < h->cap; i++)
		free(h->keys[i]);
	free(h->keys);
	free(h->vals);
	memset(h, 0, sizeof(*h));
}
