// SPDX-License-Identifier: MIT
/*
 * Coverage breaks: windows in which evidence may be missing (ring-buffer
 * loss reported by accounting records, damaged stretches of the file).
 * They are collected in a first pass over the trace, before the join,
 * because a loss is reported at the end of its accounting window: the
 * events it affects have been read by then. Knowing every break up front
 * lets the join downgrade exactly the joins whose evidence could lie
 * inside one (docs/model.md §5.7).
 *
 * A break may concern one io_uring ring only (a CQE overflow,
 * docs/model.md §5.4): cw_break.ring names it, only that ring's joins
 * ask about it (cw_breaks__overlap_ring), and the other classes' joins
 * never see it.
 *
 * Loss on the sample ring concerns samples only: the sample ring carries
 * no fork, exit, wake or switch, so a lost sample can hide no change of
 * identity and no cause. Its breaks are a plane of their own in the
 * index, which the edge joins never query (cw_breaks__overlap_samples
 * does).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "breaks.h"

/* At most this many breaks are kept (a few MiB). A hostile or very lossy
 * trace past it gets its breaks coarsened: neighbours on the same stream
 * are merged into one wider break. A wider break only ever downgrades
 * more joins, never fewer, so the bound costs precision, not honesty. */
#define MAX_BREAKS 65536
/* How far back an added break looks for one to extend: accounting
 * windows of all CPUs and classes interleave in the file. */
#define MERGE_LOOKBACK 64

/* A break's place in the index: sorted by (plane, ring, start), so the
 * breaks that concern every join (plane 0, ring 0) are the first run,
 * each ring's breaks a run of their own, and the sample stream's (plane
 * 1) the last. */
struct span {
	uint64_t plane, ring, start_ns, end_ns;
	/* the largest end_ns from the start of its run to here */
	uint64_t max_end;
};

