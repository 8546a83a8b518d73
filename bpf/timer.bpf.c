// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * causeway edge plane, timer class (docs/model.md §2.1): hrtimers and timer_list
 * timers armed, expiring and cancelled, each as one schema/events.h record
 * on the `edges` ring (kind CW_TIMER_HR or CW_TIMER_LIST).
 *
 *   hrtimer_start, timer_start                CW_REC_TIMER_START  a timer is armed (a birth)
 *   hrtimer_expire_entry, timer_expire_entry  CW_REC_TIMER_EXPIRE its function runs
 *   hrtimer_expire_exit, timer_expire_exit    CW_REC_TIMER_EXPIRE_EXIT
 *   hrtimer_cancel, timer_cancel              CW_REC_TIMER_CANCEL dequeued, not expiring
 *
 * Causes: between expire entry and exit the timer is in the cause slot of
 * the level its function runs at (hardirq for most hrtimers, softirq for
 * timer_list timers and soft hrtimers), so the wakeup it raises, or the
 * work it queues, names it. Expire exit clears the slot if it still holds
 * the timer. A timer armed inside another timer's expiry or a work item
 * carries that cause.
 *
 * Cancels: timer_cancel fires whenever a timer_list timer leaves its
 * wheel, and that is also right before every expiry (expire_timers()
 * detaches it first) and when mod_timer() re-arms a pending timer; on
 * kernels before hrtimer_start's was_armed argument, hrtimer_cancel did
 * the same. Only the tracepoint that follows tells them apart, so a
 * cancel is held back, per CPU and context level (timer_cpu), and
 * decided by the next timer event: the expiry or the re-arm of the same
 * timer at the same level drops it (a re-arm sets was_armed on the start
 * record); anything else writes it, with its own time. Between the
 * dequeue and the expiry a timer_list (or soft hrtimer) expiry runs with
 * interrupts on, so a hardirq's timer events never decide a softirq's
 * held cancel; elsewhere the dequeue and what follows it hold the timer
 * base's lock with interrupts off, so nothing can come between.
 *
 * Filtering (docs/model.md §2.2), with filter_enabled: a start is recorded when
 * a traced task arms the timer, a followed object causes it
 * (bpf/follow.bpf.h), or the timer is remembered; the timer is then
 * remembered, and its expiry and cancel recorded. An expiry spends the
 * armed generation (the timer is forgotten at expire entry), and the
 * slot's emitted carries it to the exit and to what the function causes:
 * a timer_list function re-arms its timer inside the window, which
 * follows it; an hrtimer that returns HRTIMER_RESTART is re-armed after
 * the exit, so the exit notes it (timer_cpu.restart) for that start.
 * System-wide, everything is recorded, the tick's hrtimer included.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "schema/events.h"
#include "bpf/config.h"
#include "causeway.bpf.h"
#include "follow.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Indexed by context level, CW_CTX_UNKNOWN included (without a context
 * method every event is at that one level). */
#define NLVL 8

/* A cancel held back until the next timer event decides it. */
struct held_cancel {
	__u64 timer;
	__u64 function;
	__u64 ts;
	__u64 task_start;
	struct cw_task task;
	__u8 kind; /* CW_TIMER_*; 0: none held */
	__u8 __pad[7];
};

struct timer_cpu {
	struct held_cancel held[NLVL];
	/* The followed hrtimer whose expiry just ended at that level: its
	 * HRTIMER_RESTART re-arm is the next start. */
	__u64 restart[NLVL];
	__u32 pending; /* bit per level of held[] */
	__u32 __pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct timer_cpu);
} timer_cpus SEC(".maps");

static __always_inline __u8 cause_kind(__u8 kind)
{
	return kind == CW_TIMER_HR ? CW_CAUSE_HRTIMER : CW_CAUSE_TIMER;
}

static __always_inline struct timer_cpu *timer_cpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&timer_cpus, &zero);
}

/* Write level @l's held cancel: it was a real one. */
static __always_inline void write_held(struct timer_cpu *c, __u32 l)
{
	struct held_cancel *h = &c->held[l & (NLVL - 1)];
	struct cw_timer_event *e;

	if (!h->kind)
		return;
	e = cw_reserve(sizeof(*e), CW_REC_TIMER_CANCEL, l);
	if (e) {
		e->hdr.ts = h->ts;
		e->task = h->task;
		e->task_start = h->task_start;
		e->timer = h->timer;
		e->function = h->function;
		e->now = 0;
		e->kind = h->kind;
		__builtin_memset(e->__pad, 0, sizeof(e->__pad));
		cw_submit(e, CW_REC_TIMER_CANCEL);
	}
	if (cw_config.filter_enabled)
		cw_obj_forget(cause_kind(h->kind), h->timer);
	h->kind = 0;
	c->pending &= ~(1u << l);
}

/*
 * A timer event at level @lvl: the cancels held at other levels are
 * decided (real), except a softirq's seen from a hardirq or NMI, which
 * may have interrupted the expiry that cancel is the dequeue of. Then
 * the cancel held at @lvl, if any: the same timer's expiry or re-arm
 * (@follows) drops it, @return 1; anything else writes it.
 */
