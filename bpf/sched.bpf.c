// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * causeway edge plane, sched class (docs/model.md §2.1): switches, wakeups with
 * the waker's interrupt context, forks, execs, exits and renames, each as
 * one schema/events.h record on the `edges` ring.
 *
 * Filtering (docs/model.md §2.2): with filter_enabled, an edge is kept when
 * either end is in the traced set; the set follows fork, and a process
 * leaves it at the final switch-out of its last thread (see bpf/config.h,
 * struct cw_traced). The capture's own process is never recorded: an edge
 * with the capture at either end is dropped, and so are its forks; a
 * switch between the capture and a traced task is the traced task's, with
 * the capture's end written as the idle task (0/0).
 *
 * A capture that filters without this class (-p with -e usdt) still
 * follows forks: it loads handle_fork and the exits alone, with
 * follow_only set, and they keep the traced set and write nothing.
 *
 * sched_wakeup is not hooked: it follows the sched_waking of the same
 * wakeup, later and perhaps on the wakee's CPU, and carries no handoff
 * sched_waking does not (docs/model.md §2.3: the handoff, not every event
 * that might be one). Older traces have its records, which the analyzer
 * still reads.
 *
 * Only wakeups can be raised in interrupt context; switches, forks, execs,
 * exits and renames run in the task they name, so their ctx is task.
 *
 * A sched_waking raised while its level's cause slot is set (the expiring
 * timer, the work item, the packet, the io_uring request, the futex call
 * the other classes name there, bpf/causeway.bpf.h) is written as
 * CW_REC_WAKING_CAUSED: the same wake, then the cause. The plain path
 * pays one per-CPU array lookup for it.
 *
 * Where a tracepoint's arguments changed across kernels, there are two
 * programs and user space autoloads the one that matches the running
 * kernel's BTF, never a version check: the class descriptor in
 * capture/classes.c lists every program with its tracepoint and argument
 * counts.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "schema/events.h"
#include "bpf/config.h"
#include "causeway.bpf.h"
#include "follow.bpf.h"
#include "wait.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

static __always_inline __u32 task_cpu(struct task_struct *p)
{
	if (bpf_core_field_exists(p->thread_info.cpu))
		return p->thread_info.cpu;
	return ((struct task_struct___old *)p)->cpu;
}

/* ---- sched_switch ---------------------------------------------------- */

/*
 * Off-CPU waits (cw_config.switch_waits, format 1.9): a traced task that
 * blocks (not preempted, not dead, not idle) is a wait of the context
 * plane, and the switch record that says it blocked is that wait
 * (CW_SWITCH_WAIT, with the budget's keep), so that one record, one
 * reservation and one clock read serve both; its stacks follow in a
 * sample record when the budget takes them (bpf/wait.bpf.h). A task the
 * context plane samples without its being traced (with -p, a kworker
 * executing a followed work item) has no switch of its own: its wait is
 * a sample record, as the sample plane writes it.
 */
/* One end of a switch record. The capture is never named (it runs every
 * poll period, most often right after a traced task blocks), but the
 * traced end's switch is still written: the capture's end (@self) reads
 * as the idle task, a CPU given to no task of the trace. */
static __always_inline void switch_end(struct task_struct *t, bool self, struct cw_task *id,
				       __s32 *prio, __u64 *start)
{
	id->tid = self ? 0 : t->pid;
	id->pid = self ? 0 : t->tgid;
	*prio = self ? 0 : t->prio;
	*start = self ? 0 : t->start_time;
}

static __always_inline int emit_switch(void *ctx, struct task_struct *prev,
				       struct task_struct *next, __u64 prev_state, bool preempt)
{
	__u32 prev_tgid = prev->tgid, next_tgid = next->tgid;
	bool prev_self = cw_is_self(prev_tgid), next_self = cw_is_self(next_tgid);
	bool blocks = cw_config.switch_waits && !preempt && prev_state &&
		      !(prev_state & CW_TASK_DEAD) && prev->pid && !prev_self;
	bool prev_traced, drop = true;
	struct cw_switch *e;
	__u64 ts, keep = 0;

