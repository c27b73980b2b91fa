#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../core/stats.h"

static void test_odd_sample(void **state)
{
	const double v[] = { 5, 1, 4, 2, 3 };
	struct stats s;
	(void)state;
	assert_int_equal(stats_compute(v, 5, &s), 0);
	assert_int_equal(s.n, 5);
	assert_float_equal(s.min, 1, 1e-12);
	assert_float_equal(s.max, 5, 1e-12);
	assert_float_equal(s.median, 3, 1e-12);
	assert_float_equal(s.mean, 3, 1e-12);
	/* type-7 p99: 1 + 0.99 * 4 = 4.96 -> between 4 and 5 */
	assert_float_equal(s.p99, 4.96, 1e-12);
	/* sample stddev of 1..5 is sqrt(2.5) */
	assert_float_equal(s.stddev, 1.5811388300841898, 1e-12);
	assert_float_equal(s.cv, 1.5811388300841898 / 3, 1e-12);
	assert_float_equal(v[0], 5, 0);  /* input left unsorted */
}

static void test_even_median_and_p99(void **state)
{
	double v[100];
	struct stats s;
	(void)state;
	for (int i = 0; i < 100; i++)
		v[i] = 100 - i;  /* 100..1 */
	assert_int_equal(stats_compute(v, 4, &s), 0);
	assert_float_equal(s.median, 98.5, 1e-12);  /* of 100, 99, 98, 97 */
	assert_int_equal(stats_compute(v, 100, &s), 0);
	assert_float_equal(s.median, 50.5, 1e-12);
	assert_float_equal(s.p99, 99.01, 1e-9);
}

static void test_single_and_empty(void **state)
{
	const double v[] = { 7.5 };
	struct stats s;
	(void)state;
	assert_int_equal(stats_compute(v, 1, &s), 0);
	assert_float_equal(s.min, 7.5, 0);
	assert_float_equal(s.p99, 7.5, 0);
	assert_float_equal(s.stddev, 0, 0);
	assert_float_equal(s.cv, 0, 0);
	assert_int_equal(stats_compute(v, 0, &s), -1);
	assert_int_equal(s.n, 0);
	assert_float_equal(stats_median(v, 0), 0, 0);
	assert_float_equal(stats_median((const double[]){ 3, 1, 2, 10 }, 4), 2.5, 1e-12);
	assert_float_equal(stats_median((const double[]){ 3, 1, 2 }, 3), 2, 1e-12);
}

static void test_constant_sample_has_zero_cv(void **state)
{
	const double v[] = { 2, 2, 2, 2 };
	struct stats s;
	(void)state;
	assert_int_equal(stats_compute(v, 4, &s), 0);
	assert_float_equal(s.cv, 0, 1e-15);
	assert_float_equal(s.p99, 2, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_odd_sample),
		cmocka_unit_test(test_even_median_and_p99),
		cmocka_unit_test(test_single_and_empty),
		cmocka_unit_test(test_constant_sample_has_zero_cv),
	};
	return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}
