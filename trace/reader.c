// SPDX-License-Identifier: MIT
/*
 * Segment reader: see reader.h for the interface and schema/format.md
 * for the format and its validity, truncation and resynchronisation rules,
 * which this file enforces.
 *
 * The file is read with pread, one segment at a time, never mapped whole:
 * memory is bounded by the largest valid segment (stored, decompressed and,
 * for a columnar payload, decoded: each capped by CW_SEG_MAX_RAW or its LZ4
 * bound) plus one fixed scan buffer and the columnar decoder's tables,
 * whatever the file size.
 * Nothing is allocated from a size field until the header checksum has
 * vouched for it, the caps have bounded it and the file has been seen to
 * hold that many bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lz4.h>

#include "schema/events.h"
#include "trace/format.h"
#include "trace/reader.h"
#include "trace/transpose.h"

/* Resynchronisation reads the file in chunks of this size. */
#define SCAN_CHUNK (64u << 10)
/* cpu is a u16: one last-timestamp slot per possible value. */
#define CPU_SLOTS 65536u

/* Decoder state of one columnar group. */
struct col_group {
	uint32_t base;  /* offset of its matrix from the first matrix */
	uint32_t count; /* records, from the group table */
	uint32_t row;   /* records decoded so far */
	uint16_t size;
	uint16_t cpu;
};

enum { ST_READING, ST_EOF, ST_ERROR };

struct cw_reader {
	int fd;
	uint64_t size;
	uint64_t pos; /* where the next segment header is expected */
	struct cw_reader_opts opts;

	uint8_t *sbuf; /* stored payload */
	size_t scap;
	uint8_t *rbuf; /* decompressed payload */
	size_t rcap;
	uint8_t *dbuf; /* decoded records of a columnar payload */
	size_t dcap;
	uint8_t *rows; /* columnar matrices transposed back, row by row */
	size_t rows_cap;
	struct col_group *cg;
	size_t cg_cap;
	uint64_t *cpu_ts; /* CPU_SLOTS entries, allocated at the first columnar segment */
	uint8_t *scan; /* SCAN_CHUNK bytes */

	int state;
	int started;
	int err;	   /* returned again and again once in ST_ERROR */
	int starts_magic;  /* the file's first 8 bytes are the magic */
	int have_seq;
	uint64_t last_seq;
	int damage_since_valid;
	uint16_t last_type; /* of the last segment handed out; 0: none yet */
	uint64_t last_type_seq; /* and its seq */
	int past_meta; /* an EVENTS or FINAL segment was handed out */
	uint64_t first_misplaced; /* seq of the first META segment out of order */
	uint64_t nvalid; /* segments with a valid header that were accepted */
	struct cw_reader_stats st;
};

static void diag_default(void *ctx, enum cw_diag_level level, const char *msg)
{
	static const char *const names[] = { "note", "warning", "error" };

	(void)ctx;
	fprintf(stderr, "causeway-analyze: %s: %s\n", names[level], msg);
}

__attribute__((format(printf, 3, 4))) static void diag(struct cw_reader *r,
							enum cw_diag_level level,
							const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->opts.diag)
		r->opts.diag(r->opts.diag_ctx, level, msg);
	else
		diag_default(NULL, level, msg);
}

/* @return bytes read (short only at end of file) or -errno. */
static ssize_t pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (uint8_t *)buf + done, len - done, (off_t)(off + done));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int grow(uint8_t **p, size_t *cap, size_t need)
{
	uint8_t *q;

	if (need <= *cap)
		return 0;
	/* No geometric growth: @need is already capped, and a realloc per
	 * new maximum is rare. */
	q = realloc(*p, need);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = need;
	return 0;
}

