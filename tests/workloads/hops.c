// SPDX-License-Identifier: MIT
/*
 * hops: a request that crosses three threads, named on the first only.
 * For each request N:
 *
 *   front   causeway_request_begin(N, "req-N /item/K"), writes N to a pipe
 *   middle  reads it (a pipe wake from front), burns BURN_US of its own CPU,
 *           hands N to back through a mutex and a condition variable (a
 *           futex wake)
 *   back    burns BURN_US of its own CPU, writes N to a second pipe
 *   front   reads the reply (a pipe wake from back), causeway_request_end
 *
 * Only front declares the request (include/causeway.h), so whatever
 * middle and back do for it reaches the request only through those
 * handoffs (docs/model.md §6.1). Each handoff waits until its receiver is
 * asleep in the kernel (asleep.h): middle in its pipe read, back in its
 * condition-variable wait, front in its reply read, which are each one's
 * only sleeps while requests run. So every handoff is a wake, and none is
 * optional: a receiver that found its data without sleeping would take
 * the next request with the last one's handoff still its latest.
 *
 *   hops OUT [REQUESTS [BURN_US]]      (defaults 50 3000)
 *
 * Ground truth goes to OUT, written after the work is done; times are
 * CLOCK_MONOTONIC ns, the capture's clock (capture/clock.h):
 *   pid PID
 *   thread NAME TID                     front, middle, back
 *   request ID BEGIN END NAME...        front's begin and end, and the name
 *   hop ID THREAD T0 T1 CPU WORK        THREAD (middle, back) worked for
 *                                       request ID from T0 to T1 and ran
 *                                       CPU ns of its own in between, WORK
 *                                       of them in burn()
 *
 * Built with frame pointers (Makefile), so that a sample's stack reads
 * burn < middle_work or back_work < middle or back.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "asleep.h"
#include "../../include/causeway.h"

#define MAX_REQUESTS 10000

enum { FRONT, MIDDLE, BACK, NTHREADS };
static const char *const thread_names[NTHREADS] = { "front", "middle", "back" };
static _Atomic pid_t tids[NTHREADS];

static long nreq = 50;
static uint64_t burn_ns = 3000000;
static int req_pipe[2], reply_pipe[2];

/* middle -> back: one request at a time, 0 when none. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t handed = PTHREAD_COND_INITIALIZER;
static uint64_t slot;
static int closing;

struct hop {
	uint64_t t0, t1, cpu, work;
};
static struct {
	uint64_t begin, end;
	char name[32];
	struct hop hop[NTHREADS];
} truth[MAX_REQUESTS + 1];

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void named(int who)
{
	tids[who] = gettid_();
	pthread_setname_np(pthread_self(), thread_names[who]);
}

/* Until every thread has said its tid, so that wait_sleeping() has one. */
static void all_named(void)
{
	for (int i = 0; i < NTHREADS; i++)
		while (!tids[i])
			sched_yield();
}

static int full_read(int fd, uint64_t *v)
{
	ssize_t n;

	while ((n = read(fd, v, sizeof(*v))) < 0 && errno == EINTR)
		;
	return n == (ssize_t)sizeof(*v) ? 0 : -1;
}

