// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * causeway edge plane, timer class (docs/model.md §2.1, §2.3): hrtimers and
 * timer_list timers, written once per expiry (kind CW_TIMER_HR or
 * CW_TIMER_LIST) on the `edges` ring:
 *
 *   hrtimer_start, timer_start                held in `arms`, not written
 *   hrtimer_expire_entry, timer_expire_entry  CW_REC_TIMER_FIRE with the held
 *                                             start, else CW_REC_TIMER_EXPIRE
 *   hrtimer_expire_exit, timer_expire_exit    ends the cause window
 *   hrtimer_cancel, timer_cancel              a real one forgets the start
 *
 * Most timers never fire (a poll's timeout, a socket's retransmit timer
 * re-armed by every send), so a record per start and cancel was mostly
 * cost: a start's evidence (time, CPU, context, task and witness, expiry,
 * mode, was_armed, the cause slot) waits in `arms`, keyed by timer pointer
 * and kind, and goes out with the expiry that fires it. Every start of a
 * pointer replaces or forgets what `arms` holds for it, so what an expiry
 * finds is its own start: never a guess. `arms` holds the pending timers
 * (ARMS_MAX, 65,536 entries, 9.5 MiB preallocated: 16 bytes of key,
 * 72 of value and the hash table's element and bucket); an insert it
 * refuses is counted as lost on CW_RING_MAP for the timer class, which the
 * analyzer makes a coverage break, and that timer's expiry is written
 * without its start (an orphan), as is one armed before the capture.
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
 * the same, and __run_hrtimer() still traces one before every expiry.
 * Only the tracepoint that follows tells them apart, so a cancel is held
 * back, per CPU and context level (timer_cpu), and decided by the next
 * timer event: the expiry or the re-arm of the same timer at the same
 * level drops it (a re-arm sets was_armed); anything else makes it real,
 * and the start it cancelled is forgotten (unless a start on another CPU
 * has replaced it since: held.ts). Between the dequeue and the expiry a
 * timer_list (or soft hrtimer) expiry runs with interrupts on, so a
 * hardirq's timer events never decide a softirq's held cancel; elsewhere
 * the dequeue and what follows it hold the timer base's lock with
 * interrupts off, so nothing can come between. The expiry's own cancel
 * says when the timer was dequeued: the kernel drops the base lock before
 * the expire entry, and a start of the same timer on another CPU in
 * between is a new generation, whose evidence this expiry must not take;
 * nor one that replaces the held start while the expiry copies it
 * (emit_fire).
 *
 * Filtering (docs/model.md §2.2), with filter_enabled: a start is held
 * when a traced task arms the timer, a followed object causes it
 * (bpf/follow.bpf.h), or the timer is held already and re-armed from
 * interrupt context; `arms` is then the remembered set, and an expiry is
 * written only when it finds its start there. The slot's emitted carries
 * that to the exit and to what the function causes: a timer_list function
 * re-arms its timer inside the window, which follows it; an hrtimer that
 * returns HRTIMER_RESTART is re-armed after the exit, so the exit notes it
 * (timer_cpu.restart) for that start. System-wide, every start is held
 * and every expiry written, the tick's hrtimer included.
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
	__u64 ts; /* the dequeue: a start after it is not the one it ended */
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

/* The timers pending, by pointer and kind (docs/model.md §2.3 gives the
 * bound and its memory). Not an LRU: an entry pushed out would be a
 * silent loss; a full map refuses, and that is counted. */
#define ARMS_MAX 65536
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ARMS_MAX);
	__type(key, struct cw_obj_key);
	__type(value, struct cw_timer_arm);
} arms SEC(".maps");

static __always_inline __u8 cause_kind(__u8 kind)
{
	return kind == CW_TIMER_HR ? CW_CAUSE_HRTIMER : CW_CAUSE_TIMER;
}

static __always_inline struct timer_cpu *timer_cpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&timer_cpus, &zero);
}

/* Level @l's held cancel was a real one: the start it ended will not
 * fire. A start held since (another CPU's) is not that one. */
static __always_inline void cancel_held(struct timer_cpu *c, __u32 l)
{
	struct held_cancel *h = &c->held[l & (NLVL - 1)];
	struct cw_obj_key k = { .ptr = h->timer, .kind = cause_kind(h->kind) };
	struct cw_timer_arm *a;

	if (!h->kind)
		return;
	a = bpf_map_lookup_elem(&arms, &k);
	if (a && a->ts <= h->ts)
		bpf_map_delete_elem(&arms, &k);
	h->kind = 0;
	c->pending &= ~(1u << l);
}

