/* SPDX-License-Identifier: MIT */
/*
 * A protobuf writer, by hand: the exports' formats (pprof's profile.proto,
 * Perfetto's trace) are protobuf, and their field numbers are public and
 * stable, so a growable byte buffer and the wire format's four rules are
 * all a writer needs (no protobuf library):
 *
 *   tag        varint (field << 3 | wire type)
 *   varint     7 bits a byte, low first, the high bit set on all but the
 *              last; an int64 is its two's complement as a uint64 (a
 *              negative one takes 10 bytes), a sint64 is zigzagged first
 *   fixed      4 or 8 bytes, little-endian
 *   len        a varint length, then that many bytes: strings, bytes,
 *              nested messages and packed repeated scalars
 *
 * A nested message is written in place: cw_pb__open() writes its tag and
 * leaves one byte for its length, cw_pb__close() writes the length there,
 * moving the body up when the length needs more than one byte. The length
 * is the shortest varint (some readers take padded ones, not all).
 *
 * An allocation that fails makes the buffer failed, and every later call
 * a no-op, as ferror() does for a FILE: check cw_pb__failed() once, after
 * the writes, not after each.
 */
#ifndef CAUSEWAY_EXPORT_PB_H
#define CAUSEWAY_EXPORT_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cw_pb_wire {
	CW_PB_VARINT = 0,
	CW_PB_FIXED64 = 1,
	CW_PB_LEN = 2,
	CW_PB_FIXED32 = 5,
};

struct cw_pb {
	uint8_t *p;
	size_t n, cap;
	bool failed;
};

/* Free the bytes; the buffer is then empty and usable again. */
void cw_pb__free(struct cw_pb *b);

/* Empty the buffer, keeping its memory (and clearing a failure). */
static inline void cw_pb__reset(struct cw_pb *b)
{
	b->n = 0;
	b->failed = false;
}

static inline bool cw_pb__failed(const struct cw_pb *b)
{
	return b->failed;
}

/* Bytes as they are (no tag): one message's bytes appended to another's. */
void cw_pb__raw(struct cw_pb *b, const void *p, size_t n);
void cw_pb__varint(struct cw_pb *b, uint64_t v);
void cw_pb__tag(struct cw_pb *b, uint32_t field, enum cw_pb_wire wire);

/* Fields. uint for uint32/uint64/int32/int64/bool/enum (a negative int
 * cast to uint64_t), sint for sint32/sint64. */
void cw_pb__uint(struct cw_pb *b, uint32_t field, uint64_t v);
void cw_pb__sint(struct cw_pb *b, uint32_t field, int64_t v);
void cw_pb__fixed64(struct cw_pb *b, uint32_t field, uint64_t v);
void cw_pb__fixed32(struct cw_pb *b, uint32_t field, uint32_t v);
void cw_pb__bytes(struct cw_pb *b, uint32_t field, const void *p, size_t n);
void cw_pb__str(struct cw_pb *b, uint32_t field, const char *s);

/*
 * A length-delimited field written in place, a nested message or a packed
 * repeated field: cw_pb__open() writes the tag and @return the mark to
 * give cw_pb__close() after the body. Opens nest; close the innermost
 * first.
 */
size_t cw_pb__open(struct cw_pb *b, uint32_t field);
void cw_pb__close(struct cw_pb *b, size_t mark);

/* The bytes of varint @v. */
static inline size_t cw_pb__varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

#endif /* CAUSEWAY_EXPORT_PB_H */
