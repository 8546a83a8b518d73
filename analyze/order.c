// SPDX-License-Identifier: MIT
/*
 * The reorder window: a binary min-heap on (ts, arrival position) over
 * records copied into one byte arena.
 *
 * The arena is a ring used as a bump allocator: a record is appended at
 * the head, behind an 8-byte block header {length, live}, so records of
 * any size cost their size and no allocation of their own (stack samples
 * are about 1 KiB, accounting records 48 bytes). Records leave in
 * timestamp order, not arrival order, so a released record only marks its
 * block dead; the tail moves over dead blocks. Arrival order is timestamp
 * order give or take the window, so the dead blocks behind a live one at
 * the tail are few, and the ring stays about as large as what the window
 * holds.
 *
 * Positions are virtual byte offsets that only grow (reset when the
 * window is empty), so the arena can double without moving any heap entry:
 * a block at position p lives at p mod capacity, before and after. A block
 * never wraps: the space left before the end of the ring is skipped with
 * a dead filler block when a record does not fit in it. The arrival
 * position is also the tie-break of equal timestamps: file order.
 *
 * Bounds: at most max_events records, and an arena of at most max_bytes.
 * When a record does not fit in either, the oldest record by timestamp is
 * released early (counted as forced); it is never dropped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "order.h"

/* The block header: 8 bytes, so records stay 8-byte aligned. */
struct block {
	uint32_t len; /* block bytes, header included, a multiple of 8 */
	uint32_t live;
};

#define REC_MAX 65528u
#define BLOCK_MAX (sizeof(struct block) + REC_MAX)
/* Two of the largest blocks: one may be waiting at the tail while the
 * other is appended. */
#define ARENA_MIN (2 * 65536u)
#define ARENA_START (256u << 10)

_Static_assert(BLOCK_MAX <= 65536u, "a block fits in half of the smallest arena");

struct item {
	uint64_t ts;
	uint64_t pos; /* virtual position of the block: arrival order */
};

struct cw_order {
	cw_order_fn fn;
	void *ctx;
	struct item *heap;
	size_t n, max_events;
	uint8_t *arena;
	size_t cap, max_bytes; /* powers of two */
	uint64_t head, tail;   /* virtual positions; tail..head is in use */
	size_t live_bytes;
	uint64_t max_ts;   /* newest timestamp pushed */
	uint64_t last_out; /* timestamp of the last record released */
	int released_any;
	struct cw_order_stats st;
};

static int item_less(const struct item *a, const struct item *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->pos < b->pos);
}

static struct block *block_at(const struct cw_order *o, uint64_t pos)
{
	return (struct block *)(o->arena + (pos & (o->cap - 1)));
}

static int emit(struct cw_order *o, const struct cw_hdr *h)
{
	if (o->released_any && h->ts < o->last_out) {
		o->st.late++;
	} else {
		o->last_out = h->ts;
		o->released_any = 1;
	}
	return o->fn(o->ctx, h);
}

static int pop(struct cw_order *o)
{
	struct item top = o->heap[0], last = o->heap[--o->n];
	struct block *b = block_at(o, top.pos);
	size_t i = 0;

	while (o->n) {
		size_t c = 2 * i + 1;

		if (c >= o->n)
			break;
		if (c + 1 < o->n && item_less(&o->heap[c + 1], &o->heap[c]))
			c++;
		if (!item_less(&o->heap[c], &last))
			break;
		o->heap[i] = o->heap[c];
		i = c;
	}
	if (o->n)
		o->heap[i] = last;
	b->live = 0;
	o->live_bytes -= b->len;
	return emit(o, (const struct cw_hdr *)(b + 1));
}

/* Move the tail over dead blocks; an empty ring starts again at 0. */
static void reclaim(struct cw_order *o)
{
	while (o->tail != o->head) {
		const struct block *b = block_at(o, o->tail);

		if (b->live)
			break;
		o->tail += b->len;
	}
	if (o->tail == o->head)
		o->tail = o->head = 0;
}

/* Double the arena. Blocks keep their virtual positions: a block that did
 * not cross a multiple of the old capacity crosses none of the new. */
