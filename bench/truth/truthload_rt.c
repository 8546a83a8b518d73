// SPDX-License-Identifier: MIT
/*
 * truthload's task runtime and cache.
 *
 * The runtime: --runtime-threads threads, each with its own deque (a
 * spinlocked ring: the owner pops the newest, thieves steal the oldest).
 * A thread with nothing to run in its deque steals from the others, and
 * with nothing anywhere it sleeps on its own futex word, its bit set in
 * the idle mask; whoever queues a task wakes one idle thread (clearing
 * its bit first, so the wake has exactly one addressee). Tasks come from
 * a small pool of ids, reused after task_exit. The adapter probes:
 * task_spawn at creation, task_poll_begin/end around each poll,
 * task_wake when a child task makes its parent runnable, task_exit at the
 * end (or at the cancellation).
 *
 * A request's task (el_task): the requesting thread spawns a root task,
 * queues it on a runtime thread's deque (round robin) and sleeps on a
 * fresh futex word of its own. The poll burns --work-us/2 of CPU, and
 * with --nested percent it spawns a child task and returns pending; the
 * child burns as much, wakes its parent (task_wake) and queues it again,
 * and the parent's second poll finishes. A finishing root task sets the
 * requester's word and wakes it, inside its poll. With --cancel percent
 * the requester cancels the root task right after queueing it, when no
 * runtime thread has taken it yet (task_exit without a poll).
 *
 * The cache: --cache-entries slots, resources ("cache", slot), each
 * locked by a hand-off lock. A contended acquirer says resource_wait_begin,
 * queues itself with a fresh futex word of its own and sleeps on it; the
 * releaser hands the slot to the first queued waiter and wakes its word,
 * so the truth knows who woke whom. Keys (4 per slot) are per request, so
 * a request's fan-out branches contend for one slot, and slots are
 * reused for different keys. A hit holds the slot for --work-us/4 of
 * CPU; a miss first fetches the key (a nanosleep of --sleep-us: a timer
 * hop). A wait hop's windows: A0 at the waiter's resource_wait_begin,
 * [C0, A1] the releaser's wake, C1 at the waiter's resource_wait_end.
 */
#include "truthload.h"
#include "../../include/causeway.h"

#define DQCAP 1024
#define TPOOL_MAX 256

enum tstate { T_QUEUED, T_RUNNING, T_WAITING, T_NOTIFIED, T_CANCELLED };

struct task {
	int id;
	_Atomic int inuse, state, refs;
	uint64_t rid;
	struct task *parent;
	int32_t waiter_tid;
	_Atomic uint32_t *done; /* a root task: its requester's word */
	int polls;
	size_t spawn_hop, wake_hop;
	uint8_t spawned_before;
};

struct rt {
	struct tctx t;
	pthread_t th;
	spin_t lk;
	struct task *dq[DQCAP];
	unsigned long top, bot; /* entries [top, bot) */
	_Atomic uint32_t word;
};

static struct rt *rts;
static int nrt;
static struct task *tasks;
static int ntasks;
static _Atomic uint64_t idle_mask;
static _Atomic int stopping, started;
static _Atomic unsigned long rr, alloc_cursor;

/* ---- the task pool ---------------------------------------------------------- */
static struct task *task_alloc(int can_wait)
{
	for (;;) {
		for (int n = 0; n < ntasks; n++) {
			struct task *k = &tasks[atomic_fetch_add(&alloc_cursor, 1) % (unsigned long)ntasks];
			int z = 0;

			if (atomic_compare_exchange_strong(&k->inuse, &z, 1)) {
				k->parent = NULL;
				k->done = NULL;
				k->waiter_tid = 0;
				k->polls = 0;
				k->spawn_hop = k->wake_hop = HOP_NONE;
				atomic_store(&k->refs, 2);
				atomic_store(&k->state, T_QUEUED);
				return k;
			}
		}
		if (!can_wait)
			return NULL;
		sched_yield(); /* cancelled tasks still queued hold ids: they go soon */
	}
}

static void task_free(struct task *k)
{
	atomic_store(&k->inuse, 0);
}

