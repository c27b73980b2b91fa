/*
 * tests/report/gen_results.c: writes a synthetic results file (docs/results.md)
 * of an HGX-like cluster: NODES x GPUS GPUs, one NIC per GPU, for ccreport's
 * golden cases and its benchmark. The numbers are invented but plausible
 * (figures from docs/sources.md); faults are injected on request.
 *
 * usage: gen_results [-n NODES] [-g GPUS] [-s SEED] [-m MODEL] [-p PCIE_GBPS] [-i IB_GBPS]
 *                    [FAULT...] > FILE
 *   -p, -i: the PCIe link and IB port rates (default 63 = Gen5 x16, 50 = NDR 400 Gb/s);
 *           bandwidths scale with them
 *   slow=ELEMENT:TEST:FACTOR   multiply TEST's bandwidth on ELEMENT by FACTOR
 *                              (latency: divide); ELEMENT "*" = every element
 *   skip=PROBE                 a skip record instead of PROBE's records
 *   notbuilt=PROBE             a "not built: ..." skip record instead
 *   version=HOST:KEY:VALUE     HOST's inventory reports VALUE for KEY
 *   counter=ELEMENT:NAME:N     NIC ELEMENT's counter NAME moved by N
 *   drop=ELEMENT               no records of ELEMENT (a GPU the probe did not see)
 *   noend                      no end record (the run died)
 *   nonetpair                  leave the node-pair matrix out
 *   netrate                    netpair records carry rate_GBps (the emulator's shaped rate)
 *   relabel=HOST:OTHER         HOST's inventory reports OTHER's GPU UUIDs and NIC GUIDs (OTHER's
 *                              records relabelled as HOST's)
 * Sizes are powers of two; the GPU probes measure 4 sizes up to 256 MiB.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FAULTS 32

static int nodes = 2, gpus = 8, noend, nonetpair, netrate;
static double pcie_rate = 63.0, ib_rate = 50.0;   /* GB/s: Gen5 x16, NDR 400 Gb/s */
static const char *model = "NVIDIA H100 80GB HBM3";
static unsigned long long rng = 88172645463325252ULL;
static double elapsed = 0.1;        /* after the inventories (0.1): a file's clock never goes back */
static struct fault {
	char kind[16], a[128], b[64], c[64];
} faults[MAX_FAULTS];
static int nfaults;

static double noise(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return 1.0 + ((double)(rng % 2001) - 1000.0) / 100000.0;   /* +-1 % */
}

static const struct fault *find(const char *kind, const char *a, const char *b)
{
	for (int i = 0; i < nfaults; i++)
		if (!strcmp(faults[i].kind, kind) && (!a || !strcmp(faults[i].a, a) || !strcmp(faults[i].a, "*")) &&
		    (!b || !strcmp(faults[i].b, b)))
			return &faults[i];
	return NULL;
}

static double factor(const char *element, const char *test)
{
	const struct fault *f = find("slow", element, test);

	return f ? atof(f->c) : 1.0;
}

static int skipped(const char *probe)
{
	const struct fault *s = find("skip", probe, NULL), *n = find("notbuilt", probe, NULL);

	if (!s && !n)
		return 0;
	printf("{\"type\":\"skip\",\"kind\":\"probe\",\"name\":\"%s\",\"reason\":\"%s\",\"elapsed_s\":%.3f}\n",
	       probe, s ? "skipped: no GPU visible to this process" : "not built: built without CUDA",
	       elapsed);
	return 1;
}

static void stats(const char *name, double median, double cv)
{
	printf("\"%s\":{\"n\":20,\"min\":%.4g,\"median\":%.4g,\"mean\":%.4g,\"max\":%.4g,\"p99\":%.4g,"
	       "\"p999\":%.4g,\"cv\":%.4g}", name, median * (1 - 2 * cv), median, median,
	       median * (1 + 3 * cv), median * (1 + 2.5 * cv), median * (1 + 2.9 * cv), cv);
}

