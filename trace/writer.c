// SPDX-License-Identifier: MIT
/*
 * Segment writer: see writer.h for the interface and schema/format.md
 * for the bytes it produces.
 *
 * Records are copied into one growing buffer (no per-record allocation).
 * Sealing works on a second buffer so that the pending records stay
 * untouched until the segment is safely in the file: a failed write (full
 * disk) leaves the writer exactly as it was before the seal, and the caller
 * may retry or give up.
 *
 * Sealing encodes the records columnar (CW_SEGF_COLUMNAR) before LZ4. LZ4
 * only finds repeats; it has no entropy coder, so a record stream where
 * every field of every record changes a little (timestamps, tids) gives it
 * few long matches. Grouping records by their first 8 bytes (type, size,
 * cpu, ctx, flags) and storing each group column by column puts the same
 * field of consecutive records of one kind next to each other: constant
 * fields become long runs, the high bytes of small timestamp deltas become
 * runs of zeros, and tids that repeat on one CPU become repeated strings.
 * Measured on a pipe ping-pong capture, this takes a segment from 6.3 to
 * about 1 byte per event. Two linear passes over the records and one
 * blocked transpose; no allocation once the buffers have reached their
 * size.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <lz4.h>

#include "schema/events.h"
#include "trace/format.h"
#include "trace/writer.h"
#include "trace/transpose.h"

#define CW_REC_MAX_SIZE 65535u
/* cpu is a u16: one last-timestamp slot per possible value. */
#define CPU_SLOTS 65536u

/* A columnar group: the records sharing their first 8 bytes. */
struct col_group {
	uint64_t key;  /* record bytes 0..7, little-endian */
	uint32_t count;
	uint32_t row;  /* next row to fill */
	size_t base;   /* offset of the group's matrix, from the first matrix */
	uint16_t size;
	uint16_t cpu;
};

struct cw_writer {
	int fd;
	size_t seg_size;
	int ts_delta;

	uint8_t *buf; /* pending records, absolute timestamps */
	size_t len, cap;
	uint32_t nrec;
	uint64_t first_ts, last_ts;

	uint8_t *tmp; /* encoded payload: columnar, or a delta-encoded copy of buf */
	size_t tmp_cap;
	uint8_t *rows; /* columnar: each group's rows, row by row, before transposing */
	size_t rows_cap;
	uint8_t *out; /* header + compressed payload */
	size_t out_cap;

	/* Columnar encoding state, reused from seal to seal. The groups
	 * and each record's group are found as the records are appended,
	 * while each is still in the cache: a pass over the sealed buffer
	 * missed it once a record. */
	struct col_group *grp;
	size_t grp_cap;
	uint32_t ngrp;
	bool col_over; /* more than CW_COL_MAX_GROUPS groups: plain records */
	uint32_t *slot; /* open-addressing hash of grp: index + 1, 0 = empty */
	size_t nslot;
	uint16_t *ord; /* group index of each record */
	size_t ord_cap;
	uint64_t *cpu_ts; /* CPU_SLOTS entries: last ts seen per cpu */

	uint64_t seq;
	/* The type of the segment being filled, as an append past the
	 * segment size or the limit and cw_writer__split seal it: META (a
	 * file begins with its metadata) until cw_writer__seal ends the
	 * metadata, EVENTS after. */
	uint16_t fill_type;
	uint64_t limit; /* cw_writer__set_limit; 0: none */
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
	w->fill_type = CW_SEG_META;
	return w;
}

/*
 * Room for @need elements of @elem bytes in @p, whose capacity is *cap
 * elements; doubles. @return the (possibly moved) buffer, or NULL when out
 * of memory, @p and *cap then unchanged.
 */
static void *grow_n(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : (4096 + elem - 1) / elem;
	void *q;

	if (need <= *cap)
		return p;
	while (n < need)
		n *= 2;
	q = realloc(p, n * elem);
	if (q)
		*cap = n;
	return q;
}