struct cw_reader *cw_reader__open(const char *path, const struct cw_reader_opts *opts)
{
	struct cw_reader *r;
	struct stat sb;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fd = -1;
	if (opts)
		r->opts = *opts;
	r->scan = malloc(SCAN_CHUNK);
	if (!r->scan) {
		err = ENOMEM;
		goto fail;
	}
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		err = errno;
		goto fail;
	}
	if (fstat(r->fd, &sb)) {
		err = errno;
		goto fail;
	}
	if (S_ISDIR(sb.st_mode)) {
		err = EISDIR;
		goto fail;
	}
	/* The reader needs to know the file size to tell a truncated tail
	 * from damage: no pipes. */
	if (!S_ISREG(sb.st_mode)) {
		err = ESPIPE;
		goto fail;
	}
	r->size = (uint64_t)sb.st_size;
	r->st.file_size = r->size;
	return r;
fail:
	cw_reader__free(r);
	errno = err;
	return NULL;
}

/* A position where fewer than 64 bytes remain and those bytes begin like
 * the magic: the header of a segment the capture did not finish. */
static int is_partial_header(const uint8_t *b, uint64_t remain)
{
	size_t n = remain < CW_MAGIC_LEN ? (size_t)remain : CW_MAGIC_LEN;

	return remain && remain < CW_SEG_HDR_LEN && !memcmp(b, CW_MAGIC, n);
}

/*
 * Find the first position >= @from holding a segment header with the magic
 * and a valid header checksum, or the start of a partial header in the last
 * 63 bytes. *out = r->size when there is none. Linear in the bytes scanned:
 * memmem over chunks, a CRC only where the magic matches.
 */
static int find_header(struct cw_reader *r, uint64_t from, uint64_t *out)
{
	uint64_t cur = from, tail;
	uint8_t hb[CW_SEG_HDR_LEN];
	ssize_t n;

	while (cur < r->size) {
		size_t want = r->size - cur < SCAN_CHUNK ? (size_t)(r->size - cur) : SCAN_CHUNK;
		size_t off = 0;

		n = pread_full(r->fd, r->scan, want, cur);
		if (n < 0)
			return (int)n;
		if ((size_t)n < want)
			return -EIO; /* the file shrank under us */
		while (off + CW_MAGIC_LEN <= want) {
			uint8_t *p = memmem(r->scan + off, want - off, CW_MAGIC, CW_MAGIC_LEN);
			uint64_t q;

			if (!p)
				break;
			off = (size_t)(p - r->scan);
			q = cur + off;
			if (q + CW_SEG_HDR_LEN <= r->size) {
				const uint8_t *b = p;

				if (off + CW_SEG_HDR_LEN > want) {
					n = pread_full(r->fd, hb, sizeof(hb), q);
					if (n < 0)
						return (int)n;
					if (n != sizeof(hb))
						return -EIO;
					b = hb;
				}
				if (cw_seg_hdr__valid(b)) {
					*out = q;
					return 0;
				}
			}
			off++;
		}
		if (cur + want >= r->size)
			break;
		/* Overlap so a magic across the chunk boundary is seen. */
		cur += want - (CW_MAGIC_LEN - 1);
	}

	tail = r->size > CW_SEG_HDR_LEN - 1 ? r->size - (CW_SEG_HDR_LEN - 1) : 0;
	if (tail < from)
		tail = from;
	if (tail < r->size) {
		size_t len = (size_t)(r->size - tail);

		n = pread_full(r->fd, hb, len, tail);
		if (n < 0)
			return (int)n;
		if ((size_t)n != len)
			return -EIO;
		for (size_t i = 0; i < len; i++) {
			if (is_partial_header(hb + i, len - i)) {
				*out = tail + i;
				return 0;
			}
		}
	}
	*out = r->size;
	return 0;
}

/*
 * Damage began at @start; the damaged segment's own extent (if its header
 * could be trusted) ends at @end. Continue at @next (a header position found
 * by find_header), counting what is passed over.
 */
