/* SPDX-License-Identifier: MIT */
/*
 * BPF-only helpers shared by the causeway programs: interrupt context from
 * the preempt count, the traced-set filter, and the edge ring with its
 * batched wakeups and per-CPU, per-class accounting.
 *
 * Every class object includes it, so every object defines the same maps;
 * user space creates them once and shares them (bpf/config.h).
 *
 * Include after vmlinux.h, bpf_helpers.h, bpf_core_read.h, bpf_tracing.h,
 * schema/events.h and bpf/config.h.
 */
#ifndef CAUSEWAY_BPF_H
#define CAUSEWAY_BPF_H

/* include/linux/preempt.h; stable since 2.6. */
#define CW_PREEMPT_BITS 8
#define CW_SOFTIRQ_SHIFT 8
#define CW_HARDIRQ_SHIFT 16
#define CW_NMI_SHIFT 20
#define CW_SOFTIRQ_MASK (0xffU << CW_SOFTIRQ_SHIFT)
#define CW_HARDIRQ_MASK (0xfU << CW_HARDIRQ_SHIFT)
#define CW_NMI_MASK (0xfU << CW_NMI_SHIFT)
#define CW_SOFTIRQ_OFFSET (1U << CW_SOFTIRQ_SHIFT)

/* Settings, written by user space between open and load (bpf/config.h). */
const volatile struct cw_bpf_config cw_config;

/*
 * Per-CPU counters, one slot per (ring, class): events written and reserve
 * failures. User space reads them every second and writes the deltas as
 * cw_account records, so loss is visible in the file where it happened.
 */
struct cw_counter {
	__u64 written;
	__u64 lost;
};


/* More slots after the (ring, class) ones: CW_COUNTER_DECIMATED and
 * the others of bpf/config.h. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CW_COUNTER_SLOTS);
	__type(key, __u32);
	__type(value, struct cw_counter);
} counters SEC(".maps");

/* Per CPU: the run of edge ring reservation failures not yet reported by
 * a cw_gap record (cw_reserve below), and the bytes written to each ring
 * since this CPU last woke the consumer (cw_submit): struct cw_ring_cpu
 * in bpf/config.h. Every record reads it, and the same line on the same
 * CPU stays warm where a shared one would bounce between CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cw_ring_cpu);
} ring_cpu SEC(".maps");

static __always_inline struct cw_ring_cpu *cw_ring_cpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&ring_cpu, &zero);
}

/* Edge plane: never sampled; a burst of samples can never push edges out
 * because samples get their own ring. Size set by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} edges SEC(".maps");

/* Context plane (bpf/sample.bpf.c): stack samples, on a ring of their own
 * so that a burst of samples can never take room from edges, and with
 * their own loss counters (CW_RING_SAMPLE), so that the analyzer breaks
 * the sample stream's coverage, never the edges'. Size set by user space
 * (one page when the sample plane is off). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} samples SEC(".maps");

/*
 * Traced set (filter_enabled): tgids of the -p processes or COMMAND and
 * every process they fork. Threads share the tgid, so only new processes
 * are inserted. Bounded: an insert that fails is counted on CW_RING_MAP.
 * User space stops a -p capture once it is empty.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct cw_traced);
} traced SEC(".maps");

/* ---- interrupt context ---------------------------------------------- */

/*
 * x86 keeps the preempt count in a per-CPU variable: `__preempt_count`
 * (before 6.2, and again from 6.15) or `pcpu_hot.preempt_count` (in
 * between). pc_addr holds each CPU's address of it, found one of two ways
 * (cw_config.ctx_method):
 *  - KSYM: bpf/context.bpf.c asks bpf_per_cpu_ptr() for every CPU's
 *    address before the capture starts. That needs the variable in
 *    kallsyms, which kernels without CONFIG_KALLSYMS_ALL do not have.
 *  - RUNQUEUE: every static per-CPU variable of one CPU sits at the same
 *    distance from that CPU's `runqueues`, and user space reads both
 *    offsets in the .data..percpu DATASEC of the kernel's BTF
 *    (cw_config.pc_delta). This CPU's runqueue is found once per CPU
 *    through the current task's cfs_rq, checked against rq->cpu, and the
 *    address cached here.
 * A CPU whose address is still 0 has an unknown context.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024); /* possible CPUs, set by user space */
	__type(key, __u32);
	__type(value, __u64);
} pc_addr SEC(".maps");

