// SPDX-License-Identifier: MIT
/*
 * Segment writer: see segwriter.h for the interface and schema/format.md
 * for the bytes it produces.
 *
 * Records are copied into one growing buffer (no per-record allocation).
 * Sealing works on a second buffer so that the pending records stay
 * untouched until the segment is safely in the file: a failed write (full
 * disk) leaves the writer exactly as it was before the seal, and the caller
 * may retry or give up.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <lz4.h>
#include <zlib.h>

#include "schema/events.h"
#include "schema/format.h"
#include "capture/segwriter.h"

#define CW_REC_MAX_SIZE 65535u

struct cw_writer {
	int fd;
	size_t seg_size;
	int ts_delta;

	uint8_t *buf; /* pending records, absolute timestamps */
	size_t len, cap;
	uint32_t nrec;
	uint64_t first_ts, last_ts;

	uint8_t *tmp; /* delta-encoded copy of buf */
	size_t tmp_cap;
	uint8_t *out; /* header + compressed payload */
	size_t out_cap;

	uint64_t seq;
	struct cw_writer_stats st;
};

struct cw_writer *cw_writer__new(int fd, const struct cw_writer_opts *opts)
{
	struct cw_writer *w;
	size_t seg_size = opts && opts->segment_size ? opts->segment_size : CW_SEG_DEFAULT_RAW;

	/* A reader refuses segments above CW_SEG_MAX_RAW: never write one. */
	if (fd < 0 || seg_size > CW_SEG_MAX_RAW) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->fd = fd;
	w->seg_size = seg_size;
	w->ts_delta = !(opts && opts->no_ts_delta);
	return w;
}

static int grow(uint8_t **p, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 4096;
	uint8_t *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* Write all of @len bytes; @return 0 or -errno. Retries short writes and
 * EINTR, which a capture interrupted by SIGINT will see. */
static int write_full(int fd, const uint8_t *p, size_t len, size_t *done)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		*done += (size_t)n;
	}
	return 0;
}

int cw_writer__append(struct cw_writer *w, const void *rec, size_t len)
{
	const uint8_t *h = rec;
	uint64_t ts;
	int err;

	/* Sizes a multiple of 8 keep every record 8-byte aligned in the
	 * reader's buffer, which the analyzer relies on. */
	if (!w || !rec || len < sizeof(struct cw_hdr) || len > CW_REC_MAX_SIZE || len % 8 ||
	    cw_get16(h + 2) != len)
		return -EINVAL;

	if (w->len && w->len + len > w->seg_size) {
		err = cw_writer__seal(w, CW_SEG_EVENTS);
		if (err)
			return err;
	}
	err = grow(&w->buf, &w->cap, w->len + len);
	if (err)
		return err;
	memcpy(w->buf + w->len, rec, len);
	w->len += len;

	ts = cw_get64(h + 8);
	if (!w->nrec || ts < w->first_ts)
		w->first_ts = ts;
	if (!w->nrec || ts > w->last_ts)
		w->last_ts = ts;
	w->nrec++;
	return 0;
}

int cw_writer__seal(struct cw_writer *w, uint16_t seg_type)
{
	uint16_t flags = 0;
	uint64_t prev = 0;
	const uint8_t *payload;
	uint8_t *hdr;
	size_t stored, pos, done = 0;
	off_t start;
	int err, clen;

	if (!w || seg_type < CW_SEG_META || seg_type > CW_SEG_FINAL)
		return -EINVAL;
	if (!w->len && seg_type == CW_SEG_EVENTS)
		return 0;

	err = grow(&w->tmp, &w->tmp_cap, w->len ? w->len : 1);
	if (err)
		return err;
	err = grow(&w->out, &w->out_cap, CW_SEG_HDR_LEN + (size_t)LZ4_compressBound((int)w->len));
	if (err)
		return err;

	/* Delta timestamps: consecutive records are close in time, so the
	 * deltas are small numbers LZ4 compresses far better than absolute
	 * nanoseconds. Wrapping arithmetic keeps out-of-order records exact. */
	memcpy(w->tmp, w->buf, w->len);
	if (w->ts_delta) {
		flags |= CW_SEGF_TS_DELTA;
		for (pos = 0; pos < w->len;) {
			uint8_t *r = w->tmp + pos;
			uint64_t ts = cw_get64(r + 8);

			cw_put64(r + 8, ts - prev);
			prev = ts;
			pos += cw_get16(r + 2);
		}
	}

	payload = w->tmp;
	stored = w->len;
	if (w->len) {
		clen = LZ4_compress_default((const char *)w->tmp, (char *)w->out + CW_SEG_HDR_LEN,
					    (int)w->len, LZ4_compressBound((int)w->len));
		/* Incompressible data (or a failure) is stored raw: never let
		 * compression make a segment bigger. */
		if (clen > 0 && (size_t)clen < w->len) {
			flags |= CW_SEGF_LZ4;
			payload = w->out + CW_SEG_HDR_LEN;
			stored = (size_t)clen;
		}
	}

	hdr = w->out;
	memset(hdr, 0, CW_SEG_HDR_LEN);
	memcpy(hdr, CW_MAGIC, CW_MAGIC_LEN);
	cw_put16(hdr + 8, CW_FORMAT_MAJOR);
	cw_put16(hdr + 10, CW_FORMAT_MINOR);
	cw_put16(hdr + 12, seg_type);
	cw_put16(hdr + 14, flags);
	cw_put64(hdr + 16, w->seq);
	cw_put64(hdr + 24, w->nrec ? w->first_ts : 0);
	cw_put64(hdr + 32, w->nrec ? w->last_ts : 0);
	cw_put32(hdr + 40, w->nrec);
	cw_put32(hdr + 44, (uint32_t)w->len);
	cw_put32(hdr + 48, (uint32_t)stored);
	cw_put32(hdr + 52, (uint32_t)crc32(0L, payload, (uInt)stored));
	cw_put16(hdr + 56, CW_SEG_HDR_LEN);
	cw_put32(hdr + 60, (uint32_t)crc32(0L, hdr, 60));

	start = lseek(w->fd, 0, SEEK_CUR);
	err = write_full(w->fd, hdr, CW_SEG_HDR_LEN, &done);
	if (!err)
		err = write_full(w->fd, payload, stored, &done);
	if (err) {
		/* Take back a partial segment where the file allows it, so a
		 * retry appends to a clean file. A reader would resynchronise
		 * over the remains anyway. */
		if (done && start >= 0 && ftruncate(w->fd, start) == 0)
			lseek(w->fd, start, SEEK_SET);
		return err;
	}

	w->st.segments++;
	w->st.records += w->nrec;
	w->st.raw_bytes += w->len;
	w->st.file_bytes += CW_SEG_HDR_LEN + stored;
	w->seq++;
	w->len = 0;
	w->nrec = 0;
	w->first_ts = w->last_ts = 0;
	return 0;
}

size_t cw_writer__pending(const struct cw_writer *w)
{
	return w ? w->len : 0;
}

void cw_writer__stats(const struct cw_writer *w, struct cw_writer_stats *st)
{
	if (w)
		*st = w->st;
	else
		memset(st, 0, sizeof(*st));
}

void cw_writer__free(struct cw_writer *w)
{
	if (!w)
		return;
	free(w->buf);
	free(w->tmp);
	free(w->out);
	free(w);
}
