// SPDX-License-Identifier: MIT
/*
 * The reorder window: a binary min-heap on (ts, arrival sequence). Records
 * are copied into fixed slots so that memory is bounded by the window, not
 * by the trace; the rare record larger than a slot gets its own
 * allocation.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "order.h"

#define SLOT 192
/* Records bigger than a slot (metadata with long strings) may hold at most
 * this much memory in the window; past it the window releases early. A
 * hostile file of 64 KiB records must not make the window 4 GiB. */
#define MAX_BIG_BYTES (32u << 20)

struct item {
	uint64_t ts, seq;
	uint8_t *rec; /* a slot, or a private allocation when big */
};

struct cw_order {
	cw_order_fn fn;
	void *ctx;
	struct item *heap;
	size_t n;
	uint8_t *slots;
	uint8_t **free_slots;
	size_t nfree;
	uint64_t seq;
	uint64_t max_ts;   /* newest timestamp pushed */
	uint64_t last_out; /* timestamp of the last record released */
	int released_any;
	uint64_t late;
	size_t big_bytes;
};

static int item_less(const struct item *a, const struct item *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->seq < b->seq);
}

static int is_slot(const struct cw_order *o, const uint8_t *p)
{
	return p >= o->slots && p < o->slots + (size_t)CW_ORDER_MAX_EVENTS * SLOT;
}

static void put_back(struct cw_order *o, uint8_t *rec)
{
	if (is_slot(o, rec)) {
		o->free_slots[o->nfree++] = rec;
	} else {
		o->big_bytes -= ((const struct cw_hdr *)rec)->size;
		free(rec);
	}
}

static int emit(struct cw_order *o, const struct cw_hdr *h)
{
	if (o->released_any && h->ts < o->last_out) {
		o->late++;
	} else {
		o->last_out = h->ts;
		o->released_any = 1;
	}
	return o->fn(o->ctx, h);
}

static int pop(struct cw_order *o)
{
	struct item top = o->heap[0], last = o->heap[--o->n];
	size_t i = 0;
	int err;

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
	err = emit(o, (const struct cw_hdr *)top.rec);
	put_back(o, top.rec);
	return err;
}

struct cw_order *cw_order__new(cw_order_fn fn, void *ctx)
{
	struct cw_order *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->fn = fn;
	o->ctx = ctx;
	o->heap = malloc(CW_ORDER_MAX_EVENTS * sizeof(*o->heap));
	o->slots = malloc((size_t)CW_ORDER_MAX_EVENTS * SLOT);
	o->free_slots = malloc(CW_ORDER_MAX_EVENTS * sizeof(*o->free_slots));
	if (!o->heap || !o->slots || !o->free_slots) {
		cw_order__free(o);
		errno = ENOMEM;
		return NULL;
	}
	/* Hand out low slots first: fewer pages touched for small traces. */
	for (size_t i = 0; i < CW_ORDER_MAX_EVENTS; i++)
		o->free_slots[i] = o->slots + (CW_ORDER_MAX_EVENTS - 1 - i) * (size_t)SLOT;
	o->nfree = CW_ORDER_MAX_EVENTS;
	return o;
}

int cw_order__push(struct cw_order *o, const struct cw_hdr *rec)
{
	struct item it;
	size_t i;
	int err;

	if (o->n == CW_ORDER_MAX_EVENTS && (err = pop(o)))
		return err;
	if (rec->size <= SLOT) {
		it.rec = o->free_slots[--o->nfree];
	} else {
		while (o->n && o->big_bytes + rec->size > MAX_BIG_BYTES)
			if ((err = pop(o)))
				return err;
		if (!(it.rec = malloc(rec->size)))
			return -ENOMEM;
		o->big_bytes += rec->size;
	}
	memcpy(it.rec, rec, rec->size);
	it.ts = rec->ts;
	it.seq = o->seq++;
	if (rec->ts > o->max_ts)
		o->max_ts = rec->ts;
	for (i = o->n++; i > 0; ) {
		size_t p = (i - 1) / 2;

		if (!item_less(&it, &o->heap[p]))
			break;
		o->heap[i] = o->heap[p];
		i = p;
	}
	o->heap[i] = it;
	while (o->n && o->heap[0].ts + CW_ORDER_WINDOW_NS < o->max_ts)
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
	return o->late;
}

void cw_order__free(struct cw_order *o)
{
	if (!o)
		return;
	while (o->n)
		put_back(o, o->heap[--o->n].rec);
	free(o->heap);
	free(o->slots);
	free(o->free_slots);
	free(o);
}
