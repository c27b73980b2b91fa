/*
 * report/units.c: the byte counts of profiles and --workload flags, read as
 * ccprobe reads its sizes (core/size.c).
 */
#include "units.h"
#include "../core/size.h"

#include <limits.h>

int rpt_parse_size(const char *s, long long *out)
{
	size_t x;

	if (size_parse(s, &x) || x > LLONG_MAX)
		return -1;
	*out = (long long)x;
	return 0;
}
