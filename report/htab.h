#ifndef CCDIAG_HTAB_H
#define CCDIAG_HTAB_H

/* report/htab.c: a small string -> index hash table */
#include <stddef.h>
#include <stdint.h>

struct htab_chunk;
struct htab {
	const char **keys;        /* copies in the table's own chunks; NULL = empty slot */
	int *vals;
	uint32_t *hash;           /* of each key: most probes end on it, not in strcmp */
	size_t cap, n;
	struct htab_chunk *chunks; /* where the copies live, freed together */
};
/* index stored under key, or -1 */
int htab_get(const struct htab *h, const char *key);
/* stores key -> val (replacing); returns 0, or -1 when out of memory */
int htab_put(struct htab *h, const char *key, int val);
/* the table's own copy of key (stable until htab_free), or NULL */
const char *htab_key(const struct htab *h, const char *key);
void htab_free(struct htab *h);

#endif
