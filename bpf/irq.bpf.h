/* SPDX-License-Identifier: MIT */
/*
 * Where a device interrupt's handler runs, for the classes that set the
 * hardirq cause slot while one completes their object (io_uring, block).
 * Hardirq work has no end an object can see but a handler's
 * (irq_handler_exit): an hrtimer callback or an IPI ends unseen, so a slot
 * set there could name the object for a later, unrelated wakeup. Such a
 * class sets it only inside a handler, and clears it at the handler's exit.
 * Each object that includes this has its own map and its own entry and
 * exit programs (CW_IRQ_HANDLER_PROGS).
 *
 * Include after bpf/causeway.bpf.h.
 */
#ifndef CAUSEWAY_IRQ_BPF_H
#define CAUSEWAY_IRQ_BPF_H

/* Per CPU: 1 between irq_handler_entry and irq_handler_exit. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} in_handler SEC(".maps");

static __always_inline void cw_in_handler_set(__u32 v)
{
	__u32 zero = 0, *in = bpf_map_lookup_elem(&in_handler, &zero);

	if (in)
		*in = v;
}

/* May an object completed now at level @lvl take that level's slot? */
static __always_inline bool cw_slot_bounded(__u8 lvl)
{
	__u32 zero = 0, *in;

	if (lvl == CW_CTX_SOFTIRQ)
		return true;
	if (lvl != CW_CTX_HARDIRQ)
		return false;
	in = bpf_map_lookup_elem(&in_handler, &zero);
	return in && *in;
}

/* The entry and exit programs; @clear(lvl) ends what the object's class
 * set in the hardirq slot. */
#define CW_IRQ_HANDLER_PROGS(clear)                                                 \
	SEC("tp_btf/irq_handler_entry")                                             \
	int BPF_PROG(handle_irq_entry, int irq, struct irqaction *action)           \
	{                                                                           \
		cw_in_handler_set(1);                                               \
		return 0;                                                           \
	}                                                                           \
	SEC("tp_btf/irq_handler_exit")                                              \
	int BPF_PROG(handle_irq_exit, int irq, struct irqaction *action, int ret)   \
	{                                                                           \
		cw_in_handler_set(0);                                               \
		clear(CW_CTX_HARDIRQ);                                              \
		return 0;                                                           \
	}

#endif /* CAUSEWAY_IRQ_BPF_H */
