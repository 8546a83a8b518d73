// SPDX-License-Identifier: MIT
/*
 * The block class: block requests (docs/model.md §5.2, 5.3, 5.5).
 *
 * Identity. A block request is ('block_request', 'block', struct request
 * pointer, generation), named by its operation and disk: "WRITE 254:0",
 * "FLUSH 254:0". The kernel reuses request pointers from its tag sets at
 * the rate of the I/O, so every issue to the driver is a birth: a new
 * generation, born at its insert (the capture holds the insert until the
 * issue and writes them as one record, bpf/block.bpf.c), which replaces
 * whatever generation of the pointer was live. Its disk, sector, bytes
 * and issue time are a block_requests row.
 *
 * Edges.
 *  - submit: submitter -> block request, at the insert: the insert's
 *    cause (the work item a kworker ran: writeback, the requeue work that
 *    issues flushes), else its thread in task context, else unknown
 *    (origin.h). What the insert names is looked up at the issue, which
 *    comes later (cw_origin__past): a thread or work item gone since is
 *    not named. One more submit per bio another context merged into the
 *    request before its issue (CW_REC_BLOCK_MERGE): that context waits
 *    for this completion too.
 *  - the wakes a completion raises (softirq, or a device interrupt's
 *    handler) name the request as their cause: the sched class makes
 *    them wake edges with reason 'block' through the cause hook below.
 *  - complete: block request -> thread, where the completion ran in a
 *    thread's own context (polled I/O). In interrupt context there is no
 *    context node to end it at: the completion is the request's end_ns.
 * A request stays live after its completion, so that the wakes of that
 * completion name it, until its pointer is issued again. A completion or
 * a wake's cause with no live generation (issued before the capture, by
 * a context outside the traced set, or evicted) makes an orphan with an
 * incoming submit edge, src NULL, reason 'orphan: issue not in trace'.
 */
#include <errno.h>
#include <stdio.h>
#include "classes.h"
#include "origin.h"

#define SCOPE_BLOCK "block"

#define B_DONE 0x1 /* its final completion was seen */

/* What the class keeps with a block request (the owner of its state
 * bytes): its last completion's time, which the cause slot's aux names
 * (bpf/block.bpf.c), 0 before one. */
struct blk_state {
	uint64_t done_ts;
};
CW_OBJ_STATE_OF(blk_of, struct blk_state, state)

static const char R_NO_ISSUE[] = "orphan: issue not in trace";
static const char R_ISSUE_BREAK[] = "orphan: its issue could be in a coverage break";
static const char R_GONE[] = "submitter changed before the issue";

#define CW_BLOCK_COUNTERS(X)                                                          \
	X(issues, "block_issues", "block requests issued (generations)")               \
	X(merges, "block_merges", "bios merged in by another context (submit edges)")  \
	X(errors, "block_errors", "completions with an error status")                  \
	X(merge_orphans, "block_merges_unjoined", "merges of a request not live: no edge")

struct block_stats {
	CW_BLOCK_COUNTERS(CW_COUNTER_FIELD)
};

struct block {
	struct block_stats st;
};

static const char *op_name(uint8_t op, uint8_t raw, char *buf, size_t len)
{
	switch (op) {
	case CW_BLK_OP_READ:
		return "READ";
	case CW_BLK_OP_WRITE:
		return "WRITE";
	case CW_BLK_OP_FLUSH:
		return "FLUSH";
	case CW_BLK_OP_DISCARD:
		return "DISCARD";
	}
	/* include/linux/blk_types.h, enum req_op: part of the kernel ABI
	 * that blktrace and the block tracepoints print. */
	switch (raw) {
	case 5:
		return "SECURE_ERASE";
	case 9:
		return "WRITE_ZEROES";
	case 34:
		return "DRV_IN";
	case 35:
		return "DRV_OUT";
	}
	snprintf(buf, len, "OP%u", raw);
	return buf;
}

static void flag_names(uint8_t f, char *buf, size_t len)
{
	static const struct {
		uint8_t bit;
		const char *name;
	} names[] = {
		{ CW_BLK_PREFLUSH, "PREFLUSH" },
		{ CW_BLK_FUA, "FUA" },
		{ CW_BLK_SYNC, "SYNC" },
		{ CW_BLK_META, "META" },
	};
	size_t at = 0;

	buf[0] = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((f & names[i].bit) && at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? "," : "",
					       names[i].name);
}

