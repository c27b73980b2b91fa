/*
 * Unit tests: ccdiag's planner (diag/plan.c) with a table in place of
 * ccprobe's registry. The fake's estimates are simple sums, so every plan
 * below is checked by hand: per name, a collective 4 x time per size, +3
 * under --scale, +2 with -b 8, +1 without -n; netpair or ib 4 (1 with
 * --pair-time); a node probe 10; storage 20; trainstep 5 + --train-seconds;
 * under --soak S each name S.
 * Each phase adds the launch, 3 s + 0.01 s per node, rounded to 0.1 s.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../diag/plan.h"
#include "../../report/profile.h"

static const struct { const char *name, *phase; int soak; } table[] = {
	{ "all_reduce", "collectives", 1 }, { "all_gather", "collectives", 1 },
	{ "alltoall", "collectives", 1 }, { "netpair", "pairs", 1 }, { "ib", "pairs", 0 },
	{ "pcie", "node", 0 }, { "nvlink", "node", 0 }, { "hbm", "node", 0 },
	{ "storage", "storage", 0 }, { "dcgm", "node", 0 }, { "trainstep", "train", 0 },
};
#define NTABLE (sizeof(table) / sizeof(table[0]))

static struct { int nodes, rpn; double gbps; int calls; } last;

static const char *fake_phase(void *ctx, const char *name)
{
	(void)ctx;
	for (size_t i = 0; i < NTABLE; i++)
		if (!strcmp(table[i].name, name))
			return table[i].phase;
	return NULL;
}

static int fake_can_soak(void *ctx, const char *name, int nodes)
{
	(void)ctx;
	(void)nodes;
	for (size_t i = 0; i < NTABLE; i++)
		if (!strcmp(table[i].name, name))
			return table[i].soak;
	return 0;
}

static const char *value_of(const struct strv *a, const char *opt)
{
	const char *v = NULL;

	for (int i = 0; i + 1 < a->n; i++)
		if (!strcmp(a->v[i], opt))
			v = a->v[i + 1];
	return v;
}

/* the value of an option given as --opt=value */
static const char *value_of_prefix(const struct strv *a, const char *opt)
{
	for (int i = 0; i < a->n; i++)
		if (!strncmp(a->v[i], opt, strlen(opt)))
			return a->v[i] + strlen(opt);
	return NULL;
}

static double fake_estimate(void *ctx, int nodes, int rpn, double gbps, const struct strv *a,
			    char *err, size_t len)
{
	double tps = value_of(a, "--time-per-size") ? atof(value_of(a, "--time-per-size")) : 2;
	double soak = value_of(a, "--soak") ? atof(value_of(a, "--soak")) : 0, t = 0;
	const char *b = value_of(a, "-b");

	(void)ctx;
	last.nodes = nodes;
	last.rpn = rpn;
	last.gbps = gbps;
	last.calls++;
	if (strv_find(a, "REFUSE") >= 0) {
		snprintf(err, len, "unknown option 'REFUSE'");
		return -1;
	}
	for (int i = 0; i < a->n; i++) {
		const char *ph = fake_phase(NULL, a->v[i]);

		if (!ph || (i > 0 && !strcmp(a->v[i - 1], "--storage-dir")))
			continue;
		if (!strcmp(ph, "train"))
			t += 5 + (value_of_prefix(a, "--train-seconds=") ? atof(value_of_prefix(a, "--train-seconds=")) : 0);
		else if (soak > 0)
			t += soak;
		else if (!strcmp(ph, "collectives"))
			t += 4 * tps + (strv_find(a, "--scale") >= 0 ? 3 : 0) + (b && !strcmp(b, "8") ? 2 : 0) +
			     (strv_find(a, "-n") >= 0 ? 0 : 1);
		else if (!strcmp(ph, "pairs"))
			t += strv_find(a, "--pair-time") >= 0 ? 1 : 4;
		else if (!strcmp(ph, "node") && !strcmp(a->v[i], "dcgm"))
			/* the dcgm probe: its level's minutes (level 4: 90) */
			t += value_of(a, "--dcgm-level") && !strcmp(value_of(a, "--dcgm-level"), "4") ? 5400 : 60;
		else if (!strcmp(ph, "node"))
			t += 10;
		else
			t += 20;
	}
	return t;
}

