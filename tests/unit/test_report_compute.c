/*
 * Unit tests: ccreport's use of the gemm and gpuhealth records
 * (report/model_compute.c, the node_best bound of report/eval.c and the
 * metric table's directions in report/profile.c). Every expected number is
 * worked out by hand in the comment above its check (docs/compute.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../report/eval.h"
#include "../../report/eval_state.h"
#include "../../report/profile.h"
#include "../../report/summary.h"

static struct profile prof;
static struct eval ev;
static char err[600];

#define HDR "{\"type\":\"run\",\"schema\":1,\"hosts\":[{\"name\":\"a\"},{\"name\":\"b\"}],\"world_size\":8}\n"
/* an all_reduce at the 25 MiB bucket, 1 node, 8 ranks, 100 GB/s busbw: the estimate's series */
#define AR(bytes) "{\"type\":\"measurement\",\"kind\":\"collective\",\"name\":\"all_reduce\"," \
	"\"backend\":\"nccl\",\"dtype\":\"bfloat16\",\"op\":\"sum\",\"bytes\":" #bytes ",\"ranks\":8," \
	"\"nodes\":1,\"time_us\":{\"n\":5,\"min\":1,\"median\":1,\"mean\":1,\"max\":1,\"p99\":1,\"cv\":0.01}," \
	"\"busbw_GBps\":100.0,\"busbw_factor\":1.75,\"wrong\":0}\n"
/* 1 MiB to 64 MiB and the bucket itself: every tail bucket lies inside the sweep */
#define SERIES AR(1048576) AR(2097152) AR(4194304) AR(8388608) AR(16777216) AR(26214400) \
	AR(33554432) AR(67108864)
#define GEMM(el, host, shape, tf) "{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"gemm\"," \
	"\"test\":\"matmul\",\"scope\":\"gpu\",\"element\":\"" el "\",\"host\":\"" host "\"," \
	"\"dtype\":\"bf16\",\"shape\":\"" shape "\",\"tflops\":" #tf "}\n"
#define HEALTH(el, host, total, fr, pending) "{\"type\":\"measurement\",\"kind\":\"probe\"," \
	"\"name\":\"gpuhealth\",\"test\":\"health\",\"scope\":\"gpu\",\"element\":\"" el "\"," \
	"\"host\":\"" host "\",\"phase\":\"before\",\"mem_total_bytes\":" #total "," \
	"\"mem_free_bytes\":" #fr ",\"health\":{\"remap_pending\":" #pending "}}\n"

#define WORKLOAD "[workload]\nparams = %s\ntokens_per_step = 1e6\ntotal_tokens = 1e9\n" \
	"peak_tflops = 989\nmfu = 0.4\ndp_size = %s\nstage = %s\nbucket_bytes = 26214400\n"

static json_t *judge(const char *profile, const char *lines)
{
	struct summary_opts so = { .profile_path = "p.ini" };
	json_t *s;

	if (profile_parse_string(&prof, profile, "p.ini", err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(eval_init(&ev, &prof), 0);
	if (eval_read_mem(&ev, lines, strlen(lines), "r.jsonl", err, sizeof(err)))
		fail_msg("%s", err);
	eval_finish(&ev);
	s = summary_build(&ev, &so, err, sizeof(err));
	assert_non_null(s);
	return s;
}

static void done(json_t *s)
{
	json_decref(s);
	eval_free(&ev);
	profile_free(&prof);
}

static double num(const json_t *o, const char *path)
{
	char buf[128], *save = NULL, *tok;
	const json_t *v = o;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok && v; tok = strtok_r(NULL, ".", &save))
		v = json_object_get(v, tok);
	if (!json_is_number(v))
		fail_msg("no number at %s", path);
	return json_number_value(v);
}

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static json_t *crit(json_t *s, const char *id)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(s, "criteria"), i, c)
		if (!strcmp(str(c, "id"), id))
			return c;
	fail_msg("no criterion %s", id);
	return NULL;
}

