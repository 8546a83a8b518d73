// SPDX-License-Identifier: MIT
/*
 * Unit tests for the segment writer and reader, and the dump's round trip
 * through the record text form. Every damaged file here is made by
 * damaging a file the real writer wrote. Deterministic: one xorshift PRNG,
 * fixed seeds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <lz4.h>

#include "schema/events.h"
#include "trace/format.h"
#include "trace/writer.h"
#include "trace/reader.h"
#include "analyze/dump.h"

static int failed_checks;

#define CHECK(c)                                                                 \
	do {                                                                     \
		if (!(c)) {                                                      \
			fprintf(stderr, "  %s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #c);                                   \
			failed_checks++;                                         \
		}                                                                \
	} while (0)

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* ---- temp files ---- */

static char tmp_path[4096];

static int tmp_open(void)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(tmp_path, sizeof(tmp_path), "%s/test_segio.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(tmp_path);
	if (fd < 0) {
		perror("mkstemp");
		exit(1);
	}
	return fd;
}

static void tmp_done(int fd)
{
	if (fd >= 0)
		close(fd);
	unlink(tmp_path);
}

static uint64_t file_size(int fd)
{
	return (uint64_t)lseek(fd, 0, SEEK_END);
}

static void flip(int fd, uint64_t off)
{
	uint8_t b;

	if (pread(fd, &b, 1, (off_t)off) != 1)
		abort();
	b ^= 0xff;
	if (pwrite(fd, &b, 1, (off_t)off) != 1)
		abort();
}

static void append_bytes(int fd, const void *p, size_t n)
{
	lseek(fd, 0, SEEK_END);
	if (write(fd, p, n) != (ssize_t)n)
		abort();
}

/* ---- diag capture ---- */

struct diags {
	char text[16384];
	size_t len;
	int n, warn, error;
};

static void diag_cb(void *ctx, enum cw_diag_level level, const char *msg)
{
	struct diags *d = ctx;
	int k = snprintf(d->text + d->len, sizeof(d->text) - d->len, "%s\n", msg);

	if (k > 0 && (size_t)k < sizeof(d->text) - d->len)
		d->len += (size_t)k;
	d->n++;
	d->warn += level == CW_DIAG_WARN;
	d->error += level == CW_DIAG_ERROR;
}

static int has(const struct diags *d, const char *s)
{
	if (strstr(d->text, s))
		return 1;
	fprintf(stderr, "  expected message \"%s\" in:\n%s", s, d->text);
	return 0;
}

/* ---- records ---- */

/* A record of @size bytes (multiple of 8) with @ts; body either small
 * compressible numbers or random bytes. */
static size_t make_rec(uint8_t *buf, uint16_t type, uint16_t size, uint64_t ts, int random_body)
{
	memset(buf, 0, size);
	cw_put16(buf, type);
	cw_put16(buf + 2, size);
	cw_put16(buf + 4, (uint16_t)(rnd() % 8));
	cw_put64(buf + 8, ts);
	for (size_t i = 16; i < size; i++)
		buf[i] = random_body ? (uint8_t)rnd() : (uint8_t)(i % 7 == 0 ? rnd() % 4 : 0);
	return size;
}

/* All records read from @path, concatenated; returns segment count or
 * the negative error. */
struct readout {
	uint8_t *data;
	size_t len;
	int segs;
	uint64_t seqs[64];
	uint16_t types[64];
	uint16_t last_type;
	struct cw_reader_stats st;
	struct diags d;
};

static int read_all(const char *path, struct readout *ro)
{
	struct cw_reader_opts o = { diag_cb, &ro->d };
	struct cw_segment seg;
	struct cw_reader *r;
	int ret;

	memset(ro, 0, sizeof(*ro));
	r = cw_reader__open(path, &o);
	if (!r)
		return -errno;
	while ((ret = cw_reader__next(r, &seg)) > 0) {
		const struct cw_hdr *h;
		size_t pos = 0;
		uint32_t n = 0;

		if (ro->segs < 64) {
			ro->seqs[ro->segs] = seg.seq;
			ro->types[ro->segs] = seg.seg_type;
		}
		ro->last_type = seg.seg_type;
		ro->segs++;
		while ((h = cw_segment__next_record(&seg, &pos))) {
			ro->data = realloc(ro->data, ro->len + h->size);
			memcpy(ro->data + ro->len, h, h->size);
			ro->len += h->size;
			n++;
		}
		CHECK(n == seg.nrec);
		CHECK(pos == seg.len);
	}
	/* EOF and errors are sticky. */
	CHECK(cw_reader__next(r, &seg) == ret);
	cw_reader__stats(r, &ro->st);
	cw_reader__free(r);
	return ret < 0 ? ret : ro->segs;
}

/*
 * Write @nseg segments: a meta segment with 2 records, @nseg - 2 events
 * segments of @per records, a final segment with 1 record. Records go to
 * *all (concatenated), segment offsets to offs[].
 */
static void write_std(int fd, int nseg, int per, int random_body, uint8_t **all, size_t *all_len,
		      uint64_t *offs)
{
	struct cw_writer_opts o = { 0, 0 };
	struct cw_writer *w = cw_writer__new(fd, &o);
	uint8_t rec[512];
	uint64_t ts = 1000000;

	*all = NULL;
	*all_len = 0;
	for (int s = 0; s < nseg; s++) {
		int n = s == 0 ? 2 : s == nseg - 1 ? 1 : per;
		uint16_t type = s == 0 ? CW_REC_META_KV : s == nseg - 1 ? CW_REC_ACCOUNT : CW_REC_SWITCH;

		offs[s] = (uint64_t)lseek(fd, 0, SEEK_CUR);
		for (int i = 0; i < n; i++) {
			size_t len = make_rec(rec, type, (uint16_t)(16 + 8 * (rnd() % 20)), ts,
					      random_body);

			ts += rnd() % 5000;
			if (cw_writer__append(w, rec, len))
				abort();
			*all = realloc(*all, *all_len + len);
			memcpy(*all + *all_len, rec, len);
			*all_len += len;
		}
		if (cw_writer__seal(w, s == 0 ? CW_SEG_META : s == nseg - 1 ? CW_SEG_FINAL :
								       CW_SEG_EVENTS))
			abort();
	}
	offs[nseg] = (uint64_t)lseek(fd, 0, SEEK_CUR);
	cw_writer__free(w);
}

/* ---- tests ---- */

static void test_roundtrip(void)
{
	struct cw_writer_opts o = { 4096, 0 };
	struct cw_writer_stats ws;
	struct readout ro;
	uint8_t rec[512], *all = NULL, hb[CW_SEG_HDR_LEN];
	size_t all_len = 0;
	int fd = tmp_open();
	struct cw_writer *w = cw_writer__new(fd, &o);
	uint64_t ts = 5000000000ull;

	CHECK(w);
	for (int i = 0; i < 3; i++) {
		size_t len = make_rec(rec, CW_REC_META_KV, 32, 0, 0);

		CHECK(cw_writer__append(w, rec, len) == 0);
		all = realloc(all, all_len + len);
		memcpy(all + all_len, rec, len);
		all_len += len;
	}
	CHECK(cw_writer__seal(w, CW_SEG_META) == 0);
	for (int i = 0; i < 3000; i++) {
		size_t len;

		/* Out of order by up to 2 us, like records from several CPUs;
		 * and one record far in the past to test wrapping deltas. */
		ts += rnd() % 3000;
		len = make_rec(rec, CW_REC_SWITCH + (uint16_t)(rnd() % 8),
			       (uint16_t)(16 + 8 * (rnd() % 30)),
			       i == 1500 ? 7 : ts - rnd() % 2000, 0);
		CHECK(cw_writer__append(w, rec, len) == 0);
		all = realloc(all, all_len + len);
		memcpy(all + all_len, rec, len);
		all_len += len;
	}
	CHECK(cw_writer__pending(w) > 0);
	CHECK(cw_writer__seal(w, CW_SEG_FINAL) == 0);
	CHECK(cw_writer__pending(w) == 0);
	cw_writer__stats(w, &ws);
	CHECK(ws.records == 3003);
	CHECK(ws.segments > 3);
	CHECK(ws.file_bytes == file_size(fd));
	CHECK(ws.raw_bytes == all_len);
	cw_writer__free(w);

	/* The first segment is the metadata segment, seq 0. */
	CHECK(pread(fd, hb, sizeof(hb), 0) == CW_SEG_HDR_LEN);
	CHECK(cw_get16(hb + 12) == CW_SEG_META && cw_get64(hb + 16) == 0);

	CHECK(read_all(tmp_path, &ro) == (int)ws.segments);
	CHECK(ro.len == all_len && !memcmp(ro.data, all, all_len));
	CHECK(ro.st.clean_close == 1);
	CHECK(ro.st.segments_ok == ws.segments && ro.st.segments_damaged == 0);
	CHECK(ro.st.bytes_skipped == 0 && ro.st.seq_gaps == 0 && !ro.st.truncated_tail);
	CHECK(ro.st.records == 3003);
	CHECK(ro.d.n == 0);
	for (int i = 0; i < ro.segs && i < 64; i++)
		CHECK(ro.seqs[i] == (uint64_t)i);
	CHECK(ro.types[0] == CW_SEG_META && ro.last_type == CW_SEG_FINAL);
	free(ro.data);

	/* Segment 1: flags and time range. */
	{
		struct cw_reader *r = cw_reader__open(tmp_path, NULL);
		struct cw_segment seg;
		uint64_t lo = UINT64_MAX, hi = 0;
		const struct cw_hdr *h;
		size_t pos = 0;

		CHECK(cw_reader__next(r, &seg) == 1);
		CHECK(cw_reader__next(r, &seg) == 1);
		CHECK(pread(fd, hb, sizeof(hb), (off_t)seg.offset) == CW_SEG_HDR_LEN);
		CHECK(cw_get16(hb + 14) == (CW_SEGF_LZ4 | CW_SEGF_COLUMNAR));
		CHECK(cw_get32(hb + 48) < cw_get32(hb + 44));
		while ((h = cw_segment__next_record(&seg, &pos))) {
			lo = h->ts < lo ? h->ts : lo;
			hi = h->ts > hi ? h->ts : hi;
		}
		CHECK(lo == seg.first_ts && hi == seg.last_ts);
		cw_reader__free(r);
	}
	free(all);
	tmp_done(fd);
}

