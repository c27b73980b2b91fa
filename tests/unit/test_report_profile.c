/* Unit tests: ccreport's profile parser (report/profile.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../report/profile.h"
#include "../../report/report.h"
#include "../../report/units.h"
#include "../../report/workload.h"

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

/* scaling_efficiency and comm_fraction: bounds in %, from a fraction or a percentage */
static void test_derived_metrics(void **state)
{
	struct profile p;

	(void)state;
	assert_int_equal(parse(&p,
		"[criterion s]\ncollective = all_reduce\nmetric = scaling_efficiency\nbound = 0.8\nbase_nodes = 4\n"
		"[criterion c]\nmetric = comm_fraction\nbound = 30%\n"), 0);
	assert_int_equal(p.crit[0].derived, DERIVED_SCALING);
	assert_int_equal(p.crit[0].ge, 1);
	assert_true(fabs(p.crit[0].bound - 80) < 1e-9);
	assert_int_equal(p.crit[0].base_nodes, 4);
	assert_string_equal(p.crit[0].unit, "%");
	assert_int_equal(p.crit[1].derived, DERIVED_COMM);
	assert_int_equal(p.crit[1].ge, 0);
	assert_true(fabs(p.crit[1].bound - 30) < 1e-9);
	assert_int_equal(p.crit[1].scope, SC_CLUSTER);
	profile_free(&p);

	assert_int_equal(parse(&p, "[criterion c]\ncollective = all_reduce\nmetric = comm_fraction\nbound = 0.3\n"), -1);
	assert_string_equal(err, "t.ini:2: criterion 'c' needs neither 'probe' nor 'collective' "
			    "(comm_fraction judges the estimate)");
	assert_int_equal(parse(&p, "[criterion s]\nmetric = scaling_efficiency\nbound = 0.8\n"), -1);
	assert_string_equal(err, "t.ini:2: criterion 's' needs 'collective' (scaling_efficiency judges a "
			    "collective's --scale records)");
	assert_int_equal(parse(&p, "[criterion s]\ncollective = x\nmetric = scaling_efficiency\nsize = 8M\nbound = 0.8\n"), -1);
	assert_int_equal(parse(&p, "[criterion s]\ncollective = x\nmetric = scaling_efficiency\nbound = 0.8 GB/s\n"), -1);
	assert_string_equal(err, "t.ini:4: bound '0.8 GB/s': expected [>=|<=] FRACTION (0.8) or PERCENT (80%), at most 2");
	assert_int_equal(parse(&p, "[criterion s]\ncollective = x\nmetric = scaling_efficiency\nbound = 0.8\nbase_nodes = 0\n"), -1);
	assert_string_equal(err, "t.ini:5: base_nodes '0': expected a node count of at least 1");
	assert_int_equal(parse(&p, CRIT "bound = >= 1 GB/s\nbase_nodes = 2\n"), -1);
	assert_string_equal(err, "t.ini:2: criterion 'a' needs metric scaling_efficiency for 'base_nodes'");
}

/* [workload]: every key checked where it is read; flags override; what is missing */
static void test_workload(void **state)
{
	struct profile p;
	char e[400];

	(void)state;
	assert_int_equal(parse(&p, CRIT "bound = >= 1 GB/s\n[workload]\nparams = 7e9\nstage = zero3\n"
			       "mfu = 40%\nbucket_bytes = 25M\ntokens_per_step = 4e6\n"), 0);
	assert_true(p.wl.any);
	assert_int_equal(p.wl.line, 8);
	assert_int_equal(p.wl.from[WL_PARAMS], 8);
	assert_true(fabs(workload_value(&p.wl, WL_MFU) - 0.4) < 1e-12);
	assert_true(workload_value(&p.wl, WL_BUCKET) == 25 << 20);
	assert_true(workload_value(&p.wl, WL_STAGE) == 3);
	assert_true(workload_value(&p.wl, WL_BYTES_PER_GRAD) == 2);   /* the default */
	assert_int_equal(workload_check(&p.wl, "t.ini", e, sizeof(e)), -1);
	assert_string_equal(e, "t.ini:8: [workload] needs 'total_tokens' (in the profile or --workload total_tokens=...)");
	assert_int_equal(workload_flag(&p.wl, "total_tokens=1e12", e, sizeof(e)), 0);
	assert_int_equal(workload_flag(&p.wl, "peak_tflops=989", e, sizeof(e)), 0);
	assert_int_equal(workload_flag(&p.wl, "mfu=0.5", e, sizeof(e)), 0);   /* over the profile's */
	assert_int_equal(p.wl.from[WL_MFU], -1);
	assert_true(workload_value(&p.wl, WL_MFU) == 0.5);
	assert_int_equal(workload_check(&p.wl, "t.ini", e, sizeof(e)), 0);
	assert_int_equal(workload_flag(&p.wl, "gpus=6", e, sizeof(e)), 0);
	assert_int_equal(workload_flag(&p.wl, "dp_size=4", e, sizeof(e)), 0);
	assert_int_equal(workload_check(&p.wl, "t.ini", e, sizeof(e)), -1);
	assert_string_equal(e, "ccreport: --workload: gpus 6 is not tp 1 x pp 1 x dp_size 4");
	/* GPUs = tp x pp x dp (issue 15, 10): 8 = 2 x 1 x 4 */
	assert_int_equal(workload_flag(&p.wl, "gpus=8", e, sizeof(e)), 0);
	assert_int_equal(workload_check(&p.wl, "t.ini", e, sizeof(e)), -1);
	assert_int_equal(workload_flag(&p.wl, "tp=2", e, sizeof(e)), 0);
	assert_int_equal(workload_check(&p.wl, "t.ini", e, sizeof(e)), 0);
	assert_int_equal(workload_flag(&p.wl, "act_bytes=64M", e, sizeof(e)), 0);
	assert_true(workload_value(&p.wl, WL_ACT_BYTES) == 64 << 20);
	assert_int_equal(workload_flag(&p.wl, "ga_steps=0", e, sizeof(e)), -1);
	assert_int_equal(workload_flag(&p.wl, "mfu", e, sizeof(e)), -1);
	assert_string_equal(e, "ccreport: --workload 'mfu': expected KEY=VALUE");
	assert_int_equal(workload_flag(&p.wl, "overlap=1.5", e, sizeof(e)), -1);
	assert_string_equal(e, "ccreport: --workload: overlap '1.5': expected a fraction from 0 to 1 (0.4 or 40%)");
	assert_int_equal(workload_flag(&p.wl, "dp_size=2.5", e, sizeof(e)), -1);
	profile_free(&p);

	assert_int_equal(parse(&p, CRIT "bound = >= 1 GB/s\n[workload]\nparams = 7e9\nparams = 8e9\n"), -1);
	assert_string_equal(err, "t.ini:9: 'params' given twice");
	assert_int_equal(parse(&p, CRIT "bound = >= 1 GB/s\n[workload]\nparams = -1\n"), -1);
	assert_string_equal(err, "t.ini:8: params '-1': expected a number above 0 (7e9, 4096)");
	assert_int_equal(parse(&p, CRIT "bound = >= 1 GB/s\n[workload]\nmfu = 0\n"), -1);
	assert_int_equal(parse(&p, CRIT "bound = >= 1 GB/s\n[workload]\nbackend = NC CL\n"), -1);
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
		cmocka_unit_test(test_derived_metrics),
		cmocka_unit_test(test_workload),
		cmocka_unit_test(test_shipped_profiles_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
