// SPDX-License-Identifier: MIT
/*
 * The go class: a Go program's goroutines, their handoffs and its
 * net/http requests (docs/model.md §6.2), from uprobes on its runtime.
 *
 * Identity (tables.sql says it for the database):
 *  - a goroutine is ('runtime_task', 'pid:N', goid), born at the return
 *    of the newproc1 that made it, ended at its goexit0. The runtime
 *    never reuses a goid (it reuses g structs, which is why BPF reads the
 *    goid and never names a g by its address), so a second generation of
 *    one goid means a lost exit, and the identity layer ends the first;
 *  - a request is ('request', 'pid:N', address of its *http.Request),
 *    begun at serverHandler.ServeHTTP's entry on its goroutine, ended at
 *    its return on the same goroutine. The address is reused by later
 *    requests, each a new generation, as a query's text address is.
 *
 * What runs on a thread. A goroutine runs on the thread that executed it
 * until it parks, exits or the thread executes another: the thread's
 * running node at rank CW_RUN_RUNTIME_TASK, and its open request, if any,
 * at CW_RUN_REQUEST. Each thread holds one (goid, node) at most, in a
 * table of at most MAX_THREADS (or --max-live) entries; past that a
 * thread's goroutine is not followed (counted in go_state_dropped): the
 * thread is then what runs, less specific, never wrong. An answer holds
 * only while that generation is live and no coverage break lies since it
 * began, for a lost park and execute in the break would leave the thread
 * named as running what it left.
 *
 * Handoffs. newproc1 names the goroutine of the go statement (spawn: it
 * → the new one); ready names the goroutine that readied another (wake:
 * the readier, or the thread when none ran, the scheduler's own work:
 * timers), and netpollready the goroutines the netpoller hands back (wake:
 * the thread, which the kernel woke in epoll_wait). The wake's reason is
 * the wait reason of the park it ends ("chan receive"), the binary's own
 * strings. A goroutine executed after a park that no ready ended was
 * readied by a path the class does not probe, or in lost data: its wake
 * is written with an unknown cause, so that what it carried before the
 * park is not taken for what it works for now.
 *
 * What was not probed. With --go-probes requests (the binary's record
 * says so, and so do its attached bits) there are no execute, park or
 * ready hits: no thread is known to run a goroutine, so samples stay on
 * their threads and no request is the running node of any; there is no
 * resume or wake edge, and none is written with an unknown cause either,
 * for no park was seen to end. A request then has its begin and end
 * edges with the serving goroutine, and so its latency. The begin's
 * thread ran that goroutine at that instant only: it is not taken as
 * running it after, since the goroutine may park and move.
 *
 * Attribution. Goroutines are threads of the Go runtime: every carrying
 * handoff into one tells it whom it works for (cw_obj.takes_all; carry.c),
 * as for a thread, where an adapter task keeps the request it was spawned
 * in. A goroutine serving a request carries it while it does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "carry.h"
#include "classes.h"
#include "lib/htab.h"

#define MAX_BINARIES 256
#define MAX_REASONS 64
#define MAX_THREADS 65536
#define THREAD_BITS 12
#define THREAD_BUCKETS (1u << THREAD_BITS)

static const char R_ORPHAN_SPAWN[] = "orphan: goroutine made before attach";
static const char R_ORPHAN_SPAWN_BREAK[] = "orphan: goroutine made in a coverage break";
static const char R_ORPHAN_BEGIN[] = "orphan: request begun before attach";
static const char R_ORPHAN_BEGIN_BREAK[] = "orphan: request begun in a coverage break";
static const char R_NOT_READIED[] = "readied by an unobserved path";
static const char R_UNKNOWN_REASON[] = "wait reason unknown";
static const char R_ACROSS_BREAK[] = "join across coverage break";
/*
 * Wait reasons (runtime/runtime2.go's waitReasonStrings) whose ending
 * hands the goroutine no work: a lock it waited for (go1.19 parks every
 * sync.Mutex, RWMutex and WaitGroup waiter as "semacquire"; later
 * versions name each), or its own time.Sleep timer.
 */