static void skip_to(struct cw_reader *r, uint64_t start, uint64_t end, uint64_t next)
{
	r->st.bytes_skipped += next - start;
	if (next > end)
		diag(r, CW_DIAG_WARN, "skipped %llu bytes at offset %llu (no valid segment header)",
		     (unsigned long long)(next - end), (unsigned long long)end);
	r->damage_since_valid = 1;
	r->pos = next;
}

/* Resynchronise after damage at @start. */
static int resync(struct cw_reader *r, uint64_t start, uint64_t end)
{
	uint64_t next;
	int err = find_header(r, start + 1, &next);

	if (err)
		return err;
	skip_to(r, start, end, next);
	return 0;
}

__attribute__((format(printf, 4, 5))) static int damaged(struct cw_reader *r,
							  const struct cw_seg_hdr *h,
							  uint64_t end, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	diag(r, CW_DIAG_WARN, "segment %llu at offset %llu: %s; skipped",
	     (unsigned long long)h->seq, (unsigned long long)r->pos, what);
	r->st.segments_damaged++;
	return resync(r, r->pos, end);
}

static int at_eof(struct cw_reader *r)
{
	if (r->state == ST_EOF)
		return 0;
	if (!r->nvalid) {
		if (r->starts_magic)
			diag(r, CW_DIAG_ERROR, "no valid segment in the file: nothing to read");
		else
			diag(r, CW_DIAG_ERROR, "not a causeway trace (no valid segment)");
		r->state = ST_ERROR;
		r->err = -EINVAL;
		return r->err;
	}
	if (r->st.meta_misplaced > 1)
		diag(r, CW_DIAG_WARN,
		     "%llu META segments in all came after an EVENTS or FINAL segment, the first "
		     "segment %llu; their records were read",
		     (unsigned long long)r->st.meta_misplaced, (unsigned long long)r->first_misplaced);
	if (!r->st.clean_close)
		diag(r, CW_DIAG_WARN,
		     "no final segment: the capture was not closed cleanly; reading what is there");
	r->state = ST_EOF;
	return 0;
}

static void note_seq(struct cw_reader *r, uint64_t seq)
{
	if (r->have_seq && seq > r->last_seq + 1) {
		r->st.seq_gaps += seq - r->last_seq - 1;
		/* After reported damage the gap is already explained. */
		if (!r->damage_since_valid)
			diag(r, CW_DIAG_WARN,
			     "segment %llu at offset %llu: %llu segments missing after segment %llu",
			     (unsigned long long)seq, (unsigned long long)r->pos,
			     (unsigned long long)(seq - r->last_seq - 1),
			     (unsigned long long)r->last_seq);
	} else if (r->have_seq && seq <= r->last_seq) {
		diag(r, CW_DIAG_WARN,
		     "segment %llu at offset %llu: sequence number goes back (previous segment %llu)",
		     (unsigned long long)seq, (unsigned long long)r->pos,
		     (unsigned long long)r->last_seq);
	}
	r->have_seq = 1;
	r->last_seq = seq;
	r->damage_since_valid = 0;
}

static const char *seg_name(uint16_t t)
{
	return t == CW_SEG_META ? "META" : t == CW_SEG_EVENTS ? "EVENTS" : "FINAL";
}

/*
 * Segment order (format.md, "Segment order"): the metadata comes first.
 * Order is not damage: a segment out of place is warned about and read
 * like any other, since the analyzer takes each record by its own type,
 * not by its segment's, and a metadata key read late still counts (the
 * last value wins). A run of misplaced META segments (a writer that let
 * its snapshots spill into EVENTS segments wrote hundreds) is warned
 * about at its first and counted at the end.
 */
