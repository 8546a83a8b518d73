/* SPDX-License-Identifier: MIT */
/*
 * causeway record layouts: the one interface between the BPF programs, the
 * capture tool, the fixture compiler and the analyzer.
 *
 * Every record starts with struct cw_hdr. A record is stored in a segment
 * payload exactly as laid out here, little-endian (see schema/format.md);
 * only fixed-width fields, explicit padding, and every size pinned below.
 * Changing any size or offset here breaks compatibility with existing
 * traces: bump CW_FORMAT_MAJOR in schema/format.h when you do.
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

/* Classes: the unit of filtering (-e) and of loss accounting. */
enum {
	CW_CLASS_META = 0,
	CW_CLASS_SCHED = 1,
	CW_CLASS_IO_URING = 2,
	CW_CLASS_WORKQUEUE = 3,
	CW_CLASS_TIMER = 4,
	CW_CLASS_FUTEX = 5,
	CW_CLASS_SAMPLE = 6,
	CW_CLASS_ADAPTER = 7,
	CW_CLASS_MAX = 8,
};

#define CW_CLASS_OF(type) ((type) >> 4)

/* Record types. Values are part of the file format. */
enum {
	/* meta: written by user space into the metadata segment and the
	 * event segments; never by BPF. */
	CW_REC_META_KV = 0x01,	 /* cw_meta_kv + key\0value\0 */
	CW_REC_META_TASK = 0x02, /* cw_meta_task + exe path\0 */
	CW_REC_ACCOUNT = 0x03,	 /* cw_account */

	/* sched */
	CW_REC_SWITCH = 0x10,
	CW_REC_WAKING = 0x11,	  /* sched_waking: runs in the waker's context */
	CW_REC_WAKEUP = 0x12,	  /* sched_wakeup: may run on the wakee's CPU */
	CW_REC_WAKEUP_NEW = 0x13, /* sched_wakeup_new: in the forking context */
	CW_REC_FORK = 0x14,
	CW_REC_EXEC = 0x15,
	CW_REC_EXIT = 0x16,
	CW_REC_RENAME = 0x17,
};

/*
 * Context the event was raised in (cw_hdr.ctx). Derived in BPF from the
 * preempt count. An interrupt-context wakeup is never attributed to the
 * task it interrupted (contract 5.6), so this must be exact.
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
 * flags: per record type (CW_SWITCH_PREEMPT); 0 elsewhere.
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

/* sched_switch. prev_state is the kernel's task state of prev at
 * switch-out (TASK_DEAD 0x80 on the final one). */
struct cw_switch {
	struct cw_hdr hdr;
	struct cw_task prev;
	struct cw_task next;
	__u64 prev_state;
	__s32 prev_prio;
	__s32 next_prio;
	__u64 prev_start; /* witnesses */
	__u64 next_start;
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
 * hdr.ts is when it was read. */
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
CW_ASSERT_SIZE(cw_switch, 64);
CW_ASSERT_OFF(cw_switch, prev_state, 32);
CW_ASSERT_OFF(cw_switch, prev_start, 48);
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
CW_ASSERT_SIZE(cw_account, 48);
CW_ASSERT_OFF(cw_account, ring, 40);
#endif

#endif /* CAUSEWAY_EVENTS_H */
