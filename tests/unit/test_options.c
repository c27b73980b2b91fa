/* Command line: defaults, values, probe parameters, and every bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../bench/sweep.h"
#include "../../core/options.h"

static size_t p_size = 0;
static int p_int = 0;
static const struct cc_param test_params[] = {
	{ "pair-bw-size", CC_PARAM_SIZE, &p_size, "test" },
	{ "pair-iters", CC_PARAM_INT, &p_int, "test" },
	{ NULL, 0, NULL, NULL },
};
static const struct cc_param *const params[] = { test_params, NULL };

static int parse(struct cc_options *o, char *err, size_t len, ...)
{
	static char *argv[32];
	int argc = 1;
	va_list ap;

	argv[0] = "ccprobe";
	va_start(ap, len);
	for (char *a; (a = va_arg(ap, char *));)
		argv[argc++] = a;
	va_end(ap);
	options_defaults(o);
	err[0] = '\0';
	return options_parse(o, argc, argv, params, err, len);
}

static void test_defaults_and_values(void **state)
{
	struct cc_options o;
	char err[256];
	(void)state;
	assert_int_equal(parse(&o, err, sizeof(err), NULL), 0);
	assert_int_equal(o.min_bytes, 8);
	assert_int_equal(o.max_bytes, 16 << 20);
	assert_int_equal(o.iters, 20);
	assert_float_equal(o.timeout_s, 300, 0);
	assert_float_equal(o.time_per_size, 2, 0);
	assert_int_equal(o.nnames, 0);
	assert_int_equal(o.scale, 0);
	assert_int_equal(parse(&o, err, sizeof(err), "--scale", "all_reduce", NULL), 0);
	assert_int_equal(o.scale, 1);
	assert_int_equal(parse(&o, err, sizeof(err), "--scale=1", NULL), -1);
	assert_string_equal(err, "option '--scale' takes no value");
	assert_int_equal(o.sizes_set, 0);
	/* -e alone counts as sizes given: GPU probes then follow the command line */
	assert_int_equal(parse(&o, err, sizeof(err), "-e", "1M", NULL), 0);
	assert_int_equal(o.sizes_set, 1);
	assert_int_equal(parse(&o, err, sizeof(err), "-n", "3", NULL), 0);
	assert_int_equal(o.sizes_set, 0);
	assert_int_equal(parse(&o, err, sizeof(err), "-b", "64K", "-e", "8G", "-f", "4", "-n",
			       "7", "-w", "0", "-r", "3", "-c", "2", "--timeout", "12.5", "-o",
			       "x.jsonl", "all_reduce", "netpair", NULL), 0);
	assert_int_equal(o.min_bytes, 65536);
	assert_int_equal(o.max_bytes, 8589934592ULL);
	assert_int_equal(o.factor, 4);
	assert_int_equal(o.iters, 7);
	assert_int_equal(o.warmup, 0);
	assert_int_equal(o.reps, 3);
	assert_int_equal(o.check_iters, 2);
	assert_float_equal(o.timeout_s, 12.5, 0);
	assert_string_equal(o.out_path, "x.jsonl");
	assert_int_equal(o.nnames, 2);
	assert_string_equal(o.names[1], "netpair");
	assert_int_equal(parse(&o, err, sizeof(err), "--time-per-size", "0.5", NULL), 0);
	assert_float_equal(o.time_per_size, 0.5, 0);
	assert_int_equal(parse(&o, err, sizeof(err), "--time-per-size=0", NULL), 0);
	assert_float_equal(o.time_per_size, 0, 0);
}

static void test_probe_params(void **state)
{
	struct cc_options o;
	char err[256];
	(void)state;
	assert_int_equal(parse(&o, err, sizeof(err), "--pair-bw-size", "4M", "--pair-iters=9",
			       NULL), 0);
	assert_int_equal(p_size, 4 << 20);
	assert_int_equal(p_int, 9);
	assert_int_equal(parse(&o, err, sizeof(err), "--pair-bw-size", "4Q", NULL), -1);
	assert_non_null(strstr(err, "'4Q'"));
	assert_non_null(strstr(err, "--pair-bw-size"));
}

