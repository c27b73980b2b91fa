/*
 * gpu/inventory.c: the per-host "inventory" record of the GPUs (bus ids,
 * model, memory, PCIe link, P2P matrix, NVLinks, versions), and the GPU
 * names (HOST/gpuN in PCI order) rank 0 gives the probes' records.
 */
#include "gpu.h"
#include "internal.h"
#include "nvml.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_NCCL
#include <nccl.h>
#endif

/* ------------------------------------------------------------------ GPU names */

/* Rank 0: the GPUs of each host in PCI order, from the inventory. */
static struct host_gpus {
	char host[256];
	int n;
	char bus[GPU_MAX][GPU_BUS_LEN];
} *host_tab;
static int host_ntab;

static struct host_gpus *host_find(const char *host, int add)
{
	struct host_gpus *t;

	for (int i = 0; i < host_ntab; i++)
		if (!strcmp(host_tab[i].host, host))
			return &host_tab[i];
	if (!add)
		return NULL;
	t = realloc(host_tab, (size_t)(host_ntab + 1) * sizeof(*host_tab));
	if (!t)
		return NULL;
	host_tab = t;
	t = &host_tab[host_ntab++];
	memset(t, 0, sizeof(*t));
	snprintf(t->host, sizeof(t->host), "%s", host);
	return t;
}

/* gpuN of bus on host, or -1. */
static int gpu_number(const char *host, const char *bus)
{
	struct host_gpus *t = host_find(host, 0);

	return t ? gpu_bus_index(t->bus, t->n, bus) : -1;
}

static void name_gpu(char *buf, size_t len, const char *host, const char *bus)
{
	int k = gpu_number(host, bus);

	if (k >= 0)
		snprintf(buf, len, "gpu%d", k);
	else
		snprintf(buf, len, "gpu:%s", bus);  /* not in the inventory: the bus id names it */
}

/* Fills the GPU numbers and the element name of one record (rank 0). */
void gpu_name_record(json_t *rec)
{
	const char *host = json_string_value(json_object_get(rec, "host"));
	const char *bus = json_string_value(json_object_get(rec, "bus_id"));
	const char *sb = json_string_value(json_object_get(rec, "src_bus"));
	const char *db = json_string_value(json_object_get(rec, "dst_bus"));
	char a[64], b[64], el[400];

	if (!host)
		return;
	if (bus) {
		name_gpu(a, sizeof(a), host, bus);
		snprintf(el, sizeof(el), "%s/%s", host, a);
		json_object_set_new(rec, "gpu", json_integer(gpu_number(host, bus)));
		json_object_set_new(rec, "element", json_string(el));
	} else if (sb && db) {
		name_gpu(a, sizeof(a), host, sb);
		name_gpu(b, sizeof(b), host, db);
		snprintf(el, sizeof(el), "%s/%s-%s", host, a, b);
		json_object_set_new(rec, "src_gpu", json_integer(gpu_number(host, sb)));
		json_object_set_new(rec, "dst_gpu", json_integer(gpu_number(host, db)));
		json_object_set_new(rec, "element", json_string(el));
	} else {
		json_object_set_new(rec, "element", json_string(host));
	}
}

const char *gpu_transport(void)
{
	static int known, fake;

	if (!known) {
		fake = dlsym(RTLD_DEFAULT, "ccdiag_test_double") != NULL;
		known = 1;
	}
	return fake ? "fake" : NULL;
}

json_t *gpu_emit(struct cc_run *run, json_t *mine)
{
	json_t *per_rank, *all, *v;
	size_t r, i;

	if (!mine)
		mine = json_array();
	per_rank = run_gather_json(run->mpi->world, mine);
	if (run->mpi->rank != 0)
		return NULL;
	all = json_array();
	json_array_foreach(per_rank, r, v) {
		json_t *rec;

		json_array_foreach(v, i, rec) {
			/* "type": "error" or "skip": a failure or skip of that GPU alone (gemm) */
			const char *type = json_string_value(json_object_get(rec, "type"));

			gpu_name_record(rec);
			if (gpu_transport())
				json_object_set_new(rec, "transport", json_string(gpu_transport()));
			json_array_append(all, rec);
			if (type && !strcmp(type, "error"))
				run->failures++;
			run_record(run, type ? type : "measurement", json_deep_copy(rec));
		}
	}
	json_decref(per_rank);
	return all;
}

