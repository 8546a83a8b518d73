// SPDX-License-Identifier: MIT
/* The reorder window: sorted output within the window, ties in file order,
 * late records passed on and counted, nothing lost, bounded by count and
 * by bytes whatever the record sizes. */
#include <errno.h>
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

static void test_sorts_jitter(void)
{
	enum { N = 200000 };
	struct out o = { calloc(N, 8), calloc(N, 2), 0 };
	struct cw_order *ord = cw_order__new(collect, &o, NULL);
	struct cw_hdr h = { .type = 0x11, .size = sizeof(h) };

	for (size_t i = 0; i < N; i++) {
		/* 1 us apart, up to 5 ms of jitter: inside the window. */
		h.ts = 1000000000ull + i * 1000 + next_rand() % 5000000;
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
	struct cw_order *ord = cw_order__new(collect, &o, NULL);
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
	struct cw_order *ord = cw_order__new(collect, &o, NULL);
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

/* ---- bounds: records that carry their id and a checkable body ---- */

struct seen {
	uint64_t *id, *ts;
	size_t n, cap;
	size_t corrupt;
	uint64_t late, max_ts; /* late as the window should count it */
};

static uint8_t body_byte(uint64_t id, size_t k)
{
	return (uint8_t)(id * 31 + k * 7);
}

static int check_rec(void *ctx, const struct cw_hdr *h)
{
	struct seen *s = ctx;
	const uint8_t *p = (const uint8_t *)h;
	uint64_t id;

	memcpy(&id, p + sizeof(*h), sizeof(id));
	for (size_t k = sizeof(*h) + 8; k < h->size; k++)
		if (p[k] != body_byte(id, k))
			s->corrupt++;
	if (s->n && h->ts < s->max_ts)
		s->late++;
	else
		s->max_ts = h->ts;
	if (s->n < s->cap) {
		s->id[s->n] = id;
		s->ts[s->n] = h->ts;
	}
	s->n++;
	return 0;
}

static uint8_t recbuf[65528];

/* @size >= 24: the header and the id. */
static const struct cw_hdr *make_rec(uint64_t id, uint16_t size, uint64_t ts)
{
	struct cw_hdr *h = (struct cw_hdr *)recbuf;

	h->type = 0x60; /* the sample class: big records */
	h->size = size;
	h->cpu = 0;
	h->ts = ts;
	memcpy(recbuf + sizeof(*h), &id, sizeof(id));
	for (size_t k = sizeof(*h) + 8; k < size; k++)
		recbuf[k] = body_byte(id, k);
	return h;
}

/* Every id 0..n-1 exactly once, and no byte changed. */
static int all_once(const struct seen *s, size_t n)
{
	uint8_t *got = calloc(n, 1);
	int ok = s->n == n && !s->corrupt;

	for (size_t i = 0; ok && i < s->n; i++) {
		if (s->id[i] >= n || got[s->id[i]])
			ok = 0;
		else
			got[s->id[i]] = 1;
	}
	free(got);
	return ok;
}

static struct seen seen_new(size_t cap)
{
	struct seen s = { calloc(cap, 8), calloc(cap, 8), 0, cap, 0, 0, 0 };

	return s;
}

static void seen_free(struct seen *s)
{
	free(s->id);
	free(s->ts);
}

/* More records than the count bound, all inside one window: the earliest
 * go early, in order, none late, none lost. */
static void test_count_limit(void)
{
	enum { N = CW_ORDER_MAX_EVENTS + 5000 };
	struct seen s = seen_new(N);
	struct cw_order *ord = cw_order__new(check_rec, &s, NULL);
	struct cw_order_stats st;

	for (uint64_t i = 0; i < N; i++)
		CHECK(cw_order__push(ord, make_rec(i, 24, 1000 + i / 4)) == 0, "push");
	cw_order__stats(ord, &st);
	CHECK(st.forced == 5000 && s.n == 5000, "forced %llu, released %zu before the drain",
	      (unsigned long long)st.forced, s.n);
	CHECK(st.peak_events == CW_ORDER_MAX_EVENTS, "peak %zu", st.peak_events);
	CHECK(cw_order__drain(ord) == 0, "drain");
	CHECK(all_once(&s, N), "lost, repeated or damaged records");
	for (size_t i = 0; i < N; i++)
		CHECK(s.id[i] == i, "order broken at %zu (ties keep file order)", i);
	CHECK(cw_order__late(ord) == 0 && s.late == 0, "late %llu",
	      (unsigned long long)cw_order__late(ord));
	cw_order__free(ord);
	seen_free(&s);
	passes++;
	printf("ok count_limit\n");
}

static uint16_t mixed_size(void)
{
	switch (next_rand() % 4) {
	case 0:
		return 24 + 8 * (uint16_t)(next_rand() % 6); /* edges */
	case 1:
		return 1024; /* a stack sample */
	case 2:
		return 65528; /* the largest record */
	default:
		return (uint16_t)(24 + 8 * (next_rand() % 8189));
	}
}

/*
 * Over 100 MB of records of mixed sizes up to 65528 bytes, inside one
 * window: the byte bound releases them early. With timestamps in arrival
 * order nothing is late; with jitter, the late count is exactly what the
 * output shows. Either way nothing is lost or damaged and the window
 * never holds more than its bound.
 */
static void test_byte_limit(void)
{
	enum { N = 6000 };

	for (int jitter = 0; jitter < 2; jitter++) {
		struct seen s = seen_new(N);
		struct cw_order *ord = cw_order__new(check_rec, &s, NULL);
		struct cw_order_stats st;
		uint64_t bytes = 0;

		for (uint64_t i = 0; i < N; i++) {
			uint16_t size = mixed_size();
			uint64_t ts = 1000000 + i * 100 + (jitter ? next_rand() % 500000 : 0);

			bytes += size;
			CHECK(cw_order__push(ord, make_rec(i, size, ts)) == 0, "push");
		}
		CHECK(bytes > 3 * CW_ORDER_MAX_BYTES, "only %llu bytes pushed",
		      (unsigned long long)bytes);
		CHECK(cw_order__drain(ord) == 0, "drain");
		cw_order__stats(ord, &st);
		CHECK(all_once(&s, N), "lost, repeated or damaged records (jitter %d)", jitter);
		CHECK(st.forced > 0, "the byte bound was never reached");
		CHECK(st.peak_bytes <= CW_ORDER_MAX_BYTES && st.arena_bytes <= CW_ORDER_MAX_BYTES,
		      "held %zu bytes in an arena of %zu", st.peak_bytes, st.arena_bytes);
		CHECK(st.peak_events < CW_ORDER_MAX_EVENTS, "the count bound was reached");
		CHECK(st.late == s.late, "late %llu, the output shows %llu",
		      (unsigned long long)st.late, (unsigned long long)s.late);
		if (!jitter) {
			CHECK(st.late == 0, "late without jitter");
			for (size_t i = 0; i < N; i++)
				CHECK(s.id[i] == i, "order broken at %zu", i);
		} else {
			CHECK(st.late > 0, "jitter with early releases made nothing late");
		}
		cw_order__free(ord);
		seen_free(&s);
	}
	passes++;
	printf("ok byte_limit\n");
}

/*
 * What the sample plane will send: a million edges a second and thousands
 * of 1 KiB samples, 5 ms of jitter. Inside the bounds the window only
 * sorts: nothing late, nothing released early, and the arena stays near
 * what 10 ms of records take.
 */
static void test_samples_in_window(void)
{
	enum { N = 400000 };
	struct seen s = seen_new(N);
	struct cw_order *ord = cw_order__new(check_rec, &s, NULL);
	struct cw_order_stats st;

	for (uint64_t i = 0; i < N; i++) {
		uint16_t size = i % 100 == 0 ? 1024 : 56;

		CHECK(cw_order__push(ord, make_rec(i, size, 1000000000ull + i * 1000 +
							    next_rand() % 5000000)) == 0,
		      "push");
	}
	CHECK(cw_order__drain(ord) == 0, "drain");
	cw_order__stats(ord, &st);
	CHECK(all_once(&s, N), "lost, repeated or damaged records");
	CHECK(st.late == 0 && st.forced == 0, "late %llu, forced %llu",
	      (unsigned long long)st.late, (unsigned long long)st.forced);
	for (size_t i = 1; i < N; i++)
		CHECK(s.ts[i - 1] <= s.ts[i], "out of order at %zu", i);
	CHECK(st.arena_bytes <= (4u << 20), "arena grew to %zu for %zu bytes held",
	      st.arena_bytes, st.peak_bytes);
	cw_order__free(ord);
	seen_free(&s);
	passes++;
	printf("ok samples_in_window\n");
}

/* Tiny bounds and random sizes: the ring wraps, skips its end, grows and
 * releases early thousands of times; the window's own late count always
 * matches its output. */
static void test_small_bounds(void)
{
	enum { N = 50000 };
	struct cw_order_opts opts = { .max_events = 37, .max_bytes = 1 };
	struct seen s = seen_new(N);
	struct cw_order *ord = cw_order__new(check_rec, &s, &opts);
	struct cw_order_stats st;

	for (uint64_t i = 0; i < N; i++) {
		uint16_t size = next_rand() % 3 ? 24 + 8 * (uint16_t)(next_rand() % 64) : mixed_size();

		CHECK(cw_order__push(ord, make_rec(i, size, i * 10 + next_rand() % 3000)) == 0,
		      "push");
	}
	CHECK(cw_order__drain(ord) == 0, "drain");
	cw_order__stats(ord, &st);
	CHECK(all_once(&s, N), "lost, repeated or damaged records");
	CHECK(st.arena_bytes == 128u << 10, "arena %zu, bound 128 KiB", st.arena_bytes);
	CHECK(st.peak_events <= 37 && st.peak_bytes <= st.arena_bytes, "bounds exceeded");
	CHECK(st.late == s.late, "late %llu, the output shows %llu", (unsigned long long)st.late,
	      (unsigned long long)s.late);
	{
		struct cw_hdr bad = { .type = 0x11, .size = 20 };

		CHECK(cw_order__push(ord, &bad) == -EINVAL, "a size not a multiple of 8");
	}
	cw_order__free(ord);
	seen_free(&s);
	passes++;
	printf("ok small_bounds\n");
}

int main(void)
{
	test_sorts_jitter();
	test_ties_and_late();
	test_big_records();
	test_count_limit();
	test_byte_limit();
	test_samples_in_window();
	test_small_bounds();
	printf("test_order: %d passed, %d failed\n", passes, failures);
	return failures != 0;
}
