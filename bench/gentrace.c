// SPDX-License-Identifier: MIT
/*
 * gentrace: writes large synthetic traces with the real segment writer,
 * for bench/analyze, bench/export and tests/hostile.sh. Deterministic:
 * one xorshift PRNG with a fixed seed, so the same arguments give the
 * same file.
 *
 *   gentrace OUT.cwt NEVENTS [LIVE_THREADS]
 *   gentrace --system OUT.cwt NEVENTS [NCPUS]
 *   gentrace --uring OUT.cwt NREQUESTS [INFLIGHT]
 *   gentrace --samples OUT.cwt NEVENTS [LIVE_THREADS]
 *   gentrace --requests OUT.cwt NEVENTS [NCPUS]
 *   gentrace --new-tids OUT.cwt NWAKES
 *   gentrace --lossy OUT.cwt NRECORDS
 *   gentrace --gaps OUT.cwt NRECORDS
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
 * --uring: join-heavy, io_uring and workqueue records (format 1.2) with
 * sched records around them: NREQUESTS io_uring requests, about INFLIGHT
 * of them (default 1M) in flight at once once the trace has filled up,
 * request pointers and user_data reused all the time, and work items
 * queued and executed over a pool of work_structs; see gen_uring().
 *
 * --samples: the default's process, with every other event a CPU sample
 * (format 1.3) of one of its threads instead: a user stack of 8 to 24
 * return addresses, from a pool of 1024 stacks over 4096 addresses in the
 * executable mappings of gentrace itself and of the libraries it has
 * mapped (recorded as the process's mappings, with their build-ids), so
 * the analyzer symbolizes real objects as it would a capture's.
 *
 * --requests: request-serving processes whose adapter requests
 * (request_begin/end) are handed across threads by pipe and futex wakes,
 * io_uring reads and timers, with CPU samples and every wait's stacks,
 * so that the analyzer reconstructs requests across 1 to 4 hops; on
 * NCPUS CPUs (default 4); see "--requests" below. For bench/export.
 *
 * Hostile modes, small files that must not make the analyzer's memory
 * grow with their length (docs/model.md §5.8):
 *  --new-tids: NWAKES wakes, each of a new thread that never ends and is
 *     never named again: 4M wakes are a ~600 KB file.
 *  --lossy: NRECORDS accounting records that each report lost events,
 *     round robin over 4 CPUs, back-to-back windows: each a coverage break.
 *  --gaps: NRECORDS gap records over every CPU number, with whole,
 *     inverted and unbounded spans, and accounting records whose losses
 *     no gap record reports.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/rand.h"
#include "trace/writer.h"
#include "schema/events.h"
#include "trace/format.h"

#define KERNEL_TASK_DEAD 0x80
#define SEC 1000000000ull

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint64_t next_rand(void)
{
	return cw_xorshift64(&rng);
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
	a.lost_unmarked = lost; /* a window's loss, as before gap records */
	a.ring = CW_RING_EDGE;
	a.class = CW_CLASS_SCHED;
	put(&a, sizeof(a));
}

/* ---- the default: one busy process ---- */

static void busy_sample(uint16_t cpu, struct cw_task t);
static void busy_mmaps(uint32_t pid);