static __always_inline int decide_held(struct timer_cpu *c, __u8 lvl, __u8 kind, __u64 timer,
				       bool follows)
{
	struct held_cancel *h;

	if (c->pending & ~(1u << lvl)) {
#pragma unroll
		for (__u32 l = 0; l < CW_CTX_MAX; l++) {
			if (l == lvl || !(c->pending & (1u << l)))
				continue;
			if (l == CW_CTX_SOFTIRQ && (lvl == CW_CTX_HARDIRQ || lvl == CW_CTX_NMI))
				continue;
			write_held(c, l);
		}
	}
	h = &c->held[lvl & (NLVL - 1)];
	if (!h->kind)
		return 0;
	if (follows && h->kind == kind && h->timer == timer) {
		h->kind = 0;
		c->pending &= ~(1u << lvl);
		return 1;
	}
	write_held(c, lvl);
	return 0;
}

/* ---- armed ------------------------------------------------------------ */

struct start_args {
	__u64 timer;
	__u64 function;
	__s64 expires;
	__s64 softexpires;
	__u32 mode;
	__u8 kind;
	__u8 was_armed;
};

static __always_inline int on_start(struct start_args *a)
{
	__u8 lvl = cw_context(), ck = cause_kind(a->kind);
	struct timer_cpu *c = timer_cpu();
	struct cw_timer_start *e;
	bool restart = false;

	if (c) {
		if (decide_held(c, lvl, a->kind, a->timer, true))
			a->was_armed = 1;
		if (a->kind == CW_TIMER_HR && c->restart[lvl & (NLVL - 1)] == a->timer) {
			restart = true;
			c->restart[lvl & (NLVL - 1)] = 0;
		}
	}
	if (!restart && !cw_made_followed(lvl)) {
		if (!cw_config.filter_enabled || !cw_obj_known(ck, a->timer))
			return 0;
		/* A remembered timer armed again by an untraced task is that
		 * task's now (the scheduler's per-CPU timers are armed by
		 * whoever runs): forget it rather than follow it into the
		 * unrelated task. Re-armed from interrupt context (its own
		 * expiry, a periodic timer), it is still the traced one's. */
		if (lvl == CW_CTX_TASK) {
			cw_obj_forget(ck, a->timer);
			return 0;
		}
	}
	if (cw_config.filter_enabled)
		cw_obj_remember(ck, a->timer, bpf_get_current_pid_tgid() >> 32, CW_CLASS_TIMER);
	e = cw_reserve(sizeof(*e), CW_REC_TIMER_START, lvl);
	if (!e)
		return 0;
	cw_current(&e->task, &e->task_start);
	e->timer = a->timer;
	e->function = a->function;
	e->expires = a->expires;
	e->softexpires = a->softexpires;
	e->mode = a->mode;
	e->kind = a->kind;
	e->was_armed = a->was_armed;
	e->__pad[0] = e->__pad[1] = 0;
	cw_cause_fill(&e->cause, lvl);
	cw_submit(e, CW_REC_TIMER_START);
	return 0;
}

/* Kernels with was_armed: hrtimer_cancel is a cancel only. */
SEC("tp_btf/hrtimer_start")
int BPF_PROG(handle_hrtimer_start, struct hrtimer *t, enum hrtimer_mode mode, bool was_armed)
{
	struct start_args a = {
		.timer = (__u64)t,
		.function = (__u64)t->function,
		.expires = t->node.expires,
		.softexpires = t->_softexpires,
		.mode = mode,
		.kind = CW_TIMER_HR,
		.was_armed = was_armed,
	};

	return on_start(&a);
}

SEC("tp_btf/hrtimer_start")
int BPF_PROG(handle_hrtimer_start_v0, struct hrtimer *t, enum hrtimer_mode mode)
{
	struct start_args a = {
		.timer = (__u64)t,
		.function = (__u64)t->function,
		.expires = t->node.expires,
		.softexpires = t->_softexpires,
		.mode = mode,
		.kind = CW_TIMER_HR,
	};

	return on_start(&a);
}

/* The bucket the timer landed in is the argument; expires and flags are
 * in the timer. Old kernels passed expires and flags instead. */
SEC("tp_btf/timer_start")
int BPF_PROG(handle_timer_start, struct timer_list *t, unsigned long bucket_expiry)
{
	struct start_args a = {
		.timer = (__u64)t,
		.function = (__u64)t->function,
		.expires = (__s64)t->expires,
		.softexpires = (__s64)bucket_expiry,
		.mode = t->flags,
		.kind = CW_TIMER_LIST,
	};

	return on_start(&a);
}

SEC("tp_btf/timer_start")
int BPF_PROG(handle_timer_start_v0, struct timer_list *t, unsigned long expires, unsigned int flags)
{
	struct start_args a = {
		.timer = (__u64)t,
		.function = (__u64)t->function,
		.expires = (__s64)expires,
		.mode = flags,
		.kind = CW_TIMER_LIST,
	};

	return on_start(&a);
}