/* cfs_rq::rq exists with CONFIG_FAIR_GROUP_SCHED only. */
struct cfs_rq___grp {
	struct rq *rq;
} __attribute__((preserve_access_index));

static __always_inline __u64 cw_this_rq(void)
{
	struct task_struct *t;
	struct cfs_rq___grp *cfs;
	struct rq *rq;

	if (!bpf_core_field_exists(struct cfs_rq___grp, rq))
		return 0;
	/* set_task_rq() points se.cfs_rq at the task group's cfs_rq of the
	 * task's CPU, whatever its class; the running task is on this CPU. */
	t = bpf_get_current_task_btf();
	cfs = (void *)BPF_CORE_READ(t, se.cfs_rq);
	rq = BPF_CORE_READ(cfs, rq);
	if (!rq || BPF_CORE_READ(rq, cpu) != (int)bpf_get_smp_processor_id())
		return 0;
	return (__u64)rq;
}

/*
 * A kernel address as a read-only pointer the verifier lets a program
 * load through directly, faults handled as for bpf_probe_read_kernel()
 * (6.2+). Weak: a kernel without it resolves it to 0, and the branch
 * that calls it is pruned (as context.bpf.c's cw_ksym_exists()).
 */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/* Any kernel struct that starts with an int: the preempt count is read
 * as its first member. */
struct static_key___cw {
	atomic_t enabled;
} __attribute__((preserve_access_index));

/* @return 0 and *pc, or -1 when the count cannot be read. */
static __always_inline int cw_preempt_count(__u32 *pc)
{
#if defined(__TARGET_ARCH_arm64)
	struct task_struct *t = bpf_get_current_task_btf();

	if (cw_config.ctx_method != CW_CTXM_THREAD_INFO)
		return -1;
	*pc = BPF_CORE_READ(t, thread_info.preempt.count);
	return 0;
#else
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 *addr;

	if (cw_config.ctx_method != CW_CTXM_KSYM && cw_config.ctx_method != CW_CTXM_RUNQUEUE)
		return -1;
	addr = bpf_map_lookup_elem(&pc_addr, &cpu);
	if (!addr)
		return -1;
	if (!*addr && cw_config.ctx_method == CW_CTXM_RUNQUEUE) {
		__u64 rq = cw_this_rq();

		if (rq)
			*addr = rq + cw_config.pc_delta;
	}
	if (!*addr)
		return -1;
	/* A load, where bpf_probe_read_kernel() is a helper call: this
	 * runs in most programs, at most events. */
	if (&bpf_rdonly_cast) {
		const struct static_key___cw *k = bpf_rdonly_cast(
			(void *)*addr, bpf_core_type_id_kernel(struct static_key___cw));

		*pc = k->enabled.counter;
		return 0;
	}
	return bpf_probe_read_kernel(pc, sizeof(*pc), (void *)*addr) ? -1 : 0;
#endif
}

struct task_struct___rt {
	int softirq_disable_cnt;
} __attribute__((preserve_access_index));

extern bool CONFIG_PREEMPT_RT __kconfig __weak;

/*
 * Context of the running event. NMI entry also raises the hardirq count,
 * so NMI is tested first. Softirq means a softirq is being *served*
 * (SOFTIRQ_OFFSET), not merely that bottom halves are disabled: a task
 * that holds spin_lock_bh and wakes someone is still the waker.
 */