json_t *gpu_build_versions(void)
{
	json_t *v = json_object();
#ifdef HAVE_CUDA
	int rt = 0;
	char buf[32];

	if (cudaRuntimeGetVersion(&rt) == cudaSuccess) {
		snprintf(buf, sizeof(buf), "%d.%d", rt / 1000, rt % 1000 / 10);
		json_object_set_new(v, "cuda_runtime", json_string(buf));
	}
#endif
#ifdef HAVE_NCCL
	{
		int nv = 0;
		char nb[32];

		if (ncclGetVersion(&nv) == ncclSuccess) {
			/* NCCL_VERSION(X,Y,Z): X*10000 + Y*100 + Z since 2.9; X*1000 + Y*100 + Z before */
			if (nv >= 10000)
				snprintf(nb, sizeof(nb), "%d.%d.%d", nv / 10000, nv / 100 % 100, nv % 100);
			else
				snprintf(nb, sizeof(nb), "%d.%d.%d", nv / 1000, nv / 100 % 10, nv % 100);
			json_object_set_new(v, "nccl", json_string(nb));
		}
	}
#endif
	return v;
}

#ifdef HAVE_CUDA

static void uuid_text(const cudaUUID_t *u, char *out, size_t len)
{
	const unsigned char *b = (const unsigned char *)u->bytes;
	size_t at = (size_t)snprintf(out, len, "GPU-");

	for (int i = 0; i < 16 && at + 3 < len; i++) {
		at += (size_t)snprintf(out + at, len - at, "%02x", b[i]);
		if ((i == 3 || i == 5 || i == 7 || i == 9) && at + 2 < len)
			out[at++] = '-', out[at] = '\0';
	}
}

/* [{link, active, version}] of the NVLinks of the device at bus, or null. */
static json_t *nvml_links(const char *bus)
{
	nvmlDevice_t d;
	json_t *links;

	if (gpu_nvml_device(bus, &d))
		return json_null();
	links = json_array();
	for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
		nvmlEnableState_t on;
		unsigned int ver = 0;

		if (nvml.link_state(d, l, &on) != NVML_SUCCESS)
			continue;  /* no such link on this GPU */
		if (nvml.link_version(d, l, &ver) != NVML_SUCCESS)
			ver = 0;
		json_array_append_new(links, json_pack("{s:i, s:b, s:o}", "link", (int)l,
						       "active", on == NVML_FEATURE_ENABLED,
						       "version", ver ? json_integer(ver) : json_null()));
	}
	return links;
}

/*
 * The NVLink domain of the device at bus, from NVML's GPU fabric info:
 * {domain: "UUID/CLIQUE", clique_id} on an NVLink fabric system, else
 * {domain: null, why}: absent is said, never guessed (docs/gpu.md).
 */
static json_t *fabric_json(const char *bus)
{
	struct gpu_fabric_v2 f;
	nvmlDevice_t d;
	char text[GPU_FABRIC_LEN];
	int r;

	if (gpu_nvml_device(bus, &d))
		return json_pack("{s:n, s:s}", "domain", "why",
				 nvml.why[0] ? nvml.why : "NVML does not know this GPU");
	r = gpu_nvml_fabric(d, &f);
	if (r)
		return json_pack("{s:n, s:s}", "domain", "why",
				 r == 3 ? "not an NVLink fabric system (NVML: not supported)" :
				 r < 0 ? "this NVML has no GPU fabric info" : nvml.error((nvmlReturn_t)r));
	if (gpu_fabric_format(f.cluster_uuid, f.clique_id, f.state, f.status, text, sizeof(text)))
		return json_pack("{s:n, s:s}", "domain", "why", text + 1);
	return json_pack("{s:s, s:i}", "domain", text, "clique_id", (int)f.clique_id);
}