static void full_write(int fd, uint64_t v)
{
	while (write(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		if (errno != EINTR) {
			perror("hops: write");
			exit(1);
		}
}

/* The work a thread does for a request: a fixed amount of its own CPU
 * time, whatever else runs on the machine, so that 999 Hz samples land
 * on it; the clock is read once per 50 us or so, so that the samples'
 * leaf is this function, not the clock's syscall. Not inlined: its
 * frame names the work in a stack. Returns the CPU time it took. */
static __attribute__((noinline)) uint64_t burn(void)
{
	uint64_t start = now_ns(CLOCK_THREAD_CPUTIME_ID), now = start;
	volatile uint64_t x = 1;

	while (now < start + burn_ns) {
		for (int i = 0; i < 50000; i++)
			x = x * 6364136223846793005u + 1;
		now = now_ns(CLOCK_THREAD_CPUTIME_ID);
	}
	return now - start;
}

/* noipa: the two are the same code, which the compiler would otherwise
 * fold into one; the barrier keeps the call a call, not a jump that would
 * leave the frame out of the stack. */
static __attribute__((noipa)) uint64_t middle_work(void)
{
	uint64_t cpu = burn();

	__asm__ volatile("" ::: "memory");
	return cpu;
}

static __attribute__((noipa)) uint64_t back_work(void)
{
	uint64_t cpu = burn();

	__asm__ volatile("" ::: "memory");
	return cpu;
}

static void hop_begin(struct hop *h)
{
	h->t0 = now_ns(CLOCK_MONOTONIC);
	h->cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void hop_end(struct hop *h)
{
	h->cpu = now_ns(CLOCK_THREAD_CPUTIME_ID) - h->cpu;
	h->t1 = now_ns(CLOCK_MONOTONIC);
}

static void *front(void *arg)
{
	(void)arg;
	named(FRONT);
	all_named();
	for (uint64_t id = 1; id <= (uint64_t)nreq; id++) {
		uint64_t reply;

		snprintf(truth[id].name, sizeof(truth[id].name), "req-%llu /item/%llu",
			 (unsigned long long)id, (unsigned long long)(id % 8));
		truth[id].begin = now_ns(CLOCK_MONOTONIC);
		causeway_request_begin(id, truth[id].name);
		wait_sleeping(tids[MIDDLE]);
		full_write(req_pipe[1], id);
		if (full_read(reply_pipe[0], &reply) || reply != id) {
			fprintf(stderr, "hops: bad reply\n");
			exit(1);
		}
		causeway_request_end(id, 0);
		truth[id].end = now_ns(CLOCK_MONOTONIC);
	}
	close(req_pipe[1]); /* middle sees EOF */
	return NULL;
}

static void *middle(void *arg)
{
	uint64_t id;

	(void)arg;
	named(MIDDLE);
	all_named();
	while (!full_read(req_pipe[0], &id)) {
		struct hop *h = &truth[id].hop[MIDDLE];

		hop_begin(h);
		h->work = middle_work();
		wait_sleeping(tids[BACK]);
		/* Signalled after the unlock, so that back never sleeps on the
		 * mutex: its one wake is the condition variable's futex. */
		pthread_mutex_lock(&mu);
		slot = id;
		pthread_mutex_unlock(&mu);
		/* Before the signal: once back has it, the request may end
		 * while this thread is still on its way back to the pipe. */
		hop_end(h);
		pthread_cond_signal(&handed);
	}
	pthread_mutex_lock(&mu);
	closing = 1;
	pthread_mutex_unlock(&mu);
	pthread_cond_signal(&handed);
	return NULL;
}

static void *back(void *arg)
{
	(void)arg;
	named(BACK);
	all_named();
	pthread_mutex_lock(&mu);
	for (;;) {
		struct hop *h;
		uint64_t id;

		while (!slot && !closing)
			pthread_cond_wait(&handed, &mu);
		if (!slot)
			break;
		id = slot;
		slot = 0;
		pthread_mutex_unlock(&mu);

		h = &truth[id].hop[BACK];
		hop_begin(h);
		h->work = back_work();
		wait_sleeping(tids[FRONT]);
		/* Before the reply: front ends the request once it has it. */
		hop_end(h);
		full_write(reply_pipe[1], id);
		pthread_mutex_lock(&mu);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*const body[NTHREADS])(void *) = { front, middle, back };
	pthread_t t[NTHREADS];
	FILE *out;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: hops OUT [REQUESTS [BURN_US]]\n");
		return 2;
	}
	if (argc > 2)
		nreq = atol(argv[2]);
	if (argc > 3)
		burn_ns = (uint64_t)atol(argv[3]) * 1000;
	if (nreq < 1 || nreq > MAX_REQUESTS || burn_ns < 1000 || burn_ns > 1000000000) {
		fprintf(stderr, "hops: bad arguments\n");
		return 2;
	}
	if (pipe(req_pipe) || pipe(reply_pipe)) {
		perror("hops: pipe");
		return 1;
	}
	for (int i = NTHREADS - 1; i >= 0; i--)
		if (pthread_create(&t[i], NULL, body[i], NULL)) {
			fprintf(stderr, "hops: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);

	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	fprintf(out, "pid %d\n", (int)getpid());
	for (int i = 0; i < NTHREADS; i++)
		fprintf(out, "thread %s %d\n", thread_names[i], (int)tids[i]);
	for (long id = 1; id <= nreq; id++) {
		fprintf(out, "request %ld %llu %llu %s\n", id, (unsigned long long)truth[id].begin,
			(unsigned long long)truth[id].end, truth[id].name);
		for (int i = MIDDLE; i <= BACK; i++)
			fprintf(out, "hop %ld %s %llu %llu %llu %llu\n", id, thread_names[i],
				(unsigned long long)truth[id].hop[i].t0,
				(unsigned long long)truth[id].hop[i].t1,
				(unsigned long long)truth[id].hop[i].cpu,
				(unsigned long long)truth[id].hop[i].work);
	}
	return fclose(out) ? 1 : 0;
}