static int gen_busy(uint64_t nevents, uint32_t nlive, int samples)
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
	if (samples)
		busy_mmaps(pid);
	seal(CW_SEG_META);
	next_acct = now + SEC;
	/* count: the events of the mix, not accounting (and one per turn,
	 * as the benchmark figures have always been made). */
	while (count < nevents) {
		uint64_t r = below(100);
		uint16_t cpu = (uint16_t)(next_rand() & 1);
		uint32_t a = (uint32_t)below(nlive), b = (uint32_t)below(nlive);

		now += 500 + below(1000);
		if (samples && (next_rand() & 1)) {
			busy_sample(cpu, (struct cw_task){ tids[a], pid });
		} else if (r < 45) {
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

/* ---- --samples: stacks in real objects ---- */

#define S_ADDRS 4096
#define S_STACKS 1024
#define S_MAXMAPS 64

static struct {
	uint64_t start, end, pgoff;
	char path[256];
	uint8_t bid[20], bid_len;
} smaps[S_MAXMAPS];
static unsigned nsmaps;
static uint64_t saddrs[S_ADDRS];
static struct {
	uint16_t depth;
	uint16_t addr[24];
} sstacks[S_STACKS];

/* The GNU build-id note of ELF file @path, from its program headers;
 * 0 bytes when there is none. Our own objects: trusted, but read with
 * bounds all the same. */
static uint8_t read_build_id(const char *path, uint8_t bid[20])
{
	static uint8_t buf[1 << 16];
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
	const Elf64_Ehdr *eh = (const void *)buf;
	uint8_t len = 0;

	if (f)
		fclose(f);
	if (n < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return 0;
	for (unsigned i = 0; i < eh->e_phnum && !len; i++) {
		const Elf64_Phdr *ph = (const void *)(buf + eh->e_phoff + (size_t)i * sizeof(*ph));
		size_t off;

		if (eh->e_phoff + (size_t)(i + 1) * sizeof(*ph) > n)
			break;
		if (ph->p_type != PT_NOTE || ph->p_offset + ph->p_filesz > n)
			continue;
		for (off = ph->p_offset; off + sizeof(Elf64_Nhdr) <= ph->p_offset + ph->p_filesz;) {
			const Elf64_Nhdr *nh = (const void *)(buf + off);
			size_t name = off + sizeof(*nh), desc = name + ((nh->n_namesz + 3) & ~3u);

			if (desc + nh->n_descsz > ph->p_offset + ph->p_filesz)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(buf + name, "GNU", 4) && nh->n_descsz <= 20) {
				memcpy(bid, buf + desc, nh->n_descsz);
				len = (uint8_t)nh->n_descsz;
				break;
			}
			off = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return len;
}

/* This process's executable file mappings, with their build-ids: the
 * objects the stacks of --samples and --requests are in. */
static void read_smaps(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f) && nsmaps < S_MAXMAPS) {
		unsigned long long a, b, off;
		char perm[5], path[256];

		if (sscanf(line, "%llx-%llx %4s %llx %*s %*s %255s", &a, &b, perm, &off, path) != 5 ||
		    perm[2] != 'x' || path[0] != '/')
			continue;
		smaps[nsmaps].start = a;
		smaps[nsmaps].end = b;
		smaps[nsmaps].pgoff = off;
		snprintf(smaps[nsmaps].path, sizeof(smaps[nsmaps].path), "%s", path);
		smaps[nsmaps].bid_len = read_build_id(path, smaps[nsmaps].bid);
		nsmaps++;
	}
	if (f)
		fclose(f);
	if (!nsmaps) {
		fprintf(stderr, "gentrace: no executable mappings in /proc/self/maps\n");
		exit(1);
	}
}

/* The mappings as process @pid's, read from /proc at the start. */
static void put_smaps(uint32_t pid)
{
	for (unsigned i = 0; i < nsmaps; i++) {
		uint8_t rec[sizeof(struct cw_mmap) + 256 + 8] = { 0 };
		struct cw_mmap *m = (void *)rec;
		size_t plen = strlen(smaps[i].path), size = (sizeof(*m) + plen + 7) & ~(size_t)7;

		hdr(&m->hdr, CW_REC_META_MMAP, (uint16_t)size, 0xffff, 0);
		m->hdr.flags = CW_MMAP_SNAPSHOT | (smaps[i].bid_len ? CW_MMAP_BUILD_ID : 0);
		m->task = (struct cw_task){ pid, pid };
		m->start = smaps[i].start;
		m->len = smaps[i].end - smaps[i].start;
		m->pgoff = smaps[i].pgoff;
		m->prot = 5; /* PROT_READ | PROT_EXEC */
		memcpy(m->build_id, smaps[i].bid, sizeof(m->build_id));
		m->build_id_len = smaps[i].bid_len;
		m->path_len = (uint16_t)plen;
		memcpy(m + 1, smaps[i].path, plen);
		put(rec, size);
	}
}

/* The pools of addresses in the mappings and of stacks over them. */
static void fill_stack_pools(void)
{
	for (unsigned i = 0; i < S_ADDRS; i++) {
		unsigned k = (unsigned)below(nsmaps);

		saddrs[i] = smaps[k].start + below(smaps[k].end - smaps[k].start);
	}
	for (unsigned i = 0; i < S_STACKS; i++) {
		sstacks[i].depth = (uint16_t)(8 + below(17));
		for (unsigned d = 0; d < sstacks[i].depth; d++)
			sstacks[i].addr[d] = (uint16_t)below(S_ADDRS);
	}
}

/* This process's executable file mappings as the process's of the trace,
 * and the pools of addresses and stacks in them. */
static void busy_mmaps(uint32_t pid)
{
	read_smaps();
	put_smaps(pid);
	fill_stack_pools();
}

static void busy_sample(uint16_t cpu, struct cw_task t)
{
	uint64_t rec[(sizeof(struct cw_sample) + 24 * 8) / 8] = { 0 };
	struct cw_sample *smp = (void *)rec;
	unsigned k = (unsigned)below(S_STACKS);
	uint64_t *user = (uint64_t *)(smp + 1);
	uint16_t size = (uint16_t)(sizeof(*smp) + sstacks[k].depth * 8u);

	hdr(&smp->hdr, CW_REC_SAMPLE_CPU, size, cpu, 0);
	smp->task = t;
	smp->period = 10101010; /* 99 Hz */
	smp->keep = CW_KEEP_ALL;
	smp->nuser = sstacks[k].depth;
	for (unsigned d = 0; d < sstacks[k].depth; d++)
		user[d] = saddrs[sstacks[k].addr[d]];
	put(rec, size);
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

/* Records per CPU and class since the last accounting (--uring,
 * --requests), which puts them in accounting records as the capture
 * does. */
static uint64_t counted[MAX_CPUS][CW_CLASS_MAX];

static void put_counted(const void *rec, size_t len)
{
	const struct cw_hdr *h = rec;

	put(rec, len);
	counted[h->cpu][CW_CLASS_OF(h->type)]++;
}

/* An accounting record per CPU and class of @cls for the last second, at
 * @ts: what was counted, nothing lost. */
static void account_classes(uint16_t ncpu, const uint16_t *cls, size_t ncls, uint64_t ts)
{
	for (uint16_t c = 0; c < ncpu; c++)
		for (size_t k = 0; k < ncls; k++) {
			struct cw_account a = { 0 };

			hdr_at(&a.hdr, CW_REC_ACCOUNT, sizeof(a), c, CW_CTX_TASK, ts);
			a.window_ns = SEC;
			a.written = counted[c][cls[k]];
			a.ring = cls[k] == CW_CLASS_SAMPLE ? CW_RING_SAMPLE : CW_RING_EDGE;
			a.class = cls[k];
			put(&a, sizeof(a));
			counted[c][cls[k]] = 0;
		}
}

/* ---- --uring: io_uring and workqueue joins, millions in flight ---- */

/*
 * One server process: NSUB submitter threads, each owning the rings
 * r % NSUB == t, NWRK io-wq workers, and one kworker per CPU (kernel
 * threads of their own). Every thread runs on one CPU (its index mod
 * NCPU), so a CPU's current task is the only place it runs.
 *
 * Requests. Submitted in batches of 1-8 on one of the thread's rings and
 * completed in a random order, so that about INFLIGHT are in flight at
 * once, all the time: a request may stay in flight for most of the
 * trace. Request pointers come from a LIFO free list, as from a slab: the
 * pointer a completion frees is the next submission's. user_data cycles
 * through 1024 values per ring, so with thousands in flight per ring
 * every value names several live requests at once. Mix:
 *  - 63% complete in hard-interrupt context (block I/O) on any CPU, the
 *    interrupted task current; half of them wake the submitter with the
 *    request as the wake's cause;
 *  - 20% are armed for poll: a task-work add in softirq context that
 *    wakes the submitter (the request as cause), which completes it;
 *  - 10% are punted to io-wq: a worker starts it and completes it, and
 *    wakes the submitter;
 *  - 5% are linked after the previous request of their batch;
 *  - 2% are multishot: up to 3 CQEs with IORING_CQE_F_MORE, then the
 *    final one, all in the submitter's context.
 * Three rings in four are created in the trace; the others predate it.
 *
 * Work items. NWORK work_structs (INFLIGHT / 8), about three quarters
 * queued at any time: queued by a submitter or by the work item a kworker
 * executes (the queue's cause), executed in a random order by the kworker
 * of a random CPU. An execution may wake a submitter (the work item as
 * the cause) or queue its own work_struct again (queued while it
 * executes, a second live generation of one pointer).
 *
 * Scheduling: a thread is switched in on its CPU before it acts, and now
 * and then a CPU switches to another of its threads or to idle.
 * Accounting per CPU and class every simulated second, nothing lost.
 */
#define U_NCPU 8
#define U_NSUB 64
#define U_NWRK 16
#define U_NRINGS 256
#define U_UDATA 1024
#define U_NTHR (U_NSUB + U_NWRK + U_NCPU)

enum { K_IRQ, K_POLL, K_PUNT, K_LINK, K_MULTI };
enum { W_IDLE, W_QUEUED };

struct ureq {
	uint64_t ptr, user_data;
	uint32_t ring;
	uint8_t kind, more, opcode;
};

struct uring {
	uint64_t ptr;
	uint32_t owner, next_ud;
};

struct uthr {
	struct cw_task t;
	uint64_t start;
	uint16_t cpu;
};

struct uwork {
	uint32_t slot; /* position in its state's list */
	uint8_t state, fn;
};

static struct uthr uthr[U_NTHR];
static struct uring urings[U_NRINGS];
static int64_t ucur[U_NCPU];
static struct ureq *ulive;
static uint64_t nulive, *ufree, nufree;
static struct uwork *uwork;
static uint32_t *widle, *wqueued, nwidle, nwqueued;

#define SUB(i) (i)
#define WRK(i) (U_NSUB + (i))
#define KWORKER(cpu) (U_NSUB + U_NWRK + (cpu))
#define REQ_BASE 0xffff888200000000ull
#define RING_BASE 0xffff888100000000ull
#define WORK_BASE 0xffff888300000000ull
#define FN_BASE 0xffffffff81200000ull

static void u_put(void *rec, size_t len)
{
	struct cw_hdr *h = rec;

	h->ts = ts_next();
	put_counted(rec, len);
}

static struct cw_task u_task(int64_t t)
{
	return t < 0 ? (struct cw_task){ 0, 0 } : uthr[t].t;
}

static uint64_t u_start(int64_t t)
{
	return t < 0 ? 0 : uthr[t].start;
}

/* Thread @t is switched in on its CPU (the one it was on blocks). */
static void u_run(uint32_t t)
{
	uint16_t cpu = uthr[t].cpu;
	struct cw_switch s = { 0 };

	if (ucur[cpu] == (int64_t)t)
		return;
	hdr_at(&s.hdr, CW_REC_SWITCH, sizeof(s), cpu, CW_CTX_TASK, 0);
	s.prev = u_task(ucur[cpu]);
	s.next = uthr[t].t;
	s.prev_state = ucur[cpu] < 0 ? 0 : 1;
	s.prev_prio = s.next_prio = 120;
	s.prev_start = u_start(ucur[cpu]);
	s.next_start = uthr[t].start;
	u_put(&s, sizeof(s));
	ucur[cpu] = t;
}

/* A CPU switches to another of its threads, or to idle. */
static void u_resched(uint16_t cpu)
{
	uint32_t mine[U_NTHR], n = 0;
	struct cw_switch s = { 0 };
	int64_t next;

	for (uint32_t t = 0; t < U_NTHR; t++)
		if (uthr[t].cpu == cpu && (int64_t)t != ucur[cpu])
			mine[n++] = t;
	next = below(4) == 0 || !n ? -1 : (int64_t)mine[below(n)];
	if (next == ucur[cpu])
		return;
	hdr_at(&s.hdr, CW_REC_SWITCH, sizeof(s), cpu, CW_CTX_TASK, 0);
	s.prev = u_task(ucur[cpu]);
	s.next = u_task(next);
	s.prev_state = ucur[cpu] < 0 ? 0 : 1;
	s.prev_prio = s.next_prio = 120;
	s.prev_start = u_start(ucur[cpu]);
	s.next_start = u_start(next);
	u_put(&s, sizeof(s));
	ucur[cpu] = next;
}

/* @waker (or the interrupted task) on @cpu wakes @wakee, with @cause
 * when one is given. */
static void u_wake(uint16_t cpu, uint8_t ctx, uint32_t wakee, const struct cw_cause *cause)
{
	struct cw_wake_caused k = { 0 };
	int64_t waker = ucur[cpu];

	hdr_at(&k.w.hdr, cause ? CW_REC_WAKING_CAUSED : CW_REC_WAKING,
	       cause ? sizeof(k) : sizeof(k.w), cpu, ctx, 0);
	k.w.waker = u_task(waker);
	k.w.wakee = uthr[wakee].t;
	k.w.target_cpu = uthr[wakee].cpu;
	k.w.wakee_prio = 120;
	k.w.waker_start = u_start(waker);
	k.w.wakee_start = uthr[wakee].start;
	if (cause)
		k.cause = *cause;
	u_put(&k, k.w.hdr.size);
	k.w.hdr.type = CW_REC_WAKEUP;
	k.w.hdr.size = sizeof(k.w);
	k.w.hdr.cpu = uthr[wakee].cpu;
	u_put(&k.w, sizeof(k.w));
}

static void u_req_rec(uint16_t type, uint16_t cpu, uint8_t ctx, const struct ureq *q, uint32_t aux,
		      uint32_t aux2)
{
	struct cw_uring_req r = { 0 };

	hdr_at(&r.hdr, type, sizeof(r), cpu, ctx, 0);
	r.task = u_task(ucur[cpu]);
	r.task_start = u_start(ucur[cpu]);
	r.ring = urings[q->ring].ptr;
	r.req = q->ptr;
	r.user_data = q->user_data;
	r.aux = aux;
	r.aux2 = aux2;
	r.opcode = q->opcode;
	u_put(&r, sizeof(r));
}

static void u_complete_rec(uint16_t cpu, uint8_t ctx, const struct ureq *q, uint32_t cflags)
{
	struct cw_uring_complete c = { 0 };

	hdr_at(&c.hdr, CW_REC_URING_COMPLETE, sizeof(c), cpu, ctx, 0);
	c.task = u_task(ucur[cpu]);
	c.task_start = u_start(ucur[cpu]);
	c.ring = urings[q->ring].ptr;
	c.req = q->ptr;
	c.user_data = q->user_data;
	c.res = q->opcode == 22 || q->opcode == 23 ? 4096 : 0;
	c.cflags = cflags;
	u_put(&c, sizeof(c));
}

static void u_submit_batch(void)
{
	uint32_t t = SUB((uint32_t)below(U_NSUB));
	uint32_t ring = t + U_NSUB * (uint32_t)below(U_NRINGS / U_NSUB);
	uint64_t n = 1 + below(8), prev = 0, prev_ud = 0;
	uint16_t cpu = uthr[t].cpu;

	u_run(t);
	for (uint64_t i = 0; i < n && nufree; i++) {
		struct ureq *q = &ulive[nulive++];
		uint64_t k = below(100);

		q->ptr = ufree[--nufree];
		q->ring = ring;
		q->user_data = urings[ring].next_ud++ % U_UDATA;
		q->kind = k < 63 ? K_IRQ : k < 83 ? K_POLL : k < 93 ? K_PUNT : k < 98 ? K_LINK : K_MULTI;
		q->more = q->kind == K_MULTI ? (uint8_t)(1 + below(3)) : 0;
		q->opcode = q->kind == K_IRQ ? (below(2) ? 22 : 23) :
			    q->kind == K_POLL || q->kind == K_MULTI ? 27 :
			    q->kind == K_PUNT ? 18 : 3;
		u_req_rec(CW_REC_URING_SUBMIT, cpu, CW_CTX_TASK, q, 0, 0);
		if (q->kind == K_PUNT) {
			u_req_rec(CW_REC_URING_PUNT, cpu, CW_CTX_TASK, q, 0, 0);
		} else if (q->kind == K_POLL || q->kind == K_MULTI) {
			u_req_rec(CW_REC_URING_POLL_ARM, cpu, CW_CTX_TASK, q, 1, 1);
		} else if (q->kind == K_LINK && prev) {
			struct cw_uring_link l = { 0 };

			hdr_at(&l.hdr, CW_REC_URING_LINK, sizeof(l), cpu, CW_CTX_TASK, 0);
			l.task = uthr[t].t;
			l.task_start = uthr[t].start;
			l.ring = urings[ring].ptr;
			l.req = q->ptr;
			l.user_data = q->user_data;
			l.target = prev;
			l.target_user_data = prev_ud;
			u_put(&l, sizeof(l));
		}
		prev = q->ptr;
		prev_ud = q->user_data;
	}
}

static void u_complete_one(void)
{
	uint64_t i = below(nulive);
	struct ureq *q = &ulive[i];
	uint32_t owner = urings[q->ring].owner;
	struct cw_cause cause = { .key = q->ptr, .aux = urings[q->ring].ptr, .kind = CW_CAUSE_IO_REQ };
	uint16_t cpu = (uint16_t)below(U_NCPU);

	switch (q->kind) {
	case K_IRQ:
	case K_LINK:
		u_complete_rec(cpu, CW_CTX_HARDIRQ, q, 0);
		if (below(2))
			u_wake(cpu, CW_CTX_HARDIRQ, owner, &cause);
		break;
	case K_POLL:
		u_req_rec(CW_REC_URING_TASK_ADD, cpu, CW_CTX_SOFTIRQ, q, 1, 0);
		u_wake(cpu, CW_CTX_SOFTIRQ, owner, &cause);
		u_run(owner);
		u_complete_rec(uthr[owner].cpu, CW_CTX_TASK, q, 0);
		break;
	case K_PUNT: {
		uint32_t w = WRK((uint32_t)below(U_NWRK));

		u_run(w);
		u_req_rec(CW_REC_URING_WORK, uthr[w].cpu, CW_CTX_TASK, q, 0, 0);
		u_complete_rec(uthr[w].cpu, CW_CTX_TASK, q, 0);
		u_wake(uthr[w].cpu, CW_CTX_TASK, owner, NULL);
		break;
	}
	case K_MULTI:
		u_run(owner);
		u_complete_rec(uthr[owner].cpu, CW_CTX_TASK, q, q->more ? CW_CQE_F_MORE : 0);
		if (q->more--)
			return; /* still armed */
		break;
	}
	ufree[nufree++] = q->ptr;
	*q = ulive[--nulive];
}

static void w_move(uint32_t w, uint8_t state)
{
	struct uwork *k = &uwork[w];
	uint32_t *from = k->state == W_IDLE ? widle : wqueued, *nfrom = k->state == W_IDLE ? &nwidle : &nwqueued;
	uint32_t last = from[--*nfrom];

	from[k->slot] = last;
	uwork[last].slot = k->slot;
	k->state = state;
	if (state == W_IDLE) {
		k->slot = nwidle;
		widle[nwidle++] = w;
	} else {
		k->slot = nwqueued;
		wqueued[nwqueued++] = w;
	}
}

static const char *const wq_names[] = { "events", "kblockd", "writeback", "events_unbound" };

/* Work @w is queued on @cpu by its current task, or with @cause. */
static void w_queue(uint32_t w, uint16_t cpu, const struct cw_cause *cause)
{
	struct cw_wq_queue q = { 0 };

	hdr_at(&q.hdr, CW_REC_WQ_QUEUE, sizeof(q), cpu, CW_CTX_TASK, 0);
	q.task = u_task(ucur[cpu]);
	q.task_start = u_start(ucur[cpu]);
	q.work = WORK_BASE + (uint64_t)w * 64;
	q.function = FN_BASE + uwork[w].fn * 0x400ull;
	snprintf(q.workqueue, sizeof(q.workqueue), "%s", wq_names[uwork[w].fn % 4]);
	q.req_cpu = cpu;
	q.cpu = cpu;
	if (cause)
		q.cause = *cause;
	u_put(&q, sizeof(q));
	if (uwork[w].state == W_IDLE)
		w_move(w, W_QUEUED);
}

static void w_rec(uint16_t type, uint16_t cpu, uint32_t w)
{
	struct cw_wq_work r = { 0 };

	hdr_at(&r.hdr, type, sizeof(r), cpu, CW_CTX_TASK, 0);
	r.task = u_task(ucur[cpu]);
	r.task_start = u_start(ucur[cpu]);
	r.work = WORK_BASE + (uint64_t)w * 64;
	r.function = FN_BASE + uwork[w].fn * 0x400ull;
	u_put(&r, sizeof(r));
}

static void u_wq_step(uint32_t nwork)
{
	if (nwidle && (nwqueued < nwork / 4 * 3 ? below(3) != 0 : below(3) == 0)) {
		uint32_t t = SUB((uint32_t)below(U_NSUB));

		u_run(t);
		w_queue(widle[below(nwidle)], uthr[t].cpu, NULL);
	} else if (nwqueued) {
		uint32_t w = wqueued[below(nwqueued)];
		uint16_t cpu = (uint16_t)below(U_NCPU);
		struct cw_cause cause = { .key = WORK_BASE + (uint64_t)w * 64,
					  .aux = FN_BASE + uwork[w].fn * 0x400ull,
					  .kind = CW_CAUSE_WORK };
		uint64_t r = below(100);

		u_run(KWORKER(cpu));
		/* Its PENDING bit is cleared as it starts: it may be queued
		 * again while it runs. */
		w_move(w, W_IDLE);
		w_rec(CW_REC_WQ_EXEC_START, cpu, w);
		if (r < 30)
			u_wake(cpu, CW_CTX_TASK, SUB((uint32_t)below(U_NSUB)), &cause);
		else if (r < 50 && nwidle)
			w_queue(widle[below(nwidle)], cpu, &cause);
		else if (r < 55)
			w_queue(w, cpu, &cause);
		w_rec(CW_REC_WQ_EXEC_END, cpu, w);
	}
}

static int gen_uring(uint64_t nreq, uint64_t inflight)
{
	uint64_t pool = inflight + inflight / 8 + 64, submitted = 0, next_acct;
	uint32_t nwork = (uint32_t)(inflight / 8 > 1024 ? inflight / 8 : 1024);
	static const uint16_t cls_id[] = { CW_CLASS_SCHED, CW_CLASS_IO_URING, CW_CLASS_WORKQUEUE };

	ulive = calloc(pool, sizeof(*ulive));
	ufree = calloc(pool, sizeof(*ufree));
	uwork = calloc(nwork, sizeof(*uwork));
	widle = calloc(nwork, sizeof(*widle));
	wqueued = calloc(nwork, sizeof(*wqueued));
	if (!ulive || !ufree || !uwork || !widle || !wqueued)
		return -ENOMEM;
	/* The slab: the lowest address is handed out first. */
	for (uint64_t i = 0; i < pool; i++)
		ufree[i] = REQ_BASE + (pool - 1 - i) * 256;
	nufree = pool;
	for (uint32_t w = 0; w < nwork; w++) {
		uwork[w].fn = (uint8_t)below(16);
		uwork[w].slot = w;
		widle[nwidle++] = w;
	}
	/* The snapshot: the server's threads and the kworkers. */
	for (uint32_t t = 0; t < U_NTHR; t++) {
		struct cw_meta_task m = { 0 };
		int kw = t >= KWORKER(0);

		uthr[t].t = kw ? (struct cw_task){ 200 + t, 200 + t } :
				 (struct cw_task){ t == 0 ? 5000 : 5000 + t, 5000 };
		uthr[t].start = 1000000 + t * 1000ull;
		uthr[t].cpu = (uint16_t)(kw ? t - KWORKER(0) : t % U_NCPU);
		hdr_at(&m.hdr, CW_REC_META_TASK, sizeof(m), 0xffff, 0, now);
		m.task = uthr[t].t;
		m.ppid = kw ? 2 : 1;
		if (kw)
			snprintf(m.comm, CW_COMM_LEN, "kworker/%u:1", uthr[t].cpu);
		else if (t >= WRK(0))
			snprintf(m.comm, CW_COMM_LEN, "iou-wrk-5000");
		else
			snprintf(m.comm, CW_COMM_LEN, "server-%u", t);
		put(&m, sizeof(m));
	}
	seal(CW_SEG_META);
	for (uint16_t c = 0; c < U_NCPU; c++)
		ucur[c] = -1;
	for (uint32_t r = 0; r < U_NRINGS; r++) {
		urings[r].ptr = RING_BASE + r * 0x4000ull;
		urings[r].owner = SUB(r % U_NSUB);
		if (r % 4 != 3) {
			struct cw_uring_create c = { 0 };
			uint16_t cpu = uthr[urings[r].owner].cpu;

			step_ns = 0;
			u_run(urings[r].owner);
			hdr_at(&c.hdr, CW_REC_URING_CREATE, sizeof(c), cpu, CW_CTX_TASK, 0);
			c.task = uthr[urings[r].owner].t;
			c.task_start = uthr[urings[r].owner].start;
			c.ring = urings[r].ptr;
			c.sq_entries = 4096;
			c.cq_entries = 65536;
			c.fd = 3 + (int32_t)(r / U_NSUB);
			u_put(&c, sizeof(c));
			now += step_ns + 1000;
		}
	}
	next_acct = now + SEC;
	while (submitted < nreq) {
		uint64_t r = below(100), before = nufree;
		/* Filling up: mostly submissions. In flight: a batch
		 * (4.5 requests on average) for every 4.5 completions. */
		int filling = nulive < inflight;

		step_ns = 0;
		if (r < (filling ? 50u : 10u)) {
			u_submit_batch();
			submitted += before - nufree;
		} else if (r < (filling ? 60u : 55u)) {
			if (nulive)
				u_complete_one();
		} else if (r < 85) {
			u_wq_step(nwork);
		} else {
			u_resched((uint16_t)below(U_NCPU));
		}
		now += step_ns + 100 + below(400);
		if (now >= next_acct) {
			account_classes(U_NCPU, cls_id, sizeof(cls_id) / sizeof(cls_id[0]), now);
			next_acct += SEC;
		}
	}
	fprintf(stderr, "gentrace --uring: %llu requests submitted, %llu in flight at the end, %u work items queued\n",
		(unsigned long long)submitted, (unsigned long long)nulive, nwqueued);
	free(ulive);
	free(ufree);
	free(uwork);
	free(widle);
	free(wqueued);
	return 0;
}

/* ---- --requests: adapter requests handed across threads ---- */

/*
 * Four server processes of 20 threads each, as a capture with the
 * adapter probes (include/causeway.h), CPU samples at 4999 Hz and every
 * wait's stacks (--sample-budget 0) would record them. A discrete-event
 * simulation: every thread runs on one CPU (its index mod NCPUS), a CPU
 * runs one thread at a time or idles, and records are written in time
 * order as things happen.
 *
 * Threads. 8 front threads ("http-N"), 6 middle ("parse-N"), 6 back
 * ("store-N"). A connection arrives (a softirq wake of an idle front
 * thread, no known cause: the client is not traced) about every 1.2 ms
 * per process at 4 CPUs (more often with more CPUs: about 70% busy), or
 * waits in a backlog while every front thread is busy.
 *
 * A request. Its front thread begins it (request_begin, named by its
 * route), computes, and writes it to a pipe a middle thread reads (a
 * plain wake), then waits on its own futex word for the reply. What
 * follows depends on the route (the shapes below), and the reply is a
 * futex wake of the front thread, which computes and ends the request
 * (request_end). So the analyzer's attribution (docs/model.md §6.1)
 * reconstructs the request on the other threads across 1 to 4 hops:
 *  - mid: the middle thread replies itself (1 hop: wake);
 *  - back: it hands over to a back thread through the work queue's
 *    futex (a futex wake), which replies (2: wake, wake);
 *  - mid + io: the middle thread reads through its io_uring and waits;
 *    the completion, in hard-interrupt context on any CPU, wakes it
 *    with the request as cause (3: wake, submit, wake);
 *  - back + io: as back, the back thread reading (4: wake, wake,
 *    submit, wake);
 *  - back + timer: as back, the back thread sleeping (a backoff); its
 *    hrtimer fires on its CPU, told by a fire record that carries the
 *    arm, and wakes it (4: wake, wake, arm, fire).
 * A middle or back thread that finishes with work waiting takes it
 * without blocking, and so carries the request before into it (the
 * limit §6.1 names): with 6 of each that is rare.
 *
 * Samples. Every CPU ticks every 200 us: a CPU sample of the thread it
 * runs, with a user stack from its role's pool (stacks in gentrace and
 * its libraries, as --samples), none while idle. Every blocking switch is
 * a wait (CW_SWITCH_WAIT) whose stacks follow in an off-CPU sample: the
 * kernel's path to __schedule for what it waits in (epoll, futex, pipe,
 * io_uring, nanosleep; named by a kallsyms snapshot in the trace) and a
 * user stack per role and wait. A thread that ran 1 ms with another
 * runnable on its CPU is preempted at a tick.
 *
 * The mappings are the real objects, at fixed addresses rather than
 * where this run has them, so that the file does not change with address
 * space randomization: the same arguments and objects, the same file.
 */
#define R_NPROC 4
#define R_NFRONT 8
#define R_NMID 6
#define R_NBACK 6
#define R_PER (R_NFRONT + R_NMID + R_NBACK)
#define R_NTHR (R_NPROC * R_PER)
#define R_TICK 200040ull     /* 4999 Hz */
#define R_SLICE 1000000ull   /* a thread that ran this long is preempted for a waiting one */
#define R_REQ_CPU 850000ull  /* CPU time of a request, on average over the shapes */
#define R_BACKLOG 64	     /* connections waiting for a front thread, at most */
#define R_KBASE 0xffffffff81100000ull
#define R_MAPBASE 0x7f0000000000ull
#define R_RINGBASE 0xffff888140000000ull
#define R_REQBASE 0xffff888150000000ull
#define R_TIMERBASE 0xffffc90000400000ull /* an hrtimer_sleeper on each thread's stack */
#define R_FUTEXBASE 0x7f3a00000000ull
#define R_STRBASE 0x563a00010000ull	/* where the route names would be */

enum { RO_FRONT, RO_MID, RO_BACK };
enum { RS_BLOCKED, RS_RUNNABLE, RS_RUNNING };
enum { S_MID, S_BACK, S_MID_IO, S_BACK_IO, S_BACK_TIMER };
/* What a blocked thread waits in, which its off-CPU stacks say. */
enum { W_EPOLL, W_FUTEX, W_PIPE, W_IO, W_SLEEP, W_KINDS };
/* What a thread does when it next acts: at its switch-in after a wake,
 * or when its computing ends. */
enum {
	A_BEGIN,   /* front: a connection: the request begins */
	A_HAND,	   /* front: to a middle thread, then wait for the reply */
	A_REPLIED, /* front: the reply came */
	A_END,	   /* front: the request ends */
	A_WORK,	   /* middle, back: woken with a request */
	A_NEXT,	   /* middle, back: reply, hand over, read or sleep */
	A_WOKEN,   /* middle, back: the read completed or the sleep ended */
	A_REPLY,   /* middle, back: reply to the front thread */
};
enum { EV_DONE, EV_TICK, EV_ARRIVE, EV_IO, EV_TIMER, EV_RESCHED, EV_ACCT };

static const struct {
	const char *name;
	uint8_t shape[4]; /* drawn from, one in four each */
} routes[] = {
	{ "GET /health", { S_MID, S_MID, S_MID, S_MID } },
	{ "GET /api/items/:id", { S_BACK, S_BACK, S_BACK_IO, S_MID } },
	{ "GET /api/search", { S_MID_IO, S_MID_IO, S_MID_IO, S_BACK_IO } },
	{ "POST /api/orders", { S_BACK_IO, S_BACK_IO, S_BACK_IO, S_BACK_TIMER } },
	{ "PUT /api/cart", { S_BACK, S_BACK, S_BACK_TIMER, S_BACK_IO } },
	{ "GET /api/users/:id", { S_BACK, S_BACK_IO, S_MID, S_BACK } },
};
#define R_NROUTES (sizeof(routes) / sizeof(routes[0]))

/* The kernel functions of the off-CPU stacks, and of the timers. */
static const char *const r_ksyms[] = {
	"entry_SYSCALL_64_after_hwframe", "do_syscall_64", "__schedule", "schedule",
	"__x64_sys_epoll_wait", "do_epoll_wait", "ep_poll", "schedule_hrtimeout_range",
	"__x64_sys_futex", "do_futex", "futex_wait", "__futex_wait", "futex_wait_queue",
	"__x64_sys_read", "ksys_read", "vfs_read", "pipe_read",
	"__x64_sys_io_uring_enter", "__do_sys_io_uring_enter", "io_cqring_wait",
	"__x64_sys_nanosleep", "hrtimer_nanosleep", "do_nanosleep", "hrtimer_wakeup",
};
#define R_KSYM(i) (R_KBASE + (i) * 0x400ull)
#define R_HRTIMER_WAKEUP R_KSYM(23)
/* Leaf first, by index in r_ksyms. */
static const uint8_t r_kstacks[W_KINDS][10] = {
	[W_EPOLL] = { 2, 3, 7, 6, 5, 4, 1, 0, 0xff },
	[W_FUTEX] = { 2, 3, 12, 11, 10, 9, 8, 1, 0, 0xff },
	[W_PIPE] = { 2, 3, 16, 15, 14, 13, 1, 0, 0xff },
	[W_IO] = { 2, 3, 19, 18, 17, 1, 0, 0xff },
	[W_SLEEP] = { 2, 3, 22, 21, 20, 1, 0, 0xff },
};

struct rthr {
	struct cw_task t;
	uint64_t start;	    /* the witness */
	uint16_t cpu;
	uint8_t role, state, act, wait;
	uint32_t proc;
	int32_t front;	    /* middle, back: the front thread whose request it serves */
	int32_t rq_next;    /* its CPU's run queue */
	uint32_t seq;	    /* its computing's EV_DONE; a preemption voids it */
	uint64_t done;	    /* when its computing ends */
	uint64_t left;	    /* computing left, preempted */
	uint64_t ran;	    /* switched in at */
	uint64_t blocked;   /* blocked at */
	uint64_t futex;	    /* front: the word it waits for the reply on */
	uint64_t ring;	    /* middle, back: its io_uring */
	uint64_t ioreq, user_data, arm_ts;
	uint64_t req_id;    /* front: its request */
	uint8_t route, shape;
};

struct rproc {
	uint32_t pid;
	uint64_t next_id;
	uint32_t backlog;
	uint64_t queue_futex; /* the back threads' work queue */
	/* front threads waiting for a middle one, middle threads' requests
	 * (by front thread) waiting for a back one: FIFOs */
	int32_t midq[R_NFRONT], backq[R_NFRONT];
	uint32_t midq_head, midq_n, backq_head, backq_n;
};

struct rcpu {
	int32_t cur; /* -1: idle */
	int32_t rq_head, rq_tail;
	uint8_t resched; /* an EV_RESCHED is pending */
};

struct rev {
	uint64_t ts;
	uint64_t order; /* events of one time in the order they were made */
	uint32_t arg;	/* a thread, CPU or process */
	uint32_t seq;	/* EV_DONE: the thread's seq when it was made */
	uint8_t kind;
};

static struct rthr rthr[R_NTHR];
static struct rproc rproc[R_NPROC];
static struct rcpu rcpu[MAX_CPUS];
static uint16_t r_ncpu;
static uint64_t r_last, r_user_data, r_reqfree[R_NTHR];
static uint32_t r_nreqfree;
/* The event queue: a binary heap by time. It grows: a preempted
 * thread's EV_DONE stays in it, void, until its time. */
static struct rev *rheap;
static size_t rheap_n, rheap_cap;

static int rev_before(const struct rev *a, const struct rev *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->order < b->order);
}

static void rev_swap(size_t i, size_t j)
{
	struct rev t = rheap[i];

	rheap[i] = rheap[j];
	rheap[j] = t;
}

static void rev_push(uint64_t ts, uint8_t kind, uint32_t arg, uint32_t seq)
{
	static uint64_t order;
	size_t i = rheap_n++;

	if (rheap_n > rheap_cap) {
		rheap_cap = rheap_cap ? 2 * rheap_cap : 1024;
		if (!(rheap = realloc(rheap, rheap_cap * sizeof(*rheap)))) {
			fprintf(stderr, "gentrace: %s\n", strerror(ENOMEM));
			exit(1);
		}
	}
	rheap[i] = (struct rev){ .ts = ts, .order = order++, .arg = arg, .seq = seq, .kind = kind };
	for (; i && rev_before(&rheap[i], &rheap[(i - 1) / 2]); i = (i - 1) / 2)
		rev_swap(i, (i - 1) / 2);
}

static struct rev rev_pop(void)
{
	struct rev top = rheap[0];
	size_t i = 0;

	rheap[0] = rheap[--rheap_n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < rheap_n && rev_before(&rheap[l], &rheap[m]))
			m = l;
		if (r < rheap_n && rev_before(&rheap[r], &rheap[m]))
			m = r;
		if (m == i)
			return top;
		rev_swap(i, m);
		i = m;
	}
}

/* A record's time: the event's, records of one event 10 ns apart. */
static uint64_t r_ts(void)
{
	r_last = now > r_last ? now : r_last + 10;
	return r_last;
}

/* Thread @i, or the idle task (-1): no task, no witness. */
static const struct rthr *r_thr(int32_t i)
{
	static const struct rthr idle;

	return i < 0 ? &idle : &rthr[i];
}

/* A sample of thread @i: CPU (@kind W_KINDS: a user stack of its role's
 * pool) or off-CPU (the stacks of waiting in @kind), at @ts. */
static void r_sample(uint16_t type, uint8_t flags, int32_t i, uint8_t kind, uint64_t ts)
{
	uint64_t rec[(sizeof(struct cw_sample) + (10 + 24) * 8) / 8] = { 0 };
	struct cw_sample *smp = (void *)rec;
	uint64_t *pc = (uint64_t *)(smp + 1);
	const struct rthr *t = &rthr[i];
	unsigned k, nk = 0;
	uint16_t size;

	if (kind == W_KINDS) {
		/* a role's 256 stacks of the pool's 1024 */
		k = t->role * 256u + (unsigned)below(256);
	} else {
		/* the last 64: one user stack per role and wait */
		k = S_STACKS - 64 + t->role * 8u + kind;
		for (; r_kstacks[kind][nk] != 0xff; nk++)
			pc[nk] = R_KSYM(r_kstacks[kind][nk]) + 0x40 + nk;
	}
	for (unsigned d = 0; d < sstacks[k].depth; d++)
		pc[nk + d] = saddrs[sstacks[k].addr[d]];
	size = (uint16_t)(sizeof(*smp) + (nk + sstacks[k].depth) * 8u);
	hdr_at(&smp->hdr, type, size, t->cpu, CW_CTX_TASK, ts);
	smp->hdr.flags = flags;
	smp->task = t->t;
	smp->task_start = t->start;
	smp->period = type == CW_REC_SAMPLE_CPU ? R_TICK : 0;
	smp->keep = CW_KEEP_ALL;
	smp->nkernel = (uint16_t)nk;
	smp->nuser = sstacks[k].depth;
	put_counted(rec, size);
}

static void r_switch(uint16_t cpu, int32_t prev, int32_t next, uint8_t flags, uint64_t prev_state,
		     uint64_t ts)
{
	struct cw_switch s = { 0 };

	hdr_at(&s.hdr, CW_REC_SWITCH, sizeof(s), cpu, CW_CTX_TASK, ts);
	s.hdr.flags = flags;
	s.prev = r_thr(prev)->t;
	s.next = r_thr(next)->t;
	s.prev_state = prev_state;
	s.prev_prio = s.next_prio = 120;
	s.prev_start = r_thr(prev)->start;
	s.next_start = r_thr(next)->start;
	s.keep = flags & CW_SWITCH_WAIT ? CW_KEEP_ALL : 0;
	put_counted(&s, sizeof(s));
	rcpu[cpu].cur = next;
}

static void rq_push(uint16_t cpu, int32_t i)
{
	struct rcpu *c = &rcpu[cpu];

	rthr[i].rq_next = -1;
	if (c->rq_tail >= 0)
		rthr[c->rq_tail].rq_next = i;
	else
		c->rq_head = i;
	c->rq_tail = i;
}

static int32_t rq_pop(uint16_t cpu)
{
	struct rcpu *c = &rcpu[cpu];
	int32_t i = c->rq_head;

	if (i >= 0 && (c->rq_head = rthr[i].rq_next) < 0)
		c->rq_tail = -1;
	return i;
}

static void r_act(int32_t i);

/* Thread @i computes for @ns, then does @act. */
static void r_compute(int32_t i, uint64_t ns, uint8_t act)
{
	struct rthr *t = &rthr[i];

	t->act = act;
	t->done = r_last + ns;
	rev_push(t->done, EV_DONE, (uint32_t)i, ++t->seq);
}

/* Thread @i has been switched in: it goes on computing where it was
 * preempted, or acts on what woke it. */
static void r_run(int32_t i)
{
	struct rthr *t = &rthr[i];

	t->state = RS_RUNNING;
	t->ran = r_last;
	if (t->left) {
		t->done = r_last + t->left;
		t->left = 0;
		rev_push(t->done, EV_DONE, (uint32_t)i, ++t->seq);
	} else {
		r_act(i);
	}
}

/* Thread @i, running, blocks in @wait until a wake, then does @act: the
 * switch is the wait, its stacks follow (every wait's, --sample-budget
 * 0), and the CPU runs the next runnable thread or idles. */
static void r_block(int32_t i, uint8_t wait, uint8_t act)
{
	struct rthr *t = &rthr[i];
	uint64_t ts = r_ts();
	int32_t next = rq_pop(t->cpu);

	t->state = RS_BLOCKED;
	t->wait = wait;
	t->act = act;
	t->blocked = ts;
	r_switch(t->cpu, i, next, CW_SWITCH_WAIT | CW_SWITCH_STACKS, 1, ts);
	r_sample(CW_REC_SAMPLE_OFFCPU, CW_SAMPLE_EVERY_WAIT | CW_SAMPLE_AT_SWITCH, i, wait, ts);
	if (next >= 0)
		r_run(next);
}

/* @waker (task context) or the task an interrupt came in (@ctx), on
 * @cpu, wakes blocked thread @i, naming @cause when there is one. An idle
 * CPU switches to it a few microseconds later; a busy one when its
 * thread blocks or is preempted. */
static void r_wake(uint16_t cpu, uint8_t ctx, int32_t waker, int32_t i,
		   const struct cw_cause *cause)
{
	struct cw_wake_caused k = { 0 };
	struct rthr *t = &rthr[i];
	uint16_t size = cause ? sizeof(k) : sizeof(k.w);

	hdr_at(&k.w.hdr, cause ? CW_REC_WAKING_CAUSED : CW_REC_WAKING, size, cpu, ctx, r_ts());
	k.w.waker = r_thr(waker)->t;
	k.w.wakee = t->t;
	k.w.target_cpu = t->cpu;
	k.w.wakee_prio = 120;
	k.w.waker_start = r_thr(waker)->start;
	k.w.wakee_start = t->start;
	if (cause)
		k.cause = *cause;
	put_counted(&k, size);
	t->state = RS_RUNNABLE;
	rq_push(t->cpu, i);
	if (rcpu[t->cpu].cur < 0 && !rcpu[t->cpu].resched) {
		rcpu[t->cpu].resched = 1;
		rev_push(r_last + 2000 + below(8000), EV_RESCHED, t->cpu, 0);
	}
}

/* One futex call of thread @i, told at its return. */
static void r_futex(int32_t i, uint32_t op, uint64_t uaddr, uint64_t enter, int64_t ret)
{
	struct cw_futex f = { 0 };
	struct rthr *t = &rthr[i];

	hdr_at(&f.hdr, CW_REC_FUTEX, sizeof(f), t->cpu, CW_CTX_TASK, r_ts());
	f.task = t->t;
	f.task_start = t->start;
	f.uaddr = uaddr;
	f.enter_ns = enter;
	f.ret = ret;
	f.op = op;
	f.val = op == 0x81 ? 1 : 0;
	f.call = CW_FUTEX_CALL_FUTEX;
	put_counted(&f, sizeof(f));
}

/* Thread @i wakes @wakee through the futex word @uaddr
 * (FUTEX_WAKE_PRIVATE): the wake names the futex as its cause. */
static void r_futex_wake(int32_t i, int32_t wakee, uint64_t uaddr)
{
	struct cw_cause cause = { .key = uaddr, .aux = 0x81, .kind = CW_CAUSE_FUTEX };
	uint64_t enter = r_ts();

	r_wake(rthr[i].cpu, CW_CTX_TASK, i, wakee, &cause);
	r_futex(i, 0x81, uaddr, enter, 1);
}

/* The request's begin or end on front thread @i. */
static void r_usdt(int32_t i, uint32_t probe)
{
	struct cw_usdt_str u = { 0 };
	struct rthr *t = &rthr[i];
	uint16_t size = probe == 1 ? sizeof(u) : sizeof(u.u);

	hdr_at(&u.u.hdr, probe == 1 ? CW_REC_USDT_STR : CW_REC_USDT, size, t->cpu, CW_CTX_TASK,
	       r_ts());
	u.u.task = t->t;
	u.u.task_start = t->start;
	u.u.probe = probe;
	u.u.nargs = 2;
	u.u.args[0] = (int64_t)t->req_id;
	u.u.args[1] = probe == 1 ? (int64_t)(R_STRBASE + t->route * 64u) : 200;
	if (probe == 1)
		snprintf(u.str, sizeof(u.str), "%s", routes[t->route].name);
	put_counted(&u, size);
}

/* Middle or back thread @i reads through its io_uring and waits. */
static void r_submit(int32_t i)
{
	struct cw_uring_req r = { 0 };
	struct rthr *t = &rthr[i];

	t->ioreq = r_reqfree[--r_nreqfree];
	hdr_at(&r.hdr, CW_REC_URING_SUBMIT, sizeof(r), t->cpu, CW_CTX_TASK, r_ts());
	r.task = t->t;
	r.task_start = t->start;
	r.ring = t->ring;
	r.req = t->ioreq;
	r.user_data = t->user_data = ++r_user_data;
	r.opcode = 22; /* IORING_OP_READ */
	put_counted(&r, sizeof(r));
	/* a disk's latency: 50 us to 1 ms */
	rev_push(r_last + 50000 + below(950000), EV_IO, (uint32_t)i, 0);
	r_block(i, W_IO, A_WOKEN);
}

/* The read of thread @i completes, in hard-interrupt context on any CPU,
 * and wakes it with the request as cause. */
static void r_complete(int32_t i)
{
	struct rthr *t = &rthr[i];
	uint16_t cpu = (uint16_t)below(r_ncpu);
	int32_t cur = rcpu[cpu].cur;
	struct cw_uring_complete c = { 0 };
	struct cw_cause cause = { .key = t->ioreq, .aux = t->ring, .kind = CW_CAUSE_IO_REQ };

	hdr_at(&c.hdr, CW_REC_URING_COMPLETE, sizeof(c), cpu, CW_CTX_HARDIRQ, r_ts());
	c.task = r_thr(cur)->t;
	c.task_start = r_thr(cur)->start;
	c.ring = t->ring;
	c.req = t->ioreq;
	c.user_data = t->user_data;
	c.res = 4096;
	put_counted(&c, sizeof(c));
	r_wake(cpu, CW_CTX_HARDIRQ, cur, i, &cause);
	r_reqfree[r_nreqfree++] = t->ioreq;
}

/* The back thread @i's sleep ends: its hrtimer fires on its CPU, told
 * with its arm (format 1.7), and wakes it. */
static void r_fire(int32_t i)
{
	struct rthr *t = &rthr[i];
	int32_t cur = rcpu[t->cpu].cur;
	uint64_t timer = R_TIMERBASE + (uint64_t)i * 0x4000;
	struct cw_timer_fire f = { 0 };
	struct cw_cause cause = { .key = timer, .aux = R_HRTIMER_WAKEUP, .kind = CW_CAUSE_HRTIMER };

	hdr_at(&f.ev.hdr, CW_REC_TIMER_FIRE, sizeof(f), t->cpu, CW_CTX_HARDIRQ, r_ts());
	f.ev.task = r_thr(cur)->t;
	f.ev.task_start = r_thr(cur)->start;
	f.ev.timer = timer;
	f.ev.function = R_HRTIMER_WAKEUP;
	f.ev.now = (int64_t)r_last;
	f.ev.kind = CW_TIMER_HR;
	f.arm.ts = t->arm_ts;
	f.arm.task = t->t;
	f.arm.task_start = t->start;
	f.arm.expires = f.arm.softexpires = (int64_t)r_last;
	f.arm.mode = 1; /* HRTIMER_MODE_REL */
	f.arm.cpu = t->cpu;
	f.arm.ctx = CW_CTX_TASK;
	put_counted(&f, sizeof(f));
	r_wake(t->cpu, CW_CTX_HARDIRQ, cur, i, &cause);
}

static int32_t fifo_pop(int32_t *q, uint32_t *head, uint32_t *n)
{
	int32_t v;

	if (!*n)
		return -1;
	v = q[*head];
	*head = (*head + 1) % R_NFRONT;
	(*n)--;
	return v;
}

static void fifo_push(int32_t *q, uint32_t head, uint32_t *n, int32_t v)
{
	q[(head + (*n)++) % R_NFRONT] = v;
}

/* A thread of @p with @role blocked in @wait (idle), or -1. */
static int32_t r_idle(const struct rproc *p, uint8_t role, uint8_t wait)
{
	uint32_t base = (uint32_t)(p - rproc) * R_PER, first, n;

	first = role == RO_FRONT ? 0 : role == RO_MID ? R_NFRONT : R_NFRONT + R_NMID;
	n = role == RO_FRONT ? R_NFRONT : role == RO_MID ? R_NMID : R_NBACK;
	/* from a random one on, so that the work spreads over the pool */
	for (uint32_t k = 0, o = (uint32_t)below(n); k < n; k++) {
		const struct rthr *t = &rthr[base + first + (o + k) % n];

		if (t->state == RS_BLOCKED && t->wait == wait)
			return (int32_t)(base + first + (o + k) % n);
	}
	return -1;
}

/* Middle or back thread @i is done with its request: the next one
 * waiting, without blocking (it carries the request before into it), or
 * it blocks for one. */
static void r_done(int32_t i)
{
	struct rthr *t = &rthr[i];
	struct rproc *p = &rproc[t->proc];

	t->front = t->role == RO_MID ? fifo_pop(p->midq, &p->midq_head, &p->midq_n) :
				       fifo_pop(p->backq, &p->backq_head, &p->backq_n);
	if (t->front >= 0)
		r_compute(i, t->role == RO_MID ? 100000 + below(500000) : 100000 + below(700000),
			  A_NEXT);
	else
		r_block(i, t->role == RO_MID ? W_PIPE : W_FUTEX, A_WORK);
}

static void r_act(int32_t i)
{
	struct rthr *t = &rthr[i];
	struct rproc *p = &rproc[t->proc];
	int32_t o;

	switch (t->act) {
	case A_BEGIN:
		t->req_id = p->next_id++;
		t->route = (uint8_t)below(R_NROUTES);
		t->shape = routes[t->route].shape[below(4)];
		r_usdt(i, 1);
		r_compute(i, 30000 + below(120000), A_HAND);
		break;
	case A_HAND:
		/* a pipe write: a plain wake of a middle thread blocked
		 * reading, or the request waits in the pipe */
		if ((o = r_idle(p, RO_MID, W_PIPE)) >= 0) {
			rthr[o].front = i;
			r_wake(t->cpu, CW_CTX_TASK, i, o, NULL);
		} else {
			fifo_push(p->midq, p->midq_head, &p->midq_n, i);
		}
		r_block(i, W_FUTEX, A_REPLIED);
		break;
	case A_REPLIED:
		r_futex(i, 0x80, t->futex, t->blocked - 500, 0);
		r_compute(i, 20000 + below(60000), A_END);
		break;
	case A_END:
		r_usdt(i, 2);
		if (p->backlog) {
			p->backlog--;
			t->act = A_BEGIN;
			r_act(i);
		} else {
			r_block(i, W_EPOLL, A_BEGIN);
		}
		break;
	case A_WORK:
		if (t->role == RO_BACK)
			r_futex(i, 0x80, p->queue_futex, t->blocked - 500, 0);
		r_compute(i, t->role == RO_MID ? 100000 + below(500000) : 100000 + below(700000),
			  A_NEXT);
		break;
	case A_NEXT:
		if (rthr[t->front].shape == (t->role == RO_MID ? S_MID : S_BACK)) {
			t->act = A_REPLY;
			r_act(i);
		} else if (rthr[t->front].shape == (t->role == RO_MID ? S_MID_IO : S_BACK_IO)) {
			r_submit(i);
		} else if (t->role == RO_BACK) {
			/* S_BACK_TIMER, a backoff: nanosleep arms the
			 * thread's hrtimer_sleeper, told when it fires */
			t->arm_ts = r_ts();
			rev_push(r_last + 100000 + below(1900000), EV_TIMER, (uint32_t)i, 0);
			r_block(i, W_SLEEP, A_WOKEN);
		} else {
			/* to a back thread through the work queue's futex,
			 * or the request waits in the queue */
			if ((o = r_idle(p, RO_BACK, W_FUTEX)) >= 0) {
				rthr[o].front = t->front;
				r_futex_wake(i, o, p->queue_futex);
			} else {
				fifo_push(p->backq, p->backq_head, &p->backq_n, t->front);
			}
			r_done(i);
		}
		break;
	case A_WOKEN:
		r_compute(i, 50000 + below(150000), A_REPLY);
		break;
	case A_REPLY:
		r_futex_wake(i, t->front, rthr[t->front].futex);
		r_done(i);
		break;
	}
}

static void r_kv(const char *key, const char *val)
{
	uint64_t rec[32] = { 0 };
	struct cw_meta_kv *kv = (void *)rec;
	size_t klen = strlen(key), vlen = strlen(val);
	size_t size = (sizeof(*kv) + klen + vlen + 7) & ~(size_t)7;

	hdr_at(&kv->hdr, CW_REC_META_KV, (uint16_t)size, 0xffff, CW_CTX_TASK, now);
	kv->key_len = (uint16_t)klen;
	kv->val_len = (uint16_t)vlen;
	memcpy(kv + 1, key, klen);
	memcpy((char *)(kv + 1) + klen, val, vlen);
	put(rec, size);
}

/* The metadata a capture -F 4999 --sample-budget 0 of the servers would
 * write: the settings, the kallsyms snapshot, the threads, the adapter
 * probes, the mappings. */
static void r_meta(void)
{
	static const char *const role_comm[] = { "http", "parse", "store" };
	static const char *const probes[] = { "request_begin", "request_end" };
	char ks[2048], ncpus[16];
	uint64_t rec[(sizeof(struct cw_meta_blob) + sizeof(ks) + 8) / 8] = { 0 };
	struct cw_meta_blob *b = (void *)rec;
	size_t len = 0;

	snprintf(ncpus, sizeof(ncpus), "%u", r_ncpu);
	r_kv("ncpus", ncpus);
	r_kv("classes", "sched,io_uring,timer,futex,usdt");
	r_kv("sample_freq", "4999");
	r_kv("offcpu", "1");
	r_kv("call_graph", "fp");
	r_kv("sample_budget", "0");
	for (size_t k = 0; k < sizeof(r_ksyms) / sizeof(r_ksyms[0]); k++)
		len += (size_t)snprintf(ks + len, sizeof(ks) - len, "%016llx T %s\n",
					(unsigned long long)R_KSYM(k), r_ksyms[k]);
	hdr_at(&b->hdr, CW_REC_META_KSYMS, (uint16_t)((sizeof(*b) + len + 7) & ~(size_t)7), 0xffff,
	       CW_CTX_TASK, now);
	b->len = (uint32_t)len;
	memcpy(b + 1, ks, len);
	put(rec, b->hdr.size);
	for (uint32_t i = 0; i < R_NTHR; i++) {
		struct cw_meta_task m = { 0 };
		const struct rthr *t = &rthr[i];
		uint32_t n = i % R_PER;

		hdr_at(&m.hdr, CW_REC_META_TASK, sizeof(m), 0xffff, CW_CTX_TASK, now);
		m.task = t->t;
		m.ppid = 1;
		n -= t->role == RO_FRONT ? 0 : t->role == RO_MID ? R_NFRONT : R_NFRONT + R_NMID;
		snprintf(m.comm, sizeof(m.comm), "%s-%u", role_comm[t->role], n);
		put(&m, sizeof(m));
	}
	for (uint32_t k = 0; k < 2; k++) {
		const char *path = "/srv/app/bin/server";
		uint64_t prec[16] = { 0 };
		struct cw_usdt_probe *u = (void *)prec;
		size_t pl = strlen("causeway"), nl = strlen(probes[k]), al = strlen(path);
		size_t size = (sizeof(*u) + pl + nl + al + 7) & ~(size_t)7;

		hdr_at(&u->hdr, CW_REC_META_USDT, (uint16_t)size, 0xffff, CW_CTX_TASK, now);
		u->id = k + 1;
		u->nargs = 2;
		u->str_arg = k ? CW_USDT_NO_STR : 1;
		u->provider_len = (uint16_t)pl;
		u->name_len = (uint16_t)nl;
		u->path_len = (uint16_t)al;
		memcpy(u + 1, "causeway", pl);
		memcpy((char *)(u + 1) + pl, probes[k], nl);
		memcpy((char *)(u + 1) + pl + nl, path, al);
		put(prec, size);
	}
	/* The real objects at fixed addresses, 256 MiB apart. */
	read_smaps();
	for (unsigned k = 0; k < nsmaps; k++) {
		uint64_t len = smaps[k].end - smaps[k].start;

		smaps[k].start = R_MAPBASE + k * 0x10000000ull;
		smaps[k].end = smaps[k].start + (len < 0x10000000ull ? len : 0x10000000ull);
	}
	for (uint32_t p = 0; p < R_NPROC; p++)
		put_smaps(rproc[p].pid);
	fill_stack_pools();
}

static int gen_requests(uint64_t nevents, uint16_t ncpu)
{
	static const uint16_t r_classes[] = { CW_CLASS_SCHED, CW_CLASS_IO_URING, CW_CLASS_TIMER,
					      CW_CLASS_FUTEX, CW_CLASS_ADAPTER, CW_CLASS_SAMPLE };
	/* A connection per process about this often keeps the CPUs about
	 * 70% busy. */
	uint64_t gap = R_REQ_CPU * R_NPROC * 10 / (7ull * ncpu);

	r_ncpu = ncpu;
	for (uint32_t p = 0; p < R_NPROC; p++) {
		rproc[p].pid = 7000 + p * 100;
		rproc[p].next_id = 1;
		rproc[p].queue_futex = R_FUTEXBASE + p * 0x100000ull;
	}
	for (uint32_t i = 0; i < R_NTHR; i++) {
		struct rthr *t = &rthr[i];
		uint32_t n = i % R_PER;

		t->proc = i / R_PER;
		t->role = n < R_NFRONT ? RO_FRONT : n < R_NFRONT + R_NMID ? RO_MID : RO_BACK;
		t->t = (struct cw_task){ rproc[t->proc].pid + n, rproc[t->proc].pid };
		t->start = 1000000 + i * 1000ull;
		t->cpu = (uint16_t)(i % ncpu);
		/* idle: fronts wait for connections, the others for work */
		t->state = RS_BLOCKED;
		t->wait = t->role == RO_FRONT ? W_EPOLL : t->role == RO_MID ? W_PIPE : W_FUTEX;
		t->act = t->role == RO_FRONT ? A_BEGIN : A_WORK;
		t->front = -1;
		t->futex = rproc[t->proc].queue_futex + 0x1000 + n * 0x40ull;
		t->ring = R_RINGBASE + i * 0x4000ull;
		r_reqfree[r_nreqfree++] = R_REQBASE + i * 0x100ull;
	}
	r_meta();
	seal(CW_SEG_META);
	r_last = now;
	for (uint16_t c = 0; c < ncpu; c++) {
		rcpu[c] = (struct rcpu){ .cur = -1, .rq_head = -1, .rq_tail = -1 };
		rev_push(now + R_TICK * c / ncpu, EV_TICK, c, 0);
	}
	/* the rings, made by their threads as the servers started */
	for (uint32_t i = 0; i < R_NTHR; i++) {
		struct cw_uring_create c = { 0 };

		if (rthr[i].role == RO_FRONT)
			continue;
		hdr_at(&c.hdr, CW_REC_URING_CREATE, sizeof(c), rthr[i].cpu, CW_CTX_TASK, r_ts());
		c.task = rthr[i].t;
		c.task_start = rthr[i].start;
		c.ring = rthr[i].ring;
		c.sq_entries = 256;
		c.cq_entries = 512;
		c.fd = 5;
		put_counted(&c, sizeof(c));
	}
	for (uint32_t p = 0; p < R_NPROC; p++)
		rev_push(now + below(gap), EV_ARRIVE, p, 0);
	rev_push(now + SEC, EV_ACCT, 0, 0);
	while (written < nevents) {
		struct rev e = rev_pop();
		struct rcpu *c = e.kind == EV_TICK || e.kind == EV_RESCHED ? &rcpu[e.arg] : NULL;
		int32_t f;

		now = e.ts;
		switch (e.kind) {
		case EV_DONE:
			if (e.seq == rthr[e.arg].seq && rthr[e.arg].state == RS_RUNNING)
				r_act((int32_t)e.arg);
			break;
		case EV_TICK:
			if (c->cur >= 0) {
				struct rthr *r = &rthr[c->cur];

				r_sample(CW_REC_SAMPLE_CPU, 0, c->cur, W_KINDS, r_ts());
				if (c->rq_head >= 0 && now - r->ran >= R_SLICE) {
					int32_t prev = c->cur, next = rq_pop((uint16_t)e.arg);

					r->left = r->done > now ? r->done - now : 1;
					r->seq++;
					r->state = RS_RUNNABLE;
					rq_push((uint16_t)e.arg, prev);
					r_switch((uint16_t)e.arg, prev, next, CW_SWITCH_PREEMPT, 0, r_ts());
					r_run(next);
				}
			}
			rev_push(now + R_TICK, EV_TICK, e.arg, 0);
			break;
		case EV_ARRIVE: {
			struct rproc *p = &rproc[e.arg];
			uint16_t cpu = (uint16_t)below(ncpu);

			if ((f = r_idle(p, RO_FRONT, W_EPOLL)) >= 0)
				r_wake(cpu, CW_CTX_SOFTIRQ, rcpu[cpu].cur, f, NULL);
			else if (p->backlog < R_BACKLOG)
				p->backlog++;
			rev_push(now + 1 + below(2 * gap), EV_ARRIVE, e.arg, 0);
			break;
		}
		case EV_IO:
			r_complete((int32_t)e.arg);
			break;
		case EV_TIMER:
			r_fire((int32_t)e.arg);
			break;
		case EV_RESCHED:
			c->resched = 0;
			if (c->cur < 0 && (f = rq_pop((uint16_t)e.arg)) >= 0) {
				r_switch((uint16_t)e.arg, -1, f, 0, 0, r_ts());
				r_run(f);
			}
			break;
		case EV_ACCT:
			account_classes(ncpu, r_classes, sizeof(r_classes) / sizeof(r_classes[0]), r_ts());
			rev_push(now + SEC, EV_ACCT, 0, 0);
			break;
		}
	}
	free(rheap);
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

/* Gap records (format 1.5) built to cost: every CPU number up to 65534,
 * spans that are whole, inverted or from time 0, and accounting records
 * whose losses no gap record reports on other CPUs, each of which then
 * puts its CPU in doubt to the end. */
static int gen_gaps(uint64_t n)
{
	seal(CW_SEG_META);
	for (uint64_t i = 0; i < n; i++) {
		struct cw_gap g = { 0 };
		uint16_t cpu = (uint16_t)(i * 7919 % 65535);
		struct cw_account a = { 0 };

		now += 1000;
		hdr_at(&g.hdr, CW_REC_GAP, sizeof(g), cpu, CW_CTX_TASK, now);
		g.first_ns = i % 3 == 0 ? 0 : i % 3 == 1 ? now + 5 : now - 500;
		g.lost = 1 + i % 5;
		put(&g, sizeof(g));
		hdr_at(&a.hdr, CW_REC_ACCOUNT, sizeof(a), (uint16_t)(cpu ^ 1), CW_CTX_TASK, now);
		a.window_ns = 4000;
		a.written = 10;
		a.lost = 7;
		a.ring = CW_RING_EDGE;
		a.class = CW_CLASS_SCHED;
		put(&a, sizeof(a));
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: gentrace OUT.cwt NEVENTS [LIVE_THREADS]\n"
			"       gentrace --system OUT.cwt NEVENTS [NCPUS]\n"
			"       gentrace --uring OUT.cwt NREQUESTS [INFLIGHT]\n"
			"       gentrace --samples OUT.cwt NEVENTS [LIVE_THREADS]\n"
			"       gentrace --requests OUT.cwt NEVENTS [NCPUS]\n"
			"       gentrace --new-tids OUT.cwt NWAKES\n"
			"       gentrace --lossy OUT.cwt NRECORDS\n"
			"       gentrace --gaps OUT.cwt NRECORDS\n");
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
		err = gen_busy(n, argc > 3 ? (uint32_t)number(argv[3], 1, 1u << 24) : 2000, 0);
	else if (!strcmp(mode, "--samples"))
		err = gen_busy(n, argc > 3 ? (uint32_t)number(argv[3], 1, 1u << 24) : 2000, 1);
	else if (!strcmp(mode, "--system"))
		err = gen_system(n, argc > 3 ? (uint16_t)number(argv[3], 1, MAX_CPUS) : 8);
	else if (!strcmp(mode, "--uring"))
		err = gen_uring(n, argc > 3 ? number(argv[3], 1, 1ull << 30) : 1000000);
	else if (!strcmp(mode, "--requests"))
		err = gen_requests(n, argc > 3 ? (uint16_t)number(argv[3], 1, MAX_CPUS) : 4);
	else if (!strcmp(mode, "--new-tids") && argc == 3)
		err = gen_new_tids(n);
	else if (!strcmp(mode, "--lossy") && argc == 3)
		err = gen_lossy(n);
	else if (!strcmp(mode, "--gaps") && argc == 3)
		err = gen_gaps(n);
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
