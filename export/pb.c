// SPDX-License-Identifier: MIT
/*
 * The protobuf writer: see pb.h.
 */
#include <stdlib.h>
#include <string.h>
#include "pb.h"

/* Room for @k more bytes. @return false when the buffer is (now) failed. */
static bool room(struct cw_pb *b, size_t k)
{
	size_t cap;
	uint8_t *m;

	if (b->failed)
		return false;
	if (b->cap - b->n >= k)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap - b->n < k) {
		if (cap > SIZE_MAX / 2) {
			b->failed = true;
			return false;
		}
		cap *= 2;
	}
	if (!(m = realloc(b->p, cap))) {
		b->failed = true;
		return false;
	}
	b->p = m;
	b->cap = cap;
	return true;
}

void cw_pb__free(struct cw_pb *b)
{
	free(b->p);
	*b = (struct cw_pb){ 0 };
}

void cw_pb__raw(struct cw_pb *b, const void *p, size_t n)
{
	if (!n || !room(b, n))
		return;
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t i = 0;

	while (v >= 0x80) {
		p[i++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[i++] = (uint8_t)v;
	return i;
}

void cw_pb__varint(struct cw_pb *b, uint64_t v)
{
	if (room(b, 10))
		b->n += put_varint(b->p + b->n, v);
}

void cw_pb__tag(struct cw_pb *b, uint32_t field, enum cw_pb_wire wire)
{
	cw_pb__varint(b, (uint64_t)field << 3 | wire);
}

void cw_pb__uint(struct cw_pb *b, uint32_t field, uint64_t v)
{
	cw_pb__tag(b, field, CW_PB_VARINT);
	cw_pb__varint(b, v);
}

void cw_pb__sint(struct cw_pb *b, uint32_t field, int64_t v)
{
	cw_pb__uint(b, field, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void put_le(struct cw_pb *b, uint64_t v, size_t k)
{
	if (!room(b, k))
		return;
	for (size_t i = 0; i < k; i++)
		b->p[b->n++] = (uint8_t)(v >> (8 * i));
}

void cw_pb__fixed64(struct cw_pb *b, uint32_t field, uint64_t v)
{
	cw_pb__tag(b, field, CW_PB_FIXED64);
	put_le(b, v, 8);
}

void cw_pb__fixed32(struct cw_pb *b, uint32_t field, uint32_t v)
{
	cw_pb__tag(b, field, CW_PB_FIXED32);
	put_le(b, v, 4);
}

void cw_pb__bytes(struct cw_pb *b, uint32_t field, const void *p, size_t n)
{
	cw_pb__tag(b, field, CW_PB_LEN);
	cw_pb__varint(b, n);
	cw_pb__raw(b, p, n);
}

void cw_pb__str(struct cw_pb *b, uint32_t field, const char *s)
{
	cw_pb__bytes(b, field, s, strlen(s));
}

size_t cw_pb__open(struct cw_pb *b, uint32_t field)
{
	cw_pb__tag(b, field, CW_PB_LEN);
	if (room(b, 1))
		b->p[b->n++] = 0;
	return b->n;
}

void cw_pb__close(struct cw_pb *b, size_t mark)
{
	size_t len, k;

	if (b->failed)
		return;
	len = b->n - mark;
	k = cw_pb__varint_size(len);
	if (k > 1) {
		/* the one byte left for the length is too few: the body
		 * moves up by the rest */
		if (!room(b, k - 1))
			return;
		memmove(b->p + mark + k - 1, b->p + mark, len);
		b->n += k - 1;
	}
	put_varint(b->p + mark - 1, len);
}
