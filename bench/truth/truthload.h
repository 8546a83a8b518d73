/* SPDX-License-Identifier: MIT */
/*
 * truthload: the ground-truth benchmark workload (bench/truth/FORMAT.md).
 * What its three files share: the knobs, the per-thread context, the
 * truth records kept in memory during the run, and small helpers.
 *
 *   truthload.c       options, threads (front, worker), request flow,
 *                     accounting, writing the truth file
 *   truthload_mech.c  the per-thread mechanisms: sync, io_uring,
 *                     workqueue (pty), timers
 *   truthload_rt.c    the work-stealing task runtime and the cache
 */
#ifndef CAUSEWAY_TRUTHLOAD_H
#define CAUSEWAY_TRUTHLOAD_H

#include <errno.h>
#include <linux/futex.h>
#include <liburing.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64	  /* per role: clients, workers, runtime threads */
#define MAX_QDEPTH 16	  /* --queue-depth */
#define MAX_CHAIN 32	  /* elements of --chain */
#define NWORDS 64	  /* rotating futex words per thread (one per wait) */
#define APP_POOL 4	  /* request ids per client, reused */
#define APP_BASE 900000	  /* request ids start here (never a truth id) */

/* ---- chain elements ---------------------------------------------------- */
enum elem { EL_SYNC, EL_FUTEX, EL_URING, EL_WQ, EL_TIMER, EL_TASK, EL_CACHE, EL_N };

/* ---- truth vocabulary (FORMAT.md) --------------------------------------- */
enum mech { M_FUTEX, M_URING, M_URING_MS, M_URING_LINK, M_WQ, M_TIMER, M_TIMERFD, M_TASK,
	    M_RWAIT, M_N };
enum rule { R_DIRECT, R_OBJECT, R_WAIT };
enum etype { E_SUBMIT, E_QUEUE, E_ARM, E_SPAWN, E_WAKE, E_COMPLETE, E_FIRE, E_RESUME };
enum otype { O_IO, O_WORK, O_TIMER, O_TASK, O_RESOURCE, O_THREAD };

#define HF_CANCELLED 1u
#define HF_REUSED 2u
#define HF_NESTED 4u

/*
 * One hop, filled in by the threads that see its parts (the cause's
 * thread, then often the effect's); written out only when valid. Times
 * are CLOCK_MONOTONIC ns. A tid of 0 or an id of -1 is '-'.
 */
struct hop {
	uint64_t rid;
	uintptr_t addr; /* a direct hop: the futex word it woke */
	int64_t src_task, src_req, obj_key;
	const char *obj_name;
	uint64_t a0, a1, c0, c1;
	int32_t src_tid, dst_tid;
	uint8_t mech, rule, cause, otype, effect, flags, valid;
};

/* One stretch a thread held a request: summed per (rid, tid) at the end. */
struct stretch {
	uint64_t rid;
	int32_t tid;
	uint64_t cpu_ns, wall_ns;
};

struct reqrec {
	uint64_t app;
	int32_t origin;
	uint64_t b0, b1, e0, e1;
	int done;
};

/* ---- options -------------------------------------------------------------- */
#define FLAT_MAX 64 /* --flat: the functions burn_us can spread over */
struct opts {
	long requests, clients, fanout, workers, qdepth, reuse, cancel, nested;
	long work_us, sleep_us, cache_entries, rate, rt_threads, noise, flat;
	int affine;
	int chain[MAX_CHAIN], nchain, futex_at; /* futex_at: index of futex, or nchain */
	const char *chain_str, *truth;
};
extern struct opts opt;

/* ---- per-thread context ---------------------------------------------------- */
enum role { ROLE_MAIN, ROLE_FRONT, ROLE_WORKER, ROLE_RUNTIME, ROLE_PTYREADER };

struct ptyreader;

struct tctx {
	int32_t tid;
	int role, index;
	int64_t cur_app;  /* request open on this thread (adapter id), -1 none */
	int64_t cur_task; /* task polled on this thread, -1 none */
	uint64_t rng;

	/* accounting: the open stretch */
	uint64_t acct_rid, acct_cpu, acct_wall, acct_end;
	int acct_open;

	/* futex words, one per wait, so a late wake never hits a later wait */
	_Atomic uint32_t words[NWORDS];
	unsigned wseq;

