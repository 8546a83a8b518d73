// SPDX-License-Identifier: MIT
/*
 * Coverage breaks alone (analyze/breaks.c), and the ones scoped to an
 * io_uring ring (a CQE overflow, docs/model.md §5.4):
 *  - a ring's break is seen by that ring's joins only, never by the
 *    global query the other classes ask, nor by another ring's joins;
 *  - breaks merge only within one stream, CPU, class, reason and ring;
 *    a break coarsened from several classes is of none;
 *  - coarsening past the bound keeps a ring's breaks on that ring while
 *    merging within rings is enough, and when it is not, the merged break
 *    concerns every join (wider, never narrower); it always ends;
 *  - sample-ring loss is seen only by the sample query: never by an edge
 *    join, with or without a ring, whatever else is in the index.
 */
#include <stdio.h>
#include <string.h>
#include "tests/check.h"
#include "analyze/join.h"

static int add(struct cw_breaks *b, uint64_t from, uint64_t to, uint64_t ring, const char *reason)
{
	struct cw_break br = {
		.start_ns = from, .end_ns = to, .cpu = -1, .stream = ring ? "io_uring" : "edge",
		.lost = 1, .ring = ring,
	};

	snprintf(br.reason, sizeof(br.reason), "%s", reason);
	return cw_breaks__add(b, &br);
}

static void test_scoped(void)
{
	struct cw_breaks *b = cw_breaks__new();

	CHECK(b, "new");
	CHECK(!add(b, 100, 200, 0, "ring full: sched"), "add");
	CHECK(!add(b, 500, 500, 0xa, "CQE overflow on ring 0xa"), "add");
	CHECK(!add(b, 900, 950, 0xb, "CQE overflow on ring 0xb"), "add");
	cw_breaks__finish(b);
	CHECK(cw_breaks__count(b) == 3, "count %zu", cw_breaks__count(b));
	CHECK(cw_breaks__overlap(b, 0, 1000), "global break not seen");
	CHECK(!cw_breaks__overlap(b, 300, 1000), "a ring's break seen by the global query");
	CHECK(cw_breaks__overlap_ring(b, 0xa, 300, 600), "ring 0xa's break not seen by its join");
	CHECK(!cw_breaks__overlap_ring(b, 0xa, 501, 899), "ring 0xa's join sees ring 0xb's break");
	CHECK(!cw_breaks__overlap_ring(b, 0xc, 300, 899), "ring 0xc's join sees another ring's break");
	CHECK(cw_breaks__overlap_ring(b, 0xc, 150, 160), "a ring's join does not see a global break");
	CHECK(cw_breaks__overlap_ring(b, 0xb, 950, 2000), "ring 0xb's break end not seen");
	CHECK(!cw_breaks__overlap_ring(b, 0xb, 951, 2000), "ring 0xb's break seen past its end");
	CHECK(!cw_breaks__overlap_ring(b, 0, 300, 1000), "ring 0 is the global scope");
	cw_breaks__free(b);
	passes++;
	printf("ok scoped\n");
}

static void test_merge(void)
{
	struct cw_breaks *b = cw_breaks__new();

	CHECK(b, "new");
	/* Touching, same stream, CPU and reason: one break per ring. */
	CHECK(!add(b, 10, 10, 1, "overflow"), "add");
	CHECK(!add(b, 11, 11, 1, "overflow"), "add");
	CHECK(!add(b, 10, 10, 2, "overflow"), "add");
	CHECK(!add(b, 11, 11, 2, "overflow"), "add");
	cw_breaks__finish(b);
	CHECK(cw_breaks__count(b) == 2, "count %zu", cw_breaks__count(b));
	for (size_t i = 0; i < 2; i++) {
		const struct cw_break *br = cw_breaks__get(b, i);

		CHECK(br->start_ns == 10 && br->end_ns == 11 && br->lost == 2 && br->ring,
		      "break %zu: %llu..%llu lost %lld ring %llu", i, (unsigned long long)br->start_ns,
		      (unsigned long long)br->end_ns, (long long)br->lost,
		      (unsigned long long)br->ring);
	}
	cw_breaks__free(b);
	passes++;
	printf("ok merge\n");
}

/* Two rings, 35000 breaks each, 1 s apart: merging within each ring is
 * enough, and no break leaks out of its ring. */
static void test_coarsen_within(void)
{
	struct cw_breaks *b = cw_breaks__new();
	char reason[64];
	size_t n;

	CHECK(b, "new");
	for (uint64_t i = 0; i < 70000; i++) {
		uint64_t ring = 1 + i % 2, t = 1000000000ull * (1 + i);

		snprintf(reason, sizeof(reason), "CQE overflow on ring 0x%llx", (unsigned long long)ring);
		CHECK(!add(b, t, t, ring, reason), "add %llu", (unsigned long long)i);
	}
	cw_breaks__finish(b);
	n = cw_breaks__count(b);
	CHECK(n <= 65536 / 2 && cw_breaks__coarsened(b) > 0, "count %zu coarsened %llu", n,
	      (unsigned long long)cw_breaks__coarsened(b));
	for (size_t i = 0; i < n; i++)
		CHECK(cw_breaks__get(b, i)->ring, "break %zu left its ring", i);
	CHECK(!cw_breaks__overlap(b, 0, UINT64_MAX), "a ring's breaks seen by the global query");
	CHECK(cw_breaks__overlap_ring(b, 1, 1000000000ull, 1000000000ull), "ring 1 lost its break");
	CHECK(cw_breaks__overlap_ring(b, 2, 2000000000ull, 2000000000ull), "ring 2 lost its break");
	CHECK(!cw_breaks__overlap_ring(b, 3, 0, UINT64_MAX), "ring 3 sees other rings' breaks");
	cw_breaks__free(b);
	passes++;
	printf("ok coarsen within rings (%zu breaks)\n", n);
}

