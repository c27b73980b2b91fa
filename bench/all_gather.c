#include "coll.h"

/* The sweep size is the gathered buffer, as in nccl-tests: each rank sends 1/n of it. */
static void all_gather_counts(size_t bytes, size_t eltsize, int nranks, struct coll_counts *c)
{
	c->param = c->send = bytes / eltsize / (size_t)nranks;
	c->recv = c->send * (size_t)nranks;
	c->bytes = c->recv * eltsize;
}

static double all_gather_factor(int nranks)
{
	return (double)(nranks - 1) / nranks;
}

static void all_gather_fill(void *send, const struct coll_counts *c, enum cc_dtype t,
			    enum cc_redop op, int rank, int nranks, int root)
{
	(void)root;
	pattern_fill(send, t, op, rank, nranks, c->send, (size_t)rank * c->send);
}

static size_t all_gather_check(const void *recv, const struct coll_counts *c, enum cc_dtype t,
			       enum cc_redop op, int rank, int nranks, int root)
{
	size_t wrong = 0;

	(void)rank;
	(void)root;
	for (size_t j = 0; j < c->recv; j++)
		wrong += dtype_load(recv, t, j) !=
			 pattern_value(op, (int)(j / c->send), nranks, j);
	return wrong;
}

const struct coll coll_all_gather = {
	.name = "all_gather",
	.id = COLL_ALL_GATHER,
	.counts = all_gather_counts,
	.bus_factor = all_gather_factor,
	.fill = all_gather_fill,
	.check = all_gather_check,
};
