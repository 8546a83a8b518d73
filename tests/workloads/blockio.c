// SPDX-License-Identifier: MIT
/*
 * blockio: waits on a real disk, each of which only a block request ends.
 *
 *   blockio DIR OUT N
 *
 * In DIR (a directory on a block device, never tmpfs: the caller checks),
 * a file of N 4 KiB blocks is written and synced first, so that the writes
 * below overwrite allocated blocks (no extent conversion, whose work item
 * would end the write's wait instead of the request). Then:
 *  1. thread "bio-sync": N times, an O_DIRECT pwrite of one block, then
 *     fdatasync (a cache flush: the block layer issues it from its requeue
 *     work, which the thread queues);
 *  2. thread "bio-ring": one io_uring ring, N times a WRITE of one block
 *     (O_DIRECT) linked to an FSYNC (IORING_FSYNC_DATASYNC) forced to an
 *     io-wq worker with IOSQE_ASYNC, both reaped before the next pair.
 * The threads run one after the other. Ground truth goes to OUT, written
 * after the work is done; the workload exits 1 when a call fails:
 *   pid PID
 *   sync TID N        the first thread and its writes (each with a sync)
 *   ring TID N        the second and its WRITE + FSYNC pairs
 *   sqe USER_DATA OP  one per submission (OP WRITE or FSYNC)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <liburing.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#define BLK 4096

static const char *dir;
static long n;
static int fd;
static void *buf;
static pid_t sync_tid, ring_tid;

static void die(const char *what, int err)
{
	fprintf(stderr, "blockio: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

/* Block @i, in an order that is not sequential, so that no two writes
 * merge. */
static off_t block_at(long i)
{
	return (off_t)((i * 7919) % n) * BLK;
}

static void *sync_thread(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "bio-sync");
	sync_tid = (pid_t)syscall(SYS_gettid);
	for (long i = 0; i < n; i++) {
		if (pwrite(fd, buf, BLK, block_at(i)) != BLK)
			die("pwrite", errno);
		if (fdatasync(fd))
			die("fdatasync", errno);
	}
	return NULL;
}

static void *ring_thread(void *arg)
{
	struct io_uring r;
	int ret;

	(void)arg;
	prctl(PR_SET_NAME, "bio-ring");
	ring_tid = (pid_t)syscall(SYS_gettid);
	if ((ret = io_uring_queue_init(8, &r, 0)))
		die("io_uring_queue_init", ret);
	for (long i = 0; i < n; i++) {
		struct io_uring_sqe *w = io_uring_get_sqe(&r), *f;
		struct io_uring_cqe *cqe;

		io_uring_prep_write(w, fd, buf, BLK, block_at(i));
		io_uring_sqe_set_data64(w, 2 * i + 1);
		io_uring_sqe_set_flags(w, IOSQE_IO_LINK);
		f = io_uring_get_sqe(&r);
		io_uring_prep_fsync(f, fd, IORING_FSYNC_DATASYNC);
		io_uring_sqe_set_data64(f, 2 * i + 2);
		io_uring_sqe_set_flags(f, IOSQE_ASYNC);
		if ((ret = io_uring_submit(&r)) != 2)
			die("io_uring_submit", ret < 0 ? ret : EIO);
		for (int k = 0; k < 2; k++) {
			if ((ret = io_uring_wait_cqe(&r, &cqe)))
				die("io_uring_wait_cqe", ret);
			if (cqe->res < 0)
				die(cqe->user_data & 1 ? "WRITE" : "FSYNC", cqe->res);
			io_uring_cqe_seen(&r, cqe);
		}
	}
	io_uring_queue_exit(&r);
	return NULL;
}

static void run(void *(*fn)(void *))
{
	pthread_t t;
	int err;

	if ((err = pthread_create(&t, NULL, fn, NULL)) || (err = pthread_join(t, NULL)))
		die("pthread", err);
}

int main(int argc, char **argv)
{
	char path[4096];
	FILE *out;
	int wfd;

	if (argc != 4 || (n = strtol(argv[3], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: blockio DIR OUT N\n");
		return 2;
	}
	dir = argv[1];
	snprintf(path, sizeof(path), "%s/blockio.dat", dir);
	if (posix_memalign(&buf, BLK, BLK))
		die("posix_memalign", ENOMEM);
	memset(buf, 0xab, BLK);
	/* Allocated and on the disk before the direct writes. */
	if ((wfd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0)
		die(path, errno);
	for (long i = 0; i < n; i++)
		if (write(wfd, buf, BLK) != BLK)
			die("write", errno);
	if (fsync(wfd) || close(wfd))
		die("fsync", errno);
	if ((fd = open(path, O_WRONLY | O_DIRECT)) < 0)
		die(path, errno);
	run(sync_thread);
	run(ring_thread);
	close(fd);
	unlink(path);
	if (!(out = fopen(argv[2], "w")))
		die(argv[2], errno);
	fprintf(out, "pid %d\nsync %d %ld\nring %d %ld\n", (int)getpid(), (int)sync_tid, n,
		(int)ring_tid, n);
	for (long i = 0; i < n; i++)
		fprintf(out, "sqe %ld WRITE\nsqe %ld FSYNC\n", 2 * i + 1, 2 * i + 2);
	return fclose(out) ? 1 : 0;
}