static const struct plan_registry reg = { fake_phase, fake_can_soak, fake_estimate, NULL };

/* emu-1g's criteria: netpair, all_reduce over MPI with a scaling criterion, storage */
#define EMU "[profile]\nname = t\n[hardware]\ngpus_per_node = 0\n" \
	"[criterion np]\nprobe = netpair\ntest = bw_uni\nmetric = bw_Gbps\nscope = link\nbound = >= 0.25 Gb/s\n" \
	"[criterion ar]\ncollective = all_reduce\nbackend = mpi\nmetric = busbw_GBps\nsize = plateau\nbound = >= 0.02 GB/s\n" \
	"[criterion sc]\ncollective = all_reduce\nbackend = mpi\nmetric = scaling_efficiency\nbound = >= 0.3\nrequired = no\n" \
	"[criterion st]\nprobe = storage\ntest = write\nmetric = bw_GBps\nscope = cluster\nbound = >= 0.01 GB/s\n"
/* an 8-GPU node with 4 NICs of 400 Gb/s: pcie, nvlink, ib, netpair, a single-node all_reduce */
#define GPU "[profile]\nname = g\n[hardware]\ngpus_per_node = 8\nnics_per_node = 4\nnic_rate = 400 Gb/s\n" \
	"[criterion pcie_h2d]\nprobe = pcie\ntest = h2d\nmetric = bw_GBps\nscope = gpu\nbound = >= 48 GB/s\n" \
	"[criterion nvl]\nprobe = nvlink\ntest = p2p\nmetric = bw_GBps\nscope = gpu_pair\nbound = >= 335 GB/s\n" \
	"[criterion ib_bw]\nprobe = ib\ntest = bw_uni\nmetric = bw_Gbps\nscope = rail_pair\nbound = >= 380 Gb/s\n" \
	"[criterion np]\nprobe = netpair\ntest = bw_uni\nmetric = bw_Gbps\nscope = link\nbound = >= 100 Gb/s\n" \
	"[criterion ar1]\ncollective = all_reduce\nnodes = 1\nmetric = busbw_GBps\nsize = plateau\nbound = >= 460 GB/s\n"
#define SOAK_AR "[criterion ar_soak]\ncollective = all_reduce\nbackend = mpi\nmetric = soak_drops\nbound = <= 2\n"
#define SOAK_NP "[criterion np_soak]\nprobe = netpair\nmetric = soak_drops\nscope = link\nbound = <= 2\nrequired = no\n"

/* emu-1g's workload: 1e6 parameters, 4096 tokens a step, 0.05 TFLOP/s x 0.5 */
#define WL "[workload]\nparams = 1e6\nbytes_per_grad = 4\ntokens_per_step = 4096\ntotal_tokens = 1e8\n" \
	"peak_tflops = 0.05\nmfu = 0.5\nbucket_bytes = 256K\n"

static struct profile prof;
static struct plan pl;
static struct plan_input in;
static char err[512];

static void load(const char *text)
{
	char perr[512];

	if (profile_parse_string(&prof, text, "t.ini", perr, sizeof(perr)))
		fail_msg("profile: %s", perr);
	memset(&in, 0, sizeof(in));
	in.prof = &prof;
	in.nodes = 4;
	in.launch = PLAN_EMULATED;
	in.emu_gbps = 1;
	in.ncpu = 4;
	in.tps = "2";
	in.budget_s = -1;
	err[0] = '\0';
}

static int make(void)
{
	return plan_make(&pl, &in, &reg, err, sizeof(err));
}

static void done(void)
{
	plan_free(&pl);
	profile_free(&prof);
}

/* phase k's ccprobe options at level, joined by spaces, in a static buffer */
static const char *args(int k, int level)
{
	static char buf[1024];
	struct strv a = { 0 };
	char *s;

	plan_args(&pl, k, level, &a);
	s = strv_join(&a, " ");
	snprintf(buf, sizeof(buf), "%s", s);
	free(s);
	strv_free(&a);
	return buf;
}

static void near(double got, double want)
{
	if (fabs(got - want) > 1e-9)
		fail_msg("%g, expected %g", got, want);
}

