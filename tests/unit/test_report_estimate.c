/*
 * The training estimate (report/estimate.h) against cases computed by hand;
 * the arithmetic is in the comments. Formulas: docs/estimate.md.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../report/estimate.h"

/* relative closeness: the model is plain arithmetic, so 1e-12 */
static int near(double a, double b)
{
	return fabs(a - b) <= 1e-12 * fabs(b) + 1e-15;
}
#define assert_near(a, b) assert_true(near((a), (b)))

/* Case C of docs/estimate.md: round numbers, DDP, fp32, some overlap. */
static struct est_inputs case_c(void)
{
	return (struct est_inputs){
		.params = 1e9, .bytes_per_grad = 4, .dp_size = 8, .gpus = 8, .stage = EST_DDP,
		.tokens_per_step = 1e6, .total_tokens = 1e9, .peak_tflops = 100, .mfu = 0.5,
		.price_gpu_hour = 2, .bucket_bytes = 1e8, .overlap = 0.02,
		.busbw_GBps = 10, .alpha_us = 100, .beta_GBps = 5,
	};
}

static void test_round_numbers(void **state)
{
	struct est_inputs in = case_c();
	struct est_outputs o;
	char err[128];
	(void)state;

	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), 0);
	/* S = 4 B x 1e9 = 4e9 B; k = 2 (DDP) */
	assert_near(o.grad_bytes, 4e9);
	assert_near(o.k, 2);
	/* sync = 2 x 7/8 x 4e9 / 10e9 = 0.7 s */
	assert_near(o.sync_s, 0.7);
	/* buckets = ceil(4e9 / 1e8) = 40; fit = 2/2 x (40 x 100e-6 + 4e9 / 5e9) = 0.804 s */
	assert_near(o.buckets, 40);
	assert_near(o.sync_fit_s, 0.804);
	/* compute = 6 x 1e9 x 1e6 / (8 x 100e12 x 0.5) = 6e15 / 4e14 = 15 s */
	assert_near(o.compute_s, 15);
	/* exposed = max(0, 0.7 - 0.02 x 15) = 0.4 s; step = 15.4 s; fraction = 0.4 / 15.4 */
	assert_near(o.exposed_s, 0.4);
	assert_near(o.step_s, 15.4);
	assert_near(o.comm_fraction, 0.4 / 15.4);
	/* steps = 1e9 / 1e6 = 1000; days = 1000 x 15.4 / 86400; GPU-h = 8 x 15400 / 3600 */
	assert_near(o.steps, 1000);
	assert_near(o.days, 15400.0 / 86400);
	assert_near(o.gpu_hours, 8 * 15400.0 / 3600);
	/* cost = 34.222... GPU-h x 2 = 68.444... */
	assert_near(o.cost, 2 * 8 * 15400.0 / 3600);
}

static void test_case_a_7b_ddp(void **state)
{
	/* Case A of docs/estimate.md: 7B, bf16, DDP on 64 GPUs, nothing overlapped */
	struct est_inputs in = {
		.params = 7e9, .bytes_per_grad = 2, .dp_size = 64, .gpus = 64, .stage = EST_DDP,
		.tokens_per_step = 4e6, .total_tokens = 1e12, .peak_tflops = 989, .mfu = 0.4,
		.price_gpu_hour = 2.5, .bucket_bytes = 25e6, .overlap = 0,
		.busbw_GBps = 40, .alpha_us = 50, .beta_GBps = 20,
	};
	struct est_outputs o;
	char err[128];
	(void)state;

	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), 0);
	/* S = 14e9 B; sync = 2 x 63/64 x 14e9 / 40e9 = 2 x 0.984375 x 0.35 = 0.6890625 s */
	assert_near(o.sync_s, 0.6890625);
	/* buckets = ceil(14e9 / 25e6) = 560; fit = 560 x 50e-6 + 14e9 / 20e9 = 0.028 + 0.7 */
	assert_near(o.buckets, 560);
	assert_near(o.sync_fit_s, 0.728);
	/* compute = 6 x 7e9 x 4e6 / (64 x 989e12 x 0.4) = 1.68e17 / 2.53184e16 = 6.6354904 s */
	assert_near(o.compute_s, 1.68e17 / 2.53184e16);
	assert_near(o.step_s, 1.68e17 / 2.53184e16 + 0.6890625);
	/* 0.6890625 / 7.3245529 = 9.41 % */
	assert_true(fabs(o.comm_fraction - 0.0940757) < 1e-6);
	/* 250000 steps x 7.3245529 s / 86400 = 21.19 days; x 64 GPUs / 3600 = 32553.6 GPU-h */
	assert_true(fabs(o.days - 21.1937294) < 1e-6);
	assert_true(fabs(o.gpu_hours - 32553.5684) < 1e-3);
	assert_true(fabs(o.cost - 81383.921) < 1e-2);
}

