#ifndef CCDIAG_TIMER_H
#define CCDIAG_TIMER_H

#include <time.h>

/* Seconds on the monotonic clock; only differences are meaningful. */
static inline double timer_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
