/* SPDX-License-Identifier: MIT */
/*
 * The one pseudo-random generator of the tests and the benchmarks:
 * Marsaglia's xorshift64 (13, 7, 17). A fixed seed draws the same numbers
 * on every run, so that a random test that fails fails again and a
 * generated trace is the same trace. The state is the caller's; never 0
 * (0 stays 0).
 */
#ifndef CAUSEWAY_LIB_RAND_H
#define CAUSEWAY_LIB_RAND_H

#include <stdint.h>

static inline uint64_t cw_xorshift64(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

#endif