/* DCGM's diagnostics at the level the profile's dcgm.level bound asks, out of ccdiag quick */
static void test_dcgm_level(void **state)
{
	static const char *const dcgm =
		"[criterion dcgm_diag]\nprobe = dcgm\ntest = dcgm_diag\nmetric = dcgm.failed\nscope = gpu\n"
		"size = any\nbound = <= 0\nrequired = no\n"
		"[criterion dcgm_level]\nprobe = dcgm\ntest = dcgm_diag\nmetric = dcgm.level\nscope = gpu\n"
		"size = any\nbound = >= %d\nrequired = no\n";
	char text[4096];

	(void)state;
	snprintf(text, sizeof(text), GPU);
	snprintf(text + strlen(text), sizeof(text) - strlen(text), dcgm, 4);
	load(text);
	assert_int_equal(make(), 0);
	assert_string_equal(pl.ph[0].name, "node");
	assert_string_equal(args(0, 0), "--dcgm-level 4 pcie nvlink dcgm");
	/* level 4 is 90 minutes of the node phase (the fake's 5400 s), and the plan says so */
	assert_true(pl.ph[0].est[0] >= 5400);
	done();
	/* without a dcgm.level criterion: level 1, DCGM's seconds */
	snprintf(text, sizeof(text), "%s%s", GPU, "[criterion dcgm_diag]\nprobe = dcgm\ntest = dcgm_diag\n"
		 "metric = dcgm.failed\nscope = gpu\nsize = any\nbound = <= 0\nrequired = no\n");
	load(text);
	assert_int_equal(make(), 0);
	assert_string_equal(args(0, 0), "--dcgm-level 1 pcie nvlink dcgm");
	done();
	/* quick leaves it out, and its criteria with it */
	snprintf(text, sizeof(text), GPU);
	snprintf(text + strlen(text), sizeof(text) - strlen(text), dcgm, 3);
	load(text);
	in.quick = 1;
	in.nodes = 1;
	assert_int_equal(make(), 0);
	assert_null(strstr(args(0, 0), "dcgm"));
	assert_int_equal(strv_find(&pl.quick_keep, "dcgm_level"), -1);
	done();
}

static void test_emulated_plan(void **state)
{
	(void)state;
	load(EMU);
	assert_int_equal(make(), 0);
	assert_int_equal(pl.nph, 3);
	assert_string_equal(pl.ph[0].name, "pairs");
	assert_int_equal(pl.ph[0].rpn, 1);
	/* the emulated hosts share this machine's 4 cores: netpair at 2 pairs at once */
	assert_string_equal(args(0, 0), "--pair-concurrency 2 netpair");
	near(pl.ph[0].est[0], 7.0);          /* 4 + 3.04 */
	assert_string_equal(pl.ph[1].name, "collectives-mpi");
	assert_int_equal(pl.ph[1].kind, PK_COLLECTIVE);
	assert_string_equal(args(1, 0), "--time-per-size 2 -B mpi -b 8 -e 1M --scale all_reduce");
	near(pl.ph[1].est[0], 17.0);         /* 8 + 3 + 2 + 1 + 3.04 */
	assert_string_equal(pl.ph[2].name, "storage");
	assert_true(pl.ph[2].skipped);       /* no --storage-dir: planned, not run, no time */
	near(pl.ph[2].est[0], 0);
	near(pl.total, 24.0);
	near(last.gbps, 1);                  /* the emulated rate */
	assert_int_equal(pl.level, 0);
	assert_int_equal(pl.unrunnable.n, 0);
	assert_null(pl.soak_note);
	done();
}

static void test_storage_dir_one_argument(void **state)
{
	(void)state;
	load(EMU);
	in.storage_dir = "/mnt/a b;$x*";
	assert_int_equal(make(), 0);
	assert_false(pl.ph[2].skipped);
	{
		struct strv a = { 0 };

		plan_args(&pl, 2, 0, &a);
		assert_int_equal(a.n, 3);
		assert_string_equal(a.v[0], "--storage-dir");
		assert_string_equal(a.v[1], "/mnt/a b;$x*");
		assert_string_equal(a.v[2], "storage");
		strv_free(&a);
	}
	near(pl.ph[2].est[0], 23.0);         /* 20 + 3.04 */
	done();
}