static const char *const keeps_reasons[] = {
	"semacquire",	     "sync.Mutex.Lock", "sync.RWMutex.Lock", "sync.RWMutex.RLock",
	"sync.WaitGroup.Wait", "sleep",
};


/* A binary the capture attached: its wait reasons, by number. */
struct gbin {
	uint32_t id;
	uint16_t attached;
	uint64_t attach_ns;
	uint32_t nreasons;
	char *reasons[MAX_REASONS]; /* owned; live until fini: edges name them */
};

/* The goroutine a thread runs. */
struct gthr {
	struct cw_hnode hn;
	uint64_t thread; /* node id */
	uint32_t pid;
	uint64_t goid, node, since;
};

/* What the class keeps with each goroutine (its state bytes, ident.h):
 * the request it serves, and while it is parked the park's reason. */
struct gstate {
	uint64_t req;	   /* node id, 0: none */
	uint64_t req_key;
	const char *parked; /* the wait reason, NULL: not parked */
};
CW_OBJ_STATE_OF(gstate_of, struct gstate, state)

#define CW_GO_COUNTERS(X)                                                                          \
	X(binaries, "go_binaries", "Go binaries the capture attached")                             \
	X(binaries_requests, "go_binaries_requests",                                               \
	  "of them, attached with --go-probes requests: no handoff probed")                        \
	X(binaries_dropped, "go_binaries_dropped", "binary records past the bound, or malformed")  \
	X(hits, "go_hits", "runtime probe hits joined")                                            \
	X(unknown_binary, "go_hits_unknown_binary", "hits of a binary no record declared")         \
	X(not_readied, "go_parks_not_readied", "parks ended by an execute with no ready seen")     \
	X(unreadable, "go_hits_unreadable",                                                        \
	  "hits naming goroutine 0: its g could not be read, nothing joined")                     \
	X(unpaired, "go_unpaired_ends", "request ends with no request open on the goroutine")      \
	X(dropped, "go_state_dropped", "threads whose goroutine was not followed: the bound")

struct go_stats {
	CW_GO_COUNTERS(CW_COUNTER_FIELD)
};

struct golang {
	struct go_stats st;
	struct gbin bins[MAX_BINARIES];
	uint32_t nbins;
	struct cw_htab thr; /* by thread node id */
	size_t max_thr;
};

static struct go_stats *stats_of(const struct cw_cls *c)
{
	return &((struct golang *)c->state)->st;
}

static uint64_t bucket(uint64_t x)
{
	return (x * 0x9e3779b97f4a7c15ull) >> (64 - THREAD_BITS);
}

static struct gbin *bin_find(struct golang *g, uint32_t id)
{
	for (uint32_t i = 0; i < g->nbins; i++)
		if (g->bins[i].id == id)
			return &g->bins[i];
	return NULL;
}

static int on_binary(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_go_binary *r = (const void *)h;
	const char *s = (const char *)(r + 1) + r->version_len + r->path_len, *end;
	struct golang *g = c->state;
	struct gbin *b;

	if ((size_t)r->version_len + r->path_len + r->reasons_len > h->size - sizeof(*r)) {
		stats_of(c)->binaries_dropped++;
		c->st->bad_records++;
		return 0;
	}
	/* Ids are unique in a trace: a second record is not believed. */
	if (!r->id || bin_find(g, r->id) || g->nbins == MAX_BINARIES) {
		stats_of(c)->binaries_dropped++;
		return 0;
	}
	b = &g->bins[g->nbins++];
	b->id = r->id;
	b->attached = r->attached;
	b->attach_ns = h->ts;
	end = s + r->reasons_len;
	while (s < end && b->nreasons < MAX_REASONS) {
		size_t n = strnlen(s, (size_t)(end - s));

		if (!(b->reasons[b->nreasons] = strndup(s, n)))
			return -ENOMEM;
		b->nreasons++;
		s += n + 1;
	}
	stats_of(c)->binaries++;
	if (h->flags & CW_GO_REQUESTS_ONLY)
		stats_of(c)->binaries_requests++;
	return 0;
}

/* ---- threads: the goroutine each runs ----------------------------------- */

static struct gthr *thr_find(struct golang *g, uint64_t thread)
{
	struct gthr *e;

