// SPDX-License-Identifier: MIT
/*
 * uring: one thread drives two io_uring rings with the same script, so
 * that the same user_data values are live on both rings at once, and
 * writes down every submission. The script, on each ring:
 *
 *  - a marker NOP whose user_data is unique to the ring (0x6d61726b00 +
 *    ring index), by which a test finds the ring's scope in the database;
 *  - a batch of four NOPs that all carry user_data 1 (reuse within one
 *    submission);
 *  - a batch of four READs of a memfd with IOSQE_ASYNC (punted to io-wq
 *    workers of this process), user_data 2, 3, 2, 1: two live requests
 *    with the same user_data on one ring, and on the other ring too, since
 *    both rings' batches are submitted before either is reaped;
 *  - a multishot POLL_ADD (IORING_POLL_ADD_MULTI) on an eventfd, user_data
 *    5, written MULTI times (one CQE with IORING_CQE_F_MORE each, reaped
 *    before the next write), then a POLL_REMOVE, user_data 6, which ends
 *    it (one last CQE without F_MORE);
 *  - a linked chain (IOSQE_IO_LINK) NOP 7 -> NOP 8 -> NOP 7, and a linked
 *    chain READ 9 (IOSQE_ASYNC) -> NOP 8 -> NOP 9.
 *
 *   uring OUT [MULTI]
 *
 * Ground truth goes to OUT, written after the work is done; every count is
 * what the workload itself reaped (it exits 1 when a CQE is missing, extra
 * or failed):
 *   pid PID
 *   submitter TID                the thread that submits and reaps
 *   ring IDX FD MARKER           one per ring, in creation order
 *   sqe IDX USER_DATA OPCODE ASYNC LINK   one per submission, in order;
 *                                OPCODE as the kernel names it (NOP, READ,
 *                                ...); ASYNC 1 for IOSQE_ASYNC; LINK 1 for
 *                                IOSQE_IO_LINK (the next one is linked to it)
 *   multishot IDX USER_DATA CQES CQES reaped for the multishot request
 *                                (the last one without F_MORE)
 *
 *   uring --defer OUT N
 *
 * One ring set up IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN
 * (as fio sets it up), and N READs of a memfd with IOSQE_ASYNC, each
 * reaped before the next. Such a ring posts an io-wq worker's completion
 * from the submitter's own task work, so the trace can name the worker
 * only by the io-wq start. Ground truth: "pid PID", "submitter TID",
 * "defer N", then "dsqe USER_DATA" per READ (user_data 1..N).
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <liburing.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define NRINGS 2
#define MARKER 0x6d61726b00ULL
#define UD_MULTI 5
#define UD_REMOVE 6
#define MAX_SQES 256
#define BUFSZ 512

struct sqe_truth {
	int ring;
	uint64_t ud;
	const char *op;
	int async, link;
};

static struct sqe_truth truth[MAX_SQES];
static int ntruth;
static long multi = 5;

struct ring {
	struct io_uring r;
	int efd;
	long multi_cqes;
	/* single-shot CQEs still expected, by user_data (< 16) */
	int pending[16];
	char buf[8][BUFSZ];
	int nbuf;
};

static struct ring rings[NRINGS];
static int data_fd;

static void die(const char *what, int err)
{
	fprintf(stderr, "uring: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static struct io_uring_sqe *get_sqe(int i, uint64_t ud, const char *op, int flags)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&rings[i].r);

	if (!sqe || ntruth == MAX_SQES)
		die("no sqe", ENOSPC);
	truth[ntruth++] = (struct sqe_truth){ i, ud, op, !!(flags & IOSQE_ASYNC),
					      !!(flags & IOSQE_IO_LINK) };
	return sqe;
}

static void nop(int i, uint64_t ud, int flags)
{
	struct io_uring_sqe *sqe = get_sqe(i, ud, "NOP", flags);

	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, ud);
	io_uring_sqe_set_flags(sqe, flags);
	if (ud < 16)
		rings[i].pending[ud]++;
}

static void read_(int i, uint64_t ud, int flags)
{
	struct ring *r = &rings[i];
	struct io_uring_sqe *sqe = get_sqe(i, ud, "READ", flags);

	io_uring_prep_read(sqe, data_fd, r->buf[r->nbuf++ % 8], BUFSZ, 0);
	io_uring_sqe_set_data64(sqe, ud);
	io_uring_sqe_set_flags(sqe, flags);
	r->pending[ud]++;
}

