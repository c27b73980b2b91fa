/*
 * pcie: host <-> device bandwidth of every GPU through its copy engines, from
 * pinned host memory on the GPU's NUMA node, compared with the theoretical
 * rate of the PCIe link sysfs reports. docs/gpu.md has the method.
 *
 * Tests: h2d, d2h and bidir (both at once) per GPU and size, one GPU of a
 * host at a time (local ranks take turns; hosts run in parallel), then
 * h2d_all and d2h_all: every GPU of a host at once at the largest size, so
 * a shared PCIe switch or root port shows as a drop, with the host's
 * aggregate in h2d_all_node / d2h_all_node.
 */
#include "gpu.h"
#include "probe.h"

#define PCIE_MIN ((size_t)64 << 10)   /* default sweep when neither -b nor -e is given */
#define PCIE_MAX ((size_t)256 << 20)

/*
 * The GPUs of a host one at a time (hosts at once): h2d, d2h and bidir over
 * the sweep at a nominal 50 GB/s (PCIe Gen5 x16), then all GPUs at once.
 */
static double pcie_estimate(const struct cc_options *o)
{
	return o->plan_rpn * 4 * probe_sweep_seconds(o, PCIE_MIN, PCIE_MAX, 50, 1) + 2;
}

#ifndef HAVE_CUDA
const struct probe probe_pcie = {
	.name = "pcie",
	.phase = PHASE_NODE,
	.estimate = pcie_estimate,
	.summary = "host<->device copy bandwidth per GPU and all GPUs at once, vs the PCIe link rate",
	.missing = "built without CUDA",
	.params = gpu_params,
};
#else

#include "../core/stats.h"
#include "../core/timer.h"
#include "../core/watchdog.h"

#include <stdlib.h>

#define PCIE_MAX_SIZES 64

enum pcie_test { T_H2D, T_D2H, T_BIDIR };
static const char *const test_names[] = { "h2d", "d2h", "bidir" };

struct pcie {
	struct cc_run *run;
	struct gpu_ctx g;
	struct gpu_host_buf hsrc, hdst;  /* pinned, on the GPU's NUMA node */
	void *dsrc, *ddst;               /* device buffers */
	cudaStream_t s[2];
	size_t sizes[PCIE_MAX_SIZES];
	size_t nsizes;
	double *span, *each, *bw, *nbw;  /* [reps], [2 reps], [reps], [reps] */
	json_t *recs;                    /* this rank's records */
	char why[300];                   /* this rank's failure */
};

/* The two copy streams: [0] host -> device, [1] device -> host. */
static void setup_copies(struct pcie *p, size_t bytes, struct gpu_copy c[2])
{
	c[0] = (struct gpu_copy){ .dst = p->ddst, .src = p->hsrc.p, .bytes = bytes, .dev = p->g.dev,
				  .peer_dst = -1, .peer_src = -1, .stream = p->s[0], .gate = 1 };
	c[1] = (struct gpu_copy){ .dst = p->hdst.p, .src = p->dsrc, .bytes = bytes, .dev = p->g.dev,
				  .peer_dst = -1, .peer_src = -1, .stream = p->s[1], .gate = 1 };
}

static json_t *new_record(struct pcie *p, const char *test, size_t bytes)
{
	const struct cc_options *o = p->run->opt;

	/* element and gpu are named by rank 0 from bus_id (gpu_emit) */
	return json_pack("{s:s, s:s, s:s, s:s, s:n, s:s, s:s, s:I, s:i, s:i, s:i, s:o}",
			 "kind", "probe", "name", "pcie", "test", test, "scope", "gpu",
			 "element", "host", p->run->mpi->host, "bus_id", p->g.bus_id,
			 "bytes", (json_int_t)bytes, "iters", o->iters, "reps", o->reps,
			 "warmup", o->warmup,
			 "host_numa", p->hsrc.numa_node >= 0 ? json_integer(p->hsrc.numa_node) :
							      json_null());
}