	/* io_uring: the thread's own ring */
	int has_io;
	struct io_uring ring;
	int pipes[MAX_QDEPTH][2], linkp[2], sv[2];
	char pbuf[MAX_QDEPTH][64], fbuf[MAX_QDEPTH][128], lbuf[16];
	struct io_uring_buf_ring *br;
	char *msbufs;
	int ms_armed, ms_arms;
	uint64_t ms_a0, ms_a1;
	int64_t ms_arm_req; /* the request open when it was armed, -1 none */
	uint64_t ud_next;
	uint8_t *ud_used; /* per pool value: used on this ring before */
	unsigned long ms_seq;

	/* pty (workqueue): the master, and the thread that reads the slave */
	int ptm;
	struct ptyreader *pr;
	int tfd;
};

/* ---- truth storage (truthload.c) ----------------------------------------- */
extern struct hop *hops;
extern size_t hops_cap;
extern _Atomic size_t nhops;
extern _Atomic long tfd_nosleep, futex_nowake, rwait_nowake;

size_t hop_new(struct tctx *t, uint64_t rid, int mech, int rule, int cause, int otype,
	       int64_t key, const char *name, int effect);
static inline struct hop *H(size_t i)
{
	return &hops[i];
}
#define HOP_NONE ((size_t)-1)

void ctx_init(struct tctx *t, int role, int index); /* and registers it */
int chain_has(int e);
void acct_start(struct tctx *t, uint64_t rid, uint64_t wall_now);
void acct_stop(struct tctx *t);

_Noreturn void die(const char *what, int err);

/* ---- mechanisms (truthload_mech.c) ---------------------------------------- */
void ctx_io_init(struct tctx *t);
void ctx_io_exit(struct tctx *t);
void mech_global_init(void);
void el_sync(struct tctx *t, uint64_t rid);
void el_uring(struct tctx *t, uint64_t rid, int affine);
void el_wq(struct tctx *t, uint64_t rid);
void el_timer(struct tctx *t, uint64_t rid);
void burn_us(long us);

/* ---- runtime and cache (truthload_rt.c) ------------------------------------ */
void rt_start(void);
void rt_stop(void);
void el_task(struct tctx *t, uint64_t rid);
void cache_init(void);
void el_cache(struct tctx *t, uint64_t rid);

/* ---- helpers ------------------------------------------------------------------ */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline int32_t gettid_(void)
{
	return (int32_t)syscall(SYS_gettid);
}

static inline long futex_wake(_Atomic uint32_t *w, int n)
{
	return syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* futex_wait(), logged: a direct hop's window is narrowed to the wait its
 * wake ended (truthload.c, narrow()). */
void futex_wait(struct tctx *t, _Atomic uint32_t *w, uint32_t val);
void wake_direct(struct tctx *from, uint64_t rid, _Atomic uint32_t *w, int32_t dst);

/* A fresh futex word of @t, set to 0: the next NWORDS waits use others. */
static inline _Atomic uint32_t *fresh_word(struct tctx *t)
{
	_Atomic uint32_t *w = &t->words[t->wseq++ % NWORDS];

	atomic_store(w, 0);
	return w;
}

/* Until *w is not 0 (it is set before it is woken). */
static inline void wait_word(struct tctx *t, _Atomic uint32_t *w)
{
	while (atomic_load(w) == 0)
		futex_wait(t, w, 0);
}

/* xorshift64*: per-thread dice. */
static inline uint64_t rnd(struct tctx *t)
{
	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	return t->rng * 2685821657736338717ull;
}

static inline int percent(struct tctx *t, long p)
{
	return (long)(rnd(t) % 100) < p;
}

/* A spinlock that yields when its holder is off-CPU: no futex ever, so
 * the only futex wakes of the workload are the ones the truth names. */
typedef struct {
	atomic_flag f;
} spin_t;
#define SPIN_INIT { ATOMIC_FLAG_INIT }

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static inline void spin_lock(spin_t *s)
{
	unsigned n = 0;

	while (atomic_flag_test_and_set_explicit(&s->f, memory_order_acquire))
		if (++n % 64 == 0)
			sched_yield();
		else
			cpu_relax();
}

static inline void spin_unlock(spin_t *s)
{
	atomic_flag_clear_explicit(&s->f, memory_order_release);
}

#endif
