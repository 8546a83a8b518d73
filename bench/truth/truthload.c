// SPDX-License-Identifier: MIT
/*
 * truthload: the ground-truth benchmark workload of causeway. A request
 * pipeline: client ("front") threads begin requests (causeway_request_*
 * probes), and each request runs a chain of async mechanisms; after the
 * run the program writes what really happened to every request (its
 * hops, and the CPU and wall time each thread spent for it) to the
 * truth file, in the format of bench/truth/FORMAT.md. The truth is kept
 * in preallocated memory during the run: recording it costs no syscall.
 *
 * The chain (--chain, default all): elements before `futex` run on the
 * front thread, inside its request; `futex` hands the request to
 * --fanout worker threads (each through its mailbox futex word), each
 * runs the elements after it, and the last one to finish wakes the front
 * (its own futex word). Without `futex` the whole chain runs on the
 * front. --affine is the thread-affine baseline: sync, timer and the
 * front's own io_uring reads, all on the front thread. Threads (the
 * truth's thread lines): main, front (--clients), worker (--workers),
 * runtime (--runtime-threads, the task runtime), pty_reader (one per
 * front and worker, with workqueue in the chain).
 *
 * Every hop is written only when the workload knows it happened and
 * whose it was: a futex handoff when FUTEX_WAKE said it woke the waiter,
 * a pty wake when the reader was asleep in its read before the write (its
 * wchan), a timerfd wake when the read really slept (its voluntary
 * context switches grew), an io_uring completion by the user_data and the
 * length (and bytes) it returned. See --help.
 *
 * Accounting (the cpu lines): a thread holds a request from taking it
 * (request_begin, or returning from the wait that handed it over) to
 * handing it on (waking the next thread, queueing a task or writing the
 * pty and waiting for its answer) or its end; blocking meanwhile in its
 * own io_uring, timer or cache waits is held time. CPU is the
 * CLOCK_THREAD_CPUTIME_ID delta of each such stretch.
 */
#include <getopt.h>
#include <sys/resource.h>
#include "truthload.h"
#include "../../include/causeway.h"

struct opts opt = {
	.requests = 200,
	.clients = 2,
	.fanout = 2,
	.workers = 4,
	.qdepth = 2,
	.reuse = 3,
	.cancel = 10,
	.nested = 30,
	.work_us = 500,
	.sleep_us = 200,
	.cache_entries = 4,
	.rate = 0,
	.rt_threads = 2,
};

static const char *const elem_names[EL_N] = {
	[EL_SYNC] = "sync", [EL_FUTEX] = "futex", [EL_URING] = "io_uring", [EL_WQ] = "workqueue",
	[EL_TIMER] = "timer", [EL_TASK] = "task", [EL_CACHE] = "cache",
};
static const char *const mech_names[M_N] = {
	[M_FUTEX] = "futex",	     [M_URING] = "io_uring",   [M_URING_MS] = "io_uring_multishot",
	[M_URING_LINK] = "io_uring_link", [M_WQ] = "workqueue", [M_TIMER] = "timer",
	[M_TIMERFD] = "timerfd",     [M_TASK] = "task",	       [M_RWAIT] = "resource_wait",
};
static const char *const rule_names[] = { "direct", "object", "wait" };
static const char *const etype_names[] = { "submit", "queue", "arm",	  "spawn",
					   "wake",   "complete", "fire", "resume" };
static const char *const otype_names[] = { "io_request", "work_item", "timer",
					   "runtime_task", "resource", "thread" };

/* ---- truth storage ------------------------------------------------------ */
struct hop *hops;
size_t hops_cap;
_Atomic size_t nhops;
_Atomic long tfd_nosleep, futex_nowake, rwait_nowake;

static struct stretch *stretches;
static size_t stretches_cap;
static _Atomic size_t nstretches;
static struct reqrec *reqs; /* by rid, 1..requests */

