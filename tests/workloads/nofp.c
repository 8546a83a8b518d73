// SPDX-License-Identifier: MIT
/*
 * nofp: CPU time spent in a callback that a distro library calls. Built
 * with -fomit-frame-pointer (Makefile), and libc is built without frame
 * pointers too, so a frame-pointer walk from the comparator gets lost;
 * only unwinding by the objects' CFI (--call-graph dwarf) reaches
 * sort_rounds() and main() through qsort.
 *
 *   nofp OUT SECS [ROUNDS]
 *
 * With ROUNDS, exactly ROUNDS sorts whatever the time (bench/capture
 * times a fixed amount of work). Ground truth goes to OUT: "pid PID",
 * "sorter TID" and "elapsed_ns NS".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "asleep.h"

static volatile uint64_t sink;

/* Most of the time goes here, called from inside libc's qsort. */
static __attribute__((noinline)) int cmp_slow(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b, h = x ^ y;

	for (int i = 0; i < 200; i++)
		h = h * 6364136223846793005u + 1442695040888963407u;
	sink = h;
	return x < y ? -1 : x > y;
}

static __attribute__((noinline)) void sort_rounds(double secs, long rounds)
{
	enum { N = 4096 };
	static uint64_t v[N];
	struct timespec t0, t;
	uint64_t seed = 42;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < N; i++)
			v[i] = seed = seed * 2862933555777941757u + 3037000493u;
		qsort(v, N, sizeof(v[0]), cmp_slow);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (rounds > 0 ? --rounds > 0 : (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	struct timespec t0, t;
	FILE *out;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: nofp OUT SECS [ROUNDS]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	sort_rounds(atof(argv[2]), argc == 4 ? atol(argv[3]) : 0);
	clock_gettime(CLOCK_MONOTONIC, &t);
	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	fprintf(out, "pid %d\nsorter %d\nelapsed_ns %lld\n", (int)getpid(), (int)gettid_(),
		(t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec));
	return fclose(out) ? 1 : 0;
}
