// SPDX-License-Identifier: MIT
/*
 * gentrace: writes large synthetic traces with the real segment writer,
 * for bench/analyze and tests/hostile.sh. Deterministic: one xorshift
 * PRNG with a fixed seed, so the same arguments give the same file.
 *
 *   gentrace OUT.cwt NEVENTS [LIVE_THREADS]
 *   gentrace --system OUT.cwt NEVENTS [NCPUS]
 *   gentrace --new-tids OUT.cwt NWAKES
 *   gentrace --lossy OUT.cwt NRECORDS
 *
 * Default: one busy process. About 45% switches, 30% wakings (90% from
 * task context, the rest from hard and soft interrupts), 20% wakeups, and
 * thread churn (exit, final switch, fork) that reuses tids from a bounded
 * pool, so that the number of live threads stays constant however long
 * the trace is. Timestamps advance about 1 us per event with jitter
 * across 2 CPUs, and an accounting record per CPU every simulated second.
 *
 * --system: shaped like a system-wide capture of a busy machine (default
 * 8 CPUs): each CPU switches between the tasks it runs and idle; long-
 * lived processes with thread pools that start and end threads; many
 * short-lived processes (fork, wakeup_new, rename and exec when first
 * run, a few runs, exit, the final TASK_DEAD switch, the parent woken)
 * with pids that are not reused; wakes across CPUs from task context and
 * from hard and soft interrupts (whatever task was interrupted, or idle);
 * preemptions; witnesses (task start times) on every record; per-CPU
 * accounting every second. Records are in time order give or take a few
 * microseconds between CPUs, as the ring buffer delivers them.
 *
 * Hostile modes, small files that must not make the analyzer's memory
 * grow with their length (contract 5.8):
 *  --new-tids: NWAKES wakes, each of a new thread that never ends and is
 *     never named again: 4M wakes are a ~600 KB file.
 *  --lossy: NRECORDS accounting records that each report lost events,
 *     round robin over 4 CPUs, back-to-back windows: each a coverage break.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "capture/segwriter.h"
#include "schema/events.h"
#include "schema/format.h"

#define KERNEL_TASK_DEAD 0x80
#define SEC 1000000000ull

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A random number in [0, n). */
static uint64_t below(uint64_t n)
{
	return next_rand() % n;
}

static struct cw_writer *w;
static uint64_t now = 1000000000ull;
static uint64_t written;

static void hdr_at(struct cw_hdr *h, uint16_t type, uint16_t size, uint16_t cpu, uint8_t ctx,
		   uint64_t ts)
{
	h->type = type;
	h->size = size;
	h->cpu = cpu;
	h->ctx = ctx;
	h->flags = 0;
	h->ts = ts;
}

static void hdr(struct cw_hdr *h, uint16_t type, uint16_t size, uint16_t cpu, uint8_t ctx)
{
	/* Jitter of up to 20 us between CPUs: the analyzer must reorder. */
	hdr_at(h, type, size, cpu, ctx, now + (cpu ? below(20000) : 0));
}

static void put(const void *rec, size_t len)
{
	int err = cw_writer__append(w, rec, len);

	if (err) {
		fprintf(stderr, "gentrace: write: %s\n", strerror(-err));
		exit(1);
	}
	if (((const struct cw_hdr *)rec)->type != CW_REC_META_TASK)
		written++;
}

static void seal(uint16_t type)
{
	int err = cw_writer__seal(w, type);

	if (err) {
		fprintf(stderr, "gentrace: write: %s\n", strerror(-err));
		exit(1);
	}
}

static void account(uint16_t cpu, uint64_t ts, uint64_t window, uint64_t n, uint64_t lost)
{
	struct cw_account a = { 0 };

	hdr_at(&a.hdr, CW_REC_ACCOUNT, sizeof(a), cpu, CW_CTX_TASK, ts);
	a.window_ns = window;
	a.written = n;
	a.lost = lost;
	a.ring = CW_RING_EDGE;
	a.class = CW_CLASS_SCHED;
	put(&a, sizeof(a));
}

/* ---- the default: one busy process ---- */