static void test_bad_input(void **state)
{
	static const struct { const char *a, *b, *msg; } cases[] = {
		{ "--frobnicate", NULL, "unknown option '--frobnicate'" },
		{ "-Z", NULL, "unknown option '-Z'" },
		{ "-b", "12Q", "invalid size '12Q' for -b" },
		{ "-e", "-5", "invalid size '-5' for -e" },
		{ "-n", "0", "invalid iteration count '0'" },
		{ "-f", "1", "invalid step factor '1'" },
		{ "--timeout", "soon", "invalid timeout 'soon'" },
		{ "--time-per-size", "-1", "invalid time '-1' for --time-per-size" },
		{ "-b", "32M", "minimum size 32M (-b) is above maximum size 16M (-e)" },
		{ "-o", NULL, "option '-o' needs a value" },
	};
	struct cc_options o;
	char err[256];
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = cases[i].b ? parse(&o, err, sizeof(err), cases[i].a, cases[i].b, NULL)
				    : parse(&o, err, sizeof(err), cases[i].a, NULL);

		if (rc != -1)
			fail_msg("'%s %s' was accepted", cases[i].a, cases[i].b ? cases[i].b : "");
		if (!strstr(err, cases[i].msg))
			fail_msg("'%s': got '%s', want '%s'", cases[i].a, err, cases[i].msg);
		assert_null(strchr(err, '\n'));  /* one line */
	}
	/* a quoted argument with a newline still gives a one-line message */
	assert_int_equal(parse(&o, err, sizeof(err), "-b", "1\n2", NULL), -1);
	assert_null(strchr(err, '\n'));
	/* an error inside grouped short options leaves no state for the next parse */
	assert_int_equal(parse(&o, err, sizeof(err), "-qZv", NULL), -1);
	assert_int_equal(parse(&o, err, sizeof(err), "-q", "-b", "1K", NULL), 0);
	assert_int_equal(o.min_bytes, 1024);
	assert_int_equal(o.verbose, 0);
}

/* --soak DURATION: seconds or h/m/s units; its interval and size; what it cannot go with */
static void test_soak(void **state)
{
	static const struct { const char *arg; double s; } good[] = {
		{ "90", 90 }, { "2.5", 2.5 }, { "90s", 90 }, { "10m", 600 }, { "1h30m", 5400 },
		{ "2h5m10s", 7510 }, { "1h", 3600 },
	};
	static const char *const bad[] = { "", "0", "-5", "10x", "m", "1m1h", "1h1h", "5mm", "1.5m", "inf" };
	struct cc_options o;
	char err[256];
	double d;
	(void)state;
	assert_int_equal(parse(&o, err, sizeof(err), NULL), 0);
	assert_true(o.soak_s == 0);
	assert_float_equal(o.soak_interval, 1, 0);
	assert_int_equal(o.soak_size, 0);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(options_duration(good[i].arg, &d), 0);
		assert_float_equal(d, good[i].s, 1e-9);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(&o, err, sizeof(err), "--soak", bad[i], "all_reduce", NULL), -1);
		assert_non_null(strstr(err, "for --soak (seconds, or e.g. 90s, 10m, 1h30m; above 0)"));
	}
	assert_int_equal(parse(&o, err, sizeof(err), "--soak", "10m", "--soak-interval", "0.5",
			       "--soak-size", "64M", "netpair", "all_reduce", NULL), 0);
	assert_float_equal(o.soak_s, 600, 0);
	assert_float_equal(o.soak_interval, 0.5, 0);
	assert_int_equal(o.soak_size, 64 << 20);
	assert_int_equal(o.nnames, 2);
	assert_int_equal(parse(&o, err, sizeof(err), "--soak-interval", "0", NULL), -1);
	assert_string_equal(err, "invalid interval '0' for --soak-interval (seconds, 0.01 to 3600)");
	assert_int_equal(parse(&o, err, sizeof(err), "--soak-size", "0", NULL), -1);
	assert_string_equal(err, "invalid size '0' for --soak-size (at least 1 byte)");
	assert_int_equal(parse(&o, err, sizeof(err), "--soak", "60", "--scale", NULL), -1);
	assert_string_equal(err, "--soak and --scale cannot be combined (a soak runs on every node of the job)");
	assert_int_equal(parse(&o, err, sizeof(err), "--soak", "1", "--soak-interval", "2", NULL), -1);
	assert_string_equal(err, "--soak-interval 2 s is longer than the --soak of 1 s");
}

