/*
 * report/htab.c: string -> index table for elements and hosts (open
 * addressing, linear probing, load under 1/2). A 1024-node run's matrix has
 * half a million links, looked up once per record: each slot keeps its key's
 * hash, so a probe past another key rarely reads that key, and the keys are
 * copied into large chunks rather than one allocation each.
 */
#include "htab.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK_BYTES (64 * 1024)

struct htab_chunk {
	struct htab_chunk *next;
	size_t used, cap;
	char data[];
};

static uint32_t hash_of(const char *s)
{
	uint64_t h = 1469598103934665603ULL;     /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (uint32_t)(h ^ (h >> 32));
}

static size_t slot(const struct htab *h, const char *key, uint32_t hv)
{
	size_t i = hv & (h->cap - 1);

	while (h->slots[i].key && (h->slots[i].hash != hv || strcmp(h->slots[i].key, key)))
		i = (i + 1) & (h->cap - 1);
	return i;
}

int htab_get(const struct htab *h, const char *key)
{
	size_t i;

	if (!h->cap)
		return -1;
	i = slot(h, key, hash_of(key));
	return h->slots[i].key ? h->slots[i].val : -1;
}

/* to cap slots (a power of two, above twice the keys) */
static int resize(struct htab *h, size_t cap)
{
	struct htab_slot *v = calloc(cap, sizeof(*v));

	if (!v)
		return -1;
	for (size_t i = 0; i < h->cap; i++) {
		size_t j;

		if (!h->slots[i].key)
			continue;
		/* the keys are distinct: the first free slot from their hash */
		for (j = h->slots[i].hash & (cap - 1); v[j].key; j = (j + 1) & (cap - 1))
			;
		v[j] = h->slots[i];
	}
	free(h->slots);
	h->slots = v;
	h->cap = cap;
	return 0;
}

static int grow(struct htab *h)
{
	return resize(h, h->cap ? h->cap * 2 : 64);
}

int htab_reserve(struct htab *h, size_t n)
{
	size_t cap = h->cap ? h->cap : 64;

	while (cap < 2 * n + 2)
		cap *= 2;
	return cap > h->cap ? resize(h, cap) : 0;
}

const char *htab_key(const struct htab *h, const char *key)
{
	if (!h->cap)
		return NULL;
	return h->slots[slot(h, key, hash_of(key))].key;
}

/* a copy of key in the table's chunks; NULL when out of memory */
static const char *copy_key(struct htab *h, const char *key)
{
	size_t n = strlen(key) + 1;
	struct htab_chunk *c = h->chunks;
	char *p;

	if (!c || c->cap - c->used < n) {
		size_t cap = n > CHUNK_BYTES ? n : CHUNK_BYTES;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->next = h->chunks;
		c->used = 0;
		c->cap = cap;
		h->chunks = c;
	}
	p = c->data + c->used;
	memcpy(p, key, n);
	c->used += n;
	return p;
}

/* the slot of key, entered with val when new; -1 when out of memory */
static long enter(struct htab *h, const char *key, int val)
{
	uint32_t hv = hash_of(key);
	size_t i;

	/* keep the load under 1/2 so probes stay short */
	if ((h->n + 1) * 2 > h->cap && grow(h))
		return -1;
	i = slot(h, key, hv);
	if (!h->slots[i].key) {
		h->slots[i].key = copy_key(h, key);
		if (!h->slots[i].key)
			return -1;
		h->slots[i].hash = hv;
		h->slots[i].val = val;
		h->n++;
	}
	return (long)i;
}

int htab_add(struct htab *h, const char *key, int val, const char **copy)
{
	long i = enter(h, key, val);

	if (i < 0)
		return -1;
	if (copy)
		*copy = h->slots[i].key;
	return h->slots[i].val;
}

int htab_put(struct htab *h, const char *key, int val)
{
	long i = enter(h, key, val);

	if (i < 0)
		return -1;
	h->slots[i].val = val;
	return 0;
}

void htab_free(struct htab *h)
{
	while (h->chunks) {
		struct htab_chunk *c = h->chunks;

		h->chunks = c->next;
		free(c);
	}
	free(h->slots);
	memset(h, 0, sizeof(*h));
}