static void test_case_b_zero3_hidden(void **state)
{
	/* Case B: 70B, ZeRO-3, dp 16 of 128 GPUs (model-parallel 8), half the compute overlaps */
	struct est_inputs in = {
		.params = 70e9, .bytes_per_grad = 2, .dp_size = 16, .gpus = 128, .stage = EST_ZERO3,
		.tokens_per_step = 4194304, .total_tokens = 2e12, .peak_tflops = 989, .mfu = 0.35,
		.price_gpu_hour = 3, .bucket_bytes = 134217728, .overlap = 0.5,
		.busbw_GBps = 20, .alpha_us = NAN, .beta_GBps = NAN,
	};
	struct est_outputs o;
	char err[128];
	(void)state;

	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), 0);
	/* S = 2 x 70e9 / 8 = 17.5e9 B; k = 3; sync = 3 x 15/16 x 17.5e9 / 20e9 = 2.4609375 s */
	assert_near(o.grad_bytes, 17.5e9);
	assert_near(o.k, 3);
	assert_near(o.sync_s, 2.4609375);
	assert_true(isnan(o.sync_fit_s));          /* no fit given */
	/* compute = 6 x 70e9 x 4194304 / (128 x 989e12 x 0.35) = 39.7589 s; 0.5 x that > 2.46 */
	assert_true(fabs(o.compute_s - 39.7589484) < 1e-6);
	assert_near(o.exposed_s, 0);
	assert_near(o.comm_fraction, 0);
	assert_near(o.step_s, o.compute_s);
}

static void test_stages_and_one_rank(void **state)
{
	struct est_inputs in = case_c();
	struct est_outputs o;
	enum est_stage s;
	char err[128];
	(void)state;

	/* ZeRO-1 and -2 move what DDP moves; ZeRO-3 half as much again */
	for (int st = EST_DDP; st <= EST_ZERO3; st++) {
		in.stage = (enum est_stage)st;
		assert_int_equal(est_compute(&in, &o, err, sizeof(err)), 0);
		assert_near(o.sync_s, st == EST_ZERO3 ? 1.05 : 0.7);
		assert_int_equal(est_stage_parse(est_stage_name(in.stage), &s), 0);
		assert_int_equal(s, in.stage);
	}
	assert_int_equal(est_stage_parse("zero4", &s), -1);
	/* one data-parallel rank syncs nothing, and needs no busbw */
	in = case_c();
	in.dp_size = 1;
	in.busbw_GBps = 0;
	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), 0);
	assert_near(o.sync_s, 0);
	assert_near(o.sync_fit_s, 0);
	assert_near(o.step_s, 15);
}

static void test_bad_inputs(void **state)
{
	/* one input out of range at a time: refused, with the input named */
	static const struct { size_t off; double v; const char *want; } dbl[] = {
		{ offsetof(struct est_inputs, params), 0, "params" },
		{ offsetof(struct est_inputs, params), NAN, "params" },
		{ offsetof(struct est_inputs, bytes_per_grad), -2, "bytes per gradient" },
		{ offsetof(struct est_inputs, tokens_per_step), 0, "tokens per step" },
		{ offsetof(struct est_inputs, total_tokens), INFINITY, "total tokens" },
		{ offsetof(struct est_inputs, peak_tflops), 0, "peak" },
		{ offsetof(struct est_inputs, mfu), 1.5, "MFU" },
		{ offsetof(struct est_inputs, mfu), 0, "MFU" },
		{ offsetof(struct est_inputs, price_gpu_hour), -1, "price" },
		{ offsetof(struct est_inputs, bucket_bytes), 0, "bucket" },
		{ offsetof(struct est_inputs, overlap), 1.01, "overlap" },
		{ offsetof(struct est_inputs, busbw_GBps), 0, "busbw" },
	};
	struct est_inputs in;
	struct est_outputs o;
	char err[128];
	(void)state;

	for (size_t i = 0; i < sizeof(dbl) / sizeof(dbl[0]); i++) {
		in = case_c();
		*(double *)((char *)&in + dbl[i].off) = dbl[i].v;
		err[0] = '\0';
		assert_int_equal(est_compute(&in, &o, err, sizeof(err)), -1);
		assert_non_null(strstr(err, dbl[i].want));
	}
	in = case_c();
	in.gpus = 12;                  /* not a multiple of dp 8 */
	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "multiple"));
	in = case_c();
	in.dp_size = 0;
	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), -1);
	in = case_c();
	in.stage = (enum est_stage)7;
	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "stage"));
	/* no fit, or a fit with beta <= 0: busbw alone, the fit's figure null */
	in = case_c();
	in.beta_GBps = 0;
	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), 0);
	assert_true(isnan(o.sync_fit_s));
}