/* one bandwidth record of a probe; rate 0 = none */
static void bw(const char *probe, const char *test, const char *scope, const char *element,
	       const char *host, const char *peer, long long bytes, double gbps, double rate, int bits)
{
	double v = gbps * factor(element, test) * noise();

	if (find("drop", element, NULL))
		return;
	elapsed += 0.001;
	printf("{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"%s\",\"test\":\"%s\","
	       "\"scope\":\"%s\",\"element\":\"%s\",\"host\":\"%s\",", probe, test, scope, element, host);
	if (peer)
		printf("\"peer\":\"%s\",", peer);
	if (!strcmp(probe, "ib"))
		printf("\"transport\":\"verbs\",");
	printf("\"bytes\":%lld,\"bw_GBps\":%.6g,", bytes, v);
	if (bits)
		printf("\"bw_Gbps\":%.6g,", v * 8);
	stats("bw_stats_GBps", v, 0.004);
	if (rate > 0)
		printf(",\"rate_GBps\":%.6g,\"pct_of_rate\":%.4g", rate, 100 * v / rate);
	printf(",\"elapsed_s\":%.3f}\n", elapsed);
}

static void lat(const char *probe, const char *test, const char *scope, const char *element,
		const char *host, int bytes, double us)
{
	double f = factor(element, test);

	if (find("drop", element, NULL))
		return;
	elapsed += 0.001;
	printf("{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"%s\",\"test\":\"%s\","
	       "\"scope\":\"%s\",\"element\":\"%s\",\"host\":\"%s\",\"bytes\":%d,", probe, test, scope,
	       element, host, bytes);
	stats("lat_us", us / f * noise(), 0.02);
	printf(",\"elapsed_s\":%.3f}\n", elapsed);
}

static void header(void)
{
	printf("{\"type\":\"run\",\"schema\":1,\"run_id\":\"5eed5eed5eed5eed\",\"start_utc\":\"2026-11-30T06:00:00Z\","
	       "\"tool\":\"ccprobe\",\"version\":\"0.1.0\",\"argv\":[\"ccprobe\",\"pcie\",\"nvlink\",\"hbm\",\"ib\",\"all_reduce\"],"
	       "\"world_size\":%d,\"nodes\":%d,\"hosts\":[", nodes * gpus, nodes);
	for (int n = 0; n < nodes; n++) {
		printf("%s{\"name\":\"node%d\",\"ranks\":[", n ? "," : "", n);
		for (int g = 0; g < gpus; g++)
			printf("%s%d", g ? "," : "", n * gpus + g);
		printf("]}");
	}
	printf("],\"ranks_per_node\":%d,\"mpi_library\":\"Open MPI v4.1.4\",\"mpi_thread_level\":\"multiple\","
	       "\"features\":{\"mpi\":true,\"cuda\":true,\"nccl\":true,\"verbs\":true},"
	       "\"versions\":{\"cuda_runtime\":\"13.0\",\"nccl\":\"2.27.3\"},"
	       "\"options\":{\"min_bytes\":1048576,\"max_bytes\":8589934592,\"step_factor\":2,\"backend\":\"nccl\"},"
	       "\"elapsed_s\":0}\n", gpus);
}

static const char *version(const char *host, const char *key, const char *dflt)
{
	const struct fault *f = find("version", host, key);

	return f ? f->c : dflt;
}

