#ifndef CCDIAG_RESULTS_H
#define CCDIAG_RESULTS_H

#include <jansson.h>

/*
 * The results stream: JSON Lines, one record per line, written and flushed
 * by rank 0 as each record is complete, so a run killed mid-way leaves every
 * finished record readable. Record types and fields: docs/results.md.
 * Thread-safe (the watchdog writes from its own thread).
 */
struct results;

/* Opens path for writing (truncates). Returns NULL and sets errno on failure. */
struct results *results_open(const char *path);

/*
 * Appends rec as one line with "type" set first, written through at once.
 * Takes the reference to rec. Returns 0, or -1 with errno set on an I/O error
 * (ENOSPC, EIO, ...): logged once as one line naming the file and errno, the
 * file cut back to its last complete record, and every later write refused.
 * The caller stops the run (run_record does: exit 3).
 */
int results_write(struct results *r, const char *type, json_t *rec);

/*
 * Writes the end record {status, elapsed_s, ...extra} once; later calls do
 * nothing. Takes the reference to extra (may be NULL). Returns 0 or -1.
 */
int results_end(struct results *r, const char *status, double elapsed_s, json_t *extra);

/* Closes the file (fsync first). NULL is fine. Returns -1 when any write failed. */
int results_close(struct results *r);

/* Encodes rec as one compact line (no newline), "type" first; caller frees. */
char *results_encode(const char *type, json_t *rec);

#endif