	cw_htab_for_each_possible(&g->thr, e, hn, bucket(thread))
		if (e->thread == thread)
			return e;
	return NULL;
}

static void thr_clear(struct golang *g, struct gthr *e)
{
	cw_htab__del(&g->thr, &e->hn, bucket(e->thread));
	free(e);
}

/* @thread runs @t from @ts. @return 0, or -ENOMEM. */
static int thr_set(struct cw_cls *c, const struct cw_obj *thread, const struct cw_obj *t,
		   uint64_t ts)
{
	struct golang *g = c->state;
	struct gthr *e = thr_find(g, thread->n.id);

	if (!e) {
		if (g->thr.n >= g->max_thr) {
			stats_of(c)->dropped++;
			return 0;
		}
		if (!(e = calloc(1, sizeof(*e))))
			return -ENOMEM;
		e->thread = thread->n.id;
		cw_htab__add(&g->thr, &e->hn, bucket(e->thread));
	}
	e->pid = (uint32_t)thread->n.pid;
	e->goid = t->n.key;
	e->node = t->n.id;
	e->since = ts;
	return 0;
}

/* @thread no longer runs goroutine @goid (or, @goid 0, anything). */
static void thr_leave(struct golang *g, const struct cw_obj *thread, uint64_t goid)
{
	struct gthr *e = thr_find(g, thread->n.id);

	if (e && (!goid || e->goid == goid))
		thr_clear(g, e);
}

static void scope_name(char *buf, size_t len, uint32_t pid)
{
	snprintf(buf, len, "pid:%u", pid);
}

/* The goroutine @e names, if it is still that generation and no break
 * lies since it began running. */
static struct cw_obj *thr_goroutine(struct cw_cls *c, const struct gthr *e, uint64_t ts)
{
	char name[24];
	const struct cw_scope *sc;
	struct cw_obj *o;

	scope_name(name, sizeof(name), e->pid);
	sc = cw_ident__scope_find(c->id, name);
	o = sc ? cw_ident__live(c->id, CW_NODE_RUNTIME_TASK, sc, e->goid) : NULL;
	if (!o || o->n.id != e->node || cw_ident__break_since(c->id, e->since, ts))
		return NULL;
	return o;
}

/* The request goroutine @t serves, if that generation is still live. */
static struct cw_obj *served(struct cw_cls *c, struct cw_obj *t)
{
	const struct gstate *s = gstate_of(t);
	struct cw_obj *q;

	char name[24];
	const struct cw_scope *sc;

	if (!s->req || t->n.pid < 0 || t->n.pid > UINT32_MAX)
		return NULL;
	scope_name(name, sizeof(name), (uint32_t)t->n.pid);
	if (!(sc = cw_ident__scope_find(c->id, name)))
		return NULL;
	q = cw_ident__live(c->id, CW_NODE_REQUEST, sc, s->req_key);
	return q && q->n.id == s->req ? q : NULL;
}

static uint64_t go_running_since(struct cw_cls *c, const struct cw_obj *thread)
{
	const struct gthr *e = thr_find(c->state, thread->n.id);

	return e ? e->since : 0;
}

static struct cw_obj *go_running(struct cw_cls *c, const struct cw_obj *thread,
				 const struct cw_hdr *h, int rank)
{
	const struct gthr *e = thr_find(c->state, thread->n.id);
	struct cw_obj *t = e ? thr_goroutine(c, e, h->ts) : NULL;

	if (!t || rank == CW_RUN_RUNTIME_TASK)
		return t;
	return served(c, t);
}

/* ---- a hit ------------------------------------------------------------ */

struct hit {
	const struct cw_go *r;
	const struct cw_hdr *h;
	struct gbin *b;
	struct cw_obj *thread;
	uint8_t tconf;
	const struct cw_scope *scope;
};

static uint8_t weaker(uint8_t a, uint8_t b)
{
	return a > b ? a : b;
}

