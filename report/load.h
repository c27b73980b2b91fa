#ifndef CCDIAG_LOAD_H
#define CCDIAG_LOAD_H

/* report/load.c: the streaming reader of results files (docs/results.md) */
#include <jansson.h>
#include <stddef.h>

struct rv;

/* the longest line a results file may hold: a header of 100,000 hosts fits */
#define RESULTS_LINE_MAX (16 << 20)

struct input_info {
	char *path;
	char *run_id, *start_utc;
	long records;
	char end[16];            /* complete, timeout, interrupted, missing */
	json_t *header;          /* the run record (owned) */
	int netpair;             /* netpair measurements seen: every pair of the header's hosts is due */
	int ib_pairs;            /* ib rail pair measurements seen: every rail of every pair of its hosts is due */
	char sha256[65];         /* of the file's bytes, hex; "" when it was not read to its end */
	double elapsed_last;     /* the last record's elapsed_s: the run's length from start_utc */
};

/* where the reader sends records */
struct results_sink {
	int (*record)(json_t *rec, long line, void *ctx);             /* run, skip, end, ...: read by jansson */
	int (*measurement)(const struct rv *r, long line, void *ctx); /* measurements; NULL: to record */
	void *ctx;
};

/*
 * Reads one results file line by line: checks the header (schema 1), then
 * sends every record, the header first, to the sink. Measurements are read
 * by the scanner of record.c, the rest (and whatever the scanner leaves) by
 * jansson. A sink function returns 0, or -1 to stop with a message it left
 * in err. Returns 0, or -1 with "path:line: what is wrong" in err.
 */
int results_read(const char *path, struct input_info *in, const struct results_sink *sink,
		 char *err, size_t len);
/* the same over a memory buffer (fuzzing) */
int results_read_mem(const char *buf, size_t size, const char *name, struct input_info *in,
		     const struct results_sink *sink, char *err, size_t len);
void input_info_free(struct input_info *in);
/*
 * Expands the command line's inputs: files as given, folders to their
 * *.jsonl files in name order. Returns the count, or -1 with a message.
 */
int results_expand(char **args, int nargs, char ***paths, char *err, size_t len);

#endif
