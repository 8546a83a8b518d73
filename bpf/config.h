/* SPDX-License-Identifier: MIT */
/*
 * What the capture and its BPF objects share besides the records of
 * schema/events.h: the settings user space writes into every object's
 * .rodata before loading it, the value of the traced set, the ways of
 * reading the preempt count, and the maps every object shares. Fixed-width
 * fields only, as in events.h: both compilers must agree on the layout.
 */
#ifndef CAUSEWAY_BPF_CONFIG_H
#define CAUSEWAY_BPF_CONFIG_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/*
 * How a program learns the context (task, softirq, hardirq, NMI) it runs
 * in, which decides whether the current task may be blamed for a wakeup
 * (docs/model.md §5.6). Chosen by user space at start; see capture/tracer.c.
 */
enum {
	CW_CTXM_NONE = 0,	 /* unknown: wakes are recorded as CW_CTX_UNKNOWN */
	CW_CTXM_KSYM = 1,	 /* x86: per-CPU addresses from a typed __ksym */
	CW_CTXM_RUNQUEUE = 2,	 /* x86: this CPU's runqueue + a BTF offset */
	CW_CTXM_THREAD_INFO = 3, /* arm64: the count is in the task */
	CW_CTXM_MAX = 4,
};

/*
 * Settings, one copy in each object's .rodata (variable cw_config), so
 * the verifier sees them as constants and prunes what they switch off.
 */
struct cw_bpf_config {
	/* Wake the consumer when this CPU has written this many bytes to
	 * the edge ring, or the sample ring, since it last did
	 * (bpf/causeway.bpf.h cw_wakeup), out of ncpus CPUs. */
	__u64 wakeup_bytes, sample_wakeup_bytes;
	__u64 ncpus;
	__s64 pc_delta;	     /* CW_CTXM_RUNQUEUE: preempt count - runqueues */
	__u32 self_tgid;     /* the capture itself: never recorded */
	__u8 filter_enabled; /* 0: system-wide; 1: only the traced set */
	__u8 ctx_method;     /* CW_CTXM_* */
	/* The sched class's switch takes the off-CPU waits (format 1.9):
	 * both it and off-CPU sampling are recorded. */
	__u8 switch_waits;
	/* The sched class is loaded only to keep the traced set (a filter
	 * without the class): its fork and exit programs write nothing. */
	__u8 follow_only;
	/* The sample plane (bpf/sample.bpf.c). */
	__u64 sample_period_ns;	   /* CPU samples: ns of CPU time per tick */
	/* --sample-budget: stacks taken per window, all CPUs together, x
	 * 2^32 (so a budget below one sample per window stays exact), of CPU
	 * ticks and of off-CPU waits; 0: no cap, every stack taken. */
	__u64 sample_quota;
	__u64 offcpu_quota;
	__u64 sample_window_ns;	  /* the budget's window */
	__u32 sample_stack_bytes; /* --call-graph dwarf: user stack bytes to copy; 0: fp */
	__u32 __pad2;
};

/*
 * A traced process (key: tgid). A process whose last thread has exited
 * (group dead) stays in the set as DYING until that thread's final
 * switch-out in TASK_DEAD, so that switch is recorded too; then it goes.
 */
#define CW_TRACED_LIVE 1
#define CW_TRACED_DYING 2
struct cw_traced {
	__u32 state; /* CW_TRACED_* */
	__u32 tid;   /* DYING: the thread whose final switch ends it */
};

/*
 * The counters map (bpf/causeway.bpf.h) holds one slot per (ring, class),
 * key ring * CW_CLASS_MAX + class, then this one: samples the budget
 * decimated (in `written`). They are not lost: each kept sample carries
 * its keep probability, so what was decimated is estimated exactly; the
 * count is only shown and written at the close.
 */
#define CW_COUNTER_DECIMATED (CW_RING_MAX * CW_CLASS_MAX)
/*
 * Then what a class took in, counted in `written` whether or not it
 * wrote it (docs/model.md §2.3): packets received with a cause slot
 * (written only when they woke a context the capture records) and timer
 * starts held (written only with the fire they lead to). Beside the
 * class's records, they say how much was left out as causing nothing.
 */