static void note_order(struct cw_reader *r, const struct cw_seg_hdr *h)
{
	if (!r->last_type && h->seg_type != CW_SEG_META) {
		r->st.meta_not_first = 1;
		diag(r, CW_DIAG_WARN,
		     "segment %llu at offset %llu: the first segment is %s, not META: the metadata "
		     "is missing or out of place; reading on",
		     (unsigned long long)h->seq, (unsigned long long)r->pos, seg_name(h->seg_type));
	} else if (h->seg_type == CW_SEG_META && r->past_meta && !r->st.meta_misplaced++) {
		r->first_misplaced = h->seq;
		diag(r, CW_DIAG_WARN,
		     "segment %llu at offset %llu: META segment after %s segment %llu: the metadata "
		     "belongs before every EVENTS segment; its records are read anyway",
		     (unsigned long long)h->seq, (unsigned long long)r->pos, seg_name(r->last_type),
		     (unsigned long long)r->last_type_seq);
	}
	r->past_meta |= h->seg_type != CW_SEG_META;
	r->last_type = h->seg_type;
	r->last_type_seq = h->seq;
}

__attribute__((format(printf, 3, 4))) static int col_bad(char *why, size_t len, const char *fmt,
							  ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return 1;
}

/*
 * Undo the columnar encoding of the h->raw_len bytes at @enc into r->dbuf;
 * schema/format.md has the layout and the rules checked here. Every count,
 * size and index is checked against the others and against raw_len before
 * a byte is read through it; the group table (at most CW_COL_MAX_GROUPS
 * entries) is the only allocation before the decoded length is known to be
 * below CW_SEG_MAX_RAW.
 * @return 0 with *len the decoded length; 1 when the payload is damaged,
 * with @why saying how; or -ENOMEM.
 */