struct cw_breaks {
	struct cw_break *v;
	size_t n, cap;
	uint64_t coarsened; /* breaks merged away by the bound */
	struct span *idx;   /* after finish; NULL: queries scan v */
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

/* Coarsening order: by stream, then (unless @across) ring, then start. */
static int coarse_cmp(const struct cw_break *x, const struct cw_break *y, int across)
{
	int c = strcmp(x->stream, y->stream);

	if (c)
		return c;
	if (!across && x->ring != y->ring)
		return x->ring < y->ring ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static int coarse_qcmp(const void *a, const void *b)
{
	return coarse_cmp(a, b, 0);
}

static int coarse_across_qcmp(const void *a, const void *b)
{
	return coarse_cmp(a, b, 1);
}

/*
 * Merge neighbours on one stream until at most half the bound is left,
 * widening the gap that may be merged across each round. Breaks scoped to
 * different rings merge only when merging within each ring, whatever the
 * gap, is not enough; a break merged from two rings concerns every join:
 * wider, so still honest.
 */
static void coarsen(struct cw_breaks *b)
{
	uint64_t gap = 1000000; /* 1 ms */
	int across = 0;

	while (b->n > MAX_BREAKS / 2) {
		size_t w = 0;

		qsort(b->v, b->n, sizeof(*b->v), across ? coarse_across_qcmp : coarse_qcmp);
		for (size_t i = 1; i < b->n; i++) {
			struct cw_break *last = &b->v[w], *cur = &b->v[i];

			/* Sorted by start within a run: cur starts no earlier. */
			if (!strcmp(last->stream, cur->stream) && (across || last->ring == cur->ring) &&
			    (cur->start_ns <= last->end_ns || cur->start_ns - last->end_ns <= gap)) {
				if (last->cpu != cur->cpu)
					last->cpu = -1;
				if (last->ring != cur->ring)
					last->ring = 0;
				if (last->class != cur->class)
					last->class = CW_BREAK_NO_CLASS;
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
		if (gap == UINT64_MAX && !across) {
			/* Merging within rings is not enough: merge across
			 * them, again from the narrowest gap. */
			across = 1;
			gap = 1000000;
		} else {
			gap = gap > UINT64_MAX / 4 ? UINT64_MAX : gap * 4;
		}
	}
}

int cw_breaks__add(struct cw_breaks *b, const struct cw_break *br)
{
	size_t from = b->n > MERGE_LOOKBACK ? b->n - MERGE_LOOKBACK : 0;

	/* Adjacent or overlapping windows of one stream, CPU, class, cause
	 * and ring are one break: a long lossy stretch must not cost a row
	 * a second. */
	for (size_t i = b->n; i-- > from;) {
		struct cw_break *e = &b->v[i];

		if (e->cpu == br->cpu && e->ring == br->ring && e->class == br->class &&
		    !strcmp(e->stream, br->stream) && !strcmp(e->reason, br->reason) &&
		    touches(e, br)) {
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
	int c;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->end_ns != y->end_ns)
		return x->end_ns < y->end_ns ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if ((c = strcmp(x->reason, y->reason)))
		return c;
	if (x->class != y->class)
		return x->class < y->class ? -1 : 1;
	return x->ring < y->ring ? -1 : x->ring > y->ring;
}

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->plane != y->plane)
		return x->plane < y->plane ? -1 : 1;
	if (x->ring != y->ring)
		return x->ring < y->ring ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static uint64_t plane_of(const struct cw_break *br)
{
	return !strcmp(br->stream, CW_BREAK_STREAM_SAMPLE);
}

void cw_breaks__finish(struct cw_breaks *b)
{
	if (!b->n)
		return;
	qsort(b->v, b->n, sizeof(*b->v), break_cmp);
	free(b->idx);
	b->idx = malloc(b->n * sizeof(*b->idx));
	if (!b->idx)
		return; /* queries then fall back to a linear scan */
	for (size_t i = 0; i < b->n; i++)
		b->idx[i] = (struct span){ plane_of(&b->v[i]), b->v[i].ring, b->v[i].start_ns,
					   b->v[i].end_ns, 0 };
	qsort(b->idx, b->n, sizeof(*b->idx), span_cmp);
	for (size_t i = 0; i < b->n; i++) {
		struct span *s = &b->idx[i];

		s->max_end = s->end_ns;
		if (i && s[-1].plane == s->plane && s[-1].ring == s->ring &&
		    s[-1].max_end > s->max_end)
			s->max_end = s[-1].max_end;
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

/* Does a break of @plane and @ring (0: those that concern every join)
 * overlap [from, to]? */
static int overlap_in(const struct cw_breaks *b, uint64_t plane, uint64_t ring, uint64_t from,
		      uint64_t to)
{
	size_t lo = 0, hi = b->n, run;

	if (!b->idx) {
		for (size_t i = 0; i < b->n; i++)
			if (plane_of(&b->v[i]) == plane && b->v[i].ring == ring &&
			    b->v[i].start_ns <= to && b->v[i].end_ns >= from)
				return 1;
		return 0;
	}
	/* The run of (@plane, @ring) starts at the first span not below
	 * (plane, ring, 0)... */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct span *m = &b->idx[mid];

		if (m->plane < plane || (m->plane == plane && m->ring < ring))
			lo = mid + 1;
		else
			hi = mid;
	}
	run = lo;
	/* ...and its spans starting at or before @to are a prefix of it; one
	 * of them reaches @from iff the prefix's largest end does. */
	hi = b->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct span *m = &b->idx[mid];

		if (m->plane == plane && m->ring == ring && m->start_ns <= to)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > run && b->idx[lo - 1].max_end >= from;
}

int cw_breaks__overlap(const struct cw_breaks *b, uint64_t from, uint64_t to)
{
	return b && b->n && overlap_in(b, 0, 0, from, to);
}

int cw_breaks__overlap_ring(const struct cw_breaks *b, uint64_t ring, uint64_t from, uint64_t to)
{
	return cw_breaks__overlap(b, from, to) ||
	       (b && b->n && ring && overlap_in(b, 0, ring, from, to));
}

int cw_breaks__overlap_samples(const struct cw_breaks *b, uint64_t from, uint64_t to)
{
	return b && b->n && overlap_in(b, 1, 0, from, to);
}

void cw_breaks__free(struct cw_breaks *b)
{
	if (!b)
		return;
	free(b->v);
	free(b->idx);
	free(b);
}
