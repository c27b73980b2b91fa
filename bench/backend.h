#ifndef CCDIAG_BACKEND_H
#define CCDIAG_BACKEND_H

#include "../core/mpictx.h"
#include "coll.h"

/* One collective call, as the sweep asks for it. */
struct coll_args {
	enum coll_id id;
	const void *send;
	void *recv;
	size_t count;            /* struct coll_counts.param */
	enum cc_dtype dtype;
	enum cc_redop op;
	int root;
};

/*
 * A library that runs collectives (MPI on host memory, NCCL on GPUs). The
 * sweep (bench/sweep.c) is written against this table only, so a backend
 * adds no code there. Functions return 0 on success, or -1 with a message
 * in the backend's last error (backend->error()).
 */
struct backend {
	const char *name;
	const char *memory;      /* "host" or "device": where the buffers live */
	const char *missing;     /* non-NULL: not built in, and why */
	/*
	 * Prepares the backend on every rank (collective). Returns 0, 1 when it
	 * cannot run here (why says so: a skip, never a pass), or -1 on error.
	 */
	int (*init)(const struct mpictx *mpi, char *why, size_t len);
	void (*fini)(void);
	int (*supports)(enum coll_id id, enum cc_dtype t, enum cc_redop op);
	void *(*alloc)(size_t bytes);
	void (*release)(void *p);
	int (*to_buffer)(void *dst, const void *host, size_t bytes);
	int (*to_host)(void *host, const void *src, size_t bytes);
	int (*start)(const struct coll_args *a);  /* run or enqueue one collective */
	int (*wait)(void);                        /* until every started one is done */
	const char *(*error)(void);               /* the last error, one line */
	/* May be NULL; a non-NULL answer goes in each record's "transport" ("fake":
	 * a test double ran it, and ccreport never judges the figures) */
	const char *(*transport)(void);
	/* May be NULL. Device backends: the stream the collectives run on (a cudaStream_t), for
	 * a probe that orders its own GPU work with them (trainstep: each bucket's all_reduce
	 * waits for the event of its gradients); valid between init and fini */
	void *(*stream)(void);
};

/* The only list of backends, NULL-terminated. */
extern const struct backend *const backends[];
const struct backend *backend_find(const char *name);

#endif
