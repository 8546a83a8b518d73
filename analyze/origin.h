/* SPDX-License-Identifier: MIT */
/*
 * Who made an object: the src of a birth edge (a work item's queue, a
 * timer's arm, a packet's submit), by one rule for every class that has
 * such births (docs/model.md §5.5, 5.6):
 *  1. the record's cause, when its owning class can name it: the timer
 *     whose expiry was running (delayed work, a timer re-armed from
 *     another's expiry), the work item being executed, the packet being
 *     received, the io_uring request being completed. It comes first,
 *     in whatever context it ran: a kworker that queues work while it
 *     executes a work item does it on the work item's behalf;
 *  2. else, in task context, the current thread;
 *  3. else nothing: src NULL, confidence unknown, the context as reason.
 *     The interrupted task goes in edges.interrupted_tid, never in src.
 */
#ifndef CAUSEWAY_ORIGIN_H
#define CAUSEWAY_ORIGIN_H

#include "classes.h"

struct cw_origin {
	struct cw_obj *src; /* NULL: unknown */
	uint8_t conf;
	const char *reason;
	struct cw_edge_extra x;
	int64_t pid, tid; /* the current thread in task context, else -1 */
};

/*
 * The origin of an object born at @h, raised by task @t (witness
 * @start) with cause @k (NULL: the record has none). @return 0 or a
 * negative errno.
 */
int cw_origin__of(struct cw_cls *c, const struct cw_hdr *h, const struct cw_task *t,
		  uint64_t start, const struct cw_cause *k, struct cw_origin *o);

/*
 * As cw_origin__of, for a birth @h told by a later record (a timer's
 * start carried by its expiry, bpf/timer.bpf.c), so that what was so at
 * @h may have changed since: a cause whose live generation was
 * established after @h, or a tid that names another task now (the
 * witness says so), is not named; src NULL, confidence unknown, @gone
 * as the reason. Nothing the later records named is ended by it.
 */
int cw_origin__past(struct cw_cls *c, const struct cw_hdr *h, const struct cw_task *t,
		    uint64_t start, const struct cw_cause *k, const char *gone, struct cw_origin *o);

/* The reason of an edge whose src is unknown because of @ctx. */
const char *cw_origin__ctx_reason(uint8_t ctx);

#endif /* CAUSEWAY_ORIGIN_H */
