// SPDX-License-Identifier: MIT
/*
 * Coverage breaks: windows in which evidence may be missing (ring-buffer
 * loss reported by accounting records, damaged stretches of the file).
 * They are collected in a first pass over the trace, before the join,
 * because a loss is reported at the end of its accounting window: the
 * events it affects have been read by then. Knowing every break up front
 * lets the join downgrade exactly the joins whose evidence could lie
 * inside one (contract 5.7).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "join.h"

/* At most this many breaks are kept (a few MiB). A hostile or very lossy
 * trace past it gets its breaks coarsened: neighbours on the same stream
 * are merged into one wider break. A wider break only ever downgrades
 * more joins, never fewer, so the bound costs precision, not honesty. */
#define MAX_BREAKS 65536
/* How far back an added break looks for one to extend: accounting
 * windows of all CPUs and classes interleave in the file. */
#define MERGE_LOOKBACK 64

struct cw_breaks {
	struct cw_break *v;
	uint64_t *max_end; /* max_end[i] = max end_ns of v[0..i], after finish */
	size_t n, cap;
	uint64_t coarsened; /* breaks merged away by the bound */
};

struct cw_breaks *cw_breaks__new(void)
{
	return calloc(1, sizeof(struct cw_breaks));
}

static void absorb(struct cw_break *into, const struct cw_break *br)
{
	if (br->start_ns < into->start_ns)
		into->start_ns = br->start_ns;
	if (br->end_ns > into->end_ns)
		into->end_ns = br->end_ns;
	if (into->lost < 0 || br->lost < 0)
		into->lost = -1;
	else
		into->lost = br->lost > INT64_MAX - into->lost ? INT64_MAX : into->lost + br->lost;
}

/* Do @a and @b overlap or touch (consecutive accounting windows share
 * their boundary)? */
static int touches(const struct cw_break *a, const struct cw_break *b)
{
	return a->start_ns <= b->end_ns + 1 && b->start_ns <= a->end_ns + 1;
}

static int stream_cmp(const struct cw_break *x, const struct cw_break *y)
{
	int c = strcmp(x->stream, y->stream);

	if (c)
		return c;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static int stream_qcmp(const void *a, const void *b)
{
	return stream_cmp(a, b);
}

/* Merge neighbours on one stream until at most half the bound is left,
 * widening the gap that may be merged across each round. */
static void coarsen(struct cw_breaks *b)
{
	uint64_t gap = 1000000; /* 1 ms */

	while (b->n > MAX_BREAKS / 2) {
		size_t w = 0;

		qsort(b->v, b->n, sizeof(*b->v), stream_qcmp);
		for (size_t i = 1; i < b->n; i++) {
			struct cw_break *last = &b->v[w], *cur = &b->v[i];

			if (!strcmp(last->stream, cur->stream) && cur->start_ns <= last->end_ns + gap) {
				if (last->cpu != cur->cpu)
					last->cpu = -1;
				if (strcmp(last->reason, cur->reason))
					snprintf(last->reason, sizeof(last->reason), "%s: many breaks, coarsened",
						 last->stream);
				absorb(last, cur);
				b->coarsened++;
			} else {
				b->v[++w] = *cur;
			}
		}
		b->n = w + 1;
		gap = gap > UINT64_MAX / 4 ? UINT64_MAX : gap * 4;
	}
}

int cw_breaks__add(struct cw_breaks *b, const struct cw_break *br)
{
	size_t from = b->n > MERGE_LOOKBACK ? b->n - MERGE_LOOKBACK : 0;

	/* Adjacent or overlapping windows of one stream, CPU and cause are
	 * one break: a long lossy stretch must not cost a row a second. */
	for (size_t i = b->n; i-- > from;) {
		struct cw_break *e = &b->v[i];

		if (e->cpu == br->cpu && !strcmp(e->stream, br->stream) &&
		    !strcmp(e->reason, br->reason) && touches(e, br)) {
			absorb(e, br);
			return 0;
		}
	}
	if (b->n >= MAX_BREAKS)
		coarsen(b);
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 16;
		struct cw_break *v = realloc(b->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n++] = *br;
	return 0;
}

uint64_t cw_breaks__coarsened(const struct cw_breaks *b)
{
	return b ? b->coarsened : 0;
}

static int break_cmp(const void *a, const void *b)
{
	const struct cw_break *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->end_ns != y->end_ns)
		return x->end_ns < y->end_ns ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return strcmp(x->reason, y->reason);
}

void cw_breaks__finish(struct cw_breaks *b)
{
	uint64_t m = 0;

	if (!b->n)
		return;
	qsort(b->v, b->n, sizeof(*b->v), break_cmp);
	free(b->max_end);
	b->max_end = malloc(b->n * sizeof(*b->max_end));
	if (!b->max_end)
		return; /* queries then fall back to a linear scan */
	for (size_t i = 0; i < b->n; i++) {
		if (b->v[i].end_ns > m)
			m = b->v[i].end_ns;
		b->max_end[i] = m;
	}
}

size_t cw_breaks__count(const struct cw_breaks *b)
{
	return b ? b->n : 0;
}

const struct cw_break *cw_breaks__get(const struct cw_breaks *b, size_t i)
{
	return &b->v[i];
}

int cw_breaks__overlap(const struct cw_breaks *b, uint64_t from, uint64_t to)
{
	size_t lo = 0, hi;

	if (!b || !b->n)
		return 0;
	if (!b->max_end) {
		for (size_t i = 0; i < b->n; i++)
			if (b->v[i].start_ns <= to && b->v[i].end_ns >= from)
				return 1;
		return 0;
	}
	/* Breaks starting at or before @to are a prefix; one of them reaches
	 * @from iff the prefix's largest end does. */
	hi = b->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->v[mid].start_ns <= to)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && b->max_end[lo - 1] >= from;
}

void cw_breaks__free(struct cw_breaks *b)
{
	if (!b)
		return;
	free(b->v);
	free(b->max_end);
	free(b);
}