static int col_decode(struct cw_reader *r, const struct cw_seg_hdr *h, const uint8_t *enc,
		      size_t *len, char *why, size_t wlen)
{
	uint64_t off, mat, dec = 0, sum = 0;
	uint32_t nrec, ng, seen = 0;
	size_t iw, idx, pos = 0;
	void *q;
	int err;

	if (h->raw_len < CW_COL_HDR_LEN)
		return col_bad(why, wlen, "%u bytes, shorter than its %u-byte header", h->raw_len,
			       CW_COL_HDR_LEN);
	nrec = cw_get32(enc);
	ng = cw_get32(enc + 4);
	if (nrec != h->nrec)
		return col_bad(why, wlen, "holds %u records, the segment header says %u", nrec,
			       h->nrec);
	if (ng > CW_COL_MAX_GROUPS || ng > nrec)
		return col_bad(why, wlen, "%u groups for %u records", ng, nrec);
	iw = ng > 256 ? 2 : 1;
	idx = CW_COL_HDR_LEN + (size_t)ng * CW_COL_GROUP_LEN;
	off = idx + (uint64_t)iw * nrec;
	if (off > h->raw_len)
		return col_bad(why, wlen,
			       "group table and indexes need %llu bytes, the payload holds %u",
			       (unsigned long long)off, h->raw_len);

	mat = off;
	if (ng > r->cg_cap) {
		q = realloc(r->cg, (size_t)ng * sizeof(*r->cg));
		if (!q)
			return -ENOMEM;
		r->cg = q;
		r->cg_cap = ng;
	}
	for (uint32_t g = 0; g < ng; g++) {
		const uint8_t *t = enc + CW_COL_HDR_LEN + (size_t)g * CW_COL_GROUP_LEN;
		struct col_group *c = &r->cg[g];

		c->size = cw_get16(t + 2);
		c->cpu = cw_get16(t + 4);
		c->count = cw_get32(t + 8);
		c->row = 0;
		if (c->size < sizeof(struct cw_hdr) || c->size % 8)
			return col_bad(why, wlen, "group %u (type 0x%x): bad record size %u", g,
				       cw_get16(t), c->size);
		if (!c->count)
			return col_bad(why, wlen, "group %u (type 0x%x): no records", g, cw_get16(t));
		/* off only grows and is checked each time, so it stays far
		 * below overflow and base fits in 32 bits. */
		c->base = (uint32_t)(off - mat);
		off += (uint64_t)c->count * (c->size - CW_COL_KEY_LEN);
		if (off > h->raw_len)
			return col_bad(why, wlen,
				       "group %u (type 0x%x): %u records of %u bytes run past the payload end",
				       g, cw_get16(t), c->count, c->size);
		sum += c->count;
		dec += (uint64_t)c->count * c->size;
	}
	if (sum != nrec)
		return col_bad(why, wlen, "group counts add up to %llu records, not %u",
			       (unsigned long long)sum, nrec);
	if (off != h->raw_len)
		return col_bad(why, wlen, "layout ends at %llu, the payload holds %u bytes",
			       (unsigned long long)off, h->raw_len);
	if (dec > CW_SEG_MAX_RAW)
		return col_bad(why, wlen, "decodes to %llu bytes, more than the limit %u",
			       (unsigned long long)dec, CW_SEG_MAX_RAW);

	err = grow(&r->dbuf, &r->dcap, (size_t)dec + 1);
	if (!err)
		err = grow(&r->rows, &r->rows_cap, (size_t)(off - mat) + 1);
	if (err)
		return err;
	if (!r->cpu_ts) {
		r->cpu_ts = calloc(CPU_SLOTS, sizeof(*r->cpu_ts));
		if (!r->cpu_ts)
			return -ENOMEM;
	}
	/* The table holds: every matrix lies inside the payload. */
	for (uint32_t g = 0; g < ng; g++) {
		struct col_group *c = &r->cg[g];

		cw_transpose(r->rows + c->base, enc + mat + c->base, c->count,
			     c->size - CW_COL_KEY_LEN, false);
		/* Every record's cpu is one of the groups': reset just those. */
		r->cpu_ts[c->cpu] = 0;
	}

	/* Interleave the groups' rows in payload order. A group index is
	 * checked before use, and so is its row (below its count): every
	 * row read lies in that group's rows, and every record written fits
	 * in dec bytes because the counts add up to nrec. */
	for (uint32_t i = 0; i < nrec; i++) {
		uint32_t g = enc[idx + i];
		const uint8_t *src;
		struct col_group *c;
		size_t rl;
		uint64_t ts;

		if (iw == 2)
			g |= (uint32_t)enc[idx + nrec + i] << 8;
		if (g >= ng)
			return col_bad(why, wlen, "record %u names group %u of %u", i, g, ng);
		c = &r->cg[g];
		if (!c->row && g != seen)
			return col_bad(why, wlen, "record %u: group %u appears before group %u", i,
				       g, seen);
		if (c->row == c->count)
			return col_bad(why, wlen, "record %u: group %u has only %u records", i, g,
				       c->count);
		seen += !c->row;
		rl = c->size - CW_COL_KEY_LEN;
		src = r->rows + c->base + (size_t)c->row++ * rl;
		memcpy(r->dbuf + pos, enc + CW_COL_HDR_LEN + (size_t)g * CW_COL_GROUP_LEN,
		       CW_COL_KEY_LEN);
		ts = r->cpu_ts[c->cpu] + cw_get64(src);
		r->cpu_ts[c->cpu] = ts;
		cw_put64(r->dbuf + pos + 8, ts);
		memcpy(r->dbuf + pos + 16, src + 8, rl - 8);
		pos += c->size;
	}
	*len = pos;
	return 0;
}

/*
 * Check and decode the payload of the segment whose header @h is at r->pos
 * and which lies wholly inside the file. @return 1 when valid (*seg filled),
 * 0 when damaged (reported, r->pos moved on), or -errno.
 */