/* ---- expiry ------------------------------------------------------------ */

static __always_inline void emit_event(__u16 type, __u8 lvl, __u8 kind, __u64 timer, __u64 function,
				       __s64 now)
{
	struct cw_timer_event *e = cw_reserve(sizeof(*e), type, lvl);

	if (!e)
		return;
	cw_current(&e->task, &e->task_start);
	e->timer = timer;
	e->function = function;
	e->now = now;
	e->kind = kind;
	__builtin_memset(e->__pad, 0, sizeof(e->__pad));
	cw_submit(e, type);
}

static __always_inline int on_expire(__u8 kind, __u64 timer, __u64 function, __s64 now)
{
	__u8 lvl = cw_context(), ck = cause_kind(kind);
	struct timer_cpu *c = timer_cpu();
	bool rec = !cw_config.filter_enabled || cw_obj_known(ck, timer);
	struct cw_slot *s;

	if (c) {
		decide_held(c, lvl, kind, timer, true);
		c->restart[lvl & (NLVL - 1)] = 0;
	}
	if (cw_config.filter_enabled && rec)
		cw_obj_forget(ck, timer);
	cw_slot_set(lvl, ck, timer, function);
	s = cw_slot_of(lvl);
	if (s)
		s->emitted = rec;
	if (rec)
		emit_event(CW_REC_TIMER_EXPIRE, lvl, kind, timer, function, now);
	return 0;
}

static __always_inline int on_expire_exit(__u8 kind, __u64 timer, __u64 function)
{
	__u8 lvl = cw_context(), ck = cause_kind(kind);
	struct cw_slot *s = cw_slot_holding(lvl, ck, timer);
	struct timer_cpu *c = timer_cpu();
	bool rec = !cw_config.filter_enabled;

	if (c)
		decide_held(c, lvl, kind, timer, false);
	if (s) {
		rec = s->emitted;
		function = s->aux;
		cw_slot_clear(lvl);
	}
	if (rec)
		emit_event(CW_REC_TIMER_EXPIRE_EXIT, lvl, kind, timer, function, 0);
	if (c && rec && kind == CW_TIMER_HR && cw_config.filter_enabled)
		c->restart[lvl & (NLVL - 1)] = timer;
	return 0;
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(handle_hrtimer_expire, struct hrtimer *t, ktime_t *now)
{
	__s64 n = 0;

	bpf_probe_read_kernel(&n, sizeof(n), now);
	return on_expire(CW_TIMER_HR, (__u64)t, (__u64)t->function, n);
}

SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(handle_hrtimer_expire_exit, struct hrtimer *t)
{
	return on_expire_exit(CW_TIMER_HR, (__u64)t, (__u64)t->function);
}

/* baseclk: the wheel's clock (jiffies) the timer expired at; old
 * kernels did not pass it. */
SEC("tp_btf/timer_expire_entry")
int BPF_PROG(handle_timer_expire, struct timer_list *t, unsigned long baseclk)
{
	return on_expire(CW_TIMER_LIST, (__u64)t, (__u64)t->function, (__s64)baseclk);
}

SEC("tp_btf/timer_expire_entry")
int BPF_PROG(handle_timer_expire_v0, struct timer_list *t)
{
	return on_expire(CW_TIMER_LIST, (__u64)t, (__u64)t->function, 0);
}

SEC("tp_btf/timer_expire_exit")
int BPF_PROG(handle_timer_expire_exit, struct timer_list *t)
{
	return on_expire_exit(CW_TIMER_LIST, (__u64)t, 0);
}

/* ---- cancel ------------------------------------------------------------- */

static __always_inline int on_cancel(__u8 kind, __u64 timer, __u64 function)
{
	__u8 lvl = cw_context();
	struct timer_cpu *c = timer_cpu();
	struct held_cancel *h;

	if (!c)
		return 0;
	decide_held(c, lvl, kind, timer, false);
	if (c->restart[lvl & (NLVL - 1)] == timer)
		c->restart[lvl & (NLVL - 1)] = 0;
	if (cw_config.filter_enabled && !cw_obj_known(cause_kind(kind), timer))
		return 0;
	if (lvl == CW_CTX_TASK && cw_is_self(bpf_get_current_pid_tgid() >> 32))
		return 0;
	h = &c->held[lvl & (NLVL - 1)];
	h->timer = timer;
	h->function = function;
	h->ts = bpf_ktime_get_ns();
	cw_current(&h->task, &h->task_start);
	h->kind = kind;
	c->pending |= 1u << lvl;
	return 0;
}

SEC("tp_btf/hrtimer_cancel")
int BPF_PROG(handle_hrtimer_cancel, struct hrtimer *t)
{
	return on_cancel(CW_TIMER_HR, (__u64)t, (__u64)t->function);
}

SEC("tp_btf/timer_cancel")
int BPF_PROG(handle_timer_cancel, struct timer_list *t)
{
	return on_cancel(CW_TIMER_LIST, (__u64)t, (__u64)t->function);
}
