/* Unit tests: ccreport's evaluation (report/eval.c) and summary (report/summary.c). */
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
	/* the skip's own text, then its fix */
	assert_string_equal(json_string_value(json_object_get(crit(s, "c"), "reason")), "not built: built without CUDA; "
			    "fix: rebuild ccprobe with the dependency (`make` prints `features: ...`), then run `ccprobe pcie`");
	assert_string_equal(verdict(crit(s, "o")), "incomplete");
	assert_string_equal(json_string_value(json_object_get(crit(s, "o"), "reason")),
			    "no measurement of hbm copy: not in the results; fix: run `ccprobe hbm`");
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


static const char *str_of(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

#define IB(el, host, v) "{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"ib\",\"test\":\"write_bw\"," \
	"\"scope\":\"rail_pair\",\"element\":\"" el "\",\"host\":\"" host "\",\"bytes\":8388608" v "}\n"

/* issue 15, 1: an element whose record lacks the metric is named, never left out */
static void test_missing_metric(void **state)
{
	json_t *s, *c;

	(void)state;
	s = judge("[criterion ib]\nprobe = ib\ntest = write_bw\nmetric = bw_Gbps\nscope = rail_pair\n"
		  "size = any\nbound = >= 380 Gb/s\n",
		  IB("a/mlx5_0-b/mlx5_0", "a", ",\"bw_Gbps\":392") IB("a/mlx5_1-b/mlx5_1", "a", "")
		  IB("a/mlx5_2-b/mlx5_2", "a", ",\"bw_Gbps\":null") IB("a/mlx5_3-b/mlx5_3", "a", ",\"bw_Gbps\":\"fast\"")
		  IB("a/mlx5_4-b/mlx5_4", "a", ",\"bw_Gbps\":391") "{\"type\":\"end\",\"status\":\"complete\"}\n");
	c = crit(s, "ib");
	assert_string_equal(verdict(c), "incomplete");
	assert_non_null(strstr(str_of(c, "reason"), "3 of 5 rail_pairs: a/mlx5_1-b/mlx5_1, a/mlx5_2-b/mlx5_2, "
				   "a/mlx5_3-b/mlx5_3"));
	assert_int_equal(json_array_size(json_object_get(c, "incomplete_elements")), 3);
	assert_int_equal(json_integer_value(json_object_get(s, "exit_code")), 4);
	done(s);
	/* and named beside a failure */
	s = judge("[criterion ib]\nprobe = ib\ntest = write_bw\nmetric = bw_Gbps\nscope = rail_pair\n"
		  "size = any\nbound = >= 380 Gb/s\n",
		  IB("a/mlx5_0-b/mlx5_0", "a", ",\"bw_Gbps\":39") IB("a/mlx5_1-b/mlx5_1", "a", ""));
	c = crit(s, "ib");
	assert_string_equal(verdict(c), "fail");
	assert_non_null(strstr(str_of(c, "reason"), "also incomplete: no value of bw_Gbps in the records of 1 of 2 "
				   "rail_pairs: a/mlx5_1-b/mlx5_1"));
	done(s);
}

#define H2D(el, bytes, v, rate) "{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"pcie\",\"test\":\"h2d\"," \
	"\"scope\":\"gpu\",\"element\":\"" el "\",\"host\":\"a\",\"bytes\":" #bytes ",\"bw_GBps\":" #v rate "}\n"

/* issue 15, 2: a fraction-of-rate bound never judges what is left of an element */
static void test_relative_partial(void **state)
{
	static const char *const prof_rel = "[criterion rel]\nprobe = pcie\ntest = h2d\nmetric = bw_GBps\n"
		"scope = gpu\nbound = >= 0.8 of rate\noutlier_tolerance = off\n";
	json_t *s, *c;

	(void)state;
	/* gpu0's two largest sizes read 10 GB/s without a rate: its 32M record alone would pass */
	s = judge(prof_rel, H2D("a/gpu0", 33554432, 50.88, ",\"rate_GBps\":63") H2D("a/gpu0", 134217728, 10, "")
		  H2D("a/gpu0", 268435456, 10, "") H2D("a/gpu1", 268435456, 52, ",\"rate_GBps\":63"));
	c = crit(s, "rel");
	assert_string_equal(verdict(c), "incomplete");
	assert_non_null(strstr(str_of(c, "reason"), "no rate reported for 1 of 2 gpus (the bound is a fraction of it): a/gpu0"));
	done(s);
	/* named even when another element fails */
	s = judge(prof_rel, H2D("a/gpu0", 33554432, 50.88, ",\"rate_GBps\":63") H2D("a/gpu0", 134217728, 10, "")
		  H2D("a/gpu1", 268435456, 20, ",\"rate_GBps\":63"));
	c = crit(s, "rel");
	assert_string_equal(verdict(c), "fail");
	assert_non_null(strstr(str_of(c, "reason"), "1 of 1 gpu below the bound; also incomplete: no rate reported "
				   "for 1 of 2 gpus (the bound is a fraction of it): a/gpu0"));
	assert_string_equal(json_string_value(json_array_get(json_object_get(c, "incomplete_elements"), 0)), "a/gpu0");
	done(s);
}

/* issue 15, 3: a plateau still rising, or collapsing at the largest size, is questioned */
static void test_plateau_shape(void **state)
{
	json_t *s, *c, *q;

	(void)state;
	s = judge(PROFILE("scope = gpu\noutlier_tolerance = off\n"),
		  BW("a/gpu0", "a", 1024, 10) BW("a/gpu0", "a", 2048, 30) BW("a/gpu0", "a", 4096, 47.9)
		  BW("a/gpu0", "a", 8192, 60) BW("a/gpu1", "a", 1024, 54) BW("a/gpu1", "a", 2048, 54)
		  BW("a/gpu1", "a", 4096, 54) BW("a/gpu1", "a", 8192, 5));
	c = crit(s, "c");
	/* gpu0: 30, 47.9, 60: judged 47.9 (passes 40), 60 > 1.1 x 47.9; gpu1: 54, 54, 5: 5 < 0.5 x 54 */
	assert_string_equal(verdict(c), "warn");
	q = json_object_get(c, "plateau_questioned");
	assert_int_equal(json_array_size(q), 2);
	assert_string_equal(str_of(json_array_get(q, 0), "element"), "a/gpu0");
	assert_string_equal(str_of(json_array_get(q, 0), "shape"), "rising");
	assert_int_equal(json_array_size(json_object_get(json_array_get(q, 0), "points")), 3);
	assert_string_equal(str_of(json_array_get(q, 1), "shape"), "collapse");
	/* which sizes made the worst element's plateau */
	q = json_object_get(json_object_get(c, "worst"), "plateau");
	assert_int_equal(json_array_size(q), 3);
	assert_int_equal(json_integer_value(json_array_get(json_array_get(q, 0), 0)), 2048);
	assert_non_null(strstr(str_of(c, "reason"), "2 plateau(s) questioned (a/gpu0: rising, a/gpu1: collapse)"));
	done(s);
	/* a flat plateau is not */
	s = judge(PROFILE("scope = gpu\n"), BW("a/gpu0", "a", 2048, 50) BW("a/gpu0", "a", 4096, 52)
		  BW("a/gpu0", "a", 8192, 53));
	assert_string_equal(verdict(crit(s, "c")), "pass");
	done(s);
}

/* issue 15, 4: a slow half cannot drag the reference the outliers are judged against */
static void test_outlier_slow_half(void **state)
{
	json_t *s, *o;

	(void)state;
	/* 9 of 16 GPUs at 80, 7 at 100: the median is 80 (nothing below it); the upper quartile 100 */
	s = judge(PROFILE("scope = gpu\nsize = any\noutlier_tolerance = 10%\n"),
		  BW("a/gpu0", "a", 1, 80) BW("a/gpu1", "a", 1, 80) BW("a/gpu2", "a", 1, 80) BW("a/gpu3", "a", 1, 80)
		  BW("a/gpu4", "a", 1, 80) BW("a/gpu5", "a", 1, 80) BW("a/gpu6", "a", 1, 80) BW("a/gpu7", "a", 1, 80)
		  BW("b/gpu0", "b", 1, 80) BW("b/gpu1", "b", 1, 100) BW("b/gpu2", "b", 1, 100) BW("b/gpu3", "b", 1, 100)
		  BW("b/gpu4", "b", 1, 100) BW("b/gpu5", "b", 1, 100) BW("b/gpu6", "b", 1, 100) BW("b/gpu7", "b", 1, 100));
	o = json_object_get(s, "outliers");
	assert_int_equal(json_array_size(o), 9);
	assert_true(num(json_array_get(o, 0), "peer_reference") == 100);
	assert_true(num(json_array_get(o, 0), "below_pct") == 20);
	assert_true(num(json_array_get(o, 0), "tolerance_pct") == 10);
	assert_string_equal(str_of(json_array_get(o, 0), "reference"), "upper quartile of the peers");
	assert_string_equal(verdict(crit(s, "c")), "warn");
	done(s);
}

#define AR(nodes, bytes, bw) "{\"type\":\"measurement\",\"kind\":\"collective\",\"name\":\"all_reduce\"," \
	"\"backend\":\"mpi\",\"dtype\":\"float\",\"op\":\"sum\",\"scale\":true,\"nodes\":" #nodes ",\"ranks\":" #nodes \
	",\"busbw_factor\":1.5,\"bytes\":" #bytes ",\"busbw_GBps\":" #bw "}\n"
#define AR3(nodes, bw) AR(nodes, 262144, bw) AR(nodes, 524288, bw) AR(nodes, 1048576, bw)
#define SCALING "[criterion sc]\ncollective = all_reduce\nmetric = scaling_efficiency\nbound = >= 0.8\n"

/* issue 15, 5: figures beyond what physics allows are a measurement fault, named */
static void test_implausible(void **state)
{
	json_t *s, *c, *i;

	(void)state;
	/* 100 GB/s over a link of 63 GB/s: above 1.1 x 63 = 69.3 */
	s = judge("[criterion c]\nprobe = pcie\ntest = h2d\nmetric = bw_GBps\nscope = gpu\nsize = any\n"
		  "bound = >= 40 GB/s\n", H2D("a/gpu0", 1, 100, ",\"rate_GBps\":63") H2D("a/gpu1", 1, 50, ",\"rate_GBps\":63"));
	c = crit(s, "c");
	assert_string_equal(verdict(c), "warn");
	i = json_array_get(json_object_get(c, "implausible"), 0);
	assert_string_equal(str_of(i, "element"), "a/gpu0");
	assert_true(fabs(num(i, "limit") - 69.3) < 1e-9);
	assert_int_equal(json_array_size(json_object_get(c, "implausible")), 1);
	done(s);
	/* a 15.7x superlinear scaling efficiency */
	s = judge(SCALING, AR3(2, 0.01) AR3(4, 0.157));
	c = crit(s, "sc");
	assert_string_equal(verdict(c), "warn");
	assert_string_equal(str_of(json_array_get(json_object_get(c, "implausible"), 0), "element"), "4 nodes vs 2 (mpi float sum)");
	done(s);
}

/* issue 15, 6: a 2-node step that measured 0 fails; the base is the fewest nodes with a busbw */
static void test_scaling_base(void **state)
{
	json_t *s, *c, *sc;

	(void)state;
	s = judge(SCALING, AR3(2, 0) AR3(4, 0.1) AR3(8, 0.09));
	c = crit(s, "sc");
	assert_string_equal(verdict(c), "fail");
	assert_string_equal(str_of(json_array_get(json_object_get(c, "failures"), 0), "element"), "2 nodes vs 4 (mpi float sum)");
	assert_true(num(json_array_get(json_object_get(c, "failures"), 0), "value") == 0);
	sc = json_array_get(json_object_get(json_object_get(s, "charts"), "scaling"), 0);
	assert_int_equal(json_integer_value(json_object_get(sc, "base_nodes")), 4);
	assert_int_equal(json_integer_value(json_object_get(s, "exit_code")), 1);
	done(s);
	/* an explicit base that measured 0 fails too */
	s = judge(SCALING "base_nodes = 2\n", AR3(2, 0) AR3(4, 0.1));
	assert_string_equal(verdict(crit(s, "sc")), "fail");
	done(s);
}

/* issue 15, 7: the estimate never switches silently to a series of fewer nodes */
static void test_estimate_series(void **state)
{
	json_t *s, *est;

	(void)state;
	s = judge("[workload]\nparams = 1e6\nbytes_per_grad = 4\ntokens_per_step = 4096\ntotal_tokens = 1e8\n"
		  "peak_tflops = 0.05\nmfu = 0.5\nbucket_bytes = 393216\n"
		  "[criterion comm]\nmetric = comm_fraction\nbound = <= 0.9\n",
		  AR3(2, 0.02) AR3(4, 0));
	est = json_object_get(s, "estimate");
	assert_false(json_is_true(json_object_get(est, "made")));
	assert_non_null(strstr(str_of(est, "reason"), "on 4 node(s), 4 rank(s) measured busbw 0"));
	assert_string_equal(verdict(crit(s, "comm")), "incomplete");
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
		cmocka_unit_test(test_missing_metric),
		cmocka_unit_test(test_relative_partial),
		cmocka_unit_test(test_plateau_shape),
		cmocka_unit_test(test_outlier_slow_half),
		cmocka_unit_test(test_implausible),
		cmocka_unit_test(test_scaling_base),
		cmocka_unit_test(test_estimate_series),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
