// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * causeway edge plane, block class (docs/model.md §2.1): block requests,
 * from the context that made them to the wakes their completions raise.
 *
 *   block_rq_insert          held in blk_origin until the issue
 *   block_bio_backmerge,     held in blk_merges until the request that
 *   block_bio_frontmerge     holds the bio is issued
 *   block_rq_merge           a request merged into another: its insert
 *                            moves to blk_merges, under its first bio
 *   block_rq_issue           CW_REC_BLOCK_ISSUE (a generation of the
 *                            request), then CW_REC_BLOCK_MERGE for each
 *                            held merge of its bios
 *   block_rq_complete        CW_REC_BLOCK_COMPLETE, and the cause slot
 *
 * The submitter (docs/model.md §2.3). With an I/O scheduler, the context
 * that issues a request to the driver is whoever runs the hardware queue
 * then, often not the one that made it. The insert is made by the
 * submitter (its own thread, its plug flushed as it sleeps, or the work
 * item a kworker runs: writeback, the requeue work that issues flushes),
 * so BPF holds every insert, keyed by the request, until the issue, and
 * writes the two as one record. An issue with no insert held is a direct
 * issue, in the submitter's own context. Inserts are held whoever makes
 * them, traced or not, with a mark saying which: without the untraced
 * ones, the issue of a stranger's request by a traced thread that runs
 * the queue would look like that thread's direct issue (a wrong
 * submitter, which no later record could undo). A full map is a loss of
 * the class (a coverage break); the bound is the requests waiting for
 * their issue on every device at once.
 *
 * Merges. A bio merged into a waiting request (or a request merged into
 * another) was submitted by its own context, which the request's
 * completion wakes too. The tracepoints name the bio, not the request it
 * joins; the request's bios are read at its issue (the first
 * CW_BLK_MAX_BIOS), and each held merge found there is written after the
 * issue. A held merge older than the request (the bio's pointer reused
 * since) is not believed: it is dropped, unwritten.
 *
 * Causes. A completion names its request in the cause slot of its level
 * (softirq, or hardirq inside a device interrupt handler, the only
 * hardirq work whose end this object sees: bpf/irq.bpf.h says why),
 * with the completion's time as aux (its record's ts): the wakes of one
 * completion of a request whose issue the trace lacks then name one
 * orphan, and the next completion of that pointer another. The slot is
 * cleared at that level's end, or replaced by the next completion of the
 * same softirq or handler. A completion in task context (polled I/O) sets
 * no slot: a missing cause, never a wrong one. A request the kernel
 * completes without having issued it (the data-less part of a flush
 * sequence, completed inside the flush request's completion) leaves the
 * slot to the flush request, which is what ended the wait.
 *
 * Filtering (docs/model.md §2.2), with filter_enabled: a request is
 * recorded when its submitter is traced or followed (a work item the
 * traced set queued, bpf/follow.bpf.h); it is then remembered until it is
 * issued again, so that its completion is recorded. A completion of a
 * request not remembered writes nothing but still takes the slot: a
 * traced thread it wakes names it (an orphan block request, its issue not
 * in the trace), and a followed request the slot held before is not
 * named for a wake that is not its own.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "schema/events.h"
#include "bpf/config.h"
#include "causeway.bpf.h"
#include "follow.bpf.h"
#include "irq.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define CW_BLK_MAX_BIOS 16
#define CW_REQ_OP_MASK 0xff /* include/linux/blk_types.h: REQ_OP_BITS 8 */

/* A held insert or merge: the origin record, and whether the traced set
 * made it (filtered mode; 1 otherwise). */
struct blk_held {
	struct cw_block_origin o;
	__u8 followed;
	__u8 __pad[7];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* struct request * */
	__type(value, struct blk_held);
} blk_origin SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* struct bio * */
	__type(value, struct blk_held);
} blk_merges SEC(".maps");

/* How many merges blk_merges holds, so that an issue reads its bios only
 * when there can be one to find. Raised before an insert, lowered after
 * a delete: never below what the map holds. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __s64);
} blk_merges_n SEC(".maps");

/* Fill @h with what the current context, at level @lvl, is doing now:
 * only the mark when the traced set did not make it, since nothing of it
 * is ever written then. @return the mark. */