static __always_inline __u8 cw_context(void)
{
	__u32 pc = 0, sc;

	/* Without a readable count the current task may be an interrupted
	 * one: say so rather than guess task context and blame it. */
	if (cw_preempt_count(&pc))
		return CW_CTX_UNKNOWN;
	sc = pc & CW_SOFTIRQ_MASK;
	if (pc & CW_NMI_MASK)
		return CW_CTX_NMI;
	if (pc & CW_HARDIRQ_MASK)
		return CW_CTX_HARDIRQ;
	/* PREEMPT_RT serves softirqs in threads and counts them per task. */
	if (CONFIG_PREEMPT_RT && bpf_core_field_exists(struct task_struct___rt, softirq_disable_cnt)) {
		struct task_struct___rt *t = (void *)bpf_get_current_task_btf();

		sc = BPF_CORE_READ(t, softirq_disable_cnt) & CW_SOFTIRQ_MASK;
	}
	if (sc & CW_SOFTIRQ_OFFSET)
		return CW_CTX_SOFTIRQ;
	return CW_CTX_TASK;
}

/* ---- tasks ------------------------------------------------------------ */

/* Older kernels, for the CO-RE fallbacks. */
struct task_struct___old {
	long state;	  /* before 5.14: renamed __state */
	unsigned int cpu; /* before 5.16 on x86: moved into thread_info */
} __attribute__((preserve_access_index));

/* The task's state, on kernels before 5.18 where sched_switch does not
 * pass prev_state. */
static __always_inline __u64 cw_task_state(struct task_struct *p)
{
	if (bpf_core_field_exists(p->__state))
		return BPF_CORE_READ(p, __state);
	return BPF_CORE_READ((struct task_struct___old *)p, state);
}

/* ---- traced set ------------------------------------------------------ */

static __always_inline bool cw_is_self(__u32 tgid)
{
	return cw_config.self_tgid && tgid == cw_config.self_tgid;
}

/*
 * The traced set as a bitmap, a bit per tgid below the kernel's pid_max
 * (user space sizes it: 512 KiB at the largest pid_max), kept with the
 * traced map: set after a process joins it, cleared before it leaves.
 * Every program asks whether a task is traced, most often of tasks that
 * are not: one load of an inlined array lookup, where a lookup in the
 * hash map cost about 180 ns a call on a loaded 2-CPU machine. A tgid the
 * bitmap does not cover is looked up in the map. Mmapable, so that user
 * space sets the -p processes' bits with atomic operations while the
 * programs run.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* set by user space */
	__type(key, __u32);
	__type(value, __u64);
} traced_bits SEC(".maps");

static __always_inline __u64 *cw_traced_word(__u32 tgid)
{
	__u32 i = tgid / 64;

	return bpf_map_lookup_elem(&traced_bits, &i);
}

/* @tgid joins (@on) or leaves the traced set's bitmap. */
static __always_inline void cw_traced_mark(__u32 tgid, bool on)
{
	__u64 *w = cw_traced_word(tgid), bit = 1ull << (tgid % 64);

	if (!w)
		return;
	if (on)
		__sync_fetch_and_or(w, bit);
	else
		__sync_fetch_and_and(w, ~bit);
}

static __always_inline bool cw_tgid_traced(__u32 tgid)
{
	__u64 *w;

	if (cw_is_self(tgid))
		return false;
	if (!cw_config.filter_enabled)
		return true;
	w = cw_traced_word(tgid);
	if (w)
		return (*w >> (tgid % 64)) & 1;
	return bpf_map_lookup_elem(&traced, &tgid) != NULL;
}

/*
 * With filter_enabled, the local ports (a bit per port, TCP and UDP, IPv4
 * and IPv6 alike) of the traced set's sockets: those it had at start
 * (user space reads them from /proc, capture/ports.c) and those the net
 * class learns as the capture goes (bpf/net.bpf.c). Mmapable, so that
 * user space sets bits while the programs run.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 65536 / 64);
	__type(key, __u32);
	__type(value, __u64);
} ports SEC(".maps");

/* ---- ring and accounting --------------------------------------------- */

