// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * causeway edge plane, futex class (docs/model.md §2.1): one CW_REC_FUTEX per
 * futex call of a traced task, written when it returns, with what it was
 * called with and what it returned: futex(2), futex_wait(2),
 * futex_wake(2), futex_waitv(2) and futex_requeue(2).
 *
 * tp_btf sys_enter/sys_exit, filtered by syscall number, rather than the
 * tracefs syscall tracepoints (syscalls/sys_enter_futex, ...), which the
 * kernel dispatches by number so that only futex calls would run a
 * program. Both make every syscall take the traced slow path; the
 * programs here add a few nanoseconds to each (measured: within the
 * noise of a 115 ns getppid() on the machine they were written on). But
 * a tracefs tracepoint is attached through a perf event, and closing one
 * waits for an RCU tasks-trace grace period, in the thread that drains
 * the ring: under load (16 ping-pong pairs on 2 CPUs) the ten of them
 * took 200 s to detach and 2 million events were lost meanwhile. A
 * tp_btf link is released without waiting.
 *
 * Only native syscalls: a 32-bit (compat) task numbers them otherwise,
 * and is not recorded, as the tracefs syscall events do not record it.
 *
 * The enter's arguments wait in futex_calls, keyed by thread, until its
 * exit: a thread is in one syscall at a time. Bounded: an enter that does
 * not fit is counted on CW_RING_MAP for the futex class, and its call is
 * not recorded. The exit program is defined before the enter program, so
 * that it attaches first: a call in flight at start is then missed whole
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
#include <bpf/bpf_tracing.h>
#include "schema/events.h"
#include "bpf/config.h"
#include "causeway.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Syscall numbers, part of the ABI: futex(2) is per architecture (x86_64,
 * else the asm-generic table of arm64, riscv and loongarch); the futex2
 * calls have one number everywhere since 5.1's unified table. */
#if defined(__TARGET_ARCH_x86)
#define CW_NR_FUTEX 202
#else
#define CW_NR_FUTEX 98
#endif
#define CW_NR_FUTEX_WAITV 449
#define CW_NR_FUTEX_WAKE 454
#define CW_NR_FUTEX_WAIT 455
#define CW_NR_FUTEX_REQUEUE 456

/* arch/x86/include/asm/thread_info.h: a 32-bit syscall (int 0x80, or a
 * 32-bit task); arm64: PSR_MODE32_BIT, an AArch32 task. */
#define CW_TS_COMPAT 0x0002
#define CW_PSR_MODE32_BIT 0x10

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
 * Keep @c for the exit of this thread's call, and when it can wake, set
 * the cause slot: key the futex word, aux its futex(2) op (@cause_op; the
 * futex2 calls are given the futex(2) op they act as, so aux reads one
 * way).
 */
static __always_inline void enter(struct futex_call *c, bool wakes, __u32 cause_op)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;

	if (!cw_tgid_traced(id >> 32))
		return;
	c->enter_ns = bpf_ktime_get_ns();
	c->slot = wakes;
	c->slot_cpu = bpf_get_smp_processor_id();
	/* Without an entry no exit would clear the slot: set it only once
	 * the entry is in. */
	if (bpf_map_update_elem(&futex_calls, &tid, c, BPF_ANY)) {
		cw_count(CW_RING_MAP, CW_CLASS_FUTEX, true);
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
		cw_submit(e, CW_REC_FUTEX);
	}
	bpf_map_delete_elem(&futex_calls, &tid);
}

/* Which futex call syscall @nr is, or -1. */
static __always_inline int futex_call_of(long nr)
{
	switch (nr) {
	case CW_NR_FUTEX:
		return CW_FUTEX_CALL_FUTEX;
	case CW_NR_FUTEX_WAIT:
		return CW_FUTEX_CALL_WAIT;
	case CW_NR_FUTEX_WAKE:
		return CW_FUTEX_CALL_WAKE;
	case CW_NR_FUTEX_WAITV:
		return CW_FUTEX_CALL_WAITV;
	case CW_NR_FUTEX_REQUEUE:
		return CW_FUTEX_CALL_REQUEUE;
	}
	return -1;
}

struct thread_info___x86 {
	u32 status;
} __attribute__((preserve_access_index));

