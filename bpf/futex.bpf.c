// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * causeway edge plane, futex class (docs/model.md §2.1): one CW_REC_FUTEX per
 * futex call of a traced task, written when it returns, with what it was
 * called with and what it returned: futex(2), futex_wait(2),
 * futex_wake(2), futex_waitv(2) and futex_requeue(2).
 *
 * The calls' own syscall events (syscalls/sys_enter_futex, ...), which
 * the kernel dispatches by number, so that no other syscall runs a
 * program (docs/decisions.md, "futex hooks", has the figures). The raw
 * sys_enter/sys_exit (tp_btf) ran one for every syscall of every process,
 * about 60 ns each. fentry/fexit on __x64_sys_futex and the others would
 * also keep the other syscalls off the traced path, but the kernel this
 * was written on refuses every trampoline. The events' cost is at the
 * end: closing one waits for an RCU tasks-trace grace period, seconds
 * to minutes under load, which a child process waits out for the
 * capture (capture/tracer.c, detach_slow()).
 *
 * Only native syscalls: the kernel gives the syscall events none of a
 * 32-bit (compat) task's. The futex2 calls (futex_waitv 5.16,
 * futex_wait, futex_wake, futex_requeue 6.7) are optional programs: a
 * kernel without them makes no such call.
 *
 * The enter's arguments wait in futex_calls, keyed by thread, until its
 * exit: a thread is in one syscall at a time. Bounded: an enter that does
 * not fit is counted on CW_RING_MAP for the futex class, and its call is
 * not recorded. Each exit program is defined before its enter program,
 * so that it attaches first: a call in flight at start is then missed whole
 * rather than leaving an entry that no exit removes.
 *
 * Causes: a call that can wake names its futex word in the task-level
 * cause slot from its enter to its exit, so the sched_waking records of
 * the wakeups it makes carry the futex (format.md, Causes). The slot is
 * per CPU and holds the thread: a thread that migrates during the call
 * leaves it on the CPU of its enter, so the exit clears it there (only
 * while it is still this thread's).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "schema/events.h"
#include "bpf/config.h"
#include "causeway.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* include/uapi/linux/futex.h; part of the ABI. */
#define CW_FUTEX_WAKE 1
#define CW_FUTEX_REQUEUE 3
#define CW_FUTEX_CMP_REQUEUE 4
#define CW_FUTEX_WAKE_OP 5
#define CW_FUTEX_UNLOCK_PI 7
#define CW_FUTEX_WAKE_BITSET 10
#define CW_FUTEX_CMP_REQUEUE_PI 12
#define CW_FUTEX_PRIVATE_FLAG 128 /* FUTEX2_PRIVATE is the same bit */
#define CW_FUTEX_CLOCK_REALTIME 256
#define CW_FUTEX_CMD_MASK (~(CW_FUTEX_PRIVATE_FLAG | CW_FUTEX_CLOCK_REALTIME))

/* A futex call between its enter and its exit. */
struct futex_call {
	__u64 enter_ns;
	__u64 uaddr;
	__u64 uaddr2;
	__u32 op;
	__u32 val;
	__u32 val3;
	__u32 slot_cpu; /* slot set: the CPU it was set on */
	__u8 call;	/* CW_FUTEX_CALL_* */
	__u8 slot;	/* a cause slot was set at the enter */
	__u8 __pad[6];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32); /* tid */
	__type(value, struct futex_call);
} futex_calls SEC(".maps");

/* Does futex(2) op @op wake anyone? (CMP_REQUEUE_PI wakes the top waiter
 * when it can take the PI lock for it.) */
static __always_inline bool op_wakes(__u32 op)
{
	switch (op & CW_FUTEX_CMD_MASK) {
	case CW_FUTEX_WAKE:
	case CW_FUTEX_REQUEUE:
	case CW_FUTEX_CMP_REQUEUE:
	case CW_FUTEX_WAKE_OP:
	case CW_FUTEX_UNLOCK_PI:
	case CW_FUTEX_WAKE_BITSET:
	case CW_FUTEX_CMP_REQUEUE_PI:
		return true;
	}
	return false;
}

/*
 * Keep @c, a traced thread's call, for its exit, and when it can wake, set
 * the cause slot: key the futex word, aux its futex(2) op (@cause_op; the
 * futex2 calls are given the futex(2) op they act as, so aux reads one
 * way).
 */
static __always_inline void enter(struct futex_call *c, bool wakes, __u32 cause_op)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	c->enter_ns = bpf_ktime_get_ns();
	c->slot = wakes;
	c->slot_cpu = bpf_get_smp_processor_id();
	/* Without an entry no exit would clear the slot: set it only once
	 * the entry is in. */
	if (bpf_map_update_elem(&futex_calls, &tid, c, BPF_ANY)) {
		cw_count_lost(CW_RING_MAP, CW_CLASS_FUTEX);
		return;
	}
	if (wakes)
		cw_slot_set(CW_CTX_TASK, CW_CAUSE_FUTEX, c->uaddr, cause_op);
}

/* Clear slot @s when it is still the futex cause this thread set. */
static __always_inline void clear_own(struct cw_slot *s, __u32 tid)
{
	if (s && s->kind == CW_CAUSE_FUTEX && s->tid == tid)
		s->kind = CW_CAUSE_NONE;
}