	prev_traced = cw_tgid_traced(prev_tgid);
	if (blocks && !prev_traced && cw_config.filter_enabled && cw_cause_followed(CW_CTX_TASK))
		cw_offer(ctx, NULL, prev, CW_CTX_TASK, bpf_ktime_get_ns());
	if (!prev_traced && !cw_tgid_traced(next_tgid))
		return 0;
	/* System-wide, the capture to or from idle: nobody's switch. */
	if ((prev_self || !prev->pid) && (next_self || !next->pid))
		return 0;
	e = cw_reserve(sizeof(*e), CW_REC_SWITCH, CW_CTX_TASK);
	if (!e)
		goto out;
	switch_end(prev, prev_self, &e->prev, &e->prev_prio, &e->prev_start);
	switch_end(next, next_self, &e->next, &e->next_prio, &e->next_start);
	e->prev_state = prev_self ? 0 : prev_state;
	ts = e->hdr.ts;
	if (preempt && !prev_self)
		e->hdr.flags = CW_SWITCH_PREEMPT;
	if (blocks && prev_traced) {
		keep = keep_or_drop(ts, true, &drop);
		e->hdr.flags = drop ? CW_SWITCH_WAIT : CW_SWITCH_WAIT | CW_SWITCH_STACKS;
	}
	e->keep = keep;
	cw_submit(e);
	if (!drop)
		cw_sample_stacks(ctx, NULL, prev, CW_REC_SAMPLE_OFFCPU, CW_CTX_TASK, ts, keep,
				 CW_SAMPLE_EVERY_WAIT | CW_SAMPLE_AT_SWITCH);
out:
	/* The last thread of a traced process is gone: its tgid may now be
	 * reused by an unrelated process, so forget it. */
	if (cw_config.filter_enabled && (prev_state & CW_TASK_DEAD)) {
		struct cw_traced *t = bpf_map_lookup_elem(&traced, &prev_tgid);

		if (t && t->state == CW_TRACED_DYING && t->tid == (__u32)prev->pid) {
			cw_traced_mark(prev_tgid, false);
			bpf_map_delete_elem(&traced, &prev_tgid);
		}
	}
	return 0;
}

/* 5.18+: prev_state is an argument, read before a pending signal could
 * reset prev->__state to running. */
