/*
 * gpu/select.c: which GPU each rank drives (--gpus, local rank), bringing up
 * CUDA collectively for a probe (gpu_open) or one rank's device for the nccl
 * backend (gpu_select). The parsing and picking helpers are plain C and
 * build everywhere; the CUDA half only with HAVE_CUDA.
 */
#include "gpu.h"
#include "internal.h"
#include "../core/log.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *p_gpus;      /* --gpus: device ordinal per local rank */

const struct cc_param gpu_params[] = {
	{ "gpus", CC_PARAM_STRING, &p_gpus,
	  "GPU probes, nccl backend: device of each local rank, e.g. 0,1,2,3 or 4-7 [local rank]" },
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

int gpu_open(struct cc_run *run, struct gpu_ctx *g, char *why, size_t len)
{
	(void)run;
	memset(g, 0, sizeof(*g));
	g->dev = -1;
	snprintf(why, len, "built without CUDA");
	return 1;
}

int gpu_select(int local_rank, int *dev, char *why, size_t len)
{
	(void)local_rank;
	*dev = -1;
	snprintf(why, len, "built without CUDA");
	return 1;
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

int gpu_select(int local_rank, int *dev, char *why, size_t len)
{
	int list[GPU_MAX], nlist, ndev = 0;
	cudaError_t e;

	*dev = -1;
	nlist = gpu_list_for_rank(list, why, len);
	if (nlist < 0)
		return -1;
	e = cudaGetDeviceCount(&ndev);
	if (e != cudaSuccess) {
		gpu_cuda_fail(e, "cudaGetDeviceCount", why, len);
		return 1;
	}
	*dev = gpu_pick(local_rank, ndev, list, nlist);
	if (*dev < 0) {
		snprintf(why, len, "local rank %d has no GPU of its own (%d visible%s)", local_rank,
			 ndev, nlist ? ", --gpus given" : "");
		return 1;
	}
	return use_device(*dev, why, len) ? 1 : 0;
}

void gpu_bus_of(int dev, char *out, size_t len)
{
	char raw[64] = "";

	if (cudaDeviceGetPCIBusId(raw, sizeof(raw), dev) != cudaSuccess)
		snprintf(raw, sizeof(raw), "unknown-%d", dev);
	gpu_bus_norm(raw, out, len);
}

int gpu_open(struct cc_run *run, struct gpu_ctx *g, char *why, size_t len)
{
	static int inventory_done;
	struct mpictx *mpi = run->mpi;
	int list[GPU_MAX], nlist, mine = 0, rc, has, any;
	cudaError_t e;

	memset(g, 0, sizeof(*g));
	g->dev = -1;
	g->link.numa_node = -1;
	why[0] = '\0';
	nlist = gpu_list_for_rank(list, why, len);
	if (nlist < 0) {
		mine = -1;
	} else if ((e = cudaGetDeviceCount(&g->ndev)) != cudaSuccess) {
		g->ndev = 0;
		gpu_cuda_fail(e, "cudaGetDeviceCount", why, len);
		mine = 1;
	} else if (g->ndev == 0) {
		snprintf(why, len, "no CUDA device visible");
		mine = 1;
	} else {
		g->dev = gpu_pick(mpi->local_rank, g->ndev, list, nlist);
		if (g->dev >= 0 && use_device(g->dev, why, len))
			mine = 1;
	}
	rc = run_agree(mpi->world, mine, mpi->host, why, len);
	if (rc)
		return rc;
	has = g->dev >= 0;
	MPI_Allreduce(&has, &any, 1, MPI_INT, MPI_MAX, mpi->world);
	if (!any) {
		snprintf(why, len, "no rank has a GPU of its own (%d ranks per host; --gpus %s)",
			 mpi->local_size, p_gpus ? p_gpus : "not given");
		return 1;
	}
	if (has) {
		gpu_bus_of(g->dev, g->bus_id, sizeof(g->bus_id));
		if (pci_read_link(NULL, g->bus_id, &g->link))
			g->link.numa_node = -1;
	}
	if (!inventory_done) {
		json_t *parts = run_gather_json(mpi->world, gpu_local_inventory(mpi, g));

		if (mpi->rank == 0)
			gpu_write_inventory(run, parts);
		json_decref(parts);
		inventory_done = 1;
	}
	return 0;
}

#endif /* HAVE_CUDA */