static void keep(uint8_t **all, size_t *all_len, const uint8_t *rec, size_t len)
{
	*all = realloc(*all, *all_len + len);
	memcpy(*all + *all_len, rec, len);
	*all_len += len;
}

/*
 * Metadata that outgrows a small segment goes on in more META segments,
 * never in an EVENTS segment ahead of them: with --segment-size 4096 the
 * capture's snapshot filled segments 0..5, sealed as EVENTS by the
 * appends, and its META segments came after them (issue 16). A split
 * (how the kallsyms snapshot cuts its records) stays META too; after the
 * metadata's seal, appends and splits cut EVENTS segments.
 */
static void test_meta_spill(void)
{
	struct cw_writer_opts o = { 4096, 0 };
	struct cw_writer_stats ws;
	struct readout ro;
	uint8_t rec[256], *all = NULL;
	size_t all_len = 0;
	int fd = tmp_open();
	struct cw_writer *w = cw_writer__new(fd, &o);
	uint64_t nmeta;

	/* 40 KiB of snapshot, ten segments of it. */
	for (int i = 0; i < 160; i++) {
		size_t len = make_rec(rec, CW_REC_META_TASK, sizeof(rec), 100, 0);

		CHECK(cw_writer__append(w, rec, len) == 0);
		keep(&all, &all_len, rec, len);
		if (i == 100)
			CHECK(cw_writer__split(w) == 0);
	}
	CHECK(cw_writer__seal(w, CW_SEG_META) == 0);
	cw_writer__stats(w, &ws);
	nmeta = ws.segments;
	CHECK(nmeta >= 10);
	for (int i = 0; i < 160; i++) {
		size_t len = make_rec(rec, CW_REC_SWITCH, sizeof(rec), 1000 + (uint64_t)i, 0);

		CHECK(cw_writer__append(w, rec, len) == 0);
		keep(&all, &all_len, rec, len);
		if (i == 100)
			CHECK(cw_writer__split(w) == 0);
	}
	CHECK(cw_writer__split(w) == 0);
	CHECK(cw_writer__split(w) == 0); /* nothing pending: no segment */
	CHECK(cw_writer__seal(w, CW_SEG_FINAL) == 0);
	cw_writer__stats(w, &ws);
	CHECK(ws.segments >= 2 * nmeta && ws.segments <= 64);
	cw_writer__free(w);

	CHECK(read_all(tmp_path, &ro) == (int)ws.segments);
	CHECK(ro.len == all_len && !memcmp(ro.data, all, all_len));
	CHECK(ro.d.n == 0 && !ro.st.meta_not_first && ro.st.meta_misplaced == 0);
	for (int i = 0; i < ro.segs && i < 64; i++) {
		uint16_t want = (uint64_t)i < nmeta ? CW_SEG_META : CW_SEG_EVENTS;

		CHECK(ro.types[i] == (i == ro.segs - 1 ? CW_SEG_FINAL : want));
	}
	free(ro.data);
	free(all);
	tmp_done(fd);
}

/* One segment of @n records of @type, sealed as @seg_type; @return its
 * offset. */
static uint64_t seal_n(struct cw_writer *w, int fd, uint16_t seg_type, uint16_t type, int n,
		       uint8_t **all, size_t *all_len)
{
	uint64_t off = (uint64_t)lseek(fd, 0, SEEK_CUR);
	uint8_t rec[64];

	for (int i = 0; i < n; i++) {
		size_t len = make_rec(rec, type, sizeof(rec), 1000 + (uint64_t)i, 0);

		CHECK(cw_writer__append(w, rec, len) == 0);
		keep(all, all_len, rec, len);
	}
	CHECK(cw_writer__seal(w, seg_type) == 0);
	return off;
}

/*
 * The order rule of format.md ("Segment order"): a file whose first
 * segment is not META, or with META after EVENTS, is warned about by
 * segment and offset, and read whole; it is not damage. The first
 * segment is the first one read: behind a damaged META segment, the
 * metadata is missing.
 */
static void test_segment_order(void)
{
	char msg[256];
	struct readout ro;
	uint8_t *all = NULL;
	size_t all_len = 0;
	uint64_t off[3];
	int fd = tmp_open();
	struct cw_writer *w = cw_writer__new(fd, NULL);

	/* META, EVENTS, then two META (a capture's metadata learned late
	 * belongs in EVENTS segments, as kv records), EVENTS, FINAL. */
	off[0] = seal_n(w, fd, CW_SEG_META, CW_REC_META_KV, 2, &all, &all_len);
	off[1] = seal_n(w, fd, CW_SEG_EVENTS, CW_REC_SWITCH, 3, &all, &all_len);
	off[2] = seal_n(w, fd, CW_SEG_META, CW_REC_META_KV, 1, &all, &all_len);
	seal_n(w, fd, CW_SEG_META, CW_REC_META_TASK, 1, &all, &all_len);
	seal_n(w, fd, CW_SEG_EVENTS, CW_REC_SWITCH, 3, &all, &all_len);
	seal_n(w, fd, CW_SEG_FINAL, CW_REC_META_KV, 1, &all, &all_len);
	cw_writer__free(w);
	CHECK(read_all(tmp_path, &ro) == 6);
	CHECK(ro.len == all_len && !memcmp(ro.data, all, all_len));
	CHECK(ro.st.segments_damaged == 0 && ro.st.clean_close);
	CHECK(!ro.st.meta_not_first && ro.st.meta_misplaced == 2);
	snprintf(msg, sizeof(msg),
		 "segment 2 at offset %llu: META segment after EVENTS segment 1: the metadata "
		 "belongs before every EVENTS segment; its records are read anyway",
		 (unsigned long long)off[2]);
	CHECK(has(&ro.d, msg));
	CHECK(has(&ro.d, "2 META segments in all came after an EVENTS or FINAL segment, the "
			 "first segment 2; their records were read"));
	CHECK(ro.d.n == 2 && ro.d.warn == 2);
	free(ro.data);
	free(all);
	tmp_done(fd);

	/* EVENTS first, the metadata after it: the capture's file of issue
	 * 16. One misplaced META: no count at the end. */
	all = NULL;
	all_len = 0;
	fd = tmp_open();
	w = cw_writer__new(fd, NULL);
	off[0] = seal_n(w, fd, CW_SEG_EVENTS, CW_REC_META_TASK, 2, &all, &all_len);
	off[1] = seal_n(w, fd, CW_SEG_META, CW_REC_META_KV, 2, &all, &all_len);
	off[2] = seal_n(w, fd, CW_SEG_FINAL, CW_REC_META_KV, 1, &all, &all_len);
	cw_writer__free(w);
	CHECK(read_all(tmp_path, &ro) == 3);
	CHECK(ro.len == all_len && !memcmp(ro.data, all, all_len));
	CHECK(ro.st.meta_not_first && ro.st.meta_misplaced == 1);
	CHECK(has(&ro.d, "segment 0 at offset 0: the first segment is EVENTS, not META: the "
			 "metadata is missing or out of place; reading on"));
	snprintf(msg, sizeof(msg), "segment 1 at offset %llu: META segment after EVENTS segment 0",
		 (unsigned long long)off[1]);
	CHECK(has(&ro.d, msg));
	CHECK(ro.d.n == 2 && ro.d.warn == 2);
	free(ro.data);
	free(all);

	/* The same file with a damaged META first: what is read first is
	 * EVENTS, and the metadata is missing. */
	CHECK(ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0);
	all = NULL;
	all_len = 0;
	w = cw_writer__new(fd, NULL);
	off[0] = seal_n(w, fd, CW_SEG_META, CW_REC_META_KV, 2, &all, &all_len);
	off[1] = seal_n(w, fd, CW_SEG_EVENTS, CW_REC_SWITCH, 2, &all, &all_len);
	off[2] = seal_n(w, fd, CW_SEG_FINAL, CW_REC_META_KV, 1, &all, &all_len);
	cw_writer__free(w);
	flip(fd, off[0] + CW_SEG_HDR_LEN + 1);
	CHECK(read_all(tmp_path, &ro) == 2);
	CHECK(ro.st.segments_damaged == 1 && ro.st.meta_not_first && ro.st.meta_misplaced == 0);
	snprintf(msg, sizeof(msg), "segment 1 at offset %llu: the first segment is EVENTS, not META",
		 (unsigned long long)off[1]);
	CHECK(has(&ro.d, msg));
	free(ro.data);
	free(all);
	tmp_done(fd);
}