static __always_inline void leave(__u8 call, long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct futex_call *c = bpf_map_lookup_elem(&futex_calls, &tid);
	struct cw_futex *e;

	if (!c)
		return;
	if (c->slot) {
		__u32 key = CW_CTX_TASK;

		clear_own(cw_slot_of(CW_CTX_TASK), tid);
		/* 5.19+: the CPU of the enter, if the thread moved since */
		if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_map_lookup_percpu_elem) &&
		    c->slot_cpu != bpf_get_smp_processor_id())
			clear_own(bpf_map_lookup_percpu_elem(&slots, &key, c->slot_cpu), tid);
	}
	/* An entry of another call: its exit was missed, it says nothing
	 * of this one. */
	if (c->call == call && (e = cw_reserve(sizeof(*e), CW_REC_FUTEX, CW_CTX_TASK))) {
		cw_current(&e->task, &e->task_start);
		e->uaddr = c->uaddr;
		e->uaddr2 = c->uaddr2;
		e->enter_ns = c->enter_ns;
		e->ret = ret;
		e->op = c->op;
		e->val = c->val;
		e->val3 = c->val3;
		e->call = call;
		__builtin_memset(e->__pad, 0, sizeof(e->__pad));
		cw_submit(e);
	}
	bpf_map_delete_elem(&futex_calls, &tid);
}

/* Is the caller traced? */
static __always_inline bool wanted(void)
{
	return cw_tgid_traced(bpf_get_current_pid_tgid() >> 32);
}

/* ---- exits (each attached before its enter) -------------------------- */

#define EXIT(fn, call)                                       \
	SEC("tracepoint/syscalls/sys_exit_" #fn)             \
	int handle_##fn##_exit(struct syscall_trace_exit *ctx) \
	{                                                    \
		leave(call, ctx->ret);                       \
		return 0;                                    \
	}

EXIT(futex, CW_FUTEX_CALL_FUTEX)
EXIT(futex_wait, CW_FUTEX_CALL_WAIT)
EXIT(futex_wake, CW_FUTEX_CALL_WAKE)
EXIT(futex_waitv, CW_FUTEX_CALL_WAITV)
EXIT(futex_requeue, CW_FUTEX_CALL_REQUEUE)

/* ---- enters ---------------------------------------------------------- */

/*
 * futex(uaddr, op, val, utime|val2, uaddr2, val3).
 * futex_wait(uaddr, val, mask, flags, timeout, clockid): op = flags,
 *   val3 = mask.
 * futex_wake(uaddr, mask, nr, flags): op = flags, val = nr, val3 = mask.
 * futex_waitv(waiters, nr_futexes, flags, timeout, clockid): uaddr = the
 *   waiters array, val = nr_futexes, op = flags.
 * futex_requeue(waiters[2], flags, nr_wake, nr_requeue): uaddr, uaddr2 =
 *   the two futex words (read from the caller's array; 0 when
 *   unreadable), op = flags, val = nr_wake, val3 = nr_requeue.
 * Each program has its @call constant, so that only its case is compiled
 * into it. The arguments are read from @ctx directly: the verifier
 * refuses a load through a pointer derived from it.
 */
static __always_inline int enter_call(struct syscall_trace_enter *ctx, __u8 call)
{
	struct futex_call c = { .call = call };
	struct futex_waitv w[2];
	__u32 cause_op = 0;
	bool wakes = false;

	if (!wanted())
		return 0;
	switch (call) {
	case CW_FUTEX_CALL_FUTEX:
		c.uaddr = ctx->args[0];
		c.op = (__u32)ctx->args[1];
		c.val = (__u32)ctx->args[2];
		c.uaddr2 = ctx->args[4];
		c.val3 = (__u32)ctx->args[5];
		wakes = op_wakes(c.op);
		cause_op = c.op;
		break;
	case CW_FUTEX_CALL_WAIT:
		c.uaddr = ctx->args[0];
		c.val = (__u32)ctx->args[1];
		c.val3 = (__u32)ctx->args[2];
		c.op = (__u32)ctx->args[3];
		break;
	case CW_FUTEX_CALL_WAKE:
		c.uaddr = ctx->args[0];
		c.val3 = (__u32)ctx->args[1];
		c.val = (__u32)ctx->args[2];
		c.op = (__u32)ctx->args[3];
		wakes = true;
		/* futex_wake(2) acts as FUTEX_WAKE_BITSET */
		cause_op = CW_FUTEX_WAKE_BITSET | (c.op & CW_FUTEX_PRIVATE_FLAG);
		break;
	case CW_FUTEX_CALL_WAITV:
		c.uaddr = ctx->args[0];
		c.val = (__u32)ctx->args[1];
		c.op = (__u32)ctx->args[2];
		break;
	case CW_FUTEX_CALL_REQUEUE:
		c.op = (__u32)ctx->args[1];
		c.val = (__u32)ctx->args[2];
		c.val3 = (__u32)ctx->args[3];
		wakes = true;
		cause_op = CW_FUTEX_CMP_REQUEUE;
		if (!bpf_probe_read_user(w, sizeof(w), (void *)ctx->args[0])) {
			c.uaddr = w[0].uaddr;
			c.uaddr2 = w[1].uaddr;
			cause_op |= w[0].flags & CW_FUTEX_PRIVATE_FLAG;
		}
		break;
	}
	enter(&c, wakes, cause_op);
	return 0;
}

#define ENTER(fn, call)                                          \
	SEC("tracepoint/syscalls/sys_enter_" #fn)                \
	int handle_##fn##_enter(struct syscall_trace_enter *ctx) \
	{                                                        \
		return enter_call(ctx, call);                    \
	}

ENTER(futex, CW_FUTEX_CALL_FUTEX)
ENTER(futex_wait, CW_FUTEX_CALL_WAIT)
ENTER(futex_wake, CW_FUTEX_CALL_WAKE)
ENTER(futex_waitv, CW_FUTEX_CALL_WAITV)
ENTER(futex_requeue, CW_FUTEX_CALL_REQUEUE)
