/*
 * Unit tests: a soak's stability (report/soak.c): the statistics on
 * hand-computed series, the profile's soak metrics and their mistakes, and
 * the judgement of interval records (a stable link passes, a flapping one is
 * named; too few intervals and no soak at all are incomplete, never a pass).
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
#include "../../report/needs.h"
#include "../../report/profile.h"
#include "../../report/report.h"
#include "../../report/summary.h"
#include "../../report/soak.h"

static char err[512];

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

/* 10, 10, 10, 10, 2: median 10, mean 8.4, sample sd sqrt(64/5) = 3.5777 */
static void test_stats_by_hand(void **state)
{
	const double v[] = { 10, 10, 2, 10, 10 };
	struct soak_stats s;

	(void)state;
	assert_int_equal(soak_stats(v, 5, 0.5, &s), 0);
	assert_int_equal(s.n, 5);
	NEAR(s.median, 10);
	NEAR(s.mean, 8.4);
	NEAR(s.cv, sqrt(64.0 / 5) / 8.4);       /* 0.42592 */
	NEAR(s.worst, 2);
	assert_int_equal(s.worst_at, 2);
	NEAR(s.worst_ratio, 0.2);
	assert_int_equal(s.drops, 1);            /* 2 < 0.5 x 10 */
	assert_int_equal(soak_stats(v, 5, 0.1, &s), 0);
	assert_int_equal(s.drops, 0);            /* 2 is not below 0.1 x 10 */
}

/* even count: the median is the mean of the middle two; a flat series is perfectly stable */
static void test_stats_even_and_flat(void **state)
{
	const double v[] = { 4, 1, 3, 2 }, flat[] = { 7, 7, 7 }, zero[] = { 0, 0, 0 };
	struct soak_stats s;

	(void)state;
	assert_int_equal(soak_stats(v, 4, 0.5, &s), 0);
	NEAR(s.median, 2.5);
	NEAR(s.mean, 2.5);
	NEAR(s.cv, sqrt(5.0 / 3) / 2.5);         /* sd of 1..4 = sqrt(5/3) */
	NEAR(s.worst_ratio, 0.4);
	assert_int_equal(s.worst_at, 1);
	assert_int_equal(s.drops, 1);            /* 1 < 1.25 */
	assert_int_equal(soak_stats(flat, 3, 0.5, &s), 0);
	NEAR(s.cv, 0);
	NEAR(s.worst_ratio, 1);
	assert_int_equal(s.drops, 0);
	/* nothing moved at all: no division by zero, nothing below half of nothing */
	assert_int_equal(soak_stats(zero, 3, 0.5, &s), 0);
	NEAR(s.cv, 0);
	NEAR(s.worst_ratio, 1);
	assert_int_equal(s.drops, 0);
	assert_int_equal(soak_stats(v, 0, 0.5, &s), -1);
}

static int parse(struct profile *p, const char *text)
{
	err[0] = '\0';
	return profile_parse_string(p, text, "t.ini", err, sizeof(err));
}

#define LINK(metric, bound) "[criterion s]\nprobe = netpair\nmetric = " metric "\nscope = link\nbound = " bound "\n"

