// SPDX-License-Identifier: MIT
/*
 * ptyflood: keeps kworkers busy in one work item function for samples to
 * land in. The main thread writes CHUNK-byte blocks to a pty master for
 * SECS seconds; each write queues the slave port's flush_to_ldisc work,
 * which a kworker runs, copying the block into the line discipline; a
 * reader thread drains the slave.
 *
 *   ptyflood OUT SECS [CHUNK]
 *
 * Ground truth goes to OUT: "pid PID", "writer TID", "reader TID",
 * "bytes N".
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "asleep.h"
#include "ptyraw.h"

static int slave;
static _Atomic pid_t reader_tid;

static void *reader(void *arg)
{
	char buf[65536];

	(void)arg;
	reader_tid = gettid_();
	for (;;) {
		ssize_t n = read(slave, buf, sizeof(buf));

		if (n <= 0 && errno != EINTR && errno != EAGAIN)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static char block[65536];
	long long bytes = 0;
	struct timespec t0, t;
	size_t chunk = argc > 3 ? (size_t)atol(argv[3]) : 4096;
	const char *step;
	pthread_t rt;
	int master;
	FILE *out;

	if (argc < 3 || argc > 4 || chunk < 1 || chunk > sizeof(block)) {
		fprintf(stderr, "usage: ptyflood OUT SECS [CHUNK]\n");
		return 2;
	}
	if ((step = open_raw_pty(&master, &slave))) {
		fprintf(stderr, "ptyflood: %s: %s\n", step, strerror(errno));
		return 1;
	}
	memset(block, 'x', sizeof(block));
	if (pthread_create(&rt, NULL, reader, NULL))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		ssize_t n = write(master, block, chunk);

		if (n < 0 && errno != EINTR) {
			perror("ptyflood: write master");
			return 1;
		}
		bytes += n > 0 ? n : 0;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < atof(argv[2]));
	/* The reader may be blocked in read: closing the master hangs the
	 * slave up, and its read returns 0 or EIO. */
	close(master);
	pthread_join(rt, NULL);
	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	fprintf(out, "pid %d\nwriter %d\nreader %d\nbytes %lld\n", (int)getpid(), (int)gettid_(),
		(int)reader_tid, bytes);
	return fclose(out) ? 1 : 0;
}
