/* SPDX-License-Identifier: MIT */
/*
 * causeway record layouts: the one interface between the BPF programs, the
 * capture tool, the fixture compiler and the analyzer.
 *
 * Every record starts with struct cw_hdr. A record is stored in a segment
 * payload exactly as laid out here, little-endian (see schema/format.md);
 * only fixed-width fields, explicit padding, and every size pinned below.
 * Changing any size or offset here breaks compatibility with existing
 * traces: bump CW_FORMAT_MAJOR in trace/format.h when you do.
 *
 * Record types are grouped into classes of 16: class = type >> 4. A reader
 * that meets a type it does not know skips it by cw_hdr.size and counts it,
 * so new classes (io_uring, workqueue, timer, futex, samples, adapter) can
 * be added without a format break.
 */
#ifndef CAUSEWAY_EVENTS_H
#define CAUSEWAY_EVENTS_H

#ifdef __bpf__
/* BPF side: vmlinux.h already provides __u8.. __u64. */
#else
#include <linux/types.h>
#endif

#define CW_COMM_LEN 16
#define CW_EXEC_PATH_LEN 128

/* Classes: the unit of filtering (-e) and of loss accounting; the list,
 * their names and numbers, is schema/classes.def. */
enum {
#define CW_CLASS(id, n, name, ename, kind, aclass, join) CW_CLASS_##id = n,
#include "classes.def"
};

/* One more than the largest class number: a union as large as that. */
union cw_class_span_ {
#define CW_CLASS(id, n, name, ename, kind, aclass, join) char c_##id[n + 1];
#include "classes.def"
};
enum { CW_CLASS_MAX = sizeof(union cw_class_span_) };

#define CW_CLASS_OF(type) ((type) >> 4)

/* Record types, CW_REC_*: the list, with each one's number, name and
 * layout, is schema/records.def. Values are part of the file format. */
enum {
#define CW_REC(id, type, name, st, writer) CW_REC_##id = type,
#include "records.def"
};

/*
 * Context the event was raised in (cw_hdr.ctx). Derived in BPF from the
 * preempt count. An interrupt-context wakeup is never attributed to the
 * task it interrupted (docs/model.md §5.6), so this must be exact.
 */
enum {
	CW_CTX_TASK = 0,
	CW_CTX_SOFTIRQ = 1,
	CW_CTX_HARDIRQ = 2,
	CW_CTX_NMI = 3,
	/* The capture could not read the preempt count: the current task
	 * may be an interrupted one, so it is never the cause (format 1.1). */
	CW_CTX_UNKNOWN = 4,
	CW_CTX_MAX = 5,
};

/*
 * Common header of every record: 16 bytes.
 * size:  the whole record in bytes, header included, a multiple of 8 for
 *        records written by BPF; a reader never trusts it beyond its
 *        buffer.
 * cpu:   CPU the event was raised on (0xffff: not applicable).
 * ctx:   CW_CTX_*.
 * flags: per record type (CW_SWITCH_PREEMPT, CW_SAMPLE_*); 0 elsewhere.
 * ts:    ns on the BPF ktime clock (CLOCK_MONOTONIC), the capture clock.
 */
struct cw_hdr {
	__u16 type;
	__u16 size;
	__u16 cpu;
	__u8 ctx;
	__u8 flags;
	__u64 ts;
};

/* A task as a record names it: thread id and thread-group id (pid). */
struct cw_task {
	__u32 tid;
	__u32 pid;
};

/*
 * Witnesses (format 1.1, appended to the 1.0 records): the task's
 * task_struct::start_time, ns on the capture clock, the value perf and
 * /proc use to tell a reused pid apart. A tid names one task only while
 * it lives; the witness names it for good, so a join whose witness
 * matches is exact even across lost events. 0: not recorded (a 1.0
 * record, or the idle task). A reader reads a witness only when the
 * record is long enough to hold it.
 */

/* hdr.flags of a switch: prev was preempted (still runnable), as opposed
 * to blocking. Since 5.18 prev_state is the raw state even then, so only
 * this flag tells the two apart (format 1.1). */
#define CW_SWITCH_PREEMPT 0x1
/* prev blocks and the context plane takes its wait from this record
 * (format 1.9): the wait is an off-CPU sample of the traced prev, certain,
 * whose stacks the budget took with probability keep / 2^32; when it took
 * them, a CW_REC_SAMPLE_OFFCPU with CW_SAMPLE_AT_SWITCH and this hdr.ts
 * carries them. One record per blocking switch, where 1.8 wrote a switch
 * and a sample. */
#define CW_SWITCH_WAIT 0x2
/* With CW_SWITCH_WAIT: the budget took the wait's stacks, so a sample
 * record follows unless the sample ring lost it (format 1.9). */
#define CW_SWITCH_STACKS 0x4

/* sched_switch. prev_state is the kernel's task state of prev at
 * switch-out (TASK_DEAD 0x80 on the final one). keep (1.9): with
 * CW_SWITCH_WAIT, the keep probability of the wait's stacks x 2^32;
 * else 0. */