static int grow(struct cw_order *o)
{
	size_t cap = o->cap * 2;
	uint8_t *a = malloc(cap);

	if (!a)
		return -ENOMEM;
	for (uint64_t p = o->tail; p < o->head;) {
		size_t from = p & (o->cap - 1), to = p & (cap - 1);
		size_t n = o->head - p;

		if (n > o->cap - from)
			n = o->cap - from;
		memcpy(a + to, o->arena + from, n);
		p += n;
	}
	free(o->arena);
	o->arena = a;
	o->cap = cap;
	o->st.arena_bytes = cap;
	return 0;
}

/*
 * Room for a block of @need bytes at the head, releasing records early
 * when a bound says so. @return 0 with o->head at the block, or an error
 * from grow or from the callback.
 */
static int reserve(struct cw_order *o, size_t need)
{
	for (;;) {
		size_t to_end, gap;
		int err;

		reclaim(o);
		to_end = o->cap - (o->head & (o->cap - 1));
		gap = to_end < need ? to_end : 0;
		if (o->head - o->tail + gap + need <= o->cap) {
			if (o->n < o->max_events) {
				if (gap) {
					*block_at(o, o->head) = (struct block){ (uint32_t)gap, 0 };
					o->head += gap;
				}
				return 0;
			}
		} else if (o->cap < o->max_bytes) {
			if ((err = grow(o)))
				return err;
			continue;
		}
		/* A bound is reached: the earliest record goes now. The ring
		 * is never full while it is empty (need <= ARENA_MIN / 2). */
		o->st.forced++;
		if ((err = pop(o)))
			return err;
	}
}

static size_t pow2_at_least(size_t v, size_t min)
{
	size_t p = min;

	while (p < v && p < ((size_t)1 << 40))
		p *= 2;
	return p;
}

struct cw_order *cw_order__new(cw_order_fn fn, void *ctx, const struct cw_order_opts *opts)
{
	struct cw_order *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->fn = fn;
	o->ctx = ctx;
	o->max_events = opts && opts->max_events ? opts->max_events : CW_ORDER_MAX_EVENTS;
	o->max_bytes = pow2_at_least(opts && opts->max_bytes ? opts->max_bytes : CW_ORDER_MAX_BYTES,
				     ARENA_MIN);
	o->cap = o->max_bytes < ARENA_START ? o->max_bytes : ARENA_START;
	o->st.arena_bytes = o->cap;
	o->heap = malloc(o->max_events * sizeof(*o->heap));
	o->arena = malloc(o->cap);
	if (!o->heap || !o->arena) {
		cw_order__free(o);
		errno = ENOMEM;
		return NULL;
	}
	return o;
}

int cw_order__push(struct cw_order *o, const struct cw_hdr *rec)
{
	size_t need = sizeof(struct block) + rec->size, i;
	struct block *b;
	struct item it;
	int err;

	if (rec->size < sizeof(*rec) || rec->size > REC_MAX || rec->size % 8)
		return -EINVAL;
	if ((err = reserve(o, need)))
		return err;
	b = block_at(o, o->head);
	b->len = (uint32_t)need;
	b->live = 1;
	memcpy(b + 1, rec, rec->size);
	it.ts = rec->ts;
	it.pos = o->head;
	o->head += need;
	o->live_bytes += need;
	if (o->live_bytes > o->st.peak_bytes)
		o->st.peak_bytes = o->live_bytes;
	if (rec->ts > o->max_ts)
		o->max_ts = rec->ts;
	for (i = o->n++; i > 0;) {
		size_t p = (i - 1) / 2;

		if (!item_less(&it, &o->heap[p]))
			break;
		o->heap[i] = o->heap[p];
		i = p;
	}
	o->heap[i] = it;
	if (o->n > o->st.peak_events)
		o->st.peak_events = o->n;
	/* Written so that a timestamp near 2^64 cannot wrap the window. */
	while (o->n && o->max_ts > CW_ORDER_WINDOW_NS &&
	       o->heap[0].ts < o->max_ts - CW_ORDER_WINDOW_NS)
		if ((err = pop(o)))
			return err;
	return 0;
}

int cw_order__drain(struct cw_order *o)
{
	while (o->n) {
		int err = pop(o);

		if (err)
			return err;
	}
	return 0;
}

uint64_t cw_order__late(const struct cw_order *o)
{
	return o->st.late;
}

void cw_order__stats(const struct cw_order *o, struct cw_order_stats *st)
{
	*st = o->st;
}

void cw_order__free(struct cw_order *o)
{
	if (!o)
		return;
	free(o->heap);
	free(o->arena);
	free(o);
}
