/*
 * gpu/select.c: which GPU each rank drives (--gpus, local rank), bringing up
 * CUDA collectively for a probe (gpu_open) or one rank's device for the nccl
 * backend (gpu_select). The parsing and picking helpers are plain C and
 * build everywhere; the CUDA half only with HAVE_CUDA.
 */
#include "gpu.h"
#include "internal.h"
#include "../core/log.h"
#include "../core/watchdog.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *p_gpus;      /* --gpus: device ordinal per local rank */

const struct cc_param gpu_params[] = {
	{ "gpus", CC_PARAM_STRING, &p_gpus,
	  "GPU probes, nccl backend, ib GPUDirect: device of each local rank, e.g. 0,1,2,3 or 4-7 "
	  "[local rank; a rank that sees fewer GPUs than its host has ranks uses its own]" },
	{ NULL, 0, NULL, NULL },
};

const char *gpu_list_option(void)
{
	return p_gpus;
}

/* ------------------------------------------------------------------ pure helpers */

static int parse_ordinal(const char *s, const char *end, int *v)
{
	long n = 0;

	if (s == end)
		return -1;
	for (const char *c = s; c < end; c++) {
		if (!isdigit((unsigned char)*c))
			return -1;
		n = n * 10 + (*c - '0');
		if (n > 1023)
			return -1;
	}
	*v = (int)n;
	return 0;
}

int gpu_parse_list(const char *s, int *out, int max, char *err, size_t len)
{
	const char *p = s;
	int n = 0;

	if (!s || !*s) {
		snprintf(err, len, "empty --gpus list (use e.g. 0,1,2,3 or 0-3)");
		return -1;
	}
	while (*p) {
		const char *end = strchr(p, ','), *dash;
		int a, b;

		if (!end)
			end = p + strlen(p);
		dash = memchr(p, '-', (size_t)(end - p));
		if (dash ? parse_ordinal(p, dash, &a) || parse_ordinal(dash + 1, end, &b)
			 : parse_ordinal(p, end, &a)) {
			snprintf(err, len, "invalid --gpus item '%.*s' (a device number or a range "
				 "like 0-3)", (int)(end - p), p);
			return -1;
		}
		if (!dash)
			b = a;
		if (b < a) {
			snprintf(err, len, "invalid --gpus range '%.*s': it runs backwards",
				 (int)(end - p), p);
			return -1;
		}
		for (int d = a; d <= b; d++) {
			for (int k = 0; k < n; k++)
				if (out[k] == d) {
					snprintf(err, len, "device %d appears twice in --gpus", d);
					return -1;
				}
			if (n >= max) {
				snprintf(err, len, "more than %d devices in --gpus", max);
				return -1;
			}
			out[n++] = d;
		}
		p = *end ? end + 1 : end;
		if (*end && !*p) {
			snprintf(err, len, "--gpus list ends with a comma");
			return -1;
		}
	}
	return n;
}

int gpu_pick(int local_rank, int ndev, const int *list, int nlist)
{
	int d;

	if (local_rank < 0 || ndev <= 0)
		return -1;
	if (nlist > 0) {
		if (local_rank >= nlist)
			return -1;
		d = list[local_rank];
	} else {
		d = local_rank;
	}
	return d < ndev ? d : -1;
}

static const char *view_bus(const char *views, int r, int k)
{
	return views + ((size_t)r * GPU_MAX + (size_t)k) * GPU_BUS_LEN;
}

static int same_view(const char *views, const int *count, int a, int b)
{
	if (count[a] != count[b])
		return 0;
	for (int k = 0; k < count[a]; k++)
		if (strcmp(view_bus(views, a, k), view_bus(views, b, k)))
			return 0;
	return 1;
}

int gpu_view_assign(const char *views, const int *count, int nranks, int *ord)
{
	for (int r = 0; r < nranks; r++) {
		int k = 0;

		for (int q = 0; q < r; q++)
			k += same_view(views, count, q, r);
		ord[r] = k < count[r] ? k : -1;
	}
	/* overlapping views (not one another's equal) could still meet on one GPU */
	for (int r = 0; r < nranks; r++)
		for (int q = 0; q < r; q++)
			if (ord[r] >= 0 && ord[q] >= 0 &&
			    !strcmp(view_bus(views, r, ord[r]), view_bus(views, q, ord[q])))
				return -1;
	return 0;
}