static void inventories(void)
{
	char host[32];

	for (int n = 0; n < nodes; n++) {
		const struct fault *rl;
		int id = n;   /* whose devices the inventory lists: its own, or relabelled another's */

		snprintf(host, sizeof(host), "node%d", n);
		rl = find("relabel", host, NULL);
		if (rl && !strncmp(rl->c, "node", 4))
			id = atoi(rl->c + 4);
		printf("{\"type\":\"inventory\",\"kind\":\"gpu\",\"host\":\"%s\",\"gpus\":[", host);
		for (int g = 0; g < gpus; g++)
			printf("%s{\"index\":%d,\"element\":\"%s/gpu%d\",\"name\":\"%s\","
			       "\"uuid\":\"GPU-5eed%04x-0000-4000-8000-%012d\","
			       "\"pcie\":{\"current\":{\"gen\":5,\"width\":16},\"max\":{\"gen\":5,\"width\":16}}}",
			       g ? "," : "", g, host, g, model, id & 0xffff, g + 1);
		printf("],\"versions\":{\"driver\":\"%s\",\"cuda_runtime\":\"%s\",\"nccl\":\"%s\"},\"elapsed_s\":0.1}\n",
		       version(host, "driver", "580.65"), version(host, "cuda_runtime", "13.0"),
		       version(host, "nccl", "2.27.3"));
		/* as probes/ib.c writes it (docs/rdma.md): one port per device, each a rail */
		printf("{\"type\":\"inventory\",\"kind\":\"rdma\",\"host\":\"%s\",\"transport\":\"verbs\","
		       "\"devices\":[", host);
		for (int g = 0; g < gpus; g++)
			printf("%s{\"name\":\"mlx5_%d\",\"node_guid\":\"b8ce:f603:%04x:%04x\","
			       "\"ports\":[{\"port\":1,\"state\":\"ACTIVE\","
			       "\"rate_Gbps\":%g,\"rate_GBps\":%g,\"rail\":%d}]}", g ? "," : "", g,
			       id & 0xffff, g + 1, ib_rate * 8, ib_rate, g);
		printf("],\"rails\":[");
		for (int g = 0; g < gpus; g++)
			printf("%s\"mlx5_%d:1\"", g ? "," : "", g);
		printf("],\"versions\":{");
		for (int g = 0; g < gpus; g++) {
			char key[32];

			snprintf(key, sizeof(key), "fw:mlx5_%d", g);
			printf("%s\"%s\":\"%s\"", g ? "," : "", key, version(host, key, "28.39.1002"));
		}
		printf("},\"elapsed_s\":0.1}\n");
	}
}

static void gpu_probes(void)
{
	char host[32], el[96];
	static const long long sizes[] = { 33554432, 67108864, 134217728, 268435456 };

	for (int n = 0; n < nodes; n++) {
		snprintf(host, sizeof(host), "node%d", n);
		for (int g = 0; g < gpus && !find("skip", "pcie", NULL) && !find("notbuilt", "pcie", NULL); g++) {
			snprintf(el, sizeof(el), "%s/gpu%d", host, g);
			for (int s = 0; s < 4; s++) {
				double ramp = s == 0 ? 0.93 : 1.0;   /* the plateau starts at 64 MiB */

				double r = pcie_rate / 63.0;

				bw("pcie", "h2d", "gpu", el, host, NULL, sizes[s], 54.2 * r * ramp, pcie_rate, 0);
				bw("pcie", "d2h", "gpu", el, host, NULL, sizes[s], 53.6 * r * ramp, pcie_rate, 0);
				bw("pcie", "bidir", "gpu", el, host, NULL, sizes[s], 98.0 * r * ramp, 2 * pcie_rate, 0);
			}
			bw("pcie", "h2d_all", "gpu", el, host, NULL, sizes[3], 48.5 * pcie_rate / 63.0, pcie_rate, 0);
			bw("pcie", "d2h_all", "gpu", el, host, NULL, sizes[3], 47.9 * pcie_rate / 63.0, pcie_rate, 0);
		}
		for (int g = 0; g < gpus && !find("skip", "nvlink", NULL) && !find("notbuilt", "nvlink", NULL); g++)
			for (int h = 0; h < gpus; h++) {
				if (h == g)
					continue;
				snprintf(el, sizeof(el), "%s/gpu%d-gpu%d", host, g, h);
				bw("nvlink", "p2p_uni", "gpu_pair", el, host, NULL, sizes[3], 374.0, 450.0, 0);
				if (h > g) {
					bw("nvlink", "p2p_bidir", "gpu_pair", el, host, NULL, sizes[3], 741.0, 900.0, 0);
					lat("nvlink", "p2p_lat", "gpu_pair", el, host, 4, 2.1);
				}
			}
		for (int g = 0; g < gpus && !find("skip", "hbm", NULL) && !find("notbuilt", "hbm", NULL); g++) {
			snprintf(el, sizeof(el), "%s/gpu%d", host, g);
			bw("hbm", "copy", "gpu", el, host, NULL, 1073741824, 2950.0, 3350.0, 0);
		}
	}
	for (const char *const *p = (const char *const[]){ "pcie", "nvlink", "hbm", NULL }; *p; p++)
		skipped(*p);
}

