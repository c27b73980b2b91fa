#include "coll.h"

static void broadcast_counts(size_t bytes, size_t eltsize, int nranks, struct coll_counts *c)
{
	(void)nranks;
	c->param = c->send = c->recv = bytes / eltsize;
	c->bytes = c->param * eltsize;
}

static double broadcast_factor(int nranks)
{
	(void)nranks;
	return 1.0;
}

static void broadcast_fill(void *send, const struct coll_counts *c, enum cc_dtype t,
			   enum cc_redop op, int rank, int nranks, int root)
{
	(void)rank;
	pattern_fill(send, t, op, root, nranks, c->send, 0);
}

/* Every rank must hold the root's data; the root's own copy is its input. */
static size_t broadcast_check(const void *recv, const struct coll_counts *c, enum cc_dtype t,
			      enum cc_redop op, int rank, int nranks, int root)
{
	size_t wrong = 0;

	if (rank == root)
		return 0;
	for (size_t i = 0; i < c->recv; i++)
		wrong += dtype_load(recv, t, i) != pattern_value(op, root, nranks, i);
	return wrong;
}

const struct coll coll_broadcast = {
	.name = "broadcast",
	.id = COLL_BROADCAST,
	.rooted = 1,
	.counts = broadcast_counts,
	.bus_factor = broadcast_factor,
	.fill = broadcast_fill,
	.check = broadcast_check,
};