/*
 * One more event of @class lost on @ring (a reservation refused, an
 * insert a map refused). What was written is not counted here: user space
 * counts the records it drains (capture/account.c), which costs the
 * programs nothing on the path that writes.
 */
static __always_inline void cw_count_lost(__u32 ring, __u32 class)
{
	__u32 key = ring * CW_CLASS_MAX + class;
	struct cw_counter *c = bpf_map_lookup_elem(&counters, &key);

	/* per CPU: no atomics needed */
	if (c)
		c->lost++;
}

/* One more of what counter slot @key counts. */
static __always_inline void cw_count_slot(__u32 key)
{
	struct cw_counter *c = bpf_map_lookup_elem(&counters, &key);

	if (c)
		c->written++;
}

/*
 * Where edge events were lost: a failed reservation extends this CPU's
 * run of failures; the first reservation that succeeds after it reports
 * the run in a cw_gap record, so that the analyzer's coverage break spans
 * the loss, not the second of accounting around it.
 */
static __always_inline void cw_gap_note(void)
{
	struct cw_ring_cpu *g = cw_ring_cpu();
	__u64 now = bpf_ktime_get_ns();

	if (!g)
		return;
	if (!g->lost)
		g->first = now;
	g->last = now;
	g->lost++;
}

static __always_inline void cw_gap_report(struct cw_ring_cpu *g)
{
	struct cw_gap *r;

	if (!g || !g->lost)
		return;
	r = bpf_ringbuf_reserve(&edges, sizeof(*r), 0);
	if (!r)
		return; /* still no room: the run goes on */
	r->hdr.type = CW_REC_GAP;
	r->hdr.size = sizeof(*r);
	r->hdr.cpu = bpf_get_smp_processor_id();
	r->hdr.ctx = CW_CTX_TASK;
	r->hdr.flags = 0;
	r->hdr.ts = g->last;
	r->first_ns = g->first;
	r->lost = g->lost;
	g->lost = 0;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/* Reserve an edge record and fill its header; NULL (counted) when full. */
static __always_inline void *cw_reserve(__u32 size, __u16 type, __u8 ctx)
{
	struct cw_hdr *h = bpf_ringbuf_reserve(&edges, size, 0);

	if (!h) {
		cw_count_lost(CW_RING_EDGE, CW_CLASS_OF(type));
		cw_gap_note();
		return NULL;
	}
	cw_gap_report(cw_ring_cpu());
	h->type = type;
	h->size = size;
	h->cpu = bpf_get_smp_processor_id();
	h->ctx = ctx;
	h->flags = 0;
	h->ts = bpf_ktime_get_ns();
	return h;
}

/*
 * Copy a kernel string into a record field, NUL-padded to the field's
 * size. Ring memory is not cleared between uses, so without the padding
 * the bytes after the NUL would be whatever record was there before:
 * stale data in the file, different from run to run, and worse to
 * compress. @dst must be an array, so that sizeof gives its size.
 */
#define CW_READ_STR(dst, src)                                        \
	do {                                                         \
		__builtin_memset(dst, 0, sizeof(dst));               \
		bpf_probe_read_kernel_str(dst, sizeof(dst), src);    \
	} while (0)

/*
 * Whether a record of @size bytes written now to ring @ring (0 edges, 1
 * samples) wakes the consumer. One wakeup per record would cost more than
 * the record, and asking the ring how much is unread (bpf_ringbuf_query)
 * cost 50 to 150 ns a record here; so each CPU counts what it wrote since
 * it last looked (the line stays warm on its CPU), and looks only once it
 * has written @every bytes (capture/tracer.c: an eighth of the ring over
 * the CPUs). Then it wakes the consumer, and while the ring is still an
 * eighth full the consumer is behind: the CPU looks and wakes it again at
 * every record, which also slows the writer down until the consumer
 * catches up, rather than losing edges; the ring's own query-based
 * wakeup did so at every record. The consumer polls every 10 ms for the
 * rest (capture/loop.c).
 */
static __always_inline __u64 cw_wakeup(void *ringmap, __u32 ring, __u32 size, __u64 every)
{
	struct cw_ring_cpu *c = cw_ring_cpu();
	__u64 *unwoken;

	if (!c || !every)
		return BPF_RB_NO_WAKEUP;
	unwoken = &c->unwoken[ring & 1];
	*unwoken += size;
	if (*unwoken < every)
		return BPF_RB_NO_WAKEUP;
	*unwoken = bpf_ringbuf_query(ringmap, BPF_RB_AVAIL_DATA) >= every * cw_config.ncpus ? every : 0;
	return BPF_RB_FORCE_WAKEUP;
}

static __always_inline void cw_submit(void *rec)
{
	bpf_ringbuf_submit(rec, cw_wakeup(&edges, 0, ((struct cw_hdr *)rec)->size, cw_config.wakeup_bytes));
}

/* ---- cause slots (format 1.2) ----------------------------------------- */

/*
 * What this CPU is processing, one slot per context level (task, softirq,
 * hardirq, NMI): the expiring timer, the work item being executed, the
 * packet being received, the io_uring request being completed, the futex
 * being woken. A class sets its slot where the processing begins and
 * clears it where it ends (an exit tracepoint, or the end of the
 * interrupt); an event raised meanwhile at that level names the slot's
 * object as its cause (struct cw_cause). Interrupt levels do not nest
 * within themselves, so one slot per level is exact. The task level can
 * be preempted: its slot also holds the thread that set it, and only that
 * thread's events read it, so a preempted owner makes a missing cause,
 * never a wrong one. At an interrupt level a class may set tid to the one
 * thread the processing can wake (an io_uring request's task work goes
 * to its task): sched_waking then names the cause only for that thread's
 * wakeup, and only once (bpf/sched.bpf.c).
 */
struct cw_slot {
	__u64 key;
	__u64 aux;
	__u32 tid;     /* task level: the thread that set it; interrupt
			* levels: 0, or the only thread it may wake */
	__u8 kind;     /* CW_CAUSE_*; NONE: empty */
	__u8 emitted;  /* class-private: the object's record was written */
	__u8 __pad[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CW_CTX_NMI + 1);
	__type(key, __u32);
	__type(value, struct cw_slot);
} slots SEC(".maps");

/* The slot of context level @ctx on this CPU; NULL for an unknown one. */
static __always_inline struct cw_slot *cw_slot_of(__u8 ctx)
{
	__u32 key = ctx;

	if (ctx > CW_CTX_NMI)
		return NULL;
	return bpf_map_lookup_elem(&slots, &key);
}

static __always_inline void cw_slot_set(__u8 ctx, __u8 kind, __u64 key, __u64 aux)
{
	struct cw_slot *s = cw_slot_of(ctx);

	if (!s)
		return;
	s->key = key;
	s->aux = aux;
	s->tid = ctx == CW_CTX_TASK ? (__u32)bpf_get_current_pid_tgid() : 0;
	s->kind = kind;
	s->emitted = 0;
}

/* Where processing ends: whatever the slot held, it is over. */
static __always_inline void cw_slot_clear(__u8 ctx)
{
	struct cw_slot *s = cw_slot_of(ctx);

	if (s)
		s->kind = CW_CAUSE_NONE;
}

/* The slot an event raised now at level @ctx may name as its cause, or
 * NULL when there is none. */
static __always_inline struct cw_slot *cw_slot_get(__u8 ctx)
{
	struct cw_slot *s = cw_slot_of(ctx);

	if (!s || s->kind == CW_CAUSE_NONE)
		return NULL;
	if (ctx == CW_CTX_TASK && s->tid != (__u32)bpf_get_current_pid_tgid())
		return NULL;
	return s;
}

/* Copy the cause for a record; kind NONE when there is none. */
static __always_inline void cw_cause_fill(struct cw_cause *c, __u8 ctx)
{
	struct cw_slot *s = cw_slot_get(ctx);

	c->key = s ? s->key : 0;
	c->aux = s ? s->aux : 0;
	c->kind = s ? s->kind : CW_CAUSE_NONE;
	__builtin_memset(c->__pad, 0, sizeof(c->__pad));
}

/* ---- remembered objects (filtered mode) -------------------------------- */

/*
 * Objects created by traced tasks (timers they arm, work they queue,
 * packets they send, requests they submit), so that their expiry,
 * execution, receipt or completion in another context (a kworker, an
 * io-wq worker, an interrupt) is recorded too (docs/model.md §2.2). Bounded: an
 * insert that fails is counted as lost on CW_RING_MAP for the class, so
 * the analyzer makes a coverage break of it.
 */
struct cw_obj_key {
	__u64 ptr;
	__u32 kind; /* CW_CAUSE_* */
	__u32 __pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct cw_obj_key);
	__type(value, __u32); /* the tgid that created it */
} objs SEC(".maps");

