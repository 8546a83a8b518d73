// SPDX-License-Identifier: MIT
/*
 * The class table (see classes.h for how to add a class) and what the
 * capture decides from it before loading anything.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "schema/names.h"
#include "bpf/config.h" /* the skeletons' .rodata type */
#include "capture/classes.h"
#include "capture/log.h"
#include "capture/perfev.h"
#include "capture/probe.h"
#include "block.skel.h"
#include "futex.skel.h"
#include "io_uring.skel.h"
#include "net.skel.h"
#include "sample.skel.h"
#include "sched.skel.h"
#include "timer.skel.h"
#include "usdt.skel.h"
#include "go.skel.h"
#include "workqueue.skel.h"

/* sched_switch gained prev_state in 5.18 and sched_process_exit
 * group_dead in 6.16: one program for each side of the change. The
 * fork and exits also run alone, to follow forks (.follows). */
static const struct cw_prog_desc sched_progs[] = {
	{ .name = "handle_switch", .tp = "sched_switch", .min_args = 4 },
	{ .name = "handle_switch_v0", .tp = "sched_switch", .min_args = 3, .max_args = 3 },
	{ .name = "handle_waking", .tp = "sched_waking" },
	{ .name = "handle_wakeup_new", .tp = "sched_wakeup_new" },
	{ .name = "handle_fork", .tp = "sched_process_fork", .follows = true },
	{ .name = "handle_exec", .tp = "sched_process_exec" },
	{ .name = "handle_exit", .tp = "sched_process_exit", .min_args = 2, .follows = true },
	{ .name = "handle_exit_v0", .tp = "sched_process_exit", .min_args = 1, .max_args = 1,
	  .follows = true },
	{ .name = "handle_rename", .tp = "task_rename", .optional = true },
	{ .name = NULL },
};


/*
 * io_uring: the tracepoints take struct io_kiocb since 6.0 (older kernels
 * lack io_uring_submit_req and are refused with its name);
 * io_uring_complete passes the CQE itself since 6.5. The interrupt
 * exits bound the cause slots the class sets (bpf/io_uring.bpf.c). The
 * trampolines are optional: without them the class is recorded without
 * ring frees and io-wq starts.
 */
static const struct cw_prog_desc io_uring_progs[] = {
	{ .name = "handle_create", .tp = "io_uring_create", .min_args = 5, .max_args = 5 },
	{ .name = "handle_submit", .tp = "io_uring_submit_req", .min_args = 1, .max_args = 1 },
	{ .name = "handle_punt", .tp = "io_uring_queue_async_work", .min_args = 2, .max_args = 2 },
	{ .name = "handle_poll_arm", .tp = "io_uring_poll_arm", .min_args = 3, .max_args = 3 },
	{ .name = "handle_task_add", .tp = "io_uring_task_add", .min_args = 2, .max_args = 2 },
	{ .name = "handle_link", .tp = "io_uring_link", .min_args = 2, .max_args = 2 },
	{ .name = "handle_fail_link", .tp = "io_uring_fail_link", .min_args = 2, .max_args = 2 },
	{ .name = "handle_complete", .tp = "io_uring_complete", .min_args = 3, .max_args = 3 },
	{ .name = "handle_complete_v0", .tp = "io_uring_complete", .min_args = 7, .max_args = 7 },
	{ .name = "handle_overflow", .tp = "io_uring_cqe_overflow", .min_args = 5, .max_args = 5 },
	{ .name = "handle_irq_entry", .tp = "irq_handler_entry" },
	{ .name = "handle_irq_exit", .tp = "irq_handler_exit" },
	/* net's clears the same slot */
	{ .name = "handle_softirq_exit", .tp = "softirq_exit", .done_by = CW_CLASS_NET },
	{ .name = "handle_ring_free", .tp = "io_ring_exit_work", .kind = CW_PROG_FEXIT,
	  .optional = true, .rec = CW_REC_URING_FREE },
	{ .name = "handle_wq_work", .tp = "io_wq_submit_work", .kind = CW_PROG_FENTRY,
	  .optional = true, .rec = CW_REC_URING_WORK },
	{ .name = NULL },
};


/* workqueue: execute_end's function argument is not read (a tp_btf
 * program cannot read one of function pointer type); execute_start keeps
 * it. */
static const struct cw_prog_desc workqueue_progs[] = {
	{ .name = "handle_queue", .tp = "workqueue_queue_work", .min_args = 3, .max_args = 3 },
	{ .name = "handle_execute_start", .tp = "workqueue_execute_start" },
	{ .name = "handle_execute_end", .tp = "workqueue_execute_end" },
	{ .name = NULL },
};


