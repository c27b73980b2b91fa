#ifndef CCDIAG_COLL_H
#define CCDIAG_COLL_H

#include <stddef.h>
#include <stdint.h>

/* Element types and reduction operators every backend names the same way. */
enum cc_dtype { CC_FLOAT, CC_DOUBLE, CC_INT32, CC_NDTYPES };
enum cc_redop { CC_SUM, CC_PROD, CC_MIN, CC_MAX, CC_NOPS };

enum coll_id { COLL_ALL_REDUCE, COLL_ALL_GATHER, COLL_REDUCE_SCATTER, COLL_ALLTOALL,
	       COLL_BROADCAST };

/* Element counts of one operation, all per rank. */
struct coll_counts {
	size_t send;     /* elements in the send buffer */
	size_t recv;     /* elements in the receive buffer */
	size_t param;    /* the count passed to the library call */
	size_t bytes;    /* S of the bandwidth formulas (docs/formulas.md) */
};

/*
 * What a collective supplies (nccl-tests' struct testColl): its sizes, its
 * bus-bandwidth factor and how to fill and check its data. Sweeping, timing
 * and printing live once, in bench/sweep.c.
 */
struct coll {
	const char *name;
	enum coll_id id;
	int reduces;     /* takes a reduction operator */
	int rooted;      /* has a root rank */
	/* counts for a sweep size of bytes; counts->param is 0 when too small */
	void (*counts)(size_t bytes, size_t eltsize, int nranks, struct coll_counts *c);
	double (*bus_factor)(int nranks);
	/* fills this rank's send buffer with the test pattern */
	void (*fill)(void *send, const struct coll_counts *c, enum cc_dtype t,
		     enum cc_redop op, int rank, int nranks, int root);
	/* counts elements of recv that differ from what the pattern must give */
	size_t (*check)(const void *recv, const struct coll_counts *c, enum cc_dtype t,
			enum cc_redop op, int rank, int nranks, int root);
};

/* The only list of collectives, NULL-terminated, in the order they run by default. */
extern const struct coll *const colls[];
const struct coll *coll_find(const char *name);

/* Data types and operators: names, sizes, parsing. */
size_t dtype_size(enum cc_dtype t);
const char *dtype_name(enum cc_dtype t);
int dtype_parse(const char *s, enum cc_dtype *t);
const char *redop_name(enum cc_redop op);
int redop_parse(const char *s, enum cc_redop *op);

/*
 * The test pattern: the value of element i of rank r's input, chosen so that
 * every reduction of up to millions of ranks is exact in every type
 * (values 1..11; for prod, a single 2 per element).
 */
double pattern_value(enum cc_redop op, int rank, int nranks, size_t i);
/* The exact reduction over all ranks of element i of the pattern. */
double pattern_reduced(enum cc_redop op, int nranks, size_t i);

/* Element access in a typed buffer. */
void dtype_store(void *buf, enum cc_dtype t, size_t i, double v);
double dtype_load(const void *buf, enum cc_dtype t, size_t i);

/* Fills n elements starting at index first of buf with pattern values of rank r, offset base. */
void pattern_fill(void *buf, enum cc_dtype t, enum cc_redop op, int rank, int nranks,
		  size_t n, size_t base);

#endif