static char *profile_with(const char *params, const char *dp, const char *stage, const char *extra)
{
	char *p;

	assert_true(asprintf(&p, "[criterion c]\nmetric = comm_fraction\nbound = <= 1\n%s" WORKLOAD,
			     extra, params, dp, stage) > 0);
	return p;
}

/*
 * Measured TFLOP/s: gpu1 is the slowest GPU by its best shape (650 at
 * 8192; its 600 at 4096 does not count), so
 *   compute = 6 x 1e9 x 1e6 / (8 x 650e12 x 0.5) = 6e15 / 2.6e15 = 2.3076923 s
 * against the vendor path 6e15 / (8 x 989e12 x 0.4) = 1.8958 s.
 */
static void test_measured_tflops(void **unused)
{
	char *p = profile_with("1e9", "8", "ddp", "");
	json_t *s = judge(p, HDR SERIES GEMM("a/gpu0", "a", "8192x8192x8192", 700)
			  GEMM("a/gpu1", "a", "8192x8192x8192", 650) GEMM("a/gpu1", "a", "4096x4096x4096", 600)
			  GEMM("a/gpu2", "a", "8192x8192x8192", 720) GEMM("b/gpu0", "b", "8192x8192x8192", 710));
	json_t *e = json_object_get(s, "estimate"), *c = json_object_get(e, "compute");

	(void)unused;
	assert_true(json_is_true(json_object_get(e, "made")));
	assert_string_equal(str(c, "basis"), "measured");
	assert_string_equal(str(c, "slowest_gpu"), "a/gpu1");
	assert_int_equal((int)num(c, "gpus_measured"), 4);
	assert_true(fabs(num(e, "outputs.compute_s") - 2.3076923) < 1e-6);
	/* what was given stays given and labelled; the measured rate beside it */
	assert_true(num(e, "inputs.peak_tflops") == 989);
	assert_true(num(e, "inputs.mfu") == 0.4);
	assert_true(num(e, "inputs.measured_tflops") == 650);
	assert_true(num(e, "inputs.matmul_efficiency") == 0.5);
	assert_non_null(strstr(str(json_object_get(e, "sources"), "measured_tflops"), "a/gpu1"));
	/* MFU against the peak the measurement implies: 650 x 0.5 / 989 = 0.32861 */
	assert_true(fabs(num(c, "mfu_implied") - 0.3286148) < 1e-6);
	done(s);
	free(p);
}

/* No gemm record: the vendor peak, labelled a fallback: 6e15 / (8 x 989e12 x 0.4) = 1.8958544 s */
static void test_vendor_fallback(void **unused)
{
	char *p = profile_with("1e9", "8", "ddp", "");
	json_t *s = judge(p, HDR SERIES);
	json_t *e = json_object_get(s, "estimate");

	(void)unused;
	assert_string_equal(str(json_object_get(e, "compute"), "basis"), "vendor peak");
	assert_true(fabs(num(e, "outputs.compute_s") - 1.8958544) < 1e-6);
	assert_non_null(strstr(str(json_object_get(e, "sources"), "peak_tflops"), "fallback"));
	done(s);
	free(p);
}

/*
 * Memory fit that fails: 7e9 parameters, DDP, dp 8, 2 + 2 + 12 = 16 bytes
 * per parameter: 112e9 B per GPU against the least free memory, 84e9 B on
 * a/gpu1. ZeRO-1 at dp 8: 2 x 7e9 + 2 x 7e9 + 12 x 7e9 / 8 = 38.5e9 B fits.
 */
