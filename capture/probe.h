/* SPDX-License-Identifier: MIT */
/*
 * What the running kernel and the caller's privileges allow: checked
 * before anything is loaded, so "cannot start" names exactly what is
 * missing, and tracepoint variants are picked from the kernel's BTF
 * instead of its version.
 */
#ifndef CAUSEWAY_CAPTURE_PROBE_H
#define CAUSEWAY_CAPTURE_PROBE_H

#include <stdbool.h>
#include <stddef.h>

struct btf;
struct btf_type;

/*
 * 0 when the caller may load and attach tracing BPF programs (root, or
 * CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN); otherwise -EPERM with a
 * description of what is missing in @why.
 */
int probe__privileges(char *why, size_t len);

/* 0 when /sys/kernel/btf/vmlinux is readable, else -errno. */
int probe__vmlinux_btf(void);

/*
 * Number of arguments the running kernel passes to the BTF-enabled raw
 * tracepoint @tp (e.g. "sched_switch"), from its btf_trace_<tp> typedef;
 * a negative errno when the kernel's BTF does not describe it. For tests,
 * the tracepoints named in the environment variable
 * CAUSEWAY_HIDE_TRACEPOINTS (comma-separated) are taken as absent.
 */
int probe__tp_nargs(const char *tp);

/*
 * 0 when tracefs lists the tracepoint @tp ("category/name"), the kind a
 * SEC("tracepoint/...") program attaches to; -ENOENT when it does not,
 * -ENODEV when no tracefs is mounted. CAUSEWAY_HIDE_TRACEPOINTS hides it
 * by either spelling, "category/name" or "name".
 */
int probe__tracepoint(const char *tp);

/*
 * 0 when the kernel loads an fentry (or, with @fexit, fexit) program on
 * kernel function @func: a trial program of two instructions, loaded and
 * closed. -ENOENT when the kernel's BTF has no such function (or
 * CAUSEWAY_HIDE_TRACEPOINTS names it); another negative errno when the
 * kernel refuses (some kernels describe the function but do not allow
 * BPF trampolines).
 */
int probe__function(const char *func, bool fexit);

/*
 * 0 when a cpu-clock perf event opens on a CPU (then closed): the kernel
 * has perf events and perf_event_paranoid lets the caller open per-CPU
 * ones. Otherwise perf_event_open(2)'s negative errno.
 */
int probe__cpu_clock(void);

/*
 * 0 when the kernel has uprobe perf events (the PMU libbpf attaches USDT
 * probes through, /sys/bus/event_source/devices/uprobe); else -ENOENT,
 * also when CAUSEWAY_HIDE_TRACEPOINTS names "uprobe".
 */
int probe__uprobe(void);

/*
 * x86: distance in bytes from this CPU's `runqueues` to its preempt count
 * (`__preempt_count`, or `pcpu_hot.preempt_count` on 6.2..6.14), from the
 * offsets of both variables in the kernel BTF's .data..percpu DATASEC.
 * @return 0 and *delta, or a negative errno when either is not described.
 */
int probe__preempt_count_delta(long long *delta);

/*
 * 0 when the kernel's BTF gives struct cfs_rq a member rq (only with
 * CONFIG_FAIR_GROUP_SCHED), the way the runqueue method finds this CPU's
 * runqueue from the current task; a negative errno otherwise.
 */
int probe__runqueue_reachable(void);

/*
 * The index in @names of the first of them /proc/kallsyms lists, or a
 * negative errno (-ENOENT: none). Per-CPU variables are there only with
 * CONFIG_KALLSYMS_ALL.
 */
int probe__kallsyms(const char *const *names, size_t n);

/*
 * Offset of variable @name in DATASEC @sec of @btf, its type in *@vt and
 * its size in *@size (either may be NULL); -1 when absent.
 */
long long probe__datasec_offset(const struct btf *btf, const char *sec, const char *name,
				const struct btf_type **vt, size_t *size);

/* Release the kernel BTF kept for probe__tp_nargs(). */
void probe__cleanup(void);

#endif /* CAUSEWAY_CAPTURE_PROBE_H */
