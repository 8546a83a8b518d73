// SPDX-License-Identifier: MIT
/* The protobuf writer (export/pb.h): varints and zigzag against the bytes
 * the wire format gives them, fixed fields little-endian, nested messages
 * whose length crosses each varint size (the body moved up by 1 to 3
 * bytes), nested three deep, random trees read back by a reader written
 * here, and a failed buffer that writes nothing more. */
#include <stdlib.h>
#include <string.h>
#include "tests/check.h"
#include "export/pb.h"

static int same(const struct cw_pb *b, const uint8_t *want, size_t n)
{
	return !b->failed && b->n == n && !memcmp(b->p, want, n);
}

static void test_varints(void)
{
	static const struct {
		uint64_t v;
		uint8_t bytes[10];
		size_t n;
	} cases[] = {
		{ 0, { 0x00 }, 1 },
		{ 1, { 0x01 }, 1 },
		{ 127, { 0x7f }, 1 },
		{ 128, { 0x80, 0x01 }, 2 },
		{ 300, { 0xac, 0x02 }, 2 },
		{ 16383, { 0xff, 0x7f }, 2 },
		{ 16384, { 0x80, 0x80, 0x01 }, 3 },
		{ UINT64_MAX, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 }, 10 },
	};
	struct cw_pb b = { 0 };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cw_pb__reset(&b);
		cw_pb__varint(&b, cases[i].v);
		CHECK(same(&b, cases[i].bytes, cases[i].n), "varint %llu: %zu bytes",
		      (unsigned long long)cases[i].v, b.n);
		CHECK(cw_pb__varint_size(cases[i].v) == cases[i].n, "varint_size %llu",
		      (unsigned long long)cases[i].v);
	}
	/* field 1, varint 150: the spec's example, 08 96 01 */
	cw_pb__reset(&b);
	cw_pb__uint(&b, 1, 150);
	CHECK(same(&b, (const uint8_t[]){ 0x08, 0x96, 0x01 }, 3), "uint field");
	/* zigzag: 0 0, -1 1, 1 2, -2 3, INT64_MIN all ones */
	cw_pb__reset(&b);
	cw_pb__sint(&b, 2, -1);
	cw_pb__sint(&b, 2, 1);
	cw_pb__sint(&b, 2, -2);
	CHECK(same(&b, (const uint8_t[]){ 0x10, 0x01, 0x10, 0x02, 0x10, 0x03 }, 6), "sint");
	cw_pb__reset(&b);
	cw_pb__sint(&b, 2, INT64_MIN);
	CHECK(same(&b, (const uint8_t[]){ 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					  0xff, 0x01 },
		   11),
	      "sint INT64_MIN");
	/* a negative int64 as uint: ten bytes */
	cw_pb__reset(&b);
	cw_pb__uint(&b, 1, (uint64_t)-1);
	CHECK(b.n == 11, "int64 -1: %zu bytes", b.n);
	/* fixed: little-endian, wire types 1 and 5; a large field number */
	cw_pb__reset(&b);
	cw_pb__fixed64(&b, 1, 0x0102030405060708ull);
	cw_pb__fixed32(&b, 2, 0x0a0b0c0d);
	cw_pb__uint(&b, 536870911, 0);
	CHECK(same(&b,
		   (const uint8_t[]){ 0x09, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x15, 0x0d,
				      0x0c, 0x0b, 0x0a, 0xf8, 0xff, 0xff, 0xff, 0x0f, 0x00 },
		   20),
	      "fixed64, fixed32, field 2^29-1");
	cw_pb__reset(&b);
	cw_pb__str(&b, 3, "hi");
	cw_pb__bytes(&b, 4, "", 0);
	CHECK(same(&b, (const uint8_t[]){ 0x1a, 0x02, 'h', 'i', 0x22, 0x00 }, 6), "str, bytes");
	cw_pb__free(&b);
	passes++;
}

/* A reader: the varint at *@p (of @end), advancing it; false past @end or
 * past 10 bytes. */
static int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (unsigned s = 0; *p < end && s < 70; s += 7) {
		uint8_t c = *(*p)++;

		*v |= (uint64_t)(c & 0x7f) << s;
		if (!(c & 0x80))
			return 1;
	}
	return 0;
}

