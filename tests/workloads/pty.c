// SPDX-License-Identifier: MIT
/*
 * pty: the writer (main thread) writes one byte to a pty master N times;
 * each write queues the slave port's flush_to_ldisc work item, a kworker
 * runs it, and it wakes the reader thread blocked in read() on the slave.
 *
 *   pty OUT N
 *
 * Before every write the writer waits until the reader is asleep
 * (/proc/self/task/TID/stat state S), and the reader acknowledges every
 * byte through a pipe before the next write: so every write finds the
 * work item idle (one queueing per write) and the reader in read(), its
 * only sleep while the writer waits (one wakeup per write, by the work
 * item). The slave is raw (no echo, no line discipline processing), so
 * nothing is ever written back to the master.
 *
 * Ground truth goes to OUT, written after the work is done:
 *   pid PID
 *   writer TID
 *   reader TID
 *   writes N
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "asleep.h"
#include "ptyraw.h"

static int slave, ack[2];
static long writes;
static _Atomic pid_t reader_tid;

static void die(const char *what)
{
	fprintf(stderr, "pty: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *reader(void *arg)
{
	(void)arg;
	reader_tid = gettid_();
	for (long i = 0; i < writes; i++) {
		char c;
		ssize_t n;

		while ((n = read(slave, &c, 1)) < 0 && errno == EINTR)
			;
		if (n != 1)
			die("read slave");
		if (write(ack[1], &c, 1) != 1)
			die("write ack");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *step;
	pthread_t rt;
	FILE *out;
	int master;

	if (argc != 3 || (writes = atol(argv[2])) < 1) {
		fprintf(stderr, "usage: pty OUT N\n");
		return 2;
	}
	if ((step = open_raw_pty(&master, &slave)))
		die(step);
	if (pipe(ack))
		die("pipe");
	if (pthread_create(&rt, NULL, reader, NULL))
		return 1;
	while (!reader_tid)
		sched_yield();

	for (long i = 0; i < writes; i++) {
		char c = (char)('a' + i % 26), r;

		wait_sleeping(reader_tid);
		if (write(master, &c, 1) != 1)
			die("write master");
		if (read(ack[0], &r, 1) != 1)
			die("read ack");
		if (r != c) {
			fprintf(stderr, "pty: wrote %c, the reader read %c\n", c, r);
			return 1;
		}
	}
	pthread_join(rt, NULL);

	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	fprintf(out, "pid %d\nwriter %d\nreader %d\nwrites %ld\n", (int)getpid(), (int)gettid_(),
		(int)reader_tid, writes);
	return fclose(out) ? 1 : 0;
}
