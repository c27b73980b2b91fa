#include "backend.h"
#include "coll.h"

#include <string.h>

extern const struct coll coll_all_reduce, coll_all_gather, coll_reduce_scatter,
	coll_alltoall, coll_broadcast;
extern const struct backend backend_mpi, backend_nccl;

/* The only list of collectives, in the order they run when none is named. */
const struct coll *const colls[] = {
	&coll_all_reduce,
	&coll_all_gather,
	&coll_reduce_scatter,
	&coll_alltoall,
	&coll_broadcast,
	NULL,
};

/* The only list of backends. */
const struct backend *const backends[] = {
	&backend_mpi,
	&backend_nccl,
	NULL,
};

const struct coll *coll_find(const char *name)
{
	for (int i = 0; colls[i]; i++)
		if (!strcmp(colls[i]->name, name))
			return colls[i];
	return NULL;
}

const struct backend *backend_find(const char *name)
{
	for (int i = 0; backends[i]; i++)
		if (!strcmp(backends[i]->name, name))
			return backends[i];
	return NULL;
}