static int grow(uint8_t **p, size_t *cap, size_t need)
{
	uint8_t *q = grow_n(*p, cap, need, 1);

	if (!q)
		return -ENOMEM;
	*p = q;
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

uint64_t cw_writer__worst_case(size_t raw, size_t nrec)
{
	/* A seal stores the encoded payload raw when LZ4 does not make it
	 * smaller, so the stored bytes are at most the encoded ones. The
	 * columnar encoding adds its header, a group entry for at most every
	 * record and a 2-byte index per record, and takes the 8-byte key off
	 * every record; the plain encoding adds nothing. */
	return CW_SEG_HDR_LEN + CW_COL_HDR_LEN + raw +
	       (uint64_t)nrec * (CW_COL_GROUP_LEN + 2 - CW_COL_KEY_LEN);
}

int cw_writer__set_limit(struct cw_writer *w, uint64_t max_bytes)
{
	if (!w || (max_bytes && w->st.file_bytes + (w->len ? cw_writer__worst_case(w->len, w->nrec)
							  : 0) > max_bytes))
		return -EINVAL;
	w->limit = max_bytes;
	return 0;
}

/* Would the pending records plus one of @len bytes still fit the limit? */
static int fits(const struct cw_writer *w, size_t len)
{
	return !w->limit ||
	       w->st.file_bytes + cw_writer__worst_case(w->len + len, w->nrec + 1) <= w->limit;
}

static int seal_as(struct cw_writer *w, uint16_t seg_type);
static int col_group(struct cw_writer *w, const uint8_t *r);

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

	/* Sealed as the segment being filled: records past the segment
	 * size while the metadata is written (the snapshots outgrow a small
	 * segment) continue it in another META segment, never an EVENTS
	 * segment before it. */
	if (w->len && (w->len + len > w->seg_size || !fits(w, len))) {
		err = seal_as(w, w->fill_type);
		if (err)
			return err;
	}
	if (!fits(w, len))
		return -EFBIG;
	err = grow(&w->buf, &w->cap, w->len + len);
	if (err)
		return err;
	if (w->ts_delta && !w->col_over) {
		err = col_group(w, h);
		if (err)
			return err;
	}
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

static uint32_t slot_of(uint64_t key, size_t nslot)
{
	/* Fibonacci hashing; nslot is a power of two. */
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (uint32_t)(nslot - 1);
}

/* Rebuild the group hash with room for @ng groups at load <= 1/2. */
static int col_rehash(struct cw_writer *w, uint32_t ng)
{
	size_t n = w->nslot ? w->nslot : 64;
	uint32_t *s;

	while (n < 2 * (size_t)ng)
		n *= 2;
	if (n != w->nslot) {
		s = realloc(w->slot, n * sizeof(*s));
		if (!s)
			return -ENOMEM;
		w->slot = s;
		w->nslot = n;
	}
	memset(w->slot, 0, w->nslot * sizeof(*w->slot));
	for (uint32_t g = 0; g < ng; g++) {
		uint32_t i = slot_of(w->grp[g].key, w->nslot);

		while (w->slot[i])
			i = (i + 1) & (uint32_t)(w->nslot - 1);
		w->slot[i] = g + 1;
	}
	return 0;
}

/* Record @r, about to be appended, joins its group (a new one at its
 * first appearance): the pass that would otherwise start the encoding.
 * Past CW_COL_MAX_GROUPS groups the segment will be plain records. */
static int col_group(struct cw_writer *w, const uint8_t *r)
{
	uint64_t key = cw_get64(r);
	uint32_t k, g;
	void *q;

	if (!w->nslot) {
		int err = col_rehash(w, 0);

		if (err)
			return err;
	}
	q = grow_n(w->ord, &w->ord_cap, (size_t)w->nrec + 1, sizeof(*w->ord));
	if (!q)
		return -ENOMEM;
	w->ord = q;
	k = slot_of(key, w->nslot);
	while (w->slot[k] && w->grp[w->slot[k] - 1].key != key)
		k = (k + 1) & (uint32_t)(w->nslot - 1);
	if (w->slot[k]) {
		g = w->slot[k] - 1;
	} else {
		if (w->ngrp == CW_COL_MAX_GROUPS) {
			w->col_over = true;
			return 0;
		}
		q = grow_n(w->grp, &w->grp_cap, (size_t)w->ngrp + 1, sizeof(*w->grp));
		if (!q)
			return -ENOMEM;
		w->grp = q;
		g = w->ngrp++;
		w->grp[g] = (struct col_group){ .key = key, .size = cw_get16(r + 2),
						.cpu = cw_get16(r + 4) };
		if (2 * (size_t)w->ngrp > w->nslot) {
			int err = col_rehash(w, w->ngrp);

			if (err) {
				w->ngrp--;
				return err;
			}
		} else {
			w->slot[k] = w->ngrp;
		}
	}
	w->grp[g].count++;
	w->ord[w->nrec] = (uint16_t)g;
	return 0;
}

/* The next segment's records start with no group. */
static void col_reset(struct cw_writer *w)
{
	w->ngrp = 0;
	w->col_over = false;
	if (w->slot)
		memset(w->slot, 0, w->nslot * sizeof(*w->slot));
}

/*
 * Encode the pending records columnar into w->tmp; the layout is in
 * trace/format.h and format.md. @return the encoded length; 0 when the
 * records do not fit the layout (more than CW_COL_MAX_GROUPS groups, or an
 * encoding longer than CW_SEG_MAX_RAW, which only pathological segments
 * reach) and the caller writes plain records instead; or -ENOMEM.
 */
static ssize_t col_encode(struct cw_writer *w)
{
	size_t pos, off, iw, enc_len;
	uint32_t ng, i;
	int err;

	if (w->col_over)
		return 0;
	if (!w->cpu_ts) {
		w->cpu_ts = calloc(CPU_SLOTS, sizeof(*w->cpu_ts));
		if (!w->cpu_ts)
			return -ENOMEM;
	}
	ng = w->ngrp;

	iw = ng > 256 ? 2 : 1;
	/* Every record gives up its first 8 bytes to the group table. */
	enc_len = CW_COL_HDR_LEN + (size_t)ng * CW_COL_GROUP_LEN + iw * w->nrec + w->len -
		  (size_t)CW_COL_KEY_LEN * w->nrec;
	if (enc_len > CW_SEG_MAX_RAW)
		return 0;
	err = grow(&w->tmp, &w->tmp_cap, enc_len);
	if (err)
		return err;

	cw_put32(w->tmp, w->nrec);
	cw_put32(w->tmp + 4, ng);
	off = CW_COL_HDR_LEN;
	for (uint32_t g = 0; g < ng; g++) {
		cw_put64(w->tmp + off, w->grp[g].key);
		cw_put32(w->tmp + off + 8, w->grp[g].count);
		off += CW_COL_GROUP_LEN;
	}
	/* Two-byte indexes are stored as two planes: the high bytes change
	 * rarely and compress apart from the low ones. */
	for (i = 0; i < w->nrec; i++)
		w->tmp[off + i] = (uint8_t)w->ord[i];
	if (iw == 2)
		for (i = 0; i < w->nrec; i++)
			w->tmp[off + w->nrec + i] = (uint8_t)(w->ord[i] >> 8);
	off += iw * w->nrec;
	err = grow(&w->rows, &w->rows_cap, enc_len - off);
	if (err)
		return err;
	for (size_t g = 0, m = 0; g < ng; g++) {
		w->grp[g].base = m;
		w->grp[g].row = 0; /* a seal whose write failed is retried */
		m += (size_t)w->grp[g].count * (w->grp[g].size - CW_COL_KEY_LEN);
		w->cpu_ts[w->grp[g].cpu] = 0;
	}

	/* Each record's bytes 8.. become the next row of its group (its
	 * group was found as it was appended, col_group()).
	 * Timestamps become deltas to the previous record of the same CPU:
	 * one ring drains several CPUs interleaved, and a delta across CPUs
	 * is larger and noisier than one along a CPU. */
	for (pos = 0, i = 0; pos < w->len; i++) {
		const uint8_t *r = w->buf + pos;
		struct col_group *g = &w->grp[w->ord[i]];
		size_t rl = g->size - CW_COL_KEY_LEN;
		uint8_t *dst = w->rows + g->base + g->row++ * rl;
		uint64_t ts = cw_get64(r + 8);

		cw_put64(dst, ts - w->cpu_ts[g->cpu]);
		w->cpu_ts[g->cpu] = ts;
		memcpy(dst + 8, r + 16, rl - 8);
		pos += g->size;
	}
	/* Then each group is transposed. */
	for (uint32_t g = 0; g < ng; g++)
		cw_transpose(w->tmp + off + w->grp[g].base, w->rows + w->grp[g].base,
			     w->grp[g].count, w->grp[g].size - CW_COL_KEY_LEN, true);
	return (ssize_t)enc_len;
}

static int seal_as(struct cw_writer *w, uint16_t seg_type)
{
	uint16_t flags = 0;
	uint64_t prev = 0;
	struct cw_seg_hdr sh;
	const uint8_t *payload;
	uint8_t *hdr;
	size_t in_len = 0, stored, pos, done = 0;
	ssize_t enc = 0;
	off_t start;
	int err, clen;

	if (!w->len && seg_type == CW_SEG_EVENTS)
		return 0;

	/* no_ts_delta (tests) means plain records, no transform at all. */
	if (w->ts_delta && w->nrec) {
		enc = col_encode(w);
		if (enc < 0)
			return (int)enc;
	}
	if (enc > 0) {
		flags |= CW_SEGF_COLUMNAR;
		in_len = (size_t)enc;
	} else {
		err = grow(&w->tmp, &w->tmp_cap, w->len ? w->len : 1);
		if (err)
			return err;
		in_len = w->len;
		/* Delta timestamps: consecutive records are close in time,
		 * so the deltas are small numbers LZ4 compresses far better
		 * than absolute nanoseconds. Wrapping arithmetic keeps
		 * out-of-order records exact. (No memcpy from a NULL buf:
		 * an empty META segment comes before any record.) */
		if (w->len)
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
	}
	err = grow(&w->out, &w->out_cap, CW_SEG_HDR_LEN + (size_t)LZ4_compressBound((int)in_len));
	if (err)
		return err;

	payload = w->tmp;
	stored = in_len;
	if (in_len) {
		clen = LZ4_compress_default((const char *)w->tmp, (char *)w->out + CW_SEG_HDR_LEN,
					    (int)in_len, LZ4_compressBound((int)in_len));
		/* Incompressible data (or a failure) is stored raw: never let
		 * compression make a segment bigger. */
		if (clen > 0 && (size_t)clen < in_len) {
			flags |= CW_SEGF_LZ4;
			payload = w->out + CW_SEG_HDR_LEN;
			stored = (size_t)clen;
		}
	}

	hdr = w->out;
	sh = (struct cw_seg_hdr){
		.major = CW_FORMAT_MAJOR,
		.minor = CW_FORMAT_MINOR,
		.seg_type = seg_type,
		.seg_flags = flags,
		.seq = w->seq,
		.first_ts = w->nrec ? w->first_ts : 0,
		.last_ts = w->nrec ? w->last_ts : 0,
		.nrec = w->nrec,
		.raw_len = (uint32_t)in_len,
		.stored_len = (uint32_t)stored,
		.payload_crc = cw_crc32(payload, stored),
		.hdr_len = CW_SEG_HDR_LEN,
	};
	cw_seg_hdr__encode(&sh, hdr);
	/* append() keeps the worst case within the limit; this only guards
	 * the segments it does not see coming (an empty META or FINAL). */
	if (w->limit && w->st.file_bytes + CW_SEG_HDR_LEN + stored > w->limit)
		return -EFBIG;

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
	col_reset(w);
	return 0;
}

int cw_writer__seal(struct cw_writer *w, uint16_t seg_type)
{
	int err;

	if (!w || seg_type < CW_SEG_META || seg_type > CW_SEG_FINAL)
		return -EINVAL;
	err = seal_as(w, seg_type);
	if (!err)
		w->fill_type = CW_SEG_EVENTS;
	return err;
}

int cw_writer__split(struct cw_writer *w)
{
	if (!w)
		return -EINVAL;
	return w->len ? seal_as(w, w->fill_type) : 0;
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
	free(w->rows);
	free(w->grp);
	free(w->slot);
	free(w->ord);
	free(w->cpu_ts);
	free(w);
}