static void test_gpu_plan(void **state)
{
	(void)state;
	load(GPU);
	in.launch = PLAN_MPIRUN;
	in.nodes = 2;
	assert_int_equal(make(), 0);
	assert_int_equal(pl.nph, 3);
	assert_string_equal(pl.ph[0].name, "node");
	assert_int_equal(pl.ph[0].rpn, 8);   /* one rank per GPU */
	assert_string_equal(args(0, 0), "pcie nvlink");
	near(pl.ph[0].est[0], 23.0);         /* 20 + 3.02 */
	assert_string_equal(pl.ph[1].name, "pairs");
	assert_int_equal(pl.ph[1].rpn, 4);   /* ib: one rank per NIC */
	/* netpair judged against the profile's NIC rate (issue 31, D6), Mb/s */
	assert_string_equal(args(1, 0), "--pair-link-rate 400000 ib netpair");
	/* nccl where the nodes have GPUs; --scale for the single-node criterion of a 2-node job */
	assert_string_equal(pl.ph[2].name, "collectives-nccl");
	assert_int_equal(pl.ph[2].rpn, 8);
	assert_string_equal(args(2, 0), "--time-per-size 2 -B nccl -b 8 -e 8G --scale all_reduce");
	near(last.gbps, 1600);               /* 4 NICs of 400 Gb/s */
	assert_int_equal(last.nodes, 2);
	done();
	/* on one node there is nothing to scale over */
	load(GPU);
	in.launch = PLAN_LOCAL;
	in.nodes = 1;
	assert_int_equal(make(), 0);
	assert_string_equal(args(2, 0), "--time-per-size 2 -B nccl -b 8 -e 8G all_reduce");
	done();
}

/*
 * Issue 31, D6: netpair's reference rate on a real cluster is the profile's
 * NIC rate, passed on the pairs phase (and a soak of netpair), at every
 * shrink level, through srun as through mpirun; a profile without nic_rate
 * passes none (ccprobe finds MPI's interface or leaves the rate unknown),
 * and the emulated cluster states its own shaped rates.
 */
static void test_netpair_rate(void **state)
{
	(void)state;
	load(GPU SOAK_NP);
	in.launch = PLAN_SRUN;
	in.nodes = 4;
	in.soak_s = 60;
	assert_int_equal(make(), 0);
	assert_string_equal(pl.ph[1].name, "pairs");
	for (int l = 0; l < pl.nlevels; l++)
		assert_non_null(strstr(args(1, l), "--pair-link-rate 400000 "));
	assert_string_equal(pl.ph[pl.nph - 1].name, "soak");
	assert_non_null(strstr(args(pl.nph - 1, 0), "--pair-link-rate 400000 "));
	/* phases without netpair: none */
	assert_null(strstr(args(0, 0), "--pair-link-rate"));
	assert_null(strstr(args(2, 0), "--pair-link-rate"));
	done();
	/* no nic_rate in the profile: not passed */
	load("[profile]\nname = n\n[hardware]\ngpus_per_node = 0\n"
	     "[criterion np]\nprobe = netpair\ntest = bw_uni\nmetric = bw_Gbps\nscope = link\n"
	     "bound = >= 0.85 of rate\n");
	in.launch = PLAN_MPIRUN;
	in.nodes = 2;
	assert_int_equal(make(), 0);
	assert_string_equal(args(0, 0), "netpair");
	done();
	/* emulated: the hosts' shaped rates, not the profile's */
	load(GPU);
	assert_int_equal(make(), 0);
	assert_null(strstr(args(1, 0), "--pair-link-rate"));
	done();
}