static int edge_x(struct cw_cls *c, const struct hit *x, uint8_t type, const struct cw_obj *src,
		  const struct cw_obj *dst, uint8_t source, uint8_t conf, const char *reason,
		  const struct cw_edge_extra *extra)
{
	conf = weaker(conf, x->tconf);
	if (conf == CW_CONF_RECONSTRUCTED && !reason)
		reason = R_ACROSS_BREAK;
	return cw_ident__edge_x(c->id, type, src, dst, x->h, source, conf, reason, extra);
}

static int edge(struct cw_cls *c, const struct hit *x, uint8_t type, const struct cw_obj *src,
		const struct cw_obj *dst, uint8_t source, uint8_t conf, const char *reason)
{
	return edge_x(c, x, type, src, dst, source, conf, reason, NULL);
}

/*
 * The live generation of goroutine (or request) @key, or an orphan with
 * the edge that says why its birth is missing: made before the binary
 * was attached, or in a coverage break since.
 */
static struct cw_obj *named(struct cw_cls *c, const struct hit *x, uint8_t type, uint64_t key,
			    int *err)
{
	int request = type == CW_NODE_REQUEST;
	struct cw_obj *o = cw_ident__live(c->id, type, x->scope, key);
	const char *why;

	if ((*err = cw_ident__stale(c->id, o, x->h->ts)) < 0)
		return NULL;
	if (*err) {
		*err = 0;
		o = NULL;
	}
	if (o) {
		cw_ident__touch(c->id, o);
		return o;
	}
	o = cw_ident__orphan(c->id, type, x->scope, key, x->h, -1, NULL, err);
	if (!o)
		return NULL;
	o->n.pid = x->r->task.pid;
	if (!request)
		o->takes_all = 1;
	c->st->orphans++;
	if (cw_ident__break_in(c->id, x->b->attach_ns, x->h->ts))
		why = request ? R_ORPHAN_BEGIN_BREAK : R_ORPHAN_SPAWN_BREAK;
	else
		why = request ? R_ORPHAN_BEGIN : R_ORPHAN_SPAWN;
	*err = cw_ident__edge(c->id, request ? CW_EDGE_BEGIN : CW_EDGE_SPAWN, NULL, o, x->h,
			      request ? CW_SRC_APPLICATION : CW_SRC_RUNTIME, CW_CONF_UNKNOWN, why);
	return *err ? NULL : o;
}

/* The goroutine running the probe, or when none (goid 0) the thread. */
static struct cw_obj *actor(struct cw_cls *c, const struct hit *x, uint64_t goid, int *err)
{
	*err = 0;
	return goid ? named(c, x, CW_NODE_RUNTIME_TASK, goid, err) : x->thread;
}

static int do_spawn(struct cw_cls *c, const struct hit *x)
{
	const struct cw_go_spawn *r = (const void *)x->h;
	struct cw_obj *parent, *t;
	int err;

	if (!(parent = actor(c, x, r->g.other, &err)))
		return err;
	t = cw_ident__new_gen(c->id, CW_NODE_RUNTIME_TASK, x->scope, r->g.goid, x->h->ts, 1, &err);
	if (!t)
		return err;
	t->n.pid = r->g.task.pid;
	t->n.tid = r->g.task.tid;
	t->takes_all = 1;
	if (r->func[0])
		cw_obj__set_name(t, r->func, sizeof(r->func));
	return edge(c, x, CW_EDGE_SPAWN, parent, t, CW_SRC_RUNTIME, CW_CONF_OBSERVED, NULL);
}

static int do_execute(struct cw_cls *c, const struct hit *x)
{
	struct cw_obj *t;
	struct gstate *s;
	int err;

	if (!(t = named(c, x, CW_NODE_RUNTIME_TASK, x->r->goid, &err)))
		return err;
	s = gstate_of(t);
	if (s->parked) {
		/* no ready seen: what readied it is unknown */
		stats_of(c)->not_readied++;
		s->parked = NULL;
		if ((err = cw_ident__edge(c->id, CW_EDGE_WAKE, NULL, t, x->h, CW_SRC_RUNTIME,
					  CW_CONF_UNKNOWN, R_NOT_READIED)))
			return err;
	}
	if ((err = thr_set(c, x->thread, t, x->h->ts)))
		return err;
	return edge(c, x, CW_EDGE_RESUME, t, x->thread, CW_SRC_RUNTIME, CW_CONF_OBSERVED, NULL);
}