struct cw_switch {
	struct cw_hdr hdr;
	struct cw_task prev;
	struct cw_task next;
	__u64 prev_state;
	__s32 prev_prio;
	__s32 next_prio;
	__u64 prev_start; /* witnesses */
	__u64 next_start;
	__u64 keep;
};

/* sched_waking / sched_wakeup / sched_wakeup_new. waker is the current
 * task when the event fired; it is the cause only when hdr.ctx is
 * CW_CTX_TASK. */
struct cw_wake {
	struct cw_hdr hdr;
	struct cw_task waker;
	struct cw_task wakee;
	__s32 target_cpu;
	__s32 wakee_prio;
	__u64 waker_start; /* witnesses */
	__u64 wakee_start;
};

#define CW_FORK_THREAD 0x1 /* CLONE_THREAD: a thread, not a new process */

/* sched_process_fork: runs in the parent's context. */
struct cw_fork {
	struct cw_hdr hdr;
	struct cw_task parent;
	struct cw_task child;
	__u32 fork_flags; /* CW_FORK_* */
	__u32 __pad;
	__u64 clone_flags; /* the kernel's clone flags, 0 where unknown */
	char child_comm[CW_COMM_LEN];
	__u64 parent_start; /* witnesses */
	__u64 child_start;
};

/* sched_process_exec: tid is the thread that called exec (after exec it
 * is the group leader: tid == pid); old_tid the tid it had before. */
struct cw_exec {
	struct cw_hdr hdr;
	struct cw_task task;
	__u32 old_tid;
	__u32 __pad;
	char comm[CW_COMM_LEN];
	char filename[CW_EXEC_PATH_LEN];
	__u64 task_start; /* witness; after a non-leader exec, the old leader's */
};

#define CW_EXIT_GROUP_DEAD 0x1 /* the last thread of the process exits */

/* sched_process_exit. */
struct cw_exit {
	struct cw_hdr hdr;
	struct cw_task task;
	__u32 exit_flags; /* CW_EXIT_* */
	__s32 exit_code;
	__u64 task_start; /* witness */
};

/* task_rename (prctl PR_SET_NAME, comm writes). */
struct cw_rename {
	struct cw_hdr hdr;
	struct cw_task task;
	char oldcomm[CW_COMM_LEN];
	char newcomm[CW_COMM_LEN];
	__u64 task_start; /* witness */
};

/*
 * ---- format 1.2: the async classes ----------------------------------
 *
 * Every record below names the task current when its event fired, with
 * its witness (task_start). In interrupt context (hdr.ctx) that task was
 * merely interrupted: it is context, never a cause.
 */

/*
 * What a CPU, or in task context a thread, was processing when an event
 * fired (bpf/causeway.bpf.h, the per-CPU cause slots): the expiring timer,
 * the work item being executed, the packet being received, the io_uring
 * request being completed, the futex being woken. An event raised inside
 * such a window names it here; kind CW_CAUSE_NONE when there was none.
 */
enum {
	CW_CAUSE_NONE = 0,
	CW_CAUSE_HRTIMER = 1, /* key: struct hrtimer *; aux: its function */
	CW_CAUSE_TIMER = 2,   /* key: struct timer_list *; aux: its function */
	CW_CAUSE_WORK = 3,    /* key: struct work_struct *; aux: its function */
	CW_CAUSE_PACKET = 4,  /* key: struct sk_buff * */
	CW_CAUSE_IO_REQ = 5,  /* key: struct io_kiocb *; aux: its ring (io_ring_ctx *) */
	CW_CAUSE_FUTEX = 6,   /* key: uaddr; aux: the futex op */
	CW_CAUSE_BLOCK = 7,   /* key: struct request *; aux: its completion's ts (format 1.10) */
	CW_CAUSE_MAX = 8,
};

struct cw_cause {
	__u64 key;
	__u64 aux;
	__u8 kind; /* CW_CAUSE_* */
	__u8 __pad[7];
};

/* sched_waking with its cause: a cw_wake, then the cause. */
struct cw_wake_caused {
	struct cw_wake w;
	struct cw_cause cause;
};

/* io_uring_create. ring: the io_ring_ctx pointer, the scope of its
 * requests together with the ring's generation. */
struct cw_uring_create {
	struct cw_hdr hdr;
	struct cw_task task;
	__u64 task_start;
	__u64 ring;
	__u32 sq_entries;
	__u32 cq_entries;
	__u32 setup_flags;
	__s32 fd;
};

/* A request event: submit, punt, poll arm, task-work add, fail link,
 * io-wq start. req: the io_kiocb pointer; req_flags: the kernel's
 * REQ_F_* flags; aux, aux2: per type (see the record types). */
struct cw_uring_req {
	struct cw_hdr hdr;
	struct cw_task task;
	__u64 task_start;
	__u64 ring;
	__u64 req;
	__u64 user_data;
	__u64 req_flags;
	__u32 aux;
	__u32 aux2;
	__u8 opcode;
	__u8 sq_thread;
	__u8 __pad[6];
};