static void test_sizes_and_backends(void **state)
{
	(void)state;
	/* the largest size a criterion names is in the sweep; mpi before nccl, one phase each */
	load("[profile]\nname = s\n[hardware]\ngpus_per_node = 0\n"
	     "[criterion ag]\ncollective = all_gather\nbackend = mpi\nmetric = busbw_GBps\nsize = 4M\nbound = >= 1 GB/s\n"
	     "[criterion aa]\ncollective = alltoall\nbackend = nccl\nmetric = busbw_GBps\nsize = 64K\nbound = >= 1 GB/s\n"
	     "[criterion ar]\ncollective = all_reduce\nbackend = mpi\nmetric = wrong\nsize = any\nbound = <= 0\n");
	in.launch = PLAN_MPIRUN;
	in.nodes = 2;
	assert_int_equal(make(), 0);
	assert_int_equal(pl.nph, 2);
	assert_string_equal(pl.ph[0].name, "collectives-mpi");
	assert_string_equal(args(0, 0), "--time-per-size 2 -B mpi -b 8 -e 4194304 all_gather all_reduce");
	assert_string_equal(pl.ph[1].name, "collectives-nccl");
	assert_int_equal(pl.ph[1].rpn, 1);   /* no GPUs in the profile */
	assert_string_equal(args(1, 0), "--time-per-size 2 -B nccl -b 8 -e 8G alltoall");
	done();
	/* --max-size: the sweep's end, unless a criterion names a larger size */
	load(EMU);
	in.max_size = "64K";
	in.tps = "0.25";
	assert_int_equal(make(), 0);
	assert_string_equal(args(1, 0), "--time-per-size 0.25 -B mpi -b 8 -e 64K --scale all_reduce");
	done();
	load(EMU);
	in.max_size = "0";
	assert_int_equal(make(), 2);
	assert_string_equal(err, "invalid size '0' for --max-size");
	done();
}

static void test_unrunnable(void **state)
{
	(void)state;
	load(EMU "[criterion x]\nprobe = nosuch\ntest = t\nmetric = bw_GBps\nscope = node\nbound = >= 1 GB/s\n");
	assert_int_equal(make(), 0);
	assert_int_equal(pl.unrunnable.n, 1);
	assert_string_equal(pl.unrunnable.v[0], "probe nosuch: not a probe of this ccprobe");
	assert_int_equal(pl.nph, 3);
	done();
	load("[profile]\nname = n\n[criterion x]\nprobe = nosuch\ntest = t\nmetric = bw_GBps\nscope = node\nbound = >= 1 GB/s\n");
	assert_int_equal(make(), 2);
	assert_string_equal(err, "profile 'n' has no criterion this ccprobe can run (probe nosuch: not a probe of this ccprobe)");
	done();
}

static void test_budget_and_shrink(void **state)
{
	(void)state;
	/* 24 s over a 20 s budget without --shrink: refused, naming both */
	load(EMU);
	in.budget_s = 20;
	assert_int_equal(make(), 2);
	assert_string_equal(err, "the plan needs ~24s, over --budget 20s (--shrink cuts it to fit; --dry-run shows it)");
	done();
	/* 19 s: level 1 (time per size 1 s: collectives 4+3+2+1) is 20 s, level 2 (-b 1M/32) 18 s */
	load(EMU);
	in.budget_s = 19;
	in.shrink = 1;
	assert_int_equal(make(), 0);
	assert_int_equal(pl.level, 2);
	near(pl.ph[1].est[1], 13.0);
	near(pl.total, 18.0);
	assert_string_equal(pl.cut[1], "time per size 2 s -> 1 s");
	assert_string_equal(pl.cut[2], "collectives: 6 largest sizes only (plateau, fit)");
	assert_string_equal(args(1, 1), "--time-per-size 1 -B mpi -b 8 -e 1M --scale all_reduce");
	assert_string_equal(args(1, 2), "--time-per-size 1 -B mpi -b 32768 -e 1M --scale all_reduce");
	assert_string_equal(args(0, 2), "--pair-concurrency 2 netpair");
	done();
	/* 12 s: level 3 (-n 5 -r 3, 0.5 s per size; the pairs' short steps) fits exactly */
	load(EMU);
	in.budget_s = 12;
	in.shrink = 1;
	assert_int_equal(make(), 0);
	assert_int_equal(pl.level, 3);
	near(pl.total, 12.0);
	assert_string_equal(args(1, 3), "--time-per-size 0.5 -n 5 -r 3 -B mpi -b 32768 -e 1M --scale all_reduce");
	assert_string_equal(args(0, 3), "--pair-concurrency 2 --pair-time 0.05 --pair-iters 200 --ib-reps 3 "
			    "--ib-iters 20 --ib-lat-iters 1000 netpair");
	/* level 4 drops --scale */
	assert_string_equal(args(1, 4), "--time-per-size 0.5 -n 5 -r 3 -B mpi -b 32768 -e 1M all_reduce");
	done();
	/* 8 s: below the minimal plan (9 s at level 4) */
	load(EMU);
	in.budget_s = 8;
	in.shrink = 1;
	assert_int_equal(make(), 2);
	assert_string_equal(err, "--budget 8s cannot hold even the minimal plan (~9s)");
	done();
	/* a time per size below a cut's stays */
	load(EMU);
	in.budget_s = 9;
	in.shrink = 1;
	in.tps = "0.25";
	assert_int_equal(make(), 0);
	assert_string_equal(args(1, 1), "--time-per-size 0.25 -B mpi -b 8 -e 1M --scale all_reduce");
	assert_string_equal(args(1, 3), "--time-per-size 0.25 -n 5 -r 3 -B mpi -b 32768 -e 1M --scale all_reduce");
	done();
}

