/* The Hockney fit: exact recovery, seeded noise, and refusals on degenerate input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "../../bench/fit.h"

#define NS 25  /* 8 B .. 128 MiB by factors of 2, like a default sweep */

static void sweep(double *x, double alpha, double beta, double *t)
{
	for (int i = 0; i < NS; i++) {
		x[i] = 8.0 * pow(2.0, i);
		t[i] = alpha + x[i] / beta;
	}
}

/* xorshift64*: a fixed seed gives the same "noise" on every machine */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static double uniform(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (double)((rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static void test_exact_recovery(void **state)
{
	/* a 1gbit-like fabric, an NVLink-like one, and a latency-dominated one */
	static const double cases[][2] = { { 50e-6, 0.118e9 }, { 8e-6, 350e9 }, { 1e-3, 1e9 } };
	double x[NS], t[NS];
	struct fit_result f;
	(void)state;

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		sweep(x, cases[c][0], cases[c][1], t);
		assert_true(fit_hockney(x, t, NS, &f));
		assert_int_equal(f.n, NS);
		assert_true(fabs(f.alpha_s / cases[c][0] - 1) < 0.01);
		assert_true(fabs(f.beta_Bps / cases[c][1] - 1) < 0.01);
		assert_true(f.rel_rms < 1e-9);
		assert_true(f.r2 > 0.999999);
		assert_true(fabs(fit_time(&f, 1e6) - (cases[c][0] + 1e6 / cases[c][1])) <
			    1e-9 * fit_time(&f, 1e6));
	}
}

static void test_noisy(void **state)
{
	/* +-5% multiplicative noise, seeded: estimates stay close, quality shows it */
	const double alpha = 30e-6, beta = 12e9;
	double x[NS], t[NS], worst_a = 0, worst_b = 0;
	struct fit_result f;
	(void)state;

	for (int trial = 0; trial < 50; trial++) {
		sweep(x, alpha, beta, t);
		for (int i = 0; i < NS; i++)
			t[i] *= 1.0 + 0.05 * (2.0 * uniform() - 1.0);
		assert_true(fit_hockney(x, t, NS, &f));
		worst_a = fmax(worst_a, fabs(f.alpha_s / alpha - 1));
		worst_b = fmax(worst_b, fabs(f.beta_Bps / beta - 1));
		assert_true(f.rel_rms > 0.005 && f.rel_rms < 0.05);
		assert_true(f.max_rel < 0.11);
		assert_true(f.r2 > 0.9);
	}
	/* 25 points, 5% noise: about 5%/sqrt(12) per parameter, 3 sigma margin */
	assert_true(worst_a < 0.05);
	assert_true(worst_b < 0.05);
}

static void test_skips_bad_points(void **state)
{
	double x[NS + 3], t[NS + 3];
	struct fit_result f;
	(void)state;

	sweep(x, 20e-6, 5e9, t);
	x[NS] = 0;         t[NS] = 1.0;      /* size 0 */
	x[NS + 1] = 4096;  t[NS + 1] = NAN;  /* no time */
	x[NS + 2] = 8192;  t[NS + 2] = -1;   /* negative time */
	assert_true(fit_hockney(x, t, NS + 3, &f));
	assert_int_equal(f.n, NS);
	assert_true(fabs(f.beta_Bps / 5e9 - 1) < 1e-6);
}

static void test_refusals(void **state)
{
	double x[4] = { 8, 16, 32, 64 }, t[4] = { 1e-5, 2e-5, 3e-5, 4e-5 };
	double same[4] = { 64, 64, 64, 64 }, falling[4] = { 4e-5, 3e-5, 2e-5, 1e-5 };
	double flat[4] = { 1e-5, 1e-5, 1e-5, 1e-5 };
	struct fit_result f;
	(void)state;

	assert_false(fit_hockney(x, t, 2, &f));          /* two points: no fit */
	assert_int_equal(f.n, 2);
	assert_non_null(f.why);
	assert_true(isnan(fit_time(&f, 100)));
	assert_false(fit_hockney(x, t, 0, &f));
	assert_false(fit_hockney(same, t, 4, &f));       /* one size: no slope */
	assert_non_null(f.why);
	assert_false(fit_hockney(x, falling, 4, &f));    /* beta < 0 */
	assert_non_null(f.why);
	assert_false(fit_hockney(x, flat, 4, &f));       /* beta infinite (slope 0) */
	assert_true(fit_hockney(x, t, 3, &f));           /* three points suffice */
	assert_int_equal(f.n, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_recovery),
		cmocka_unit_test(test_noisy),
		cmocka_unit_test(test_skips_bad_points),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
