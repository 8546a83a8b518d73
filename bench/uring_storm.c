// SPDX-License-Identifier: MIT
/*
 * uring_storm: one thread submits NOPS io_uring NOPs in batches of BATCH
 * and reaps their completions, for bench/capture: a NOP completes inline
 * during io_uring_enter(), so every NOP is one io_uring_submit_req and one
 * io_uring_complete event and almost nothing else, the io_uring class's
 * highest event rate from one thread.
 *
 *   uring_storm OUT NOPS [BATCH]
 *
 * OUT ("-": nowhere) gets, after the work is done:
 *   pid PID
 *   nops NOPS
 *   elapsed_ns NS        wall time of the submit/reap loop
 *
 * user_data cycles through the batch slots, as a real program reuses its
 * request tags.
 */
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static long number(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || !*s || v < min || v > max) {
		fprintf(stderr, "uring_storm: '%s' is not a number from %ld to %ld\n", s, min, max);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_cqe *cqes[4096];
	unsigned long long t0, t1;
	long nops, batch, done = 0;
	int err;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: uring_storm OUT NOPS [BATCH]\n");
		return 2;
	}
	nops = number(argv[2], 1, 1L << 40);
	batch = argc > 3 ? number(argv[3], 1, 4096) : 32;
	err = io_uring_queue_init((unsigned)batch, &ring, 0);
	if (err) {
		fprintf(stderr, "uring_storm: io_uring_queue_init: %s\n", strerror(-err));
		return 1;
	}
	t0 = now_ns();
	while (done < nops) {
		long n = nops - done < batch ? nops - done : batch;
		unsigned got;

		for (long i = 0; i < n; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			io_uring_prep_nop(sqe);
			io_uring_sqe_set_data64(sqe, (unsigned long long)i);
		}
		err = io_uring_submit_and_wait(&ring, (unsigned)n);
		if (err < 0) {
			fprintf(stderr, "uring_storm: io_uring_submit_and_wait: %s\n", strerror(-err));
			return 1;
		}
		for (long left = n; left > 0; left -= got) {
			got = io_uring_peek_batch_cqe(&ring, cqes, (unsigned)left);
			if (!got) {
				fprintf(stderr, "uring_storm: %ld completions missing\n", left);
				return 1;
			}
			for (unsigned i = 0; i < got; i++)
				if (cqes[i]->res < 0) {
					fprintf(stderr, "uring_storm: NOP failed: %s\n",
						strerror(-cqes[i]->res));
					return 1;
				}
			io_uring_cq_advance(&ring, got);
		}
		done += n;
	}
	t1 = now_ns();
	io_uring_queue_exit(&ring);
	if (strcmp(argv[1], "-")) {
		FILE *f = fopen(argv[1], "w");

		if (!f) {
			perror("uring_storm");
			return 1;
		}
		fprintf(f, "pid %d\nnops %ld\nelapsed_ns %llu\n", (int)getpid(), nops, t1 - t0);
		if (fclose(f)) {
			perror("uring_storm");
			return 1;
		}
	}
	return 0;
}