/* ---- deques ----------------------------------------------------------------------- */
static void push(struct rt *r, struct task *k)
{
	spin_lock(&r->lk);
	if (r->bot - r->top == DQCAP)
		die("runtime deque full", ENOSPC);
	r->dq[r->bot++ % DQCAP] = k;
	spin_unlock(&r->lk);
}

static struct task *pop_bottom(struct rt *r)
{
	struct task *k = NULL;

	spin_lock(&r->lk);
	if (r->bot > r->top)
		k = r->dq[--r->bot % DQCAP];
	spin_unlock(&r->lk);
	return k;
}

static struct task *steal_top(struct rt *r)
{
	struct task *k = NULL;

	spin_lock(&r->lk);
	if (r->bot > r->top)
		k = r->dq[r->top++ % DQCAP];
	spin_unlock(&r->lk);
	return k;
}

static int any_work(void)
{
	for (int i = 0; i < nrt; i++) {
		int n;

		spin_lock(&rts[i].lk);
		n = rts[i].bot > rts[i].top;
		spin_unlock(&rts[i].lk);
		if (n)
			return 1;
	}
	return 0;
}

/* Wake one idle runtime thread, if any: a direct hop when it slept. */
static void wake_idle(struct tctx *from, uint64_t rid)
{
	uint64_t m;

	while ((m = atomic_load(&idle_mask))) {
		int b = __builtin_ctzll(m);
		uint64_t bit = 1ull << b;

		if (atomic_fetch_and(&idle_mask, ~bit) & bit) {
			struct rt *r = &rts[b];

			atomic_store(&r->word, 1);
			wake_direct(from, rid, &r->word, r->t.tid);
			return;
		}
	}
}

static void spawn_hop(struct tctx *t, struct task *k, int64_t parent, unsigned flags)
{
	size_t i = hop_new(t, k->rid, M_TASK, R_OBJECT, E_SPAWN, O_TASK, k->id, NULL, E_RESUME);
	struct hop *h = H(i);

	h->flags = (uint8_t)(flags | (k->spawned_before ? HF_REUSED : 0));
	k->spawned_before = 1;
	k->spawn_hop = i;
	h->a0 = h->c0 = now_ns();
	causeway_task_spawn(k->id, parent);
	h->a1 = now_ns();
}

/* ---- polls --------------------------------------------------------------------------- */
static void run_task(struct rt *r, struct task *k)
{
	struct tctx *t = &r->t;
	uint64_t rid = k->rid, p1;
	int s = T_QUEUED;
	struct hop *h;

	if (!atomic_compare_exchange_strong(&k->state, &s, T_RUNNING)) {
		if (s != T_CANCELLED)
			die("a queued task in a bad state", EINVAL);
		if (atomic_fetch_sub(&k->refs, 1) == 1)
			task_free(k);
		return;
	}
	acct_start(t, rid, 0);
	t->cur_task = k->id;
	causeway_task_poll_begin(k->id);
	p1 = now_ns();
	h = H(k->polls++ == 0 ? k->spawn_hop : k->wake_hop);
	h->dst_tid = t->tid;
	h->c1 = p1;
	h->valid = 1;

	if (k->polls == 1) {
		burn_us(opt.work_us / 2);
		if (!k->parent && percent(t, opt.nested)) {
			struct task *c = task_alloc(0);

			if (c) {
				c->rid = rid;
				c->parent = k;
				spawn_hop(t, c, k->id, HF_NESTED);
				push(r, c);
				wake_idle(t, rid);
				causeway_task_poll_end(k->id);
				t->cur_task = -1;
				acct_stop(t);
				/* pending on the child; if it finished meanwhile, queue again */
				s = T_RUNNING;
				if (!atomic_compare_exchange_strong(&k->state, &s, T_WAITING)) {
					if (s != T_NOTIFIED)
						die("a polled task in a bad state", EINVAL);
					atomic_store(&k->state, T_QUEUED);
					push(r, k);
					wake_idle(t, rid);
				}
				return;
			}
		}
	}

	if (k->parent) {
		struct task *p = k->parent;
		size_t wi = hop_new(t, rid, M_TASK, R_OBJECT, E_WAKE, O_TASK, p->id, NULL, E_RESUME);

		h = H(wi);
		h->flags = HF_NESTED;
		p->wake_hop = wi;
		h->a0 = h->c0 = now_ns();
		causeway_task_wake(p->id);
		h->a1 = now_ns();
		for (;;) {
			s = atomic_load(&p->state);
			if (s == T_WAITING) {
				if (atomic_compare_exchange_strong(&p->state, &s, T_QUEUED)) {
					push(r, p);
					wake_idle(t, rid);
					break;
				}
			} else if (s == T_RUNNING) {
				if (atomic_compare_exchange_strong(&p->state, &s, T_NOTIFIED))
					break;
			} else
				die("a parent task in a bad state", EINVAL);
		}
	} else {
		_Atomic uint32_t *d = k->done;
		int32_t wt = k->waiter_tid;

		atomic_store(d, 1);
		wake_direct(t, rid, d, wt);
	}
	causeway_task_poll_end(k->id);
	causeway_task_exit(k->id);
	t->cur_task = -1;
	acct_stop(t);
	task_free(k);
}