/* timer: hrtimer_start gained was_armed (and hrtimer_cancel stopped
 * firing at every expiry) in 6.18; timer_start passes the bucket since
 * 5.x, expires and flags before; timer_expire_entry gained baseclk. */
static const struct cw_prog_desc timer_progs[] = {
	{ .name = "handle_hrtimer_start", .tp = "hrtimer_start", .min_args = 3 },
	{ .name = "handle_hrtimer_start_v0", .tp = "hrtimer_start", .min_args = 2, .max_args = 2 },
	{ .name = "handle_hrtimer_expire", .tp = "hrtimer_expire_entry", .min_args = 2 },
	{ .name = "handle_hrtimer_expire_exit", .tp = "hrtimer_expire_exit" },
	{ .name = "handle_hrtimer_cancel", .tp = "hrtimer_cancel" },
	{ .name = "handle_timer_start", .tp = "timer_start", .min_args = 2, .max_args = 2 },
	{ .name = "handle_timer_start_v0", .tp = "timer_start", .min_args = 3, .max_args = 3 },
	{ .name = "handle_timer_expire", .tp = "timer_expire_entry", .min_args = 2 },
	{ .name = "handle_timer_expire_v0", .tp = "timer_expire_entry", .min_args = 1, .max_args = 1 },
	{ .name = "handle_timer_expire_exit", .tp = "timer_expire_exit" },
	{ .name = "handle_timer_cancel", .tp = "timer_cancel" },
	{ .name = NULL },
};


/* net: the entries of GRO and list receive mark their skbs, whose
 * receipt then sets no cause (bpf/net.bpf.c); netif_receive_skb_exit
 * only closes a packet's window earlier than its NAPI poll's end;
 * inet_sock_set_state learns the traced set's listening ports, without
 * which a new listener's first clients are orphans. */
static const struct cw_prog_desc net_progs[] = {
	{ .name = "handle_xmit", .tp = "net_dev_queue", .min_args = 1, .max_args = 1 },
	{ .name = "handle_receive", .tp = "netif_receive_skb", .min_args = 1, .max_args = 1 },
	{ .name = "handle_waking", .tp = "sched_waking" },
	{ .name = "handle_napi_poll", .tp = "napi_poll" },
	{ .name = "handle_receive_exit", .tp = "netif_receive_skb_exit", .optional = true },
	{ .name = "handle_softirq_exit", .tp = "softirq_exit" },
	{ .name = "handle_gro_receive", .tp = "napi_gro_receive_entry" },
	{ .name = "handle_gro_frags", .tp = "napi_gro_frags_entry" },
	{ .name = "handle_receive_list", .tp = "netif_receive_skb_list_entry" },
	{ .name = "handle_sock_state", .tp = "inet_sock_set_state", .optional = true },
	{ .name = NULL },
};


/* futex: the syscall events of the futex calls, each exit attached before
 * its enter (bpf/futex.bpf.c says why these hooks). futex(2) is the class;
 * the futex2 calls are optional: a kernel without one (futex_waitv came
 * in 5.16, the others in 6.7) never makes the call. */
static const struct cw_prog_desc futex_progs[] = {
	{ .name = "handle_futex_exit", .tp = "syscalls/sys_exit_futex",
	  .kind = CW_PROG_TRACEPOINT },
	{ .name = "handle_futex_enter", .tp = "syscalls/sys_enter_futex",
	  .kind = CW_PROG_TRACEPOINT },
	{ .name = "handle_futex_wait_exit", .tp = "syscalls/sys_exit_futex_wait",
	  .kind = CW_PROG_TRACEPOINT, .optional = true },
	{ .name = "handle_futex_wait_enter", .tp = "syscalls/sys_enter_futex_wait",
	  .kind = CW_PROG_TRACEPOINT, .optional = true, .needs = "handle_futex_wait_exit" },
	{ .name = "handle_futex_wake_exit", .tp = "syscalls/sys_exit_futex_wake",
	  .kind = CW_PROG_TRACEPOINT, .optional = true },
	{ .name = "handle_futex_wake_enter", .tp = "syscalls/sys_enter_futex_wake",
	  .kind = CW_PROG_TRACEPOINT, .optional = true, .needs = "handle_futex_wake_exit" },
	{ .name = "handle_futex_waitv_exit", .tp = "syscalls/sys_exit_futex_waitv",
	  .kind = CW_PROG_TRACEPOINT, .optional = true },
	{ .name = "handle_futex_waitv_enter", .tp = "syscalls/sys_enter_futex_waitv",
	  .kind = CW_PROG_TRACEPOINT, .optional = true, .needs = "handle_futex_waitv_exit" },
	{ .name = "handle_futex_requeue_exit", .tp = "syscalls/sys_exit_futex_requeue",
	  .kind = CW_PROG_TRACEPOINT, .optional = true },
	{ .name = "handle_futex_requeue_enter", .tp = "syscalls/sys_enter_futex_requeue",
	  .kind = CW_PROG_TRACEPOINT, .optional = true, .needs = "handle_futex_requeue_exit" },
	{ .name = NULL },
};


