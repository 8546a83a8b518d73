// SPDX-License-Identifier: MIT
/*
 * taskpool: the adapter plane's ground truth, through include/causeway.h.
 *
 * Tasks: W worker threads share one run queue. The main thread spawns T
 * tasks (task_spawn, task_wake); a worker pops one, polls it (task_poll
 * begin/end) for one step, and, until its S steps are done, queues it
 * again (task_wake from inside the poll: the task wakes itself), so a
 * task migrates between workers. A finished task exits (task_exit). Two
 * rounds use the same task ids, so every id has two generations.
 *
 * Requests and resources: C client threads each run R requests
 * (request_begin/end). A request takes one of K cache entries, each a
 * mutex: when trylock fails it waits (resource_wait_begin, lock,
 * resource_wait_end), holds the entry for HOLD_NS (resource_acquire,
 * nanosleep, resource_release) and releases it. The releaser writes its
 * request id into the entry before unlocking, so a waiter knows which
 * request let it in.
 *
 *   taskpool OUT [W T S C R K]     (defaults 3 12 4 4 6 2)
 *
 * Ground truth goes to OUT, written after the work is done:
 *   pid PID
 *   worker TID
 *   spawn ROUND TASK                    the main thread spawned it
 *   poll ROUND TASK STEP TID            each poll, in the order it began
 *   client TID
 *   request ID TID                      begin and end on that thread
 *   wait WAITER ENTRY RELEASER          the request waited, RELEASER let it in
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "asleep.h"
#include "../../include/causeway.h"

#define MAX_TASKS 256
#define MAX_THREADS 32
#define MAX_ENTRIES 64
#define MAX_LOG 65536
#define HOLD_NS 2000000

static int nworkers = 3, ntasks = 12, nsteps = 4, nclients = 4, nreqs = 6, nentries = 2;

/* ---- the run queue ---- */
static pthread_mutex_t qmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcv = PTHREAD_COND_INITIALIZER;
static int queue[MAX_TASKS], qhead, qlen, live_tasks, round_no, stopping;
static int steps_done[MAX_TASKS];

/* ---- the ground truth log (under logmu) ---- */
static pthread_mutex_t logmu = PTHREAD_MUTEX_INITIALIZER;
static char *logbuf;
static size_t loglen;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&logmu);
	va_start(ap, fmt);
	loglen += (size_t)vsnprintf(logbuf + loglen, MAX_LOG * 64 - loglen, fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&logmu);
}

static void push(int task)
{
	queue[(qhead + qlen++) % MAX_TASKS] = task;
	causeway_task_wake(task);
	pthread_cond_signal(&qcv);
}

static void *worker(void *arg)
{
	(void)arg;
	logf_("worker %d\n", (int)gettid_());
	pthread_mutex_lock(&qmu);
	for (;;) {
		int task, step;

		while (!qlen && !stopping)
			pthread_cond_wait(&qcv, &qmu);
		if (!qlen)
			break;
		task = queue[qhead];
		qhead = (qhead + 1) % MAX_TASKS;
		qlen--;
		step = ++steps_done[task];
		pthread_mutex_unlock(&qmu);

		causeway_task_poll_begin(task);
		logf_("poll %d %d %d %d\n", round_no, task, step, (int)gettid_());
		{
			/* a little work, so that samples can land in the poll */
			volatile uint64_t x = (uint64_t)task;

			for (int i = 0; i < 200000; i++)
				x = x * 6364136223846793005u + 1;
		}
		pthread_mutex_lock(&qmu);
		if (step < nsteps)
			push(task);
		causeway_task_poll_end(task);
		if (step == nsteps) {
			causeway_task_exit(task);
			if (!--live_tasks)
				pthread_cond_broadcast(&qcv);
		}
	}
	pthread_mutex_unlock(&qmu);
	return NULL;
}

/* ---- the cache ---- */
static pthread_mutex_t entry_mu[MAX_ENTRIES];
static uint64_t entry_last[MAX_ENTRIES]; /* the request that released it last */

static void *client(void *arg)
{
	int c = (int)(intptr_t)arg;

	logf_("client %d\n", (int)gettid_());
	for (int r = 0; r < nreqs; r++) {
		uint64_t id = (uint64_t)(c + 1) * 1000 + (uint64_t)r;
		int e = (c + r) % nentries;
		char name[32];
		struct timespec hold = { 0, HOLD_NS };

		snprintf(name, sizeof(name), "req-%llu", (unsigned long long)id);
		causeway_request_begin(id, name);
		logf_("request %llu %d\n", (unsigned long long)id, (int)gettid_());
		if (pthread_mutex_trylock(&entry_mu[e])) {
			causeway_resource_wait_begin("cache_entry", e);
			pthread_mutex_lock(&entry_mu[e]);
			causeway_resource_wait_end("cache_entry", e);
			logf_("wait %llu %d %llu\n", (unsigned long long)id, e,
			      (unsigned long long)entry_last[e]);
		}
		causeway_resource_acquire("cache_entry", e);
		nanosleep(&hold, NULL);
		entry_last[e] = id;
		causeway_resource_release("cache_entry", e);
		pthread_mutex_unlock(&entry_mu[e]);
		causeway_request_end(id, 0);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t w[MAX_THREADS], cl[MAX_THREADS];
	int *params[] = { &nworkers, &ntasks, &nsteps, &nclients, &nreqs, &nentries };
	int limits[] = { MAX_THREADS, MAX_TASKS - 1, 1000, MAX_THREADS, 1000, MAX_ENTRIES };
	FILE *out;

	if (argc < 2 || argc > 8) {
		fprintf(stderr, "usage: taskpool OUT [W T S C R K]\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		*params[i - 2] = atoi(argv[i]);
		if (*params[i - 2] < 1 || *params[i - 2] > limits[i - 2]) {
			fprintf(stderr, "taskpool: argument %d out of range\n", i);
			return 2;
		}
	}
	logbuf = calloc(MAX_LOG, 64);
	if (!logbuf)
		return 1;
	for (int e = 0; e < nentries; e++)
		pthread_mutex_init(&entry_mu[e], NULL);
	for (int i = 0; i < nworkers; i++)
		pthread_create(&w[i], NULL, worker, NULL);
	for (int i = 0; i < nclients; i++)
		pthread_create(&cl[i], NULL, client, (void *)(intptr_t)i);

	/* Two rounds over the same task ids: each id lives twice. */
	for (int r = 1; r <= 2; r++) {
		pthread_mutex_lock(&qmu);
		round_no = r;
		live_tasks = ntasks;
		for (int t = 1; t <= ntasks; t++) {
			steps_done[t] = 0;
			causeway_task_spawn(t, 0);
			logf_("spawn %d %d\n", r, t);
			push(t);
		}
		while (live_tasks)
			pthread_cond_wait(&qcv, &qmu);
		pthread_mutex_unlock(&qmu);
	}
	pthread_mutex_lock(&qmu);
	stopping = 1;
	pthread_cond_broadcast(&qcv);
	pthread_mutex_unlock(&qmu);
	for (int i = 0; i < nworkers; i++)
		pthread_join(w[i], NULL);
	for (int i = 0; i < nclients; i++)
		pthread_join(cl[i], NULL);

	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	fprintf(out, "pid %d\n%s", (int)getpid(), logbuf);
	return fclose(out) ? 1 : 0;
}