_Noreturn void die(const char *what, int err)
{
	fprintf(stderr, "truthload: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

size_t hop_new(struct tctx *t, uint64_t rid, int mech, int rule, int cause, int otype,
	       int64_t key, const char *name, int effect)
{
	size_t i = atomic_fetch_add(&nhops, 1);
	struct hop *h;

	if (i >= hops_cap)
		die("the truth's hop table is full (a bug in its sizing)", ENOSPC);
	h = &hops[i];
	*h = (struct hop){ .rid = rid, .mech = (uint8_t)mech, .rule = (uint8_t)rule,
			   .cause = (uint8_t)cause, .otype = (uint8_t)otype,
			   .effect = (uint8_t)effect, .obj_key = key, .obj_name = name,
			   .src_tid = t->tid, .src_task = t->cur_task, .src_req = t->cur_app };
	return i;
}

/* ---- accounting: the stretches a thread holds a request ------------------ */
/* The wall clock is read outside the CPU clock at both ends, so that a
 * stretch's CPU never exceeds its wall time. */
void acct_start(struct tctx *t, uint64_t rid, uint64_t wall_now)
{
	t->acct_rid = rid;
	t->acct_wall = wall_now ? wall_now : now_ns();
	t->acct_cpu = cpu_ns();
	t->acct_open = 1;
}

void acct_stop(struct tctx *t)
{
	uint64_t c = cpu_ns(), w = now_ns();
	size_t i;

	if (!t->acct_open)
		return;
	t->acct_open = 0;
	t->acct_end = w;
	i = atomic_fetch_add(&nstretches, 1);
	if (i >= stretches_cap)
		die("the truth's cpu table is full (a bug in its sizing)", ENOSPC);
	stretches[i] = (struct stretch){ t->acct_rid, t->tid, c - t->acct_cpu, w - t->acct_wall };
}


/* ---- futex handoffs ---------------------------------------------------------------- */
/* Every futex_wait of the workload: a direct hop's window is narrowed to
 * the wait that its wake ended (narrow()). */
struct waitrec {
	int32_t tid, woken;
	uintptr_t addr;
	uint64_t b, r; /* before the call, after its return */
};

static struct waitrec *waits;
static size_t waits_cap;
static _Atomic size_t nwaits;

void futex_wait(struct tctx *t, _Atomic uint32_t *w, uint32_t val)
{
	uint64_t b = now_ns(), r;
	long ret = syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
	size_t i;

	r = now_ns();
	i = atomic_fetch_add(&nwaits, 1);
	if (i < waits_cap) /* past it, windows are left [A0, A1] */
		waits[i] = (struct waitrec){ t->tid, ret == 0, (uintptr_t)w, b, r };
}

/* Wake the thread @dst waiting on @w (set already): a direct hop of @rid
 * (0: none) when FUTEX_WAKE says it woke it. */
void wake_direct(struct tctx *from, uint64_t rid, _Atomic uint32_t *w, int32_t dst)
{
	uint64_t a0, a1;
	long n;

	a0 = now_ns();
	n = futex_wake(w, 1);
	a1 = now_ns();
	if (n == 1 && rid) {
		struct hop *h = H(hop_new(from, rid, M_FUTEX, R_DIRECT, E_WAKE, O_THREAD, -1, NULL,
					  E_WAKE));

		h->a0 = h->c0 = a0;
		h->a1 = h->c1 = a1;
		h->dst_tid = dst;
		h->addr = (uintptr_t)w;
		h->valid = 1;
	} else if (rid)
		atomic_fetch_add(&futex_nowake, 1);
}

static int cmp_wait(const void *a, const void *b)
{
	const struct waitrec *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (x->r > y->r) - (x->r < y->r);
}

/*
 * [C0, C1] of a direct hop: [A0, A1] (the waking call) narrowed to the
 * wakee's wait that it ended, the first futex_wait of DST_TID on the same
 * word that slept and returned at or after A0, begun by A1. A waker
 * preempted inside its call has a long window, which the wakee's later
 * wakes (by others) would otherwise fall in.
 */
static long narrowed, direct_hops;

static void narrow(struct hop *h, size_t nw)
{
	size_t lo = 0, hi = nw;
	struct waitrec key = { .tid = h->dst_tid, .addr = h->addr, .r = h->a0 };

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_wait(&waits[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < nw && waits[lo].tid == h->dst_tid && waits[lo].addr == h->addr; lo++) {
		if (waits[lo].b > h->a1)
			return;
		if (waits[lo].woken) {
			h->c0 = waits[lo].b > h->a0 ? waits[lo].b : h->a0;
			h->c1 = waits[lo].r < h->a1 ? waits[lo].r : h->a1;
			narrowed++;
			return;
		}
	}
}

/* ---- threads ----------------------------------------------------------------- */
struct front;

struct job {
	uint64_t rid;
	struct front *f;
	int stop;
};

struct worker {
	struct tctx t;
	pthread_t th;
	spin_t lk;
	struct job *q[MAX_THREADS + 1];
	unsigned head, len;
	_Atomic uint32_t seq; /* the mailbox word: bumped at every post */
};

struct front {
	struct tctx t;
	pthread_t th;
	struct job jobs[MAX_THREADS];
	_Atomic long remaining;		/* branches of the current request not done */
	_Atomic uint32_t *_Atomic done; /* the word the last branch sets and wakes */
};

static struct worker *workers;
static struct front *fronts;
static struct tctx main_ctx;
static pthread_barrier_t start_bar;
static _Atomic uint64_t next_rid;
static struct job stop_job = { .stop = 1 };

static struct tctx *registry[5 * MAX_THREADS + 1];
static _Atomic int nregistry;

void ctx_init(struct tctx *t, int role, int index)
{
	registry[atomic_fetch_add(&nregistry, 1)] = t;
	t->tid = gettid_();
	t->role = role;
	t->index = index;
	t->cur_app = -1;
	t->cur_task = -1;
	t->rng = 0x9e3779b97f4a7c15ull * (uint64_t)(role * 131 + index + 1) + 1;
}

static void run_elem(struct tctx *t, int e, uint64_t rid)
{
	switch (e) {
	case EL_SYNC:
		el_sync(t, rid);
		break;
	case EL_URING:
		el_uring(t, rid, opt.affine);
		break;
	case EL_WQ:
		el_wq(t, rid);
		break;
	case EL_TIMER:
		el_timer(t, rid);
		break;
	case EL_TASK:
		el_task(t, rid);
		break;
	case EL_CACHE:
		el_cache(t, rid);
		break;
	}
}

/* Post @j to worker @w's mailbox and wake it: a direct hop when the wake
 * woke it (it slept on its mailbox word). */
static void post(struct tctx *from, struct worker *w, struct job *j, uint64_t rid)
{
	spin_lock(&w->lk);
	w->q[(w->head + w->len++) % (MAX_THREADS + 1)] = j;
	spin_unlock(&w->lk);
	atomic_fetch_add(&w->seq, 1);
	wake_direct(from, rid, &w->seq, w->t.tid);
}

static struct job *take(struct worker *w)
{
	for (;;) {
		uint32_t s = atomic_load(&w->seq);
		struct job *j = NULL;

		spin_lock(&w->lk);
		if (w->len) {
			j = w->q[w->head];
			w->head = (w->head + 1) % (MAX_THREADS + 1);
			w->len--;
		}
		spin_unlock(&w->lk);
		if (j)
			return j;
		futex_wait(&w->t, &w->seq, s);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct tctx *t = &w->t;

	ctx_init(t, ROLE_WORKER, (int)(w - workers));
	ctx_io_init(t);
	pthread_barrier_wait(&start_bar);
	for (;;) {
		struct job *j = take(w);
		struct front *f;
		_Atomic uint32_t *done;
		uint64_t rid;

		if (j->stop)
			break;
		rid = j->rid;
		f = j->f;
		acct_start(t, rid, 0);
		for (int i = opt.futex_at + 1; i < opt.nchain; i++)
			run_elem(t, opt.chain[i], rid);
		done = atomic_load(&f->done);
		if (atomic_fetch_sub(&f->remaining, 1) == 1) {
			atomic_store(done, 1);
			wake_direct(t, rid, done, f->t.tid);
		}
		acct_stop(t);
	}
	ctx_io_exit(t);
	return NULL;
}

static void pace(struct tctx *t, uint64_t *next)
{
	struct timespec ts;

	(void)t;
	if (opt.rate <= 0)
		return;
	if (!*next)
		*next = now_ns();
	ts.tv_sec = (time_t)(*next / 1000000000u);
	ts.tv_nsec = (long)(*next % 1000000000u);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	*next += 1000000000u / (uint64_t)opt.rate;
}

static void *front_main(void *arg)
{
	struct front *f = arg;
	struct tctx *t = &f->t;
	uint64_t next = 0, seq = 0;

	ctx_init(t, ROLE_FRONT, (int)(f - fronts));
	ctx_io_init(t);
	pthread_barrier_wait(&start_bar);
	for (;;) {
		uint64_t rid = atomic_fetch_add(&next_rid, 1) + 1, app, c0, b0, b1, e0, e1;
		struct reqrec *rr;

		if (rid > (uint64_t)opt.requests)
			break;
		pace(t, &next);
		rr = &reqs[rid];
		app = APP_BASE + (uint64_t)t->index * APP_POOL + seq % APP_POOL;
		b0 = now_ns();
		c0 = cpu_ns();
		causeway_request_begin(app, "truthload");
		b1 = now_ns();
		t->acct_rid = rid;
		t->acct_cpu = c0;
		t->acct_wall = b0;
		t->acct_open = 1;
		t->cur_app = (int64_t)app;

		for (int i = 0; i < opt.futex_at; i++)
			run_elem(t, opt.chain[i], rid);
		if (opt.futex_at < opt.nchain) {
			_Atomic uint32_t *done = fresh_word(t);

			atomic_store(&f->remaining, opt.fanout);
			atomic_store(&f->done, done);
			for (int j = 0; j < opt.fanout; j++) {
				struct worker *w =
					&workers[((uint64_t)t->index * (uint64_t)opt.fanout + (uint64_t)j + seq) %
						 (uint64_t)opt.workers];

				f->jobs[j] = (struct job){ .rid = rid, .f = f };
				post(t, w, &f->jobs[j], rid);
			}
			/* Blocked for the request it began, it still holds
			 * it (docs/model.md §6.1: off-CPU time is the request's
			 * whose context was blocked). */
			wait_word(t, done);
		}
		e0 = now_ns();
		causeway_request_end(app, 0);
		t->cur_app = -1;
		acct_stop(t); /* its wall end is E1 */
		e1 = t->acct_end;
		*rr = (struct reqrec){ .app = app, .origin = t->tid, .b0 = b0, .b1 = b1, .e0 = e0,
				       .e1 = e1, .done = 1 };
		seq++;
	}
	ctx_io_exit(t);
	return NULL;
}

/* ---- noise ------------------------------------------------------------------------ */

/* Pairs of threads passing a byte back and forth through two pipes until
 * the requests are done: wakeups the truth knows nothing of (no request,
 * no hop), which only raise the event rate the capture must keep up with
 * (bench/truth/run drives its loss curve with them). */
struct noise {
	pthread_t th[2];
	int ab[2], ba[2];
};
static struct noise *noises;
static atomic_int noise_stopping;

static void *noise_main(void *arg)
{
	int *fds = arg; /* read end, write end */
	char c = 0;

	while (!atomic_load(&noise_stopping)) {
		if (read(fds[0], &c, 1) != 1)
			break;
		if (write(fds[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

static void noise_start(void)
{
	int rc;

	if (!opt.noise)
		return;
	signal(SIGPIPE, SIG_IGN); /* a write after noise_stop() fails, quietly */
	noises = calloc((size_t)opt.noise, sizeof(*noises));
	if (!noises)
		die("calloc", ENOMEM);
	for (long i = 0; i < opt.noise; i++) {
		struct noise *n = &noises[i];
		static int fds[64][2][2];

		if (pipe(n->ab) || pipe(n->ba))
			die("pipe", errno);
		fds[i][0][0] = n->ab[0], fds[i][0][1] = n->ba[1];
		fds[i][1][0] = n->ba[0], fds[i][1][1] = n->ab[1];
		if ((rc = pthread_create(&n->th[0], NULL, noise_main, fds[i][0])) ||
		    (rc = pthread_create(&n->th[1], NULL, noise_main, fds[i][1])))
			die("pthread_create", rc);
		if (write(n->ab[1], "x", 1) != 1)
			die("write", errno);
	}
}

/* Closing the write ends ends the reads: each thread sees EOF or EPIPE. */
static void noise_stop(void)
{
	atomic_store(&noise_stopping, 1);
	for (long i = 0; i < opt.noise; i++) {
		close(noises[i].ab[1]);
		close(noises[i].ba[1]);
		pthread_join(noises[i].th[0], NULL);
		pthread_join(noises[i].th[1], NULL);
		close(noises[i].ab[0]);
		close(noises[i].ba[0]);
	}
	free(noises);
}

/* ---- options ------------------------------------------------------------------- */
static void usage(FILE *out)
{
	fprintf(out,
		"usage: truthload --truth FILE [OPTIONS]\n"
		"A request pipeline through causeway's async mechanisms; writes what really\n"
		"happened to every request to FILE (bench/truth/FORMAT.md) after the run.\n"
		"  --truth FILE          the truth file (required)\n"
		"  --requests N          requests in all (default 200)\n"
		"  --clients N           front threads, each with one request in flight (2)\n"
		"  --workers N           worker threads (4)\n"
		"  --fanout N            workers a request is handed to in parallel (2, <= workers)\n"
		"  --chain LIST          comma list of sync,futex,io_uring,workqueue,timer,task,cache\n"
		"                        (default: all, in that order); elements before futex run\n"
		"                        on the front thread, those after it on each worker\n"
		"  --affine              the thread-affine baseline: sync, timer and io_uring reads\n"
		"                        on the front thread, no handoff (not with --chain)\n"
		"  --work-us N           CPU burnt by sync (thread CPU time, us; 500); a task burns\n"
		"                        half of it, a cache hit a quarter\n"
		"  --sleep-us N          nanosleep and timerfd length, and a cache miss's fetch\n"
		"                        (us; 200)\n"
		"  --queue-depth N       io_uring: reads in flight at once per ring: N pipe reads,\n"
		"                        then N file reads with the same user_data values (2, 1..%d)\n"
		"  --reuse N             io_uring: distinct user_data values per ring (3)\n"
		"  --runtime-threads N   task runtime threads (2)\n"
		"  --cancel P            percent of tasks cancelled before they are polled (10)\n"
		"  --nested P            percent of tasks that spawn a nested child task (30)\n"
		"  --cache-entries N     cache slots, reused for 4N keys (4)\n"
		"  --rate N              requests/s per client, 0 = as fast as possible (0)\n"
		"  --noise N             N pairs of threads ping-ponging a byte through pipes\n"
		"                        while the requests run: scheduler events outside any\n"
		"                        request, to drive the capture's event rate up (0)\n"
		"  --flat N              burn CPU through N functions of equal work called in\n"
		"                        turn, a profile with no hot spot (0: one loop; 1..%d)\n"
		"  -h, --help            this text\n",
		MAX_QDEPTH, FLAT_MAX);
}

static long num(const char *name, const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "truthload: --%s: '%s' is not a number in %ld..%ld\n", name, s, lo, hi);
		exit(2);
	}
	return v;
}

static void parse_chain(const char *s)
{
	char buf[512], *save, *tok;

	if (strlen(s) >= sizeof(buf)) {
		fprintf(stderr, "truthload: --chain: too long\n");
		exit(2);
	}
	strcpy(buf, s);
	opt.nchain = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int e;

		for (e = 0; e < EL_N; e++)
			if (!strcmp(tok, elem_names[e]))
				break;
		if (e == EL_N) {
			fprintf(stderr, "truthload: --chain: unknown element '%s'\n", tok);
			exit(2);
		}
		if (opt.nchain == MAX_CHAIN) {
			fprintf(stderr, "truthload: --chain: more than %d elements\n", MAX_CHAIN);
			exit(2);
		}
		opt.chain[opt.nchain++] = e;
	}
	if (!opt.nchain) {
		fprintf(stderr, "truthload: --chain: empty\n");
		exit(2);
	}
}

static void parse(int argc, char **argv)
{
	enum { O_REQ = 256, O_CLI, O_FAN, O_WRK, O_QD, O_REUSE, O_CANCEL, O_NESTED, O_CHAIN,
	       O_WORK, O_SLEEP, O_CACHE, O_TRUTH, O_RATE, O_AFFINE, O_RT, O_NOISE, O_FLAT };
	static const struct option lo[] = {
		{ "requests", 1, 0, O_REQ },	  { "clients", 1, 0, O_CLI },
		{ "fanout", 1, 0, O_FAN },	  { "workers", 1, 0, O_WRK },
		{ "queue-depth", 1, 0, O_QD },	  { "reuse", 1, 0, O_REUSE },
		{ "cancel", 1, 0, O_CANCEL },	  { "nested", 1, 0, O_NESTED },
		{ "chain", 1, 0, O_CHAIN },	  { "work-us", 1, 0, O_WORK },
		{ "sleep-us", 1, 0, O_SLEEP },	  { "cache-entries", 1, 0, O_CACHE },
		{ "truth", 1, 0, O_TRUTH },	  { "rate", 1, 0, O_RATE },
		{ "affine", 0, 0, O_AFFINE },	  { "runtime-threads", 1, 0, O_RT },
		{ "noise", 1, 0, O_NOISE },	  { "flat", 1, 0, O_FLAT },
		{ "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *chain = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case O_REQ: opt.requests = num("requests", optarg, 1, 1000000); break;
		case O_CLI: opt.clients = num("clients", optarg, 1, MAX_THREADS); break;
		case O_FAN: opt.fanout = num("fanout", optarg, 1, MAX_THREADS); break;
		case O_WRK: opt.workers = num("workers", optarg, 1, MAX_THREADS); break;
		case O_QD: opt.qdepth = num("queue-depth", optarg, 1, MAX_QDEPTH); break;
		case O_REUSE: opt.reuse = num("reuse", optarg, 1, 4096); break;
		case O_CANCEL: opt.cancel = num("cancel", optarg, 0, 100); break;
		case O_NESTED: opt.nested = num("nested", optarg, 0, 100); break;
		case O_CHAIN: chain = optarg; break;
		case O_WORK: opt.work_us = num("work-us", optarg, 0, 10000000); break;
		case O_SLEEP: opt.sleep_us = num("sleep-us", optarg, 1, 10000000); break;
		case O_CACHE: opt.cache_entries = num("cache-entries", optarg, 1, 4096); break;
		case O_TRUTH: opt.truth = optarg; break;
		case O_RATE: opt.rate = num("rate", optarg, 0, 1000000); break;
		case O_AFFINE: opt.affine = 1; break;
		case O_RT: opt.rt_threads = num("runtime-threads", optarg, 1, MAX_THREADS); break;
		case O_NOISE: opt.noise = num("noise", optarg, 0, 64); break;
		case O_FLAT: opt.flat = num("flat", optarg, 0, FLAT_MAX); break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "truthload: unexpected argument '%s'\n", argv[optind]);
		exit(2);
	}
	if (!opt.truth) {
		fprintf(stderr, "truthload: --truth FILE is required\n");
		exit(2);
	}
	if (opt.affine && chain) {
		fprintf(stderr, "truthload: --affine sets the chain: not with --chain\n");
		exit(2);
	}
	opt.chain_str = opt.affine ? "sync,timer,io_uring"
				   : chain ? chain : "sync,futex,io_uring,workqueue,timer,task,cache";
	parse_chain(opt.chain_str);
	opt.futex_at = opt.nchain;
	for (int i = 0; i < opt.nchain; i++)
		if (opt.chain[i] == EL_FUTEX) {
			if (opt.futex_at != opt.nchain) {
				fprintf(stderr, "truthload: --chain: futex more than once\n");
				exit(2);
			}
			opt.futex_at = i;
		}
	if (opt.futex_at < opt.nchain && opt.fanout > opt.workers) {
		fprintf(stderr, "truthload: --fanout %ld is more than --workers %ld\n", opt.fanout,
			opt.workers);
		exit(2);
	}
}

int chain_has(int e)
{
	for (int i = 0; i < opt.nchain; i++)
		if (opt.chain[i] == e)
			return 1;
	return 0;
}

/* ---- the truth file ------------------------------------------------------------ */
static int cmp_stretch(const void *a, const void *b)
{
	const struct stretch *x = a, *y = b;

	if (x->rid != y->rid)
		return x->rid < y->rid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static void put_id(FILE *o, int64_t v)
{
	if (v < 0)
		fputs("\t-", o);
	else
		fprintf(o, "\t%lld", (long long)v);
}

static void put_tid(FILE *o, int32_t v)
{
	if (v <= 0)
		fputs("\t-", o);
	else
		fprintf(o, "\t%d", (int)v);
}

static void write_thread(FILE *o, const struct tctx *t)
{
	static const char *const roles[] = { "main", "front", "worker", "runtime", "pty_reader" };

	fprintf(o, "thread\t%d\t%s\n", (int)t->tid, roles[t->role]);
}

static FILE *truth_file; /* opened at the start, written at the end */

static int write_truth(void)
{
	FILE *o = truth_file;
	size_t nh = atomic_load(&nhops), ns = atomic_load(&nstretches), hid = 0;
	size_t nw = atomic_load(&nwaits) < waits_cap ? atomic_load(&nwaits) : waits_cap;
	long counts[M_N] = { 0 };
	struct rusage ru;

	fprintf(o, "truth\t1\npid\t%d\n", (int)getpid());
	fprintf(o, "config\trequests\t%ld\nconfig\tclients\t%ld\nconfig\tworkers\t%ld\n"
		   "config\tfanout\t%ld\nconfig\tchain\t%s\nconfig\taffine\t%d\n"
		   "config\twork_us\t%ld\nconfig\tsleep_us\t%ld\nconfig\tqueue_depth\t%ld\n"
		   "config\treuse\t%ld\nconfig\truntime_threads\t%ld\nconfig\tcancel\t%ld\n"
		   "config\tnested\t%ld\nconfig\tcache_entries\t%ld\nconfig\trate\t%ld\n"
		   "config\tnoise\t%ld\nconfig\tflat\t%ld\n",
		opt.requests, opt.clients, opt.workers, opt.fanout, opt.chain_str, opt.affine,
		opt.work_us, opt.sleep_us, opt.qdepth, opt.reuse, opt.rt_threads, opt.cancel,
		opt.nested, opt.cache_entries, opt.rate, opt.noise, opt.flat);
	/* The process's whole CPU time, every thread's (all joined by now),
	 * BPF run in its context included: what a profiler's overhead costs
	 * the workload, told apart from the other sessions on the machine. */
	if (!getrusage(RUSAGE_SELF, &ru))
		fprintf(o, "config\tprocess_cpu_ns\t%lld\n",
			(long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ll +
				(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ll);
	for (int i = 0; i < atomic_load(&nregistry); i++)
		write_thread(o, registry[i]);
	for (long r = 1; r <= opt.requests; r++) {
		const struct reqrec *q = &reqs[r];

		if (!q->done)
			continue;
		fprintf(o, "request\t%ld\t%llu\t%d\t%llu\t%llu\t%llu\t%llu\n", r,
			(unsigned long long)q->app, (int)q->origin, (unsigned long long)q->b0,
			(unsigned long long)q->b1, (unsigned long long)q->e0, (unsigned long long)q->e1);
	}
	qsort(stretches, ns, sizeof(*stretches), cmp_stretch);
	for (size_t i = 0; i < ns;) {
		size_t j = i;
		uint64_t cpu = 0, wall = 0;

		for (; j < ns && stretches[j].rid == stretches[i].rid &&
		       stretches[j].tid == stretches[i].tid;
		     j++) {
			cpu += stretches[j].cpu_ns;
			wall += stretches[j].wall_ns;
		}
		fprintf(o, "cpu\t%llu\t%d\t%llu\t%llu\n", (unsigned long long)stretches[i].rid,
			(int)stretches[i].tid, (unsigned long long)cpu, (unsigned long long)wall);
		i = j;
	}
	qsort(waits, nw, sizeof(*waits), cmp_wait);
	for (size_t i = 0; i < nh; i++) {
		struct hop *h = &hops[i];
		int nf = 0;

		if (!h->valid)
			continue;
		if (h->rule == R_DIRECT && h->addr) {
			direct_hops++;
			narrow(h, nw);
		}
		counts[h->mech]++;
		fprintf(o, "hop\t%zu\t%llu\t%s\t%s", ++hid, (unsigned long long)h->rid,
			mech_names[h->mech], rule_names[h->rule]);
		put_tid(o, h->src_tid);
		put_id(o, h->src_task);
		put_id(o, h->src_req);
		fprintf(o, "\t%s\t%s", etype_names[h->cause], otype_names[h->otype]);
		put_id(o, h->obj_key);
		fprintf(o, "\t%s\t%llu\t%llu\t%s", h->obj_name ? h->obj_name : "-",
			(unsigned long long)h->a0, (unsigned long long)h->a1, etype_names[h->effect]);
		put_tid(o, h->dst_tid);
		fprintf(o, "\t%llu\t%llu\t", (unsigned long long)h->c0, (unsigned long long)h->c1);
		if (h->flags & HF_CANCELLED)
			fprintf(o, "%scancelled", nf++ ? "," : "");
		if (h->flags & HF_REUSED)
			fprintf(o, "%sreused", nf++ ? "," : "");
		if (h->flags & HF_NESTED)
			fprintf(o, "%snested", nf++ ? "," : "");
		fprintf(o, "%s\n", nf ? "" : "-");
	}
	fprintf(o, "# hops by mech:");
	for (int m = 0; m < M_N; m++)
		fprintf(o, " %s=%ld", mech_names[m], counts[m]);
	fprintf(o, "\n# handoffs left out, as no wake came of them: futex wakes that woke "
		   "nobody %ld, timerfd reads that did not sleep %ld, cache hand-overs to a "
		   "waiter not asleep %ld\n",
		atomic_load(&futex_nowake), atomic_load(&tfd_nosleep), atomic_load(&rwait_nowake));
	fprintf(o, "# direct hops whose [C0, C1] is narrowed to the wakee's wait: %ld of %ld\n",
		narrowed, direct_hops);
	if (fclose(o)) {
		perror(opt.truth);
		return 1;
	}
	return 0;
}

/* Upper bounds on what one request records: hops and stretches. */
static size_t per_request_hops(void)
{
	size_t per = 0;

	for (int i = 0; i < opt.nchain; i++)
		switch (opt.chain[i]) {
		case EL_URING: per += 2 * (size_t)opt.qdepth + 8; break;
		case EL_WQ: per += 2; break;
		case EL_TIMER: per += 2; break;
		case EL_TASK: per += 10; break;
		case EL_CACHE: per += 3; break;
		}
	return ((size_t)opt.fanout + 1) * per + (size_t)opt.fanout + 2;
}

static size_t per_request_stretches(void)
{
	size_t per = 2;

	for (int i = 0; i < opt.nchain; i++)
		if (opt.chain[i] == EL_TASK)
			per += 6;
		else if (opt.chain[i] == EL_WQ)
			per += 2;
	return ((size_t)opt.fanout + 1) * per + 4;
}

static void *prefault(size_t n)
{
	void *p = calloc(n, 1);

	if (!p)
		die("calloc", ENOMEM);
	memset(p, 0, n); /* touched now, not during the run */
	return p;
}

int main(int argc, char **argv)
{
	int use_workers, rc;

	parse(argc, argv);
	truth_file = fopen(opt.truth, "w");
	if (!truth_file) {
		perror(opt.truth);
		return 1;
	}
	use_workers = opt.futex_at < opt.nchain;
	ctx_init(&main_ctx, ROLE_MAIN, 0);

	hops_cap = (size_t)opt.requests * per_request_hops() + 64;
	hops = prefault(hops_cap * sizeof(*hops));
	waits_cap = 2 * hops_cap + 64 * MAX_THREADS;
	waits = prefault(waits_cap * sizeof(*waits));
	stretches_cap = (size_t)opt.requests * per_request_stretches() + 64;
	stretches = prefault(stretches_cap * sizeof(*stretches));
	reqs = prefault(((size_t)opt.requests + 1) * sizeof(*reqs));

	mech_global_init();
	cache_init();
	if (chain_has(EL_TASK))
		rt_start();

	fronts = prefault((size_t)opt.clients * sizeof(*fronts));
	if (use_workers)
		workers = prefault((size_t)opt.workers * sizeof(*workers));
	if (pthread_barrier_init(&start_bar, NULL,
				 (unsigned)(opt.clients + (use_workers ? opt.workers : 0) + 1)))
		die("pthread_barrier_init", errno);
	for (int i = 0; use_workers && i < opt.workers; i++)
		workers[i].lk = (spin_t)SPIN_INIT;
	for (int i = 0; use_workers && i < opt.workers; i++) {
		if ((rc = pthread_create(&workers[i].th, NULL, worker_main, &workers[i])))
			die("pthread_create", rc);
	}
	for (int i = 0; i < opt.clients; i++)
		if ((rc = pthread_create(&fronts[i].th, NULL, front_main, &fronts[i])))
			die("pthread_create", rc);
	noise_start();
	pthread_barrier_wait(&start_bar);

	for (int i = 0; i < opt.clients; i++)
		pthread_join(fronts[i].th, NULL);
	noise_stop();
	for (int i = 0; use_workers && i < opt.workers; i++) {
		post(&main_ctx, &workers[i], &stop_job, 0);
		pthread_join(workers[i].th, NULL);
	}
	if (chain_has(EL_TASK))
		rt_stop();
	pthread_barrier_destroy(&start_bar);

	return write_truth();
}
