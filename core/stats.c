#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void stats_sort(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
}

double stats_quantile_sorted(const double *sorted, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t lo = (size_t)pos;
	double frac = pos - (double)lo;

	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

double stats_median(const double *v, size_t n)
{
	struct stats s;

	return stats_compute(v, n, &s) ? 0.0 : s.median;
}

int stats_compute(const double *v, size_t n, struct stats *out)
{
	double *s, sum = 0.0, sq = 0.0;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return -1;
	s = malloc(n * sizeof(*s));
	if (!s)
		return -1;
	memcpy(s, v, n * sizeof(*s));
	stats_sort(s, n);
	for (i = 0; i < n; i++)
		sum += s[i];
	out->n = n;
	out->min = s[0];
	out->max = s[n - 1];
	out->mean = sum / (double)n;
	out->median = stats_quantile_sorted(s, n, 0.5);
	out->p99 = stats_quantile_sorted(s, n, 0.99);
	for (i = 0; i < n; i++)
		sq += (s[i] - out->mean) * (s[i] - out->mean);
	out->stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0.0;
	out->cv = out->mean != 0.0 ? out->stddev / out->mean : 0.0;
	free(s);
	return 0;
}
