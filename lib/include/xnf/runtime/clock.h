/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Elapsed time on the monotonic clock, for the control thread's timeouts, rates and uptimes. */
#ifndef XNF_RUNTIME_CLOCK_H
#define XNF_RUNTIME_CLOCK_H

#include <time.h>

static inline double xnf_seconds_between(const struct timespec *from, const struct timespec *to)
{
	return (double)(to->tv_sec - from->tv_sec) + (double)(to->tv_nsec - from->tv_nsec) / 1e9;
}

static inline double xnf_seconds_since(const struct timespec *from)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return xnf_seconds_between(from, &now);
}

#endif
