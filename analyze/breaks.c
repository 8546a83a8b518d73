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
#include <stdlib.h>
#include <string.h>
#include "join.h"

struct cw_breaks {
	struct cw_break *v;
	uint64_t *max_end; /* max_end[i] = max end_ns of v[0..i], after finish */
	size_t n, cap;
};

struct cw_breaks *cw_breaks__new(void)
{
	return calloc(1, sizeof(struct cw_breaks));
}

int cw_breaks__add(struct cw_breaks *b, const struct cw_break *br)
{
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
