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

/*
 * Formats bytes for people: in binary units when it is an exact multiple of
 * one ("25 MiB", "256 KiB", "1 GiB"), else from 10000 B in decimal units to
 * 6 digits ("4 MB", "67.84 kB", "1.07374 GB"), else in bytes ("1000 B"); a
 * fraction or a negative number as "%g B". Returns buf.
 */
char *size_human(double bytes, char *buf, size_t len);

#endif