static int do_park(struct cw_cls *c, const struct hit *x)
{
	struct cw_obj *t;
	int err;

	if (!(t = named(c, x, CW_NODE_RUNTIME_TASK, x->r->goid, &err)))
		return err;
	gstate_of(t)->parked = x->r->other < x->b->nreasons ? x->b->reasons[x->r->other] :
							      R_UNKNOWN_REASON;
	thr_leave(c->state, x->thread, x->r->goid);
	return 0;
}

/*
 * Does a wake from @src into a goroutine parked for @reason leave it the
 * request it works for (docs/model.md §6.2)? When no goroutine readied
 * it: the thread only ran the runtime's own work (a timer, the netpoller,
 * an injected list) on g0, and what the thread was handed is no evidence
 * of what the goroutine was. When it waited for a lock: the releaser hands
 * over the lock, not work.
 */
static int wake_keeps(const struct hit *x, const struct cw_obj *src, const char *reason)
{
	if (src == x->thread)
		return 1;
	for (size_t i = 0; reason && i < sizeof(keeps_reasons) / sizeof(keeps_reasons[0]); i++)
		if (!strcmp(reason, keeps_reasons[i]))
			return 1;
	return 0;
}

static int do_ready(struct cw_cls *c, const struct hit *x)
{
	struct cw_edge_extra extra = { .interrupted = -1 };
	struct cw_obj *t, *src;
	const char *reason;
	int err;

	/* The netpoller is the thread's own work, whatever ran before. */
	if (!(src = actor(c, x, (x->h->flags & CW_GO_NETPOLL) ? 0 : x->r->other, &err)))
		return err;
	if (!(t = named(c, x, CW_NODE_RUNTIME_TASK, x->r->goid, &err)))
		return err;
	reason = gstate_of(t)->parked;
	gstate_of(t)->parked = NULL;
	extra.keeps = (uint8_t)wake_keeps(x, src, reason);
	return edge_x(c, x, CW_EDGE_WAKE, src, t, CW_SRC_RUNTIME, CW_CONF_OBSERVED, reason, &extra);
}

static int do_exit(struct cw_cls *c, const struct hit *x)
{
	struct cw_obj *t = cw_ident__live(c->id, CW_NODE_RUNTIME_TASK, x->scope, x->r->goid);

	thr_leave(c->state, x->thread, x->r->goid);
	/* An exit of a goroutine never seen is nothing to join. */
	if (!t)
		return 0;
	t->n.end_ns = (int64_t)x->h->ts;
	t->ended = 1;
	return cw_ident__release(c->id, t);
}

static int do_request(struct cw_cls *c, const struct hit *x)
{
	struct cw_obj *t, *q;
	struct gstate *s;
	struct cw_carry *k;
	int err;

	if (!(t = actor(c, x, x->r->goid, &err)))
		return err;
	s = t->n.type == CW_NODE_RUNTIME_TASK ? gstate_of(t) : NULL;
	if (x->h->type == CW_REC_GO_REQ_BEGIN) {
		const struct cw_go_req *r = (const void *)x->h;

		q = cw_ident__new_gen(c->id, CW_NODE_REQUEST, x->scope, r->g.pc, x->h->ts, 1, &err);
		if (!q)
			return err;
		q->n.pid = r->g.task.pid;
		q->n.tid = r->g.task.tid;
		if (r->name[0])
			cw_obj__set_name(q, r->name, sizeof(r->name));
		if (s) {
			s->req = q->n.id;
			s->req_key = q->n.key;
			/* what it hands on while it serves q is q's */
			k = cw_carry__get(t);
			cw_carry__origin(k, q);
			k->since = x->h->ts;
		}
		return edge(c, x, CW_EDGE_BEGIN, t, q, CW_SRC_APPLICATION, CW_CONF_OBSERVED, NULL);
	}
	if (!s || !(q = served(c, t))) {
		stats_of(c)->unpaired++;
		return 0;
	}
	s->req = 0;
	q->n.end_ns = (int64_t)x->h->ts;
	q->ended = 1;
	err = edge(c, x, CW_EDGE_END, q, t, CW_SRC_APPLICATION, CW_CONF_OBSERVED, NULL);
	return err ?: cw_ident__release(c->id, q);
}