static void idle(struct rt *r, int idx)
{
	uint64_t bit = 1ull << idx;

	atomic_store(&r->word, 0);
	atomic_fetch_or(&idle_mask, bit);
	if (any_work() || atomic_load(&stopping)) {
		atomic_fetch_and(&idle_mask, ~bit);
		return;
	}
	while (atomic_load(&r->word) == 0)
		futex_wait(&r->t, &r->word, 0);
	atomic_fetch_and(&idle_mask, ~bit); /* woken by the stop, which clears none */
}

static void *rt_main(void *arg)
{
	struct rt *r = arg;
	int idx = (int)(r - rts);

	ctx_init(&r->t, ROLE_RUNTIME, idx);
	atomic_fetch_add(&started, 1);
	for (;;) {
		struct task *k = pop_bottom(r);

		for (int i = 1; !k && i < nrt; i++)
			k = steal_top(&rts[(idx + i) % nrt]);
		if (k) {
			run_task(r, k);
			continue;
		}
		if (atomic_load(&stopping))
			break;
		idle(r, idx);
	}
	return NULL;
}

void rt_start(void)
{
	int rc;

	nrt = (int)opt.rt_threads;
	ntasks = (int)(2 * (opt.workers + opt.clients) + 8);
	if (ntasks > TPOOL_MAX)
		ntasks = TPOOL_MAX;
	rts = calloc((size_t)nrt, sizeof(*rts));
	tasks = calloc((size_t)ntasks, sizeof(*tasks));
	if (!rts || !tasks)
		die("calloc", ENOMEM);
	for (int i = 0; i < ntasks; i++)
		tasks[i].id = i + 1;
	for (int i = 0; i < nrt; i++)
		rts[i].lk = (spin_t)SPIN_INIT; /* all before any thread steals */
	for (int i = 0; i < nrt; i++) {
		if ((rc = pthread_create(&rts[i].th, NULL, rt_main, &rts[i])))
			die("pthread_create", rc);
	}
	while (atomic_load(&started) < nrt)
		sched_yield();
}

void rt_stop(void)
{
	atomic_store(&stopping, 1);
	for (int i = 0; i < nrt; i++) {
		atomic_store(&rts[i].word, 1);
		futex_wake(&rts[i].word, 1);
	}
	for (int i = 0; i < nrt; i++)
		pthread_join(rts[i].th, NULL);
}

/* The element: spawn a root task, queue it, wait for it (or cancel it). */
void el_task(struct tctx *t, uint64_t rid)
{
	struct task *k = task_alloc(1);
	_Atomic uint32_t *d = fresh_word(t);
	int cancel = percent(t, opt.cancel);

	k->rid = rid;
	k->done = d;
	k->waiter_tid = t->tid;
	spawn_hop(t, k, 0, 0);
	push(&rts[atomic_fetch_add(&rr, 1) % (unsigned long)nrt], k);
	wake_idle(t, rid);
	if (cancel) {
		int s = T_QUEUED;

		if (atomic_compare_exchange_strong(&k->state, &s, T_CANCELLED)) {
			struct hop *h = H(k->spawn_hop);

			causeway_task_exit(k->id);
			h->c1 = now_ns();
			h->dst_tid = 0;
			h->flags |= HF_CANCELLED;
			h->valid = 1;
			/* the id is free once both the exit and the dequeue are done */
			if (atomic_fetch_sub(&k->refs, 1) == 1)
				task_free(k);
			return;
		}
	}
	/* blocked for the task, it still holds the request */
	wait_word(t, d);
}