static void test_soak(void **state)
{
	(void)state;
	/* no soak criterion: netpair and all_reduce share the duration, recorded, not judged */
	load(EMU);
	in.soak_s = 120;
	assert_int_equal(make(), 0);
	assert_int_equal(pl.nph, 4);
	assert_string_equal(pl.ph[2].name, "soak");
	assert_int_equal(pl.ph[2].kind, PK_SOAK);
	assert_string_equal(args(2, 0), "--pair-concurrency 2 --soak 60 -B mpi -e 1M netpair all_reduce");
	near(pl.ph[2].est[0], 123.0);
	assert_string_equal(pl.ph[3].name, "storage");
	assert_string_equal(pl.soak_note, "the profile judges no soak: its records are kept, not judged");
	near(pl.total, 147.0);
	done();
	/* over the budget with --shrink: the soak first, by what the plan is over (120 - 47) */
	load(EMU);
	in.soak_s = 120;
	in.budget_s = 100;
	in.shrink = 1;
	assert_int_equal(make(), 0);
	assert_int_equal(pl.level, 1);
	assert_string_equal(pl.cut[1], "soak 2m00s -> 1m13s");
	assert_string_equal(args(2, 1), "--pair-concurrency 2 --soak 36.5 -B mpi -e 1M netpair all_reduce");
	assert_string_equal(args(1, 1), "--time-per-size 2 -B mpi -b 8 -e 1M --scale all_reduce");
	near(pl.total, 100.0);               /* 7 + 17 + 73 + 3.04 */
	done();
	/* never below a quarter of --soak (30 s: 33.0 with the launch), then the other cuts:
	 * level 4 (the collectives' -n 5 -r 3: 8.0, the pairs' short steps: 4.0) is 45 s */
	load(EMU);
	in.soak_s = 120;
	in.budget_s = 45;
	in.shrink = 1;
	assert_int_equal(make(), 0);
	assert_string_equal(pl.cut[1], "soak 2m00s -> 30s");
	assert_string_equal(args(2, 1), "--pair-concurrency 2 --soak 15 -B mpi -e 1M netpair all_reduce");
	assert_int_equal(pl.level, 4);
	near(pl.total, 45.0);
	assert_string_equal(pl.cut[2], "time per size 2 s -> 1 s");
	done();
	/* 41 s: below the minimal plan (level 5, no --scale: the collectives 5.0, 42 s) */
	load(EMU);
	in.soak_s = 120;
	in.budget_s = 41;
	in.shrink = 1;
	assert_int_equal(make(), 2);
	assert_string_equal(err, "--budget 41s cannot hold even the minimal plan (~42s)");
	done();
}

