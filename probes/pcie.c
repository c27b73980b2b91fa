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
#include "../gpu/gpu.h"
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

#ifdef HAVE_CUDA

#include "../core/stats.h"
#include "../core/timer.h"
#include "../core/watchdog.h"

#include <stdlib.h>
#include <unistd.h>

#define LOAD_COPIES 8     /* largest-size copies queued while the link is read under load */
#define LOAD_READS 200    /* at most this many readings while they run, LOAD_NAP_US apart */
#define LOAD_NAP_US 100

#define PCIE_MAX_SIZES 64

enum pcie_test { T_H2D, T_D2H, T_BIDIR };
static const char *const test_names[] = { "h2d", "d2h", "bidir" };

struct pcie {
	struct cc_run *run;
	struct gpu_ctx g;
	struct pci_link loaded;          /* the link read while copies ran (loaded_src NULL: none) */
	const char *loaded_src;
	struct gpu_host_buf hsrc, hdst;  /* pinned, on the GPU's NUMA node */
	void *dsrc, *ddst;               /* device buffers */
	cudaStream_t s[2];
	size_t sizes[PCIE_MAX_SIZES];
	size_t nsizes;
	double *span, *each, *bw, *nbw;  /* [reps], [2 reps], [reps], [2 reps] */
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

static json_t *link_json(const struct pci_link *l, const char *state, const char *src)
{
	return json_pack("{s:i, s:i, s:i, s:i, s:s, s:s}", "gen", l->cur_gen, "width", l->cur_width,
			 "max_gen", l->max_gen, "max_width", l->max_width, "state", state,
			 "source", src ? src : "sysfs");
}

/*
 * The link beside the measured value: as read under load (what it trains
 * to; NVIDIA GPUs idle at 2.5 GT/s), the idle reading in link_idle, the
 * rate and downtrained judged on the loaded reading against max_*.
 */
static void add_rate(struct pcie *p, json_t *rec, double bw, int both_ways)
{
	const struct pci_link *l = p->loaded_src ? &p->loaded : &p->g.link;
	double rate = l->cur_GBps * (both_ways ? 2 : 1);

	/* null when neither NVML nor sysfs knows the link (a VM, a missing device folder) */
	if (!l->cur_gen && !l->max_gen) {
		json_object_set_new(rec, "link", json_null());
		return;
	}
	json_object_set_new(rec, "link", link_json(l, p->loaded_src ? "loaded" : "idle",
						   p->loaded_src ? p->loaded_src : p->g.link_source));
	json_object_set_new(rec, "link_idle", link_json(&p->g.link, "idle", p->g.link_source));
	if (l->cur_gen && l->max_gen && l->cur_width && l->max_width)
		json_object_set_new(rec, "downtrained", json_boolean(l->cur_gen < l->max_gen ||
								     l->cur_width < l->max_width));
	if (rate > 0) {
		json_object_set_new(rec, "rate_GBps", json_real(rate));
		json_object_set_new(rec, "pct_of_rate", json_real(100.0 * bw / rate));
	}
}

/*
 * Reads the link while LOAD_COPIES host-to-device copies of the largest
 * size run (no gate), keeping the fastest reading: the link retrains
 * within microseconds of traffic. Returns 0, or -1 with p->why.
 */
static int link_under_load(struct pcie *p)
{
	size_t bytes = p->sizes[p->nsizes - 1];
	struct pci_link l;
	const char *src;
	cudaError_t e = cudaSuccess;

	p->loaded_src = NULL;
	for (int k = 0; k < LOAD_COPIES && e == cudaSuccess; k++)
		e = cudaMemcpyAsync(p->ddst, p->hsrc.p, bytes, cudaMemcpyHostToDevice, p->s[0]);
	for (int k = 0; k < LOAD_READS && e == cudaSuccess; k++) {
		if (gpu_read_link(p->g.bus_id, &l, &src) == 0 &&
		    (!p->loaded_src || l.cur_GBps > p->loaded.cur_GBps)) {
			p->loaded = l;
			p->loaded_src = src;
		}
		if (cudaStreamQuery(p->s[0]) != cudaErrorNotReady)
			break;
		usleep(LOAD_NAP_US);
	}
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(p->s[0]);
	return e == cudaSuccess ? 0 : gpu_cuda_fail(e, "pcie link under load", p->why,
						    sizeof(p->why));
}

/*
 * One test at one size on this rank's GPU; appends its record. bidir, as
 * nvbandwidth: each direction is timed while the other copies twice as
 * much, so it runs wholly against traffic (same-size copies would leave
 * one direction's tail running alone and inflate the sum); bw is the sum
 * of the two directions per repetition.
 */
static int measure(struct pcie *p, enum pcie_test t, size_t bytes)
{
	const struct cc_options *o = p->run->opt;
	struct gpu_copy c[2], *use = c;
	int reps = o->reps;
	double moved = (double)bytes * o->iters;
	json_t *rec;
	double bw;

	setup_copies(p, bytes, c);
	if (t == T_D2H)
		use = &c[1];
	if (t != T_BIDIR) {
		if (gpu_sample(use, 1, o->warmup, o->iters, reps, p->span, NULL, p->why,
			       sizeof(p->why)))
			return -1;
		gpu_rates_GBps(p->span, reps, 1, moved, p->bw);
	} else {
		double *dir = p->each;   /* [reps] h2d, then [reps] d2h */

		for (int i = 0; i < 2; i++) {
			c[0].times = i ? 2 : 1;
			c[1].times = i ? 1 : 2;
			if (gpu_sample(c, 2, o->warmup, o->iters, reps, p->span, p->nbw, p->why,
				       sizeof(p->why)))
				return -1;
			/* p->nbw holds [r * 2 + stream]: the timed stream is i */
			gpu_rates_GBps(p->nbw + i, reps, 2, moved, dir + (size_t)i * reps);
		}
		for (int r = 0; r < reps; r++)
			p->bw[r] = dir[r] + dir[reps + r];
	}
	rec = new_record(p, test_names[t], bytes);
	bw = gpu_bw_fields(rec, p->bw, reps);
	if (t == T_BIDIR) {
		json_object_set_new(rec, "h2d_GBps", json_real(stats_median(p->each, (size_t)reps)));
		json_object_set_new(rec, "d2h_GBps", json_real(stats_median(p->each + reps,
									    (size_t)reps)));
		json_object_set_new(rec, "method", json_string(
			"each direction timed while the other copies twice as much; bw = the sum"));
	}
	add_rate(p, rec, bw, t == T_BIDIR);
	json_array_append_new(p->recs, rec);
	return 0;
}

/* Every test and size on this rank's GPU, after reading its link under load. */
static int per_gpu(struct pcie *p)
{
	if (link_under_load(p))
		return -1;
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
	p->nbw = calloc((size_t)reps * 2, sizeof(double));
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

/* Ends a phase (run_phase_end), its name before the failure text. */
static int phase_ok(struct pcie *p, int failed, const char *phase)
{
	char why[400];

	snprintf(why, sizeof(why), "%s: %s", phase, p->why);
	return run_phase_end(p->run, "pcie", failed, why) == 0;
}

static int pcie_run(struct cc_run *run)
{
	struct mpictx *mpi = run->mpi;
	struct pcie p = { .run = run };
	char why[400], what[64];
	int rc, maxlocal = 0, failed = 0;
	json_t *all = json_array();

	rc = gpu_open(run, "pcie", &p.g, why, sizeof(why));
	if (rc) {
		json_decref(all);
		return gpu_open_failed(run, "pcie", rc, why);
	}
	p.recs = json_array();
	p.nsizes = gpu_copy_sizes(run->opt, PCIE_MIN, PCIE_MAX, p.sizes, PCIE_MAX_SIZES);
	watchdog_arm("gpu setup", json_pack("{s:s, s:s}", "kind", "probe", "probe", "pcie"));
	failed = setup(&p) != 0;
	watchdog_disarm();
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

#endif /* HAVE_CUDA */

const struct probe probe_pcie = {
	.name = "pcie",
	.phase = PHASE_NODE,
	.estimate = pcie_estimate,
	.summary = "host<->device copy bandwidth per GPU and all GPUs at once, vs the PCIe link rate",
	.params = gpu_params,
#ifdef HAVE_CUDA
	.check = gpu_check_params,
	.run = pcie_run,
#else
	.missing = "built without CUDA",
#endif
};