/* ---- the cache -------------------------------------------------------------------- */
struct waiter {
	struct waiter *next;
	int32_t tid;
	uint64_t rid;
	_Atomic uint32_t *word;
	size_t hop;
};

struct entry {
	spin_t lk;
	int held, filled;
	uint64_t key;
	long fills;
	struct waiter *head, *tail;
};

static struct entry *entries;

void cache_init(void)
{
	entries = calloc((size_t)opt.cache_entries, sizeof(*entries));
	if (!entries)
		die("calloc", ENOMEM);
	for (long i = 0; i < opt.cache_entries; i++)
		entries[i].lk = (spin_t)SPIN_INIT;
}

/* A miss fetches the key from the backing store: a nanosleep of
 * --sleep-us, a timer hop like the timer element's. */
static void fetch_sleep(struct tctx *t, uint64_t rid)
{
	struct timespec ts = { opt.sleep_us / 1000000, (opt.sleep_us % 1000000) * 1000 };
	struct hop *h = H(hop_new(t, rid, M_TIMER, R_OBJECT, E_ARM, O_TIMER, -1, "hrtimer_wakeup",
				  E_FIRE));

	h->a0 = h->c0 = now_ns();
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
	h->a1 = h->c1 = now_ns();
	h->dst_tid = t->tid;
	h->valid = 1;
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

void el_cache(struct tctx *t, uint64_t rid)
{
	uint64_t key = mix(rid) % (4 * (uint64_t)opt.cache_entries);
	uint64_t slot = key % (uint64_t)opt.cache_entries;
	struct entry *e = &entries[slot];
	struct waiter me = { .tid = t->tid, .rid = rid, .hop = HOP_NONE }, *w;

	spin_lock(&e->lk);
	if (!e->held) {
		e->held = 1;
		spin_unlock(&e->lk);
	} else {
		uint64_t wb0;

		spin_unlock(&e->lk);
		wb0 = now_ns();
		causeway_resource_wait_begin("cache", slot);
		spin_lock(&e->lk);
		if (!e->held) { /* let go meanwhile: no hand-over */
			e->held = 1;
			spin_unlock(&e->lk);
		} else {
			me.word = fresh_word(t);
			if (e->tail)
				e->tail->next = &me;
			else
				e->head = &me;
			e->tail = &me;
			spin_unlock(&e->lk);
			wait_word(t, me.word);
		}
		causeway_resource_wait_end("cache", slot);
		if (me.hop != HOP_NONE) { /* the wait: A0 at its begin, C1 at its end */
			H(me.hop)->a0 = wb0;
			H(me.hop)->c1 = now_ns();
		}
	}
	causeway_resource_acquire("cache", slot);
	if (!e->filled || e->key != key) { /* a miss: fetch and fill the slot for this key */
		fetch_sleep(t, rid);
		e->key = key;
		e->filled = 1;
		e->fills++;
	}
	burn_us(opt.work_us / 4);
	causeway_resource_release("cache", slot);

	spin_lock(&e->lk);
	w = e->head;
	if (w) {
		e->head = w->next;
		if (!e->head)
			e->tail = NULL;
	} else
		e->held = 0;
	spin_unlock(&e->lk);
	if (w) { /* hand the slot over: it stays held, by w now */
		_Atomic uint32_t *wd = w->word;
		size_t hi = hop_new(t, w->rid, M_RWAIT, R_WAIT, E_WAKE, O_RESOURCE, (int64_t)slot,
				    "cache", E_WAKE);
		struct hop *h = H(hi);
		long n;

		h->dst_tid = w->tid;
		h->flags = e->fills > 1 ? HF_REUSED : 0;
		w->hop = hi; /* w is gone once its word is set */
		h->c0 = now_ns(); /* the wake: between C0 and A1 */
		atomic_store(wd, 1);
		n = futex_wake(wd, 1);
		h->a1 = now_ns();
		if (n == 1)
			h->valid = 1;
		else
			atomic_fetch_add(&rwait_nowake, 1);
	}
}