#define CW_COUNTER_NET_RECEIPTS (CW_COUNTER_DECIMATED + 1)
#define CW_COUNTER_TIMER_ARMS (CW_COUNTER_DECIMATED + 2)
#define CW_COUNTER_SLOTS (CW_COUNTER_DECIMATED + 3)

/* The ring map's value (bpf/causeway.bpf.h), one per CPU: the run of failed
 * edge reservations not yet reported by a cw_gap record (lost, first,
 * last; user space reports the runs still open at the close,
 * capture/account.c), and the bytes this CPU wrote to each ring since it
 * last woke the consumer. */
struct cw_ring_cpu {
	__u64 lost;
	__u64 first, last;
	__u64 unwoken[2]; /* edges, samples */
};

/* include/linux/sched.h; part of the ABI of the sched_switch prev_state. */
#define CW_TASK_DEAD 0x80

#ifndef __bpf__
/* Indexed by CW_CTXM_*; the metadata key context_method holds them. */
static const char *const cw_ctx_method_names[CW_CTXM_MAX] = {
	[CW_CTXM_NONE] = "none",
	[CW_CTXM_KSYM] = "ksym",
	[CW_CTXM_RUNQUEUE] = "runqueue",
	[CW_CTXM_THREAD_INFO] = "thread_info",
};

/* The maps every object defines (bpf/causeway.bpf.h) and user space
 * creates once: the first object loaded creates them, the others reuse
 * its file descriptors. */
static const char *const cw_shared_maps[] = { "edges", "counters", "traced", "pc_addr", "slots", "objs",
						"samples", "ring_cpu", "traced_bits", "objs_count",
						"ports", "scratch", "offered" };
#endif

/*
 * The go class (bpf/go.bpf.c): what a program needs to read one Go
 * binary's runtime, written by capture/golang.c into the go_bins map at
 * the binary's id (the uprobe's cookie) before it attaches. The offsets
 * and registers come from the binary's own DWARF (docs/model.md §6.2):
 * they change between Go versions. An offset of -1 is not known: what
 * needs it is not read.
 */
#define CW_GO_MAX_BINARIES 256
/*
 * Set in a uprobe's cookie (above the binary's id) when the probe sits on
 * the JBE of the function's stack check rather than its first byte
 * (capture/gobin.h, probe_off): the hit then sees the compare's flags,
 * and a jump about to be taken (CF or ZF: the stack must grow) runs
 * morestack, which starts the function again and hits the probe once
 * more. That first hit records nothing: a function is entered once.
 */
#define CW_GO_AT_STACK_CHECK (1ull << 32)
/*
 * go_spawn's cookie holds, in these bits, the register (DWARF x86-64
 * number) its site holds the new g in: RAX at newproc1's returns, runqput's
 * gp argument at the call of runqput after it (capture/gobin.h, struct
 * gobin_site). A binary may have sites of both kinds.
 */
#define CW_GO_SITE_REG_SHIFT 40
#define CW_GO_SITE_REG(cookie) ((__u8)((cookie) >> CW_GO_SITE_REG_SHIFT))
#define CW_GO_NO_REG 0xff
struct cw_go_cfg {
	__s32 g_goid, g_m, m_curg;	 /* runtime.g.goid, .m; runtime.m.curg */
	__s32 g_startpc;		 /* runtime.g.startpc */
	__s32 pd_rg, pd_wg;		 /* runtime.pollDesc.rg, .wg */
	__s32 req_method, req_url, url_path; /* net/http.Request.Method, .URL; net/url.URL.Path */
	/* Per CW_GO_FN_*: the registers (DWARF x86-64 numbers) of what the
	 * program reads at the probe: execute, ready, goexit0 their g;
	 * gopark the reason; netpollready the pollDesc and the mode;
	 * ServeHTTP the *Request (newproc1: none, its site's cookie says). */
	__u8 reg[8][2];
	__u8 valid;
	__u8 __pad[7];
};

#endif /* CAUSEWAY_BPF_CONFIG_H */
