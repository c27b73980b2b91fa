#include "coll.h"

/* The sweep size is each rank's send buffer, n blocks of 1/n, one per peer. */
static void alltoall_counts(size_t bytes, size_t eltsize, int nranks, struct coll_counts *c)
{
	c->param = bytes / eltsize / (size_t)nranks;
	c->send = c->recv = c->param * (size_t)nranks;
	c->bytes = c->send * eltsize;
}

static double alltoall_factor(int nranks)
{
	return (double)(nranks - 1) / nranks;
}

static void alltoall_fill(void *send, const struct coll_counts *c, enum cc_dtype t,
			  enum cc_redop op, int rank, int nranks, int root)
{
	(void)root;
	pattern_fill(send, t, op, rank, nranks, c->send, 0);
}

/* Block s of rank d's output is block d of rank s's input. */
static size_t alltoall_check(const void *recv, const struct coll_counts *c, enum cc_dtype t,
			     enum cc_redop op, int rank, int nranks, int root)
{
	size_t wrong = 0, base = (size_t)rank * c->param;

	(void)root;
	for (size_t j = 0; j < c->recv; j++) {
		int src = (int)(j / c->param);

		wrong += dtype_load(recv, t, j) !=
			 pattern_value(op, src, nranks, base + j % c->param);
	}
	return wrong;
}

const struct coll coll_alltoall = {
	.name = "alltoall",
	.id = COLL_ALLTOALL,
	.counts = alltoall_counts,
	.bus_factor = alltoall_factor,
	.fill = alltoall_fill,
	.check = alltoall_check,
};