static void submit(int i, int n)
{
	int ret = io_uring_submit(&rings[i].r);

	if (ret != n)
		die("io_uring_submit", ret < 0 ? ret : EIO);
}

/* One CQE of ring @i, checked against what is pending. */
static void reap_one(int i)
{
	struct ring *r = &rings[i];
	struct io_uring_cqe *cqe;
	uint64_t ud;
	int ret = io_uring_wait_cqe(&r->r, &cqe);

	if (ret)
		die("io_uring_wait_cqe", ret);
	ud = io_uring_cqe_get_data64(cqe);
	if (ud == UD_MULTI) {
		r->multi_cqes++;
		if (cqe->res < 0 && cqe->res != -ECANCELED)
			die("multishot poll", cqe->res);
	} else if (ud == MARKER + (uint64_t)i) {
		if (cqe->res < 0)
			die("marker", cqe->res);
	} else if (ud < 16 && r->pending[ud] > 0) {
		r->pending[ud]--;
		if (cqe->res < 0)
			die("request", cqe->res);
	} else {
		fprintf(stderr, "uring: unexpected CQE user_data %llu on ring %d\n",
			(unsigned long long)ud, i);
		exit(1);
	}
	io_uring_cqe_seen(&r->r, cqe);
}

/* Reap ring @i until nothing single-shot is pending. */
static void reap_all(int i)
{
	for (;;) {
		int left = 0;

		for (int k = 0; k < 16; k++)
			left += rings[i].pending[k];
		if (!left)
			return;
		reap_one(i);
	}
}

static int defer_mode(const char *path, long n)
{
	struct io_uring r;
	char buf[BUFSZ];
	FILE *out;
	int ret;

	ret = io_uring_queue_init(8, &r, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
	if (ret)
		die("io_uring_queue_init (DEFER_TASKRUN)", ret);
	for (long i = 1; i <= n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&r);
		struct io_uring_cqe *cqe;

		io_uring_prep_read(sqe, data_fd, buf, BUFSZ, 0);
		io_uring_sqe_set_data64(sqe, (uint64_t)i);
		io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
		if ((ret = io_uring_submit(&r)) != 1)
			die("io_uring_submit", ret < 0 ? ret : EIO);
		if ((ret = io_uring_wait_cqe(&r, &cqe)))
			die("io_uring_wait_cqe", ret);
		if (cqe->res != BUFSZ || cqe->user_data != (uint64_t)i)
			die("READ", cqe->res < 0 ? cqe->res : EIO);
		io_uring_cqe_seen(&r, cqe);
	}
	io_uring_queue_exit(&r);
	if (!(out = fopen(path, "w")))
		die(path, errno);
	fprintf(out, "pid %d\nsubmitter %d\ndefer %ld\n", (int)getpid(),
		(int)syscall(SYS_gettid), n);
	for (long i = 1; i <= n; i++)
		fprintf(out, "dsqe %ld\n", i);
	return fclose(out) ? 1 : 0;
}