SEC("tp_btf/sched_switch")
int BPF_PROG(handle_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return emit_switch(ctx, prev, next, prev_state, preempt);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(handle_switch_v0, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return emit_switch(ctx, prev, next, cw_task_state(prev), preempt);
}

/* ---- wakeups --------------------------------------------------------- */

/*
 * The cause slot a sched_waking at level @ctx names, or NULL. At an
 * interrupt level a slot whose tid is set names the one thread its
 * processing wakes (an io_uring request's task work goes to its task):
 * a wakeup of any other thread is not its doing.
 */
static __always_inline struct cw_slot *waking_cause(__u8 ctx, struct task_struct *p)
{
	struct cw_slot *s = cw_slot_get(ctx);

	if (s && ctx != CW_CTX_TASK && s->tid && s->tid != (__u32)p->pid)
		return NULL;
	return s;
}

static __always_inline int emit_wake(struct task_struct *p, __u16 type)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 cur_tgid = id >> 32, cur_tid = (__u32)id;
	__u32 wakee_tgid = p->tgid;
	__u8 ctx = cw_context();
	struct cw_slot *s = NULL;
	struct cw_wake *e;

	if (cw_is_self(wakee_tgid))
		return 0;
	if (ctx == CW_CTX_TASK) {
		if (cw_is_self(cur_tgid))
			return 0;
		if (cw_config.filter_enabled && !cw_tgid_traced(wakee_tgid) &&
		    !cw_tgid_traced(cur_tgid))
			return 0;
	} else {
		/* The interrupted task (or, with an unknown context, perhaps
		 * interrupted) is not an end of this edge: only the wakee
		 * decides, and an interrupted capture is not named. */
		if (cw_config.filter_enabled && !cw_tgid_traced(wakee_tgid))
			return 0;
		if (cw_is_self(cur_tgid))
			cur_tgid = cur_tid = 0;
	}
	/* Only sched_waking runs in the waker's context, where the slot is
	 * the waker's; @type is a constant, so the others skip this. */
	if (type == CW_REC_WAKING)
		s = waking_cause(ctx, p);
	if (s) {
		struct cw_wake_caused *c;

		type = CW_REC_WAKING_CAUSED;
		c = cw_reserve(sizeof(*c), type, ctx);
		if (!c)
			return 0;
		c->cause.key = s->key;
		c->cause.aux = s->aux;
		c->cause.kind = s->kind;
		__builtin_memset(c->cause.__pad, 0, sizeof(c->cause.__pad));
		/* A slot for one thread is spent on its one wakeup. */
		if (ctx != CW_CTX_TASK && s->tid)
			s->kind = CW_CAUSE_NONE;
		e = &c->w;
	} else {
		e = cw_reserve(sizeof(*e), type, ctx);
		if (!e)
			return 0;
	}
	e->waker.tid = cur_tid;
	e->waker.pid = cur_tgid;
	e->wakee.tid = p->pid;
	e->wakee.pid = wakee_tgid;
	e->target_cpu = task_cpu(p);
	e->wakee_prio = p->prio;
	e->waker_start = cur_tid ? bpf_get_current_task_btf()->start_time : 0;
	e->wakee_start = p->start_time;
	cw_submit(e);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(handle_waking, struct task_struct *p)
{
	return emit_wake(p, CW_REC_WAKING);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(handle_wakeup_new, struct task_struct *p)
{
	return emit_wake(p, CW_REC_WAKEUP_NEW);
}

/* ---- fork, exec, exit, rename ---------------------------------------- */

SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_tgid = parent->tgid, child_pid = child->pid, child_tgid = child->tgid;
	struct cw_fork *e;

	if (cw_is_self(parent_tgid))
		return 0;
	if (cw_config.filter_enabled) {
		struct cw_traced live = { .state = CW_TRACED_LIVE };

		if (!cw_tgid_traced(parent_tgid))
			return 0;
		/* A new process joins the traced set; a thread is already in
		 * through its tgid. */
		if (child_pid == child_tgid) {
			if (bpf_map_update_elem(&traced, &child_tgid, &live, BPF_ANY))
				cw_count_lost(CW_RING_MAP, CW_CLASS_SCHED);
			else
				cw_traced_mark(child_tgid, true);
		}
	}
	if (cw_config.follow_only)
		return 0;
	e = cw_reserve(sizeof(*e), CW_REC_FORK, CW_CTX_TASK);
	if (!e)
		return 0;
	e->parent.tid = parent->pid;
	e->parent.pid = parent_tgid;
	e->child.tid = child_pid;
	e->child.pid = child_tgid;
	e->fork_flags = child_pid != child_tgid ? CW_FORK_THREAD : 0;
	e->__pad = 0;
	e->clone_flags = 0; /* not visible at this tracepoint */
	CW_READ_STR(e->child_comm, child->comm);
	e->parent_start = parent->start_time;
	e->child_start = child->start_time;
	cw_submit(e);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;
	struct cw_exec *e;

	if (!cw_tgid_traced(tgid))
		return 0;
	e = cw_reserve(sizeof(*e), CW_REC_EXEC, CW_CTX_TASK);
	if (!e)
		return 0;
	e->task.tid = p->pid;
	e->task.pid = tgid;
	e->old_tid = old_pid;
	e->__pad = 0;
	CW_READ_STR(e->comm, p->comm);
	CW_READ_STR(e->filename, BPF_CORE_READ(bprm, filename));
	e->task_start = p->start_time;
	cw_submit(e);
	return 0;
}

static __always_inline int emit_exit(struct task_struct *p, bool group_dead)
{
	__u32 tgid = p->tgid;
	struct cw_exit *e;

	if (!cw_tgid_traced(tgid))
		return 0;
	/* No switch program retires it: it goes now. */
	if (cw_config.follow_only) {
		if (group_dead) {
			cw_traced_mark(tgid, false);
			bpf_map_delete_elem(&traced, &tgid);
		}
		return 0;
	}
	e = cw_reserve(sizeof(*e), CW_REC_EXIT, CW_CTX_TASK);
	if (e) {
		e->task.tid = p->pid;
		e->task.pid = tgid;
		e->exit_flags = group_dead ? CW_EXIT_GROUP_DEAD : 0;
		e->exit_code = p->exit_code;
		e->task_start = p->start_time;
		cw_submit(e);
	}
	/* The process is gone once this thread has switched out for the
	 * last time (emit_switch); until then its switches are recorded. */
	if (cw_config.filter_enabled && group_dead) {
		struct cw_traced dying = { .state = CW_TRACED_DYING, .tid = p->pid };

		bpf_map_update_elem(&traced, &tgid, &dying, BPF_EXIST);
	}
	return 0;
}

/* 6.16+: group_dead is an argument. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit, struct task_struct *p, bool group_dead)
{
	return emit_exit(p, group_dead);
}

/* Before: signal->live was already decremented by do_exit(). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit_v0, struct task_struct *p)
{
	return emit_exit(p, BPF_CORE_READ(p, signal, live.counter) == 0);
}

SEC("tp_btf/task_rename")
int BPF_PROG(handle_rename, struct task_struct *task, const char *comm)
{
	__u32 tgid = task->tgid;
	struct cw_rename *e;

	if (!cw_tgid_traced(tgid))
		return 0;
	e = cw_reserve(sizeof(*e), CW_REC_RENAME, CW_CTX_TASK);
	if (!e)
		return 0;
	e->task.tid = task->pid;
	e->task.pid = tgid;
	CW_READ_STR(e->oldcomm, task->comm);
	CW_READ_STR(e->newcomm, comm);
	e->task_start = task->start_time;
	cw_submit(e);
	return 0;
}