/* io_uring_link: req is linked after target (the previous request of
 * its chain). */
struct cw_uring_link {
	struct cw_hdr hdr;
	struct cw_task task;
	__u64 task_start;
	__u64 ring;
	__u64 req;
	__u64 user_data;
	__u64 target;
	__u64 target_user_data;
};

#define CW_CQE_F_MORE 0x2 /* IORING_CQE_F_MORE: a multishot request goes on */

/* io_uring_complete: a CQE posted. req is 0 for an auxiliary CQE, which
 * names its request by user_data only. */
struct cw_uring_complete {
	struct cw_hdr hdr;
	struct cw_task task;
	__u64 task_start;
	__u64 ring;
	__u64 req;
	__u64 user_data;
	__s32 res;
	__u32 cflags;
	__u64 extra1;
	__u64 extra2;
};

/* io_uring_cqe_overflow: a CQE that did not fit the CQ ring. */
struct cw_uring_overflow {
	struct cw_hdr hdr;
	struct cw_task task;
	__u64 task_start;
	__u64 ring;
	__u64 user_data;
	__s32 res;
	__u32 cflags;
	__u64 ocqe; /* 0: the CQE was dropped */
};

/* The ring is being destroyed: its requests' scope ends. */
struct cw_uring_free {
	struct cw_hdr hdr;
	struct cw_task task;
	__u64 task_start;
	__u64 ring;
};

#define CW_WQ_NAME_LEN 32

/* workqueue_queue_work. cause: the object being processed when it was
 * queued (a timer for delayed work). */
struct cw_wq_queue {
	struct cw_hdr hdr;
	struct cw_task task;
	__u64 task_start;
	__u64 work;
	__u64 function;
	char workqueue[CW_WQ_NAME_LEN];
	__s32 req_cpu;
	__s32 cpu;
	struct cw_cause cause;
};

/* workqueue_activate_work, workqueue_execute_start / _end. */
struct cw_wq_work {
	struct cw_hdr hdr;
	struct cw_task task;
	__u64 task_start;
	__u64 work;
	__u64 function;
};

#define CW_TIMER_HR 1	/* an hrtimer */
#define CW_TIMER_LIST 2 /* a timer_list timer */

/* hrtimer_start / timer_start. expires, softexpires: ns for an hrtimer
 * (its clock), jiffies for a timer_list (softexpires: bucket expiry).
 * mode: the hrtimer mode, or the timer_list flags. */
struct cw_timer_start {
	struct cw_hdr hdr;
	struct cw_task task;
	__u64 task_start;
	__u64 timer;
	__u64 function;
	__s64 expires;
	__s64 softexpires;
	__u32 mode;
	__u8 kind; /* CW_TIMER_* */
	__u8 was_armed;
	__u8 __pad[2];
	struct cw_cause cause;
};

/* Expire entry (the expiry window opens on hdr.cpu), expire exit, cancel.
 * now: the hrtimer's clock at expiry, jiffies for a timer_list; 0 for a
 * cancel. */
struct cw_timer_event {
	struct cw_hdr hdr;
	struct cw_task task;
	__u64 task_start;
	__u64 timer;
	__u64 function;
	__s64 now;
	__u8 kind; /* CW_TIMER_* */
	__u8 __pad[7];
};

/* What a timer's start says, held by BPF from the start to the expiry
 * (the value of bpf/timer.bpf.c's map). ts, cpu, ctx: the start's time,
 * CPU and context level; task, task_start: the task current then, with
 * its witness; cause: the cause slot then; the rest as cw_timer_start. */
struct cw_timer_arm {
	__u64 ts;
	struct cw_task task;
	__u64 task_start;
	__s64 expires;
	__s64 softexpires;
	__u32 mode;
	__u16 cpu;
	__u8 ctx;
	__u8 was_armed;
	struct cw_cause cause;
};

/*
 * A timer's expire entry with the start it fires (format 1.7): instead of
 * a record per start, BPF holds each start until its timer fires, so that
 * a timer cancelled or re-armed before it fires costs the ring nothing.
 * A fire whose start BPF does not hold (armed before the capture, an
 * insert the map refused) is a plain CW_REC_TIMER_EXPIRE.
 */
struct cw_timer_fire {
	struct cw_timer_event ev;
	struct cw_timer_arm arm;
};

/* Which syscall a futex record is. */
#define CW_FUTEX_CALL_FUTEX 0	/* futex(2): op is its op */
#define CW_FUTEX_CALL_WAIT 1	/* futex_wait(2) */
#define CW_FUTEX_CALL_WAKE 2	/* futex_wake(2) */
#define CW_FUTEX_CALL_WAITV 3	/* futex_waitv(2): uaddr is the waiters array */
#define CW_FUTEX_CALL_REQUEUE 4 /* futex_requeue(2) */

/* One futex call, written when it returns: [enter_ns, hdr.ts] is the
 * call. ret: the syscall's return (woken count for a wake). */
