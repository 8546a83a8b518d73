/* SPDX-License-Identifier: MIT */
/*
 * How the context plane takes a sample's stacks, and the budget that
 * decides which it takes: shared by the sample plane's programs
 * (bpf/sample.bpf.c: CPU ticks, off-CPU waits without the sched class)
 * and the sched class's switch, which writes a traced task's wait in its
 * own record (format 1.9) and calls here only for the stacks.
 *
 * Stacks come from bpf_get_stack() straight into the record, never from
 * a stack-id map: a stack map's buckets collide (a new stack replaces an
 * older one with the same hash) and its entries must be read and freed
 * by user space in time, so it loses stacks exactly when there are many.
 *
 * A record's length depends on its stacks, and bpf_ringbuf_reserve()
 * wants a constant size; so each record is built in this CPU's scratch
 * slot and copied out with bpf_ringbuf_output() at its exact length.
 * The slot is an array element rather than a per-CPU array value: a
 * per-CPU value holds at most 32 KiB, less than the largest dwarf record.
 * The tick runs in hard interrupt context and sched_switch with
 * interrupts off, so the two cannot interrupt each other; they still get
 * a slot each, so that nothing has to rely on it.
 *
 * --call-graph dwarf (cw_config.sample_stack_bytes > 0): instead of frame
 * pointers, the user registers and the top of the user stack, which the
 * analyzer unwinds offline with the CFI of each object, as perf does.
 * Pages of user stack that are not resident cannot be faulted in from
 * the tick or the switch, so the copy stops at the first page that fails:
 * usually the top of the stack.
 *
 * --sample-budget (cw_config.sample_quota, offcpu_quota > 0: the
 * default budget is the off-CPU one alone): samples offered are
 * counted per 100 ms window, over all CPUs and apart for each kind (CPU
 * ticks, off-CPU stacks), and each is kept with
 * probability keep / 2^32 = min(1, quota / n), n the larger of the counts
 * of the previous window and of this one so far; decided by one draw of
 * bpf_get_prandom_u32() < keep and written into the record. keep depends
 * on how many samples were offered, never on which were kept, so each
 * sample's inclusion probability is exactly its keep and the analyzer's
 * estimate (weight / keep) is unbiased whatever the estimate of the rate
 * was. The count of this window so far bounds the overshoot when the
 * rate jumps (a burst after an idle window keeps about quota x (1 + ln
 * (burst / quota)), not the whole burst); the previous window's keeps the
 * first samples of a window from being all kept. The share is not fixed
 * per CPU: one busy thread would then get budget / ncpus. Each kind has
 * its own count and its own quota: counted together, a server's flood of
 * blocking switches (tens of thousands a second) would take the CPU
 * ticks' keep down with its own, and the CPU profile would starve for
 * the off-CPU one. Edges never pass here.
 *
 * The scratch slots and the budget's counts are maps the capture shares
 * between the two objects (bpf/config.h cw_shared_maps), so a CPU's two
 * slots and each kind's count are one whoever writes them.
 *
 * Include after bpf/causeway.bpf.h.
 */
#ifndef CAUSEWAY_WAIT_BPF_H
#define CAUSEWAY_WAIT_BPF_H

#define PAGE_BYTES 4096
#define KSTACK_BYTES (CW_SAMPLE_MAX_FRAMES * 8)
#define USTACK_BYTES (CW_SAMPLE_MAX_FRAMES * 8)
#define REGS_BYTES (CW_SAMPLE_NREGS_X86_64 * 8)
#define STACK_PAGES (CW_SAMPLE_MAX_STACK / PAGE_BYTES + 1) /* the first may be partial */
/* The largest record, plus a page: the verifier bounds the stack copy's
 * offset and length separately, so their sum may pass the record by up
 * to one page. */