/* 70000 rings with one break each: merging within rings cannot reach the
 * bound, so breaks of different rings merge, and concern every join. */
static void test_coarsen_across(void)
{
	struct cw_breaks *b = cw_breaks__new();
	char reason[64];
	size_t n;

	CHECK(b, "new");
	for (uint64_t i = 0; i < 70000; i++) {
		snprintf(reason, sizeof(reason), "CQE overflow on ring 0x%llx",
			 (unsigned long long)(i + 1));
		CHECK(!add(b, 1000 + i, 1000 + i, i + 1, reason), "add %llu", (unsigned long long)i);
	}
	cw_breaks__finish(b);
	n = cw_breaks__count(b);
	CHECK(n <= 65536 / 2, "count %zu", n);
	CHECK(cw_breaks__overlap(b, 1000, 1000), "merged rings' breaks do not concern every join");
	CHECK(cw_breaks__overlap_ring(b, 7, 1006, 1006), "ring 7's join does not see its break");
	cw_breaks__free(b);
	passes++;
	printf("ok coarsen across rings (%zu breaks)\n", n);
}

static void test_samples(void)
{
	struct cw_breaks *b = cw_breaks__new();
	struct cw_break br = { .start_ns = 100, .end_ns = 200, .cpu = 0,
			       .stream = CW_BREAK_STREAM_SAMPLE, .lost = 5 };

	CHECK(b, "new");
	snprintf(br.reason, sizeof(br.reason), "ring full: sample");
	CHECK(!cw_breaks__add(b, &br), "add");
	CHECK(!add(b, 500, 600, 0, "ring full: sched"), "add");
	CHECK(!add(b, 150, 160, 0xa, "CQE overflow on ring 0xa"), "add");
	cw_breaks__finish(b);
	CHECK(!cw_breaks__overlap(b, 0, 400), "an edge join sees a sample break");
	CHECK(!cw_breaks__overlap_ring(b, 0xb, 0, 400), "a ring's join sees a sample break");
	CHECK(cw_breaks__overlap_samples(b, 150, 150), "the sample query misses its break");
	CHECK(!cw_breaks__overlap_samples(b, 201, 1000), "the sample query sees other streams");
	CHECK(cw_breaks__overlap(b, 550, 550), "the edge break is lost");
	cw_breaks__free(b);
	passes++;
	printf("ok samples\n");
}

/* A break's class is a key like its ring: touching breaks of two classes
 * stay two, and a break coarsened from breaks of two classes is of none,
 * one coarsened from breaks of one class keeps it. Three runs of breaks
 * 1 s apart, each run 10^6 s from the next: 30000 of sched and timer in
 * turn, 20000 of sched, 20000 of timer. */
#define RUN_NS 1000000000000000ull

static void test_class(void)
{
	static const int32_t want[3] = { CW_BREAK_NO_CLASS, CW_CLASS_SCHED, CW_CLASS_TIMER };
	struct cw_breaks *b = cw_breaks__new();
	struct cw_break br = { .cpu = 0, .stream = "edge", .lost = 1 };
	size_t n;

	CHECK(b, "new");
	snprintf(br.reason, sizeof(br.reason), "ring full");
	br.start_ns = br.end_ns = 10;
	br.class = CW_CLASS_SCHED;
	CHECK(!cw_breaks__add(b, &br), "add");
	br.start_ns = br.end_ns = 11;
	br.class = CW_BREAK_NO_CLASS;
	CHECK(!cw_breaks__add(b, &br), "add");
	CHECK(cw_breaks__count(b) == 2, "breaks of two classes merged: count %zu",
	      cw_breaks__count(b));
	cw_breaks__free(b);

	b = cw_breaks__new();
	CHECK(b, "new");
	for (uint64_t i = 0; i < 70000; i++) {
		uint64_t run = i < 30000 ? 0 : i < 50000 ? 1 : 2;
		int sched = run == 1 || (run == 0 && i % 2);

		br.start_ns = br.end_ns = run * RUN_NS + 1000000000ull * (1 + i);
		br.class = sched ? CW_CLASS_SCHED : CW_CLASS_TIMER;
		snprintf(br.reason, sizeof(br.reason), "ring full: %s", sched ? "sched" : "timer");
		CHECK(!cw_breaks__add(b, &br), "add %llu", (unsigned long long)i);
	}
	cw_breaks__finish(b);
	n = cw_breaks__count(b);
	CHECK(n <= 65536 / 2 && cw_breaks__coarsened(b) > 0, "count %zu", n);
	for (size_t i = 0; i < n; i++) {
		const struct cw_break *c = cw_breaks__get(b, i);
		uint64_t run = c->start_ns / RUN_NS;

		CHECK(run < 3 && c->end_ns / RUN_NS == run, "break %zu crosses runs", i);
		CHECK(run >= 3 || c->class == want[run], "break %zu of run %llu: class %d", i,
		      (unsigned long long)run, (int)c->class);
	}
	cw_breaks__free(b);
	passes++;
	printf("ok class (%zu breaks)\n", n);
}

int main(void)
{
	test_scoped();
	test_merge();
	test_coarsen_within();
	test_coarsen_across();
	test_samples();
	test_class();
	printf("test_breaks: %d passed, %d failed\n", passes, failures);
	return failures != 0;
}