static int read_payload(struct cw_reader *r, const struct cw_seg_hdr *h, struct cw_segment *seg)
{
	uint64_t end = r->pos + h->hdr_len + h->stored_len;
	uint64_t prev = 0, lo = 0, hi = 0;
	uint8_t *data;
	size_t pos = 0, len = h->raw_len;
	uint32_t n = 0;
	ssize_t got;
	int err;

	/* +1: a zero-length payload still gets a buffer. */
	err = grow(&r->sbuf, &r->scap, (size_t)h->stored_len + 1);
	if (err)
		return err;
	got = pread_full(r->fd, r->sbuf, h->stored_len, r->pos + h->hdr_len);
	if (got < 0)
		return (int)got;
	if ((size_t)got != h->stored_len)
		return -EIO;
	if (cw_crc32(r->sbuf, h->stored_len) != h->payload_crc)
		return damaged(r, h, end, "payload checksum mismatch");

	data = r->sbuf;
	if (h->seg_flags & CW_SEGF_LZ4) {
		int dl;

		err = grow(&r->rbuf, &r->rcap, (size_t)h->raw_len + 1);
		if (err)
			return err;
		dl = LZ4_decompress_safe((const char *)r->sbuf, (char *)r->rbuf,
					 (int)h->stored_len, (int)h->raw_len);
		if (dl < 0 || (uint32_t)dl != h->raw_len)
			return damaged(r, h, end, "LZ4 payload does not decompress to %u bytes",
				       h->raw_len);
		data = r->rbuf;
	}
	if (h->seg_flags & CW_SEGF_COLUMNAR) {
		char why[200];

		err = col_decode(r, h, data, &len, why, sizeof(why));
		if (err < 0)
			return err;
		if (err)
			return damaged(r, h, end, "columnar payload: %s", why);
		data = r->dbuf;
	}

	/* Every record must lie inside the payload and be a multiple of 8
	 * long (which keeps records aligned for the analyzer). Undo delta
	 * timestamps on the way. */
	while (pos < len) {
		size_t left = len - pos;
		uint16_t type, size;
		uint64_t ts;

		if (left < sizeof(struct cw_hdr))
			return damaged(r, h, end,
				       "record %u at payload offset %zu: %zu bytes left, less than a record header",
				       n, pos, left);
		type = cw_get16(data + pos);
		size = cw_get16(data + pos + 2);
		if (size < sizeof(struct cw_hdr) || size % 8)
			return damaged(r, h, end,
				       "record %u at payload offset %zu (type 0x%x): bad size %u", n,
				       pos, type, size);
		if (size > left)
			return damaged(r, h, end,
				       "record %u at payload offset %zu (type 0x%x): size %u runs past the payload end",
				       n, pos, type, size);
		ts = cw_get64(data + pos + 8);
		if (h->seg_flags & CW_SEGF_TS_DELTA) {
			ts += prev;
			cw_put64(data + pos + 8, ts);
			prev = ts;
		}
		if (!n || ts < lo)
			lo = ts;
		if (!n || ts > hi)
			hi = ts;
		n++;
		pos += size;
	}
	if (n != h->nrec)
		return damaged(r, h, end, "header says %u records, payload holds %u", h->nrec, n);
	if (n && (lo != h->first_ts || hi != h->last_ts))
		return damaged(r, h, end, "record timestamps do not match the header's time range");

	note_order(r, h);
	note_seq(r, h->seq);
	r->nvalid++;
	r->st.segments_ok++;
	r->st.records += n;
	if (h->seg_type == CW_SEG_FINAL)
		r->st.clean_close = 1;

	seg->seg_type = h->seg_type;
	seg->minor = h->minor;
	seg->seq = h->seq;
	seg->offset = r->pos;
	seg->first_ts = h->first_ts;
	seg->last_ts = h->last_ts;
	seg->nrec = n;
	seg->data = data;
	seg->len = len;
	r->pos = end;
	return 1;
}

/*
 * One step at r->pos. @return 1 with a segment, 0 to go on (something was
 * skipped, r->pos advanced), 2 at end of file, or a negative errno.
 */
