/* SPDX-License-Identifier: MIT */
/*
 * What the workqueue, timer, net and block objects share: whether, with
 * filter_enabled, an event belongs in the trace through its context.
 *
 * An object those classes set in a cause slot (a timer expiring, a work
 * item running, a packet being received) is *followed* when its own
 * record is in the trace: the class then sets the slot's emitted to 1.
 * What it causes in turn (a work item queued by a timer, a timer armed by
 * a work item) follows it, so a chain that starts in the traced set is
 * recorded link by link, into kworkers and interrupts (docs/model.md §2.2).
 * For the kinds other classes set (io_uring requests, futexes) the
 * remembered-objects map says it.
 *
 * Include after bpf/causeway.bpf.h.
 */
#ifndef CAUSEWAY_FOLLOW_BPF_H
#define CAUSEWAY_FOLLOW_BPF_H

/* Is the object level @lvl's cause slot names followed? */
static __always_inline bool cw_cause_followed(__u8 lvl)
{
	struct cw_slot *s = cw_slot_get(lvl);

	if (!s)
		return false;
	switch (s->kind) {
	case CW_CAUSE_HRTIMER:
	case CW_CAUSE_TIMER:
	case CW_CAUSE_WORK:
	case CW_CAUSE_PACKET:
	case CW_CAUSE_BLOCK:
		return s->emitted;
	default:
		return cw_obj_known(s->kind, s->key);
	}
}

/*
 * Does an object made now, at level @lvl, by the current task belong in
 * the trace: made by a traced task, or caused by a followed object? Never
 * one the capture makes itself.
 * In an unknown context the current task may be an interrupted one; it
 * still decides (a record too many, never a wrong cause: the record's
 * ctx says unknown).
 */
static __always_inline bool cw_made_followed(__u8 lvl)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (lvl == CW_CTX_TASK && cw_is_self(tgid))
		return false;
	if (!cw_config.filter_enabled)
		return true;
	if ((lvl == CW_CTX_TASK || lvl == CW_CTX_UNKNOWN) && cw_tgid_traced(tgid))
		return true;
	return cw_cause_followed(lvl);
}

/* The slot of level @lvl if it holds object @key of @kind, else NULL. */
static __always_inline struct cw_slot *cw_slot_holding(__u8 lvl, __u8 kind, __u64 key)
{
	struct cw_slot *s = cw_slot_get(lvl);

	return s && s->kind == kind && s->key == key ? s : NULL;
}

#endif /* CAUSEWAY_FOLLOW_BPF_H */