/* A dev_t as the kernel packs it (MINORBITS 20). */
static void dev_name(uint32_t dev, char *buf, size_t len)
{
	snprintf(buf, len, "%u:%u", dev >> 20, dev & 0xfffff);
}

static const struct cw_scope *block_scope(struct cw_cls *c)
{
	return cw_ident__scope(c->id, SCOPE_BLOCK);
}

static struct cw_obj *live(struct cw_cls *c, uint64_t rq)
{
	const struct cw_scope *s = cw_ident__scope_find(c->id, SCOPE_BLOCK);

	return s ? cw_ident__live(c->id, CW_NODE_BLOCK_REQUEST, s, rq) : NULL;
}

/* The header of an origin's event, as its own record would have had. */
static struct cw_hdr origin_hdr(const struct cw_hdr *h, const struct cw_block_origin *og)
{
	struct cw_hdr oh = *h;

	oh.cpu = og->cpu;
	oh.ctx = og->ctx;
	oh.ts = og->ts;
	return oh;
}

/* The submitter an origin names, at @oh. */
static int origin_of(struct cw_cls *c, const struct cw_hdr *h, const struct cw_hdr *oh,
		     const struct cw_block_origin *og, struct cw_origin *o)
{
	if (oh->ts < h->ts)
		return cw_origin__past(c, oh, &og->task, og->task_start, &og->cause, R_GONE, o);
	return cw_origin__of(c, oh, &og->task, og->task_start, &og->cause, o);
}

static int write_row(struct cw_cls *c, const struct cw_obj *o, const struct cw_block_issue *r)
{
	const struct cw_sink *sink = cw_ident__sink(c->id);
	struct cw_block_row row = {
		.node = o->n.id,
		.sector = r->sector,
		.bytes = r->nr_bytes,
		.issue_ns = r->hdr.ts,
		.start_ns = o->n.start_ns,
	};
	char opbuf[16];

	if (!sink->block)
		return 0;
	dev_name(r->dev, row.dev, sizeof(row.dev));
	row.op = op_name(r->op, r->op_raw, opbuf, sizeof(opbuf));
	flag_names(r->flags, row.flags, sizeof(row.flags));
	return sink->block(sink->ctx, &row);
}

static int on_issue(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_block_issue *r = (const void *)h;
	struct cw_hdr oh = origin_hdr(h, &r->origin);
	struct block *b = c->state;
	const struct cw_scope *s;
	struct cw_origin og;
	struct cw_obj *o;
	char name[64], opbuf[16], dev[24];
	int err;

	if (r->origin.ts > h->ts) {
		c->st->bad_records++;
		return 0;
	}
	if ((err = origin_of(c, h, &oh, &r->origin, &og)))
		return err;
	if (!(s = block_scope(c)))
		return -ENOMEM;
	o = cw_ident__new_gen(c->id, CW_NODE_BLOCK_REQUEST, s, r->rq, oh.ts, 1, &err);
	if (!o)
		return err;
	/* Established at the issue, which the capture wrote with its
	 * insert: no loss between them can hide a rebirth. */
	o->est_ns = h->ts;
	dev_name(r->dev, dev, sizeof(dev));
	snprintf(name, sizeof(name), "%s %s", op_name(r->op, r->op_raw, opbuf, sizeof(opbuf)), dev);
	cw_obj__set_name(o, name, sizeof(name));
	o->n.pid = og.pid;
	o->n.tid = og.tid;
	b->st.issues++;
	if ((err = write_row(c, o, r)))
		return err;
	return cw_ident__edge_x(c->id, CW_EDGE_SUBMIT, og.src, o, &oh, CW_SRC_KERNEL, og.conf,
				og.reason, &og.x);
}

/* A bio another context merged in: written right after its request's
 * issue (before the driver has it), so the live generation is that
 * issue's, unless a coverage break between them says it may not be. */
static int on_merge(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_block_merge *r = (const void *)h;
	struct cw_hdr oh = origin_hdr(h, &r->origin);
	struct block *b = c->state;
	struct cw_obj *o = live(c, r->rq);
	struct cw_origin og;
	int err;

	if (r->origin.ts > h->ts) {
		c->st->bad_records++;
		return 0;
	}
	if (!o || o->est_ns > h->ts || (o->flags & B_DONE) ||
	    cw_ident__break_in(c->id, o->est_ns, h->ts)) {
		b->st.merge_orphans++;
		return 0;
	}
	if ((err = origin_of(c, h, &oh, &r->origin, &og)))
		return err;
	b->st.merges++;
	return cw_ident__edge_x(c->id, CW_EDGE_SUBMIT, og.src, o, &oh, CW_SRC_KERNEL, og.conf,
				og.reason, &og.x);
}