int gpu_devices(int ndev, int *out, int max)
{
	int ids[GPU_MAX], n = -1, k = 0;
	char err[160];

	if (p_gpus)
		n = gpu_parse_list(p_gpus, ids, GPU_MAX, err, sizeof(err));
	for (int i = 0; i < (n >= 0 ? n : ndev) && k < max; i++) {
		int d = n >= 0 ? ids[i] : i;

		if (d < ndev)
			out[k++] = d;
	}
	return k;
}

void gpu_bus_norm(const char *in, char *out, size_t len)
{
	char low[64];
	size_t i;
	const char *colon;

	for (i = 0; in[i] && i + 1 < sizeof(low); i++)
		low[i] = (char)tolower((unsigned char)in[i]);
	low[i] = '\0';
	colon = strchr(low, ':');
	/* an 8-digit domain "00000000:" becomes "0000:" when its top half is zero */
	if (colon && colon - low == 8 && !strncmp(low, "0000", 4))
		snprintf(out, len, "%s", low + 4);
	else
		snprintf(out, len, "%s", low);
}

int gpu_bus_index(char (*bus)[GPU_BUS_LEN], int n, const char *id)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(bus[i], id))
			return i;
	return -1;
}

int gpu_bus_add(char (*bus)[GPU_BUS_LEN], int *n, int max, const char *id)
{
	int at = 0;

	if (gpu_bus_index(bus, *n, id) >= 0)
		return 0;
	if (*n >= max)
		return -1;
	while (at < *n && strcmp(bus[at], id) < 0)
		at++;
	memmove(bus[at + 1], bus[at], (size_t)(*n - at) * GPU_BUS_LEN);
	snprintf(bus[at], GPU_BUS_LEN, "%s", id);
	(*n)++;
	return 0;
}

int gpu_check_params(char *err, size_t len)
{
	int list[GPU_MAX];

	return p_gpus && gpu_parse_list(p_gpus, list, GPU_MAX, err, len) < 0 ? -1 : 0;
}

int gpu_open_failed(struct cc_run *run, const char *name, int rc, const char *why)
{
	char msg[600];

	if (rc < 0) {
		run_error(run, "probe", name, why);
		return CC_EXIT_RUNTIME;
	}
	snprintf(msg, sizeof(msg), "skipped: %s", why);
	run_skip(run, "probe", name, msg);
	return CC_EXIT_OK;
}

#ifndef HAVE_CUDA

int gpu_open(struct cc_run *run, const char *probe, struct gpu_ctx *g, char *why, size_t len)
{
	(void)run, (void)probe;
	memset(g, 0, sizeof(*g));
	g->dev = -1;
	snprintf(why, len, "built without CUDA");
	return 1;
}

int gpu_select(const struct mpictx *mpi, int *dev, char *why, size_t len)
{
	(void)mpi;
	*dev = -1;
	snprintf(why, len, "built without CUDA");
	return 1;
}

int gpu_rank_device(const struct mpictx *mpi, int *dev, char *why, size_t len)
{
	return gpu_select(mpi, dev, why, len);
}

#else /* HAVE_CUDA */

int gpu_cuda_fail(cudaError_t e, const char *call, char *why, size_t len)
{
	if (call && log_get_level() >= LOG_DEBUG)
		log_debug("%s: %s (%s)", call, cudaGetErrorString(e), cudaGetErrorName(e));
	snprintf(why, len, "CUDA: %s", cudaGetErrorString(e));
	return -1;
}

/* ------------------------------------------------------------------ devices */

int gpu_list_for_rank(int *list, char *why, size_t len)
{
	if (!p_gpus)
		return 0;
	return gpu_parse_list(p_gpus, list, GPU_MAX, why, len);
}

/* Makes dev current and creates its context now, so that a busy GPU shows here. */
static int use_device(int dev, char *why, size_t len)
{
	cudaError_t e = cudaSetDevice(dev);

	if (e == cudaSuccess)
		e = cudaFree(NULL);
	return e == cudaSuccess ? 0 : gpu_cuda_fail(e, "cudaSetDevice", why, len);
}

void gpu_bus_of(int dev, char *out, size_t len)
{
	char raw[64] = "";

	if (cudaDeviceGetPCIBusId(raw, sizeof(raw), dev) != cudaSuccess)
		snprintf(raw, sizeof(raw), "unknown-%d", dev);
	gpu_bus_norm(raw, out, len);
}

