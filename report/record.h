#ifndef CCDIAG_RECORD_H
#define CCDIAG_RECORD_H

/* report/record.c: a flat view of one measurement record, and its scanner */
#include <jansson.h>
#include <stddef.h>

#define RV_MAX_FIELDS 96
#define RV_TAB 256               /* the fields by key hash (a power of two, above 2 * RV_MAX_FIELDS) */
struct rv_field {
	const char *parent;      /* NULL: a field of the record; else the key of the object holding it */
	const char *key;
	unsigned hash;           /* of key */
	char type;               /* s string, i integer, r real, b boolean, z null, o object, a array */
	const char *str;         /* strings; numbers as written, converted by rv_num */
	double num;              /* numbers already converted (NaN: convert str), booleans */
};
struct rv {
	int n, overflow;
	unsigned char tab[RV_TAB];   /* open addressing on rv_field.hash: 1 + the field's index, 0 empty */
	struct rv_field f[RV_MAX_FIELDS];
};
/*
 * Scans one line (modified in place: strings are NUL-terminated there).
 * Returns 0, or -1 when the line is not plain JSON this scanner reads: then
 * jansson must read the (unmodified) line and decide.
 */
int rv_scan(char *line, size_t len, struct rv *r);
/* the same view of a record read by jansson; valid while rec lives */
int rv_from_json(const json_t *rec, struct rv *r);
/* a string field of the record, or NULL */
const char *rv_str(const struct rv *r, const char *key);
/* a string field key of the record's object parent, or NULL */
const char *rv_str_in(const struct rv *r, const char *parent, const char *key);
/* a number: field key of the record (parent NULL) or of its object parent; 0 or -1 */
int rv_num(const struct rv *r, const char *parent, const char *key, double *v);
int rv_has(const struct rv *r, const char *key);
/* a boolean field of the record is true */
int rv_true(const struct rv *r, const char *key);
/*
 * Numbers the record cannot hold (docs/results.md): a negative count, size,
 * time or rate, a magnitude above 1e18 (nodes, ranks above 1e7, a cv above
 * 1e6). 0, or -1 with what is wrong in why.
 */
int rv_check(const struct rv *r, char *why, size_t len);

#endif