static __always_inline bool held_fill(struct blk_held *h, __u8 lvl)
{
	__builtin_memset(h, 0, sizeof(*h));
	h->followed = cw_made_followed(lvl);
	if (!h->followed)
		return false;
	cw_current(&h->o.task, &h->o.task_start);
	h->o.ts = bpf_ktime_get_ns();
	h->o.cpu = bpf_get_smp_processor_id();
	h->o.ctx = lvl;
	cw_cause_fill(&h->o.cause, lvl);
	return true;
}

static __always_inline __s64 *merges_n(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&blk_merges_n, &zero);
}

static __always_inline void merge_hold(__u64 bio, const struct blk_held *h)
{
	__s64 *n = merges_n();

	if (n)
		__sync_fetch_and_add(n, 1);
	if (bpf_map_update_elem(&blk_merges, &bio, h, BPF_NOEXIST)) {
		if (n)
			__sync_fetch_and_add(n, -1);
		/* Held already (the same bio merged twice cannot be; a stale
		 * entry of a reused pointer can): replace it in place. */
		if (bpf_map_update_elem(&blk_merges, &bio, h, BPF_EXIST))
			cw_count_lost(CW_RING_MAP, CW_CLASS_BLOCK);
	}
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(handle_insert, struct request *rq)
{
	__u8 lvl = cw_context();
	__u64 key = (__u64)rq;
	struct blk_held h;

	held_fill(&h, lvl);
	if (bpf_map_update_elem(&blk_origin, &key, &h, BPF_ANY))
		cw_count_lost(CW_RING_MAP, CW_CLASS_BLOCK);
	return 0;
}

static __always_inline int bio_merge(struct bio *bio)
{
	struct blk_held h;

	if (held_fill(&h, cw_context()))
		merge_hold((__u64)bio, &h);
	return 0;
}

SEC("tp_btf/block_bio_backmerge")
int BPF_PROG(handle_backmerge, struct bio *bio)
{
	return bio_merge(bio);
}

SEC("tp_btf/block_bio_frontmerge")
int BPF_PROG(handle_frontmerge, struct bio *bio)
{
	return bio_merge(bio);
}

/* @next is merged into another request and freed: its insert becomes a
 * merge of its first bio, which the survivor now holds. */
SEC("tp_btf/block_rq_merge")
int BPF_PROG(handle_rq_merge, struct request *next)
{
	__u64 key = (__u64)next;
	struct blk_held *h = bpf_map_lookup_elem(&blk_origin, &key);
	struct blk_held copy;

	if (!h)
		return 0;
	copy = *h;
	bpf_map_delete_elem(&blk_origin, &key);
	if (copy.followed)
		merge_hold((__u64)BPF_CORE_READ(next, bio), &copy);
	return 0;
}

static __always_inline __u8 blk_flags(__u32 opf)
{
	__u8 f = 0;

	if (opf & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_FUA)))
		f |= CW_BLK_FUA;
	if (opf & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH)))
		f |= CW_BLK_PREFLUSH;
	if (opf & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_SYNC)))
		f |= CW_BLK_SYNC;
	if (opf & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_META)))
		f |= CW_BLK_META;
	return f;
}

static __always_inline __u8 blk_op(__u32 op)
{
	switch (op) {
	case 0:
		return CW_BLK_OP_READ;
	case 1:
		return CW_BLK_OP_WRITE;
	case 2:
		return CW_BLK_OP_FLUSH;
	case 3:
		return CW_BLK_OP_DISCARD;
	default:
		return CW_BLK_OP_OTHER;
	}
}

/* The held merges of @rq's bios, written after its issue record; @born:
 * the request's allocation (0: unknown, and then none is believed). */
