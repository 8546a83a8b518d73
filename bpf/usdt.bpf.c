// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * causeway edge plane, adapter class (docs/model.md §6): every hit of a USDT
 * probe the capture attached, with its arguments whole, as one
 * schema/events.h record on the `edges` ring.
 *
 *   any attached probe    CW_REC_USDT       probe id and arguments
 *   ... with a string     CW_REC_USDT_STR   and one argument's string
 *
 * One program serves every probe: capture/usdt.c attaches it per probe
 * and object, with the probe's id (the cw_usdt_probe record's) as the USDT
 * cookie, and libbpf's usdt.bpf.h decodes the arguments from the specs it
 * wrote at attach. What the probe means (a task, a request, a lock wait)
 * is the analyzer's business: the capture records, it does not
 * interpret.
 *
 * Filtering: the probes are attached for every process that maps an
 * object (pid -1), since a traced process may fork and exec after the
 * attach; the traced set decides here, as for every class.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
/* Each distinct argument layout of an attached probe site takes a spec;
 * PostgreSQL alone has about a hundred sites. */
#define BPF_USDT_MAX_SPEC_CNT 4096
#include <bpf/usdt.bpf.h>
#include "schema/events.h"
#include "bpf/config.h"
#include "causeway.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/*
 * Probe id -> 1 + the index of its string argument (0: none), written by
 * user space before the probe is attached. An array, so that a lookup
 * never fails and an id nobody wrote reads as "no string".
 */
#define USDT_MAX_PROBES 65536
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, USDT_MAX_PROBES);
	__type(key, __u32);
	__type(value, __u8);
} usdt_str_arg SEC(".maps");

static __always_inline void fill(struct cw_usdt *e, struct pt_regs *ctx, __u32 probe, int nargs)
{
	cw_current(&e->task, &e->task_start);
	e->probe = probe;
	e->nargs = nargs;
	__builtin_memset(e->__pad, 0, sizeof(e->__pad));
	for (int i = 0; i < CW_USDT_MAX_ARGS; i++) {
		long v = 0;

		/* bpf_usdt_arg() sign-extends as the spec's size says and
		 * zeroes v when it fails. */
		if (i < nargs)
			bpf_usdt_arg(ctx, i, &v);
		e->args[i] = v;
	}
}

SEC("usdt")
int handle_usdt(struct pt_regs *ctx)
{
	__u32 probe = (__u32)bpf_usdt_cookie(ctx);
	int nargs = bpf_usdt_arg_cnt(ctx);
	struct cw_usdt_str *s;
	struct cw_usdt *e;
	__u8 *str;

	if (!cw_tgid_traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	if (nargs < 0)
		nargs = 0;
	if (nargs > CW_USDT_MAX_ARGS)
		nargs = CW_USDT_MAX_ARGS;
	str = bpf_map_lookup_elem(&usdt_str_arg, &probe);
	/* A uprobe runs in the task that hit it, never in an interrupt. */
	if (!str || !*str || *str > nargs) {
		e = cw_reserve(sizeof(*e), CW_REC_USDT, CW_CTX_TASK);
		if (!e)
			return 0;
		fill(e, ctx, probe, nargs);
		cw_submit(e);
		return 0;
	}
	s = cw_reserve(sizeof(*s), CW_REC_USDT_STR, CW_CTX_TASK);
	if (!s)
		return 0;
	fill(&s->u, ctx, probe, nargs);
	s->__pad = 0;
	/* Ring memory holds an older record's bytes: zero the field so that
	 * what follows the NUL is zeros, as CW_READ_STR does for kernel
	 * strings. The helper zeroes it again on failure. */
	__builtin_memset(s->str, 0, sizeof(s->str));
	s->str_err = 0;
	{
		__u32 i = *str - 1;

		if (i < CW_USDT_MAX_ARGS) {
			long n = bpf_probe_read_user_str(s->str, sizeof(s->str),
							 (const void *)s->u.args[i]);

			s->str_err = n < 0 ? (__s32)n : 0;
		}
	}
	cw_submit(s);
	return 0;
}