static void test_json(void **state)
{
	struct est_inputs in = case_c();
	struct est_outputs o;
	char err[128];
	json_t *j, *i, *out;
	(void)state;

	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), 0);
	j = est_json(&in, &o);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "label")),
			    "model, not a measurement");
	assert_string_equal(json_string_value(json_object_get(j, "formulas")), "docs/estimate.md");
	i = json_object_get(j, "inputs");
	out = json_object_get(j, "outputs");
	/* every input is listed */
	assert_int_equal(json_object_size(i), 15);
	assert_string_equal(json_string_value(json_object_get(i, "stage")), "ddp");
	assert_near(json_number_value(json_object_get(i, "busbw_GBps")), 10);
	assert_near(json_number_value(json_object_get(i, "alpha_us")), 100);
	assert_near(json_number_value(json_object_get(out, "step_s")), 15.4);
	assert_near(json_number_value(json_object_get(out, "sync_fit_s")), 0.804);
	assert_near(json_number_value(json_object_get(out, "cost")), 2 * 8 * 15400.0 / 3600);
	json_decref(j);
	/* without a fit its inputs and output are null, not 0 */
	in.alpha_us = NAN;
	est_compute(&in, &o, err, sizeof(err));
	j = est_json(&in, &o);
	assert_true(json_is_null(json_object_get(json_object_get(j, "inputs"), "alpha_us")));
	assert_true(json_is_null(json_object_get(json_object_get(j, "outputs"), "sync_fit_s")));
	json_decref(j);
}

static void test_scaling(void **state)
{
	/* 1 node (no network), 2, 4, 8: flat is ideal, since busbw is per link */
	const struct scale_point p[] = { { 1, 0 }, { 2, 0.08 }, { 4, 0.048 }, { 8, 0.036 } };
	struct scale_eff e[4];
	json_t *j;
	(void)state;

	assert_int_equal(est_scaling(p, 4, 0, e), 1);  /* base: 2 nodes */
	assert_true(isnan(e[0].ideal_GBps) && isnan(e[0].eff_base) && isnan(e[0].eff_step));
	assert_near(e[1].ideal_GBps, 0.08);
	assert_near(e[1].eff_base, 1);
	assert_true(isnan(e[1].eff_step));
	/* 0.048 / 0.08 = 0.6 of ideal; 2 -> 4 keeps 0.6; 4 -> 8 keeps 0.036 / 0.048 = 0.75 */
	assert_near(e[2].eff_base, 0.6);
	assert_near(e[2].eff_step, 0.6);
	assert_near(e[3].eff_base, 0.45);
	assert_near(e[3].eff_step, 0.75);
	assert_int_equal(e[3].nodes, 8);
	/* an explicit base */
	assert_int_equal(est_scaling(p, 4, 4, e), 2);
	assert_near(e[3].eff_base, 0.75);
	assert_true(isnan(e[1].eff_base));
	/* no usable base: a base at 0 GB/s, or none at that node count */
	assert_int_equal(est_scaling(p, 4, 1, e), -1);
	assert_int_equal(est_scaling(p, 4, 16, e), -1);
	assert_true(isnan(e[2].eff_base));
	assert_int_equal(est_scaling(p, 1, 0, e), -1);
	j = est_scaling_json(e, 4);
	assert_int_equal(json_array_size(j), 4);
	assert_true(json_is_null(json_object_get(json_array_get(j, 2), "eff_base")));
	json_decref(j);
	est_scaling(p, 4, 0, e);
	j = est_scaling_json(e, 4);
	assert_near(json_number_value(json_object_get(json_array_get(j, 3), "eff_step")), 0.75);
	json_decref(j);
	/* issue 15, 6: a 2-node step at 0 is a failed step below the base (4 nodes), not a missing base */
	{
		const struct scale_point z[] = { { 1, 0 }, { 2, 0 }, { 4, 0.1 }, { 8, 0.09 } };

		assert_int_equal(est_scaling(z, 4, 0, e), 2);
		assert_near(e[1].eff_base, 0);
		assert_near(e[1].ideal_GBps, 0.1);
		assert_true(isnan(e[0].eff_base));
		assert_near(e[3].eff_base, 0.9);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_numbers),
		cmocka_unit_test(test_case_a_7b_ddp),
		cmocka_unit_test(test_case_b_zero3_hidden),
		cmocka_unit_test(test_stages_and_one_rank),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_scaling),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
