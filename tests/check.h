/* SPDX-License-Identifier: MIT */
/* The one assertion macro of the unit tests: on failure it says where and
 * why, counts the failure and leaves the test function. */
#ifndef CAUSEWAY_TESTS_CHECK_H
#define CAUSEWAY_TESTS_CHECK_H

#include <stdio.h>

static int failures, passes;

#define CHECK(cond, ...)                                                  \
	do {                                                              \
		if (!(cond)) {                                            \
			fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);  \
			fprintf(stderr, __VA_ARGS__);                     \
			fputc('\n', stderr);                              \
			failures++;                                       \
			return;                                           \
		}                                                         \
	} while (0)

#endif
