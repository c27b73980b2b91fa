/* Unit tests: ccreport's results reader (report/load.c) and its scanner (report/record.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../report/load.h"
#include "../../report/record.h"

#define HDR "{\"type\":\"run\",\"schema\":1,\"run_id\":\"ab\",\"start_utc\":\"t\",\"hosts\":[{\"name\":\"a\"}],\"world_size\":1}\n"
#define MEAS "{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"pcie\",\"test\":\"h2d\",\"bytes\":64,\"bw_GBps\":50.5}\n"
#define END "{\"type\":\"end\",\"status\":\"complete\"}\n"

struct count {
	int records, measurements;
	char last_type[32];
	double bw;
};

static int on_record(json_t *rec, long line, void *ctx)
{
	struct count *c = ctx;

	(void)line;
	c->records++;
	snprintf(c->last_type, sizeof(c->last_type), "%s", json_string_value(json_object_get(rec, "type")));
	return 0;
}

static int on_measurement(const struct rv *r, long line, void *ctx)
{
	struct count *c = ctx;

	(void)line;
	c->measurements++;
	rv_num(r, NULL, "bw_GBps", &c->bw);
	return 0;
}

static char err[512];

static int read(const char *text, struct count *c, struct input_info *in)
{
	struct results_sink sink = { on_record, on_measurement, c };

	memset(c, 0, sizeof(*c));
	err[0] = '\0';
	return results_read_mem(text, strlen(text), "r.jsonl", in, &sink, err, sizeof(err));
}

static void test_reads_a_run(void **state)
{
	struct count c;
	struct input_info in;

	(void)state;
	assert_int_equal(read(HDR MEAS MEAS END, &c, &in), 0);
	assert_int_equal(c.records, 2);          /* header and end */
	assert_int_equal(c.measurements, 2);
	assert_true(fabs(c.bw - 50.5) < 1e-12);
	assert_string_equal(in.end, "complete");
	assert_int_equal(in.records, 4);
	assert_string_equal(in.run_id, "ab");
	input_info_free(&in);
}

static void test_missing_end_is_no_error(void **state)
{
	struct count c;
	struct input_info in;

	(void)state;
	assert_int_equal(read(HDR MEAS, &c, &in), 0);
	assert_string_equal(in.end, "missing");
	input_info_free(&in);
}

/* each malformed input: -1 and one line naming the file and the line */
static void test_bad_inputs(void **state)
{
	static const struct { const char *text, *want; } cases[] = {
		{ "", "r.jsonl:1: empty file: no run header" },
		{ HDR MEAS "{\"type\":\"measurement\",,}\n" END, "r.jsonl:3: malformed record:" },
		{ HDR MEAS "{\"type\":\"measu", "r.jsonl:3: truncated record (the file ends inside it)" },
		{ "{\"type\":\"run\",\"schema\":2,\"hosts\":[]}\n", "r.jsonl:1: unknown schema version 2" },
		{ "{\"type\":\"run\",\"hosts\":[]}\n", "r.jsonl:1: the run header has no schema version" },
		{ MEAS, "r.jsonl:1: not a ccprobe results file" },
		{ HDR "[1,2]\n", "r.jsonl:2: malformed record: not an object with a \"type\"" },
		{ HDR "{\"kind\":\"probe\"}\n", "r.jsonl:2: malformed record: not an object with a \"type\"" },
		{ HDR END MEAS, "r.jsonl:3: record after the end record" },
		{ HDR HDR, "r.jsonl:2: a second run header" },
		{ HDR "{\"type\":\"end\",\"status\":\"weird\"}\n", "r.jsonl:2: end record with unknown status" },
		/* the scanner declines duplicates; jansson refuses them and says so */
		{ HDR "{\"type\":\"measurement\",\"a\":1,\"a\":2}\n", "r.jsonl:2: malformed record: duplicate object key" },
		{ HDR "{\"type\":\"measurement\",\"s\":{\"p99\":1,\"p99\":2}}\n", "r.jsonl:2: malformed record: duplicate object key" },
		{ HDR "{\"type\":\"measurement\",\"x\":1e999}\n", "r.jsonl:2: malformed record:" },
	};
	struct count c;
	struct input_info in;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (read(cases[i].text, &c, &in) != -1)
			fail_msg("case %zu: read, want '%s'", i, cases[i].want);
		if (strncmp(err, cases[i].want, strlen(cases[i].want)))
			fail_msg("case %zu: got '%s', want '%s...'", i, err, cases[i].want);
		assert_null(strchr(err, '\n'));
		input_info_free(&in);
	}
}

/* the scanner reads what jansson reads: escapes, nesting, numbers */
static void test_scanner(void **state)
{
	char line[] = "{\"type\":\"measurement\",\"element\":\"a\\\"b\\nc\",\"lat_us\":{\"p99\":4.25,\"n\":10},"
		      "\"arr\":[1,{\"x\":2},[3]],\"t\":true,\"z\":null,\"big\":-12e-1}";
	struct rv r;
	double v;

	(void)state;
	assert_int_equal(rv_scan(line, strlen(line), &r), -1);    /* an object in an array: jansson's */
	char line2[] = "{\"type\":\"measurement\",\"element\":\"a\\\"b\\nc\",\"lat_us\":{\"p99\":4.25,\"n\":10},"
		       "\"arr\":[1,2,[3]],\"t\":true,\"z\":null,\"big\":-12e-1}";
	assert_int_equal(rv_scan(line2, strlen(line2), &r), 0);
	assert_string_equal(rv_str(&r, "element"), "a\"b\nc");
	assert_int_equal(rv_num(&r, "lat_us", "p99", &v), 0);
	assert_true(v == 4.25);
	assert_int_equal(rv_num(&r, NULL, "big", &v), 0);
	assert_true(fabs(v + 1.2) < 1e-12);
	assert_int_equal(rv_num(&r, NULL, "p99", &v), -1);       /* not at the top */
	assert_null(rv_str(&r, "t"));
	char bad[] = "{\"a\":01}";
	assert_int_equal(rv_scan(bad, strlen(bad), &r), -1);
	char uni[] = "{\"a\":\"\\u00e9\"}";
	assert_int_equal(rv_scan(uni, strlen(uni), &r), -1);      /* \u: jansson's */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_a_run),
		cmocka_unit_test(test_missing_end_is_no_error),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_scanner),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
