/* Unit tests: ccreport's evaluation (report/eval.c) and summary (report/summary.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../report/report.h"

static struct profile prof;
static struct eval ev;
static char err[512];

/* judges results (JSON lines, header added) against a profile; returns the summary */
static json_t *judge(const char *profile, const char *lines)
{
	char *text;
	struct summary_opts so = { .profile_path = "p.ini" };
	json_t *s;

	if (profile_parse_string(&prof, profile, "p.ini", err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(eval_init(&ev, &prof), 0);
	assert_true(asprintf(&text, "{\"type\":\"run\",\"schema\":1,\"hosts\":[{\"name\":\"a\"},{\"name\":\"b\"}],"
			     "\"world_size\":2}\n%s", lines) > 0);
	if (eval_read_mem(&ev, text, strlen(text), "r.jsonl", err, sizeof(err)))
		fail_msg("%s", err);
	free(text);
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

static json_t *crit(json_t *s, const char *id)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(s, "criteria"), i, c)
		if (!strcmp(json_string_value(json_object_get(c, "id")), id))
			return c;
	fail_msg("no criterion %s", id);
	return NULL;
}

static const char *verdict(json_t *c)
{
	return json_string_value(json_object_get(c, "verdict"));
}

static double num(json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

#define BW(el, host, bytes, v) "{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"pcie\",\"test\":\"h2d\"," \
	"\"scope\":\"gpu\",\"element\":\"" el "\",\"host\":\"" host "\",\"bytes\":" #bytes ",\"bw_GBps\":" #v "}\n"
#define PROFILE(extra) "[criterion c]\nprobe = pcie\ntest = h2d\nmetric = bw_GBps\nbound = >= 40 GB/s\n" extra

/* the plateau: the median of the worst values at the 3 largest sizes */
static void test_plateau(void **state)
{
	json_t *s, *c;

	(void)state;
	s = judge(PROFILE("scope = gpu\noutlier_tolerance = off\n"),
		  BW("a/gpu0", "a", 1024, 10) BW("a/gpu0", "a", 2048, 50) BW("a/gpu0", "a", 4096, 45)
		  BW("a/gpu0", "a", 8192, 60) BW("a/gpu0", "a", 4096, 30));
	c = crit(s, "c");
	/* sizes 2048, 4096, 8192 -> 50, min(45, 30) = 30, 60: median 50; 1024 is left out */
	assert_true(num(json_object_get(c, "worst"), "value") == 50);
	assert_string_equal(verdict(c), "pass");
	done(s);
	/* a fixed size judges the worst record at that size */
	s = judge(PROFILE("scope = gpu\nsize = 4K\n"), BW("a/gpu0", "a", 4096, 45) BW("a/gpu0", "a", 4096, 30));
	c = crit(s, "c");
	assert_string_equal(verdict(c), "fail");
	assert_true(num(json_array_get(json_object_get(c, "failures"), 0), "shortfall_pct") == 25);
	assert_string_equal(json_string_value(json_object_get(s, "verdict")), "fail");
	assert_int_equal(json_integer_value(json_object_get(s, "exit_code")), 1);
	done(s);
}

/* scope node: the worst GPU of each host */
static void test_node_scope(void **state)
{
	json_t *s, *c, *f;

	(void)state;
	s = judge(PROFILE("scope = node\nsize = any\n"),
		  BW("a/gpu0", "a", 64, 50) BW("a/gpu1", "a", 64, 35) BW("b/gpu0", "b", 64, 50));
	c = crit(s, "c");
	assert_int_equal(json_integer_value(json_object_get(c, "elements")), 2);
	f = json_object_get(c, "failures");
	assert_int_equal(json_array_size(f), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(f, 0), "element")), "a");
	done(s);
}

