/*
 * ccreport compare and --prom in memory (report/compare.h, render/prom.h):
 * normalisation to the bound, criteria that cannot be compared, the ranking
 * without a price, the node-count plan's extrapolation by hand, and the
 * exposition's label escaping.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../render/prom.h"
#include "../../report/compare.h"
#include "../../report/nodes.h"
#include "../../report/workload.h"

/* a summary with one criterion and, when busbw > 0, an estimate */
static json_t *summary(const char *unit, const char *op, double value, double bound, const char *verdict,
		       double busbw)
{
	json_t *s = json_pack("{s:i, s:s, s:s, s:{s:s}, s:{s:i, s:i}, s:[{s:s, s:s, s:s, s:s, s:b, s:s, s:s, "
			      "s:{s:s, s:f, s:n}, s:{s:s, s:s, s:f}, s:[], s:[]}]}",
			      "schema", 1, "tool", "ccreport", "verdict", verdict, "profile", "name", "p",
			      "cluster", "nodes", 2, "ranks", 16, "criteria", "id", "c1", "title", "t", "metric",
			      "bw", "unit", unit, "required", 1, "verdict", verdict, "reason", "r", "bound", "op",
			      op, "value", bound, "relative", "worst", "element", "node0/gpu0", "host", "node0",
			      "value", value, "failures", "values");

	if (busbw > 0)
		json_object_set_new(s, "estimate", json_pack(
			"{s:b, s:{s:f, s:f, s:i, s:i, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:n, s:n}, s:{}}",
			"made", 1, "inputs", "params", 1e9, "bytes_per_grad", 4.0, "dp_size", 8, "gpus", 8,
			"stage", "ddp", "tokens_per_step", 1e6, "total_tokens", 1e9, "peak_tflops", 100.0,
			"mfu", 0.5, "price_per_gpu_hour", 0.0, "bucket_bytes", 1e8, "overlap", 0.02,
			"busbw_GBps", busbw, "alpha_us", "beta_GBps", "sources"));
	return s;
}

static void test_normalised_and_incomparable(void **state)
{
	struct cmp_run runs[2] = {
		{ .name = "A", .path = "a", .s = summary("GB/s", ">=", 50, 40, "pass", 10), .price = 2 },
		{ .name = "B", .path = "b", .s = summary("us", "<=", 2, 4, "pass", 5), .price = -1 },
	};
	struct workload wl = { 0 };
	struct cmp_opts o = { .wl = &wl, .generated_utc = "x" };
	char err[256];
	json_t *doc, *row;
	(void)state;

	doc = compare_build(runs, 2, &o, err, sizeof(err));
	assert_non_null(doc);
	row = json_array_get(json_object_get(doc, "criteria"), 0);
	/* A: 50 / 40 = 1.25 (>=); B: 4 / 2 = 2 (<=) */
	assert_true(fabs(json_real_value(json_object_get(json_array_get(json_object_get(row, "clusters"), 0),
							 "normalized")) - 1.25) < 1e-12);
	assert_true(fabs(json_real_value(json_object_get(json_array_get(json_object_get(row, "clusters"), 1),
							 "normalized")) - 2) < 1e-12);
	assert_true(json_is_false(json_object_get(row, "comparable")));
	assert_string_equal(json_string_value(json_object_get(row, "why")), "different units (B's profile p)");
	/*
	 * docs/estimate.md's case C at busbw 10 and 5 GB/s: S = 4e9 B, sync 2 x 7/8 x 4e9 /
	 * busbw = 0.7 and 1.4 s, compute 6e15 / (8 x 100e12 x 0.5) = 15 s, 0.3 s of it hides
	 * sync: step 15.4 and 16.1 s; 1000 steps. A has a price
	 * (--price 2), B none: A ranked by cost, both by time, A first.
	 */
	json_t *r = json_object_get(doc, "ranking");
	assert_int_equal(json_array_size(json_object_get(r, "by_cost")), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(r, "no_price"), 0),
								"name")), "B");
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(r, "by_time"), 0),
								"name")), "A");
	json_t *wa = json_array_get(json_object_get(json_object_get(doc, "workload"), "clusters"), 0);
	/* cost = 8 GPUs x 1000 steps x 15.4 s / 3600 x $2 */
	assert_true(fabs(json_number_value(json_object_get(json_object_get(wa, "outputs"), "cost")) -
			 8 * 1000 * 15.4 / 3600 * 2) < 1e-9);
	json_decref(doc);
	json_decref(runs[0].s);
	json_decref(runs[1].s);
}

