/* SPDX-License-Identifier: MIT */
/*
 * Ordering: records reach the file in ring-buffer reservation order, which
 * is timestamp order only approximately across CPUs. A bounded reorder
 * window puts them back in timestamp order before the join.
 *
 * The window releases a record once a record CW_ORDER_WINDOW_NS newer has
 * been seen, or earlier when it is full: it holds at most max_events
 * records and max_bytes bytes of them, whatever their sizes (a 1 KiB stack
 * sample costs its size, not a slot, and no allocation of its own). A
 * record older than one already released ("late") is passed on at once
 * and counted: it is never dropped. Ties keep file order, so the same
 * trace always gives the same sequence.
 */
#ifndef CAUSEWAY_ORDER_H
#define CAUSEWAY_ORDER_H

#include <stddef.h>
#include <stdint.h>
#include "../schema/events.h"

#define CW_ORDER_WINDOW_NS 10000000ull /* 10 ms */
#define CW_ORDER_MAX_EVENTS 65536
/* 32 MiB: 10 ms of edges at several million events/s, or of 1 KiB
 * samples at a million per second, and yet a small part of the analyzer's
 * memory. */
#define CW_ORDER_MAX_BYTES (32u << 20)

struct cw_order_opts {
	size_t max_events; /* 0: CW_ORDER_MAX_EVENTS */
	size_t max_bytes;  /* 0: CW_ORDER_MAX_BYTES; rounded up to a power of
			    * two, at least 128 KiB (two of the largest record) */
};

struct cw_order_stats {
	uint64_t late;	     /* released after a newer record */
	uint64_t forced;     /* released before their window because a bound
			      * was reached */
	size_t peak_events;  /* most records held at once */
	size_t peak_bytes;   /* most bytes the records held at once took */
	size_t arena_bytes;  /* memory the window has grown to */
};

struct cw_order;

/* Called for each record in order; a non-zero return stops and is passed up. */
typedef int (*cw_order_fn)(void *ctx, const struct cw_hdr *rec);

/* @opts may be NULL. NULL + errno on failure. */
struct cw_order *cw_order__new(cw_order_fn fn, void *ctx, const struct cw_order_opts *opts);
/* Copy @rec (hdr.size bytes, at most 65528) into the window; may release
 * older ones. @return 0, -EINVAL for a size the format does not allow, or
 * what fn returned. */
int cw_order__push(struct cw_order *o, const struct cw_hdr *rec);
/* Release everything still held. */
int cw_order__drain(struct cw_order *o);
uint64_t cw_order__late(const struct cw_order *o);
void cw_order__stats(const struct cw_order *o, struct cw_order_stats *st);
void cw_order__free(struct cw_order *o);

#endif /* CAUSEWAY_ORDER_H */