/* What one rank tells rank 0 about device dev. */
static json_t *device_json(int dev)
{
	struct cudaDeviceProp p;
	struct pci_link link;
	char bus[GPU_BUS_LEN], uuid[64], cc[16];
	const char *src;
	int clk = 0, bits = 0;
	json_t *j;

	gpu_bus_of(dev, bus, sizeof(bus));
	if (cudaGetDeviceProperties(&p, dev) != cudaSuccess)
		return NULL;
	cudaDeviceGetAttribute(&clk, cudaDevAttrMemoryClockRate, dev);
	cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, dev);
	uuid_text(&p.uuid, uuid, sizeof(uuid));
	snprintf(cc, sizeof(cc), "%d.%d", p.major, p.minor);
	j = json_pack("{s:s, s:s, s:s, s:I, s:s, s:i}", "bus_id", bus, "name", p.name,
		      "uuid", uuid, "memory_bytes", (json_int_t)p.totalGlobalMem,
		      "compute_capability", cc, "sm_count", p.multiProcessorCount);
	if (gpu_read_link(bus, &link, &src) == 0) {
		json_t *pcie = pci_link_json(&link);

		/* read while the GPU idles (2.5 GT/s on NVIDIA GPUs): the pcie probe's
		 * records hold the link under load and judge downtraining on that */
		json_object_set_new(pcie, "state", json_string("idle"));
		json_object_set_new(pcie, "source", json_string(src));
		json_object_set_new(pcie, "downtrained", json_null());
		json_object_set_new(j, "numa_node", json_integer(link.numa_node));
		json_object_set_new(j, "pcie", pcie);
	} else {
		json_object_set_new(j, "numa_node", json_integer(-1));
		json_object_set_new(j, "pcie", json_null());
	}
	/* ACS redirecting P2P on a bridge above the GPU, and the IOMMU's mode */
	json_object_set_new(j, "pcie_path", pci_path_json(NULL, bus));
	json_object_set_new(j, "nvlink_domain", fabric_json(bus));
	json_object_set_new(j, "mem_rate_GBps", gpu_mem_rate_GBps(clk, bits) > 0 ?
			    json_real(gpu_mem_rate_GBps(clk, bits)) : json_null());
	return j;
}

/* The P2P access matrix among this rank's devices, by their bus ids. */
static json_t *p2p_json(int ndev)
{
	json_t *bus = json_array(), *m = json_array();

	for (int i = 0; i < ndev; i++) {
		json_t *row = json_array();
		char b[GPU_BUS_LEN];

		gpu_bus_of(i, b, sizeof(b));
		json_array_append_new(bus, json_string(b));
		for (int k = 0; k < ndev; k++) {
			int can = 0;

			if (i != k && cudaDeviceCanAccessPeer(&can, i, k) != cudaSuccess)
				can = 0;
			json_array_append_new(row, i == k ? json_null() : json_boolean(can));
		}
		json_array_append_new(m, row);
	}
	return json_pack("{s:o, s:o}", "bus", bus, "access", m);
}

/* This rank's part of the inventory: all devices on local rank 0, its own elsewhere. */
json_t *gpu_local_inventory(const struct mpictx *mpi, const struct gpu_ctx *g)
{
	json_t *inv = json_pack("{s:s, s:i}", "host", mpi->host, "local_rank", mpi->local_rank);

	/* which GPU this rank drives and why (docs/gpu.md: selection) */
	json_object_set_new(inv, "rank", json_pack("{s:i, s:i, s:o, s:s, s:o}", "rank", mpi->rank,
						   "local_rank", mpi->local_rank,
						   "bus_id", g->dev >= 0 ? json_string(g->bus_id) : json_null(),
						   "selection", g->selection ? g->selection : "none",
						   "cuda_visible_devices",
						   getenv("CUDA_VISIBLE_DEVICES") ?
						   json_string(getenv("CUDA_VISIBLE_DEVICES")) : json_null()));
	if (mpi->local_rank == 0)
		json_object_set_new(inv, "environment", run_env_json());
	json_t *devs = json_array(), *versions = gpu_build_versions(), *links = json_object();
	int drv = 0;
	char buf[96];

	for (int d = 0; d < g->ndev; d++) {
		json_t *j;

		if (mpi->local_rank != 0 && d != g->dev)
			continue;
		j = device_json(d);
		if (!j)
			continue;
		if (mpi->local_rank == 0)
			json_object_set_new(links, json_string_value(json_object_get(j, "bus_id")),
					    nvml_links(json_string_value(json_object_get(j, "bus_id"))));
		json_array_append_new(devs, j);
	}
	json_object_set_new(inv, "devices", devs);
#ifdef HAVE_NCCL
	{
		Dl_info info;

		/* the NCCL library this process actually loaded (LD_LIBRARY_PATH, a module) */
		if (dladdr((void *)ncclGetVersion, &info) && info.dli_fname)
			json_object_set_new(versions, "nccl_library", json_string(info.dli_fname));
	}
#endif
	if (cudaDriverGetVersion(&drv) == cudaSuccess && drv > 0) {
		snprintf(buf, sizeof(buf), "%d.%d", drv / 1000, drv % 1000 / 10);
		json_object_set_new(versions, "cuda_driver", json_string(buf));
	}
	if (mpi->local_rank == 0) {
		if (!gpu_nvml_open() && nvml.driver(buf, sizeof(buf)) == NVML_SUCCESS)
			json_object_set_new(versions, "driver", json_string(buf));
		json_object_set_new(inv, "p2p", p2p_json(g->ndev));
		json_object_set_new(inv, "nvlink", links);
		json_object_set_new(inv, "nvml", json_string(nvml.up ? "available" : nvml.why));
	} else {
		json_decref(links);
	}
	json_object_set_new(inv, "versions", versions);
	return inv;
}