/* a relative bound: judged against each record's rate; no rate, no verdict */
static void test_relative_bound(void **state)
{
	json_t *s, *c;

	(void)state;
	s = judge("[criterion r]\nprobe = pcie\ntest = h2d\nmetric = bw_GBps\nscope = gpu\nsize = any\n"
		  "bound = >= 0.8 of rate\n",
		  "{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"pcie\",\"test\":\"h2d\",\"scope\":\"gpu\","
		  "\"element\":\"a/gpu0\",\"host\":\"a\",\"bytes\":1,\"bw_GBps\":20,\"rate_GBps\":31.5}\n"
		  "{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"pcie\",\"test\":\"h2d\",\"scope\":\"gpu\","
		  "\"element\":\"b/gpu0\",\"host\":\"b\",\"bytes\":1,\"bw_GBps\":50,\"rate_GBps\":63}\n");
	c = crit(s, "r");
	assert_string_equal(verdict(c), "fail");   /* 20 < 0.8 x 31.5 = 25.2; 50 < 50.4 */
	assert_int_equal(json_array_size(json_object_get(c, "failures")), 2);
	assert_true(fabs(num(json_array_get(json_object_get(c, "failures"), 1), "bound") - 50.4) < 1e-9);
	done(s);
	s = judge("[criterion r]\nprobe = pcie\ntest = h2d\nmetric = bw_GBps\nscope = gpu\nsize = any\n"
		  "bound = >= 0.8 of rate\n", BW("a/gpu0", "a", 1, 50));
	c = crit(s, "r");
	assert_string_equal(verdict(c), "incomplete");
	assert_non_null(strstr(json_string_value(json_object_get(c, "reason")), "no rate reported"));
	assert_int_equal(json_integer_value(json_object_get(s, "exit_code")), 4);
	done(s);
}

/* repeat = best: the best repeat of each direction, the worse direction */
static void test_repeat_best(void **state)
{
#define NP(src, dst, v) "{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"netpair\",\"test\":\"bw_uni\"," \
	"\"src\":\"" src "\",\"dst\":\"" dst "\",\"bytes\":4194304,\"bw_Gbps\":" #v "}\n"
	static const char *const prof_best = "[criterion n]\nprobe = netpair\ntest = bw_uni\nmetric = bw_Gbps\n"
		"scope = link\nsize = any\nrepeat = best\nbound = >= 0.5 Gb/s\n";
	json_t *s, *w;

	(void)state;
	/* a->b dipped once then measured 0.9; b->a is 0.7: the link is 0.7 */
	s = judge(prof_best, NP("a", "b", 0.9) NP("a", "b", 0.1) NP("b", "a", 0.7) NP("a", "b", 0.88));
	w = json_object_get(crit(s, "n"), "worst");
	assert_string_equal(json_string_value(json_object_get(w, "element")), "a-b");
	assert_true(num(w, "value") == 0.7);
	assert_string_equal(verdict(crit(s, "n")), "pass");
	done(s);
	/* a direction that is slow every time still fails the link */
	s = judge(prof_best, NP("a", "b", 0.9) NP("b", "a", 0.1) NP("b", "a", 0.2));
	assert_true(num(json_object_get(crit(s, "n"), "worst"), "value") == 0.2);
	assert_string_equal(verdict(crit(s, "n")), "fail");
	done(s);
	/* the default keeps the worst record */
	s = judge("[criterion n]\nprobe = netpair\ntest = bw_uni\nmetric = bw_Gbps\nscope = link\nsize = any\n"
		  "bound = >= 0.5 Gb/s\n", NP("a", "b", 0.9) NP("a", "b", 0.1) NP("b", "a", 0.7));
	assert_true(num(json_object_get(crit(s, "n"), "worst"), "value") == 0.1);
	done(s);
}

static void test_outlier(void **state)
{
	json_t *s, *o;

	(void)state;
	s = judge(PROFILE("scope = gpu\nsize = any\noutlier_tolerance = 10%\n"),
		  BW("a/gpu0", "a", 1, 100) BW("a/gpu1", "a", 1, 101) BW("b/gpu0", "b", 1, 99)
		  BW("b/gpu1", "b", 1, 80) BW("b/gpu2", "b", 1, 30));
	o = json_object_get(s, "outliers");
	/* 80 is 20 % below the median 99: named; 30 fails its bound and is named there */
	assert_int_equal(json_array_size(o), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(o, 0), "element")), "b/gpu1");
	assert_string_equal(verdict(crit(s, "c")), "fail");
	done(s);
}

