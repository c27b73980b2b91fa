/* Unit tests: ccreport's profile parser (report/profile.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../report/report.h"

static char err[512];

static int parse(struct profile *p, const char *text)
{
	err[0] = '\0';
	return profile_parse_string(p, text, "t.ini", err, sizeof(err));
}

#define CRIT "[criterion a]\nprobe = pcie\ntest = h2d\nmetric = bw_GBps\nscope = gpu\n"

static void test_full_profile(void **state)
{
	struct profile p;

	(void)state;
	assert_int_equal(parse(&p,
		"; comment\n[profile]\nname = x\ndescription = d\n"
		"[hardware]\ngpu_model = H100\ngpus_per_node = 8\nnics_per_node = 4\nnic_rate = 400 Gb/s\n"
		"[defaults]\noutlier_tolerance = 7%\nbaseline_tolerance = 0.03\nconsistency = warn\n"
		CRIT "bound = >= 48 GB/s   ; Azure\nsize = 64M\n"
		"[criterion b]\ncollective = all_reduce\nbackend = nccl\nnodes = 2+\nmetric = busbw_GBps\n"
		"bound = >= 0.9 of rate\nseverity = warn\nrequired = no\noutlier_tolerance = off\n"), 0);
	assert_string_equal(p.name, "x");
	assert_int_equal(p.gpus_per_node, 8);
	assert_int_equal(p.nics_per_node, 4);
	assert_true(fabs(p.nic_rate_gbps - 400) < 1e-9);
	assert_true(fabs(p.baseline_tol - 0.03) < 1e-9);
	assert_int_equal(p.consistency_fail, 0);
	assert_int_equal(p.ncrit, 2);
	assert_int_equal(p.crit[0].size, 64 << 20);
	assert_int_equal(p.crit[0].ge, 1);
	assert_true(fabs(p.crit[0].bound - 48) < 1e-9);
	assert_true(fabs(p.crit[0].outlier_tol - 0.07) < 1e-9);   /* the profile's default */
	assert_string_equal(p.crit[0].unit, "GB/s");
	assert_int_equal(p.crit[1].scope, SC_CLUSTER);
	assert_int_equal(p.crit[1].min_nodes, 2);
	assert_int_equal(p.crit[1].max_nodes, 0);
	assert_true(fabs(p.crit[1].relative - 0.9) < 1e-9);
	assert_int_equal(p.crit[1].fail, 0);
	assert_int_equal(p.crit[1].required, 0);
	assert_true(p.crit[1].outlier_tol < 0);
	profile_free(&p);
}

static void test_units_convert(void **state)
{
	struct profile p;

	(void)state;
	assert_int_equal(parse(&p, CRIT "bound = 400 Gb/s\n"), 0);
	assert_true(fabs(p.crit[0].bound - 50) < 1e-9);      /* Gb/s -> GB/s */
	assert_int_equal(p.crit[0].ge, 1);                     /* bandwidth: more is better */
	profile_free(&p);
	assert_int_equal(parse(&p, "[criterion l]\nprobe = ib\ntest = write_lat\nmetric = lat_us.p99\n"
			       "scope = rail_pair\nbound = 0.0042 ms\n"), 0);
	assert_true(fabs(p.crit[0].bound - 4.2) < 1e-9);     /* ms -> us */
	assert_int_equal(p.crit[0].ge, 0);                     /* latency: less is better */
	assert_string_equal(p.crit[0].path[0], "lat_us");
	assert_string_equal(p.crit[0].path[1], "p99");
	profile_free(&p);
	assert_int_equal(parse(&p, "[criterion c]\nprobe = ib\ntest = counters\nmetric = counter_delta.symbol_error\n"
			       "scope = nic\nbound = <= 0\n"), 0);
	assert_string_equal(p.crit[0].unit, "count");
	profile_free(&p);
}

