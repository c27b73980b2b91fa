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
	/* Case B: 70B, ZeRO-3, tp 8 inside each node, dp 16 (128 GPUs), half the compute overlaps */
	struct est_inputs in = {
		.params = 70e9, .bytes_per_grad = 2, .dp_size = 16, .tp = 8, .gpus = 128, .gpus_per_node = 8,
		.stage = EST_ZERO3, .layers = 80, .act_bytes = 67108864,
		.tokens_per_step = 4194304, .total_tokens = 2e12, .peak_tflops = 989, .mfu = 0.35,
		.price_gpu_hour = 3, .bucket_bytes = 134217728, .overlap = 0.5,
		.busbw_GBps = 20, .alpha_us = NAN, .beta_GBps = NAN, .tp_busbw_GBps = 300,
	};
	struct est_outputs o;
	char err[128];
	(void)state;

	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), 0);
	/* S = 2 x 70e9 / 8 = 17.5e9 B per GPU; the node's 8 GPUs are in 8 rings: groups 8, 16 nodes each */
	assert_near(o.grad_bytes, 17.5e9);
	assert_near(o.k, 3);
	assert_near(o.groups, 8);
	assert_near(o.dp_nodes, 16);
	/* sync = 3 x 15/16 x 8 x 17.5e9 / 20e9 = 19.6875 s (8x what S / 20 GB/s alone says) */
	assert_near(o.sync_s, 19.6875);
	assert_true(isnan(o.sync_fit_s));          /* no fit given */
	/* compute = 6 x 70e9 x 4194304 / (128 x 989e12 x 0.35) = 39.7589 s; 0.5 x that > 19.69 */
	assert_true(fabs(o.compute_s - 39.7589484) < 1e-6);
	/* tp = 1 x 80 x 4 x 2 x 7/8 x 67108864 / 300e9 = 0.1252699 s, never hidden */
	assert_near(o.tp_s, 80 * 4 * 1.75 * 67108864 / 300e9);
	assert_near(o.exposed_s, o.tp_s);
	assert_near(o.step_s, o.compute_s + o.tp_s);
}

/* a measured curve: busbw at the payloads a test names, NaN elsewhere */
struct curve {
	double bytes[4], GBps[4];
};

static double curve_at(double bytes, void *ctx)
{
	const struct curve *c = ctx;

	for (int i = 0; i < 4; i++)
		if (c->bytes[i] == bytes)
			return c->GBps[i];
	return NAN;
}

/* issue 15, 8: the fit's cross-check in its busbw form, at the dp ranks, not at the fit's */
static void test_fit_busbw_form(void **state)
{
	struct est_inputs in = case_c();
	struct est_outputs o;
	char err[128];
	(void)state;

	/* Case C's fit measured on 2 ranks: busbw factor 1, beta_busbw = 5 GB/s; applied at dp 8 */
	in.fit_ranks = 2;
	in.beta_busbw_GBps = 5;
	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), 0);
	/* alpha at 8 ranks = 100 us x 7 / 1 = 700 us; per pass and bucket half of it:
	 * fit = 2 x (40 x 350e-6 + 7/8 x 4e9 / 5e9) = 2 x (0.014 + 0.7) = 1.428 s (S / beta said 0.804) */
	assert_near(o.sync_fit_s, 1.428);
	/* the 600 us of ring latency the 2 measured ranks did not pay: 2 x 40 x 300e-6 = 0.024 s */
	assert_near(o.latency_s, 0.024);
	assert_near(o.sync_s, 0.724);
	/* measured at dp's ranks, the form gives back Case C's 0.804 s (beta_busbw = 5 x 2 x 7/8) */
	in = case_c();
	in.fit_ranks = 8;
	in.beta_busbw_GBps = 8.75;
	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), 0);
	assert_near(o.sync_fit_s, 0.804);
	assert_near(o.latency_s, 0);
}

/* issue 15, 9: a gradient smaller than a bucket, and the last partial bucket, at their own size */
static void test_partial_buckets(void **state)
{
	struct curve c = { { 4e6, 26214400 }, { 0.02, 0.05 } };
	struct est_inputs in = case_c();
	struct est_outputs o;
	char err[128];
	(void)state;

	/* 1e6 fp32 parameters on 4 ranks, 25 MiB buckets: the payload is S = 4e6 B, at 0.02 GB/s */
	in.params = 1e6;
	in.dp_size = in.gpus = 4;
	in.bucket_bytes = 26214400;
	in.busbw_GBps = 0.05;
	in.busbw_at = curve_at;
	in.curve = &c;
	in.alpha_us = NAN;
	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), 0);
	/* 2 x 3/4 x 4e6 / 0.02e9 = 0.3 s (at the bucket's 0.05 GB/s: 0.12 s) */
	assert_near(o.sync_s, 0.3);
	assert_near(o.max_payload, 4e6);
	/* 2.5 buckets of 1e8 B: two at busbw(1e8) = 10 GB/s, the last 5e7 B at busbw(5e7) = 5 GB/s */
	c = (struct curve){ { 1e8, 5e7 }, { 10, 5 } };
	in = case_c();
	in.params = 6.25e7;
	in.busbw_at = curve_at;
	in.curve = &c;
	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), 0);
	/* per pass 7/8 x (2e8 / 10e9 + 5e7 / 5e9) = 7/8 x 0.03 = 0.02625 s; 2 passes */
	assert_near(o.sync_s, 0.0525);
	/* a payload the curve does not know: refused, not guessed */
	in.params = 6.5e7;
	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "busbw"));
}

