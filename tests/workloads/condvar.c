// SPDX-License-Identifier: MIT
/*
 * condvar: a pthread condition-variable handoff between two threads, N
 * rounds. In each round the waiter announces the round and waits on the
 * condition variable; the signaller waits until the waiter is asleep in
 * the kernel (/proc/self/task/TID/stat state S: after its announcement
 * its only sleep is the futex wait inside pthread_cond_wait), then sets
 * the flag and signals. So every signal finds a waiter blocked on the
 * condition variable's futex word and must wake it with a futex wake:
 * exactly N futex wakes signaller -> waiter, none of them optional.
 *
 * The signaller signals after unlocking the mutex, so the woken waiter
 * never has to wait for the mutex: the mutex is never contended and the
 * only futex of the handoff is the condition variable's.
 *
 *   condvar OUT N
 *
 * Ground truth goes to OUT, written after the work is done:
 *   pid PID
 *   signaller TID
 *   waiter TID
 *   rounds N
 *   cond ADDR SIZE        the pthread_cond_t (its futex words lie inside)
 *   mutex ADDR SIZE
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "asleep.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static long rounds, signalled;   /* under m */
static _Atomic long announced;   /* the round the waiter waits for */
static _Atomic pid_t waiter_tid;

static void *waiter(void *arg)
{
	(void)arg;
	waiter_tid = gettid_();
	pthread_mutex_lock(&m);
	for (long i = 1; i <= rounds; i++) {
		announced = i;
		while (signalled < i)
			pthread_cond_wait(&c, &m);
	}
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t wt;
	FILE *out;

	if (argc != 3 || (rounds = atol(argv[2])) < 1) {
		fprintf(stderr, "usage: condvar OUT N\n");
		return 2;
	}
	if (pthread_create(&wt, NULL, waiter, NULL))
		return 1;
	for (long i = 1; i <= rounds; i++) {
		while (announced != i)
			sched_yield();
		wait_sleeping(waiter_tid);
		pthread_mutex_lock(&m);
		signalled = i;
		pthread_mutex_unlock(&m);
		pthread_cond_signal(&c);
	}
	pthread_join(wt, NULL);

	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	fprintf(out, "pid %d\nsignaller %d\nwaiter %d\nrounds %ld\n", (int)getpid(), (int)gettid_(),
		(int)waiter_tid, rounds);
	fprintf(out, "cond %llu %zu\nmutex %llu %zu\n", (unsigned long long)(uintptr_t)&c, sizeof(c),
		(unsigned long long)(uintptr_t)&m, sizeof(m));
	return fclose(out) ? 1 : 0;
}