static void test_memory_does_not_fit(void **unused)
{
	char *p = profile_with("7e9", "8", "ddp", "");
	json_t *s = judge(p, HDR SERIES HEALTH("a/gpu0", "a", 85899345920, 85000000000, 0)
			  HEALTH("a/gpu1", "a", 85899345920, 84000000000, 0));
	json_t *e = json_object_get(s, "estimate"), *m = json_object_get(e, "memory_fit");

	(void)unused;
	assert_true(json_is_false(json_object_get(e, "made")));
	assert_true(json_is_null(json_object_get(e, "outputs")));
	assert_true(num(m, "states_bytes") == 112e9);
	assert_true(num(m, "usable_bytes") == 84e9);
	assert_string_equal(str(m, "usable_gpu"), "a/gpu1");
	assert_true(json_is_false(json_object_get(m, "fits")));
	assert_string_equal(str(json_object_get(m, "would_fit"), "stage"), "zero1");
	assert_non_null(strstr(str(e, "reason"), "112.0 GB per GPU"));
	assert_non_null(strstr(str(e, "reason"), "zero1 at dp_size 8 would fit (38.5 GB)"));
	assert_non_null(strstr(str(e, "reason"), "no estimate is made"));
	/* the comm_fraction criterion is incomplete: there is no estimate to judge */
	assert_string_equal(str(crit(s, "c"), "verdict"), "incomplete");
	done(s);
	free(p);
}

/* Fits: ZeRO-3 at dp 8: 16 x 7e9 / 8 = 14e9 B; 84e9 - 14e9 = 70e9 B left for activations */
static void test_memory_fits(void **unused)
{
	char *p = profile_with("7e9", "8", "zero3", "");
	json_t *s = judge(p, HDR SERIES HEALTH("a/gpu1", "a", 85899345920, 84000000000, 0));
	json_t *e = json_object_get(s, "estimate"), *m = json_object_get(e, "memory_fit");

	(void)unused;
	assert_true(json_is_true(json_object_get(e, "made")));
	assert_true(json_is_true(json_object_get(m, "fits")));
	assert_true(num(m, "states_bytes") == 14e9);
	assert_true(num(m, "headroom_bytes") == 70e9);
	assert_true(num(m, "weights_bytes") == 14e9 / 8 && num(m, "optimizer_states_bytes") == 84e9 / 8);
	done(s);
	free(p);
}

/*
 * Nothing fits at dp 2 (ZeRO-3: 16 x 100e9 / 2 = 800e9 B > 84e9): the
 * smallest dp that would, ceil(1600e9 / 84e9) = ceil(19.05) = 20.
 */
static void test_memory_needs_dp(void **unused)
{
	char *p = profile_with("100e9", "2", "zero1", "");
	json_t *s = judge(p, HDR SERIES HEALTH("a/gpu1", "a", 85899345920, 84000000000, 0));
	json_t *m = json_object_get(json_object_get(s, "estimate"), "memory_fit");

	(void)unused;
	assert_string_equal(str(json_object_get(m, "would_fit"), "stage"), "zero3");
	assert_int_equal((int)num(m, "would_fit.dp_size"), 20);
	done(s);
	free(p);
}

/* a GPU with 40 GiB = 42.9e9 B under a profile asking 80 GB fails the hardware check by name */
static void test_memory_hardware(void **unused)
{
	json_t *s = judge("[hardware]\ngpu_memory = 80 GB\n[criterion r]\nprobe = gpuhealth\n"
			  "test = health\nmetric = health.remap_pending\nsize = any\nscope = gpu\n"
			  "bound = <= 0\n",
			  HDR HEALTH("a/gpu0", "a", 85899345920, 85000000000, 1)
			  HEALTH("a/gpu1", "a", 42949672960, 42000000000, 0));
	json_t *hw = json_object_get(s, "hardware"), *r = crit(s, "r");

	(void)unused;
	assert_int_equal(json_array_size(hw), 1);
	assert_string_equal(str(json_array_get(hw, 0), "element"), "a/gpu1");
	assert_string_equal(str(json_array_get(hw, 0), "found"), "42.9 GB");
	assert_string_equal(str(json_array_get(hw, 0), "expected"), ">= 80 GB");
	assert_string_equal(str(s, "verdict"), "fail");
	/* remap pending fails its GPU, and only it */
	assert_string_equal(str(r, "verdict"), "fail");
	assert_int_equal(json_array_size(json_object_get(r, "failures")), 1);
	assert_string_equal(str(json_array_get(json_object_get(r, "failures"), 0), "element"), "a/gpu0");
	done(s);
}

/*
 * node_best: host a's best is 720, so the bound is 0.9 x 720 = 648: gpu3
 * (600) fails, gpu1 (650) passes; b/gpu0 (300) is the best of its own host.
 */
