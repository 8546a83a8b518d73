// SPDX-License-Identifier: MIT
/*
 * rewrite: the segment writer's CPU per record on a real trace's records.
 *
 *   bench/rewrite TRACE [REPS]
 *
 * Reads every record of TRACE's event segments into memory, then writes
 * them all through trace/writer.c to a temporary file REPS times (default
 * 5): the capture's drain without the ring. Prints the best run's CPU time
 * (this process's, which other load on the machine disturbs less than
 * wall time) per record, and the bytes written. Compare two writers by
 * building this at each and alternating runs on the same trace.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "schema/events.h"
#include "trace/format.h"
#include "trace/reader.h"
#include "trace/writer.h"

static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int fail(const char *what)
{
	fprintf(stderr, "rewrite: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	char out[] = "/tmp/cw-rewrite-XXXXXX";
	struct cw_reader *r;
	struct cw_segment seg;
	uint8_t *all = NULL;
	size_t len = 0, cap = 0;
	uint64_t n = 0, bytes = 0;
	double best = -1;
	int reps = argc > 2 ? atoi(argv[2]) : 5, fd;

	if (argc < 2 || reps < 1) {
		fprintf(stderr, "usage: rewrite TRACE [REPS]\n");
		return 2;
	}
	r = cw_reader__open(argv[1], NULL);
	if (!r)
		return fail(argv[1]);
	while (cw_reader__next(r, &seg) > 0) {
		const struct cw_hdr *h;
		size_t pos = 0;

		if (seg.seg_type != CW_SEG_EVENTS)
			continue;
		while ((h = cw_segment__next_record(&seg, &pos))) {
			if (len + h->size > cap) {
				uint8_t *p;

				cap = cap ? 2 * cap : 1u << 20;
				p = realloc(all, cap);
				if (!p)
					return fail("out of memory");
				all = p;
			}
			memcpy(all + len, h, h->size);
			len += h->size;
			n++;
		}
	}
	cw_reader__free(r);
	if (!n) {
		fprintf(stderr, "rewrite: %s has no event record\n", argv[1]);
		return 1;
	}
	fd = mkstemp(out);
	if (fd < 0)
		return fail(out);
	unlink(out);
	for (int k = 0; k < reps; k++) {
		struct cw_writer *w;
		struct cw_writer_stats st;
		double t0;

		if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET))
			return fail(out);
		w = cw_writer__new(fd, NULL);
		if (!w)
			return fail("cw_writer__new");
		t0 = cpu_s();
		if (cw_writer__seal(w, CW_SEG_META))
			return fail("seal");
		for (size_t p = 0; p < len;) {
			const struct cw_hdr *h = (const void *)(all + p);

			if (cw_writer__append(w, h, h->size))
				return fail("append");
			p += h->size;
		}
		if (cw_writer__seal(w, CW_SEG_FINAL))
			return fail("seal");
		t0 = cpu_s() - t0;
		cw_writer__stats(w, &st);
		bytes = st.file_bytes;
		cw_writer__free(w);
		if (best < 0 || t0 < best)
			best = t0;
	}
	close(fd);
	free(all);
	printf("%llu records, %.1f MB of records, %.1f MB written: "
	       "best of %d %.3f s CPU, %.1f ns a record\n",
	       (unsigned long long)n, (double)len / 1e6, (double)bytes / 1e6, reps, best,
	       best * 1e9 / (double)n);
	return 0;
}