static int gen_busy(uint64_t nevents, uint32_t nlive)
{
	uint64_t count = 0, next_acct, pool = 32768;
	uint32_t *tids, pid = 1000, next_tid = 2000;
	uint64_t per_cpu[2] = { 0, 0 };

	if (!(tids = calloc(nlive, 4)))
		return -ENOMEM;
	/* Snapshot: one process with nlive threads alive at start. */
	for (uint32_t i = 0; i < nlive; i++) {
		struct cw_meta_task t = { 0 };

		tids[i] = i ? next_tid++ : pid;
		hdr(&t.hdr, CW_REC_META_TASK, sizeof(t), 0xffff, 0);
		t.task.tid = tids[i];
		t.task.pid = pid;
		t.ppid = 1;
		snprintf(t.comm, sizeof(t.comm), "worker-%u", i % 100000);
		put(&t, sizeof(t));
	}
	seal(CW_SEG_META);
	next_acct = now + SEC;
	/* count: the events of the mix, not accounting (and one per turn,
	 * as the benchmark figures have always been made). */
	while (count < nevents) {
		uint64_t r = below(100);
		uint16_t cpu = (uint16_t)(next_rand() & 1);
		uint32_t a = (uint32_t)below(nlive), b = (uint32_t)below(nlive);

		now += 500 + below(1000);
		if (r < 45) {
			struct cw_switch s = { 0 };

			hdr(&s.hdr, CW_REC_SWITCH, sizeof(s), cpu, 0);
			s.prev = (struct cw_task){ tids[a], pid };
			s.next = (struct cw_task){ tids[b], pid };
			s.prev_state = next_rand() & 1;
			s.prev_prio = s.next_prio = 120;
			put(&s, sizeof(s));
		} else if (r < 95) {
			struct cw_wake k = { 0 };
			uint64_t c = below(20);

			hdr(&k.hdr, r < 75 ? CW_REC_WAKING : CW_REC_WAKEUP, sizeof(k), cpu,
			    c == 0 ? CW_CTX_HARDIRQ : c == 1 ? CW_CTX_SOFTIRQ : CW_CTX_TASK);
			k.waker = (struct cw_task){ tids[a], pid };
			k.wakee = (struct cw_task){ tids[b], pid };
			k.target_cpu = cpu;
			k.wakee_prio = 120;
			put(&k, sizeof(k));
		} else if (a != 0) {
			/* Churn: thread a exits, is switched out dead, and a
			 * new thread takes its slot with a tid from the pool. */
			struct cw_exit e = { 0 };
			struct cw_switch s = { 0 };
			struct cw_fork f = { 0 };

			hdr(&e.hdr, CW_REC_EXIT, sizeof(e), cpu, 0);
			e.task = (struct cw_task){ tids[a], pid };
			put(&e, sizeof(e));
			hdr(&s.hdr, CW_REC_SWITCH, sizeof(s), cpu, 0);
			s.prev = e.task;
			s.next = (struct cw_task){ tids[b], pid };
			s.prev_state = KERNEL_TASK_DEAD;
			put(&s, sizeof(s));
			hdr(&f.hdr, CW_REC_FORK, sizeof(f), cpu, 0);
			f.parent = (struct cw_task){ pid, pid };
			tids[a] = (uint32_t)(2000 + (next_tid++ - 2000) % pool);
			f.child = (struct cw_task){ tids[a], pid };
			f.fork_flags = CW_FORK_THREAD;
			memcpy(f.child_comm, "worker", 7);
			put(&f, sizeof(f));
			count += 2;
			per_cpu[cpu] += 2;
		}
		count++;
		per_cpu[cpu]++;
		if (now >= next_acct) {
			for (uint16_t c = 0; c < 2; c++) {
				struct cw_account acct = { 0 };

				hdr(&acct.hdr, CW_REC_ACCOUNT, sizeof(acct), c, 0);
				acct.hdr.ts = now;
				acct.window_ns = SEC;
				acct.written = per_cpu[c];
				acct.ring = CW_RING_EDGE;
				acct.class = CW_CLASS_SCHED;
				put(&acct, sizeof(acct));
				per_cpu[c] = 0;
			}
			next_acct += SEC;
		}
	}
	free(tids);
	return 0;
}

