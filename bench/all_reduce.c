#include "coll.h"

static void all_reduce_counts(size_t bytes, size_t eltsize, int nranks, struct coll_counts *c)
{
	(void)nranks;
	c->param = c->send = c->recv = bytes / eltsize;
	c->bytes = c->param * eltsize;
}

static double all_reduce_factor(int nranks)
{
	return 2.0 * (nranks - 1) / nranks;
}

static void all_reduce_fill(void *send, const struct coll_counts *c, enum cc_dtype t,
			    enum cc_redop op, int rank, int nranks, int root)
{
	(void)root;
	pattern_fill(send, t, op, rank, nranks, c->send, 0);
}

static size_t all_reduce_check(const void *recv, const struct coll_counts *c, enum cc_dtype t,
			       enum cc_redop op, int rank, int nranks, int root)
{
	size_t wrong = 0;

	(void)rank;
	(void)root;
	for (size_t i = 0; i < c->recv; i++)
		wrong += dtype_load(recv, t, i) != pattern_reduced(op, nranks, i);
	return wrong;
}

const struct coll coll_all_reduce = {
	.name = "all_reduce",
	.id = COLL_ALL_REDUCE,
	.reduces = 1,
	.counts = all_reduce_counts,
	.bus_factor = all_reduce_factor,
	.fill = all_reduce_fill,
	.check = all_reduce_check,
};
