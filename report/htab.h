#ifndef CCDIAG_HTAB_H
#define CCDIAG_HTAB_H

/* report/htab.c: a small string -> index hash table */
#include <stddef.h>
#include <stdint.h>

struct htab_chunk;
struct htab_slot {
	const char *key;          /* a copy in the table's own chunks; NULL = empty slot */
	uint32_t hash;            /* of key: most probes end on it, not in strcmp */
	int val;
};
struct htab {
	struct htab_slot *slots;
	size_t cap, n;
	struct htab_chunk *chunks; /* where the copies live, freed together */
};
/* index stored under key, or -1 */
int htab_get(const struct htab *h, const char *key);
/* stores key -> val (replacing); returns 0, or -1 when out of memory */
int htab_put(struct htab *h, const char *key, int val);
/*
 * The value under key when there is one (*copy its table's key); else
 * stores key -> val and returns val (*copy the new copy). -1 when out of
 * memory. One lookup where get, put and key would make three.
 */
int htab_add(struct htab *h, const char *key, int val, const char **copy);
/* room for n keys without growing (a table about to take many); 0, or -1 when out of memory */
int htab_reserve(struct htab *h, size_t n);
/* the table's own copy of key (stable until htab_free), or NULL */
const char *htab_key(const struct htab *h, const char *key);
void htab_free(struct htab *h);

#endif
