/* SPDX-License-Identifier: MIT */
/*
 * Ordering: records reach the file in ring-buffer reservation order, which
 * is timestamp order only approximately across CPUs. A bounded reorder
 * window puts them back in timestamp order before the join.
 *
 * The window holds at most CW_ORDER_MAX_EVENTS records and releases a
 * record once a record CW_ORDER_WINDOW_NS newer has been seen, or when it
 * is full. A record older than one already released ("late") is passed on
 * at once and counted: it is never dropped. Ties keep file order, so the
 * same trace always gives the same sequence.
 */
#ifndef CAUSEWAY_ORDER_H
#define CAUSEWAY_ORDER_H

#include <stddef.h>
#include <stdint.h>
#include "../schema/events.h"

#define CW_ORDER_WINDOW_NS 10000000ull /* 10 ms */
#define CW_ORDER_MAX_EVENTS 65536

struct cw_order;

/* Called for each record in order; a non-zero return stops and is passed up. */
typedef int (*cw_order_fn)(void *ctx, const struct cw_hdr *rec);

struct cw_order *cw_order__new(cw_order_fn fn, void *ctx);
/* Copy @rec (hdr.size bytes) into the window; may release older ones. */
int cw_order__push(struct cw_order *o, const struct cw_hdr *rec);
/* Release everything still held. */
int cw_order__drain(struct cw_order *o);
uint64_t cw_order__late(const struct cw_order *o);
void cw_order__free(struct cw_order *o);

#endif /* CAUSEWAY_ORDER_H */
