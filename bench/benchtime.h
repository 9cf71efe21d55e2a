/* SPDX-License-Identifier: ISC */
/* The clock and the sort the micro benchmarks share. */
#ifndef MCPD_BENCHTIME_H
#define MCPD_BENCHTIME_H

#include <time.h>

/* Now on the monotonic clock, in microseconds. */
static inline double
bench_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* qsort's order of doubles, smallest first. */
static inline int
bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#endif
