#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../core/size.h"

static void test_valid_sizes(void **state)
{
	static const struct { const char *in; size_t want; } cases[] = {
		{ "0", 0 }, { "8", 8 }, { "1000", 1000 }, { "64K", 65536 }, { "64k", 65536 },
		{ "1M", 1048576 }, { "8G", 8589934592ULL }, { "2T", 2199023255552ULL },
		{ "1KiB", 1024 }, { "4MB", 4194304 }, { "16B", 16 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t v = 12345;

		assert_int_equal(size_parse(cases[i].in, &v), 0);
		assert_int_equal(v, cases[i].want);
	}
}

static void test_invalid_sizes(void **state)
{
	static const char *const bad[] = {
		"", "12Q", "-5", "+5", " 8", "8 ", "K", "1.5M", "1MM", "1Ki", "0x10",
		"99999999999999999999", "18014398509481984K", NULL,
	};
	(void)state;
	for (int i = 0; bad[i]; i++) {
		size_t v = 7;

		assert_int_equal(size_parse(bad[i], &v), -1);
		assert_int_equal(v, 7);  /* untouched on error */
	}
	assert_int_equal(size_parse(NULL, &(size_t){ 0 }), -1);
}

static void test_format_round_trip(void **state)
{
	static const size_t vals[] = { 0, 8, 1000, 1024, 65536, 1536, 1048576, 8589934592ULL };
	char buf[32];
	(void)state;
	assert_string_equal(size_format(65536, buf, sizeof(buf)), "64K");
	assert_string_equal(size_format(1536, buf, sizeof(buf)), "1536");
	assert_string_equal(size_format(8589934592ULL, buf, sizeof(buf)), "8G");
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		size_t back;

		assert_int_equal(size_parse(size_format(vals[i], buf, sizeof(buf)), &back), 0);
		assert_int_equal(back, vals[i]);
	}
}

/* sizes for people: binary units for powers of two (25 MiB, not 26.21 MB), decimal otherwise */
static void test_human(void **state)
{
	static const struct {
		double bytes;
		const char *want;
	} cases[] = {
		{ 26214400, "25 MiB" }, { 1073741824, "1 GiB" }, { 262144, "256 KiB" }, { 1536, "1536 B" },
		{ 8, "8 B" }, { 0, "0 B" }, { 1000, "1000 B" }, { 4000000, "4 MB" }, { 67840, "67.84 kB" },
		{ 1073740000, "1.07374 GB" }, { 0.5, "0.5 B" },
	};
	char buf[32];
	(void)state;
	/* 1536 B is 1.5 KiB: no whole binary unit, below 10000 B: in bytes */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(size_human(cases[i].bytes, buf, sizeof(buf)), cases[i].want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_sizes),
		cmocka_unit_test(test_invalid_sizes),
		cmocka_unit_test(test_format_round_trip),
		cmocka_unit_test(test_human),
	};
	return cmocka_run_group_tests_name("size", tests, NULL, NULL);
}