/* Is the current syscall a compat (32-bit) one, numbered otherwise? */
static __always_inline bool compat_syscall(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	struct task_struct *t = bpf_get_current_task_btf();

	return BPF_CORE_READ((struct thread_info___x86 *)&t->thread_info, status) & CW_TS_COMPAT;
#elif defined(__TARGET_ARCH_arm64)
	return regs->pstate & CW_PSR_MODE32_BIT;
#else
	return false;
#endif
}

/* Syscall argument @n (0..5) of @regs, at sys_enter. */
#if defined(__TARGET_ARCH_x86)
#define ARG0(r) ((r)->di)
#define ARG1(r) ((r)->si)
#define ARG2(r) ((r)->dx)
#define ARG3(r) ((r)->r10)
#define ARG4(r) ((r)->r8)
#define ARG5(r) ((r)->r9)
#define SYSCALL_NR(r) ((long)(r)->orig_ax)
#elif defined(__TARGET_ARCH_arm64)
#define ARG0(r) ((r)->orig_x0)
#define ARG1(r) ((r)->regs[1])
#define ARG2(r) ((r)->regs[2])
#define ARG3(r) ((r)->regs[3])
#define ARG4(r) ((r)->regs[4])
#define ARG5(r) ((r)->regs[5])
#define SYSCALL_NR(r) ((long)(r)->syscallno)
#else
#error "bpf/futex.bpf.c: syscall registers unknown for this architecture"
#endif

/* ---- exit (attached first) ----------------------------------------- */

SEC("tp_btf/sys_exit")
int BPF_PROG(handle_sys_exit, struct pt_regs *regs, long ret)
{
	int call = futex_call_of(SYSCALL_NR(regs));

	if (call < 0 || compat_syscall(regs))
		return 0;
	leave(call, ret);
	return 0;
}

/* ---- enter ----------------------------------------------------------- */

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
 */
SEC("tp_btf/sys_enter")
int BPF_PROG(handle_sys_enter, struct pt_regs *regs, long id)
{
	int call = futex_call_of(id);
	struct futex_call c = { .call = call };
	struct futex_waitv w[2];
	__u32 cause_op = 0;
	bool wakes = false;

	if (call < 0 || compat_syscall(regs))
		return 0;
	switch (call) {
	case CW_FUTEX_CALL_FUTEX:
		c.uaddr = ARG0(regs);
		c.op = (__u32)ARG1(regs);
		c.val = (__u32)ARG2(regs);
		c.uaddr2 = ARG4(regs);
		c.val3 = (__u32)ARG5(regs);
		wakes = op_wakes(c.op);
		cause_op = c.op;
		break;
	case CW_FUTEX_CALL_WAIT:
		c.uaddr = ARG0(regs);
		c.val = (__u32)ARG1(regs);
		c.val3 = (__u32)ARG2(regs);
		c.op = (__u32)ARG3(regs);
		break;
	case CW_FUTEX_CALL_WAKE:
		c.uaddr = ARG0(regs);
		c.val3 = (__u32)ARG1(regs);
		c.val = (__u32)ARG2(regs);
		c.op = (__u32)ARG3(regs);
		wakes = true;
		/* futex_wake(2) acts as FUTEX_WAKE_BITSET */
		cause_op = CW_FUTEX_WAKE_BITSET | (c.op & CW_FUTEX_PRIVATE_FLAG);
		break;
	case CW_FUTEX_CALL_WAITV:
		c.uaddr = ARG0(regs);
		c.val = (__u32)ARG1(regs);
		c.op = (__u32)ARG2(regs);
		break;
	case CW_FUTEX_CALL_REQUEUE:
		c.op = (__u32)ARG1(regs);
		c.val = (__u32)ARG2(regs);
		c.val3 = (__u32)ARG3(regs);
		wakes = true;
		cause_op = CW_FUTEX_CMP_REQUEUE;
		if (!bpf_probe_read_user(w, sizeof(w), (void *)ARG0(regs))) {
			c.uaddr = w[0].uaddr;
			c.uaddr2 = w[1].uaddr;
			cause_op |= w[0].flags & CW_FUTEX_PRIVATE_FLAG;
		}
		break;
	}
	enter(&c, wakes, cause_op);
	return 0;
}