/*
 * A timer event at level @lvl: the cancels held at other levels are
 * decided (real), except a softirq's seen from a hardirq or NMI, which
 * may have interrupted the expiry that cancel is the dequeue of. Then
 * the cancel held at @lvl, if any: the same timer's expiry or re-arm
 * (@follows) drops it, @return its time (the dequeue); anything else
 * makes it real. 0: none dropped.
 */
static __always_inline __u64 decide_held(struct timer_cpu *c, __u8 lvl, __u8 kind, __u64 timer,
					 bool follows)
{
	struct held_cancel *h;

	if (!c->pending)
		return 0;
	if (c->pending & ~(1u << lvl)) {
#pragma unroll
		for (__u32 l = 0; l < CW_CTX_MAX; l++) {
			if (l == lvl || !(c->pending & (1u << l)))
				continue;
			if (l == CW_CTX_SOFTIRQ && (lvl == CW_CTX_HARDIRQ || lvl == CW_CTX_NMI))
				continue;
			cancel_held(c, l);
		}
	}
	h = &c->held[lvl & (NLVL - 1)];
	if (!h->kind)
		return 0;
	if (follows && h->kind == kind && h->timer == timer) {
		h->kind = 0;
		c->pending &= ~(1u << lvl);
		return h->ts ?: 1;
	}
	cancel_held(c, lvl);
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
	__u8 lvl = cw_context();
	struct cw_obj_key k = { .ptr = a->timer, .kind = cause_kind(a->kind) };
	struct timer_cpu *c = timer_cpu();
	struct cw_timer_arm v;
	bool restart = false;

	if (c) {
		if (decide_held(c, lvl, a->kind, a->timer, true))
			a->was_armed = 1;
		if (cw_config.filter_enabled && a->kind == CW_TIMER_HR &&
		    c->restart[lvl & (NLVL - 1)] == a->timer) {
			restart = true;
			c->restart[lvl & (NLVL - 1)] = 0;
		}
	}
	if (!restart && !cw_made_followed(lvl)) {
		/* The start of a timer the trace does not follow: what is
		 * held for it is over. Re-armed from interrupt context (its
		 * own expiry, a periodic timer), a held one is still the
		 * traced one's; from task context it is that task's now (the
		 * scheduler's per-CPU timers are armed by whoever runs). */
		if (!bpf_map_lookup_elem(&arms, &k))
			return 0;
		if (lvl == CW_CTX_TASK || !cw_config.filter_enabled) {
			bpf_map_delete_elem(&arms, &k);
			return 0;
		}
	}
	v.ts = bpf_ktime_get_ns();
	cw_current(&v.task, &v.task_start);
	v.expires = a->expires;
	v.softexpires = a->softexpires;
	v.mode = a->mode;
	v.cpu = bpf_get_smp_processor_id();
	v.ctx = lvl;
	v.was_armed = a->was_armed;
	cw_cause_fill(&v.cause, lvl);
	/* A refused insert leaves no entry behind (an update in place of an
	 * older start never fails for room), so the expiry cannot take an
	 * older start for its own. */
	if (bpf_map_update_elem(&arms, &k, &v, BPF_ANY)) {
		bpf_map_delete_elem(&arms, &k);
		cw_count_lost(CW_RING_MAP, CW_CLASS_TIMER);
	} else {
		cw_count_slot(CW_COUNTER_TIMER_ARMS);
	}
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

struct expiry {
	__u64 timer;
	__u64 function;
	__s64 now;
	__u8 kind;
};

/* The expiry's own part of its record, a fire's or not. */
static __always_inline void fill_expiry(struct cw_timer_event *e, const struct expiry *x)
{
	cw_current(&e->task, &e->task_start);
	e->timer = x->timer;
	e->function = x->function;
	e->now = x->now;
	e->kind = x->kind;
	__builtin_memset(e->__pad, 0, sizeof(e->__pad));
}

/* A fire whose start is not held: the expiry alone (an orphan). */
static __always_inline void emit_expire(__u8 lvl, const struct expiry *x)
{
	struct cw_timer_event *e = cw_reserve(sizeof(*e), CW_REC_TIMER_EXPIRE, lvl);

	if (!e)
		return;
	fill_expiry(e, x);
	cw_submit(e);
}

/*
 * The fire of held start @a, if it is this expiry's: @return 1 when it
 * is (written, or lost on a full ring), 0 when the start is a later one.
 * That is a start after the expiry's own dequeue (@dequeued, 0: not
 * known), on another CPU, and one that lands while @a is copied: a
 * preallocated map hands what an update replaced to the next update at
 * once, so the copy is whole only if its time is the same after it.
 */
static __always_inline int emit_fire(__u8 lvl, const struct expiry *x, const struct cw_timer_arm *a,
				     __u64 dequeued)
{
	struct cw_timer_fire *e = cw_reserve(sizeof(*e), CW_REC_TIMER_FIRE, lvl);

	if (!e)
		return 1;
	e->arm = *a;
	asm volatile("" ::: "memory"); /* the copy, then the time again */
	if ((dequeued > 1 && e->arm.ts > dequeued) || e->arm.ts != *(volatile const __u64 *)&a->ts) {
		bpf_ringbuf_discard(e, BPF_RB_NO_WAKEUP);
		return 0;
	}
	fill_expiry(&e->ev, x);
	cw_submit(e);
	return 1;
}

static __always_inline int on_expire(__u8 kind, __u64 timer, __u64 function, __s64 now)
{
	__u8 lvl = cw_context(), ck = cause_kind(kind);
	struct expiry x = { .timer = timer, .function = function, .now = now, .kind = kind };
	struct cw_obj_key k = { .ptr = timer, .kind = ck };
	struct timer_cpu *c = timer_cpu();
	__u64 dequeued = 0;
	struct cw_slot *s;
	struct cw_timer_arm *a;
	bool rec;

	if (c) {
		dequeued = decide_held(c, lvl, kind, timer, true);
		c->restart[lvl & (NLVL - 1)] = 0;
	}
	a = bpf_map_lookup_elem(&arms, &k);
	rec = a || !cw_config.filter_enabled;
	/* A start that is not this expiry's is the next generation's: it
	 * stays, and this fire goes without its own. */
	if (a && emit_fire(lvl, &x, a, dequeued))
		bpf_map_delete_elem(&arms, &k);
	else if (rec)
		emit_expire(lvl, &x);
	cw_slot_set(lvl, ck, timer, function);
	s = cw_slot_of(lvl);
	if (s)
		s->emitted = rec;
	return 0;
}

static __always_inline int on_expire_exit(__u8 kind, __u64 timer)
{
	__u8 lvl = cw_context();
	struct cw_slot *s = cw_slot_holding(lvl, cause_kind(kind), timer);
	struct timer_cpu *c = timer_cpu();

	if (!c)
		return 0;
	decide_held(c, lvl, kind, timer, false);
	if (!s)
		return 0;
	if (s->emitted && kind == CW_TIMER_HR && cw_config.filter_enabled)
		c->restart[lvl & (NLVL - 1)] = timer;
	cw_slot_clear(lvl);
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
	return on_expire_exit(CW_TIMER_HR, (__u64)t);
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
	return on_expire_exit(CW_TIMER_LIST, (__u64)t);
}

/* ---- cancel ------------------------------------------------------------- */

static __always_inline int on_cancel(__u8 kind, __u64 timer)
{
	__u8 lvl = cw_context();
	struct timer_cpu *c = timer_cpu();
	struct held_cancel *h;

	if (!c)
		return 0;
	decide_held(c, lvl, kind, timer, false);
	if (c->restart[lvl & (NLVL - 1)] == timer)
		c->restart[lvl & (NLVL - 1)] = 0;
	/* Held without a look at `arms`: most cancels are an expiry's own
	 * and cost nothing more; a real one looks once, when decided. */
	h = &c->held[lvl & (NLVL - 1)];
	h->timer = timer;
	h->ts = bpf_ktime_get_ns();
	h->kind = kind;
	c->pending |= 1u << lvl;
	return 0;
}

SEC("tp_btf/hrtimer_cancel")
int BPF_PROG(handle_hrtimer_cancel, struct hrtimer *t)
{
	return on_cancel(CW_TIMER_HR, (__u64)t);
}

SEC("tp_btf/timer_cancel")
int BPF_PROG(handle_timer_cancel, struct timer_list *t)
{
	return on_cancel(CW_TIMER_LIST, (__u64)t);
}
