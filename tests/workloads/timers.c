// SPDX-License-Identifier: MIT
/*
 * timers: two threads that only ever wait for a timer.
 *  - the sleeper calls clock_nanosleep(1 ms) N times: each sleep arms an
 *    hrtimer (function hrtimer_wakeup) and its expiry wakes the thread;
 *  - the timerfd thread arms a one-shot 1 ms timerfd N times and reads it:
 *    each read blocks until the timer (function timerfd_tmrproc) fires.
 * Neither synchronizes with anyone, so nothing but its timers (and its
 * creation) can wake it; one arm and one expiry per round, since a 1 ms
 * timer never expires before its thread has gone to sleep.
 *
 *   timers OUT N
 *
 * Ground truth goes to OUT, written after the work is done:
 *   pid PID
 *   nanosleep TID N
 *   timerfd TID N
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>

static long rounds;
static pid_t sleeper_tid, tfd_tid;

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void *sleeper(void *arg)
{
	struct timespec ts = { 0, 1000000 };

	(void)arg;
	sleeper_tid = gettid_();
	for (long i = 0; i < rounds; i++)
		while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL) == EINTR)
			;
	return NULL;
}

static void *ticker(void *arg)
{
	struct itimerspec its = { .it_value = { 0, 1000000 } };
	uint64_t n;
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);

	(void)arg;
	tfd_tid = gettid_();
	if (fd < 0) {
		perror("timers: timerfd_create");
		exit(1);
	}
	for (long i = 0; i < rounds; i++) {
		if (timerfd_settime(fd, 0, &its, NULL)) {
			perror("timers: timerfd_settime");
			exit(1);
		}
		while (read(fd, &n, sizeof(n)) != sizeof(n))
			if (errno != EINTR) {
				perror("timers: read timerfd");
				exit(1);
			}
		if (n != 1) {
			fprintf(stderr, "timers: a one-shot timerfd expired %llu times\n",
				(unsigned long long)n);
			exit(1);
		}
	}
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	FILE *out;

	if (argc != 3 || (rounds = atol(argv[2])) < 1) {
		fprintf(stderr, "usage: timers OUT N\n");
		return 2;
	}
	if (pthread_create(&a, NULL, sleeper, NULL) || pthread_create(&b, NULL, ticker, NULL))
		return 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);

	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	fprintf(out, "pid %d\nnanosleep %d %ld\ntimerfd %d %ld\n", (int)getpid(), (int)sleeper_tid,
		rounds, (int)tfd_tid, rounds);
	return fclose(out) ? 1 : 0;
}
