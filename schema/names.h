/* SPDX-License-Identifier: MIT */
/*
 * The names of classes, rings, contexts and record types: defined once,
 * here, and used by the capture (-e, status, accounting), the analyzer
 * (coverage break reasons, summaries) and the text form (dump, fixtures).
 * The names are part of the interface: -e takes them, the text form and
 * coverage_breaks.reason print them.
 */
#ifndef CAUSEWAY_NAMES_H
#define CAUSEWAY_NAMES_H

#include <stddef.h>
#include <string.h>
#include "events.h"

/* Indexed by CW_CLASS_*. */
static const char *const cw_class_names[CW_CLASS_MAX] = {
	[CW_CLASS_META] = "meta",
	[CW_CLASS_SCHED] = "sched",
	[CW_CLASS_IO_URING] = "io_uring",
	[CW_CLASS_WORKQUEUE] = "workqueue",
	[CW_CLASS_TIMER] = "timer",
	[CW_CLASS_FUTEX] = "futex",
	[CW_CLASS_SAMPLE] = "sample",
	[CW_CLASS_ADAPTER] = "adapter",
	[CW_CLASS_NET] = "net",
};

/* Indexed by CW_CAUSE_*. */
static const char *const cw_cause_names[CW_CAUSE_MAX] = {
	[CW_CAUSE_NONE] = "none",
	[CW_CAUSE_HRTIMER] = "hrtimer",
	[CW_CAUSE_TIMER] = "timer",
	[CW_CAUSE_WORK] = "work",
	[CW_CAUSE_PACKET] = "packet",
	[CW_CAUSE_IO_REQ] = "io_req",
	[CW_CAUSE_FUTEX] = "futex",
};

/* Indexed by CW_RING_*. */
static const char *const cw_ring_names[CW_RING_MAX] = {
	[CW_RING_EDGE] = "edge",
	[CW_RING_SAMPLE] = "sample",
	[CW_RING_MAP] = "map",
};

/* Indexed by CW_CTX_*. */
static const char *const cw_ctx_names[CW_CTX_MAX] = {
	[CW_CTX_TASK] = "task",
	[CW_CTX_SOFTIRQ] = "softirq",
	[CW_CTX_HARDIRQ] = "hardirq",
	[CW_CTX_NMI] = "nmi",
	[CW_CTX_UNKNOWN] = "unknown",
};

/* Record type names, as the text form spells them. */
static const struct {
	unsigned short type;
	const char *name;
} cw_rec_names[] = {
	{ CW_REC_META_KV, "kv" },
	{ CW_REC_META_TASK, "task" },
	{ CW_REC_ACCOUNT, "account" },
	{ CW_REC_GAP, "gap" },
	{ CW_REC_SWITCH, "switch" },
	{ CW_REC_WAKING, "waking" },
	{ CW_REC_WAKEUP, "wakeup" },
	{ CW_REC_WAKEUP_NEW, "wakeup_new" },
	{ CW_REC_FORK, "fork" },
	{ CW_REC_EXEC, "exec" },
	{ CW_REC_EXIT, "exit" },
	{ CW_REC_RENAME, "rename" },
	{ CW_REC_META_KSYMS, "ksyms" },
	{ CW_REC_WAKING_CAUSED, "waking_caused" },
	{ CW_REC_URING_CREATE, "uring_create" },
	{ CW_REC_URING_SUBMIT, "uring_submit" },
	{ CW_REC_URING_PUNT, "uring_punt" },
	{ CW_REC_URING_POLL_ARM, "uring_poll_arm" },
	{ CW_REC_URING_TASK_ADD, "uring_task_add" },
	{ CW_REC_URING_LINK, "uring_link" },
	{ CW_REC_URING_FAIL_LINK, "uring_fail_link" },
	{ CW_REC_URING_COMPLETE, "uring_complete" },
	{ CW_REC_URING_OVERFLOW, "uring_overflow" },
	{ CW_REC_URING_FREE, "uring_free" },
	{ CW_REC_URING_WORK, "uring_work" },
	{ CW_REC_WQ_QUEUE, "wq_queue" },
	{ CW_REC_WQ_ACTIVATE, "wq_activate" },
	{ CW_REC_WQ_EXEC_START, "wq_exec_start" },
	{ CW_REC_WQ_EXEC_END, "wq_exec_end" },
	{ CW_REC_TIMER_START, "timer_start" },
	{ CW_REC_TIMER_EXPIRE, "timer_expire" },
	{ CW_REC_TIMER_EXPIRE_EXIT, "timer_expire_exit" },
	{ CW_REC_TIMER_CANCEL, "timer_cancel" },
	{ CW_REC_FUTEX, "futex" },
	{ CW_REC_NET_XMIT, "net_xmit" },
	{ CW_REC_NET_RX, "net_rx" },
	{ CW_REC_META_MMAP, "mmap" },
	{ CW_REC_SAMPLE_CPU, "sample_cpu" },
	{ CW_REC_SAMPLE_OFFCPU, "sample_offcpu" },
	{ CW_REC_META_USDT, "usdt_probe" },
	{ CW_REC_USDT, "usdt" },
	{ CW_REC_USDT_STR, "usdt_str" },
};

#define CW_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* @return the name of @v in @names[n], or NULL when out of range. */
static inline const char *cw_name_of(const char *const *names, size_t n, unsigned v)
{
	return v < n ? names[v] : NULL;
}

/* @return the index of @name in @names[n], or -1. */
static inline int cw_name_find(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], name))
			return (int)i;
	return -1;
}

static inline const char *cw_rec_name(unsigned type)
{
	for (size_t i = 0; i < CW_ARRAY_SIZE(cw_rec_names); i++)
		if (cw_rec_names[i].type == type)
			return cw_rec_names[i].name;
	return NULL;
}

#endif /* CAUSEWAY_NAMES_H */