/* The link's theoretical rate beside the measured value. */
static void add_rate(struct pcie *p, json_t *rec, double bw, int both_ways)
{
	double rate = p->g.link.cur_GBps * (both_ways ? 2 : 1);

	/* null when sysfs does not know the link (a VM, a missing device folder) */
	json_object_set_new(rec, "link", !p->g.link.cur_gen && !p->g.link.max_gen ? json_null() :
			    json_pack("{s:i, s:i, s:i, s:i}", "gen", p->g.link.cur_gen,
				      "width", p->g.link.cur_width, "max_gen", p->g.link.max_gen,
				      "max_width", p->g.link.max_width));
	if (rate > 0) {
		json_object_set_new(rec, "rate_GBps", json_real(rate));
		json_object_set_new(rec, "pct_of_rate", json_real(100.0 * bw / rate));
	}
}

/* One test at one size on this rank's GPU; appends its record. */
static int measure(struct pcie *p, enum pcie_test t, size_t bytes)
{
	const struct cc_options *o = p->run->opt;
	struct gpu_copy c[2], *use = c;
	int n = t == T_BIDIR ? 2 : 1, reps = o->reps;
	double moved = (double)bytes * o->iters * n;
	json_t *rec;
	double bw;

	setup_copies(p, bytes, c);
	if (t == T_D2H)
		use = &c[1];
	if (gpu_sample(use, n, o->warmup, o->iters, reps, p->span, p->each, p->why,
		       sizeof(p->why)))
		return -1;
	gpu_rates_GBps(p->span, reps, 1, moved, p->bw);
	rec = new_record(p, test_names[t], bytes);
	bw = gpu_bw_fields(rec, p->bw, reps);
	if (t == T_BIDIR) {
		/* each direction on its own, measured while the other ran */
		for (int i = 0; i < 2; i++) {
			gpu_rates_GBps(p->each + i, reps, 2, (double)bytes * o->iters, p->bw);
			json_object_set_new(rec, i ? "d2h_GBps" : "h2d_GBps",
					    json_real(stats_median(p->bw, (size_t)reps)));
		}
	}
	add_rate(p, rec, bw, t == T_BIDIR);
	json_array_append_new(p->recs, rec);
	return 0;
}

/* Every test and size on this rank's GPU. */
static int per_gpu(struct pcie *p)
{
	for (int t = T_H2D; t <= T_BIDIR; t++)
		for (size_t i = 0; i < p->nsizes; i++)
			if (measure(p, (enum pcie_test)t, p->sizes[i]))
				return -1;
	return 0;
}

/*
 * Every GPU of a host at once: each repetition starts after a barrier of the
 * host's ranks; per GPU the copy engines' time (events), for the host the
 * wall clock from the first start to the last end (one clock per host).
 */
static void all_at_once(struct pcie *p, enum pcie_test t, int *failed)
{
	const struct cc_options *o = p->run->opt;
	struct mpictx *mpi = p->run->mpi;
	size_t bytes = p->sizes[p->nsizes - 1];
	int has = p->g.dev >= 0 && !*failed, reps = o->reps, ngpu = 0;
	double *node_bw = p->nbw;
	struct gpu_copy c[2];
	char test[32];

	setup_copies(p, bytes, c);
	MPI_Allreduce(&has, &ngpu, 1, MPI_INT, MPI_SUM, mpi->local);
	if (has && o->warmup > 0 &&
	    gpu_time_copies(&c[t == T_D2H], 1, o->warmup, p->span, p->why, sizeof(p->why))) {
		*failed = 1;
		has = 0;
	}
	for (int r = 0; r < reps; r++) {
		double t0, t1, first, last, moved = has ? (double)bytes * o->iters : 0.0, total;

		MPI_Barrier(mpi->local);
		t0 = timer_now();
		if (has && gpu_time_copies(&c[t == T_D2H], 1, o->iters, &p->span[r], p->why,
					   sizeof(p->why))) {
			*failed = 1;
			has = 0;
			moved = 0.0;
		}
		t1 = timer_now();
		if (!has)
			t0 = 1e300, t1 = -1e300;
		MPI_Allreduce(&t0, &first, 1, MPI_DOUBLE, MPI_MIN, mpi->local);
		MPI_Allreduce(&t1, &last, 1, MPI_DOUBLE, MPI_MAX, mpi->local);
		MPI_Allreduce(&moved, &total, 1, MPI_DOUBLE, MPI_SUM, mpi->local);
		node_bw[r] = last > first ? total / (last - first) / 1e9 : 0.0;
		if (has)
			p->bw[r] = p->span[r] > 0 ? moved / p->span[r] / 1e9 : 0.0;
	}
	snprintf(test, sizeof(test), "%s_all", test_names[t]);
	if (has) {
		json_t *rec = new_record(p, test, bytes);
		double bw = gpu_bw_fields(rec, p->bw, reps);

		json_object_set_new(rec, "gpus_at_once", json_integer(ngpu));
		add_rate(p, rec, bw, 0);
		json_array_append_new(p->recs, rec);
	}
	if (mpi->local_rank == 0 && ngpu > 0) {
		json_t *rec;

		snprintf(test, sizeof(test), "%s_all_node", test_names[t]);
		rec = json_pack("{s:s, s:s, s:s, s:s, s:n, s:s, s:I, s:i, s:i, s:i}",
				"kind", "probe", "name", "pcie", "test", test, "scope", "node",
				"element", "host", mpi->host, "bytes", (json_int_t)bytes,
				"iters", o->iters, "reps", reps, "gpus_at_once", ngpu);
		gpu_bw_fields(rec, node_bw, reps);
		json_array_append_new(p->recs, rec);
	}
}