/*
 * This rank's device among the ndev it sees; collective over mpi->local.
 * --gpus: list[local_rank]. Else, when every rank of the host sees a device
 * for each of its ranks: its local rank's. Else (per-rank
 * CUDA_VISIBLE_DEVICES: Slurm's --gpus-per-task, --gpu-bind=closest with a
 * socket's 4 GPUs per task, one GPU per pod) the ranks gather their whole
 * views (bus ids in ordinal order) and among the ranks sharing a view the
 * k-th takes its k-th device (gpu_view_assign), once the bus ids prove the
 * GPUs distinct; when they are not (views that overlap without being
 * equal), the local rank's rule. *how names the rule taken.
 */
static int choose(const struct mpictx *mpi, int ndev, const int *list, int nlist,
		  const char **how)
{
	char *views, mine[GPU_MAX][GPU_BUS_LEN];
	int visible = !nlist && ndev > 0 && ndev < mpi->local_size, any = 0, d = -1, n, ok;
	int *count, *ord;

	MPI_Allreduce(&visible, &any, 1, MPI_INT, MPI_MAX, mpi->local);
	if (!any || nlist) {
		*how = nlist ? "--gpus" : "local rank";
		return gpu_pick(mpi->local_rank, ndev, list, nlist);
	}
	n = ndev < GPU_MAX ? ndev : GPU_MAX;
	memset(mine, 0, sizeof(mine));
	for (int k = 0; k < n; k++)
		gpu_bus_of(k, mine[k], GPU_BUS_LEN);
	views = calloc((size_t)mpi->local_size, sizeof(mine));
	count = calloc((size_t)mpi->local_size, sizeof(int));
	ord = calloc((size_t)mpi->local_size, sizeof(int));
	ok = views && count && ord;
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, mpi->local);
	if (ok) {
		MPI_Allgather(mine, (int)sizeof(mine), MPI_CHAR, views, (int)sizeof(mine), MPI_CHAR,
			      mpi->local);
		MPI_Allgather(&n, 1, MPI_INT, count, 1, MPI_INT, mpi->local);
		ok = !gpu_view_assign(views, count, mpi->local_size, ord);
	}
	if (ok) {
		d = ord[mpi->local_rank];
		*how = "per-rank visibility";
	} else {
		d = gpu_pick(mpi->local_rank, ndev, list, nlist);
		*how = "local rank";
	}
	free(views);
	free(count);
	free(ord);
	return d;
}

int gpu_rank_device(const struct mpictx *mpi, int *dev, char *why, size_t len)
{
	int list[GPU_MAX], nlist, ndev = 0;
	const char *how;
	cudaError_t e;

	*dev = -1;
	nlist = gpu_list_for_rank(list, why, len);
	if (nlist < 0)
		return -1;
	e = cudaGetDeviceCount(&ndev);
	if (e != cudaSuccess) {
		gpu_cuda_fail(e, "cudaGetDeviceCount", why, len);
		ndev = 0;
	}
	*dev = choose(mpi, ndev, list, nlist, &how);
	if (e != cudaSuccess) {
		*dev = -1;
		return 1;
	}
	if (*dev < 0) {
		snprintf(why, len, "local rank %d has no GPU of its own (%d visible%s)", mpi->local_rank,
			 ndev, nlist ? ", --gpus given" : "");
		return 1;
	}
	return 0;
}

int gpu_select(const struct mpictx *mpi, int *dev, char *why, size_t len)
{
	int rc = gpu_rank_device(mpi, dev, why, len);

	if (rc)
		return rc;
	return use_device(*dev, why, len) ? 1 : 0;
}

void gpu_errors(struct cc_run *run, const char *probe, json_t *mine)
{
	json_t *all = run_gather_json(run->mpi->world, mine), *v, *e;
	size_t i, k;

	json_array_foreach(all, i, v) {
		if (json_is_object(v)) {
			json_t *one = json_array();

			json_array_append(one, v);
			json_array_set_new(all, i, one);
			v = one;
		}
		json_array_foreach(v, k, e) {
			gpu_name_record(e);
			json_object_set_new(e, "kind", json_string("probe"));
			json_object_set_new(e, "name", json_string(probe));
			if (gpu_transport())
				json_object_set_new(e, "transport", json_string(gpu_transport()));
			log_error("probe '%s': %s", probe,
				  json_string_value(json_object_get(e, "message")));
			run->failures++;
			run_record(run, "error", json_incref(e));
		}
	}
	json_decref(all);
}

/*
 * Ends this rank's armed local step and waits for the others under a
 * second deadline, what: a rank hung in the step (a hung cuInit, Xid 79)
 * never arms it, so rank 0's timeout record names it as not started.
 */
