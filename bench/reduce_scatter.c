#include "coll.h"

/* The sweep size is the input buffer, as in nccl-tests: each rank keeps 1/n of the result. */
static void reduce_scatter_counts(size_t bytes, size_t eltsize, int nranks, struct coll_counts *c)
{
	c->param = c->recv = bytes / eltsize / (size_t)nranks;
	c->send = c->recv * (size_t)nranks;
	c->bytes = c->send * eltsize;
}

static double reduce_scatter_factor(int nranks)
{
	return (double)(nranks - 1) / nranks;
}

static void reduce_scatter_fill(void *send, const struct coll_counts *c, enum cc_dtype t,
				enum cc_redop op, int rank, int nranks, int root)
{
	(void)root;
	pattern_fill(send, t, op, rank, nranks, c->send, 0);
}

static size_t reduce_scatter_check(const void *recv, const struct coll_counts *c,
				   enum cc_dtype t, enum cc_redop op, int rank, int nranks,
				   int root)
{
	size_t wrong = 0, base = (size_t)rank * c->recv;

	(void)root;
	for (size_t k = 0; k < c->recv; k++)
		wrong += dtype_load(recv, t, k) != pattern_reduced(op, nranks, base + k);
	return wrong;
}

const struct coll coll_reduce_scatter = {
	.name = "reduce_scatter",
	.id = COLL_REDUCE_SCATTER,
	.reduces = 1,
	.counts = reduce_scatter_counts,
	.bus_factor = reduce_scatter_factor,
	.fill = reduce_scatter_fill,
	.check = reduce_scatter_check,
};
