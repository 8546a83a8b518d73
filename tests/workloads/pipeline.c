// SPDX-License-Identifier: MIT
/*
 * pipeline: a tiny request pipeline with real cross-thread handoffs, the
 * shape of a server. For each request:
 *
 *   client --pipe--> acceptor --queue+condvar--> worker --1 ms timer sleep
 *   ("backend call")--> worker --pipe--> client
 *
 *   pipeline OUT [REQUESTS [WORKERS]]
 *
 * Ground truth in OUT ("-": nowhere): "pid PID" and "thread NAME TID".
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORKERS 16
#define QCAP 64

static int req_pipe[2], rep_pipe[2];
static long nreq = 50;
static int nworkers = 2;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nonempty = PTHREAD_COND_INITIALIZER;
static uint64_t queue[QCAP];
static int qhead, qlen, closing;

struct who {
	char name[16];
	pid_t tid;
};
static struct who who[MAX_WORKERS + 2];

static void named(struct who *w, const char *name)
{
	snprintf(w->name, sizeof(w->name), "%.15s", name);
	w->tid = (pid_t)syscall(SYS_gettid);
	pthread_setname_np(pthread_self(), w->name);
}

static int full_read(int fd, void *buf, size_t len)
{
	ssize_t n;

	while ((n = read(fd, buf, len)) < 0 && errno == EINTR)
		;
	return n == (ssize_t)len ? 0 : -1;
}

static void full_write(int fd, const void *buf, size_t len)
{
	while (write(fd, buf, len) != (ssize_t)len)
		if (errno != EINTR) {
			perror("pipeline: write");
			exit(1);
		}
}

static void *client(void *arg)
{
	named(arg, "client");
	for (uint64_t id = 1; id <= (uint64_t)nreq; id++) {
		uint64_t reply;

		full_write(req_pipe[1], &id, sizeof(id));
		if (full_read(rep_pipe[0], &reply, sizeof(reply)) || reply != id) {
			fprintf(stderr, "pipeline: bad reply\n");
			exit(1);
		}
	}
	close(req_pipe[1]); /* the acceptor sees EOF */
	return NULL;
}

static void *acceptor(void *arg)
{
	uint64_t id;

	named(arg, "acceptor");
	while (!full_read(req_pipe[0], &id, sizeof(id))) {
		pthread_mutex_lock(&mu);
		queue[(qhead + qlen++) % QCAP] = id;
		pthread_cond_signal(&nonempty);
		pthread_mutex_unlock(&mu);
	}
	pthread_mutex_lock(&mu);
	closing = 1;
	pthread_cond_broadcast(&nonempty);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void *worker(void *arg)
{
	struct who *w = arg;
	char name[32];

	snprintf(name, sizeof(name), "worker-%d", (int)(w - who) - 1);
	named(w, name);
	for (;;) {
		struct timespec backend = { 0, 1000000 };
		uint64_t id;

		pthread_mutex_lock(&mu);
		while (!qlen && !closing)
			pthread_cond_wait(&nonempty, &mu);
		if (!qlen) {
			pthread_mutex_unlock(&mu);
			return NULL;
		}
		id = queue[qhead];
		qhead = (qhead + 1) % QCAP;
		qlen--;
		pthread_mutex_unlock(&mu);

		nanosleep(&backend, NULL);
		full_write(rep_pipe[1], &id, sizeof(id));
	}
}

int main(int argc, char **argv)
{
	pthread_t t[MAX_WORKERS + 2];
	FILE *out;

	if (argc < 2) {
		fprintf(stderr, "usage: pipeline OUT [REQUESTS [WORKERS]]\n");
		return 2;
	}
	if (argc > 2)
		nreq = atol(argv[2]);
	if (argc > 3)
		nworkers = atoi(argv[3]);
	if (nreq < 1 || nworkers < 1 || nworkers > MAX_WORKERS) {
		fprintf(stderr, "pipeline: bad arguments\n");
		return 2;
	}
	if (pipe(req_pipe) || pipe(rep_pipe)) {
		perror("pipeline: pipe");
		return 1;
	}
	for (int i = 0; i < nworkers; i++)
		pthread_create(&t[2 + i], NULL, worker, &who[2 + i]);
	pthread_create(&t[1], NULL, acceptor, &who[1]);
	pthread_create(&t[0], NULL, client, &who[0]);
	for (int i = 0; i < nworkers + 2; i++)
		pthread_join(t[i], NULL);

	if (!strcmp(argv[1], "-"))
		return 0;
	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	fprintf(out, "pid %d\n", (int)getpid());
	for (int i = 0; i < nworkers + 2; i++)
		fprintf(out, "thread %s %d\n", who[i].name, who[i].tid);
	return fclose(out) ? 1 : 0;
}
