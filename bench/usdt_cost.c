// SPDX-License-Identifier: MIT
/*
 * usdt_cost: what an untraced adapter probe (include/causeway.h) costs.
 * The same loop twice, N iterations each: once with a probe per
 * iteration, its semaphore down (nobody attached), once without; the
 * difference over N is the cost of one probe. The loop does a little
 * work of its own (a volatile store) so that both versions keep their
 * shape; each is timed REPS times and the fastest kept (the least
 * disturbed run).
 *
 *   usdt_cost [N [REPS]]      prints "probe NAME: X.XX ns per probe"
 *
 * Run it untraced: under causeway-capture -e usdt the semaphores are up
 * and it measures the traced cost instead (it says which).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "../include/causeway.h"

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void loop_bare(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink = i;
}

__attribute__((noinline)) static void loop_wake(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		sink = i;
		causeway_task_wake(i);
	}
}

/* Two arguments, one a string: its arguments are not even evaluated
 * while the semaphore is down. */
__attribute__((noinline)) static void loop_request(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		sink = i;
		causeway_request_begin(i, "GET /");
	}
}

static double best(void (*fn)(uint64_t), uint64_t n, int reps)
{
	double min = 1e300;

	for (int r = 0; r < reps; r++) {
		uint64_t t0 = now_ns();

		fn(n);
		if ((double)(now_ns() - t0) < min)
			min = (double)(now_ns() - t0);
	}
	return min;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000000ull;
	int reps = argc > 2 ? atoi(argv[2]) : 7;
	double bare, wake, req;

	if (!n || reps <= 0) {
		fprintf(stderr, "usage: usdt_cost [N [REPS]]\n");
		return 2;
	}
	best(loop_bare, n / 10, 1); /* warm up the CPU's clock */
	bare = best(loop_bare, n, reps);
	wake = best(loop_wake, n, reps);
	req = best(loop_request, n, reps);
	printf("%s, %llu iterations, best of %d\n",
	       CAUSEWAY_ON_(task_wake) ? "TRACED (semaphores up)" : "untraced (semaphores down)",
	       (unsigned long long)n, reps);
	printf("loop alone: %.3f ns per iteration\n", bare / (double)n);
	printf("probe task_wake: %.3f ns per probe\n", (wake - bare) / (double)n);
	printf("probe request_begin: %.3f ns per probe\n", (req - bare) / (double)n);
	return 0;
}