static int step(struct cw_reader *r, struct cw_segment *seg)
{
	uint8_t hb[CW_SEG_HDR_LEN];
	uint64_t remain = r->size - r->pos, end, next;
	struct cw_seg_hdr h;
	ssize_t got;
	int err;

	if (r->pos >= r->size)
		return 2;
	got = pread_full(r->fd, hb, remain < sizeof(hb) ? (size_t)remain : sizeof(hb), r->pos);
	if (got < 0)
		return (int)got;
	if ((uint64_t)got != (remain < sizeof(hb) ? remain : sizeof(hb)))
		return -EIO;

	if (remain < CW_SEG_HDR_LEN) {
		if (is_partial_header(hb, remain)) {
			diag(r, CW_DIAG_WARN,
			     "segment at offset %llu: truncated header (file ends %llu bytes short): a capture that was killed loses its last segment",
			     (unsigned long long)r->pos,
			     (unsigned long long)(CW_SEG_HDR_LEN - remain));
			r->st.truncated_tail = 1;
			r->pos = r->size;
			return 0;
		}
		return resync(r, r->pos, r->pos);
	}

	if (!cw_seg_hdr__valid(hb)) {
		if (!memcmp(hb, CW_MAGIC, CW_MAGIC_LEN)) {
			diag(r, CW_DIAG_WARN, "segment at offset %llu: header checksum mismatch; skipped",
			     (unsigned long long)r->pos);
			r->st.segments_damaged++;
		}
		return resync(r, r->pos, r->pos);
	}

	cw_seg_hdr__decode(hb, &h);
	if (h.major > CW_FORMAT_MAJOR) {
		diag(r, CW_DIAG_ERROR,
		     "trace format %u.%u is newer than this analyzer (%d.%d): upgrade causeway",
		     h.major, h.minor, CW_FORMAT_MAJOR, CW_FORMAT_MINOR);
		return -EPROTO;
	}

	/* The header checksum vouches that these are the bytes a writer
	 * wrote, not that the writer was sane: bound everything before use. */
	if (h.major == 0)
		return damaged(r, &h, r->pos, "format version 0.%u does not exist", h.minor);
	if (h.hdr_len < CW_SEG_HDR_LEN)
		return damaged(r, &h, r->pos, "header length %u < %u", h.hdr_len, CW_SEG_HDR_LEN);
	if (h.seg_flags & ~CW_SEGF_KNOWN)
		return damaged(r, &h, r->pos, "unknown flags 0x%x", h.seg_flags);
	if ((h.seg_flags & CW_SEGF_COLUMNAR) && (h.seg_flags & CW_SEGF_TS_DELTA))
		return damaged(r, &h, r->pos, "flags 0x%x: columnar and delta timestamps exclude each other",
			       h.seg_flags);
	if (h.raw_len > CW_SEG_MAX_RAW)
		return damaged(r, &h, r->pos, "raw length %u exceeds the limit %u", h.raw_len,
			       CW_SEG_MAX_RAW);
	if (h.seg_flags & CW_SEGF_LZ4) {
		if (h.stored_len > (uint32_t)LZ4_compressBound((int)h.raw_len))
			return damaged(r, &h, r->pos,
				       "stored length %u exceeds the LZ4 bound for raw length %u",
				       h.stored_len, h.raw_len);
	} else if (h.stored_len != h.raw_len) {
		return damaged(r, &h, r->pos, "stored length %u != raw length %u of a raw payload",
			       h.stored_len, h.raw_len);
	}
	if (h.nrec > h.raw_len / ((h.seg_flags & CW_SEGF_COLUMNAR) ? CW_COL_MIN_REC :
									sizeof(struct cw_hdr)))
		return damaged(r, &h, r->pos, "%u records cannot fit in %u bytes", h.nrec,
			       h.raw_len);

	end = r->pos + h.hdr_len + h.stored_len;
	if (end > r->size) {
		/* Past the end: a truncated tail when nothing valid follows,
		 * otherwise damage in the middle of the file. */
		err = find_header(r, r->pos + 1, &next);
		if (err)
			return err;
		if (next >= r->size) {
			diag(r, CW_DIAG_WARN,
			     "segment %llu at offset %llu: truncated (file ends %llu bytes short): a capture that was killed loses its last segment",
			     (unsigned long long)h.seq, (unsigned long long)r->pos,
			     (unsigned long long)(end - r->size));
			r->st.truncated_tail = 1;
			r->pos = r->size;
			return 0;
		}
		diag(r, CW_DIAG_WARN,
		     "segment %llu at offset %llu: length %llu runs past the end of the file; skipped",
		     (unsigned long long)h.seq, (unsigned long long)r->pos,
		     (unsigned long long)(end - r->pos));
		r->st.segments_damaged++;
		skip_to(r, r->pos, r->pos, next);
		return 0;
	}

	if (h.seg_type < CW_SEG_META || h.seg_type > CW_SEG_FINAL) {
		/* A newer minor version may add segment types: skip whole. */
		diag(r, CW_DIAG_INFO, "segment %llu at offset %llu: unknown segment type %u; skipped",
		     (unsigned long long)h.seq, (unsigned long long)r->pos, h.seg_type);
		note_seq(r, h.seq);
		r->nvalid++;
		r->st.bytes_skipped += end - r->pos;
		r->pos = end;
		return 0;
	}
	return read_payload(r, &h, seg);
}