#define SCRATCH_BYTES \
	(sizeof(struct cw_sample_caused) + KSTACK_BYTES + USTACK_BYTES + REGS_BYTES + CW_SAMPLE_MAX_STACK + \
	 PAGE_BYTES)

struct scratch {
	__u8 b[SCRATCH_BYTES];
};

/* Two slots per possible CPU (tick, switch); sized by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/*
 * Samples offered in a window, all CPUs together; slot kind * 4 + win %
 * 4 (kind 0 CPU, 1 off-CPU), so the previous window's count stays
 * readable while the current one fills.
 * The first CPU into a window resets its slot without a lock: a race
 * loses a count or two of the estimate, never the exactness of keep.
 */
struct offered {
	__u64 win;
	__u64 n;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, struct offered);
} offered SEC(".maps");

/* User registers in DWARF order (schema/events.h). */
struct uregs {
	__u64 r[CW_SAMPLE_NREGS_X86_64];
};

/* The keep probability (x 2^32) of a sample of kind @offcpu offered at
 * @ts. */
static __always_inline __u64 budget_keep(__u64 ts, bool offcpu)
{
	__u64 w = ts / cw_config.sample_window_ns, n, keep;
	__u32 base = offcpu ? 4 : 0, cur = base + (w & 3), prev = base + ((w - 1) & 3);
	struct offered *o = bpf_map_lookup_elem(&offered, &cur);
	struct offered *p = bpf_map_lookup_elem(&offered, &prev);

	if (!o || !p)
		return CW_KEEP_ALL;
	if (o->win != w) {
		o->n = 0;
		o->win = w;
	}
	__sync_fetch_and_add(&o->n, 1);
	n = p->win == w - 1 ? p->n : 0;
	if (o->n > n)
		n = o->n;
	keep = (offcpu ? cw_config.offcpu_quota : cw_config.sample_quota) / n;
	if (keep > CW_KEEP_ALL)
		return CW_KEEP_ALL;
	/* Never 0: 1 / 2^32 is still exact. */
	return keep ? keep : 1;
}

#define CW_DWARF_REGS(d, s)              \
	do {                             \
		(d)[0] = (s)->ax;        \
		(d)[1] = (s)->dx;        \
		(d)[2] = (s)->cx;        \
		(d)[3] = (s)->bx;        \
		(d)[4] = (s)->si;        \
		(d)[5] = (s)->di;        \
		(d)[6] = (s)->bp;        \
		(d)[7] = (s)->sp;        \
		(d)[8] = (s)->r8;        \
		(d)[9] = (s)->r9;        \
		(d)[10] = (s)->r10;      \
		(d)[11] = (s)->r11;      \
		(d)[12] = (s)->r12;      \
		(d)[13] = (s)->r13;      \
		(d)[14] = (s)->r14;      \
		(d)[15] = (s)->r15;      \
		(d)[16] = (s)->ip;       \
	} while (0)

/*
 * The user registers of @task, saved where it entered the kernel. Read
 * as a copy: loaded field by field, the compiler would share the loads
 * with the tick's reads of its context, which the verifier refuses
 * through anything but the context pointer itself. @return 0, or -1 when
 * they cannot be read.
 */
static __always_inline int task_uregs(struct uregs *ur, struct task_struct *task)
{
	struct pt_regs r;

	if (bpf_probe_read_kernel(&r, sizeof(r), (void *)bpf_task_pt_regs(task)))
		return -1;
	CW_DWARF_REGS(ur->r, &r);
	return 0;
}

/*
 * Copy up to cw_config.sample_stack_bytes of user stack from @sp to @dst,
 * page by page; stop at the first page that cannot be read. @return the
 * bytes copied.
 */