static int on_go(struct cw_cls *c, const struct cw_hdr *h)
{
	struct hit x = { .r = (const void *)h, .h = h };
	char sname[24];
	int err, matched;

	if (!(x.b = bin_find(c->state, x.r->binary))) {
		stats_of(c)->unknown_binary++;
		return 0;
	}
	if (!x.r->task.tid) {
		c->st->bad_records++;
		return 0;
	}
	x.thread = cw_cls__thread(c, &x.r->task, x.r->task_start, h, CW_T_CREATE | CW_T_PROOF,
				  &matched, &err);
	if (!x.thread)
		return err;
	x.tconf = matched ? CW_CONF_OBSERVED : cw_ident__conf(c->id, x.thread, h->ts);
	scope_name(sname, sizeof(sname), x.r->task.pid);
	if (!(x.scope = cw_ident__scope(c->id, sname)))
		return -ENOMEM;
	stats_of(c)->hits++;
	/* Goroutine 0 is no goroutine: its g could not be read (BPF writes
	 * only execute so; a request's serving goroutine may be none, the
	 * thread then). An execute still says the one before stopped. */
	if (!x.r->goid && h->type != CW_REC_GO_REQ_BEGIN && h->type != CW_REC_GO_REQ_END) {
		stats_of(c)->unreadable++;
		if (h->type == CW_REC_GO_EXECUTE)
			thr_leave(c->state, x.thread, 0);
		return 0;
	}
	switch (h->type) {
	case CW_REC_GO_SPAWN:
		return do_spawn(c, &x);
	case CW_REC_GO_EXECUTE:
		return do_execute(c, &x);
	case CW_REC_GO_PARK:
		return do_park(c, &x);
	case CW_REC_GO_READY:
		return do_ready(c, &x);
	case CW_REC_GO_EXIT:
		return do_exit(c, &x);
	default:
		return do_request(c, &x);
	}
}

static void go_fini(void *state);

static void *go_init(struct cw_ident *id, int *err)
{
	struct golang *g = calloc(1, sizeof(*g));
	size_t live = cw_ident__max_live(id);

	if (!g || cw_htab__grow(&g->thr, THREAD_BUCKETS, NULL, 0)) {
		go_fini(g);
		*err = -ENOMEM;
		return NULL;
	}
	g->max_thr = live && live < MAX_THREADS ? live : MAX_THREADS;
	return g;
}

static void go_fini(void *state)
{
	struct golang *g = state;

	if (!g)
		return;
	for (uint32_t i = 0; i < g->nbins; i++)
		for (uint32_t k = 0; k < g->bins[i].nreasons; k++)
			free(g->bins[i].reasons[k]);
	cw_htab__free_entries(&g->thr, offsetof(struct gthr, hn));
	cw_htab__free(&g->thr);
	free(g);
}

static const struct cw_handler handlers[] = {
	{ CW_REC_META_GO, on_binary },
	{ CW_REC_GO_SPAWN, on_go },
	{ CW_REC_GO_EXECUTE, on_go },
	{ CW_REC_GO_PARK, on_go },
	{ CW_REC_GO_READY, on_go },
	{ CW_REC_GO_EXIT, on_go },
	{ CW_REC_GO_REQ_BEGIN, on_go },
	{ CW_REC_GO_REQ_END, on_go },
	{ 0 },
};

#define GO_ENTRY(field, key, comment) CW_COUNTER_ENTRY(struct golang, st.field, key)
static const struct cw_counter counters[] = {
	CW_GO_COUNTERS(GO_ENTRY)
	{ NULL, 0, 0 },
};

const struct cw_aclass cw_aclass_go = {
	.name = "go",
	.init = go_init,
	.fini = go_fini,
	.handlers = handlers,
	.running_ranks = 1u << CW_RUN_REQUEST | 1u << CW_RUN_RUNTIME_TASK,
	.running = go_running,
	.running_since = go_running_since,
	.counters = counters,
};