/* ---- --system: a busy machine, all CPUs ---- */

enum { T_FREE, T_RUNNING, T_RUNNABLE, T_SLEEPING };

struct task {
	uint32_t tid, pid, parent; /* parent: index of the task to wake at exit */
	uint64_t start;		   /* the witness */
	int32_t runs_left;	   /* switch-outs before it exits; -1: never */
	uint32_t slot;		   /* position in its state's list */
	uint8_t state;
	uint8_t exec_pending;	   /* a new process: rename + exec when first run */
	char comm[CW_COMM_LEN];
};

/* A set of task indexes with O(1) add, remove and random pick. */
struct set {
	uint32_t *v;
	uint32_t n;
};

#define MAX_TASKS 65536
#define MAX_CPUS 256

static struct task tasks[MAX_TASKS];
static struct set runnable, sleeping, free_tasks;
static uint32_t next_pid = 100000;

static void set_add(struct set *s, uint32_t t)
{
	tasks[t].slot = s->n;
	s->v[s->n++] = t;
}

static void set_del(struct set *s, uint32_t t)
{
	uint32_t last = s->v[--s->n];

	s->v[tasks[t].slot] = last;
	tasks[last].slot = tasks[t].slot;
}

static uint32_t set_pick(const struct set *s)
{
	return s->v[below(s->n)];
}

static void to_state(uint32_t t, uint8_t state)
{
	struct task *k = &tasks[t];

	if (k->state == T_RUNNABLE)
		set_del(&runnable, t);
	else if (k->state == T_SLEEPING)
		set_del(&sleeping, t);
	else if (k->state == T_FREE)
		set_del(&free_tasks, t);
	k->state = state;
	if (state == T_RUNNABLE)
		set_add(&runnable, t);
	else if (state == T_SLEEPING)
		set_add(&sleeping, t);
	else if (state == T_FREE)
		set_add(&free_tasks, t);
}

static struct cw_task who(int64_t t)
{
	return t < 0 ? (struct cw_task){ 0, 0 } : (struct cw_task){ tasks[t].tid, tasks[t].pid };
}

static uint64_t start_of(int64_t t)
{
	return t < 0 ? 0 : tasks[t].start;
}

/* Timestamps in the order things happen (at most 8 records of 50 ns in
 * one step of at least 500 ns): causes before effects, as on a real
 * machine. The file order is shuffled a little (sys_put). */
static uint64_t step_ns;

static uint64_t ts_next(void)
{
	step_ns += 50;
	return now + step_ns;
}

/* The ring delivers records in reservation order, which is not quite
 * time order across CPUs: one record in eight reaches the file after the
 * one that follows it. */
static uint8_t held[256];
static size_t held_len;

static void sys_put(const void *rec, size_t len)
{
	if (held_len) {
		put(rec, len);
		put(held, held_len);
		held_len = 0;
	} else if (below(8) == 0) {
		memcpy(held, rec, len);
		held_len = len;
	} else {
		put(rec, len);
	}
}

static void sys_wake(uint16_t cpu, uint8_t ctx, int64_t waker, uint32_t wakee, uint16_t ncpu)
{
	struct cw_wake k = { 0 };
	uint16_t target = (uint16_t)below(ncpu);

	hdr_at(&k.hdr, CW_REC_WAKING, sizeof(k), cpu, ctx, ts_next());
	k.waker = who(waker);
	k.wakee = who(wakee);
	k.target_cpu = target;
	k.wakee_prio = 120;
	k.waker_start = start_of(waker);
	k.wakee_start = start_of(wakee);
	sys_put(&k, sizeof(k));
	k.hdr.type = CW_REC_WAKEUP;
	k.hdr.cpu = target;
	k.hdr.ts = ts_next();
	sys_put(&k, sizeof(k));
	to_state(wakee, T_RUNNABLE);
}

