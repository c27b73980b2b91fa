#ifndef CCDIAG_HTAB_H
#define CCDIAG_HTAB_H

/* report/htab.c: a small string -> index hash table */
#include <stddef.h>

struct htab {
	char **keys;      /* owned copies; NULL = empty slot */
	int *vals;
	size_t cap, n;
};
/* index stored under key, or -1 */
int htab_get(const struct htab *h, const char *key);
/* stores key -> val (replacing); returns 0, or -1 when out of memory */
int htab_put(struct htab *h, const char *key, int val);
/* the table's own copy of key (stable until htab_free), or NULL */
const char *htab_key(const struct htab *h, const char *key);
void htab_free(struct htab *h);

#endif