static void test_nodes_extrapolation(void **state)
{
	/* a scale curve at 2 and 4 nodes (1 rank each), the estimate at 4 with a fit */
	json_t *s = json_pack("{s:{s:{s:s, s:s, s:s, s:s, s:i, s:i}}, s:{s:[{s:s, s:s, s:s, s:s, "
			      "s:[{s:i, s:f}, {s:i, s:f}]}]}}",
			      "estimate", "measured", "collective", "all_reduce", "backend", "mpi", "dtype",
			      "float", "op", "sum", "nodes", 4, "ranks", 4, "charts", "scaling", "name",
			      "all_reduce", "backend", "mpi", "dtype", "float", "op", "sum", "efficiency",
			      "nodes", 2, "busbw_GBps", 2.0, "nodes", 4, "busbw_GBps", 1.0);
	json_t *in = json_pack("{s:f, s:f, s:i, s:i, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
			       "params", 1e6, "bytes_per_grad", 4.0, "dp_size", 4, "gpus", 4, "stage", "ddp",
			       "tokens_per_step", 4096.0, "total_tokens", 1e8, "peak_tflops", 0.05, "mfu", 0.5,
			       "price_per_gpu_hour", 2.0, "bucket_bytes", 1e6, "overlap", 0.0, "busbw_GBps", 0.5,
			       "alpha_us", 100.0, "beta_GBps", 1.0);
	json_t *plan, *pts, *p8;
	(void)state;

	plan = nodes_plan("S", s, in, 1e-9, 0);
	assert_non_null(plan);
	pts = json_object_get(plan, "points");
	/* 2 and 4 measured, 8, 16, 32 extrapolated */
	assert_int_equal(json_array_size(pts), 5);
	/* at 2 nodes: 0.5 x 2 / 1 = 1 GB/s */
	assert_true(fabs(json_real_value(json_object_get(json_array_get(pts, 0), "busbw_GBps")) - 1) < 1e-12);
	/*
	 * at 8 nodes: t(R) = 100e-6 (R-1)/3 + 1e-3 ((R-1)/R) / (3/4); t(4) = 1.1e-3,
	 * t(8) = 233.33e-6 + 1.16667e-3 = 1.4e-3; busbw_fit(4) = 1e6 x 1.5 / 1.1e-3 / 1e9,
	 * busbw_fit(8) = 1e6 x 1.75 / 1.4e-3 / 1e9 = 1.25; ratio 1.25 / 1.363636 = 0.916667
	 */
	p8 = json_array_get(pts, 2);
	assert_int_equal(json_integer_value(json_object_get(p8, "nodes")), 8);
	assert_true(json_is_true(json_object_get(p8, "extrapolated")));
	assert_true(fabs(json_real_value(json_object_get(p8, "busbw_GBps")) - 0.5 * 1.25 / (1.5 / 1.1)) < 1e-9);
	/* no node count is done in 1e-9 days */
	assert_true(json_is_null(json_object_get(json_object_get(plan, "choice"), "nodes")));
	json_decref(plan);
	json_decref(s);
	json_decref(in);
}

static void test_prom_labels(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	(void)state;

	esc_prom(f, "a\"b\\c\nd\x01" "e");
	fclose(f);
	assert_string_equal(buf, "a\\\"b\\\\c\\nde");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normalised_and_incomparable),
		cmocka_unit_test(test_nodes_extrapolation),
		cmocka_unit_test(test_prom_labels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