/*
 * The generation the completion at @done (its record's ts, or the cause
 * slot's aux) names at @h: the live one, unless a coverage break since
 * its issue could hide another issue of the pointer, or it has completed
 * at another time since (an issue the trace lacks came between); else an
 * orphan, which that completion's other wakes then name.
 */
static struct cw_obj *named(struct cw_cls *c, uint64_t rq, uint64_t done, const struct cw_hdr *h,
			    int *err)
{
	struct cw_obj *o = live(c, rq);
	const struct cw_scope *s;
	const char *why = R_NO_ISSUE;

	if ((*err = cw_ident__stale(c->id, o, h->ts)) < 0)
		return NULL;
	if (*err) {
		o = NULL;
		why = R_ISSUE_BREAK;
	}
	*err = 0;
	if (o && done && blk_of(o)->done_ts && blk_of(o)->done_ts != done)
		o = NULL;
	if (o) {
		cw_ident__touch(c->id, o);
		return o;
	}
	if (!(s = block_scope(c))) {
		*err = -ENOMEM;
		return NULL;
	}
	o = cw_ident__orphan(c->id, CW_NODE_BLOCK_REQUEST, s, rq, h, CW_EDGE_SUBMIT, why, err);
	if (o)
		blk_of(o)->done_ts = done;
	return o;
}

static int on_complete(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_block_complete *r = (const void *)h;
	struct block *b = c->state;
	struct cw_obj *o, *t = NULL;
	int err, matched;

	if (!(o = named(c, r->rq, 0, h, &err)))
		return err;
	blk_of(o)->done_ts = h->ts;
	if (r->error)
		b->st.errors++;
	if (!(h->flags & CW_BLK_FINAL))
		return 0;
	o->flags |= B_DONE;
	o->n.end_ns = (int64_t)h->ts;
	o->ended = 1;
	if (h->ctx != CW_CTX_TASK || !r->task.tid)
		return 0;
	if (!(t = cw_cls__thread(c, &r->task, r->task_start, h, CW_T_CREATE, &matched, &err)))
		return err;
	return cw_ident__edge(c->id, CW_EDGE_COMPLETE, o, t, h, CW_SRC_KERNEL, CW_CONF_OBSERVED, NULL);
}

/*
 * A block request named as a cause (the wakes its completion raises,
 * what a work item queued by it does), by the completion the slot's aux
 * says. Asked of the past, the live generation, if it was that one.
 */
static struct cw_obj *block_cause(struct cw_cls *c, const struct cw_cause *k,
				  const struct cw_hdr *h, int flags, uint8_t *conf,
				  const char **reason, int *err)
{
	struct cw_obj *o;

	*reason = NULL;
	*err = 0;
	if (flags & CW_CAUSE_PAST) {
		o = live(c, k->key);
		if (!o || (k->aux && blk_of(o)->done_ts && blk_of(o)->done_ts != k->aux))
			return NULL;
		return cw_cls__named_at(c, o, h, conf, reason);
	}
	o = named(c, k->key, k->aux, h, err);
	*conf = CW_CONF_OBSERVED;
	return o;
}

static const struct cw_handler handlers[] = {
	{ CW_REC_BLOCK_ISSUE, on_issue },
	{ CW_REC_BLOCK_MERGE, on_merge },
	{ CW_REC_BLOCK_COMPLETE, on_complete },
	{ 0 },
};

#define BLOCK_ENTRY(field, key, comment) CW_COUNTER_ENTRY(struct block, st.field, key)
static const struct cw_counter counters[] = {
	CW_BLOCK_COUNTERS(BLOCK_ENTRY)
	{ NULL, 0, 0 },
};

const struct cw_aclass cw_aclass_block = {
	.name = "block",
	.state_size = sizeof(struct block),
	.handlers = handlers,
	.cause_kinds = 1u << CW_CAUSE_BLOCK,
	.cause = block_cause,
	.counters = counters,
};
