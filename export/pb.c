// SPDX-License-Identifier: MIT
/*
 * The protocol buffers writer: see pb.h.
 */
#include <stdlib.h>
#include <string.h>
#include "pb.h"

enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2 };

/* Room for @n more bytes. @return false (and oom set) when there is none. */
static bool room(struct cw_pb *pb, size_t n)
{
	size_t cap;
	uint8_t *m;

	if (pb->oom)
		return false;
	if (pb->cap - pb->len >= n)
		return true;
	cap = pb->cap ? pb->cap : 256;
	while (cap - pb->len < n) {
		if (cap > SIZE_MAX / 2) {
			pb->oom = true;
			return false;
		}
		cap *= 2;
	}
	if (!(m = realloc(pb->buf, cap))) {
		pb->oom = true;
		return false;
	}
	pb->buf = m;
	pb->cap = cap;
	return true;
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* @v at @p, which has room: @return its length. */
static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

void cw_pb__reset(struct cw_pb *pb)
{
	pb->len = 0;
	pb->oom = false;
}

void cw_pb__free(struct cw_pb *pb)
{
	free(pb->buf);
	*pb = (struct cw_pb){ 0 };
}

void cw_pb__raw_varint(struct cw_pb *pb, uint64_t v)
{
	if (room(pb, 10))
		pb->len += put_varint(pb->buf + pb->len, v);
}

static void tag(struct cw_pb *pb, uint32_t field, unsigned wire)
{
	cw_pb__raw_varint(pb, (uint64_t)field << 3 | wire);
}

void cw_pb__varint(struct cw_pb *pb, uint32_t field, uint64_t v)
{
	tag(pb, field, WIRE_VARINT);
	cw_pb__raw_varint(pb, v);
}

void cw_pb__fixed64(struct cw_pb *pb, uint32_t field, uint64_t v)
{
	tag(pb, field, WIRE_I64);
	if (!room(pb, 8))
		return;
	for (int i = 0; i < 8; i++)
		pb->buf[pb->len++] = (uint8_t)(v >> (8 * i));
}

void cw_pb__bytes(struct cw_pb *pb, uint32_t field, const void *p, size_t n)
{
	tag(pb, field, WIRE_LEN);
	cw_pb__raw_varint(pb, n);
	if (n && room(pb, n)) {
		memcpy(pb->buf + pb->len, p, n);
		pb->len += n;
	}
}

void cw_pb__str(struct cw_pb *pb, uint32_t field, const char *s)
{
	cw_pb__bytes(pb, field, s, strlen(s));
}

cw_pb_mark cw_pb__begin(struct cw_pb *pb, uint32_t field)
{
	tag(pb, field, WIRE_LEN);
	/* one byte for the length: most messages are shorter than 128 */
	if (room(pb, 1))
		pb->buf[pb->len++] = 0;
	return pb->len;
}

void cw_pb__end(struct cw_pb *pb, cw_pb_mark m)
{
	size_t body, n;

	if (pb->oom || m == 0 || m > pb->len)
		return;
	body = pb->len - m;
	n = varint_len(body);
	if (n > 1) {
		if (!room(pb, n - 1))
			return;
		memmove(pb->buf + m + n - 1, pb->buf + m, body);
		pb->len += n - 1;
	}
	put_varint(pb->buf + m - 1, body);
}