/* A new task: a thread of @parent's process, or a new process. */
static void sys_fork(uint16_t cpu, uint32_t parent, int thread)
{
	struct cw_fork f = { 0 };
	struct cw_wake k = { 0 };
	uint32_t c;
	struct task *t;

	if (!free_tasks.n)
		return;
	c = set_pick(&free_tasks);
	t = &tasks[c];
	t->tid = next_pid++;
	t->pid = thread ? tasks[parent].pid : t->tid;
	t->parent = parent;
	t->start = now;
	/* A short life: cc1, sh, a pool thread with one job. */
	t->runs_left = 2 + (int32_t)below(12);
	t->exec_pending = !thread;
	memcpy(t->comm, tasks[parent].comm, CW_COMM_LEN);
	to_state(c, T_RUNNABLE);

	hdr_at(&f.hdr, CW_REC_FORK, sizeof(f), cpu, CW_CTX_TASK, ts_next());
	f.parent = who(parent);
	f.child = who(c);
	f.fork_flags = thread ? CW_FORK_THREAD : 0;
	f.clone_flags = thread ? 0x3d0f00 : 0x1200011;
	memcpy(f.child_comm, t->comm, CW_COMM_LEN);
	f.parent_start = start_of(parent);
	f.child_start = t->start;
	sys_put(&f, sizeof(f));
	hdr_at(&k.hdr, CW_REC_WAKEUP_NEW, sizeof(k), cpu, CW_CTX_TASK, ts_next());
	k.waker = f.parent;
	k.wakee = f.child;
	k.target_cpu = (int32_t)cpu;
	k.wakee_prio = 120;
	k.waker_start = f.parent_start;
	k.wakee_start = f.child_start;
	sys_put(&k, sizeof(k));
}

/* A new process runs for the first time: it execs (comm first). */
static void sys_exec(uint16_t cpu, uint32_t t)
{
	static const char *const prog[] = { "cc1", "as", "sh", "sed", "ld", "python3", "git" };
	struct task *k = &tasks[t];
	struct cw_rename r = { 0 };
	struct cw_exec e = { 0 };
	const char *p = prog[below(sizeof(prog) / sizeof(prog[0]))];

	hdr_at(&r.hdr, CW_REC_RENAME, sizeof(r), cpu, CW_CTX_TASK, ts_next());
	r.task = who(t);
	memcpy(r.oldcomm, k->comm, CW_COMM_LEN);
	memset(k->comm, 0, CW_COMM_LEN);
	snprintf(k->comm, CW_COMM_LEN, "%s", p);
	memcpy(r.newcomm, k->comm, CW_COMM_LEN);
	r.task_start = k->start;
	sys_put(&r, sizeof(r));
	hdr_at(&e.hdr, CW_REC_EXEC, sizeof(e), cpu, CW_CTX_TASK, ts_next());
	e.task = r.task;
	e.old_tid = k->tid;
	memcpy(e.comm, k->comm, CW_COMM_LEN);
	snprintf(e.filename, sizeof(e.filename), "/usr/bin/%s", p);
	e.task_start = k->start;
	sys_put(&e, sizeof(e));
	k->exec_pending = 0;
}

/* CPU @cpu switches from cur[cpu] to a runnable task or to idle. The
 * task switched out may exit first (its last run), be preempted or
 * block. */