struct cw_futex {
	struct cw_hdr hdr;
	struct cw_task task;
	__u64 task_start;
	__u64 uaddr;
	__u64 uaddr2;
	__u64 enter_ns;
	__s64 ret;
	__u32 op;
	__u32 val;
	__u32 val3;
	__u8 call; /* CW_FUTEX_CALL_* */
	__u8 __pad[3];
};

/* A packet at transmit (net_dev_start_xmit: a birth) or receive
 * (netif_receive_skb). Addresses in network order; family 0 when the
 * packet is neither IPv4 nor IPv6 (then addresses and ports are 0). */
struct cw_net_pkt {
	struct cw_hdr hdr;
	struct cw_task task;
	__u64 task_start;
	__u64 skb;
	__u32 len;
	__u32 ifindex;
	__u16 protocol; /* ethertype, host order */
	__u8 l4proto;	/* IPPROTO_* */
	__u8 family;	/* 4, 6 or 0 */
	__u16 sport;	/* host order */
	__u16 dport;
	__u8 saddr[16]; /* IPv4: the first 4 bytes */
	__u8 daddr[16];
};

/* hdr.flags of a CW_REC_NET_RX: the skb is the one a CW_REC_NET_XMIT of
 * this trace sent, not freed since (the same skb and the same data
 * buffer), so the receipt continues that packet's generation. Without it
 * the packet is born at its receipt: it came from outside the host, or
 * its transmit was not recorded. */
#define CW_NET_RX_SENT 0x1

/*
 * Format 1.6: a packet correlated at the source (docs/model.md §2.3), one
 * record per packet that woke a context the capture records, written at
 * that wake and placed at the packet's birth:
 *  - hdr.flags CW_NET_RECV_SENT: the transmit was remembered; hdr (ts,
 *    cpu, ctx) and p.task / p.task_start are the transmit's, the sender
 *    and its witness as a CW_REC_NET_XMIT would give them;
 *  - without it the packet is born at its receipt (from outside the
 *    host, or its transmit was not remembered): hdr is the receipt's and
 *    p.task is 0.
 * The addresses, len and ifindex are the receipt's; rx_ts and rx_cpu say
 * when and where the receipt was. Since 1.9 rx_ts of a packet whose
 * transmit was remembered is read at the wakeup that writes the record,
 * in the same softirq, a few microseconds after the receipt, which then
 * reads no clock (most packets wake nothing recorded).
 */
struct cw_net_recv {
	struct cw_net_pkt p;
	__u64 rx_ts;
	__u32 rx_cpu;
	__u32 __pad;
};

#define CW_NET_RECV_SENT 0x1
/* A remembered transmit younger than this that a later one pushes out
 * is counted as lost (a map loss of the net class): its receipt, if it
 * comes, is then an orphan that a coverage break explains. */
#define CW_NET_SENT_YOUNG_NS 100000000ull

/*
 * ---- format 1.10: the block class -----------------------------------
 *
 * A block request (struct request *) is a new generation each time it is
 * issued to the driver. What made it is the context that inserted it into
 * the queue (the submitter: a thread, or the work item a kworker ran),
 * which is often not the context that issued it (with an I/O scheduler,
 * whoever runs the hardware queue dispatches every waiting request): BPF
 * holds each insert until the issue and writes it with the issue
 * (bpf/block.bpf.c). ts, cpu, ctx: the insert's; task, task_start: the
 * task current then, with its witness; cause: its cause slot then. A
 * request issued without an insert (direct issue, no scheduler) has the
 * issue's own context here, with the issue's ts.
 */
struct cw_block_origin {
	__u64 ts;
	struct cw_task task;
	__u64 task_start;
	__u16 cpu;
	__u8 ctx;
	__u8 __pad[5];
	struct cw_cause cause;
};

/* Request operations, normalized from the kernel's REQ_OP_* (which are
 * ABI-stable) and the REQ_* flags (which are not: bpf/block.bpf.c reads
 * their bits by name). */
#define CW_BLK_OP_READ 0
#define CW_BLK_OP_WRITE 1
#define CW_BLK_OP_FLUSH 2
#define CW_BLK_OP_DISCARD 3
#define CW_BLK_OP_OTHER 0xff /* anything else: op_raw says */
#define CW_BLK_FUA 0x1
#define CW_BLK_PREFLUSH 0x2
#define CW_BLK_SYNC 0x4
#define CW_BLK_META 0x8

/* block_rq_issue: request rq goes to the driver. task: the issuing task
 * (interrupted one in interrupt context); dev: the disk's dev_t as the
 * kernel packs it (major << 20 | minor); sector, nr_bytes: the request's
 * at issue; op: CW_BLK_OP_*; op_raw: the kernel's REQ_OP_*; flags:
 * CW_BLK_*; nbios: how many bios it holds (up to 255); origin: its
 * submitter (above). */
struct cw_block_issue {
	struct cw_hdr hdr;
	struct cw_task task;
	__u64 task_start;
	__u64 rq;
	__u64 sector;
	__u32 nr_bytes;
	__u32 dev;
	__u8 op;
	__u8 op_raw;
	__u8 flags;
	__u8 nbios;
	__u32 __pad;
	struct cw_block_origin origin;
};