static void test_raw_and_absolute(void)
{
	for (int variant = 0; variant < 2; variant++) {
		struct cw_writer_opts o = { 0, variant };
		uint8_t rec[1024], *all = NULL, hb[CW_SEG_HDR_LEN];
		size_t all_len = 0;
		struct readout ro;
		int fd = tmp_open();
		struct cw_writer *w = cw_writer__new(fd, &o);

		for (int i = 0; i < 50; i++) {
			size_t len = make_rec(rec, CW_REC_EXEC, 1000, rnd(), 1);

			CHECK(cw_writer__append(w, rec, len) == 0);
			all = realloc(all, all_len + len);
			memcpy(all + all_len, rec, len);
			all_len += len;
		}
		CHECK(cw_writer__seal(w, CW_SEG_META) == 0);
		cw_writer__free(w);
		CHECK(pread(fd, hb, sizeof(hb), 0) == CW_SEG_HDR_LEN);
		/* random bodies do not compress: stored raw */
		CHECK(!(cw_get16(hb + 14) & CW_SEGF_LZ4));
		/* no_ts_delta: plain records, no transform at all */
		CHECK(!!(cw_get16(hb + 14) & CW_SEGF_COLUMNAR) == !variant);
		CHECK(!(cw_get16(hb + 14) & CW_SEGF_TS_DELTA));
		CHECK(cw_get32(hb + 48) == cw_get32(hb + 44));
		CHECK(read_all(tmp_path, &ro) == 1);
		CHECK(ro.len == all_len && !memcmp(ro.data, all, all_len));
		CHECK(has(&ro.d, "no final segment: the capture was not closed cleanly; reading what is there"));
		CHECK(ro.d.n == 1);
		free(ro.data);
		free(all);
		tmp_done(fd);
	}
}

static void test_writer_rejects(void)
{
	struct cw_writer_opts o = { 0, 0 };
	uint8_t rec[70000];
	int fd = tmp_open();
	struct cw_writer *w = cw_writer__new(fd, &o);

	make_rec(rec, CW_REC_SWITCH, 48, 1, 0);
	CHECK(cw_writer__append(w, rec, 8) == -EINVAL);	 /* shorter than a header */
	CHECK(cw_writer__append(w, rec, 40) == -EINVAL); /* size field says 48 */
	cw_put16(rec + 2, 12);
	CHECK(cw_writer__append(w, rec, 12) == -EINVAL); /* size < 16 */
	cw_put16(rec + 2, 20);
	CHECK(cw_writer__append(w, rec, 20) == -EINVAL); /* not a multiple of 8 */
	cw_put16(rec + 2, 0);
	CHECK(cw_writer__append(w, rec, 65536) == -EINVAL); /* does not fit in size */
	CHECK(cw_writer__pending(w) == 0);
	CHECK(cw_writer__seal(w, 9) == -EINVAL);
	CHECK(cw_writer__seal(w, CW_SEG_EVENTS) == 0 && file_size(fd) == 0);
	o.segment_size = CW_SEG_MAX_RAW + 1;
	errno = 0;
	CHECK(!cw_writer__new(fd, &o) && errno == EINVAL);
	cw_writer__free(w);
	cw_writer__free(NULL);
	tmp_done(fd);
}

/* A record bigger than the segment size gets a segment of its own. */
static void test_big_record(void)
{
	struct cw_writer_opts o = { 64, 0 };
	uint8_t rec[65528];
	struct cw_writer_stats ws;
	struct readout ro;
	int fd = tmp_open();
	struct cw_writer *w = cw_writer__new(fd, &o);

	CHECK(cw_writer__append(w, rec, make_rec(rec, 0x7f, 32, 1, 0)) == 0);
	CHECK(cw_writer__append(w, rec, make_rec(rec, 0x7f, 65528, 2, 0)) == 0);
	CHECK(cw_writer__append(w, rec, make_rec(rec, 0x7f, 1024, 3, 0)) == 0);
	CHECK(cw_writer__seal(w, CW_SEG_FINAL) == 0);
	cw_writer__stats(w, &ws);
	CHECK(ws.segments == 3 && ws.records == 3);
	cw_writer__free(w);
	CHECK(read_all(tmp_path, &ro) == 3);
	CHECK(ro.len == 32 + 65528 + 1024 && ro.d.n == 0);
	free(ro.data);
	tmp_done(fd);
}

/* A full disk: the seal fails, nothing is lost from the pending records,
 * the sequence number is not consumed. */
/* /dev/full: every write fails with ENOSPC; the writer keeps what it has
 * pending and counts nothing as written. */
static void test_write_error_devfull(void)
{
	struct cw_writer_opts o = { 0, 0 };
	struct cw_writer_stats ws;
	uint8_t rec[64];
	int fd = open("/dev/full", O_WRONLY);
	struct cw_writer *w;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	w = cw_writer__new(fd, &o);
	CHECK(cw_writer__append(w, rec, make_rec(rec, CW_REC_EXIT, 32, 1, 0)) == 0);
	CHECK(cw_writer__seal(w, CW_SEG_EVENTS) == -ENOSPC);
	CHECK(cw_writer__pending(w) == 32);
	CHECK(cw_writer__seal(w, CW_SEG_EVENTS) == -ENOSPC);
	cw_writer__stats(w, &ws);
	CHECK(ws.segments == 0 && ws.records == 0);
	cw_writer__free(w);
	close(fd);
}

/* Append @n incompressible 1 KiB records, also to *all. */
static void append_random(struct cw_writer *w, int n, uint64_t ts, uint8_t **all, size_t *len)
{
	uint8_t rec[1024];

	for (int i = 0; i < n; i++) {
		make_rec(rec, CW_REC_EXIT, sizeof(rec), ts + (uint64_t)i, 1);
		CHECK(cw_writer__append(w, rec, sizeof(rec)) == 0);
		*all = realloc(*all, *len + sizeof(rec));
		memcpy(*all + *len, rec, sizeof(rec));
		*len += sizeof(rec);
	}
}

/*
 * The disk fills up in the middle of a segment: the writer takes back
 * the part it wrote (ftruncate to the segment's start), so the file holds
 * whole segments only and reads without damage, and the same seal, once
 * there is room, appends to a clean file. The disk is a 64 KiB tmpfs the
 * test mounts itself: as root (make test, CI), or, for another user (make
 * check), in a user and mount namespace of its own (write_error_userns).
 * A test that cannot mount fails, it does not skip.
 */