/* issue 15, 10: 70B on 64 nodes x 8 GPUs, tp 8, pp 4 (docs/estimate.md, Case D) */
static void test_layout_70b(void **state)
{
	/* the all-rank busbw at the payloads per node: 8 rings x 1e8 B buckets, 8 x 7.5e7 B tails */
	struct curve c = { { 8e8, 6e8 }, { 360, 350 } };
	struct est_inputs in = {
		.params = 70e9, .bytes_per_grad = 2, .dp_size = 16, .tp = 8, .pp = 4, .gpus = 512,
		.gpus_per_node = 8, .ga_steps = 64, .layers = 80, .act_bytes = 67108864, .stage = EST_DDP,
		.tokens_per_step = 4194304, .total_tokens = 2e12, .peak_tflops = 989, .mfu = 0.4,
		.price_gpu_hour = 2, .bucket_bytes = 1e8, .overlap = 0,
		.busbw_GBps = 360, .busbw_at = curve_at, .curve = &c, .alpha_us = NAN, .beta_GBps = NAN,
		.tp_busbw_GBps = 300, .pair_GBps = 392,
	};
	struct est_outputs o;
	char err[128];
	(void)state;

	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), 0);
	/* S = 2 x 70e9 / 32 = 4.375e9 B per GPU: 43 buckets of 1e8 and 7.5e7 B */
	assert_near(o.grad_bytes, 4.375e9);
	assert_near(o.groups, 8);
	assert_near(o.dp_nodes, 16);
	/* per pass 15/16 x 8 x (43 x 1e8 / 360e9 + 7.5e7 / 350e9) = 0.0911905 s; DDP: 2 passes */
	assert_near(o.sync_s, 2 * 15.0 / 16 * 8 * (43 * 1e8 / 360e9 + 7.5e7 / 350e9));
	assert_true(fabs(o.sync_s - 0.1823810) < 1e-6);
	/* tp: 64 micro-batches x 20 layers x 4 x 2 x 7/8 x 67108864 / 300e9 = 2.004318 s */
	assert_true(fabs(o.tp_s - 2.0043181) < 1e-6);
	/* pp: 2 x (64 + 4 - 2) x 67108864 / 392e9 = 0.0225979 s */
	assert_true(fabs(o.pp_s - 0.0225979) < 1e-6);
	/* compute = 6 x 70e9 x 4194304 / (512 x 989e12 x 0.4) = 8.697270 s; comm 20.26 % */
	assert_true(fabs(o.compute_s - 8.6972700) < 1e-6);
	assert_true(fabs(o.comm_fraction - 0.2025658) < 1e-6);
	assert_true(fabs(o.days - 60.192782) < 1e-5);
	/* gpus must be tp x pp x dp; tp needs its busbw, pp its pair bandwidth, both the layers */
	in.gpus = 256;
	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "tp x pp x dp_size"));
	in.gpus = 512;
	in.tp_busbw_GBps = NAN;
	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "inside one node"));
	in.tp_busbw_GBps = 300;
	in.pair_GBps = 0;
	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "node-to-node"));
	in.pair_GBps = 392;
	in.layers = 0;
	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "layers"));
}

/* issue 15, 11: micro-batches repeat ZeRO-3's all-gathers; the parameters' dtype prices them */
static void test_ga_and_param_dtype(void **state)
{
	struct est_inputs in = case_c();
	struct est_outputs o;
	char err[128];
	(void)state;

	/* ZeRO-3, 4 micro-batches: 2 x 4 all-gathers + 1 reduce-scatter = 9 passes of 7/8 x 4e9 / 10e9 */
	in.stage = EST_ZERO3;
	in.ga_steps = 4;
	in.alpha_us = NAN;
	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), 0);
	assert_near(o.k, 9);
	assert_near(o.sync_s, 9 * 0.35);
	/* ZeRO-1 with bf16 gradients (2e9 B) and fp32 parameters (4e9 B): 7/8 x 6e9 / 10e9 = 0.525 s */
	in = case_c();
	in.stage = EST_ZERO1;
	in.bytes_per_grad = 2;
	in.bytes_per_param = 4;
	in.alpha_us = NAN;
	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), 0);
	assert_near(o.param_bytes, 4e9);
	assert_near(o.sync_s, 0.525);
	/* at the target ranks the ring latency grows: a fit of 4 ranks (alpha 389.5 us) applied at 512,
	 * 1 bucket per pass: 2 x 1 x (389.5 x 511/3 - 389.5) / 2 us = 0.0659549 s more */
	in = case_c();
	in.dp_size = in.gpus = 512;
	in.bucket_bytes = 4e9;
	in.alpha_us = 389.5;
	in.fit_ranks = 4;
	in.beta_GBps = 0.06496;
	in.beta_busbw_GBps = 0.09744;
	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), 0);
	assert_near(o.latency_s, (389.5 * 511 / 3 - 389.5) * 1e-6);
	assert_near(o.sync_s, 2 * 511.0 / 512 * 4e9 / 10e9 + o.latency_s);
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
	in.dp_size = in.gpus = 1;
	in.busbw_GBps = 0;
	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), 0);
	assert_near(o.sync_s, 0);
	assert_near(o.sync_fit_s, 0);
	assert_near(o.step_s, 120);    /* 6e15 / (1 x 100e12 x 0.5) */
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
	in.gpus = 12;                  /* not tp 1 x pp 1 x dp 8 */
	assert_int_equal(est_compute(&in, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "tp x pp x dp_size"));
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
	assert_int_equal(json_object_size(i), 26);
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
		cmocka_unit_test(test_fit_busbw_form),
		cmocka_unit_test(test_partial_buckets),
		cmocka_unit_test(test_layout_70b),
		cmocka_unit_test(test_ga_and_param_dtype),
		cmocka_unit_test(test_stages_and_one_rank),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_scaling),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