int main(int argc, char **argv)
{
	static char data[BUFSZ];
	FILE *out;
	pid_t tid = (pid_t)syscall(SYS_gettid);

	if (argc < 2) {
		fprintf(stderr, "usage: uring OUT [MULTI] | uring --defer OUT N\n");
		return 2;
	}
	data_fd = memfd_create("uring-data", 0);
	memset(data, 'u', sizeof(data));
	if (data_fd < 0 || write(data_fd, data, sizeof(data)) != sizeof(data))
		die("memfd", errno);
	if (!strcmp(argv[1], "--defer")) {
		long n = argc == 4 ? atol(argv[3]) : 0;

		if (n < 1 || n > 1000) {
			fprintf(stderr, "uring: --defer OUT N, N 1..1000\n");
			return 2;
		}
		return defer_mode(argv[2], n);
	}
	if (argc > 2)
		multi = atol(argv[2]);
	if (multi < 1 || multi > 64) {
		fprintf(stderr, "uring: MULTI must be 1..64\n");
		return 2;
	}

	for (int i = 0; i < NRINGS; i++) {
		int ret = io_uring_queue_init(64, &rings[i].r, 0);

		if (ret)
			die("io_uring_queue_init", ret);
		rings[i].efd = eventfd(0, EFD_CLOEXEC);
		if (rings[i].efd < 0)
			die("eventfd", errno);
	}

	/* The markers, ring by ring. */
	for (int i = 0; i < NRINGS; i++) {
		nop(i, MARKER + (uint64_t)i, 0);
		submit(i, 1);
		reap_one(i);
	}

	/* One user_data four times in one submission. */
	for (int i = 0; i < NRINGS; i++) {
		for (int k = 0; k < 4; k++)
			nop(i, 1, 0);
		submit(i, 4);
	}
	for (int i = 0; i < NRINGS; i++)
		reap_all(i);

	/* Punted reads, in flight on both rings at once. */
	for (int i = 0; i < NRINGS; i++) {
		read_(i, 2, IOSQE_ASYNC);
		read_(i, 3, IOSQE_ASYNC);
		read_(i, 2, IOSQE_ASYNC);
		read_(i, 1, IOSQE_ASYNC);
		submit(i, 4);
	}
	for (int i = 0; i < NRINGS; i++)
		reap_all(i);

	/* Multishot poll: armed on both rings, then each eventfd written in
	 * turn, one CQE reaped per write before the next. */
	for (int i = 0; i < NRINGS; i++) {
		struct io_uring_sqe *sqe = get_sqe(i, UD_MULTI, "POLL_ADD", 0);

		io_uring_prep_poll_multishot(sqe, rings[i].efd, POLLIN);
		io_uring_sqe_set_data64(sqe, UD_MULTI);
		submit(i, 1);
	}
	for (long n = 0; n < multi; n++)
		for (int i = 0; i < NRINGS; i++) {
			uint64_t v = 1;
			long before = rings[i].multi_cqes;

			if (write(rings[i].efd, &v, sizeof(v)) != sizeof(v))
				die("eventfd write", errno);
			while (rings[i].multi_cqes == before)
				reap_one(i);
			if (read(rings[i].efd, &v, sizeof(v)) != sizeof(v))
				die("eventfd read", errno);
		}
	for (int i = 0; i < NRINGS; i++) {
		struct io_uring_sqe *sqe = get_sqe(i, UD_REMOVE, "POLL_REMOVE", 0);

		io_uring_prep_poll_remove(sqe, UD_MULTI);
		io_uring_sqe_set_data64(sqe, UD_REMOVE);
		rings[i].pending[UD_REMOVE]++;
		submit(i, 1);
	}
	for (int i = 0; i < NRINGS; i++) {
		reap_all(i);
		while (rings[i].multi_cqes < multi + 1)
			reap_one(i);
	}

	/* Linked chains, the second starting with a punted read. */
	for (int i = 0; i < NRINGS; i++) {
		nop(i, 7, IOSQE_IO_LINK);
		nop(i, 8, IOSQE_IO_LINK);
		nop(i, 7, 0);
		read_(i, 9, IOSQE_ASYNC | IOSQE_IO_LINK);
		nop(i, 8, IOSQE_IO_LINK);
		nop(i, 9, 0);
		submit(i, 6);
	}
	for (int i = 0; i < NRINGS; i++)
		reap_all(i);

	/* Nothing may be left over. */
	for (int i = 0; i < NRINGS; i++) {
		struct io_uring_cqe *cqe;

		if (io_uring_peek_cqe(&rings[i].r, &cqe) == 0) {
			fprintf(stderr, "uring: extra CQE user_data %llu on ring %d\n",
				(unsigned long long)io_uring_cqe_get_data64(cqe), i);
			return 1;
		}
		if (rings[i].multi_cqes != multi + 1) {
			fprintf(stderr, "uring: %ld multishot CQEs on ring %d, expected %ld\n",
				rings[i].multi_cqes, i, multi + 1);
			return 1;
		}
	}

	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	fprintf(out, "pid %d\nsubmitter %d\n", (int)getpid(), (int)tid);
	for (int i = 0; i < NRINGS; i++)
		fprintf(out, "ring %d %d %llu\n", i, rings[i].r.ring_fd,
			(unsigned long long)(MARKER + (uint64_t)i));
	for (int k = 0; k < ntruth; k++)
		fprintf(out, "sqe %d %llu %s %d %d\n", truth[k].ring, (unsigned long long)truth[k].ud,
			truth[k].op, truth[k].async, truth[k].link);
	for (int i = 0; i < NRINGS; i++)
		fprintf(out, "multishot %d %d %ld\n", i, UD_MULTI, rings[i].multi_cqes);
	if (fclose(out))
		return 1;
	for (int i = 0; i < NRINGS; i++)
		io_uring_queue_exit(&rings[i].r);
	return 0;
}