static __always_inline void emit_merges(struct request *rq, __u8 lvl, __u64 born, __u8 *nbios)
{
	struct bio *bio = rq->bio;
	__s64 *n = merges_n();
	__u8 i;

	for (i = 0; i < CW_BLK_MAX_BIOS && bio; i++, bio = bio->bi_next) {
		__u64 key = (__u64)bio;
		struct blk_held *h;
		struct cw_block_merge *e;

		if (!n || *n <= 0)
			continue;
		h = bpf_map_lookup_elem(&blk_merges, &key);
		if (!h)
			continue;
		if (born && h->o.ts >= born && h->followed &&
		    (e = cw_reserve(sizeof(*e), CW_REC_BLOCK_MERGE, lvl))) {
			cw_current(&e->task, &e->task_start);
			e->rq = (__u64)rq;
			e->bio = key;
			e->origin = h->o;
			cw_submit(e);
		}
		if (!bpf_map_delete_elem(&blk_merges, &key))
			__sync_fetch_and_add(n, -1);
	}
	*nbios = i;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(handle_issue, struct request *rq)
{
	__u8 lvl = cw_context();
	__u64 key = (__u64)rq;
	struct blk_held *held = bpf_map_lookup_elem(&blk_origin, &key);
	struct cw_block_issue *e;
	struct blk_held h;
	__u32 opf = rq->cmd_flags;
	__u8 nbios = 0;

	/* The insert this issue spends, or for a direct issue the issuing
	 * context itself. */
	if (held) {
		h = *held;
		bpf_map_delete_elem(&blk_origin, &key);
	} else {
		held_fill(&h, lvl);
	}
	if (!h.followed) {
		/* A request issued again, by a stranger now. */
		if (cw_config.filter_enabled)
			cw_obj_forget(CW_CAUSE_BLOCK, key);
		return 0;
	}
	if (cw_config.filter_enabled)
		cw_obj_remember(CW_CAUSE_BLOCK, key, h.o.task.pid, CW_CLASS_BLOCK);
	e = cw_reserve(sizeof(*e), CW_REC_BLOCK_ISSUE, lvl);
	if (!e)
		return 0;
	cw_current(&e->task, &e->task_start);
	e->rq = key;
	e->sector = rq->__sector;
	e->nr_bytes = rq->__data_len;
	e->dev = BPF_CORE_READ(rq, q, disk, part0, bd_dev);
	e->op_raw = opf & CW_REQ_OP_MASK;
	e->op = blk_op(e->op_raw);
	e->flags = blk_flags(opf);
	e->__pad = 0;
	e->origin = h.o;
	emit_merges(rq, lvl, rq->start_time_ns, &nbios);
	e->nbios = nbios;
	cw_submit(e);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(handle_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	__u8 lvl = cw_context();
	__u64 key = (__u64)rq, now;
	struct cw_block_complete *e;
	struct cw_slot *s;
	bool rec, slot;

	/* Never issued: the flush request's completion runs this one. */
	if (rq->state == MQ_RQ_IDLE)
		return 0;
	rec = !cw_config.filter_enabled || cw_obj_known(CW_CAUSE_BLOCK, key);
	slot = cw_slot_bounded(lvl);
	if (!rec && !slot)
		return 0;
	now = bpf_ktime_get_ns();
	if (slot) {
		cw_slot_set(lvl, CW_CAUSE_BLOCK, key, now);
		s = cw_slot_of(lvl);
		if (s)
			s->emitted = rec;
	}
	if (!rec)
		return 0;
	e = cw_reserve(sizeof(*e), CW_REC_BLOCK_COMPLETE, lvl);
	if (!e)
		return 0;
	e->hdr.ts = now; /* the slot's aux: which completion a cause is */
	cw_current(&e->task, &e->task_start);
	e->rq = key;
	e->nr_bytes = nr_bytes;
	e->error = error;
	if (nr_bytes >= rq->__data_len)
		e->hdr.flags |= CW_BLK_FINAL;
	cw_submit(e);
	return 0;
}

/* ---- the ends of interrupt processing ------------------------------- */

/* A block request's completion is over. Another class's object the slot
 * holds is that class's to clear. */
static __always_inline void clear_block(__u8 lvl)
{
	struct cw_slot *s = cw_slot_of(lvl);

	if (s && s->kind == CW_CAUSE_BLOCK)
		s->kind = CW_CAUSE_NONE;
}

CW_IRQ_HANDLER_PROGS(clear_block)

SEC("tp_btf/softirq_exit")
int BPF_PROG(handle_softirq_exit, unsigned int vec_nr)
{
	clear_block(CW_CTX_SOFTIRQ);
	return 0;
}