static void ib(void)
{
	char host[32], peer[32], el[160], nic[64];

	if (skipped("ib"))
		return;
	for (int n = 0; n < nodes; n++) {
		int m = (n + 1) % nodes;

		snprintf(host, sizeof(host), "node%d", n);
		snprintf(peer, sizeof(peer), "node%d", m);
		for (int g = 0; g < gpus; g++) {
			snprintf(nic, sizeof(nic), "%s/mlx5_%d:1", host, g);
			if (nodes > 1 && (n < m || nodes > 2)) {
				snprintf(el, sizeof(el), "%s/mlx5_%d:1-%s/mlx5_%d:1", host, g, peer, g);
				for (long long s = 1048576; s <= 8388608; s *= 8) {
					bw("ib", "write_bw_uni", "rail_pair", el, host, peer, s, 0.98 * ib_rate, ib_rate, 1);
					bw("ib", "write_bw_bidir", "rail_pair", el, host, peer, s, 1.952 * ib_rate, 2 * ib_rate, 1);
				}
				lat("ib", "write_lat", "rail_pair", el, host, 2, 2.4);
			}
			const struct fault *c = find("counter", nic, NULL);

			printf("{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"ib\",\"test\":\"counters\","
			       "\"scope\":\"nic\",\"element\":\"%s\",\"host\":\"%s\",\"transport\":\"verbs\",\"counter_delta\":{"
			       "\"symbol_error\":%s,\"link_downed\":%s,\"port_rcv_errors\":0},\"elapsed_s\":%.3f}\n",
			       nic, host, c && !strcmp(c->b, "symbol_error") ? c->c : "0",
			       c && !strcmp(c->b, "link_downed") ? c->c : "0", elapsed);
		}
	}
}

static void collectives(void)
{
	double f = factor("cluster", "all_reduce");
	int ranks = nodes * gpus;

	if (find("skip", "all_reduce", NULL)) {
		printf("{\"type\":\"skip\",\"kind\":\"collective\",\"name\":\"all_reduce\",\"backend\":\"nccl\","
		       "\"reason\":\"skipped: no GPU visible to this process\",\"elapsed_s\":%.3f}\n", elapsed);
		return;
	}
	for (long long s = 1048576; s <= 8589934592LL; s *= 2) {
		/* busbw ramps up to a plateau from 1 GiB on */
		double top = nodes == 1 ? 478.0 : 375.0;
		double bus = top * (s >= 1073741824LL ? 1.0 : (double)s / (s + 134217728.0)) * f * noise();
		double alg = bus / (2.0 * (ranks - 1) / ranks);
		double t = s / alg / 1e3;

		elapsed += 0.01;
		printf("{\"type\":\"measurement\",\"kind\":\"collective\",\"name\":\"all_reduce\",\"backend\":\"nccl\","
		       "\"memory\":\"device\",\"dtype\":\"float\",\"op\":\"sum\",\"bytes\":%lld,\"count\":%lld,"
		       "\"ranks\":%d,\"nodes\":%d,\"iters\":20,\"warmup\":5,\"reps\":5,\"check_iters\":1,\"root\":null,",
		       s, s / 4, ranks, nodes);
		stats("time_us", t, 0.01);
		printf(",\"algbw_GBps\":%.6g,\"busbw_GBps\":%.6g,\"busbw_factor\":%.6g,\"wrong\":0,"
		       "\"slowest\":{\"rank\":0,\"host\":\"node0\"},\"elapsed_s\":%.3f}\n", alg, bus,
		       2.0 * (ranks - 1) / ranks, elapsed);
	}
}