static void test_soak_criteria(void **state)
{
	(void)state;
	/* one node: the profile's soaks less netpair (said so) */
	load("[profile]\nname = s\n[hardware]\ngpus_per_node = 0\n" SOAK_AR SOAK_NP);
	in.launch = PLAN_LOCAL;
	in.nodes = 1;
	in.soak_s = 30;
	assert_int_equal(make(), 0);
	assert_int_equal(pl.nph, 1);
	assert_string_equal(args(0, 0), "--soak 30 -B mpi -e 1M all_reduce");
	assert_string_equal(pl.soak_note, "netpair needs 2 nodes or more: its soak criteria will be incomplete");
	done();
	/* soak criteria alone and no --soak: refused */
	load("[profile]\nname = s\n[hardware]\ngpus_per_node = 0\n" SOAK_AR);
	in.launch = PLAN_LOCAL;
	in.nodes = 1;
	assert_int_equal(make(), 2);
	assert_string_equal(err, "profile 's' judges soaks only: give --soak DURATION");
	done();
	/* a required soak criterion without --soak: planned without it, and said */
	load(EMU SOAK_AR);
	assert_int_equal(make(), 0);
	assert_true(pl.soak_needed);
	for (int k = 0; k < pl.nph; k++)
		assert_int_not_equal(pl.ph[k].kind, PK_SOAK);
	done();
	/* an optional one: nothing to say */
	load(EMU SOAK_NP);
	assert_int_equal(make(), 0);
	assert_false(pl.soak_needed);
	done();
	/* one backend per soak phase, the first's; what cannot soak is not runnable */
	load("[profile]\nname = s\n[hardware]\ngpus_per_node = 8\n"
	     "[criterion a]\ncollective = all_reduce\nbackend = nccl\nmetric = soak_drops\nbound = <= 2\n"
	     "[criterion b]\ncollective = all_gather\nbackend = mpi\nmetric = soak_drops\nbound = <= 2\n"
	     "[criterion c]\nprobe = ib\nmetric = soak_drops\nscope = rail_pair\nbound = <= 2\n");
	in.launch = PLAN_MPIRUN;
	in.nodes = 2;
	in.soak_s = 60;
	assert_int_equal(make(), 0);
	assert_int_equal(pl.nph, 1);
	assert_int_equal(pl.ph[0].rpn, 8);   /* an nccl collective: one rank per GPU */
	assert_string_equal(args(0, 0), "--soak 60 -B nccl -e 8G all_reduce");
	assert_int_equal(pl.unrunnable.n, 2);
	assert_string_equal(pl.unrunnable.v[0], "soak all_gather over mpi: one backend per soak phase (nccl)");
	assert_string_equal(pl.unrunnable.v[1], "soak ib: this ccprobe cannot soak it");
	done();
}

static void test_quick(void **state)
{
	(void)state;
	load(GPU);
	in.launch = PLAN_LOCAL;
	in.nodes = 1;
	in.quick = 1;
	assert_int_equal(make(), 0);
	assert_int_equal(pl.nph, 1);
	assert_string_equal(pl.ph[0].name, "node");
	assert_int_equal(pl.ph[0].rpn, 8);
	assert_string_equal(args(0, 0), "-n 5 -r 3 -w 1 -b 64M -e 64M --timeout 20 --gemm-shapes 8192 "
			    "--gemm-iters 10 --gemm-warmup 2 --gemm-seconds 5 pcie nvlink");
	/* judged by the node probes' criteria alone */
	assert_int_equal(pl.quick_keep.n, 2);
	assert_string_equal(pl.quick_keep.v[0], "pcie_h2d");
	assert_string_equal(pl.quick_keep.v[1], "nvl");
	done();
	load(EMU);
	in.quick = 1;
	assert_int_equal(make(), 2);
	assert_string_equal(err, "profile 't' has no node-local criterion (ccdiag quick runs the node phase alone)");
	done();
}

static void test_extra_and_refused(void **state)
{
	static const char *const x[] = { "--timeout", "60" };
	struct strv extra = { 0 };

	(void)state;
	/* options after -- come first: the phase's own win */
	for (int i = 0; i < 2; i++)
		strv_add(&extra, x[i]);
	load(EMU);
	in.extra = &extra;
	assert_int_equal(make(), 0);
	assert_string_equal(args(0, 0), "--timeout 60 --pair-concurrency 2 netpair");
	assert_string_equal(args(1, 0), "--timeout 60 --time-per-size 2 -B mpi -b 8 -e 1M --scale all_reduce");
	done();
	/* options ccprobe --plan refuses: the launch will say why; counted as the launch alone */
	strv_add(&extra, "REFUSE");
	load(EMU);
	in.extra = &extra;
	assert_int_equal(make(), 0);
	near(pl.ph[0].est[0], 3.0);
	near(pl.total, 6.0);
	assert_int_equal(pl.estimate_errors.n, 2);
	assert_string_equal(pl.estimate_errors.v[0],
			    "phase pairs: ccprobe --plan refused its options: unknown option 'REFUSE'");
	done();
	strv_free(&extra);
}

