// SPDX-License-Identifier: MIT
/* The reorder window: sorted output within the window, ties in file order,
 * late records passed on and counted, nothing lost, bounded by count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/check.h"
#include "analyze/order.h"


struct out {
	uint64_t *ts;
	uint16_t *cpu;
	size_t n;
};

static int collect(void *ctx, const struct cw_hdr *h)
{
	struct out *o = ctx;

	o->ts[o->n] = h->ts;
	o->cpu[o->n++] = h->cpu;
	return 0;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_sorts_jitter(void)
{
	enum { N = 200000 };
	struct out o = { calloc(N, 8), calloc(N, 2), 0 };
	struct cw_order *ord = cw_order__new(collect, &o);
	struct cw_hdr h = { .type = 0x11, .size = sizeof(h) };

	for (size_t i = 0; i < N; i++) {
		/* 1 us apart, up to 5 ms of jitter: inside the window. */
		h.ts = 1000000000ull + i * 1000 + xorshift() % 5000000;
		h.cpu = (uint16_t)i;
		CHECK(cw_order__push(ord, &h) == 0, "push");
	}
	CHECK(cw_order__drain(ord) == 0, "drain");
	CHECK(o.n == N, "released %zu of %d", o.n, N);
	CHECK(cw_order__late(ord) == 0, "late %llu", (unsigned long long)cw_order__late(ord));
	for (size_t i = 1; i < N; i++)
		CHECK(o.ts[i - 1] <= o.ts[i], "out of order at %zu", i);
	cw_order__free(ord);
	free(o.ts);
	free(o.cpu);
	passes++;
	printf("ok sorts_jitter\n");
}

static void test_ties_and_late(void)
{
	struct out o = { calloc(16, 8), calloc(16, 2), 0 };
	struct cw_order *ord = cw_order__new(collect, &o);
	struct cw_hdr h = { .type = 0x11, .size = sizeof(h) };
	static const uint64_t in[] = { 10, 10, 10, 5 * CW_ORDER_WINDOW_NS, 5 };

	for (size_t i = 0; i < 5; i++) {
		h.ts = in[i];
		h.cpu = (uint16_t)i;
		CHECK(cw_order__push(ord, &h) == 0, "push");
	}
	CHECK(cw_order__drain(ord) == 0, "drain");
	CHECK(o.n == 5, "released %zu", o.n);
	/* Equal timestamps keep file order. */
	CHECK(o.cpu[0] == 0 && o.cpu[1] == 1 && o.cpu[2] == 2, "ties reordered");
	/* ts 5 arrived after ts 10 was released: late, not dropped. */
	CHECK(o.ts[3] == 5 && cw_order__late(ord) == 1, "late record");
	cw_order__free(ord);
	free(o.ts);
	free(o.cpu);
	passes++;
	printf("ok ties_and_late\n");
}

static void test_big_records(void)
{
	struct out o = { calloc(4, 8), calloc(4, 2), 0 };
	struct cw_order *ord = cw_order__new(collect, &o);
	uint8_t big[1024] = { 0 };
	struct cw_hdr *h = (struct cw_hdr *)big;

	h->type = 0x01;
	h->size = sizeof(big);
	h->ts = 7;
	CHECK(cw_order__push(ord, h) == 0, "push big");
	h->ts = 3;
	CHECK(cw_order__push(ord, h) == 0, "push big");
	CHECK(cw_order__drain(ord) == 0 && o.n == 2 && o.ts[0] == 3, "big records sorted");
	/* Records still held are freed by cw_order__free (ASan checks). */
	CHECK(cw_order__push(ord, h) == 0, "push big");
	cw_order__free(ord);
	free(o.ts);
	free(o.cpu);
	passes++;
	printf("ok big_records\n");
}

int main(void)
{
	test_sorts_jitter();
	test_ties_and_late();
	test_big_records();
	printf("test_order: %d passed, %d failed\n", passes, failures);
	return failures != 0;
}