static void sys_switch(uint16_t cpu, int64_t *cur, uint16_t ncpu)
{
	struct cw_switch s = { 0 };
	int64_t prev = cur[cpu], next = runnable.n ? (int64_t)set_pick(&runnable) : -1;
	int dead = 0, preempt = 0;

	if (prev < 0 && next < 0)
		return; /* idle stays idle */
	if (prev >= 0) {
		struct task *p = &tasks[prev];

		if (p->runs_left > 0)
			p->runs_left--;
		if (p->runs_left == 0) {
			/* Its last run: exit, SIGCHLD wakes the parent, and the
			 * final switch-out in TASK_DEAD. */
			struct cw_exit e = { 0 };

			hdr_at(&e.hdr, CW_REC_EXIT, sizeof(e), cpu, CW_CTX_TASK, ts_next());
			e.task = who(prev);
			e.exit_flags = p->tid == p->pid ? CW_EXIT_GROUP_DEAD : 0;
			e.task_start = p->start;
			sys_put(&e, sizeof(e));
			if (tasks[p->parent].state == T_SLEEPING)
				sys_wake(cpu, CW_CTX_TASK, prev, p->parent, ncpu);
			s.prev_state = KERNEL_TASK_DEAD;
			dead = 1;
		} else if (next >= 0 && below(100) < (p->runs_left > 0 ? 50u : 10u)) {
			/* Short-lived processes mostly compute and are
			 * preempted; long-lived threads mostly block. */
			preempt = 1;
			s.prev_state = 0;
		} else {
			s.prev_state = below(10) ? 1 : 2; /* S, sometimes D */
		}
	}
	hdr_at(&s.hdr, CW_REC_SWITCH, sizeof(s), cpu, CW_CTX_TASK, ts_next());
	s.hdr.flags = preempt ? CW_SWITCH_PREEMPT : 0;
	s.prev = who(prev);
	s.next = who(next);
	s.prev_prio = s.next_prio = 120;
	s.prev_start = start_of(prev);
	s.next_start = start_of(next);
	sys_put(&s, sizeof(s));
	if (prev >= 0)
		to_state((uint32_t)prev, dead ? T_FREE :
			 preempt ? T_RUNNABLE : T_SLEEPING);
	if (next >= 0) {
		to_state((uint32_t)next, T_RUNNING);
		if (tasks[next].exec_pending)
			sys_exec(cpu, (uint32_t)next);
	}
	cur[cpu] = next;
}

/* Long-lived processes, each with a pool of threads: the snapshot. */
static void sys_snapshot(uint32_t nproc)
{
	for (uint32_t p = 0; p < nproc; p++) {
		uint32_t nthr = p % 10 == 0 ? 8 + (uint32_t)below(40) : 1 + (uint32_t)below(3);
		uint32_t leader = 0;

		for (uint32_t i = 0; i < nthr && free_tasks.n; i++) {
			struct cw_meta_task m = { 0 };
			uint32_t t = set_pick(&free_tasks);
			struct task *k = &tasks[t];

			k->tid = next_pid++;
			k->pid = i ? tasks[leader].pid : k->tid;
			if (!i)
				leader = t;
			k->parent = leader;
			k->start = 1000000 + below(now - 2000000);
			k->runs_left = -1;
			snprintf(k->comm, CW_COMM_LEN, "%s-%u", p % 10 ? "daemon" : "server", p);
			to_state(t, T_SLEEPING);
			hdr_at(&m.hdr, CW_REC_META_TASK, sizeof(m), 0xffff, 0, now);
			m.task = who(t);
			m.ppid = 1;
			memcpy(m.comm, k->comm, CW_COMM_LEN);
			put(&m, sizeof(m));
		}
	}
}

static int gen_system(uint64_t nevents, uint16_t ncpu)
{
	int64_t cur[MAX_CPUS];
	uint64_t per_cpu[MAX_CPUS] = { 0 }, next_acct;
	static uint32_t v_run[MAX_TASKS], v_sleep[MAX_TASKS], v_free[MAX_TASKS];

	runnable.v = v_run;
	sleeping.v = v_sleep;
	free_tasks.v = v_free;
	for (uint32_t t = MAX_TASKS; t-- > 0;) {
		tasks[t].state = T_FREE;
		set_add(&free_tasks, t);
	}
	for (uint16_t c = 0; c < ncpu; c++)
		cur[c] = -1;
	sys_snapshot(400);
	seal(CW_SEG_META);
	next_acct = now + SEC;
	while (written < nevents) {
		uint16_t cpu = (uint16_t)below(ncpu);
		uint64_t r = below(100), before = written;
		int64_t c = cur[cpu];

		/* About a million events a second, the whole machine. */
		now += 500 + below(2000);
		step_ns = 0;
		/* Switches drain the run queues a little faster than wakes
		 * and forks fill them, so that CPUs go idle now and then. */
		if (r < 55) {
			sys_switch(cpu, cur, ncpu);
		} else if (r < 88) {
			/* Who wakes whom: the running task, or an interrupt that
			 * came while it (or idle) ran. */
			uint64_t k = below(100);
			uint8_t ctx = k < 60 ? CW_CTX_TASK : k < 75 ? CW_CTX_HARDIRQ : CW_CTX_SOFTIRQ;

			if (c < 0 && ctx == CW_CTX_TASK)
				ctx = CW_CTX_SOFTIRQ; /* idle wakes from interrupts */
			if (sleeping.n)
				sys_wake(cpu, ctx, c, set_pick(&sleeping), ncpu);
		} else if (r < 91 && c >= 0) {
			/* A long-lived task starts a thread of its own, or a
			 * process (a shell or make starting a compiler). */
			sys_fork(cpu, (uint32_t)c, below(100) < 35 && tasks[c].runs_left < 0);
		}
		per_cpu[cpu] += written - before;
		if (now >= next_acct) {
			for (uint16_t k = 0; k < ncpu; k++) {
				account(k, now, SEC, per_cpu[k], 0);
				per_cpu[k] = 0;
			}
			next_acct += SEC;
		}
	}
	if (held_len)
		put(held, held_len);
	return 0;
}