static __always_inline __u32 copy_ustack(__u8 *dst, __u64 sp)
{
	/* 64-bit throughout: the verifier must see the clamp on the very
	 * register passed as the length. */
	__u64 want = cw_config.sample_stack_bytes, got = 0;

	for (int i = 0; i < STACK_PAGES; i++) {
		__u64 addr = sp + got;
		__u64 room = PAGE_BYTES - (addr & (PAGE_BYTES - 1));
		__u64 len = want - got;

		if (got >= want)
			break;
		if (len > room)
			len = room;
		if (len > PAGE_BYTES)
			break;
		if (got > CW_SAMPLE_MAX_STACK)
			break;
		if (bpf_probe_read_user(dst + got, len, (void *)addr))
			break;
		got += len;
	}
	return got;
}

/*
 * Build the sample of the current task in this CPU's slot and send it.
 * @user: the task has a user address space (not a kernel thread);
 * @ur: its user registers (dwarf mode), or NULL; @flags: hdr.flags, with
 * CW_SAMPLE_NOSTACK no stack is taken.
 */
static __always_inline void emit(void *ctx, __u16 type, __u8 hctx, __u64 ts, __u64 keep,
				 bool user, const struct uregs *ur, __u8 flags)
{
	__u32 key = bpf_get_smp_processor_id() * 2 + (type == CW_REC_SAMPLE_OFFCPU);
	__u8 *b = bpf_map_lookup_elem(&scratch, &key);
	struct cw_sample *s = (void *)b;
	__u32 off = sizeof(*s), nk = 0, nu = 0, len = 0, end;
	long n;

	if (!b)
		return;
	if (type == CW_REC_SAMPLE_CPU_CAUSED) {
		cw_cause_fill(&((struct cw_sample_caused *)b)->cause, hctx);
		off = sizeof(struct cw_sample_caused);
	}
	s->hdr.type = type;
	s->hdr.cpu = bpf_get_smp_processor_id();
	s->hdr.ctx = hctx;
	s->hdr.flags = flags;
	s->hdr.ts = ts;
	cw_current(&s->task, &s->task_start);
	s->period = type != CW_REC_SAMPLE_OFFCPU ? cw_config.sample_period_ns : 0;
	s->keep = keep;
	s->kerr = 0;
	s->uerr = 0;
	s->__pad = 0;

	if (flags & CW_SAMPLE_NOSTACK) {
		user = false;
		ur = NULL;
		n = 0;
	} else {
		n = bpf_get_stack(ctx, b + off, KSTACK_BYTES, 0);
	}
	if (n < 0)
		s->kerr = n;
	else
		nk = ((__u32)n / 8) & 0x7f;
	off += nk * 8;
	if (user && !ur) {
		n = bpf_get_stack(ctx, b + off, USTACK_BYTES, BPF_F_USER_STACK);
		if (n < 0)
			s->uerr = n;
		else
			nu = ((__u32)n / 8) & 0x7f;
		off += nu * 8;
	}
	s->nkernel = nk;
	s->nuser = nu;
	s->nregs = 0;
	if (ur) {
		__u64 *d = (__u64 *)(b + off);

		for (int i = 0; i < CW_SAMPLE_NREGS_X86_64; i++)
			d[i] = ur->r[i];
		off += REGS_BYTES;
		s->nregs = CW_SAMPLE_NREGS_X86_64;
		len = copy_ustack(b + off, ur->r[7]);
		if (len > CW_SAMPLE_MAX_STACK)
			len = CW_SAMPLE_MAX_STACK;
	}
	s->stack_len = len;
	/* Zero padding: the slot holds the previous record's bytes. */
	end = (len + 7) & ~7U;
	for (__u32 i = 0; i < 7; i++)
		if (len + i < end)
			b[off + len + i] = 0;
	off += end;
	if (off > SCRATCH_BYTES)
		return;
	s->hdr.size = off;
	if (bpf_ringbuf_output(&samples, b, off, cw_wakeup(&samples, 1, off, cw_config.sample_wakeup_bytes)))
		cw_count_lost(CW_RING_SAMPLE, CW_CLASS_SAMPLE);
}

/* The keep probability of a sample offered now; *@drop when the budget
 * decimates it (counted). */