static void test_train_phases(void **state)
{
	(void)state;
	/* a [workload], the framework present: the proxy, then the framework's step, last */
	load(EMU WL);
	in.framework = 1;
	assert_int_equal(make(), 0);
	assert_int_equal(pl.nph, 5);
	assert_string_equal(pl.ph[3].name, "train-proxy");
	assert_int_equal(pl.ph[3].kind, PK_PROBE);
	/* 4096 tokens over 4 ranks, cut to what 2.5e10 FLOP/s computes in 0.1 s: 416 */
	assert_string_equal(args(3, 0), "-B mpi --train-params=1e+06 --train-layers=4 --train-tokens=416 "
			    "--train-bucket=262144 --train-steps=6 --train-warmup=1 trainstep");
	near(pl.ph[3].est[0], 8.0);          /* 5 + 3.04 */
	assert_string_equal(pl.ph[4].name, "train");
	assert_int_equal(pl.ph[4].kind, PK_FRAMEWORK);
	assert_false(pl.ph[4].skipped);
	assert_string_equal(args(4, 0), "--params=1e+06 --layers=4 --tokens=416 --bucket=262144 --steps=6 --warmup=1");
	near(pl.ph[4].est[0], 33.0);         /* 2 x 4.96 + 20 + 3.04 */
	near(pl.total, 24.0 + 8.0 + 33.0);
	done();

	/* the framework absent: the phase is planned, not run, with the reason, and takes no time */
	load(EMU WL);
	in.framework = 0;
	in.framework_why = "the framework is not present: no python3 imports torch";
	assert_int_equal(make(), 0);
	assert_int_equal(pl.nph, 5);
	assert_true(pl.ph[4].skipped);
	assert_string_equal(pl.ph[4].skip_why, "the framework is not present: no python3 imports torch");
	near(pl.ph[4].est[0], 0);
	assert_false(pl.ph[3].skipped);      /* the proxy runs all the same */
	near(pl.total, 24.0 + 8.0);
	done();

	/* not known until the hosts are up: planned, checked at run time */
	load(EMU WL);
	in.framework = -1;
	assert_int_equal(make(), 0);
	assert_false(pl.ph[4].skipped);
	done();

	/* --soak: each train phase steps for a quarter of it (at least 10 s) */
	load(EMU WL);
	in.framework = 1;
	in.soak_s = 60;
	assert_int_equal(make(), 0);
	assert_int_equal(pl.nph, 6);
	assert_string_equal(pl.ph[4].name, "train-proxy");
	assert_non_null(strstr(args(4, 0), " --train-seconds=15 trainstep"));
	near(pl.ph[4].est[0], 23.0);         /* 5 + 15 + 3.04 */
	assert_non_null(strstr(args(5, 0), " --seconds=15"));
	done();

	/* GPUs: the products on cuBLASLt, the buckets over NCCL, one rank per GPU, no time cut */
	load(GPU WL);
	in.framework = 1;
	assert_int_equal(make(), 0);
	assert_string_equal(pl.ph[pl.nph - 2].name, "train-proxy");
	assert_int_equal(pl.ph[pl.nph - 2].rpn, 8);
	assert_string_equal(args(pl.nph - 2, 0), "-B nccl --train-params=1e+06 --train-layers=4 --train-tokens=128 "
			    "--train-bucket=262144 --train-steps=6 --train-warmup=1 trainstep");
	assert_int_equal(pl.ph[pl.nph - 1].rpn, 8);
	done();

	/* no [workload]: no train phase */
	load(EMU);
	in.framework = 1;
	assert_int_equal(make(), 0);
	assert_int_equal(pl.nph, 3);
	done();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emulated_plan),
		cmocka_unit_test(test_dcgm_level),
		cmocka_unit_test(test_storage_dir_one_argument),
		cmocka_unit_test(test_gpu_plan),
		cmocka_unit_test(test_netpair_rate),
		cmocka_unit_test(test_sizes_and_backends),
		cmocka_unit_test(test_unrunnable),
		cmocka_unit_test(test_budget_and_shrink),
		cmocka_unit_test(test_soak),
		cmocka_unit_test(test_soak_criteria),
		cmocka_unit_test(test_quick),
		cmocka_unit_test(test_extra_and_refused),
		cmocka_unit_test(test_train_phases),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