/* ---- hostile modes ---- */

/* Every wake names a thread never seen before, that never ends: join
 * state a bound must keep small. */
static int gen_new_tids(uint64_t n)
{
	seal(CW_SEG_META);
	for (uint64_t i = 0; i < n; i++) {
		struct cw_wake k = { 0 };
		uint32_t tid = (uint32_t)(1000 + i % 4000000000u);

		now += 1000;
		/* The 1.0 layout, without witnesses: the smaller the record,
		 * the smaller the file (LZ4 stops near 1:255). */
		hdr_at(&k.hdr, CW_REC_WAKING, offsetof(struct cw_wake, waker_start), 0, CW_CTX_TASK,
		       now);
		k.waker = (struct cw_task){ 1, 1 };
		k.wakee = (struct cw_task){ tid, 1 };
		k.wakee_prio = 120;
		put(&k, k.hdr.size);
	}
	return 0;
}

/* Every accounting record reports loss: one coverage break each, in
 * back-to-back windows per CPU. */
static int gen_lossy(uint64_t n)
{
	seal(CW_SEG_META);
	for (uint64_t i = 0; i < n; i++) {
		now += 1000;
		account((uint16_t)(i % 4), now, 4000, 10, 1 + i % 3);
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: gentrace OUT.cwt NEVENTS [LIVE_THREADS]\n"
			"       gentrace --system OUT.cwt NEVENTS [NCPUS]\n"
			"       gentrace --new-tids OUT.cwt NWAKES\n"
			"       gentrace --lossy OUT.cwt NRECORDS\n");
	exit(2);
}

static uint64_t number(const char *s, uint64_t min, uint64_t max)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (*end || !*s || v < min || v > max)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	const char *mode = "";
	uint64_t n;
	int fd, err;

	if (argc > 1 && argv[1][0] == '-' && argv[1][1] == '-') {
		mode = argv[1];
		argv++;
		argc--;
	}
	if (argc < 3 || argc > 4)
		usage();
	n = number(argv[2], 0, UINT64_MAX);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || !(w = cw_writer__new(fd, NULL))) {
		perror("gentrace");
		return 1;
	}
	if (!*mode)
		err = gen_busy(n, argc > 3 ? (uint32_t)number(argv[3], 1, 1u << 24) : 2000);
	else if (!strcmp(mode, "--system"))
		err = gen_system(n, argc > 3 ? (uint16_t)number(argv[3], 1, MAX_CPUS) : 8);
	else if (!strcmp(mode, "--new-tids") && argc == 3)
		err = gen_new_tids(n);
	else if (!strcmp(mode, "--lossy") && argc == 3)
		err = gen_lossy(n);
	else
		usage();
	if (err) {
		fprintf(stderr, "gentrace: %s\n", strerror(-err));
		return 1;
	}
	seal(CW_SEG_EVENTS);
	seal(CW_SEG_FINAL);
	cw_writer__free(w);
	return close(fd) ? 1 : 0;
}