static int setup(struct pcie *p)
{
	size_t max = p->sizes[p->nsizes - 1];
	int reps = p->run->opt->reps;
	cudaError_t e;

	p->span = calloc((size_t)reps, sizeof(double));
	p->each = calloc((size_t)reps * 2, sizeof(double));
	p->bw = calloc((size_t)reps, sizeof(double));
	p->nbw = calloc((size_t)reps, sizeof(double));
	if (!p->span || !p->each || !p->bw || !p->nbw) {
		snprintf(p->why, sizeof(p->why), "out of memory");
		return -1;
	}
	if (p->g.dev < 0)
		return 0;
	if (gpu_host_alloc(&p->hsrc, max, p->g.link.numa_node, p->why, sizeof(p->why)) ||
	    gpu_host_alloc(&p->hdst, max, p->g.link.numa_node, p->why, sizeof(p->why)))
		return -1;
	if ((e = cudaMalloc(&p->dsrc, max)) != cudaSuccess ||
	    (e = cudaMalloc(&p->ddst, max)) != cudaSuccess ||
	    (e = cudaMemset(p->dsrc, 0, max)) != cudaSuccess ||
	    (e = cudaStreamCreateWithFlags(&p->s[0], cudaStreamNonBlocking)) != cudaSuccess ||
	    (e = cudaStreamCreateWithFlags(&p->s[1], cudaStreamNonBlocking)) != cudaSuccess ||
	    /* the memset ran on the default stream, which the copy streams do not wait for */
	    (e = cudaDeviceSynchronize()) != cudaSuccess)
		return gpu_cuda_fail(e, "pcie setup", p->why, sizeof(p->why));
	return 0;
}

static void teardown(struct pcie *p)
{
	if (p->g.dev >= 0) {
		for (int i = 0; i < 2; i++)
			if (p->s[i])
				cudaStreamDestroy(p->s[i]);
		cudaFree(p->dsrc);
		cudaFree(p->ddst);
		gpu_host_free(&p->hsrc);
		gpu_host_free(&p->hdst);
	}
	free(p->span);
	free(p->each);
	free(p->bw);
	free(p->nbw);
	json_decref(p->recs);
}