static void test_sweep_sizes(void **state)
{
	struct cc_options o;
	size_t s[SWEEP_MAX_SIZES];
	(void)state;
	options_defaults(&o);
	assert_int_equal(sweep_sizes(&o, s, SWEEP_MAX_SIZES), 22);  /* 8 .. 16M by 2 */
	assert_int_equal(s[0], 8);
	assert_int_equal(s[21], 16 << 20);
	o.min_bytes = 1000;
	o.max_bytes = 63999;
	o.factor = 4;
	assert_int_equal(sweep_sizes(&o, s, SWEEP_MAX_SIZES), 3);  /* 1000 4000 16000 */
	assert_int_equal(s[2], 16000);
	o.step = 1000;
	o.min_bytes = 1000;
	o.max_bytes = 3500;
	assert_int_equal(sweep_sizes(&o, s, SWEEP_MAX_SIZES), 3);  /* 1000 2000 3000 */
	assert_int_equal(s[2], 3000);
	o.step = 0;
	o.min_bytes = o.max_bytes = 4096;
	assert_int_equal(sweep_sizes(&o, s, SWEEP_MAX_SIZES), 1);
	o.min_bytes = SIZE_MAX / 2 + 1;  /* the next step would overflow */
	o.max_bytes = SIZE_MAX;
	assert_int_equal(sweep_sizes(&o, s, SWEEP_MAX_SIZES), 1);
	o.min_bytes = 1;
	o.step = 1;
	o.max_bytes = 100000;
	assert_int_equal(sweep_sizes(&o, s, 10), 10);  /* capped by the array */
}

static void test_type_and_op_lists(void **state)
{
	struct cc_options o;
	enum cc_dtype t[CC_NDTYPES];
	enum cc_redop op[CC_NOPS];
	int nt, no;
	char err[160];
	(void)state;
	options_defaults(&o);
	o.dtypes = "float,double,int32";
	o.ops = "sum,max";
	assert_int_equal(sweep_parse_lists(&o, t, &nt, op, &no, err, sizeof(err)), 0);
	assert_int_equal(nt, 3);
	assert_int_equal(t[1], CC_DOUBLE);
	assert_int_equal(no, 2);
	assert_int_equal(op[1], CC_MAX);
	o.dtypes = "float,bf16";
	assert_int_equal(sweep_parse_lists(&o, t, &nt, op, &no, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'bf16'"));
	o.dtypes = "float";
	o.ops = "avg";
	assert_int_equal(sweep_parse_lists(&o, t, &nt, op, &no, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'avg'"));
}

/* --topology, --group-size, --pair-schedule: core options every grouped probe reads */
static void test_topology_options(void **state)
{
	struct cc_options o;
	char err[256];
	(void)state;
	assert_int_equal(parse(&o, err, sizeof(err), NULL), 0);
	assert_null(o.topology);
	assert_int_equal(o.pair_schedule, CC_PAIRS_AUTO);
	assert_int_equal(o.group_size, 0);
	assert_int_equal(parse(&o, err, sizeof(err), "--topology", "t.conf", "--pair-schedule",
			       "grouped", "--group-size", "4", "netpair", NULL), 0);
	assert_string_equal(o.topology, "t.conf");
	assert_int_equal(o.pair_schedule, CC_PAIRS_GROUPED);
	assert_int_equal(o.group_size, 4);
	assert_int_equal(parse(&o, err, sizeof(err), "--pair-schedule=all-pairs", NULL), 0);
	assert_int_equal(o.pair_schedule, CC_PAIRS_ALL);
	assert_int_equal(parse(&o, err, sizeof(err), "--pair-schedule", "sometimes", NULL), -1);
	assert_string_equal(err, "invalid schedule 'sometimes' for --pair-schedule (auto, all-pairs or grouped)");
	assert_int_equal(parse(&o, err, sizeof(err), "--group-size", "-1", NULL), -1);
	assert_non_null(strstr(err, "--group-size"));
	assert_int_equal(parse(&o, err, sizeof(err), "--topology", "", NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_values),
		cmocka_unit_test(test_probe_params),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_soak),
		cmocka_unit_test(test_sweep_sizes),
		cmocka_unit_test(test_type_and_op_lists),
		cmocka_unit_test(test_topology_options),
	};
	return cmocka_run_group_tests_name("options", tests, NULL, NULL);
}