static void test_nested_lengths(void)
{
	static const size_t lens[] = { 0, 1, 127, 128, 16383, 16384, 2097151, 2097152 };
	struct cw_pb b = { 0 };
	uint8_t *body = malloc(2097152);

	CHECK(body, "malloc");
	for (size_t i = 0; i < 2097152; i++)
		body[i] = (uint8_t)(i * 7 + 3);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		const uint8_t *p, *end;
		uint64_t tag, len;
		size_t m;

		cw_pb__reset(&b);
		cw_pb__uint(&b, 1, 42); /* before: must stay */
		m = cw_pb__open(&b, 5);
		cw_pb__raw(&b, body, lens[i]);
		cw_pb__close(&b, m);
		cw_pb__uint(&b, 1, 43); /* after */
		p = b.p;
		end = b.p + b.n;
		CHECK_OR(break, !b.failed && b.n == 2 + 1 + cw_pb__varint_size(lens[i]) + lens[i] + 2,
			 "length %zu: %zu bytes", lens[i], b.n);
		CHECK_OR(break, p[0] == 0x08 && p[1] == 42, "length %zu: the field before", lens[i]);
		p += 2;
		CHECK_OR(break, get_varint(&p, end, &tag) && tag == (5 << 3 | 2), "length %zu: tag",
			 lens[i]);
		CHECK_OR(break, get_varint(&p, end, &len) && len == lens[i] && p + len <= end,
			 "length %zu: read %llu", lens[i], (unsigned long long)len);
		CHECK_OR(break, !memcmp(p, body, lens[i]), "length %zu: body", lens[i]);
		p += len;
		CHECK_OR(break, end - p == 2 && p[0] == 0x08 && p[1] == 43, "length %zu: after",
			 lens[i]);
	}
	cw_pb__free(&b);
	free(body);
	passes++;
}

/*
 * Random trees: a message is up to 4 fields, each a varint or a nested
 * message (depth at most 4) or bytes of up to 300; written with open and
 * close, read back with get_varint, and compared with what was written,
 * as a stream of (depth, field, value) events.
 */
struct ev {
	int depth;
	uint32_t field;
	uint64_t v; /* varint value, or bytes length, or ~0 for a message */
};

static struct ev evs[100000];
static size_t nevs;

static void write_tree(struct cw_pb *b, int depth)
{
	size_t k = next_rand() % 5;

	for (size_t i = 0; i < k && nevs < sizeof(evs) / sizeof(evs[0]) - 1; i++) {
		uint32_t field = (uint32_t)(next_rand() % 100000) + 1;
		uint64_t r = next_rand() % 3;

		if (r == 0 || depth >= 4) {
			uint64_t v = next_rand() >> (next_rand() % 64);

			evs[nevs++] = (struct ev){ depth, field, v };
			cw_pb__uint(b, field, v);
		} else if (r == 1) {
			uint8_t buf[300];
			size_t n = next_rand() % sizeof(buf);

			memset(buf, (int)n, n);
			evs[nevs++] = (struct ev){ depth, field, n };
			cw_pb__bytes(b, field, buf, n);
		} else {
			size_t m = cw_pb__open(b, field);

			evs[nevs++] = (struct ev){ depth, field, ~0ull };
			write_tree(b, depth + 1);
			cw_pb__close(b, m);
		}
	}
}

/* Read [p, end) at @depth against evs from *@at. @return 1 if it matched. */
static int read_tree(const uint8_t *p, const uint8_t *end, int depth, size_t *at)
{
	while (p < end) {
		uint64_t tag, v;
		const struct ev *e = &evs[*at];

		if (*at >= nevs || e->depth != depth || !get_varint(&p, end, &tag) ||
		    tag >> 3 != e->field)
			return 0;
		++*at;
		if ((tag & 7) == 0) {
			if (!get_varint(&p, end, &v) || v != e->v)
				return 0;
			continue;
		}
		if ((tag & 7) != 2 || !get_varint(&p, end, &v) || v > (uint64_t)(end - p))
			return 0;
		if (e->v == ~0ull) {
			if (!read_tree(p, p + v, depth + 1, at))
				return 0;
		} else if (v != e->v) {
			return 0;
		}
		p += v;
	}
	return 1;
}

static void test_random_trees(void)
{
	struct cw_pb b = { 0 };

	for (int round = 0; round < 2000; round++) {
		size_t at = 0;

		cw_pb__reset(&b);
		nevs = 0;
		write_tree(&b, 0);
		CHECK_OR(break, !b.failed, "round %d: failed", round);
		CHECK_OR(break, read_tree(b.p, b.p + b.n, 0, &at) && at == nevs,
			 "round %d: read back %zu of %zu fields", round, at, nevs);
	}
	cw_pb__free(&b);
	passes++;
}

static void test_failed(void)
{
	struct cw_pb b = { 0 };
	size_t m, n;

	cw_pb__uint(&b, 1, 1);
	m = cw_pb__open(&b, 2);
	b.failed = true; /* as a realloc that failed leaves it */
	n = b.n;
	cw_pb__uint(&b, 3, 300);
	cw_pb__str(&b, 4, "x");
	cw_pb__raw(&b, "abc", 3);
	cw_pb__close(&b, m);
	CHECK(b.n == n && cw_pb__failed(&b), "a failed buffer grew to %zu from %zu", b.n, n);
	cw_pb__reset(&b);
	CHECK(!cw_pb__failed(&b) && b.n == 0, "reset");
	cw_pb__free(&b);
	passes++;
}

int main(void)
{
	test_varints();
	test_nested_lengths();
	test_random_trees();
	test_failed();
	printf("test_pb: %d passed, %d failed\n", passes, failures);
	return failures != 0;
}