/* A bio that another context merged into request rq before its issue
 * (block_bio_backmerge / frontmerge, or a whole request merged into it,
 * block_rq_merge): written at the issue, after its cw_block_issue, one
 * per such bio found on the request. origin: the merging context, as a
 * cw_block_issue's. */
struct cw_block_merge {
	struct cw_hdr hdr;
	struct cw_task task;
	__u64 task_start;
	__u64 rq;
	__u64 bio;
	struct cw_block_origin origin;
};

/* block_rq_complete: nr_bytes of rq are done; error: the blk_status_t.
 * hdr.flags CW_BLK_FINAL: the request is whole (the bytes cover what was
 * left). A request the kernel completes without having issued it (the
 * data-less part of a flush sequence, ended by the flush request's
 * completion) is not written: its completion runs inside the flush
 * request's, which stays the cause of what it wakes. */
struct cw_block_complete {
	struct cw_hdr hdr;
	struct cw_task task;
	__u64 task_start;
	__u64 rq;
	__u32 nr_bytes;
	__s32 error;
};

#define CW_BLK_FINAL 0x1

/*
 * ---- format 1.3: the context plane ------------------------------------
 *
 * A stack sample, written by BPF to the sample ring (never the edge
 * ring). CW_REC_SAMPLE_CPU: the perf cpu-clock tick interrupted task
 * (hdr.ts is the tick). CW_REC_SAMPLE_OFFCPU: task is switched out
 * blocking, not preempted (hdr.ts is that switch); the analyzer weights it
 * by the time until the task runs again.
 *
 * The record is followed, in this order, by:
 *   kernel[nkernel]  u64 kernel return addresses, leaf first
 *   user[nuser]      u64 user return addresses, leaf first (frame pointers)
 *   regs[nregs]      u64 user registers (--call-graph dwarf): x86_64 DWARF
 *                    numbering, 0..16 = rax rdx rcx rbx rsi rdi rbp rsp
 *                    r8..r15 rip
 *   stack[stack_len] bytes of user stack copied from regs[7] (rsp) upward
 * and zero padding to a multiple of 8. In dwarf mode nuser is 0: the
 * analyzer unwinds the user stack from regs and stack.
 *
 * keep: the probability with which the BPF side kept this sample, times
 * 2^32 (2^32: every sample kept). The keep decision draws u32 r and keeps
 * the sample when r < keep, so keep / 2^32 is exact.
 * kerr, uerr: bpf_get_stack's error for the kernel or user stack (a
 * negative errno), 0 when it succeeded or was not asked for.
 */
/*
 * hdr.flags of a CW_REC_SAMPLE_OFFCPU (format 1.8). CW_SAMPLE_EVERY_WAIT:
 * every blocking switch of the task writes a record, so the record's
 * inclusion probability is 1 and keep is the probability that its
 * stacks were taken. CW_SAMPLE_NOSTACK: the budget did not take them
 * (no frames follow). Without EVERY_WAIT (1.7 and older), keep is the
 * probability of the record itself.
 */
#define CW_SAMPLE_EVERY_WAIT 0x1
#define CW_SAMPLE_NOSTACK 0x2
/* (1.9) The stacks of the wait a CW_SWITCH_WAIT switch record with the
 * same hdr.ts and task begins: the wait is the switch's, this record only
 * adds its stacks. */
#define CW_SAMPLE_AT_SWITCH 0x4

#define CW_SAMPLE_MAX_FRAMES 127 /* per stack: the kernel's default perf_event_max_stack */
#define CW_SAMPLE_NREGS_X86_64 17
#define CW_SAMPLE_MAX_STACK 49152 /* --call-graph dwarf,SIZE at most */
#define CW_KEEP_ALL (1ULL << 32)

struct cw_sample {
	struct cw_hdr hdr;
	struct cw_task task;
	__u64 task_start; /* witness */
	__u64 period;	  /* cpu: ns of CPU time one tick stands for; offcpu: 0 */
	__u64 keep;	  /* keep probability x 2^32 */
	__u16 nkernel;
	__u16 nuser;
	__u16 nregs;
	__u16 stack_len;
	__s16 kerr;
	__s16 uerr;
	__u32 __pad;
};

/*
 * A CPU tick in interrupt context while the CPU processed an object a cause
 * slot names (a packet being received, a block request completing, a timer
 * expiring; format 1.10): the sample is that object's work, not the
 * interrupted task's, which is only context. A cw_sample, then the cause,
 * then the stacks as a cw_sample's.
 */
struct cw_sample_caused {
	struct cw_sample s;
	struct cw_cause cause;
};

/* hdr.flags of a CW_REC_META_MMAP */
#define CW_MMAP_SNAPSHOT 0x1 /* read from /proc at start, not seen being mapped */
#define CW_MMAP_BUILD_ID 0x2 /* build_id[0..build_id_len) is the object's build-id */

