/* SPDX-License-Identifier: MIT */
/*
 * The capture's one clock. Records are stamped by bpf_ktime_get_ns(),
 * which is CLOCK_MONOTONIC: what user space stamps (a USDT attach, a
 * process snapshot, the drain's horizon, the loop's start and end) reads
 * the same clock, so that the analyzer orders them with the kernel's.
 * meta.c also reads CLOCK_REALTIME beside it, for the wall-clock offset.
 */
#ifndef CAUSEWAY_CLOCK_H
#define CAUSEWAY_CLOCK_H

#include <stdint.h>
#include <time.h>

#define NS_PER_SEC 1000000000ull

/* @c, in ns. */
static inline uint64_t clock__ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* Now, on the records' clock. */
static inline uint64_t clock__now(void)
{
	return clock__ns(CLOCK_MONOTONIC);
}

#endif /* CAUSEWAY_CLOCK_H */
