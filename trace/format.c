// SPDX-License-Identifier: MIT
/*
 * The segment header's codec: see format.h for the byte offsets and
 * schema/format.md for the rules. The writer encodes with it, the reader
 * validates and decodes with it, so the two cannot place a field
 * differently.
 */
#include <zlib.h>

#include "trace/format.h"

uint32_t cw_crc32(const void *p, size_t len)
{
	/* zlib takes a uInt length; a payload is at most CW_SEG_MAX_RAW's
	 * LZ4 bound, a header 60 bytes. */
	return (uint32_t)crc32(0L, p, (uInt)len);
}

void cw_seg_hdr__encode(const struct cw_seg_hdr *h, uint8_t *b)
{
	memset(b, 0, CW_SEG_HDR_LEN);
	memcpy(b, CW_MAGIC, CW_MAGIC_LEN);
	cw_put16(b + 8, h->major);
	cw_put16(b + 10, h->minor);
	cw_put16(b + 12, h->seg_type);
	cw_put16(b + 14, h->seg_flags);
	cw_put64(b + 16, h->seq);
	cw_put64(b + 24, h->first_ts);
	cw_put64(b + 32, h->last_ts);
	cw_put32(b + 40, h->nrec);
	cw_put32(b + 44, h->raw_len);
	cw_put32(b + 48, h->stored_len);
	cw_put32(b + 52, h->payload_crc);
	cw_put16(b + 56, h->hdr_len);
	cw_seg_hdr__reseal(b);
}

void cw_seg_hdr__decode(const uint8_t *b, struct cw_seg_hdr *h)
{
	h->major = cw_get16(b + 8);
	h->minor = cw_get16(b + 10);
	h->seg_type = cw_get16(b + 12);
	h->seg_flags = cw_get16(b + 14);
	h->seq = cw_get64(b + 16);
	h->first_ts = cw_get64(b + 24);
	h->last_ts = cw_get64(b + 32);
	h->nrec = cw_get32(b + 40);
	h->raw_len = cw_get32(b + 44);
	h->stored_len = cw_get32(b + 48);
	h->payload_crc = cw_get32(b + 52);
	h->hdr_len = cw_get16(b + 56);
	h->hdr_crc = cw_get32(b + 60);
}

int cw_seg_hdr__valid(const uint8_t *b)
{
	return !memcmp(b, CW_MAGIC, CW_MAGIC_LEN) && cw_get32(b + 60) == cw_crc32(b, 60);
}

void cw_seg_hdr__reseal(uint8_t *b)
{
	cw_put32(b + 60, cw_crc32(b, 60));
}