static __always_inline __u64 keep_or_drop(__u64 ts, bool offcpu, bool *drop)
{
	__u64 keep;

	*drop = false;
	if (!(offcpu ? cw_config.offcpu_quota : cw_config.sample_quota))
		return CW_KEEP_ALL;
	keep = budget_keep(ts, offcpu);
	if ((__u64)bpf_get_prandom_u32() < keep)
		return keep;
	*drop = true;
	/* An off-CPU wait whose stacks were not taken is still a record
	 * (its switch's, or a stackless sample), which the capture counts
	 * as it drains them (capture/account.c); a tick is not written. */
	if (!offcpu)
		cw_count_slot(CW_COUNTER_DECIMATED);
	return keep;
}

/*
 * Take the stacks of @task, the current task, into a sample of @type at
 * @ts kept with probability @keep, with hdr.flags @flags: at a tick
 * (@tick, the perf_event context, also @ctx) or at its switch-out (@tick
 * NULL).
 */
static __always_inline void cw_sample_stacks(void *ctx, struct bpf_perf_event_data *tick,
					     struct task_struct *task, __u16 type, __u8 hctx,
					     __u64 ts, __u64 keep, __u8 flags)
{
	struct uregs ur;
	bool user = task->mm != NULL, dwarf = false;

#if defined(__TARGET_ARCH_x86)
	if (cw_config.sample_stack_bytes && user) {
		/* A tick in user mode has the user registers in hand;
		 * otherwise they are where the task entered the kernel.
		 * User mode is told by the address, in the lower half on
		 * x86_64: the context allows 8-byte loads only, and cs
		 * shares its 8 bytes with other fields since 6.9. */
		if (tick && (__s64)tick->regs.ip >= 0) {
			CW_DWARF_REGS(ur.r, &tick->regs);
			dwarf = true;
		} else {
			dwarf = !task_uregs(&ur, task);
		}
	}
#endif
	emit(ctx, type, hctx, ts, keep, user, dwarf ? &ur : NULL, flags);
}

/* A tick at level @hctx: in an interrupt that processes an object the
 * trace has (a followed one, bpf/follow.bpf.h), the object's work
 * (docs/model.md §2.4), with the cause; an object the trace lacks would
 * be named by nothing else. */
static __always_inline __u16 tick_type(__u8 hctx)
{
	if ((hctx == CW_CTX_SOFTIRQ || hctx == CW_CTX_HARDIRQ) && cw_cause_followed(hctx))
		return CW_REC_SAMPLE_CPU_CAUSED;
	return CW_REC_SAMPLE_CPU;
}

/*
 * Offer a sample of @task, the current task, at @ts: at a tick (@tick,
 * the perf_event context, also @ctx) or at its switch-out (@tick NULL),
 * as a record of its own. A wait whose stacks the budget does not take
 * is still written, without them: its duration and what ended it come
 * exact from the switches and the wake, whatever the budget
 * (docs/model.md §2.4); the stack walks are what cost (two
 * bpf_get_stack).
 */
static __always_inline void cw_offer(void *ctx, struct bpf_perf_event_data *tick,
				     struct task_struct *task, __u8 hctx, __u64 ts)
{
	bool drop;
	__u64 keep = keep_or_drop(ts, !tick, &drop);

	if (drop && tick)
		return;
	if (drop) {
		emit(ctx, CW_REC_SAMPLE_OFFCPU, hctx, ts, keep, false, NULL,
		     CW_SAMPLE_EVERY_WAIT | CW_SAMPLE_NOSTACK);
		return;
	}
	cw_sample_stacks(ctx, tick, task, tick ? tick_type(hctx) : CW_REC_SAMPLE_OFFCPU, hctx, ts,
			 keep, tick ? 0 : CW_SAMPLE_EVERY_WAIT);
}

#endif /* CAUSEWAY_WAIT_BPF_H */