static void write_error_tmpfs(void)
{
	struct cw_writer_opts o = { 0, 0 };
	char dir[] = "/tmp/test_segio.full.XXXXXX", path[64];
	uint8_t *all = NULL;
	size_t all_len = 0;
	struct cw_writer *w = NULL;
	struct readout ro;
	struct statvfs sv;
	uint64_t end1;
	int fd = -1;

	if (!mkdtemp(dir)) {
		fprintf(stderr, "  mkdtemp: %s\n", strerror(errno));
		failed_checks++;
		return;
	}
	if (mount("cw-test-full", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0700")) {
		fprintf(stderr, "  cannot mount a 64 KiB tmpfs at %s: %s; this test needs root "
				"(CAP_SYS_ADMIN, or a user namespace) to fill a disk\n", dir, strerror(errno));
		failed_checks++;
		rmdir(dir);
		return;
	}
	snprintf(path, sizeof(path), "%s/t.cwt", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	if (fd < 0)
		goto cleanup;
	w = cw_writer__new(fd, &o);

	/* 20 KiB fit; then 60 KiB do not, but their header and a part of
	 * their payload do: the partial write that must be taken back. */
	append_random(w, 20, 1000, &all, &all_len);
	CHECK(cw_writer__seal(w, CW_SEG_META) == 0);
	end1 = file_size(fd);
	CHECK(fstatvfs(fd, &sv) == 0 && sv.f_bavail * sv.f_bsize > 4096);
	append_random(w, 60, 2000, &all, &all_len);
	CHECK(cw_writer__seal(w, CW_SEG_EVENTS) == -ENOSPC);
	CHECK(file_size(fd) == end1);
	CHECK(cw_writer__pending(w) >= 60 * 1024);
	CHECK(read_all(path, &ro) == 1);
	CHECK(ro.st.segments_damaged == 0 && ro.st.bytes_skipped == 0 && !ro.st.truncated_tail);
	CHECK(ro.len == 20 * 1024 && !memcmp(ro.data, all, ro.len));
	free(ro.data);

	/* Room again: the retry appends whole segments after the first. */
	CHECK(mount(NULL, dir, NULL, MS_REMOUNT | MS_NOSUID | MS_NODEV, "size=1m") == 0);
	CHECK(cw_writer__seal(w, CW_SEG_EVENTS) == 0);
	CHECK(cw_writer__seal(w, CW_SEG_FINAL) == 0);
	CHECK(read_all(path, &ro) == 3);
	CHECK(ro.st.segments_damaged == 0 && ro.st.bytes_skipped == 0 && ro.st.seq_gaps == 0);
	CHECK(ro.st.clean_close && ro.d.n == 0);
	CHECK(ro.len == all_len && !memcmp(ro.data, all, all_len));
	free(ro.data);
cleanup:
	cw_writer__free(w);
	if (fd >= 0)
		close(fd);
	unlink(path);
	if (umount(dir))
		fprintf(stderr, "  umount %s: %s\n", dir, strerror(errno));
	rmdir(dir);
	free(all);
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

/*
 * Not root: a child enters a new user namespace, where it is root over a
 * mount namespace of its own, and mounts the tmpfs there (tmpfs may be
 * mounted in a user namespace); the test's own process keeps its
 * credentials. The child's failed checks come back as its exit status.
 */
static void write_error_userns(void)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char map[64];
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (pid < 0)
		return;
	if (pid == 0) {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS)) {
			fprintf(stderr, "  not root, and no user namespace to mount a tmpfs in: "
					"unshare: %s\n", strerror(errno));
			_exit(1);
		}
		snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
		CHECK(write_file("/proc/self/setgroups", "deny") == 0);
		CHECK(write_file("/proc/self/uid_map", map) == 0);
		snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
		CHECK(write_file("/proc/self/gid_map", map) == 0);
		/* Nothing mounted here may reach the parent's namespace. */
		CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
		if (!failed_checks)
			write_error_tmpfs();
		fflush(NULL);
		_exit(failed_checks ? 1 : 0);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_write_error(void)
{
	test_write_error_devfull();
	if (geteuid() == 0)
		write_error_tmpfs();
	else
		write_error_userns();
}

static void test_header_crc(void)
{
	uint64_t offs[8];
	uint8_t *all;
	size_t all_len;
	struct readout ro;
	char want[256];
	int fd = tmp_open();

	write_std(fd, 5, 40, 0, &all, &all_len, offs);
	flip(fd, offs[2] + 20);
	CHECK(read_all(tmp_path, &ro) == 4);
	CHECK(ro.seqs[0] == 0 && ro.seqs[1] == 1 && ro.seqs[2] == 3 && ro.seqs[3] == 4);
	CHECK(ro.st.segments_damaged == 1 && ro.st.seq_gaps == 1);
	CHECK(ro.st.bytes_skipped == offs[3] - offs[2]);
	CHECK(ro.st.clean_close == 1);
	snprintf(want, sizeof(want), "segment at offset %llu: header checksum mismatch; skipped\n",
		 (unsigned long long)offs[2]);
	CHECK(has(&ro.d, want));
	snprintf(want, sizeof(want), "skipped %llu bytes at offset %llu (no valid segment header)\n",
		 (unsigned long long)(offs[3] - offs[2]), (unsigned long long)offs[2]);
	CHECK(has(&ro.d, want));
	CHECK(ro.d.n == 2);
	free(ro.data);
	free(all);
	tmp_done(fd);
}

static void test_payload_crc(void)
{
	uint64_t offs[8];
	uint8_t *all;
	size_t all_len;
	struct readout ro;
	char want[256];
	int fd = tmp_open();

	write_std(fd, 5, 40, 0, &all, &all_len, offs);
	flip(fd, offs[3] + CW_SEG_HDR_LEN + 5);
	CHECK(read_all(tmp_path, &ro) == 4);
	CHECK(ro.seqs[2] == 2 && ro.seqs[3] == 4);
	CHECK(ro.st.segments_damaged == 1 && ro.st.seq_gaps == 1);
	CHECK(ro.st.bytes_skipped == offs[4] - offs[3]);
	snprintf(want, sizeof(want), "segment 3 at offset %llu: payload checksum mismatch; skipped\n",
		 (unsigned long long)offs[3]);
	CHECK(has(&ro.d, want));
	/* resynchronised right at the next segment: nothing else to say */
	CHECK(ro.d.n == 1);
	free(ro.data);
	free(all);
	tmp_done(fd);
}

static void test_truncated(void)
{
	uint64_t offs[8];
	uint8_t *all;
	size_t all_len;
	struct readout ro;
	char want[256];
	int fd = tmp_open();

	/* no final segment: cut the last events segment short */
	write_std(fd, 4, 40, 0, &all, &all_len, offs);
	CHECK(ftruncate(fd, (off_t)offs[3] - 10) == 0);
	CHECK(read_all(tmp_path, &ro) == 2);
	CHECK(ro.st.truncated_tail == 1 && !ro.st.clean_close && ro.st.segments_damaged == 0);
	snprintf(want, sizeof(want),
		 "segment 2 at offset %llu: truncated (file ends 10 bytes short): a capture that was killed loses its last segment\n",
		 (unsigned long long)offs[2]);
	CHECK(has(&ro.d, want));
	CHECK(has(&ro.d, "no final segment"));
	CHECK(ro.d.n == 2);
	free(ro.data);

	/* inside a header */
	CHECK(ftruncate(fd, (off_t)offs[2] + 30) == 0);
	CHECK(read_all(tmp_path, &ro) == 2);
	CHECK(ro.st.truncated_tail == 1);
	snprintf(want, sizeof(want),
		 "segment at offset %llu: truncated header (file ends 34 bytes short)",
		 (unsigned long long)offs[2]);
	CHECK(has(&ro.d, want));
	free(ro.data);

	/* inside the magic */
	CHECK(ftruncate(fd, (off_t)offs[2] + 3) == 0);
	CHECK(read_all(tmp_path, &ro) == 2);
	CHECK(ro.st.truncated_tail == 1 && ro.st.bytes_skipped == 0);
	free(ro.data);

	/* only a partial first segment: nothing valid at all */
	CHECK(ftruncate(fd, 100) == 0);
	CHECK(read_all(tmp_path, &ro) == -EINVAL);
	CHECK(ro.st.truncated_tail == 1);
	CHECK(has(&ro.d, "no valid segment in the file: nothing to read"));
	free(ro.data);
	free(all);
	tmp_done(fd);
}

static void test_garbage(void)
{
	uint64_t offs[8];
	uint8_t *all, g[5000];
	size_t all_len;
	struct readout ro;
	int fd = tmp_open();
	char want[256];

	/* 1000 bytes of garbage first, then 333 between segments 1 and 2
	 * (each with copies of the magic but no valid header), 77 at the
	 * end. */
	for (size_t i = 0; i < sizeof(g); i++)
		g[i] = (uint8_t)rnd();
	memcpy(g + 100, CW_MAGIC, CW_MAGIC_LEN);
	memcpy(g + 1300, CW_MAGIC, CW_MAGIC_LEN);
	append_bytes(fd, g, 1000);
	write_std(fd, 2, 30, 0, &all, &all_len, offs);
	append_bytes(fd, g + 1000, 333);
	{
		struct cw_writer_opts o = { 0, 0 };
		struct cw_writer *w = cw_writer__new(fd, &o);
		uint8_t rec[64];

		CHECK(cw_writer__append(w, rec, make_rec(rec, CW_REC_EXIT, 32, 5, 0)) == 0);
		CHECK(cw_writer__seal(w, CW_SEG_FINAL) == 0);
		cw_writer__free(w);
	}
	append_bytes(fd, g + 2000, 77);

	CHECK(read_all(tmp_path, &ro) == 3);
	CHECK(ro.st.bytes_skipped == 1000 + 333 + 77);
	CHECK(ro.st.segments_damaged == 0 && ro.st.clean_close);
	CHECK(has(&ro.d, "skipped 1000 bytes at offset 0 (no valid segment header)"));
	snprintf(want, sizeof(want), "skipped 333 bytes at offset %llu (no valid segment header)",
		 (unsigned long long)offs[2]);
	CHECK(has(&ro.d, want));
	snprintf(want, sizeof(want), "skipped 77 bytes at offset %llu (no valid segment header)",
		 (unsigned long long)(file_size(fd) - 77));
	CHECK(has(&ro.d, want));
	/* the second writer restarted at seq 0: reported, not a gap */
	CHECK(has(&ro.d, "sequence number goes back"));
	free(ro.data);
	free(all);
	tmp_done(fd);
}

static void test_newer_major(void)
{
	uint64_t offs[8];
	uint8_t *all, hb[CW_SEG_HDR_LEN];
	size_t all_len;
	struct readout ro;
	int fd = tmp_open();

	write_std(fd, 3, 10, 0, &all, &all_len, offs);
	CHECK(pread(fd, hb, sizeof(hb), 0) == CW_SEG_HDR_LEN);
	cw_put16(hb + 8, 2);
	cw_put16(hb + 10, 3);
	cw_seg_hdr__reseal(hb);
	CHECK(pwrite(fd, hb, sizeof(hb), 0) == CW_SEG_HDR_LEN);
	CHECK(read_all(tmp_path, &ro) == -EPROTO);
	CHECK(ro.segs == 0);
	{
		char want[128];

		snprintf(want, sizeof(want),
			 "trace format 2.3 is newer than this analyzer (%d.%d): upgrade causeway\n",
			 CW_FORMAT_MAJOR, CW_FORMAT_MINOR);
		CHECK(has(&ro.d, want));
	}
	CHECK(ro.d.n == 1 && ro.d.error == 1);
	free(ro.data);

	/* a newer minor is read */
	cw_put16(hb + 8, 1);
	cw_seg_hdr__reseal(hb);
	CHECK(pwrite(fd, hb, sizeof(hb), 0) == CW_SEG_HDR_LEN);
	CHECK(read_all(tmp_path, &ro) == 3 && ro.d.n == 0);
	free(ro.data);
	free(all);
	tmp_done(fd);
}

static void test_other_format(void)
{
	uint8_t buf[10000];
	struct readout ro;
	int fd = tmp_open();

	memcpy(buf, "\x7f" "ELF", 4);
	for (size_t i = 4; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rnd();
	memcpy(buf + 500, CW_MAGIC, CW_MAGIC_LEN); /* a magic alone is not enough */
	append_bytes(fd, buf, sizeof(buf));
	CHECK(read_all(tmp_path, &ro) == -EINVAL);
	CHECK(has(&ro.d, "not a causeway trace (no valid segment)\n"));
	CHECK(ro.d.n == 1 && ro.d.error == 1);
	free(ro.data);
	tmp_done(fd);

	fd = tmp_open();
	CHECK(read_all(tmp_path, &ro) == -EINVAL);
	CHECK(has(&ro.d, "empty file\n") && ro.d.n == 1);
	free(ro.data);
	tmp_done(fd);

	errno = 0;
	CHECK(!cw_reader__open("/nonexistent/x.cwt", NULL) && errno == ENOENT);
	CHECK(!cw_reader__open("/tmp", NULL) && errno == EISDIR);
}

/* Write a header with a valid checksum around @payload. */
static void put_seg(int fd, uint16_t type, uint16_t flags, uint64_t seq, uint32_t nrec,
		    uint32_t raw_len, uint32_t stored_len, const void *payload, size_t plen,
		    uint64_t first_ts, uint64_t last_ts)
{
	struct cw_seg_hdr h = {
		.major = CW_FORMAT_MAJOR,
		.seg_type = type,
		.seg_flags = flags,
		.seq = seq,
		.first_ts = first_ts,
		.last_ts = last_ts,
		.nrec = nrec,
		.raw_len = raw_len,
		.stored_len = stored_len,
		.payload_crc = cw_crc32(payload, plen),
		.hdr_len = CW_SEG_HDR_LEN,
	};
	uint8_t hb[CW_SEG_HDR_LEN];

	cw_seg_hdr__encode(&h, hb);
	append_bytes(fd, hb, sizeof(hb));
	append_bytes(fd, payload, plen);
}

static void test_hostile(void)
{
	uint8_t p[64] = { 0 }, rec[48];
	struct readout ro;
	int fd = tmp_open();

	/* seg 0: huge raw_len (valid crc) -> refused before any allocation */
	put_seg(fd, CW_SEG_META, 0, 0, 0, 0xffffffffu, 0xffffffffu, p, 0, 0, 0);
	/* seg 1: LZ4 flag on garbage with a valid payload crc */
	memset(p, 0xee, sizeof(p));
	put_seg(fd, CW_SEG_EVENTS, CW_SEGF_LZ4, 1, 1, 1000, 64, p, 64, 0, 0);
	/* seg 2: raw payload whose record has size 8 */
	memset(p, 0, sizeof(p));
	cw_put16(p + 2, 8);
	put_seg(fd, CW_SEG_EVENTS, 0, 2, 1, 64, 64, p, 64, 0, 0);
	/* seg 3: record running past the payload end */
	cw_put16(p + 2, 72);
	put_seg(fd, CW_SEG_EVENTS, 0, 3, 1, 64, 64, p, 64, 0, 0);
	/* seg 4: nrec mismatch */
	cw_put16(p + 2, 32);
	cw_put16(p + 34, 32);
	put_seg(fd, CW_SEG_EVENTS, 0, 4, 3, 64, 64, p, 64, 0, 0);
	/* seg 5: unknown segment type: skipped, not damage */
	put_seg(fd, 77, 0, 5, 0, 8, 8, p, 8, 0, 0);
	/* seg 6: unknown flags */
	put_seg(fd, CW_SEG_EVENTS, 0x80, 6, 0, 0, 0, p, 0, 0, 0);
	/* seg 7: good, record of an unknown type */
	make_rec(rec, 0x7f, 48, 99, 0);
	put_seg(fd, CW_SEG_EVENTS, 0, 7, 1, 48, 48, rec, 48, 99, 99);
	/* seg 8: ts range lies */
	put_seg(fd, CW_SEG_EVENTS, 0, 8, 1, 48, 48, rec, 48, 98, 99);
	/* seg 9: stored_len claims far more than the file holds */
	put_seg(fd, CW_SEG_FINAL, CW_SEGF_LZ4, 9, 0, 1u << 20, 1u << 20, p, 0, 0, 0);

	CHECK(read_all(tmp_path, &ro) == 1);
	CHECK(ro.seqs[0] == 7 && ro.len == 48);
	CHECK(ro.st.segments_damaged == 7 && ro.st.truncated_tail == 1 && !ro.st.clean_close);
	CHECK(has(&ro.d, "segment 0 at offset 0: raw length 4294967295 exceeds the limit 67108864; skipped"));
	CHECK(has(&ro.d, "segment 1 at offset 64: LZ4 payload does not decompress to 1000 bytes; skipped"));
	CHECK(has(&ro.d, "segment 2 at offset 192: record 0 at payload offset 0 (type 0x0): bad size 8; skipped"));
	CHECK(has(&ro.d, "record 0 at payload offset 0 (type 0x0): size 72 runs past the payload end"));
	CHECK(has(&ro.d, "header says 3 records, payload holds 2"));
	CHECK(has(&ro.d, "unknown segment type 77; skipped"));
	CHECK(has(&ro.d, "unknown flags 0x80"));
	CHECK(has(&ro.d, "record timestamps do not match the header's time range"));
	CHECK(has(&ro.d, "segment 9 at offset"));
	CHECK(has(&ro.d, "truncated (file ends 1048576 bytes short)"));
	free(ro.data);
	tmp_done(fd);

	/* a valid header whose length runs past the end, with a valid
	 * segment after it: damage, not a truncated tail */
	fd = tmp_open();
	put_seg(fd, CW_SEG_EVENTS, 0, 0, 0, 4096, 4096, p, 0, 0, 0);
	put_seg(fd, CW_SEG_FINAL, 0, 1, 1, 48, 48, rec, 48, 99, 99);
	CHECK(read_all(tmp_path, &ro) == 1);
	CHECK(ro.st.segments_damaged == 1 && !ro.st.truncated_tail && ro.st.clean_close);
	CHECK(has(&ro.d, "segment 0 at offset 0: length 4160 runs past the end of the file; skipped"));
	free(ro.data);
	tmp_done(fd);

	/* every segment damaged */
	fd = tmp_open();
	put_seg(fd, CW_SEG_EVENTS, CW_SEGF_LZ4, 0, 1, 1000, 64, p, 64, 0, 0);
	CHECK(read_all(tmp_path, &ro) == -EINVAL);
	CHECK(has(&ro.d, "no valid segment in the file"));
	free(ro.data);
	tmp_done(fd);
}

/* A damaged segment in the middle, garbage holding a stale header copy
 * with a bad checksum, and resynchronisation on the next good segment. */
static void test_resync(void)
{
	uint64_t offs[12];
	uint8_t *all, hb[CW_SEG_HDR_LEN];
	size_t all_len;
	struct readout ro;
	int fd = tmp_open();

	write_std(fd, 8, 50, 0, &all, &all_len, offs);
	/* overwrite segment 3's header and the start of its payload with a
	 * copy of segment 5's header, checksum broken */
	CHECK(pread(fd, hb, sizeof(hb), (off_t)offs[5]) == CW_SEG_HDR_LEN);
	hb[61] ^= 1;
	CHECK(pwrite(fd, hb, sizeof(hb), (off_t)offs[3] + 7) == CW_SEG_HDR_LEN);
	flip(fd, offs[4] + CW_SEG_HDR_LEN + 1);
	CHECK(read_all(tmp_path, &ro) == 6);
	CHECK(ro.seqs[2] == 2 && ro.seqs[3] == 5 && ro.seqs[5] == 7);
	CHECK(ro.st.bytes_skipped == offs[5] - offs[3]);
	CHECK(ro.st.seq_gaps == 2);
	CHECK(ro.st.segments_damaged == 1); /* seg 4 (seg 3 lost its magic) */
	CHECK(has(&ro.d, "segment 4 at offset"));
	free(ro.data);
	free(all);
	tmp_done(fd);
}

/* ---- columnar payloads ---- */

#define REF_MAX_GROUPS 4096

/*
 * A reference columnar encoder written from schema/format.md alone,
 * independent of the writer's (linear group search, byte-by-byte scatter,
 * no transpose blocking). @out holds at least len + 8 + 12 * nrec bytes.
 * @return the encoded length.
 */
static size_t col_ref(const uint8_t *recs, size_t len, uint8_t *out)
{
	static uint64_t keys[REF_MAX_GROUPS], last[65536];
	static uint32_t counts[REF_MAX_GROUPS], rows[REF_MAX_GROUPS];
	static size_t base[REF_MAX_GROUPS];
	uint32_t ng = 0, nrec = 0, g, i;
	size_t pos, off, iw;

	for (pos = 0; pos < len; pos += cw_get16(recs + pos + 2), nrec++) {
		uint64_t k = cw_get64(recs + pos);

		for (g = 0; g < ng && keys[g] != k; g++)
			;
		if (g == ng) {
			keys[ng] = k;
			counts[ng++] = 0;
		}
		counts[g]++;
	}
	iw = ng > 256 ? 2 : 1;
	cw_put32(out, nrec);
	cw_put32(out + 4, ng);
	for (g = 0; g < ng; g++) {
		cw_put64(out + 8 + 12 * g, keys[g]);
		cw_put32(out + 8 + 12 * g + 8, counts[g]);
	}
	off = 8 + 12 * (size_t)ng + iw * nrec;
	for (g = 0; g < ng; g++) {
		base[g] = off;
		rows[g] = 0;
		off += (size_t)counts[g] * ((keys[g] >> 16 & 0xffff) - 8);
		last[keys[g] >> 32 & 0xffff] = 0;
	}
	for (pos = 0, i = 0; pos < len; pos += cw_get16(recs + pos + 2), i++) {
		const uint8_t *r = recs + pos;
		uint64_t k = cw_get64(r), ts = cw_get64(r + 8);
		uint16_t size = cw_get16(r + 2), cpu = cw_get16(r + 4);
		uint8_t row[65536];

		for (g = 0; keys[g] != k; g++)
			;
		out[8 + 12 * ng + i] = (uint8_t)g;
		if (iw == 2)
			out[8 + 12 * ng + nrec + i] = (uint8_t)(g >> 8);
		memcpy(row, r, size);
		cw_put64(row + 8, ts - last[cpu]);
		last[cpu] = ts;
		for (size_t b = 8; b < size; b++)
			out[base[g] + (b - 8) * counts[g] + rows[g]] = row[b];
		rows[g]++;
	}
	return off;
}

/* The stored payload of the segment at @off, decompressed into @out
 * (capacity @cap); @return its length, or -1. */
static int seg_payload(int fd, uint64_t off, uint8_t *out, int cap, uint16_t *flags)
{
	uint8_t hb[CW_SEG_HDR_LEN], *st;
	uint32_t raw, stored;
	int n;

	if (pread(fd, hb, sizeof(hb), (off_t)off) != CW_SEG_HDR_LEN)
		return -1;
	*flags = cw_get16(hb + 14);
	raw = cw_get32(hb + 44);
	stored = cw_get32(hb + 48);
	st = malloc(stored + 1);
	if (pread(fd, st, stored, (off_t)off + CW_SEG_HDR_LEN) != (ssize_t)stored) {
		free(st);
		return -1;
	}
	if (*flags & CW_SEGF_LZ4) {
		n = LZ4_decompress_safe((const char *)st, (char *)out, (int)stored, cap);
	} else {
		n = (int)raw;
		memcpy(out, st, raw);
	}
	free(st);
	return n == (int)raw ? n : -1;
}

/* Records of many types, sizes, CPUs and contexts interleaved, in one
 * segment: read back byte for byte, and the writer's payload is exactly
 * what the format text prescribes. */
static void col_roundtrip(int ngroups_want, uint32_t nrec, int want_iw)
{
	struct cw_writer_opts o = { 8u << 20, 0 };
	size_t cap = (size_t)nrec * 200 + 65536, all_len = 0, ref_len;
	uint8_t *all = malloc(cap), *ref = malloc(2 * cap), *got = malloc(2 * cap);
	uint64_t ts = 1000000000ull;
	struct readout ro;
	uint16_t flags = 0;
	int fd = tmp_open(), n;
	struct cw_writer *w = cw_writer__new(fd, &o);

	for (uint32_t i = 0; i < nrec; i++) {
		uint8_t *r = all + all_len;
		uint32_t k = (uint32_t)(rnd() % (uint64_t)ngroups_want);
		/* variable sizes within one type, as META_KV and META_TASK
		 * have; several CPUs, a CPU "not applicable", contexts */
		uint16_t type = (uint16_t)(k % 7 == 0 ? CW_REC_META_KV : CW_REC_SWITCH + k % 8);
		uint16_t size = (uint16_t)(16 + 8 * (k % 13));
		uint16_t cpu = (uint16_t)(k % 5 == 4 ? 0xffff : (k / 7) % 4 + (k >= 128 ? 100 : 0));
		uint64_t t;

		ts += rnd() % 3000;
		t = ts - rnd() % 2000; /* out of order across CPUs */
		if (i == nrec / 2)
			t = 7; /* far in the past: wrapping deltas */
		if (i == nrec / 3)
			t = UINT64_MAX - 5;
		make_rec(r, type, size, t, 0);
		cw_put16(r + 4, cpu);
		r[6] = (uint8_t)(k % 3);
		if (k % 11 == 0)
			r[7] = 0x80; /* flags: part of the group key too */
		if (size >= 32)
			cw_put32(r + 16, 1000 + (uint32_t)(rnd() % 4)); /* a tid-like field */
		CHECK(cw_writer__append(w, r, size) == 0);
		all_len += size;
	}
	CHECK(cw_writer__seal(w, CW_SEG_EVENTS) == 0);
	cw_writer__free(w);

	n = seg_payload(fd, 0, got, (int)(2 * cap), &flags);
	ref_len = col_ref(all, all_len, ref);
	CHECK(flags == (CW_SEGF_COLUMNAR | CW_SEGF_LZ4));
	CHECK(n == (int)ref_len && !memcmp(got, ref, ref_len));
	CHECK(cw_get32(got) == nrec);
	CHECK(want_iw == 2 ? cw_get32(got + 4) > 256 : cw_get32(got + 4) <= 256);

	CHECK(read_all(tmp_path, &ro) == 1);
	CHECK(ro.len == all_len && !memcmp(ro.data, all, all_len));
	CHECK(ro.st.segments_damaged == 0 && ro.st.records == nrec);
	free(ro.data);
	free(all);
	free(ref);
	free(got);
	tmp_done(fd);
}

static void test_columnar_roundtrip(void)
{
	col_roundtrip(40, 20000, 1);
	col_roundtrip(1000, 20000, 2); /* more than 256 groups: 2-byte indexes */
	col_roundtrip(1, 1, 1);
}

/* More groups than the layout allows (65537 distinct first 8 bytes): the
 * writer falls back to plain delta-encoded records, and they read back. */
static void test_columnar_fallback(void)
{
	struct cw_writer_opts o = { 4u << 20, 0 };
	uint32_t nrec = CW_COL_MAX_GROUPS + 1;
	uint8_t *all = malloc((size_t)nrec * 16), hb[CW_SEG_HDR_LEN], tail[4 * 16];
	struct readout ro;
	int fd = tmp_open();
	struct cw_writer *w = cw_writer__new(fd, &o);

	for (uint32_t i = 0; i < nrec; i++) {
		uint8_t *r = all + (size_t)i * 16;

		make_rec(r, (uint16_t)(0x70 + i / 65536), 16, 5000 + i, 0);
		cw_put16(r + 4, (uint16_t)i);
		CHECK(cw_writer__append(w, r, 16) == 0);
	}
	CHECK(cw_writer__seal(w, CW_SEG_EVENTS) == 0);
	/* The writer groups records as they come: the next segment starts
	 * with no group, and is columnar again. */
	for (uint32_t i = 0; i < 4; i++) {
		make_rec(tail + 16 * i, CW_REC_SWITCH, 16, 9000 + i, 0);
		cw_put16(tail + 16 * i + 4, (uint16_t)(i % 2));
		CHECK(cw_writer__append(w, tail + 16 * i, 16) == 0);
	}
	CHECK(cw_writer__seal(w, CW_SEG_FINAL) == 0);
	cw_writer__free(w);
	CHECK(pread(fd, hb, sizeof(hb), 0) == CW_SEG_HDR_LEN);
	CHECK((cw_get16(hb + 14) & ~CW_SEGF_LZ4) == CW_SEGF_TS_DELTA);
	CHECK(pread(fd, hb, sizeof(hb), CW_SEG_HDR_LEN + cw_get32(hb + 48)) == CW_SEG_HDR_LEN);
	CHECK((cw_get16(hb + 14) & ~CW_SEGF_LZ4) == CW_SEGF_COLUMNAR);
	CHECK(cw_get32(hb + 40) == 4);
	CHECK(read_all(tmp_path, &ro) == 2);
	CHECK(ro.len == (size_t)nrec * 16 + sizeof(tail) && !memcmp(ro.data, all, (size_t)nrec * 16) &&
	      !memcmp(ro.data + (size_t)nrec * 16, tail, sizeof(tail)));
	free(ro.data);
	free(all);
	tmp_done(fd);
}

/* Segments of the layout before columnar payloads (plain records, delta
 * timestamps, LZ4) are still read. */
static void test_old_layout(void)
{
	uint8_t recs[3 * 48], enc[3 * 48], comp[512];
	uint64_t ts[3] = { 500, 400, 900 }, prev = 0;
	struct readout ro;
	int fd = tmp_open(), c;

	for (int i = 0; i < 3; i++) {
		make_rec(recs + 48 * i, CW_REC_SWITCH, 48, ts[i], 0);
		memcpy(enc + 48 * i, recs + 48 * i, 48);
		cw_put64(enc + 48 * i + 8, ts[i] - prev);
		prev = ts[i];
	}
	c = LZ4_compress_default((const char *)enc, (char *)comp, sizeof(enc), sizeof(comp));
	CHECK(c > 0);
	put_seg(fd, CW_SEG_META, CW_SEGF_LZ4 | CW_SEGF_TS_DELTA, 0, 3, sizeof(enc), (uint32_t)c,
		comp, (size_t)c, 400, 900);
	put_seg(fd, CW_SEG_FINAL, CW_SEGF_TS_DELTA, 1, 3, sizeof(enc), sizeof(enc), enc,
		sizeof(enc), 400, 900);
	CHECK(read_all(tmp_path, &ro) == 2);
	CHECK(ro.len == 2 * sizeof(recs) && !memcmp(ro.data, recs, sizeof(recs)) &&
	      !memcmp(ro.data + sizeof(recs), recs, sizeof(recs)));
	CHECK(ro.st.segments_damaged == 0 && ro.d.n == 0);
	free(ro.data);
	tmp_done(fd);
}

/*
 * Columnar payloads with valid checksums that lie, one way per segment:
 * each is damaged, reported, skipped, and never read out of bounds (run
 * under the sanitizer build).
 */
static void test_columnar_hostile(void)
{
	/* switch cpu 0, waking cpu 1, switch cpu 0, exit cpu 0: three
	 * groups, indexes 0 1 0 2, matrices at 48, 184 bytes in all */
	uint8_t recs[48 + 40 + 48 + 32], good[256], p[512];
	size_t len = 0, glen;
	struct readout ro;
	uint64_t seq = 0;
	int fd = tmp_open();

#define COL_SEG(flags, nrec, buf, n) \
	put_seg(fd, CW_SEG_EVENTS, (flags), seq++, (nrec), (uint32_t)(n), (uint32_t)(n), (buf), \
		(n), 90, 130)
#define MUTATE(stmt)                        \
	do {                                \
		memcpy(p, good, glen);      \
		stmt;                       \
		COL_SEG(CW_SEGF_COLUMNAR, 4, p, glen); \
	} while (0)

	len += make_rec(recs + len, CW_REC_SWITCH, 48, 100, 0);
	len += make_rec(recs + len, CW_REC_WAKING, 40, 90, 0);
	len += make_rec(recs + len, CW_REC_SWITCH, 48, 120, 0);
	len += make_rec(recs + len, CW_REC_EXIT, 32, 130, 0);
	for (size_t o = 0; o < len; o += cw_get16(recs + o + 2))
		cw_put16(recs + o + 4, 0);
	cw_put16(recs + 48 + 4, 1);
	glen = col_ref(recs, len, good);
	CHECK(glen == 184 && cw_get32(good + 4) == 3);

	COL_SEG(CW_SEGF_COLUMNAR, 4, good, glen);		     /* 0: valid */
	MUTATE(cw_put32(p, 5));					     /* 1 */
	MUTATE(cw_put32(p + 4, 5));				     /* 2 */
	MUTATE(cw_put32(p + 4, 0xffffffffu));			     /* 3 */
	MUTATE(cw_put16(p + 8 + 12 + 2, 44));			     /* 4: size 44 */
	MUTATE(cw_put16(p + 8 + 12 + 2, 8));			     /* 5: size 8 */
	MUTATE(cw_put32(p + 8 + 24 + 8, 0));			     /* 6: count 0 */
	MUTATE(cw_put32(p + 8 + 8, 1));				     /* 7: counts sum 3 */
	MUTATE(cw_put32(p + 8 + 8, 3));				     /* 8: matrices overrun */
	MUTATE(p[44 + 2] = 1);					     /* 9: 0 1 1 2 */
	MUTATE(p[44 + 3] = 3);					     /* 10: index 3 of 3 */
	MUTATE((p[44] = 1, p[45] = 0));				     /* 11: 1 0 0 2 */
	memcpy(p, good, glen);					     /* 12: 8 bytes short */
	COL_SEG(CW_SEGF_COLUMNAR, 4, p, glen - 8);
	memset(p + glen, 0, 8);					     /* 13: 8 bytes extra */
	COL_SEG(CW_SEGF_COLUMNAR, 4, p, glen + 8);
	COL_SEG(CW_SEGF_COLUMNAR, 0, p, 4);			     /* 14: no header */
	cw_put32(p + 4, 4);					     /* 15: table cut short */
	COL_SEG(CW_SEGF_COLUMNAR, 4, p, 40);
	COL_SEG(CW_SEGF_COLUMNAR | CW_SEGF_TS_DELTA, 4, good, glen); /* 16 */
	COL_SEG(CW_SEGF_COLUMNAR, 40, good, glen);		     /* 17: check 6 */
	memset(p, 0, 8);					     /* 18: valid, empty */
	put_seg(fd, CW_SEG_FINAL, CW_SEGF_COLUMNAR, seq++, 0, 8, 8, p, 8, 0, 0);
#undef MUTATE
#undef COL_SEG

	CHECK(read_all(tmp_path, &ro) == 2);
	CHECK(ro.seqs[0] == 0 && ro.seqs[1] == 18 && ro.st.clean_close);
	CHECK(ro.len == len && !memcmp(ro.data, recs, len));
	CHECK(ro.st.segments_damaged == 17);
	CHECK(has(&ro.d, "segment 1 at offset 248: columnar payload: holds 5 records, the segment header says 4; skipped"));
	CHECK(has(&ro.d, "segment 2 at offset 496: columnar payload: 5 groups for 4 records; skipped"));
	CHECK(has(&ro.d, "columnar payload: 4294967295 groups for 4 records"));
	CHECK(has(&ro.d, "columnar payload: group 1 (type 0x11): bad record size 44"));
	CHECK(has(&ro.d, "columnar payload: group 1 (type 0x11): bad record size 8"));
	CHECK(has(&ro.d, "columnar payload: group 2 (type 0x16): no records"));
	CHECK(has(&ro.d, "columnar payload: group counts add up to 3 records, not 4"));
	CHECK(has(&ro.d, "columnar payload: group 1 (type 0x11): 1 records of 40 bytes run past the payload end"));
	CHECK(has(&ro.d, "columnar payload: record 2: group 1 has only 1 records"));
	CHECK(has(&ro.d, "columnar payload: record 3 names group 3 of 3"));
	CHECK(has(&ro.d, "columnar payload: record 0: group 1 appears before group 0"));
	CHECK(has(&ro.d, "columnar payload: group 2 (type 0x16): 1 records of 32 bytes run past the payload end"));
	CHECK(has(&ro.d, "columnar payload: layout ends at 184, the payload holds 192 bytes"));
	CHECK(has(&ro.d, "columnar payload: 4 bytes, shorter than its 8-byte header"));
	CHECK(has(&ro.d, "columnar payload: group table and indexes need 60 bytes, the payload holds 40"));
	CHECK(has(&ro.d, "flags 0x6: columnar and delta timestamps exclude each other"));
	CHECK(has(&ro.d, "40 records cannot fit in 184 bytes"));
	free(ro.data);
	tmp_done(fd);

	/* A layout that adds up but decodes to more than CW_SEG_MAX_RAW:
	 * refused before the decoded buffer is allocated. 2^22 + 1 records
	 * of 16 bytes in one group; mostly zeros, so LZ4 keeps it small. */
	{
		uint32_t nrec = (CW_SEG_MAX_RAW / 16) + 1;
		size_t plen = 8 + 12 + (size_t)nrec * 9;
		uint8_t *big = calloc(1, plen);
		char *comp = malloc((size_t)LZ4_compressBound((int)plen));
		int c;

		fd = tmp_open();
		cw_put32(big, nrec);
		cw_put32(big + 4, 1);
		cw_put16(big + 8, 0x7f);
		cw_put16(big + 10, 16);
		cw_put32(big + 16, nrec);
		c = LZ4_compress_default((const char *)big, comp, (int)plen,
					 LZ4_compressBound((int)plen));
		CHECK(c > 0);
		put_seg(fd, CW_SEG_EVENTS, CW_SEGF_COLUMNAR | CW_SEGF_LZ4, 0, nrec, (uint32_t)plen,
			(uint32_t)c, comp, (size_t)c, 0, 0);
		CHECK(read_all(tmp_path, &ro) == -EINVAL);
		CHECK(has(&ro.d, "columnar payload: decodes to 67108880 bytes, more than the limit 67108864"));
		free(ro.data);
		free(big);
		free(comp);
		tmp_done(fd);
	}
}

/* ---- dump round trip ---- */

/* Every typed record, the context plane's too (mmap, samples), plus raw
 * ones. */
static const char *const script[] = {
	"kv ts=0 key=kernel_release value=\"6.18.0\"",
	"kv ts=0 key=hostname value=\"a \\\"quoted\\\" \\\\ name\\x01\"",
	"kv ts=0 key=empty value=\"\"",
	"task ts=5 tid=1 pid=1 ppid=0 comm=init exe=/sbin/init",
	"!seal meta",
	"switch ts=1000 cpu=0 prev=100/100 next=0/0 prev_state=1 prev_prio=120 next_prio=-20",
	"switch ts=1001 cpu=1 prev=100/100 next=101/100 prev_state=0 preempt=1 prev_prio=120 next_prio=120 prev_start=5 next_start=6",
	"switch ts=1002 cpu=1 flags=10 prev=101/100 next=100/100 prev_state=2 preempt=1 prev_prio=120 next_prio=120",
	"waking ts=1100 cpu=0 ctx=hardirq waker=100/100 wakee=101/100 target_cpu=1 prio=120",
	"wakeup ts=1050 cpu=1 waker=100/100 wakee=101/100 target_cpu=-1 prio=120 flags=3",
	"wakeup_new ts=1060 cpu=1 ctx=7 waker=1/1 wakee=2/2 target_cpu=0 prio=0",
	"fork ts=1200 cpu=0 parent=100/100 child=101/100 thread=1 clone_flags=0x3d0f00 comm=worker",
	"fork ts=1201 cpu=0 parent=100/100 child=102/102 fork_flags=0x6 thread=1 comm=\"sixteen chars ok\"",
	"exec ts=1300 cpu=0 task=100/100 old_tid=101 comm=ls filename=/bin/ls",
	"exit ts=1400 cpu=0 ctx=softirq task=101/100 group_dead=1 code=-9",
	"rename ts=1500 cpu=0 task=101/100 old=a new=\"b#c\"",
	"account ts=2000 cpu=3 window=1000000000 ring=sample class=io_uring written=100 lost=12",
	"account ts=2000 cpu=3 window=1 ring=9 class=99 written=0 lost=0",
	"raw type=0x7f size=24 ts=2100 cpu=1",
	"raw type=0x10 size=32 ts=2100 cpu=65535 body=0102030405060708090a0b0c0d0e0f10",
	"mmap ts=2200 cpu=0 flags=1 task=100/100 start=0x400000 len=0x1000 pgoff=0x0 prot=0x5 build_id=0102 path=/usr/bin/app",
	"mmap ts=2201 cpu=0 task=100/100 start=0x7f0000000000 len=0x1000 pgoff=0x2000 path=\"a b\"",
	"sample_cpu ts=2300 cpu=1 task=100/100 start=5 period=10101010 keep=0x100000000 kerr=-14 kernel=0xffffffff81000010,0x2 user=0x401000",
	"sample_offcpu ts=2301 cpu=1 task=100/100 keep=0x80000000 regs=0x1,0x2,0x3,0x4,0x5,0x6,0x7,0x8,0x9,0xa,0xb,0xc,0xd,0xe,0xf,0x10,0x11 stack=0011223344",
	"sample_cpu ts=2302 cpu=0 task=1/1 keep=0x1 regs=0x1,0x2,0x3",
	"!seal events",
	"!seal final",
};

/* Compile lines into records with the shared parser; write them with the
 * writer, sealing where the script says. @return number of records. */
static int compile(int fd, char **lines, int nlines, uint8_t **all, size_t *all_len)
{
	struct cw_writer_opts o = { 0, 0 };
	struct cw_writer *w = cw_writer__new(fd, &o);
	static uint8_t rec[CW_TEXT_REC_MAX];
	int nrec = 0;

	*all = NULL;
	*all_len = 0;
	for (int i = 0; i < nlines; i++) {
		struct cw_tok tok[CW_TEXT_MAXTOK];
		char *line = strdup(lines[i]), msg[256];
		const char *err = "";
		int n = cw_text_tokenize(line, tok, CW_TEXT_MAXTOK, &err);

		if (n < 0)
			fprintf(stderr, "  line %d: %s\n", i, err);
		CHECK(n >= 0);
		if (n > 0 && !strcmp(tok[0].key, "!seal")) {
			uint16_t t = !strcmp(tok[1].key, "meta")   ? CW_SEG_META :
				     !strcmp(tok[1].key, "events") ? CW_SEG_EVENTS :
								     CW_SEG_FINAL;
			CHECK(cw_writer__seal(w, t) == 0);
		} else if (n > 0 && tok[0].key[0] != '#') {
			int len = cw_text_build(tok, n, rec, msg, sizeof(msg));

			if (len < 0)
				fprintf(stderr, "  line %d: %s\n", i, msg);
			CHECK(len > 0);
			if (len > 0) {
				CHECK(cw_writer__append(w, rec, (size_t)len) == 0);
				*all = realloc(*all, *all_len + (size_t)len);
				memcpy(*all + *all_len, rec, (size_t)len);
				*all_len += (size_t)len;
				nrec++;
			}
		}
		free(line);
	}
	CHECK(cw_writer__seal(w, CW_SEG_EVENTS) == 0);
	cw_writer__free(w);
	return nrec;
}

static char *dump_file(const char *path)
{
	struct diags d = { .len = 0 };
	struct cw_reader_opts o = { diag_cb, &d };
	struct cw_reader *r = cw_reader__open(path, &o);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int werr;

	CHECK(r && f);
	CHECK(cw_dump_reader(f, r, &werr) == 0 && werr == 0);
	fclose(f);
	cw_reader__free(r);
	return text;
}

static int split_lines(char *text, char **lines, int max)
{
	int n = 0;

	for (char *s = strtok(text, "\n"); s && n < max; s = strtok(NULL, "\n"))
		lines[n++] = s;
	return n;
}

static void strip_comments(char *text)
{
	char *w = text;

	for (char *p = text; *p;) {
		char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);

		if (*p != '#') {
			memmove(w, p, n);
			w += n;
		}
		p += n;
	}
	*w = '\0';
}

static void test_dump_roundtrip(void)
{
	int nscript = (int)(sizeof(script) / sizeof(script[0]));
	char *lines[256], *text, *text2, *copy;
	uint8_t *a, *b;
	size_t alen, blen;
	int fd = tmp_open(), n, na, nb;
	char path1[4096];
	struct readout ro;

	na = compile(fd, (char **)script, nscript, &a, &alen);
	CHECK(na == nscript - 3);
	/* a record the typed form cannot print: switch with non-zero bytes in
	 * a kv's padding must come back as raw, byte-exact */
	{
		struct cw_writer_opts o = { 0, 0 };
		struct cw_writer *w = cw_writer__new(fd, &o);
		uint8_t rec[40] = { 0 };

		cw_put16(rec, CW_REC_META_KV);
		cw_put16(rec + 2, 40);
		cw_put16(rec + 16, 3);
		cw_put16(rec + 18, 2);
		memcpy(rec + 24, "keyvaXYZ", 8); /* XYZ in the padding */
		CHECK(cw_writer__append(w, rec, 40) == 0);
		CHECK(cw_writer__seal(w, CW_SEG_EVENTS) == 0);
		cw_writer__free(w);
		a = realloc(a, alen + 40);
		memcpy(a + alen, rec, 40);
		alen += 40;
	}
	snprintf(path1, sizeof(path1), "%s", tmp_path);

	text = dump_file(path1);
	CHECK(strstr(text, "# segment seq=0 type=meta offset=0 records=4\n"));
	CHECK(strstr(text, "\nkv ts=0 cpu=0 key=hostname value=\"a \\\"quoted\\\" \\\\ name\\x01\"\n"));
	CHECK(strstr(text, "\nfork ts=1201 cpu=0 parent=100/100 child=102/102 fork_flags=0x7 thread=1 clone_flags=0x0 comm=\"sixteen chars ok\"\n"));
	CHECK(strstr(text, "\nwaking ts=1100 cpu=0 ctx=hardirq waker=100/100"));
	CHECK(strstr(text, "\nrename ts=1500 cpu=0 task=101/100 old=a new=\"b#c\"\n"));
	/* The preempt flag has a key of its own; flags says the rest. */
	CHECK(strstr(text, "\nswitch ts=1001 cpu=1 prev=100/100 next=101/100 prev_state=0 preempt=1 prev_prio=120 next_prio=120 prev_start=5 next_start=6\n"));
	CHECK(strstr(text, "\nswitch ts=1002 cpu=1 flags=11 prev=101/100 next=100/100 prev_state=2 preempt=1 prev_prio=120 next_prio=120 wait=1\n"));
	CHECK(strstr(text, "\nraw type=0x1 size=40 ts=0 cpu=0 body=0300020000000000"));
	CHECK(strstr(text, "\n!seal final\n"));
	copy = strdup(text);
	n = split_lines(copy, lines, 256);

	/* compile the dump again: same records, same dump */
	tmp_done(-1);
	close(fd);
	fd = tmp_open();
	nb = compile(fd, lines, n, &b, &blen);
	CHECK(nb == na + 1);
	CHECK(blen == alen && !memcmp(a, b, alen));
	text2 = dump_file(tmp_path);
	/* The same but for the comment lines: the padded record was sealed
	 * by a second writer (seq 0), the recompiled one by the first. */
	strip_comments(text);
	strip_comments(text2);
	CHECK(!strcmp(text, text2));
	if (strcmp(text, text2))
		fprintf(stderr, "--- first dump:\n%s--- second dump:\n%s", text, text2);
	CHECK(read_all(tmp_path, &ro) == 4 && ro.st.clean_close);
	free(ro.data);
	unlink(path1);
	free(text);
	free(text2);
	free(copy);
	free(a);
	free(b);
	tmp_done(fd);
}

static void test_parser_errors(void)
{
	static const char *const bad[] = {
		"nosuch ts=1",	       "switch ts=abc",	     "switch bogus=1",
		"switch prev=1",       "switch ts=1 ts=2",   "exec comm=12345678901234567",
		"waking ctx=userland", "raw size=20",	     "raw size=24 body=00",
		"kv key=\"unterminated", "kv key=a\"b",	     "fork thread=2",
		"switch prev_prio=-2147483649", "exit code=0x1ffffffff", "switch ts",
		"switch preempt=2",    "waking preempt=1",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cw_tok tok[CW_TEXT_MAXTOK];
		char *line = strdup(bad[i]), msg[256];
		const char *err;
		static uint8_t rec[CW_TEXT_REC_MAX];
		int n = cw_text_tokenize(line, tok, CW_TEXT_MAXTOK, &err);

		if (n > 0)
			n = cw_text_build(tok, n, rec, msg, sizeof(msg));
		if (n >= 0)
			fprintf(stderr, "  accepted: %s\n", bad[i]);
		CHECK(n < 0);
		free(line);
	}
}

struct test {
	const char *name;
	void (*fn)(void);
};

int main(void)
{
	static const struct test tests[] = {
		{ "roundtrip", test_roundtrip },
		{ "meta_spill", test_meta_spill },
		{ "segment_order", test_segment_order },
		{ "raw_and_absolute", test_raw_and_absolute },
		{ "writer_rejects", test_writer_rejects },
		{ "big_record", test_big_record },
		{ "write_error", test_write_error },
		{ "header_crc", test_header_crc },
		{ "payload_crc", test_payload_crc },
		{ "truncated", test_truncated },
		{ "garbage", test_garbage },
		{ "newer_major", test_newer_major },
		{ "other_format", test_other_format },
		{ "hostile", test_hostile },
		{ "resync", test_resync },
		{ "columnar_roundtrip", test_columnar_roundtrip },
		{ "columnar_fallback", test_columnar_fallback },
		{ "old_layout", test_old_layout },
		{ "columnar_hostile", test_columnar_hostile },
		{ "dump_roundtrip", test_dump_roundtrip },
		{ "parser_errors", test_parser_errors },
	};
	int passed = 0, failed = 0;

	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		int before = failed_checks;

		rng_state = 0x1234567 + i;
		tests[i].fn();
		if (failed_checks == before) {
			printf("ok   %s\n", tests[i].name);
			passed++;
		} else {
			printf("FAIL %s\n", tests[i].name);
			failed++;
		}
	}
	printf("test_segio: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
