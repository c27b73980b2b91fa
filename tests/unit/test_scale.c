/* --scale's node counts: powers of two below N, then N itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "../../bench/scale.h"

static void expect(int nnodes, const int *want, int nwant)
{
	int got[SCALE_MAX_STEPS], n = scale_counts(nnodes, got, SCALE_MAX_STEPS);

	assert_int_equal(n, nwant);
	for (int i = 0; i < n; i++)
		assert_int_equal(got[i], want[i]);
}

static void test_counts(void **state)
{
	(void)state;
	expect(1, (int[]){ 1 }, 1);
	expect(2, (int[]){ 1, 2 }, 2);
	expect(3, (int[]){ 1, 2, 3 }, 3);
	expect(4, (int[]){ 1, 2, 4 }, 3);
	expect(6, (int[]){ 1, 2, 4, 6 }, 4);
	expect(8, (int[]){ 1, 2, 4, 8 }, 4);
	expect(9, (int[]){ 1, 2, 4, 8, 9 }, 5);
	expect(1000, (int[]){ 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000 }, 11);
	expect(0, NULL, 0);
}

static void test_counts_bounded(void **state)
{
	int got[3];

	(void)state;
	assert_int_equal(scale_counts(1024, got, 3), 3);
	assert_int_equal(got[2], 4);
	/* increasing and ending at N for every N up to a big cluster */
	for (int n = 1; n <= 5000; n++) {
		int c[SCALE_MAX_STEPS], k = scale_counts(n, c, SCALE_MAX_STEPS);

		assert_true(k >= 1);
		assert_int_equal(c[0], 1);
		assert_int_equal(c[k - 1], n);
		for (int i = 1; i < k; i++)
			assert_true(c[i] > c[i - 1]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_counts_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
