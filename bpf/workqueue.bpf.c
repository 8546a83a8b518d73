// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * causeway edge plane, workqueue class (docs/model.md §2.1): a work item's
 * queueing and execution, each as one schema/events.h record on the
 * `edges` ring.
 *
 *   workqueue_queue_work      CW_REC_WQ_QUEUE       a work item is born
 *   workqueue_execute_start   CW_REC_WQ_EXEC_START  a worker runs it
 *   workqueue_execute_end     CW_REC_WQ_EXEC_END    its function returned
 *
 * workqueue_activate_work is not hooked (docs/model.md §2.3): it says
 * only that a queued item may run now, which its execution says too, and
 * cost a lookup of the remembered objects and a record a work item.
 * Older traces have CW_REC_WQ_ACTIVATE, which the analyzer still reads.
 *
 * The queue stays a record of its own, written when it happens, rather
 * than evidence held in a map until the execution (as timers and packets
 * are): the request a queueing context works for is the analyzer's to
 * find at that moment (analyze/carry.c), and a delayed work item runs long
 * after its queuer has moved on to other work.
 *
 * Causes: while a worker runs a work item, the item is in the cause slot
 * of the worker's context level (the task level, or softirq for a BH
 * workqueue), so what the item does (a wakeup, a queueing, a timer) names
 * it. This is done for every work item, traced or not: a kworker running
 * a stranger's work wakes traced tasks. The task level is per CPU; a
 * worker preempted inside an item leaves the slot to the next thread on
 * that CPU, whose events do not read it (bpf/causeway.bpf.h). A worker
 * that migrates while running an item would leave the slot on its old CPU
 * set in its name, and a later wakeup of its own there outside any item
 * would name the item: so execute_end also clears the slot on the CPU the
 * item started on (wq_running).
 *
 * Filtering (docs/model.md §2.2), with filter_enabled: a queueing is recorded
 * when a traced task does it or a followed object causes it (a work item
 * queued by a traced timer's expiry or by another traced work item, see
 * bpf/follow.bpf.h); the work item is then remembered so that its
 * activation and execution, in a kworker, are recorded too. Execution
 * spends the queued generation, so execute_start forgets it: a queueing
 * during the execution, by the item itself or by anyone, is a new
 * generation that is remembered again (forgetting at execute_end would
 * drop it). The slot's emitted says whether the execution is recorded,
 * so execute_end and whatever the item causes follow it.
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

/* The work item a worker thread runs, and where it started it. */
struct wq_running {
	__u64 work;
	__u64 function;
	__u32 cpu;
	__u8 emitted;
	__u8 __pad[3];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct wq_running);
} wq_running SEC(".maps");

static __always_inline void emit_work(__u16 type, __u8 lvl, __u64 work, __u64 function)
{
	struct cw_wq_work *e = cw_reserve(sizeof(*e), type, lvl);

	if (!e)
		return;
	cw_current(&e->task, &e->task_start);
	e->work = work;
	e->function = function;
	cw_submit(e);
}

SEC("tp_btf/workqueue_queue_work")
int BPF_PROG(handle_queue, int req_cpu, struct pool_workqueue *pwq, struct work_struct *work)
{
	struct workqueue_struct *wq = pwq->wq;
	__u8 lvl = cw_context();
	struct cw_wq_queue *e;

	if (!cw_made_followed(lvl))
		return 0;
	if (cw_config.filter_enabled)
		cw_obj_remember(CW_CAUSE_WORK, (__u64)work, bpf_get_current_pid_tgid() >> 32,
				CW_CLASS_WORKQUEUE);
	e = cw_reserve(sizeof(*e), CW_REC_WQ_QUEUE, lvl);
	if (!e)
		return 0;
	cw_current(&e->task, &e->task_start);
	e->work = (__u64)work;
	e->function = (__u64)work->func;
	CW_READ_STR(e->workqueue, wq->name);
	e->req_cpu = req_cpu;
	e->cpu = BPF_CORE_READ(pwq, pool, cpu);
	cw_cause_fill(&e->cause, lvl);
	cw_submit(e);
	return 0;
}

SEC("tp_btf/workqueue_execute_start")
int BPF_PROG(handle_execute_start, struct work_struct *work)
{
	__u64 w = (__u64)work, fn = (__u64)work->func;
	__u8 lvl = cw_context();
	bool rec = !cw_config.filter_enabled || cw_obj_known(CW_CAUSE_WORK, w);
	struct cw_slot *s;

	if (cw_config.filter_enabled && rec)
		cw_obj_forget(CW_CAUSE_WORK, w);
	cw_slot_set(lvl, CW_CAUSE_WORK, w, fn);
	s = cw_slot_of(lvl);
	if (s)
		s->emitted = rec;
	if (lvl == CW_CTX_TASK) {
		struct wq_running *r = bpf_task_storage_get(&wq_running, bpf_get_current_task_btf(), 0,
							    BPF_LOCAL_STORAGE_GET_F_CREATE);

		if (r) {
			r->work = w;
			r->function = fn;
			r->cpu = bpf_get_smp_processor_id();
			r->emitted = rec;
		}
	}
	if (rec)
		emit_work(CW_REC_WQ_EXEC_START, lvl, w, fn);
	return 0;
}

/* The task-level slot that CPU @cpu holds for this thread's item @work:
 * cleared, since the item is over (see the top of the file). */
static __always_inline void clear_left_slot(__u32 cpu, __u64 work)
{
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_map_lookup_percpu_elem)) {
		__u32 key = CW_CTX_TASK;
		struct cw_slot *o = bpf_map_lookup_percpu_elem(&slots, &key, cpu);

		if (o && o->kind == CW_CAUSE_WORK && o->key == work &&
		    o->tid == (__u32)bpf_get_current_pid_tgid())
			o->kind = CW_CAUSE_NONE;
	}
}

/* The item's function is not read from the tracepoint: tp_btf programs
 * cannot read an argument of function pointer type, and the item may be
 * freed by now; execute_start kept it. */
SEC("tp_btf/workqueue_execute_end")
int BPF_PROG(handle_execute_end, struct work_struct *work)
{
	__u64 w = (__u64)work, fn = 0;
	__u8 lvl = cw_context();
	struct cw_slot *s = cw_slot_holding(lvl, CW_CAUSE_WORK, w);
	bool rec = !cw_config.filter_enabled, known = false;

	if (s) {
		rec = s->emitted;
		fn = s->aux;
		known = true;
		cw_slot_clear(lvl);
	}
	if (lvl == CW_CTX_TASK) {
		struct wq_running *r = bpf_task_storage_get(&wq_running, bpf_get_current_task_btf(), 0, 0);

		if (r && r->work == w) {
			if (!known) {
				rec = r->emitted;
				fn = r->function;
				if (r->cpu != bpf_get_smp_processor_id())
					clear_left_slot(r->cpu, w);
			}
			r->work = 0;
		}
	}
	if (rec)
		emit_work(CW_REC_WQ_EXEC_END, lvl, w, fn);
	return 0;
}