static void print_table(struct cc_run *run, json_t *all)
{
	json_t *r;
	size_t i;

	printf("# pcie: copy-engine copies from pinned host memory; median of %d reps x %d copies; "
	       "GB/s = 1e9 bytes/s\n", run->opt->reps, run->opt->iters);
	printf("#%-28s %-13s %12s %9s %9s %9s %9s %7s\n", "element", "test", "size(B)",
	       "bw(GB/s)", "min", "max", "rate", "%rate");
	json_array_foreach(all, i, r) {
		json_t *st = json_object_get(r, "bw_stats_GBps");
		json_t *rate = json_object_get(r, "rate_GBps");

		printf(" %-28s %-13s %12lld %9.2f %9.2f %9.2f", json_string_value(json_object_get(r, "element")),
		       json_string_value(json_object_get(r, "test")),
		       (long long)json_integer_value(json_object_get(r, "bytes")),
		       json_real_value(json_object_get(r, "bw_GBps")),
		       json_real_value(json_object_get(st, "min")),
		       json_real_value(json_object_get(st, "max")));
		if (rate)
			printf(" %9.2f %7.1f\n", json_real_value(rate),
			       json_real_value(json_object_get(r, "pct_of_rate")));
		else
			printf(" %9s %7s\n", "-", "-");
	}
	fflush(stdout);
}

/* Writes the records measured so far (collective); rank 0 keeps them in all for the table. */
static void emit(struct pcie *p, json_t *all)
{
	json_t *got = gpu_emit(p->run, p->recs);

	p->recs = json_array();
	if (got)
		json_array_extend(all, got);
	json_decref(got);
}

/* Ends a phase (gpu_phase_end), its name before the failure text. */
static int phase_ok(struct pcie *p, int failed, const char *phase)
{
	char why[400];

	snprintf(why, sizeof(why), "%s: %s", phase, p->why);
	return gpu_phase_end(p->run, "pcie", failed, why) == 0;
}

static int pcie_run(struct cc_run *run)
{
	struct mpictx *mpi = run->mpi;
	struct pcie p = { .run = run };
	char why[400], what[64];
	int rc, maxlocal = 0, failed = 0;
	json_t *all = json_array();

	rc = gpu_open(run, &p.g, why, sizeof(why));
	if (rc) {
		json_decref(all);
		return gpu_open_failed(run, "pcie", rc, why);
	}
	p.recs = json_array();
	p.nsizes = gpu_copy_sizes(run->opt, PCIE_MIN, PCIE_MAX, p.sizes, PCIE_MAX_SIZES);
	failed = setup(&p) != 0;
	if (!phase_ok(&p, failed, "setup")) {
		teardown(&p);
		json_decref(all);
		return CC_EXIT_RUNTIME;
	}
	/* one GPU of each host at a time: local ranks take turns */
	MPI_Allreduce(&mpi->local_size, &maxlocal, 1, MPI_INT, MPI_MAX, mpi->world);
	for (int turn = 0; turn < maxlocal; turn++) {
		snprintf(what, sizeof(what), "pcie per-GPU, local rank %d", turn);
		watchdog_arm(what, json_pack("{s:s, s:s, s:i}", "kind", "probe", "probe", "pcie",
					     "local_rank", turn));
		if (mpi->local_rank == turn && p.g.dev >= 0 && !failed)
			failed = per_gpu(&p) != 0;
		MPI_Barrier(mpi->world);
		watchdog_disarm();
		emit(&p, all);  /* streamed as each turn ends: nothing measured is lost */
	}
	if (phase_ok(&p, failed, "per-GPU copies")) {
		/* every rank runs both, failed or not, so all meet at the same barriers */
		for (int t = T_H2D; t <= T_D2H; t++) {
			snprintf(what, sizeof(what), "pcie %s_all", test_names[t]);
			watchdog_arm(what, json_pack("{s:s, s:s}", "kind", "probe", "probe", "pcie"));
			all_at_once(&p, (enum pcie_test)t, &failed);
			watchdog_disarm();
			emit(&p, all);
		}
		phase_ok(&p, failed, "all GPUs at once");
	} else {
		failed = 1;
	}
	if (mpi->rank == 0 && !run->opt->quiet)
		print_table(run, all);
	json_decref(all);
	MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, mpi->world);
	teardown(&p);
	return failed ? CC_EXIT_FAIL : CC_EXIT_OK;
}

const struct probe probe_pcie = {
	.name = "pcie",
	.phase = PHASE_NODE,
	.estimate = pcie_estimate,
	.summary = "host<->device copy bandwidth per GPU and all GPUs at once, vs the PCIe link rate",
	.params = gpu_params,
	.check = gpu_check_params,
	.run = pcie_run,
};
#endif
