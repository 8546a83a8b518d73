// SPDX-License-Identifier: MIT
/*
 * spawn: a small tree of threads and processes with known parents.
 *
 *   spawn OUT [GOFILE [BUSY_MS]]
 *
 * With GOFILE, waits until that file exists before spawning (so a -p
 * capture can attach to an already running process first); BUSY_MS keeps
 * every task alive that long before exiting (default 50).
 *
 * The tree: main creates threads t1 and t2; t1 creates t3; t2 renames
 * itself; main forks child c1; c1 creates a thread and forks grandchild
 * g1. Every process appends its own lines to OUT with single O_APPEND
 * writes:
 *   pid PID                       the process (one per process)
 *   spawn PARENT_TID CHILD_TID    one line per thread or process created
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *out;
static long busy_ms = 50;

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void line(const char *fmt, long a, long b)
{
	char buf[128];
	int n = snprintf(buf, sizeof(buf), fmt, a, b);
	int fd = open(out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, buf, (size_t)n) != n) {
		perror(out);
		exit(1);
	}
	close(fd);
}

static void stay(void)
{
	struct timespec ts = { busy_ms / 1000, (busy_ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

struct th {
	pthread_t t;
	pid_t tid;
	void *(*fn)(void *);
};

/* Start a thread and log parent -> child once its tid is known. */
static void spawn_thread(struct th *th, void *(*fn)(void *))
{
	if (pthread_create(&th->t, NULL, fn, th)) {
		fprintf(stderr, "spawn: pthread_create failed\n");
		exit(1);
	}
}

static void join_thread(struct th *th, pid_t parent)
{
	pthread_join(th->t, NULL);
	line("spawn %ld %ld\n", parent, th->tid);
}

static void *leaf(void *arg)
{
	struct th *self = arg;

	self->tid = gettid_();
	stay();
	return NULL;
}

static void *t1_fn(void *arg)
{
	struct th *self = arg, t3;

	self->tid = gettid_();
	spawn_thread(&t3, leaf);
	join_thread(&t3, self->tid);
	return NULL;
}

static void *t2_fn(void *arg)
{
	struct th *self = arg;

	self->tid = gettid_();
	prctl(PR_SET_NAME, "spawn-renamed");
	stay();
	return NULL;
}

static pid_t fork_child(void (*body)(void))
{
	pid_t parent = gettid_(), pid = fork();

	if (pid < 0) {
		perror("spawn: fork");
		exit(1);
	}
	if (pid == 0) {
		line("pid %ld\n", getpid(), 0);
		body();
		exit(0);
	}
	line("spawn %ld %ld\n", parent, pid);
	return pid;
}

static void grandchild(void)
{
	stay();
}

static void child(void)
{
	struct th t;
	pid_t g;

	spawn_thread(&t, leaf);
	g = fork_child(grandchild);
	join_thread(&t, gettid_());
	waitpid(g, NULL, 0);
}

int main(int argc, char **argv)
{
	struct th t1, t2;
	pid_t c1, me;
	struct stat st;

	if (argc < 2) {
		fprintf(stderr, "usage: spawn OUT [GOFILE [BUSY_MS]]\n");
		return 2;
	}
	out = argv[1];
	if (argc > 3)
		busy_ms = atol(argv[3]);
	me = gettid_();
	line("pid %ld\n", getpid(), 0);
	if (argc > 2) {
		struct timespec ts = { 0, 10000000 };

		while (stat(argv[2], &st))
			nanosleep(&ts, NULL);
	}
	spawn_thread(&t1, t1_fn);
	spawn_thread(&t2, t2_fn);
	c1 = fork_child(child);
	join_thread(&t1, me);
	join_thread(&t2, me);
	waitpid(c1, NULL, 0);
	return 0;
}
