// SPDX-License-Identifier: MIT
/*
 * pingpong: PAIRS pairs of threads bounce one byte over two pipes ROUNDS
 * times (every round trip is two task-context wakeups, one each way), and
 * an optional sleeper thread sleeps 1 ms SLEEPS times (every wakeup is a
 * timer expiry in interrupt context, never caused by a thread).
 *
 *   pingpong OUT ROUNDS [SLEEPS [PAIRS]]
 *
 * Ground truth goes to OUT ("-": nowhere), written after the work is done:
 *   pid PID
 *   pingpong TID_A TID_B ROUNDS     one line per pair
 *   sleeper TID SLEEPS              when SLEEPS > 0
 *   elapsed_ns NS                   wall time of the threads' work (bench)
 *
 * The ping-pong threads run SCHED_BATCH, which never preempts on wakeup:
 * the writer goes on to block in its read before the woken reader runs,
 * so on one CPU (taskset) every round trip needs exactly two wakeups.
 * Without it the wakee preempts the writer, answers before the writer
 * waits, and about half the answers need no wakeup at all.
 *
 * The sleeper never synchronizes with anyone, so nothing but its timer
 * (and its creation) can wake it.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define MAX_PAIRS 64

struct pair {
	int ab[2], ba[2]; /* A writes ab, B writes ba */
	long rounds;
	pid_t tid_a, tid_b;
	pthread_t a, b;
};

static long sleeps;
static pid_t sleeper_tid;

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void xread(int fd)
{
	char c;

	while (read(fd, &c, 1) != 1)
		if (errno != EINTR) {
			perror("pingpong: read");
			exit(1);
		}
}

static void xwrite(int fd)
{
	while (write(fd, "x", 1) != 1)
		if (errno != EINTR) {
			perror("pingpong: write");
			exit(1);
		}
}

static void batch(void)
{
	struct sched_param sp = { 0 };

	pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
}

static void *side_a(void *arg)
{
	struct pair *p = arg;

	batch();
	p->tid_a = gettid_();
	for (long i = 0; i < p->rounds; i++) {
		xwrite(p->ab[1]);
		xread(p->ba[0]);
	}
	return NULL;
}

static void *side_b(void *arg)
{
	struct pair *p = arg;

	batch();
	p->tid_b = gettid_();
	for (long i = 0; i < p->rounds; i++) {
		xread(p->ab[0]);
		xwrite(p->ba[1]);
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	struct timespec ts = { 0, 1000000 };

	(void)arg;
	sleeper_tid = gettid_();
	for (long i = 0; i < sleeps; i++)
		while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL) == EINTR)
			;
	return NULL;
}

int main(int argc, char **argv)
{
	static struct pair pairs[MAX_PAIRS];
	long rounds, npairs = 1;
	pthread_t st;
	struct timespec t0, t1;
	FILE *out = NULL;

	if (argc < 3) {
		fprintf(stderr, "usage: pingpong OUT ROUNDS [SLEEPS [PAIRS]]\n");
		return 2;
	}
	rounds = atol(argv[2]);
	if (argc > 3)
		sleeps = atol(argv[3]);
	if (argc > 4)
		npairs = atol(argv[4]);
	if (rounds < 0 || sleeps < 0 || npairs < 1 || npairs > MAX_PAIRS) {
		fprintf(stderr, "pingpong: bad arguments\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (sleeps && pthread_create(&st, NULL, sleeper, NULL))
		return 1;
	for (long i = 0; i < npairs; i++) {
		struct pair *p = &pairs[i];

		p->rounds = rounds;
		if (pipe(p->ab) || pipe(p->ba)) {
			perror("pingpong: pipe");
			return 1;
		}
		if (pthread_create(&p->b, NULL, side_b, p) || pthread_create(&p->a, NULL, side_a, p))
			return 1;
	}
	for (long i = 0; i < npairs; i++) {
		pthread_join(pairs[i].a, NULL);
		pthread_join(pairs[i].b, NULL);
	}
	if (sleeps)
		pthread_join(st, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);

	if (strcmp(argv[1], "-")) {
		out = fopen(argv[1], "w");
		if (!out) {
			perror(argv[1]);
			return 1;
		}
		fprintf(out, "pid %d\n", (int)getpid());
		for (long i = 0; i < npairs; i++)
			fprintf(out, "pingpong %d %d %ld\n", pairs[i].tid_a, pairs[i].tid_b, rounds);
		if (sleeps)
			fprintf(out, "sleeper %d %ld\n", sleeper_tid, sleeps);
		fprintf(out, "elapsed_ns %lld\n",
			(long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
		if (fclose(out))
			return 1;
	}
	return 0;
}