/*
 * An executable mapping of process task.pid: [start, start + len) maps
 * the file path from file offset pgoff. Written by user space, from the
 * /proc snapshot at start (CW_MMAP_SNAPSHOT) and from perf's mmap2 records
 * while capturing (hdr.ts: when it was mapped). Followed by path_len
 * bytes of path (no NUL counted), then zero padding to a multiple of 8.
 * A new mapping replaces whatever it overlaps; exec starts an empty
 * address space, fork copies the parent's.
 */
struct cw_mmap {
	struct cw_hdr hdr;
	struct cw_task task;
	__u64 start;
	__u64 len;
	__u64 pgoff;
	__u32 prot;   /* PROT_* */
	__u32 mflags; /* MAP_* */
	__u8 build_id[20];
	__u8 build_id_len;
	__u8 __pad;
	__u16 path_len;
};

/*
 * ---- format 1.4: the adapter plane -----------------------------------
 *
 * A USDT probe the capture attached: written by user space when it
 * attaches it (in the metadata segment for those attached at start, in
 * the event segments for those attached later, hdr.ts the moment the
 * attach completed: a hit before it was not captured). Followed by
 * provider_len + name_len + path_len bytes (provider, probe name, the ELF
 * object's path; no NULs counted), then zero padding to a multiple of 8.
 * id: the number the probe's hits carry (cw_usdt.probe), unique in the
 * trace; an object attached again (a new inode at the path) gets new ids.
 */
struct cw_usdt_probe {
	struct cw_hdr hdr;
	__u32 id;
	__u32 pid;	   /* 0: every process that maps the object */
	__u8 nargs;	   /* the probe's argument count (at most 12) */
	__u8 str_arg;	   /* the argument copied as a string, CW_USDT_NO_STR: none */
	__u16 provider_len;
	__u16 name_len;
	__u16 path_len;
};

#define CW_USDT_MAX_ARGS 12
#define CW_USDT_NO_STR 0xff
#define CW_USDT_STR_LEN 256

/* A USDT probe hit, in the context of the task that ran it: the probe's
 * id (cw_usdt_probe) and its arguments whole, as the probe's argument
 * specs give them (sign-extended to 64 bits), args[nargs..] zero. */
struct cw_usdt {
	struct cw_hdr hdr;
	struct cw_task task;
	__u64 task_start; /* witness */
	__u32 probe;
	__u8 nargs;
	__u8 __pad[3];
	__s64 args[CW_USDT_MAX_ARGS];
};

/* A hit of a probe with a string argument (cw_usdt_probe.str_arg): also
 * the string it points to, a bounded copy (at most CW_USDT_STR_LEN - 1
 * bytes and a NUL), zero-filled after the NUL; all zero when it could not
 * be read (str_err is then the read's negative errno). */
struct cw_usdt_str {
	struct cw_usdt u;
	__s32 str_err;
	__u32 __pad;
	char str[CW_USDT_STR_LEN];
};

/*
 * The go class (format 1.11, docs/model.md §6.2): a Go binary the capture
 * attached uprobes to, written when the attach completed. id: the number
 * its hits carry (cw_go.binary), unique in the trace, from 1. attached:
 * a bit per CW_GO_FN_* whose uprobes are in place. Followed by
 * version_len bytes of the binary's Go version ("go1.19.8"), path_len
 * bytes of its path as mapped, and reasons_len bytes of its wait
 * reasons, the strings of runtime.waitReasonStrings in the order of
 * their numbers (cw_go.other of a park), each ended by a NUL; then zero
 * padding to a multiple of 8. hdr.flags: CW_GO_REQUESTS_ONLY when the
 * capture left the scheduler's functions (execute, gopark, ready,
 * netpollready) out by choice (--go-probes requests), not because it
 * could not attach them: attached then says so too.
 */
struct cw_go_binary {
	struct cw_hdr hdr;
	__u32 id;
	__u32 pid;	/* 0: every process that maps the binary */
	__u16 attached; /* 1 << CW_GO_FN_* */
	__u16 version_len;
	__u16 path_len;
	__u16 reasons_len;
};

/* The runtime functions the class probes (bits of cw_go_binary.attached). */
enum {
	CW_GO_FN_NEWPROC1 = 0,
	CW_GO_FN_EXECUTE = 1,
	CW_GO_FN_GOPARK = 2,
	CW_GO_FN_READY = 3,
	CW_GO_FN_GOEXIT0 = 4,
	CW_GO_FN_NETPOLLREADY = 5,
	CW_GO_FN_SERVEHTTP = 6,
	CW_GO_FN_MAX = 7,
};

/*
 * A hit of a runtime uprobe, in the thread that hit it. goid: the
 * goroutine it is about (made, executed, parked, readied, ended; the
 * serving one for a request). other: GO_SPAWN the goroutine that ran the
 * go statement, GO_READY the one that readied goid (0 for both: no
 * goroutine was running, the scheduler's own work: the netpoller,
 * timers), GO_PARK the wait reason's number; else 0. pc: GO_SPAWN the
 * start function's address, GO_REQ_BEGIN the *http.Request; else 0.
 * hdr.flags of GO_READY: CW_GO_NETPOLL when the netpoller readied it.
 */
