#ifndef CCDIAG_STATS_H
#define CCDIAG_STATS_H

#include <stddef.h>

/* Summary of a sample; same unit as the input values. */
struct stats {
	size_t n;      /* number of samples */
	double min;
	double median; /* linear interpolation between the middle two for even n */
	double mean;
	double max;
	double p99;    /* 99th percentile, linear interpolation (type 7, as numpy) */
	double stddev; /* sample standard deviation (n - 1); 0 for n < 2 */
	double cv;     /* stddev / mean; 0 when mean is 0 */
};

/*
 * Computes the summary of v[0..n). Does not modify v. Returns 0, or -1 when
 * n is 0 or memory runs out (out is then zeroed).
 */
int stats_compute(const double *v, size_t n, struct stats *out);

/* The median of v[0..n) (v untouched); 0 for n == 0 or when memory runs out. */
double stats_median(const double *v, size_t n);

/* Sorts v[0..n) ascending in place. */
void stats_sort(double *v, size_t n);

/* Percentile q in [0,1] of sorted[0..n), linear interpolation; n > 0. */
double stats_quantile_sorted(const double *sorted, size_t n, double q);

#endif