/* one-way bandwidth of every pair, both directions, as ccprobe netpair writes it */
static void netpair(void)
{
	char a[32], b[32], el[80];

	if (nonetpair || nodes < 2)
		return;
	for (int i = 0; i < nodes; i++)
		for (int k = i + 1; k < nodes; k++) {
			snprintf(el, sizeof(el), "node%d-node%d", i, k);
			for (int dir = 0; dir < 2; dir++) {
				int s = dir ? k : i, d = dir ? i : k;
				double v = 49.0 * factor(el, "bw_uni") * noise();

				snprintf(a, sizeof(a), "node%d", s);
				snprintf(b, sizeof(b), "node%d", d);
				elapsed += 0.001;
				printf("{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"netpair\",\"test\":\"bw_uni\","
				       "\"pass\":1,\"stage\":\"all-pairs\",\"round\":0,\"scope\":\"link\",\"element\":\"%s\","
				       "\"host\":\"%s\",\"peer\":\"%s\",\"src\":\"%s\",\"dst\":\"%s\",\"src_node\":%d,"
				       "\"dst_node\":%d,\"bytes\":4194304,\"bw_GBps\":%.6g,\"bw_Gbps\":%.6g",
				       el, a, b, a, b, s, d, v, v * 8);
				if (netrate)
					printf(",\"rate_GBps\":50,\"pct_of_rate\":%.4g", 100 * v / 50);
				printf(",\"window\":16,\"windows\":40,\"time_s\":0.15,\"elapsed_s\":%.3f}\n", elapsed);
			}
		}
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct fault *f = &faults[nfaults];
		char *eq = strchr(argv[i], '=');

		if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			nodes = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "-g") && i + 1 < argc) {
			gpus = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
			rng = strtoull(argv[++i], NULL, 10) | 1;
		} else if (!strcmp(argv[i], "-p") && i + 1 < argc) {
			pcie_rate = atof(argv[++i]);
		} else if (!strcmp(argv[i], "-i") && i + 1 < argc) {
			ib_rate = atof(argv[++i]);
		} else if (!strcmp(argv[i], "-m") && i + 1 < argc) {
			/* a case's gen line has no spaces: '_' stands for one ("NVIDIA_H100_PCIe") */
			model = argv[++i];
			for (char *q = argv[i]; *q; q++)
				if (*q == '_')
					*q = ' ';
		} else if (!strcmp(argv[i], "noend")) {
			noend = 1;
		} else if (!strcmp(argv[i], "nonetpair")) {
			nonetpair = 1;
		} else if (!strcmp(argv[i], "netrate")) {
			netrate = 1;
		} else if (eq && nfaults < MAX_FAULTS && eq - argv[i] < (long)sizeof(f->kind)) {
			/* kind=A:B:C, where A (an element) may itself hold one ':' (mlx5_0:1) */
			char *rest = eq + 1, *p3 = strrchr(rest, ':'), *p2;

			memcpy(f->kind, argv[i], eq - argv[i]);
			if (p3) {
				*p3 = '\0';
				p2 = strrchr(rest, ':');
				if (p2 && (!strcmp(f->kind, "slow") || !strcmp(f->kind, "version") ||
					   !strcmp(f->kind, "counter"))) {
					*p2 = '\0';
					snprintf(f->b, sizeof(f->b), "%s", p2 + 1);
				} else {
					snprintf(f->b, sizeof(f->b), "%s", "");
				}
				snprintf(f->c, sizeof(f->c), "%s", p3 + 1);
			}
			snprintf(f->a, sizeof(f->a), "%s", rest);
			nfaults++;
		} else {
			fprintf(stderr, "usage: gen_results [-n NODES] [-g GPUS] [-s SEED] [-m MODEL] [FAULT...]\n");
			return 2;
		}
	}
	if (nodes < 1 || gpus < 1) {
		fprintf(stderr, "gen_results: need at least one node and one GPU\n");
		return 2;
	}
	header();
	inventories();
	gpu_probes();
	ib();
	collectives();
	netpair();
	if (!noend)
		printf("{\"type\":\"end\",\"status\":\"complete\",\"elapsed_s\":%.3f,\"failures\":0,\"exit_code\":0}\n",
		       elapsed + 1);
	return 0;
}
