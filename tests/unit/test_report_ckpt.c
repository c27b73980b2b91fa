/*
 * The checkpoint estimate (report/model_ckpt.h) against cases computed by hand;
 * the arithmetic is in the comments. Formulas: docs/estimate.md, "Checkpoints".
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../report/model_ckpt.h"

static int near(double a, double b)
{
	return fabs(a - b) <= 1e-12 * fabs(b) + 1e-15;
}
#define assert_near(a, b) assert_true(near((a), (b)))

/*
 * 7e9 parameters at the default 16 B each: 1.12e11 B. At 10 GB/s that is
 * 1.12e11 / 1e10 = 11.2 s. Every 1000 steps of 2 s: 2000 s of training, so
 * the stall fraction is 11.2 / 2011.2 = 0.00556881...; 86400 / 2011.2 =
 * 42.9594 checkpoints a day, 42.9594 x 11.2 / 3600 = 0.133652 h stalled.
 */
static void test_steps(void **state)
{
	struct ckpt_inputs in = { .bytes = CKPT_BYTES_PER_PARAM * 7e9, .write_GBps = 10,
				  .every_steps = 1000, .step_s = 2 };
	struct ckpt_outputs o;
	char err[200];
	(void)state;

	assert_int_equal(ckpt_compute(&in, &o, err, sizeof(err)), 0);
	assert_near(in.bytes, 1.12e11);
	assert_near(o.write_s, 11.2);
	assert_near(o.interval_s, 2000);
	assert_near(o.stall_fraction, 11.2 / 2011.2);
	assert_true(fabs(o.stall_fraction - 0.0055688146) < 1e-9);
	assert_near(o.per_day, 86400 / 2011.2);
	assert_near(o.stall_h_per_day, 86400 / 2011.2 * 11.2 / 3600);
}

/*
 * the case study in docs/sources.md: 2.3 TB written in 40 s, i.e. 57.5 GB/s. Every
 * 30 min (1800 s of training): 40 / 1840 = 0.0217391 of the wall time.
 */
static void test_minutes(void **state)
{
	struct ckpt_inputs in = { .bytes = 2.3e12, .write_GBps = 57.5, .every_s = 1800,
				  .step_s = NAN };
	struct ckpt_outputs o;
	char err[200];
	(void)state;

	assert_int_equal(ckpt_compute(&in, &o, err, sizeof(err)), 0);
	assert_near(o.write_s, 40);
	assert_near(o.interval_s, 1800);
	assert_near(o.stall_fraction, 40.0 / 1840);
	assert_true(fabs(o.stall_fraction - 0.02173913) < 1e-8);
}

static void test_refusals(void **state)
{
	struct ckpt_inputs in = { .bytes = 1e9, .write_GBps = 1, .every_steps = 10, .step_s = NAN };
	struct ckpt_outputs o;
	char err[200];
	(void)state;

	/* steps without a step time: says to give minutes */
	assert_int_equal(ckpt_compute(&in, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "minutes"));
	in.step_s = 1;
	in.write_GBps = 0;
	assert_int_equal(ckpt_compute(&in, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "write rate"));
	in.write_GBps = 1;
	in.bytes = 0;
	assert_int_equal(ckpt_compute(&in, &o, err, sizeof(err)), -1);
	in.bytes = 1e9;
	in.every_steps = 0;
	assert_int_equal(ckpt_compute(&in, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "checkpoint_every"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps),
		cmocka_unit_test(test_minutes),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