/* Position of bus in a JSON array of bus ids, or -1. */
static int bus_index_json(json_t *arr, const char *bus)
{
	json_t *v;
	size_t i;

	json_array_foreach(arr, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), bus))
			return (int)i;
	return -1;
}

/* Rank 0: merges the ranks' parts into one record per host and writes them. */
void gpu_write_inventory(struct cc_run *run, json_t *parts)
{
	struct mpictx *mpi = run->mpi;
	json_t *names = json_object(), *p0;
	const char *k;
	json_t *v;
	size_t r0;

	/* the variables hosts must share, over every host: one lacking one shows as unset */
	json_array_foreach(parts, r0, p0)
		json_object_foreach(json_object_get(p0, "environment"), k, v)
			if (run_env_shared(k))
				json_object_set_new(names, k, json_true());

	for (int node = 0; node < mpi->nnodes; node++) {
		const char *host = mpi->hosts[node];
		struct host_gpus *t = host_find(host, 1);
		json_t *lead = NULL, *gpus = json_array(), *byb = json_object(), *p;
		json_t *access = json_array(), *ranks = json_array(), *rec;
		size_t r;

		if (!t)
			break;
		json_array_foreach(parts, r, p) {
			json_t *d;
			size_t i;

			if (!json_is_object(p) || mpi->rank_node[r] != node)
				continue;
			if (json_integer_value(json_object_get(p, "local_rank")) == 0)
				lead = p;
			json_array_append(ranks, json_object_get(p, "rank"));
			json_array_foreach(json_object_get(p, "devices"), i, d) {
				const char *b = json_string_value(json_object_get(d, "bus_id"));

				if (b && !json_object_get(byb, b) && !gpu_bus_add(t->bus, &t->n, GPU_MAX, b))
					json_object_set(byb, b, d);
			}
		}
		for (int k = 0; k < t->n; k++) {
			json_t *d = json_deep_copy(json_object_get(byb, t->bus[k]));
			json_t *nv = lead ? json_object_get(json_object_get(lead, "nvlink"), t->bus[k]) : NULL;
			char el[400];

			snprintf(el, sizeof(el), "%s/gpu%d", host, k);
			json_object_set_new(d, "index", json_integer(k));
			json_object_set_new(d, "element", json_string(el));
			json_object_set(d, "nvlink", nv ? nv : json_null());
			json_array_append_new(gpus, d);
		}
		/* the P2P matrix by host index, as local rank 0 saw it */
		for (int a = 0; a < t->n; a++) {
			json_t *row = json_array(), *p2p = lead ? json_object_get(lead, "p2p") : NULL;
			int ia = p2p ? bus_index_json(json_object_get(p2p, "bus"), t->bus[a]) : -1;

			for (int b = 0; b < t->n; b++) {
				int ib = p2p ? bus_index_json(json_object_get(p2p, "bus"), t->bus[b]) : -1;
				json_t *v = ia >= 0 && ib >= 0 ?
					json_array_get(json_array_get(json_object_get(p2p, "access"), (size_t)ia),
						       (size_t)ib) : NULL;

				json_array_append(row, v ? v : json_null());
			}
			json_array_append_new(access, row);
		}
		rec = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o}", "kind", "gpu", "host", host,
				"versions", lead ? json_deep_copy(json_object_get(lead, "versions")) :
						   json_object(),
				"gpus", gpus, "p2p_access", access,
				"nvml", lead ? json_deep_copy(json_object_get(lead, "nvml")) : json_null());
		json_decref(byb);
		json_object_set_new(rec, "ranks", ranks);
		json_object_set_new(rec, "environment", lead && json_object_get(lead, "environment") ?
				    json_deep_copy(json_object_get(lead, "environment")) : json_object());
		/* in versions, so that ccreport's consistency check compares them across hosts */
		json_object_foreach(names, k, v) {
			json_t *val = json_object_get(json_object_get(rec, "environment"), k);
			char key[300];

			snprintf(key, sizeof(key), "env:%s", k);
			json_object_set_new(json_object_get(rec, "versions"), key,
					    json_string(val ? json_string_value(val) : "(unset)"));
		}
		if (gpu_transport())
			json_object_set_new(rec, "transport", json_string(gpu_transport()));
		run_record(run, "inventory", rec);
	}
	json_decref(names);
}

#endif /* HAVE_CUDA */
