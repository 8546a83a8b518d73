/* SPDX-License-Identifier: MIT */
/* The one assertion macro of the unit tests: on failure it says where and
 * why, counts the failure and leaves the test function. And their one
 * pseudo-random generator. */
#ifndef CAUSEWAY_TESTS_CHECK_H
#define CAUSEWAY_TESTS_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include "lib/rand.h"

static int failures, passes;

/* On failure: say where and why, count it, then @leave (a statement:
 * return, goto cleanup). */
#define CHECK_OR(leave, cond, ...)                                        \
	do {                                                              \
		if (!(cond)) {                                            \
			fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);  \
			fprintf(stderr, __VA_ARGS__);                     \
			fputc('\n', stderr);                              \
			failures++;                                       \
			leave;                                            \
		}                                                         \
	} while (0)

#define CHECK(cond, ...) CHECK_OR(return, cond, __VA_ARGS__)

/* lib/rand.h's generator on a fixed seed. A test may seed rng itself,
 * never with 0; not every test draws. */
static uint64_t rng __attribute__((unused)) = 88172645463325252ull;

static inline uint64_t next_rand(void)
{
	return cw_xorshift64(&rng);
}

#endif