/* sample: the tick's program runs on perf events the tracer opens; the
 * off-CPU program has sched_switch's two layouts, as sched's, and is not
 * loaded with the sched class, whose switch takes the waits then
 * (bpf/sched.bpf.c, cw_config.switch_waits). */
static const struct cw_prog_desc sample_progs[] = {
	{ .name = "handle_cpu", .tp = PERFEV_SAMPLE_EVENT, .kind = CW_PROG_PERF_EVENT,
	  .feature = CW_FEAT_CPU_SAMPLES },
	{ .name = "handle_offcpu", .tp = "sched_switch", .min_args = 4, .feature = CW_FEAT_OFFCPU,
	  .done_by = CW_CLASS_SCHED },
	{ .name = "handle_offcpu_v0", .tp = "sched_switch", .min_args = 3, .max_args = 3,
	  .feature = CW_FEAT_OFFCPU, .done_by = CW_CLASS_SCHED },
	{ .name = NULL },
};


/* block: the merge hooks only name who else a request serves, and
 * block_rq_merge only moves an insert to its survivor: a kernel without
 * them records requests with their inserting submitter alone. The
 * interrupt exits bound the cause slot (bpf/block.bpf.c). */
static const struct cw_prog_desc block_progs[] = {
	{ .name = "handle_insert", .tp = "block_rq_insert", .min_args = 1, .max_args = 1 },
	{ .name = "handle_issue", .tp = "block_rq_issue", .min_args = 1, .max_args = 1 },
	{ .name = "handle_complete", .tp = "block_rq_complete", .min_args = 3, .max_args = 3 },
	{ .name = "handle_backmerge", .tp = "block_bio_backmerge", .min_args = 1, .max_args = 1,
	  .optional = true },
	{ .name = "handle_frontmerge", .tp = "block_bio_frontmerge", .min_args = 1, .max_args = 1,
	  .optional = true },
	{ .name = "handle_rq_merge", .tp = "block_rq_merge", .min_args = 1, .max_args = 1,
	  .optional = true },
	{ .name = "handle_irq_entry", .tp = "irq_handler_entry" },
	{ .name = "handle_irq_exit", .tp = "irq_handler_exit" },
	/* net's clears the whole slot, this one's block request with it */
	{ .name = "handle_softirq_exit", .tp = "softirq_exit", .done_by = CW_CLASS_NET },
	{ .name = NULL },
};


/* usdt: one program for every probe, attached by capture/usdt.c. */
static const struct cw_prog_desc usdt_progs[] = {
	{ .name = "handle_usdt", .tp = "uprobe", .kind = CW_PROG_USDT },
	{ .name = NULL },
};


/* go: uprobes on a Go binary's runtime, attached per binary and function
 * by capture/golang.c at its entry, each return instruction or (spawns)
 * the call of runqput after newproc1's return. */
static const struct cw_prog_desc go_progs[] = {
	{ .name = "go_spawn", .tp = "uprobe", .kind = CW_PROG_USDT },
	{ .name = "go_execute", .tp = "uprobe", .kind = CW_PROG_USDT },
	{ .name = "go_gopark", .tp = "uprobe", .kind = CW_PROG_USDT },
	{ .name = "go_ready", .tp = "uprobe", .kind = CW_PROG_USDT },
	{ .name = "go_goexit0", .tp = "uprobe", .kind = CW_PROG_USDT },
	{ .name = "go_netpollready", .tp = "uprobe", .kind = CW_PROG_USDT },
	{ .name = "go_servehttp", .tp = "uprobe", .kind = CW_PROG_USDT },
	{ .name = "go_servehttp_ret", .tp = "uprobe", .kind = CW_PROG_USDT },
	{ .name = NULL },
};

/* In the contract's order of -e. The ones without an object are the next
 * issues' work; listing them lets -e name them and the capture say that
 * they are missing instead of calling them unknown. */