int cw_reader__next(struct cw_reader *r, struct cw_segment *seg)
{
	int ret;

	if (!r || !seg)
		return -EINVAL;
	if (r->state == ST_ERROR)
		return r->err;
	if (r->state == ST_EOF)
		return 0;

	if (!r->started) {
		uint8_t m[CW_MAGIC_LEN];
		uint64_t next;
		ssize_t got;

		if (r->size == 0) {
			diag(r, CW_DIAG_ERROR, "empty file");
			r->state = ST_ERROR;
			r->err = -EINVAL;
			return r->err;
		}
		got = pread_full(r->fd, m, sizeof(m), 0);
		if (got < 0)
			return (int)got;
		r->started = 1;
		r->starts_magic = got == sizeof(m) && !memcmp(m, CW_MAGIC, CW_MAGIC_LEN);
		if (!r->starts_magic) {
			/* Another format, or a trace with a damaged start:
			 * only a valid header somewhere tells them apart. */
			ret = find_header(r, 0, &next);
			if (ret)
				return ret;
			if (next >= r->size) {
				diag(r, CW_DIAG_ERROR, "not a causeway trace (no valid segment)");
				r->state = ST_ERROR;
				r->err = -EINVAL;
				return r->err;
			}
			if (next > 0)
				skip_to(r, 0, 0, next);
		}
	}

	for (;;) {
		ret = step(r, seg);
		if (ret == 1)
			return 1;
		if (ret == 2)
			return at_eof(r);
		if (ret == -EPROTO) {
			r->state = ST_ERROR;
			r->err = ret;
			return ret;
		}
		if (ret < 0)
			return ret;
	}
}

const struct cw_hdr *cw_segment__next_record(const struct cw_segment *seg, size_t *pos)
{
	const struct cw_hdr *h;

	if (!seg || !pos || *pos >= seg->len || seg->len - *pos < sizeof(struct cw_hdr))
		return NULL;
	h = (const struct cw_hdr *)(seg->data + *pos);
	/* Validated by cw_reader__next; checked again so a caller-built
	 * segment cannot walk us off the buffer. */
	if (h->size < sizeof(struct cw_hdr) || h->size > seg->len - *pos)
		return NULL;
	*pos += h->size;
	return h;
}

void cw_reader__stats(const struct cw_reader *r, struct cw_reader_stats *st)
{
	if (r)
		*st = r->st;
	else
		memset(st, 0, sizeof(*st));
}

void cw_reader__free(struct cw_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->sbuf);
	free(r->rbuf);
	free(r->dbuf);
	free(r->rows);
	free(r->cg);
	free(r->cpu_ts);
	free(r->scan);
	free(r);
}