static void test_node_best(void **unused)
{
	json_t *s = judge("[criterion n]\nprobe = gemm\ntest = matmul\ndtype = bf16\nmetric = tflops\n"
			  "size = any\nrepeat = best\nscope = gpu\nbound = >= 0.90 of node_best\n"
			  "outlier_tolerance = off\n",
			  HDR GEMM("a/gpu0", "a", "s", 700) GEMM("a/gpu1", "a", "s", 650)
			  GEMM("a/gpu2", "a", "s", 720) GEMM("a/gpu3", "a", "s", 600)
			  GEMM("a/gpu3", "a", "t", 500) GEMM("b/gpu0", "b", "s", 300));
	json_t *c = crit(s, "n"), *f = json_object_get(c, "failures");

	(void)unused;
	assert_string_equal(str(c, "verdict"), "fail");
	assert_int_equal(json_array_size(f), 1);
	assert_string_equal(str(json_array_get(f, 0), "element"), "a/gpu3");
	assert_true(fabs(num(json_array_get(f, 0), "bound") - 648) < 1e-9);
	assert_true(num(json_array_get(f, 0), "value") == 600);
	assert_string_equal(str(json_object_get(c, "bound"), "unit"), "of node_best");
	done(s);
}

/* directions come from the metric table: no operator means "higher" for tflops, "lower" for drop_pct */
static void test_directions(void **unused)
{
	(void)unused;
	assert_int_equal(profile_parse_string(&prof, "[criterion t]\nprobe = gemm\ntest = matmul\n"
		"metric = tflops\nsize = any\nscope = gpu\nbound = 700 TFLOP/s\n"
		"[criterion d]\nprobe = gemm\ntest = sustained\nmetric = drop_pct\nsize = any\n"
		"scope = gpu\nbound = 10 %\n[criterion h]\nprobe = gpuhealth\ntest = health\n"
		"metric = health.xid_critical\nsize = any\nscope = gpu\nbound = 0\n", "p.ini", err,
		sizeof(err)), 0);
	assert_int_equal(prof.crit[0].ge, 1);
	assert_int_equal(prof.crit[1].ge, 0);
	assert_int_equal(prof.crit[2].ge, 0);
	profile_free(&prof);
	/* node_best where lower is better makes no sense: a profile error naming the line */
	assert_int_equal(profile_parse_string(&prof, "[criterion d]\nprobe = gemm\ntest = sustained\n"
		"metric = drop_pct\nsize = any\nscope = gpu\nbound = 0.9 of node_best\n", "p.ini", err,
		sizeof(err)), -1);
	assert_non_null(strstr(err, "p.ini:7: bound '0.9 of node_best': node_best needs '>='"));
	/* gpu_memory needs its unit */
	assert_int_equal(profile_parse_string(&prof, "[hardware]\ngpu_memory = 80\n", "p.ini", err,
		sizeof(err)), -1);
	assert_non_null(strstr(err, "p.ini:2: gpu_memory '80': expected NUMBER GB"));
}

/* the test double's records ("transport": "fake") never reach the estimate */
static void test_fake_not_used(void **unused)
{
	char *p = profile_with("1e9", "8", "ddp", "");
	json_t *s = judge(p, HDR SERIES "{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"gemm\","
			  "\"test\":\"matmul\",\"scope\":\"gpu\",\"element\":\"a/gpu0\",\"host\":\"a\","
			  "\"dtype\":\"bf16\",\"tflops\":1.0,\"transport\":\"fake\"}\n");

	(void)unused;
	assert_string_equal(str(json_object_get(json_object_get(s, "estimate"), "compute"), "basis"),
			    "vendor peak");
	done(s);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_measured_tflops),
		cmocka_unit_test(test_vendor_fallback),
		cmocka_unit_test(test_memory_does_not_fit),
		cmocka_unit_test(test_memory_fits),
		cmocka_unit_test(test_memory_needs_dp),
		cmocka_unit_test(test_memory_hardware),
		cmocka_unit_test(test_node_best),
		cmocka_unit_test(test_directions),
		cmocka_unit_test(test_fake_not_used),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