static void test_profile_metrics(void **state)
{
	struct profile p;

	(void)state;
	assert_int_equal(parse(&p, LINK("soak_cv", "20%")), 0);
	assert_int_equal(p.crit[0].derived, DERIVED_SOAK);
	assert_string_equal(p.crit[0].unit, "%");
	assert_int_equal(p.crit[0].ge, 0);                    /* default: a lower cv is better */
	NEAR(p.crit[0].bound, 20);
	assert_int_equal(p.crit[0].scope, SC_LINK);
	assert_int_equal(p.crit[0].size, SIZE_ANY);
	assert_true(p.crit[0].outlier_tol < 0);              /* a series has no peers to judge by */
	profile_free(&p);
	assert_int_equal(parse(&p, LINK("soak_worst", "0.3")), 0);
	assert_int_equal(p.crit[0].ge, 1);                    /* default: a higher worst is better */
	NEAR(p.crit[0].bound, 30);                             /* kept in % */
	profile_free(&p);
	assert_int_equal(parse(&p, LINK("soak_drops", "0") "drop_below = 25%\n"), 0);
	assert_string_equal(p.crit[0].unit, "count");
	assert_int_equal(p.crit[0].ge, 0);
	NEAR(p.crit[0].bound, 0);
	NEAR(p.crit[0].drop_below, 0.25);
	profile_free(&p);
	/* a collective: scope cluster by default; backend, dtype, op narrow it */
	assert_int_equal(parse(&p, "[criterion c]\ncollective = all_reduce\nbackend = mpi\ndtype = float\n"
			       "metric = soak_cv\nbound = <= 0.1\n"), 0);
	assert_int_equal(p.crit[0].scope, SC_CLUSTER);
	NEAR(p.crit[0].bound, 10);
	/* what ccdiag plans from: a soak of all_reduce */
	p.path = strdup("t.ini");
	json_t *n = profile_needs(&p), *e = json_array_get(json_object_get(n, "needs"), 0);

	assert_string_equal(json_string_value(json_object_get(e, "kind")), "soak");
	assert_string_equal(json_string_value(json_object_get(e, "name")), "all_reduce");
	assert_string_equal(json_string_value(json_object_get(e, "of")), "collective");
	assert_string_equal(json_string_value(json_object_get(e, "backend")), "mpi");
	json_decref(n);
	profile_free(&p);
}

/* every mistake: one line, the file and the line */
static void test_profile_errors(void **state)
{
	static const struct { const char *text, *msg; } bad[] = {
		{ LINK("soak_drops", "<= 1.5"),
		  "t.ini:5: bound '<= 1.5': expected [>=|<=] COUNT (a whole number of intervals)" },
		{ LINK("soak_cv", "20 GB/s"),
		  "t.ini:5: bound '20 GB/s': expected [>=|<=] FRACTION (0.2) or PERCENT (20%), at most 10" },
		{ LINK("soak_worst", ">= 1.5"),
		  "t.ini:5: bound '>= 1.5': expected [>=|<=] FRACTION (0.2) or PERCENT (20%), at most 1" },
		{ LINK("soak_cv", "20%") "drop_below = 0.5\n",
		  "t.ini:2: criterion 's' needs metric soak_drops for 'drop_below'" },
		{ LINK("soak_drops", "0") "drop_below = 1.5\n",
		  "t.ini:6: drop_below '1.5': expected a fraction of the median above 0 and below 1 (0.5 or 50%)" },
		{ "[criterion s]\nprobe = netpair\nmetric = soak_cv\nbound = 20%\n",
		  "t.ini:2: criterion 's' needs 'scope' (link for netpair)" },
		{ LINK("soak_cv", "20%") "size = 4M\n",
		  "t.ini:2: criterion 's' needs no 'size', 'nodes' or 'repeat' (a soak is one size, judged as a series)" },
		{ "[criterion s]\ncollective = all_reduce\nmetric = soak_cv\nscope = link\nbound = 20%\n",
		  "t.ini:2: criterion 's' needs scope cluster (a collective's soak is judged for the whole job)" },
		{ "[criterion s]\nprobe = pcie\ntest = h2d\nmetric = bw_GBps\nscope = gpu\nbound = 1 GB/s\n"
		  "drop_below = 0.5\n", "t.ini:2: criterion 's' needs a soak metric (soak_drops) for 'drop_below'" },
	};
	struct profile p;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(&p, bad[i].text), -1);
		assert_string_equal(err, bad[i].msg);
	}
}

/* ---- judging records ---- */

static struct profile prof;
static struct eval ev;

