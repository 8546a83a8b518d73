// SPDX-License-Identifier: MIT
/*
 * burn: the context plane's ground truth. A spinner thread spends about
 * SECS seconds of CPU in one function, burn_cpu(), and a sleeper thread
 * calls nap() NAPS times, each a 200 ms nanosleep. Both are noinline,
 * and the workload is built with -g, so a sample's stack can name them
 * with file and line.
 *
 *   burn OUT SECS NAPS
 *
 * Ground truth goes to OUT, written after the work is done:
 *   pid PID
 *   spinner TID CPU_NS        CPU_NS: the thread's CLOCK_THREAD_CPUTIME_ID
 *   burn_lines FIRST LAST     the source lines of burn_cpu()'s body
 *   sleeper TID NAPS NAP_NS
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "asleep.h"

#define NAP_NS 200000000L

static double secs;
static long naps;
static pid_t spinner_tid, sleeper_tid;
static uint64_t spinner_cpu_ns;
static int burn_first, burn_last;

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* All the spinner's CPU goes here, on lines burn_first..burn_last; the
 * clock is read once per million iterations, so its own cost (in the
 * vDSO) stays a fraction of a percent. */
static __attribute__((noinline)) uint64_t burn_cpu(uint64_t until)
{
	volatile uint64_t x = 1;

	burn_first = __LINE__;
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < until)
		for (int i = 0; i < 1000000; i++)
			x = x * 6364136223846793005u + 1442695040888963407u;
	burn_last = __LINE__;
	return x;
}

static void *spinner(void *arg)
{
	(void)arg;
	spinner_tid = gettid_();
	burn_cpu(now_ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)(secs * 1e9));
	spinner_cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

static __attribute__((noinline)) void nap(void)
{
	struct timespec ts = { 0, NAP_NS };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts))
		;
	__asm__ volatile("" ::: "memory"); /* not a tail call: nap stays on the stack */
}

static void *sleeper(void *arg)
{
	(void)arg;
	sleeper_tid = gettid_();
	for (long i = 0; i < naps; i++)
		nap();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	FILE *out;

	if (argc != 4) {
		fprintf(stderr, "usage: burn OUT SECS NAPS\n");
		return 2;
	}
	secs = atof(argv[2]);
	naps = atol(argv[3]);
	if (pthread_create(&a, NULL, spinner, NULL) || pthread_create(&b, NULL, sleeper, NULL)) {
		perror("burn: pthread_create");
		return 1;
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	fprintf(out, "pid %d\nspinner %d %llu\nburn_lines %d %d\nsleeper %d %ld %ld\n", (int)getpid(),
		(int)spinner_tid, (unsigned long long)spinner_cpu_ns, burn_first, burn_last,
		(int)sleeper_tid, naps, NAP_NS);
	return fclose(out) ? 1 : 0;
}
