// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The ksym way of finding each CPU's preempt count (CW_CTXM_KSYM, see
 * bpf/causeway.bpf.h): user space runs this program once per CPU with
 * BPF_PROG_TEST_RUN before the capture starts, and it stores that CPU's
 * address of the count in pc_addr, which every class object shares.
 *
 * It is an object of its own because a typed __ksym is resolved by the
 * verifier through kallsyms, for every instruction of the program, dead
 * or not: a kernel whose BTF describes the variable but whose kallsyms
 * lacks it (no CONFIG_KALLSYMS_ALL) would refuse any program that names
 * it. User space loads this one only when /proc/kallsyms lists the
 * symbol, so the class programs never name it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "schema/events.h"
#include "bpf/config.h"
#include "causeway.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Weak: whichever this kernel lacks in its BTF resolves to address 0 and
 * its branch is pruned by the verifier (libbpf's bpf_ksym_exists(), which
 * libbpf 1.1 does not have yet). */
#define cw_ksym_exists(sym) (!!(&(sym)))

extern const int __preempt_count __ksym __weak;

/* 6.2..6.14; vmlinux.h of other kernels has no struct pcpu_hot. */
struct pcpu_hot___cw {
	int preempt_count;
} __attribute__((preserve_access_index));
extern const struct pcpu_hot___cw pcpu_hot __ksym __weak;

/* args[0]: the CPU. @return 0 when its address was stored. */
SEC("raw_tp")
int cw_locate_preempt_count(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 cpu = (__u32)ctx->args[0];
	__u64 addr = 0;

	if (cw_ksym_exists(__preempt_count)) {
		const int *p = bpf_per_cpu_ptr(&__preempt_count, cpu);

		if (p)
			addr = (__u64)p;
	} else if (cw_ksym_exists(pcpu_hot)) {
		const struct pcpu_hot___cw *h = bpf_per_cpu_ptr(&pcpu_hot, cpu);

		if (h)
			addr = (__u64)h + bpf_core_field_offset(struct pcpu_hot___cw, preempt_count);
	}
	if (!addr)
		return 1;
	return bpf_map_update_elem(&pc_addr, &cpu, &addr, BPF_ANY) ? 1 : 0;
}
