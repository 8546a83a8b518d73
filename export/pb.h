/* SPDX-License-Identifier: MIT */
/*
 * A protocol buffers writer, the least the exports need (pb.c): a
 * growable buffer that fields are appended to in wire format, so that a
 * format's writer spells its messages out field by field, with the field
 * numbers of the format's own .proto files, and needs no protobuf library.
 *
 * Wire format (protobuf's "Encoding" page): a field is a tag, the varint
 * (number << 3 | wire type), then its value: a varint (type 0), 8 bytes
 * little-endian (type 1), or a varint length and that many bytes (type 2:
 * strings, bytes, nested messages, packed repeated scalars). A nested
 * message's length is not known until it ends: cw_pb__begin() leaves one
 * byte for it and cw_pb__end() moves the body along when the length needs
 * more, so every length is written in its fewest bytes.
 *
 * Errors: an allocation that fails marks the buffer (oom) and makes every
 * later call a no-op; the caller checks once, at the end of a message.
 */
#ifndef CAUSEWAY_EXPORT_PB_H
#define CAUSEWAY_EXPORT_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cw_pb {
	uint8_t *buf;
	size_t len, cap;
	bool oom;
};

/* A nested message under way: where its length byte is. */
typedef size_t cw_pb_mark;

/* Empty @pb, keeping its memory (and clearing oom). */
void cw_pb__reset(struct cw_pb *pb);
void cw_pb__free(struct cw_pb *pb);

/* A bare varint, no tag (a packed repeated field's element). */
void cw_pb__raw_varint(struct cw_pb *pb, uint64_t v);

/* Field @field, wire type 0: uint32/64, bool, enum; an int32 or int64 as
 * its two's complement (a negative one takes 10 bytes, as protobuf's). */
void cw_pb__varint(struct cw_pb *pb, uint32_t field, uint64_t v);
/* Field @field, wire type 1: fixed64, sfixed64. */
void cw_pb__fixed64(struct cw_pb *pb, uint32_t field, uint64_t v);
/* Field @field, wire type 2: @n bytes. */
void cw_pb__bytes(struct cw_pb *pb, uint32_t field, const void *p, size_t n);
/* A string field: @s up to its NUL. */
void cw_pb__str(struct cw_pb *pb, uint32_t field, const char *s);

/* Open a length-delimited field @field (a nested message, or packed
 * scalars); what is appended until cw_pb__end() is its content. */
cw_pb_mark cw_pb__begin(struct cw_pb *pb, uint32_t field);
void cw_pb__end(struct cw_pb *pb, cw_pb_mark m);

#endif /* CAUSEWAY_EXPORT_PB_H */