/* every mistake: one line, the file and the line of the mistake */
static void test_errors_name_the_line(void **state)
{
	static const struct { const char *text, *want; } cases[] = {
		{ CRIT "bound = >= 48 GB/s\ncolour = red\n", "t.ini:7: unknown key 'colour' in [criterion a]" },
		{ CRIT "metric2 = x\n", "t.ini:6: unknown key 'metric2'" },
		{ "[criterion a]\nprobe = pcie\ntest = h2d\nmetric = bw_furlongs\n", "t.ini:4: unknown metric 'bw_furlongs'" },
		{ "[criterion a]\nprobe = pcie\ntest = h2d\nmetric = lat_us.p42\n", "t.ini:4: unknown metric 'lat_us.p42'" },
		{ CRIT "\nbound = >= 48 MB/s\n", "t.ini:7: bound '>= 48 MB/s': unit 'MB/s' does not fit" },
		{ CRIT "bound = >= 48 us\n", "t.ini:6: bound '>= 48 us': unit 'us' does not fit" },
		{ "[criterion l]\nprobe = ib\ntest = write_lat\nmetric = lat_us.p99\nscope = rail_pair\nbound = <= 0.5 of rate\n",
		  "t.ini:6: bound '<= 0.5 of rate': a fraction of the rate needs a bandwidth metric" },
		{ CRIT "bound = >= 48 GB/s\nsize = huge\n", "t.ini:7: size 'huge'" },
		{ CRIT "bound = >= 48 GB/s\nscope = galaxy\n", "t.ini:7: scope 'galaxy'" },
		{ "[oops\nkey = v\n", "t.ini:1: syntax error" },
		{ CRIT "this line has no equals sign\n", "t.ini:6: syntax error" },
		{ "[criterion a]\nprobe = pcie\nmetric = bw_GBps\nscope = gpu\nbound = 1 GB/s\n", "t.ini:2: criterion 'a' needs 'test'" },
		{ "[criterion a]\nprobe = pcie\ncollective = all_reduce\n", "t.ini:2: criterion 'a' needs exactly one of" },
		{ "[profile]\nname = x\n", "t.ini: no [criterion ID] section" },
		{ "[weird]\nk = v\n", "t.ini:2: unknown section [weird]" },
		{ CRIT "bound = >= 48 GB/s\n[criterion b]\nprobe=pcie\n[criterion a]\ntest = d2h\n", "t.ini:10: criterion 'a' defined twice" },
	};
	struct profile p;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (parse(&p, cases[i].text) != -1)
			fail_msg("case %zu: parsed, want '%s...'", i, cases[i].want);
		if (strncmp(err, cases[i].want, strlen(cases[i].want)))
			fail_msg("case %zu: got '%s', want '%s...'", i, err, cases[i].want);
		assert_null(strchr(err, '\n'));
	}
}

/* inih reads lines in pieces of 200: a longer line is an error at its own line */
static void test_long_line(void **state)
{
	char text[600];
	struct profile p;

	(void)state;
	snprintf(text, sizeof(text), "[profile]\ndescription = %0300d\n" CRIT "bound = 1 GB/s\n", 0);
	assert_int_equal(parse(&p, text), -1);
	assert_string_equal(err, "t.ini:2: line longer than 198 characters");
}

static void test_sizes(void **state)
{
	long long v;

	(void)state;
	assert_int_equal(rpt_parse_size("8", &v), 0);
	assert_int_equal(v, 8);
	assert_int_equal(rpt_parse_size("4M", &v), 0);
	assert_int_equal(v, 4 << 20);
	assert_int_equal(rpt_parse_size("8G", &v), 0);
	assert_int_equal(v, 8LL << 30);
	assert_int_equal(rpt_parse_size("-1", &v), -1);
	assert_int_equal(rpt_parse_size("1Q", &v), -1);
	assert_int_equal(rpt_parse_size("99999999999T", &v), -1);
}

static void test_shipped_profiles_load(void **state)
{
	static const char *const names[] = { "h100-sxm-8x-ndr400", "h200-sxm-8x-ndr400",
					     "a100-sxm-8x-hdr200", "emu-1g" };
	struct profile p;

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *path = profile_find(names[i], NULL);

		assert_non_null(path);
		if (profile_load(&p, path, err, sizeof(err)))
			fail_msg("%s", err);
		assert_true(p.ncrit >= 3);
		assert_string_equal(p.name, names[i]);
		profile_free(&p);
		free(path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_profile),
		cmocka_unit_test(test_units_convert),
		cmocka_unit_test(test_errors_name_the_line),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_shipped_profiles_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