/*
 * How many objects of each kind the map holds (the kinds past
 * CW_CAUSE_MAX share the last count): raised for an insert that makes an
 * entry, lowered for a delete that removes one. Most lookups are
 * of objects nobody remembered (every work item every kworker runs, under
 * -p): with none of that kind remembered they cost one load, not a
 * lookup in the hash map.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CW_CAUSE_MAX + 1);
	__type(key, __u32);
	__type(value, __s64);
} objs_count SEC(".maps");

static __always_inline __s64 *cw_obj_count(__u32 kind)
{
	__u32 i = kind < CW_CAUSE_MAX ? kind : CW_CAUSE_MAX;

	return bpf_map_lookup_elem(&objs_count, &i);
}

/* The count goes up before the insert and down after the delete, so it
 * is never below what the map holds, whatever runs on the other CPUs. An
 * object remembered already (EEXIST, 17 in the errno ABI) is left as it
 * is. That happens when the kernel has cleared a work item's pending bit
 * and another CPU queues it again before the execution's forget has run:
 * the forget then takes the key, and that second generation's execution
 * goes unrecorded, as it did when this was an update in place. It is not
 * counted as a map loss: a loss is a coverage break of its accounting
 * window, a second or so of every class's joins, for a race of
 * microseconds (see the issue 18 closing note). */