const struct cw_class_desc cw_classes[] = {
	{
		.id = CW_CLASS_SCHED,
		.elf_bytes = sched_bpf__elf_bytes,
		.progs = sched_progs,
		.rings = 1u << CW_RING_EDGE | 1u << CW_RING_MAP,
	},
	{
		.id = CW_CLASS_IO_URING,
		.elf_bytes = io_uring_bpf__elf_bytes,
		.progs = io_uring_progs,
		.rings = 1u << CW_RING_EDGE | 1u << CW_RING_MAP,
	},
	{
		.id = CW_CLASS_WORKQUEUE,
		.elf_bytes = workqueue_bpf__elf_bytes,
		.progs = workqueue_progs,
		.rings = 1u << CW_RING_EDGE | 1u << CW_RING_MAP,
	},
	{
		.id = CW_CLASS_TIMER,
		.elf_bytes = timer_bpf__elf_bytes,
		.progs = timer_progs,
		.rings = 1u << CW_RING_EDGE | 1u << CW_RING_MAP,
	},
	{
		.id = CW_CLASS_FUTEX,
		.elf_bytes = futex_bpf__elf_bytes,
		.progs = futex_progs,
		.rings = 1u << CW_RING_EDGE | 1u << CW_RING_MAP,
	},
	{
		.id = CW_CLASS_NET,
		.elf_bytes = net_bpf__elf_bytes,
		.progs = net_progs,
		.rings = 1u << CW_RING_EDGE,
	},
	{
		.id = CW_CLASS_ADAPTER,
		.elf_bytes = usdt_bpf__elf_bytes,
		.progs = usdt_progs,
		.rings = 1u << CW_RING_EDGE,
	},
	{
		.id = CW_CLASS_BLOCK,
		.elf_bytes = block_bpf__elf_bytes,
		.progs = block_progs,
		.rings = 1u << CW_RING_EDGE | 1u << CW_RING_MAP,
	},
	{
		.id = CW_CLASS_GO,
		.elf_bytes = go_bpf__elf_bytes,
		.progs = go_progs,
		.rings = 1u << CW_RING_EDGE,
	},
	{
		.id = CW_CLASS_SAMPLE,
		.elf_bytes = sample_bpf__elf_bytes,
		.progs = sample_progs,
		.rings = 1u << CW_RING_SAMPLE,
	},
};
const size_t cw_nclasses = sizeof(cw_classes) / sizeof(cw_classes[0]);

static const char *class_name(const struct cw_class_desc *c)
{
	return cw_name_of(cw_class_names, CW_CLASS_MAX, (unsigned)c->id);
}

/* The sample plane is a class for loading, draining and accounting, not
 * an edge class (schema/classes.def). */
bool classes__context_plane(const struct cw_class_desc *c)
{
	return cw_class_kind((unsigned)c->id) == CW_CK_CONTEXT;
}

const struct cw_class_desc *classes__find(const char *name)
{
	int id = cw_class_find_edge(name, 1);

	for (size_t i = 0; i < cw_nclasses && id >= 0; i++)
		if (cw_classes[i].id == id)
			return &cw_classes[i];
	return NULL;
}

int classes__prog_probe(const struct cw_prog_desc *p)
{
	int n;

	switch (p->kind) {
	case CW_PROG_TRACEPOINT:
		return probe__tracepoint(p->tp);
	case CW_PROG_FENTRY:
	case CW_PROG_FEXIT:
		return probe__function(p->tp, p->kind == CW_PROG_FEXIT);
	case CW_PROG_PERF_EVENT:
		/* Software events exist wherever perf does; what can fail
		 * is opening one (CONFIG_PERF_EVENTS, perf_event_paranoid). */
		return probe__cpu_clock();
	case CW_PROG_USDT:
		return probe__uprobe();
	case CW_PROG_TP_BTF:
		break;
	}
	n = probe__tp_nargs(p->tp);
	if (n < 0)
		return -ENOENT;
	return n >= p->min_args && (!p->max_args || n <= p->max_args) ? 0 : -EINVAL;
}

const struct cw_prog_desc *classes__prog_needs(const struct cw_class_desc *c,
					       const struct cw_prog_desc *p)
{
	for (const struct cw_prog_desc *q = c->progs; p->needs && q->name; q++)
		if (!strcmp(q->name, p->needs))
			return q;
	return NULL;
}

bool classes__prog_fits(const struct cw_prog_desc *p)
{
	return classes__prog_probe(p) == 0;
}

