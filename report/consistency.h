#ifndef CCDIAG_CONSISTENCY_H
#define CCDIAG_CONSISTENCY_H

/* report/consistency.c: what must agree across hosts (versions, settings) */
#include <jansson.h>

struct htab;

/* notes that host has value for key (once per key, value and host: seen remembers) */
void consistency_note(json_t *versions, struct htab *seen, const char *key, const char *value,
		      const char *host);
/* [{key, values: [{value, hosts}]}] for the keys whose hosts disagree */
json_t *consistency_diff(json_t *versions);

#endif