static __always_inline void cw_obj_remember(__u32 kind, __u64 ptr, __u32 tgid, __u32 class)
{
	struct cw_obj_key k = { .ptr = ptr, .kind = kind };
	__s64 *n = cw_obj_count(kind);
	long err;

	if (n)
		__sync_fetch_and_add(n, 1);
	err = bpf_map_update_elem(&objs, &k, &tgid, BPF_NOEXIST);
	if (!err)
		return;
	if (n)
		__sync_fetch_and_add(n, -1);
	if (err != -17)
		cw_count_lost(CW_RING_MAP, class);
}

static __always_inline bool cw_obj_known(__u32 kind, __u64 ptr)
{
	struct cw_obj_key k = { .ptr = ptr, .kind = kind };
	__s64 *n = cw_obj_count(kind);

	if (n && *n <= 0)
		return false;
	return bpf_map_lookup_elem(&objs, &k) != NULL;
}

static __always_inline void cw_obj_forget(__u32 kind, __u64 ptr)
{
	struct cw_obj_key k = { .ptr = ptr, .kind = kind };
	__s64 *n = cw_obj_count(kind);

	if (n && *n <= 0)
		return;
	if (!bpf_map_delete_elem(&objs, &k) && n)
		__sync_fetch_and_add(n, -1);
}

/* The current task for a record: tid, pid and witness. In interrupt
 * context it is the interrupted task (context, never a cause); the
 * capture's own is never named. */
static __always_inline void cw_current(struct cw_task *t, __u64 *start)
{
	__u64 id = bpf_get_current_pid_tgid();

	t->tid = (__u32)id;
	t->pid = id >> 32;
	if (cw_is_self(t->pid))
		t->tid = t->pid = 0;
	*start = t->tid ? bpf_get_current_task_btf()->start_time : 0;
}

#endif /* CAUSEWAY_BPF_H */
