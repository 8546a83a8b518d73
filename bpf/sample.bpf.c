// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * causeway context plane (docs/model.md §2.1, §2.4): CPU stack samples at
 * each tick of a per-CPU perf cpu-clock event, and off-CPU stacks at the
 * switch-out of a task that blocks, each one struct cw_sample on the
 * `samples` ring, never the edge ring: a burst of samples must not push
 * out edges. How a sample's stacks are taken, and the budget that decides
 * which are, is bpf/wait.bpf.h's, shared with the sched class.
 *
 * Off-CPU waits: when the sched class is recorded, its switch program
 * takes them (format 1.9: the wait is its switch record, and a sample
 * record is written only for the stacks the budget takes), and this
 * object's is not loaded (capture/classes.c: done_by). Without the sched
 * class, every wait is a sample record here, as in format 1.8: with its
 * stacks, or without them (CW_SAMPLE_NOSTACK) when the budget does not
 * take them.
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

/*
 * Context of the code the tick interrupted: the tick's own hard
 * interrupt is taken off the preempt count first (cpu-clock fires from
 * an hrtimer, in hard interrupt context).
 */
static __always_inline __u8 tick_context(void)
{
	__u32 pc;

	if (cw_preempt_count(&pc))
		return CW_CTX_UNKNOWN;
	if (pc & CW_HARDIRQ_MASK)
		pc -= 1U << CW_HARDIRQ_SHIFT;
	if (pc & CW_NMI_MASK)
		return CW_CTX_NMI;
	if (pc & CW_HARDIRQ_MASK)
		return CW_CTX_HARDIRQ;
	if (pc & CW_SOFTIRQ_OFFSET)
		return CW_CTX_SOFTIRQ;
	return CW_CTX_TASK;
}

/*
 * Is a sample of the current task, taken at context level @lvl, one of
 * the traced set's? With -p or COMMAND, also when what the CPU processes
 * at that level is followed (bpf/follow.bpf.h): a kworker executing a
 * work item a traced task queued, a softirq receiving its packet. The
 * analyzer charges such a sample to the work item, not the kworker.
 */
static __always_inline bool sample_wanted(__u8 lvl)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (cw_tgid_traced(tgid))
		return true;
	return cw_config.filter_enabled && !cw_is_self(tgid) && cw_cause_followed(lvl);
}

/* A cpu-clock tick on this CPU. The idle task is not sampled: idle time
 * is not anybody's CPU time (an interrupt on an idle CPU included). */
SEC("perf_event")
int handle_cpu(struct bpf_perf_event_data *ctx)
{
	__u8 lvl;

	if (!(__u32)bpf_get_current_pid_tgid())
		return 0;
	lvl = tick_context();
	if (sample_wanted(lvl))
		cw_offer(ctx, ctx, bpf_get_current_task_btf(), lvl, bpf_ktime_get_ns());
	return 0;
}

/*
 * Switch-out of @prev (the current task). Only a task that blocks: a
 * preempted one is still runnable (its time is CPU wait, not a wait for
 * an event), and the final switch of a dead task has nothing to wait
 * for. Since 5.18 prev_state is the raw state even when preempted, so
 * @preempt decides that, not the state.
 */
static __always_inline int offcpu(void *ctx, bool preempt, struct task_struct *prev, __u64 state)
{
	if (!preempt && state && !(state & CW_TASK_DEAD) && prev->pid && sample_wanted(CW_CTX_TASK))
		cw_offer(ctx, NULL, prev, CW_CTX_TASK, bpf_ktime_get_ns());
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(handle_offcpu, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return offcpu(ctx, preempt, prev, prev_state);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(handle_offcpu_v0, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return offcpu(ctx, preempt, prev, cw_task_state(prev));
}