struct cw_go {
	struct cw_hdr hdr;
	struct cw_task task;
	__u64 task_start; /* witness */
	__u64 goid;
	__u64 other;
	__u64 pc;
	__u32 binary; /* cw_go_binary.id */
	__u32 __pad;
};

#define CW_GO_NETPOLL 0x1
#define CW_GO_REQUESTS_ONLY 0x1 /* hdr.flags of cw_go_binary */
#define CW_GO_FUNC_LEN 96
#define CW_GO_REQ_LEN 128

/* A goroutine made: func, the start function's name, is filled by the
 * capture from the binary's symbol table (BPF writes it zero), cut to
 * CW_GO_FUNC_LEN - 1 bytes; all zero when the address names no function. */
struct cw_go_spawn {
	struct cw_go g;
	char func[CW_GO_FUNC_LEN];
};

/* A request begun: name, "METHOD PATH" as read from the *http.Request,
 * cut to CW_GO_REQ_LEN - 1 bytes, zero-filled after its NUL; all zero when
 * it could not be read. */
struct cw_go_req {
	struct cw_go g;
	char name[CW_GO_REQ_LEN];
};

/* The kallsyms snapshot (metadata): len bytes of /proc/kallsyms lines
 * ("ADDR TYPE NAME[ [MODULE]]\\n", whole lines only), then zero padding to
 * a multiple of 8. Text symbols only. */
struct cw_meta_blob {
	struct cw_hdr hdr;
	__u32 len;
	__u32 __pad;
};

/*
 * Metadata key/value: followed by key_len bytes of key and val_len bytes
 * of value (no terminators counted), then zero padding to a multiple of
 * 8. Keys are listed in schema/format.md.
 */
struct cw_meta_kv {
	struct cw_hdr hdr;
	__u16 key_len;
	__u16 val_len;
	__u32 __pad;
};

/* One process or thread alive at capture start (from /proc); followed by
 * exe_len bytes of executable path and zero padding to a multiple of 8.
 * hdr.ts is when it was read. With hdr.flags CW_META_TASK_LATE (format
 * 1.10) it is a task the capture met during the capture and named then
 * (capture/namer.c): its name, not a sign that it predates the capture. */
#define CW_META_TASK_LATE 0x1
struct cw_meta_task {
	struct cw_hdr hdr;
	struct cw_task task;
	__u32 ppid;
	__u16 exe_len;
	__u16 __pad;
	char comm[CW_COMM_LEN];
};

/* Ring identities for accounting. */
enum {
	CW_RING_EDGE = 0,
	CW_RING_SAMPLE = 1,
	CW_RING_MAP = 2, /* bounded BPF join maps (overflow counts as loss) */
	CW_RING_MAX = 3,
};

/*
 * Capture accounting: for one ring, one CPU and one class, the events
 * written and lost (reserve failures) in [hdr.ts - window_ns, hdr.ts].
 * Counts are deltas over the window, not running totals, so a file cut
 * short still adds up. hdr.cpu is the CPU accounted for.
 */
struct cw_account {
	struct cw_hdr hdr;
	__u64 window_ns;
	__u64 written;
	__u64 lost;
	__u16 ring;  /* CW_RING_* */
	__u16 class; /* CW_CLASS_* */
	__u32 __pad;
	/* format 1.5: of `lost`, how many no cw_gap record reports (edge
	 * ring events lost in user space; every loss of the sample and map
	 * rings): only these need the whole window as a coverage break */
	__u64 lost_unmarked;
};

/*
 * Edge events this CPU lost (ring reservation failures), written by BPF
 * on the first reservation that succeeds after them, so that the coverage
 * break spans the loss itself, not the accounting window around it:
 * `lost` failures in [first_ns, hdr.ts]. hdr.cpu is the CPU. A run of
 * failures still open when the capture stops is written by user space.
 */
struct cw_gap {
	struct cw_hdr hdr;
	__u64 first_ns;
	__u64 lost;
};

#ifndef __bpf__
/* Does record @r (a pointer to its struct) reach far enough to hold
 * @field? Fields appended in a minor version are read only then. */
#define CW_REC_HAS(r, field) \
	((size_t)(r)->hdr.size >= __builtin_offsetof(__typeof__(*(r)), field) + sizeof((r)->field))

