// SPDX-License-Identifier: MIT
/*
 * pipeline: a tiny request pipeline with real cross-thread handoffs, the
 * shape of a server. For each request:
 *
 *   client --pipe--> acceptor --queue+condvar (futex)--> worker
 *     --1 ms nanosleep (a timer: the "backend call")--> worker
 *     --io_uring read of a file, punted to an io-wq worker (IOSQE_ASYNC,
 *       user_data = the request id)--> worker
 *     --reply written to a pty master: the kernel queues flush_to_ldisc,
 *       a kworker runs it--> client, reading the pty slave
 *
 * so one request crosses threads, a futex, a timer, an io_uring request,
 * a work item and a kworker. The client alone names each request, through
 * include/causeway.h (request_begin before it writes the request,
 * request_end when the reply is in: "req-N /item/K"); what the other
 * threads do for it reaches the request over those handoffs
 * (docs/model.md §6.1).
 *
 *   pipeline OUT [REQUESTS [WORKERS]]
 *
 * Ground truth in OUT ("-": nowhere): "pid PID" and "thread NAME TID".
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include "../../include/causeway.h"

#define MAX_WORKERS 16
#define QCAP 64

static int req_pipe[2], pty_master, pty_slave, data_fd;
static pthread_mutex_t reply_mu = PTHREAD_MUTEX_INITIALIZER;
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
		char name[32];

		snprintf(name, sizeof(name), "req-%llu /item/%llu", (unsigned long long)id,
			 (unsigned long long)(id % 8));
		causeway_request_begin(id, name);
		full_write(req_pipe[1], &id, sizeof(id));
		if (full_read(pty_slave, &reply, sizeof(reply)) || reply != id) {
			fprintf(stderr, "pipeline: bad reply\n");
			exit(1);
		}
		causeway_request_end(id, 0);
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

	struct io_uring ring;

	snprintf(name, sizeof(name), "worker-%d", (int)(w - who) - 1);
	named(w, name);
	if (io_uring_queue_init(8, &ring, 0)) {
		fprintf(stderr, "pipeline: io_uring_queue_init failed\n");
		exit(1);
	}
	for (;;) {
		struct io_uring_sqe *sqe;
		struct io_uring_cqe *cqe;
		char data[64];
		struct timespec backend = { 0, 1000000 };
		uint64_t id;

		pthread_mutex_lock(&mu);
		while (!qlen && !closing)
			pthread_cond_wait(&nonempty, &mu);
		if (!qlen) {
			pthread_mutex_unlock(&mu);
			io_uring_queue_exit(&ring);
			return NULL;
		}
		id = queue[qhead];
		qhead = (qhead + 1) % QCAP;
		qlen--;
		pthread_mutex_unlock(&mu);

		nanosleep(&backend, NULL);

		/* The "storage read": punted to an io-wq worker, which
		 * completes it and wakes this thread. */
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_read(sqe, data_fd, data, sizeof(data), 0);
		sqe->flags |= IOSQE_ASYNC;
		io_uring_sqe_set_data64(sqe, id);
		if (io_uring_submit_and_wait(&ring, 1) < 1 || io_uring_wait_cqe(&ring, &cqe) ||
		    cqe->user_data != id || cqe->res < 0) {
			fprintf(stderr, "pipeline: io_uring read failed\n");
			exit(1);
		}
		io_uring_cqe_seen(&ring, cqe);

		/* The reply goes through the tty layer's work item. */
		pthread_mutex_lock(&reply_mu);
		full_write(pty_master, &id, sizeof(id));
		pthread_mutex_unlock(&reply_mu);
	}
}

/* A raw pty: every reply the worker writes reaches the client whole. */
static int open_pty(void)
{
	struct termios tio;

	pty_master = posix_openpt(O_RDWR | O_NOCTTY);
	if (pty_master < 0 || grantpt(pty_master) || unlockpt(pty_master)) {
		perror("pipeline: pty");
		return -1;
	}
	pty_slave = open(ptsname(pty_master), O_RDWR | O_NOCTTY);
	if (pty_slave < 0 || tcgetattr(pty_slave, &tio)) {
		perror("pipeline: pty slave");
		return -1;
	}
	cfmakeraw(&tio);
	return tcsetattr(pty_slave, TCSANOW, &tio) ? perror("pipeline: raw pty"), -1 : 0;
}

/* What the workers read through io_uring: an unlinked temporary file. */
static int open_data(void)
{
	char path[] = "/tmp/causeway-pipeline-XXXXXX";
	static const char text[64] = "backend data";

	data_fd = mkstemp(path);
	if (data_fd < 0 || unlink(path) || write(data_fd, text, sizeof(text)) != sizeof(text)) {
		perror("pipeline: data file");
		return -1;
	}
	return 0;
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
	if (pipe(req_pipe)) {
		perror("pipeline: pipe");
		return 1;
	}
	if (open_pty() || open_data())
		return 1;
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