static void wait_all(const struct mpictx *mpi, const char *probe, const char *what)
{
	watchdog_disarm();
	watchdog_arm(what, json_pack("{s:s, s:s}", "kind", "probe", "probe", probe));
	MPI_Barrier(mpi->world);
	watchdog_disarm();
}

int gpu_open(struct cc_run *run, const char *probe, struct gpu_ctx *g, char *why, size_t len)
{
	static int inventory_done;
	struct mpictx *mpi = run->mpi;
	int list[GPU_MAX], nlist, mine = 0, rc, usable, any, failed, nfailed;
	char err[300] = "";
	json_t *fail = NULL;
	cudaError_t e = cudaSuccess;

	memset(g, 0, sizeof(*g));
	g->dev = -1;
	g->link.numa_node = -1;
	g->selection = "none";
	why[0] = '\0';
	nlist = gpu_list_for_rank(list, why, len);
	if (run_agree(mpi->world, nlist < 0 ? -1 : 0, mpi->host, why, len))
		return -1;
	/* a wedged driver (hung cuInit, Xid 79) ends as a timeout naming the host */
	watchdog_arm("gpu open", json_pack("{s:s, s:s}", "kind", "probe", "probe", probe));
	if ((e = cudaGetDeviceCount(&g->ndev)) != cudaSuccess) {
		g->ndev = 0;
		gpu_cuda_fail(e, "cudaGetDeviceCount", err, sizeof(err));
	}
	wait_all(mpi, probe, "gpu open, all ranks");
	g->dev = choose(mpi, g->ndev, list, nlist, &g->selection);
	watchdog_arm("gpu context", json_pack("{s:s, s:s}", "kind", "probe", "probe", probe));
	if (g->dev >= 0) {
		gpu_bus_of(g->dev, g->bus_id, sizeof(g->bus_id));
		if (use_device(g->dev, err, sizeof(err)))
			g->open_failed = 1;
	}
	wait_all(mpi, probe, "gpu context, all ranks");
	usable = g->dev >= 0 && !g->open_failed;
	failed = g->open_failed;
	MPI_Allreduce(&usable, &any, 1, MPI_INT, MPI_MAX, mpi->world);
	MPI_Allreduce(&failed, &nfailed, 1, MPI_INT, MPI_SUM, mpi->world);
	if (!any && !nfailed) {
		/* nothing to measure anywhere: one skip with the lowest rank's reason */
		if (e != cudaSuccess)
			snprintf(why, len, "%s", err), mine = 1;
		else if (g->ndev == 0)
			snprintf(why, len, "no CUDA device visible"), mine = 1;
		rc = run_agree(mpi->world, mine, mpi->host, why, len);
		if (!rc)
			snprintf(why, len, "no rank has a GPU of its own (%d ranks per host; --gpus %s)",
				 mpi->local_size, p_gpus ? p_gpus : "not given");
		return 1;
	}
	if (usable) {
		if (gpu_read_link(g->bus_id, &g->link, &g->link_source))
			g->link.numa_node = -1;
	}
	if (!inventory_done) {
		json_t *parts = run_gather_json(mpi->world, gpu_local_inventory(mpi, g));

		if (mpi->rank == 0)
			gpu_write_inventory(run, parts);
		json_decref(parts);
		inventory_done = 1;
	}
	/* a GPU that cannot be opened is an error naming it; the others are measured */
	if (g->open_failed || (e != cudaSuccess && any))
		fail = json_pack("{s:s, s:i, s:s, s:s}", "host", mpi->host, "rank", mpi->rank,
				 "bus_id", g->open_failed ? g->bus_id : "",
				 "message", "");
	if (fail) {
		char msg[512];

		if (g->open_failed)
			snprintf(msg, sizeof(msg), "%s:%d: cannot open GPU %s: %s", mpi->host, mpi->rank,
				 g->bus_id, err);
		else
			snprintf(msg, sizeof(msg), "%s:%d: cannot count the CUDA devices: %s", mpi->host,
				 mpi->rank, err);
		if (!g->open_failed)
			json_object_del(fail, "bus_id");
		json_object_set_new(fail, "message", json_string(msg));
	}
	gpu_errors(run, probe, fail);
	if (g->open_failed)
		g->dev = -1;  /* this rank idles; the run ends with exit 1 */
	if (!any) {
		snprintf(why, len, "no GPU could be opened (%d error record(s))", nfailed);
		return -1;
	}
	return 0;
}

#endif /* HAVE_CUDA */
