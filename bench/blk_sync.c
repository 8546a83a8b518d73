// SPDX-License-Identifier: MIT
/*
 * blk_sync: one thread overwrites one 4 KiB block of a file with O_DIRECT,
 * then fdatasync()s it (a cache flush), WRITES times, for bench/capture's
 * block section: every write is a WRITE request and a FLUSH request, each
 * inserted, issued and completed, the flush through the block layer's
 * requeue work, and the thread waits for both.
 *
 *   blk_sync OUT WRITES DIR
 *
 * DIR must be on a block device (bench/capture gives one under /var/tmp).
 * The file (256 blocks, written and synced first, so that no write needs
 * an extent conversion) is removed at the end. OUT ("-": nowhere) gets:
 *   pid PID
 *   writes WRITES
 *   elapsed_ns NS        wall time of the write/sync loop
 */
#define BLK 4096
#define NBLK 256

#include <errno.h>
#include <fcntl.h>
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

static int fail(const char *what)
{
	fprintf(stderr, "blk_sync: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	unsigned long long t0, t1;
	char path[4096];
	long writes;
	void *buf;
	FILE *f;
	int fd;

	if (argc != 4 || (writes = strtol(argv[2], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: blk_sync OUT WRITES DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/blk_sync.%d", argv[3], (int)getpid());
	if (posix_memalign(&buf, BLK, BLK))
		return fail("posix_memalign");
	memset(buf, 0x5a, BLK);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0)
		return fail(path);
	for (int i = 0; i < NBLK; i++)
		if (write(fd, buf, BLK) != BLK)
			return fail("write");
	if (fsync(fd) || close(fd) || (fd = open(path, O_WRONLY | O_DIRECT)) < 0)
		return fail("fsync");
	t0 = now_ns();
	for (long i = 0; i < writes; i++) {
		if (pwrite(fd, buf, BLK, (off_t)(i * 97 % NBLK) * BLK) != BLK)
			return fail("pwrite");
		if (fdatasync(fd))
			return fail("fdatasync");
	}
	t1 = now_ns();
	close(fd);
	unlink(path);
	if (strcmp(argv[1], "-")) {
		if (!(f = fopen(argv[1], "w")))
			return fail(argv[1]);
		fprintf(f, "pid %d\nwrites %ld\nelapsed_ns %llu\n", (int)getpid(), writes, t1 - t0);
		if (fclose(f))
			return fail(argv[1]);
	}
	return 0;
}
