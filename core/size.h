#ifndef CCDIAG_SIZE_H
#define CCDIAG_SIZE_H

#include <stddef.h>

/*
 * Parses a byte count: digits with an optional binary suffix K, M, G, T
 * (powers of 1024, case-insensitive, optional trailing 'B' or 'iB').
 * Returns 0, or -1 for anything else (empty, sign, junk, overflow).
 */
int size_parse(const char *s, size_t *out);

/* Formats bytes as the shortest exact form ("64K", "1M", "1000"); returns buf. */
char *size_format(size_t bytes, char *buf, size_t len);

#endif