void classes__prog_why(const struct cw_prog_desc *p, int err, char *buf, size_t len)
{
	const char *how = p->kind == CW_PROG_FEXIT ? "fexit" : "fentry";

	switch (p->kind) {
	case CW_PROG_TRACEPOINT:
		if (err == -ENODEV)
			snprintf(buf, len, "tracefs is not mounted (tracepoint %s)", p->tp);
		else
			snprintf(buf, len, "tracefs has no tracepoint %s", p->tp);
		return;
	case CW_PROG_FENTRY:
	case CW_PROG_FEXIT:
		if (err == -ENOENT)
			snprintf(buf, len, "the kernel's BTF has no function %s", p->tp);
		else
			snprintf(buf, len, "the kernel refuses %s programs on %s: %s", how, p->tp,
				 strerror(-err));
		return;
	case CW_PROG_PERF_EVENT:
		snprintf(buf, len, "cannot open a %s perf event: %s", p->tp, strerror(-err));
		return;
	case CW_PROG_USDT:
		snprintf(buf, len, "the kernel has no uprobe perf events (CONFIG_UPROBE_EVENTS): %s",
			 strerror(-err));
		return;
	case CW_PROG_TP_BTF:
		break;
	}
	if (err == -EINVAL)
		snprintf(buf, len, "tracepoint %s has %d arguments, a layout this build does not know",
			 p->tp, probe__tp_nargs(p->tp));
	else
		snprintf(buf, len, "the kernel's BTF has no tracepoint %s", p->tp);
}

/* 0, or -ENOENT with @why naming the first required hook that no program
 * of @c fits. */
static int kernel_supports(const struct cw_class_desc *c, unsigned features, char *why, size_t len)
{
	for (const struct cw_prog_desc *p = c->progs; p->name; p++) {
		bool fitted = false;

		if (p->optional || (p->feature && !(p->feature & features)))
			continue;
		for (const struct cw_prog_desc *q = c->progs; q->name && !fitted; q++)
			fitted = q->kind == p->kind && !strcmp(q->tp, p->tp) && classes__prog_fits(q);
		if (fitted)
			continue;
		classes__prog_why(p, classes__prog_probe(p), why, len);
		return -ENOENT;
	}
	return 0;
}

void classes__select(struct cw_class_sel *sel, const bool *requested, unsigned features)
{
	memset(sel, 0, sizeof(*sel));
	for (size_t i = 0; i < cw_nclasses; i++) {
		const struct cw_class_desc *c = &cw_classes[i];
		struct cw_class_state *s = &sel->c[c->id];

		if (requested && !requested[c->id])
			continue;
		if (!c->elf_bytes)
			s->status = CW_CLS_NO_BUILD;
		else if (kernel_supports(c, features, s->why, sizeof(s->why)))
			s->status = CW_CLS_NO_KERNEL;
		else
			s->status = CW_CLS_OK;
	}
}

int classes__list(const struct cw_class_sel *sel, bool missing, char *buf, size_t len)
{
	size_t off = 0;
	int n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < cw_nclasses && off < len; i++) {
		const struct cw_class_desc *c = &cw_classes[i];
		enum cw_class_status s = sel->c[c->id].status;

		if (s == CW_CLS_OFF || (s == CW_CLS_OK) == missing ||
		    (!missing && classes__context_plane(c)))
			continue;
		off += snprintf(buf + off, len - off, "%s%s%s", n++ ? "," : "", class_name(c),
				s == CW_CLS_NO_BUILD ? ":build" : s == CW_CLS_NO_KERNEL ? ":kernel" : "");
	}
	return n;
}

int classes__choose(struct cw_class_sel *sel, const bool *requested, unsigned features,
		    char *recorded, char *missing, size_t len)
{
	char unbuilt[256] = "", why[512] = "";
	size_t uoff = 0, woff = 0;

	classes__select(sel, requested, features);
	classes__list(sel, true, missing, len);
	for (size_t i = 0; i < cw_nclasses; i++) {
		const struct cw_class_state *s = &sel->c[cw_classes[i].id];
		const char *name = class_name(&cw_classes[i]);

		if (s->status == CW_CLS_NO_BUILD && uoff < sizeof(unbuilt))
			uoff += snprintf(unbuilt + uoff, sizeof(unbuilt) - uoff, "%s%s",
					 uoff ? "," : "", name);
		if (s->status != CW_CLS_NO_KERNEL)
			continue;
		if (woff < sizeof(why))
			woff += snprintf(why + woff, sizeof(why) - woff, "; %s: %s", name, s->why);
		cw_notice("not recording %s: %s", name, s->why);
	}
	if (!classes__list(sel, false, recorded, len)) {
		cw_msg("cannot start: none of the requested classes can be recorded (%s%s%s)",
		       *unbuilt ? "not implemented yet: " : "", unbuilt, *unbuilt ? why : why + 2);
		return -1;
	}
	if (*unbuilt)
		cw_notice("recording %s; not implemented yet: %s", recorded, unbuilt);
	return 0;
}