#define CW_ASSERT_SIZE(t, n) \
	_Static_assert(sizeof(struct t) == (n), "changing " #t " breaks compatibility")
#define CW_ASSERT_OFF(t, f, n) \
	_Static_assert(__builtin_offsetof(struct t, f) == (n), \
		       "changing " #t "." #f " breaks compatibility")
CW_ASSERT_SIZE(cw_hdr, 16);
CW_ASSERT_OFF(cw_hdr, size, 2);
CW_ASSERT_OFF(cw_hdr, ts, 8);
CW_ASSERT_SIZE(cw_task, 8);
CW_ASSERT_SIZE(cw_switch, 72);
CW_ASSERT_OFF(cw_switch, prev_state, 32);
CW_ASSERT_OFF(cw_switch, prev_start, 48);
CW_ASSERT_OFF(cw_switch, keep, 64);
CW_ASSERT_SIZE(cw_wake, 56);
CW_ASSERT_OFF(cw_wake, wakee, 24);
CW_ASSERT_OFF(cw_wake, waker_start, 40);
CW_ASSERT_SIZE(cw_fork, 80);
CW_ASSERT_OFF(cw_fork, clone_flags, 40);
CW_ASSERT_OFF(cw_fork, parent_start, 64);
CW_ASSERT_SIZE(cw_exec, 184);
CW_ASSERT_OFF(cw_exec, filename, 48);
CW_ASSERT_OFF(cw_exec, task_start, 176);
CW_ASSERT_SIZE(cw_exit, 40);
CW_ASSERT_OFF(cw_exit, task_start, 32);
CW_ASSERT_SIZE(cw_rename, 64);
CW_ASSERT_OFF(cw_rename, task_start, 56);
CW_ASSERT_SIZE(cw_meta_kv, 24);
CW_ASSERT_SIZE(cw_meta_task, 48);
CW_ASSERT_SIZE(cw_account, 56);
CW_ASSERT_OFF(cw_account, lost_unmarked, 48);
CW_ASSERT_SIZE(cw_gap, 32);
CW_ASSERT_OFF(cw_account, ring, 40);
CW_ASSERT_SIZE(cw_cause, 24);
CW_ASSERT_SIZE(cw_wake_caused, 80);
CW_ASSERT_OFF(cw_wake_caused, cause, 56);
CW_ASSERT_SIZE(cw_uring_create, 56);
CW_ASSERT_SIZE(cw_uring_req, 80);
CW_ASSERT_OFF(cw_uring_req, aux, 64);
CW_ASSERT_SIZE(cw_uring_link, 72);
CW_ASSERT_SIZE(cw_uring_complete, 80);
CW_ASSERT_OFF(cw_uring_complete, res, 56);
CW_ASSERT_SIZE(cw_uring_overflow, 64);
CW_ASSERT_SIZE(cw_uring_free, 40);
CW_ASSERT_SIZE(cw_wq_queue, 112);
CW_ASSERT_OFF(cw_wq_queue, cause, 88);
CW_ASSERT_SIZE(cw_wq_work, 48);
CW_ASSERT_SIZE(cw_timer_start, 96);
CW_ASSERT_OFF(cw_timer_start, cause, 72);
CW_ASSERT_SIZE(cw_timer_event, 64);
CW_ASSERT_SIZE(cw_timer_fire, 136);
CW_ASSERT_OFF(cw_timer_fire, arm, 64);
CW_ASSERT_SIZE(cw_timer_arm, 72);
CW_ASSERT_OFF(cw_timer_arm, cause, 48);
CW_ASSERT_SIZE(cw_futex, 80);
CW_ASSERT_SIZE(cw_net_pkt, 88);
CW_ASSERT_OFF(cw_net_pkt, saddr, 56);
CW_ASSERT_SIZE(cw_net_recv, 104);
CW_ASSERT_SIZE(cw_block_origin, 56);
CW_ASSERT_OFF(cw_block_origin, cause, 32);
CW_ASSERT_SIZE(cw_block_issue, 120);
CW_ASSERT_OFF(cw_block_issue, origin, 64);
CW_ASSERT_SIZE(cw_block_merge, 104);
CW_ASSERT_OFF(cw_block_merge, origin, 48);
CW_ASSERT_SIZE(cw_block_complete, 48);
CW_ASSERT_SIZE(cw_meta_blob, 24);
CW_ASSERT_SIZE(cw_sample, 64);
CW_ASSERT_SIZE(cw_sample_caused, 88);
CW_ASSERT_OFF(cw_sample, nkernel, 48);
CW_ASSERT_SIZE(cw_mmap, 80);
CW_ASSERT_SIZE(cw_usdt_probe, 32);
CW_ASSERT_SIZE(cw_usdt, 136);
CW_ASSERT_OFF(cw_usdt, args, 40);
CW_ASSERT_SIZE(cw_usdt_str, 400);
CW_ASSERT_OFF(cw_usdt_str, str, 144);
CW_ASSERT_SIZE(cw_go_binary, 32);
CW_ASSERT_SIZE(cw_go, 64);
CW_ASSERT_OFF(cw_go, goid, 32);
CW_ASSERT_OFF(cw_go, binary, 56);
CW_ASSERT_SIZE(cw_go_spawn, 160);
CW_ASSERT_SIZE(cw_go_req, 192);
CW_ASSERT_OFF(cw_mmap, build_id, 56);
CW_ASSERT_OFF(cw_mmap, path_len, 78);
#endif

#endif /* CAUSEWAY_EVENTS_H */
