/* SPDX-License-Identifier: MIT */
/*
 * The .cwt segment header, shared by the segment writer and reader.
 * schema/format.md is the prose specification; this is its code. Every
 * constant here is part of the file format: changing one breaks
 * compatibility with existing traces.
 *
 * Segment header, 64 bytes, all fields little-endian:
 *
 *   off size field
 *    0   8   magic        "CWTRACE\x1a"
 *    8   2   major        CW_FORMAT_MAJOR; a reader refuses a newer major
 *   10   2   minor        CW_FORMAT_MINOR; newer minors are read
 *   12   2   seg_type     CW_SEG_*
 *   14   2   seg_flags    CW_SEGF_*
 *   16   8   seq          0 for the metadata segment, then +1 per segment
 *   24   8   first_ts     smallest record timestamp (0 if no record)
 *   32   8   last_ts      largest record timestamp (0 if no record)
 *   40   4   nrec         number of records in the payload
 *   44   4   raw_len      payload length after decompression (for a
 *                            columnar payload: the encoded length)
 *   48   4   stored_len   payload length in the file
 *   52   4   payload_crc  CRC-32 (zlib) of the stored payload bytes
 *   56   2   hdr_len      64; room to grow the header in a minor version
 *   58   2   reserved     0
 *   60   4   hdr_crc      CRC-32 (zlib) of header bytes 0..59
 *
 * The payload follows the header immediately (at hdr_len) and is
 * stored_len bytes long; the next segment starts right after it.
 *
 * The header's codec (cw_seg_hdr__*, format.c) is the one the writer, the
 * reader, the fixture compiler and the tests share.
 */
#ifndef CAUSEWAY_FORMAT_H
#define CAUSEWAY_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "records are stored in host layout, which the format defines as little-endian");

#define CW_MAGIC "CWTRACE\x1a"
#define CW_MAGIC_LEN 8
/* The causeway release; both programs print it with --version. */
#define CW_VERSION "0.1.0"

#define CW_FORMAT_MAJOR 1
#define CW_FORMAT_MINOR 11
#define CW_SEG_HDR_LEN 64

/* Hard limits a reader enforces before it allocates anything. */
#define CW_SEG_MAX_RAW (64u << 20)
#define CW_SEG_DEFAULT_RAW (1u << 20)

enum {
	CW_SEG_META = 1,   /* first segment: capture metadata and snapshots */
	CW_SEG_EVENTS = 2, /* edge and sample records, accounting */
	CW_SEG_FINAL = 3,  /* totals; present only after a clean close */
};

enum {
	CW_SEGF_LZ4 = 0x1,	/* payload is one LZ4 block (else stored raw) */
	CW_SEGF_TS_DELTA = 0x2, /* record ts holds ts - previous record's ts */
	CW_SEGF_COLUMNAR = 0x4, /* records grouped and transposed, see below */
	CW_SEGF_KNOWN = 0x7,
};

/*
 * Columnar payload (CW_SEGF_COLUMNAR; never with CW_SEGF_TS_DELTA). After
 * LZ4, raw_len bytes:
 *
 *   off            size               field
 *    0             4                  nrec (== header nrec)
 *    4             4                  ngroups (<= CW_COL_MAX_GROUPS)
 *    8             12 * ngroups       group table: record bytes 0..7 (type,
 *                                     size, cpu, ctx, flags), u32 count
 *    ...           nrec * iw          group index of each record in payload
 *                                     order; iw = 1 if ngroups <= 256, else
 *                                     2: all low bytes, then all high bytes
 *    ...           count * (size - 8) per group in table order: record bytes
 *                                     8..size-1 of its records, column by
 *                                     column (byte 8 of every record, then
 *                                     byte 9, ...)
 *
 * Bytes 8..15 hold ts minus the ts of the previous record in payload order
 * with the same cpu (0 for the first), wrapping. schema/format.md has the
 * validity rules.
 */
#define CW_COL_HDR_LEN 8
#define CW_COL_GROUP_LEN 12
#define CW_COL_KEY_LEN 8
#define CW_COL_MAX_GROUPS 65536u
/* At least 8 matrix bytes and a 1-byte index per record. */
#define CW_COL_MIN_REC 9

/* Changing any of these breaks compatibility with existing traces. */
_Static_assert(CW_COL_KEY_LEN == 8, "the group key is cw_hdr bytes 0..7: type, size, cpu, ctx, flags");
_Static_assert(CW_COL_GROUP_LEN == CW_COL_KEY_LEN + 4, "a group table entry is the key and a u32 count");
_Static_assert(CW_COL_MIN_REC == 16 - CW_COL_KEY_LEN + 1,
	       "the smallest record (16 bytes) leaves 8 matrix bytes, plus a 1-byte index");
_Static_assert(CW_COL_MAX_GROUPS == 1u << 16, "group numbers are at most 2 bytes");

struct cw_seg_hdr {
	uint16_t major, minor, seg_type, seg_flags;
	uint64_t seq, first_ts, last_ts;
	uint32_t nrec, raw_len, stored_len, payload_crc;
	uint16_t hdr_len;
	uint32_t hdr_crc;
};

static inline void cw_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void cw_put32(uint8_t *p, uint32_t v)
{
	cw_put16(p, (uint16_t)v);
	cw_put16(p + 2, (uint16_t)(v >> 16));
}

static inline void cw_put64(uint8_t *p, uint64_t v)
{
	cw_put32(p, (uint32_t)v);
	cw_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t cw_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t cw_get32(const uint8_t *p)
{
	return (uint32_t)cw_get16(p) | (uint32_t)cw_get16(p + 2) << 16;
}

static inline uint64_t cw_get64(const uint8_t *p)
{
	return (uint64_t)cw_get32(p) | (uint64_t)cw_get32(p + 4) << 32;
}

/* CRC-32 (zlib's crc32, polynomial 0xedb88320) of @len bytes at @p: the
 * checksum of both the header and the payload. */
uint32_t cw_crc32(const void *p, size_t len);

/*
 * Encode @h into the CW_SEG_HDR_LEN bytes at @b: the magic, every field
 * but hdr_crc as @h has it, reserved 0, and hdr_crc computed over bytes
 * 0..59 (h->hdr_crc is ignored).
 */
void cw_seg_hdr__encode(const struct cw_seg_hdr *h, uint8_t *b);

/* Decode the CW_SEG_HDR_LEN bytes at @b; checks nothing (see valid). */
void cw_seg_hdr__decode(const uint8_t *b, struct cw_seg_hdr *h);

/*
 * @return 1 when the CW_SEG_HDR_LEN bytes at @b begin with the magic and
 * hold their own checksum, the minimum for a position to count as a
 * segment header at all; else 0. The fields are not bounded here.
 */
int cw_seg_hdr__valid(const uint8_t *b);

/* Recompute hdr_crc of the header at @b after a field was changed in
 * place (tests and the fixture compiler forge headers so). */
void cw_seg_hdr__reseal(uint8_t *b);

#endif /* CAUSEWAY_FORMAT_H */