/* skipped and not built: incomplete, never pass; optional criteria do not count */
static void test_skip(void **state)
{
	json_t *s;

	(void)state;
	s = judge(PROFILE("scope = gpu\n") "[criterion o]\nprobe = hbm\ntest = copy\nmetric = bw_GBps\n"
		  "scope = gpu\nbound = >= 1 GB/s\nrequired = no\n",
		  "{\"type\":\"skip\",\"kind\":\"probe\",\"name\":\"pcie\",\"reason\":\"not built: built without CUDA\"}\n"
		  "{\"type\":\"end\",\"status\":\"complete\"}\n");
	assert_string_equal(verdict(crit(s, "c")), "incomplete");
	assert_string_equal(json_string_value(json_object_get(crit(s, "c"), "reason")), "not built: built without CUDA");
	assert_string_equal(verdict(crit(s, "o")), "incomplete");
	assert_string_equal(json_string_value(json_object_get(s, "verdict")), "incomplete");
	done(s);
	s = judge(PROFILE("scope = gpu\n") "[criterion o]\nprobe = hbm\ntest = copy\nmetric = bw_GBps\n"
		  "scope = gpu\nbound = >= 1 GB/s\nrequired = no\n",
		  BW("a/gpu0", "a", 1, 50) "{\"type\":\"end\",\"status\":\"complete\"}\n");
	assert_string_equal(verdict(crit(s, "o")), "incomplete");
	assert_string_equal(json_string_value(json_object_get(s, "verdict")), "pass");
	done(s);
}

/* a host with fewer GPUs measured than the profile expects */
static void test_gpu_count(void **state)
{
	json_t *s;

	(void)state;
	s = judge("[hardware]\ngpus_per_node = 2\n" PROFILE("scope = gpu\n"),
		  BW("a/gpu0", "a", 1, 50) BW("a/gpu1", "a", 1, 50) BW("b/gpu0", "b", 1, 50)
		  "{\"type\":\"end\",\"status\":\"complete\"}\n");
	assert_string_equal(verdict(crit(s, "c")), "incomplete");
	assert_non_null(strstr(json_string_value(json_object_get(crit(s, "c"), "reason")), "b: 1 of 2 GPUs"));
	done(s);
}

/* counters: <= 0, the NIC named, no percentage against a bound of 0 */
static void test_counter(void **state)
{
	json_t *s, *f;

	(void)state;
	s = judge("[criterion k]\nprobe = ib\ntest = counters\nmetric = counter_delta.symbol_error\nscope = nic\n"
		  "size = any\nbound = <= 0\n",
		  "{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"ib\",\"test\":\"counters\",\"scope\":\"nic\","
		  "\"element\":\"a/mlx5_0:1\",\"host\":\"a\",\"counter_delta\":{\"symbol_error\":3}}\n"
		  "{\"type\":\"end\",\"status\":\"complete\"}\n");
	f = json_array_get(json_object_get(crit(s, "k"), "failures"), 0);
	assert_string_equal(json_string_value(json_object_get(f, "element")), "a/mlx5_0:1");
	assert_true(json_is_null(json_object_get(f, "shortfall_pct")));
	done(s);
}

/* versions differ: listed by host, fail by default */
static void test_consistency(void **state)
{
	json_t *s, *c;

	(void)state;
	s = judge(PROFILE("scope = gpu\nsize = any\n"), BW("a/gpu0", "a", 1, 50)
		  "{\"type\":\"inventory\",\"kind\":\"gpu\",\"host\":\"a\",\"versions\":{\"driver\":\"1\"}}\n"
		  "{\"type\":\"inventory\",\"kind\":\"gpu\",\"host\":\"b\",\"versions\":{\"driver\":\"2\"}}\n"
		  "{\"type\":\"end\",\"status\":\"complete\"}\n");
	c = json_array_get(json_object_get(s, "consistency"), 0);
	assert_string_equal(json_string_value(json_object_get(c, "key")), "driver");
	assert_int_equal(json_array_size(json_object_get(c, "values")), 2);
	assert_string_equal(json_string_value(json_object_get(s, "verdict")), "fail");
	done(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plateau),
		cmocka_unit_test(test_node_scope),
		cmocka_unit_test(test_relative_bound),
		cmocka_unit_test(test_repeat_best),
		cmocka_unit_test(test_outlier),
		cmocka_unit_test(test_skip),
		cmocka_unit_test(test_gpu_count),
		cmocka_unit_test(test_counter),
		cmocka_unit_test(test_consistency),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