static json_t *judge(const char *profile, const char *lines)
{
	char *text;
	struct summary_opts so = { .profile_path = "p.ini" };
	json_t *s;

	if (profile_parse_string(&prof, profile, "p.ini", err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(eval_init(&ev, &prof), 0);
	assert_true(asprintf(&text, "{\"type\":\"run\",\"schema\":1,\"hosts\":[{\"name\":\"a\"},"
			     "{\"name\":\"b\"},{\"name\":\"c\"}],\"world_size\":3}\n%s", lines) > 0);
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

static const char *str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* one interval of link A-B measured from src, bw in GB/s */
static char *rec(char *buf, size_t len, const char *a, const char *b, const char *src, int k, double bw)
{
	snprintf(buf, len, "{\"type\":\"measurement\",\"kind\":\"soak\",\"name\":\"netpair\",\"test\":\"bw_uni\","
		 "\"scope\":\"link\",\"element\":\"%s-%s\",\"host\":\"%s\",\"peer\":\"%s\",\"src\":\"%s\","
		 "\"dst\":\"%s\",\"interval\":%d,\"bytes\":4194304,\"bw_GBps\":%g,\"bw_Gbps\":%g}\n",
		 a, b, a, b, src, strcmp(src, a) ? a : b, k, bw, 8 * bw);
	return buf;
}

#define SOAK_PROFILE \
	"[criterion drops]\nprobe = netpair\nmetric = soak_drops\ndrop_below = 0.25\nscope = link\nbound = <= 0\n" \
	"[criterion cv]\nprobe = netpair\nmetric = soak_cv\nscope = link\nbound = <= 20%\n" \
	"[criterion worst]\nprobe = netpair\nmetric = soak_worst\nscope = link\nbound = >= 0.5\n"

/* a-b steady at 0.11-0.12 GB/s; b-c a tenth of that for 4 of its 10 samples */
static void test_flapping_link_named(void **state)
{
	char *lines = calloc(1, 65536), buf[512];
	json_t *s, *c;

	(void)state;
	for (int k = 0; k < 5; k++) {
		strcat(lines, rec(buf, sizeof(buf), "a", "b", "a", k, k % 2 ? 0.11 : 0.12));
		strcat(lines, rec(buf, sizeof(buf), "a", "b", "b", k, 0.115));
		strcat(lines, rec(buf, sizeof(buf), "b", "c", "b", k, k == 2 || k == 3 ? 0.012 : 0.118));
		strcat(lines, rec(buf, sizeof(buf), "b", "c", "c", k, k == 2 || k == 3 ? 0.011 : 0.117));
	}
	s = judge(SOAK_PROFILE, lines);
	free(lines);
	c = crit(s, "drops");
	assert_string_equal(str(c, "verdict"), "fail");
	assert_int_equal(json_array_size(json_object_get(c, "failures")), 1);
	assert_string_equal(str(json_array_get(json_object_get(c, "failures"), 0), "element"), "b-c");
	NEAR(json_number_value(json_object_get(json_array_get(json_object_get(c, "failures"), 0), "value")), 4);
	assert_string_equal(str(c, "reason"), "1 of 2 links above the bound");
	/* b-c: median of 0.011 0.011 0.012 0.012 0.117 0.117 | 0.117 0.118 0.118 0.118 = 0.117;
	 * worst 0.011: 9.40 % of it */
	c = crit(s, "worst");
	assert_string_equal(str(c, "verdict"), "fail");
	NEAR(json_number_value(json_object_get(json_object_get(c, "worst"), "value")), 100 * 0.011 / 0.117);
	assert_string_equal(str(json_object_get(c, "worst"), "element"), "b-c");
	c = crit(s, "cv");
	assert_string_equal(str(c, "verdict"), "fail");
	assert_string_equal(str(json_array_get(json_object_get(c, "failures"), 0), "element"), "b-c");
	/* a-b: 0.12, 0.115, 0.11, 0.115, ...: within every bound */
	assert_int_equal(json_array_size(json_object_get(c, "failures")), 1);
	done(s);
}

/* too few intervals, and no soak at all: incomplete, never a pass */
static void test_no_evidence_is_incomplete(void **state)
{
	char lines[2048], buf[512];
	json_t *s;

	(void)state;
	lines[0] = '\0';
	strcat(lines, rec(buf, sizeof(buf), "a", "b", "a", 0, 0.12));
	strcat(lines, rec(buf, sizeof(buf), "a", "b", "b", 0, 0.12));
	s = judge(SOAK_PROFILE, lines);
	assert_string_equal(str(crit(s, "drops"), "verdict"), "incomplete");
	assert_string_equal(str(crit(s, "drops"), "reason"),
			    "fewer than 3 intervals in every soak series of netpair (a longer --soak, or a "
			    "shorter --soak-interval)");
	assert_string_equal(str(s, "verdict"), "incomplete");
	done(s);
	/* a plain netpair run is no soak */
	s = judge(SOAK_PROFILE, "{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"netpair\","
		  "\"test\":\"bw_uni\",\"scope\":\"link\",\"element\":\"a-b\",\"bw_GBps\":0.1}\n");
	assert_string_equal(str(crit(s, "cv"), "verdict"), "incomplete");
	assert_string_equal(str(crit(s, "cv"), "reason"),
			    "no soak records of netpair (ccprobe --soak DURATION netpair)");
	done(s);
	/* one rank: busbw is 0 by definition, no measurement of anything (as for the sweep) */
	lines[0] = '\0';
	for (int k = 0; k < 4; k++)
		snprintf(lines + strlen(lines), sizeof(lines) - strlen(lines),
			 "{\"type\":\"measurement\",\"kind\":\"soak\",\"name\":\"all_reduce\",\"scope\":\"cluster\","
			 "\"element\":\"cluster\",\"interval\":%d,\"busbw_GBps\":0,\"busbw_factor\":0}\n", k);
	s = judge("[criterion ar]\ncollective = all_reduce\nmetric = soak_cv\nbound = 10%\n", lines);
	assert_string_equal(str(crit(s, "ar"), "verdict"), "incomplete");
	assert_string_equal(str(crit(s, "ar"), "reason"), "the soak records of all_reduce carry no busbw "
			    "(one rank moves nothing: busbw is 0 by definition)");
	done(s);
	/* ccdiag's phase that did not run: its skip names the reason */
	s = judge(SOAK_PROFILE, "{\"type\":\"skip\",\"kind\":\"soak\",\"name\":\"netpair\","
		  "\"reason\":\"not run: --budget spent\"}\n");
	assert_string_equal(str(crit(s, "worst"), "verdict"), "incomplete");
	assert_string_equal(str(crit(s, "worst"), "reason"), "not run: --budget spent");
	done(s);
}

/* a collective: one element, the cluster, whose host is the slowest in the worst interval */
static void test_collective_names_the_node(void **state)
{
	char lines[4096] = "";
	static const double bus[] = { 1.0, 1.02, 0.2, 0.98, 1.01 };
	json_t *s, *c, *f;

	(void)state;
	for (int k = 0; k < 5; k++)
		snprintf(lines + strlen(lines), sizeof(lines) - strlen(lines),
			 "{\"type\":\"measurement\",\"kind\":\"soak\",\"name\":\"all_reduce\",\"backend\":\"mpi\","
			 "\"dtype\":\"float\",\"op\":\"sum\",\"scope\":\"cluster\",\"element\":\"cluster\","
			 "\"interval\":%d,\"busbw_GBps\":%g,\"bw_GBps\":99,\"wrong\":0,"
			 "\"slowest\":{\"rank\":%d,\"host\":\"%s\"}}\n", k, bus[k], k == 2 ? 2 : 0, k == 2 ? "c" : "a");
	s = judge("[criterion ar]\ncollective = all_reduce\nmetric = soak_drops\nbound = <= 0\n"
		  "[criterion ar_nccl]\ncollective = all_reduce\nbackend = nccl\nmetric = soak_cv\nbound = 10%\n"
		  "required = no\n", lines);
	c = crit(s, "ar");
	assert_string_equal(str(c, "verdict"), "fail");
	f = json_array_get(json_object_get(c, "failures"), 0);
	assert_string_equal(str(f, "element"), "cluster");
	assert_string_equal(str(f, "host"), "c");
	NEAR(json_number_value(json_object_get(f, "value")), 1);    /* busbw, not bw_GBps: 0.2 < 0.5 */
	/* another backend's soak: nothing of it, not judged (optional) */
	assert_string_equal(str(crit(s, "ar_nccl"), "verdict"), "incomplete");
	assert_string_equal(str(s, "verdict"), "fail");
	done(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats_by_hand),
		cmocka_unit_test(test_stats_even_and_flat),
		cmocka_unit_test(test_profile_metrics),
		cmocka_unit_test(test_profile_errors),
		cmocka_unit_test(test_flapping_link_named),
		cmocka_unit_test(test_no_evidence_is_incomplete),
		cmocka_unit_test(test_collective_names_the_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
