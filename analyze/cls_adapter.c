// SPDX-License-Identifier: MIT
/*
 * The adapter class: runtime tasks, requests and resources that programs
 * declare through USDT probes (docs/model.md §6), and the probes real software
 * already ships (PostgreSQL), mapped to the same contract by one table.
 *
 * Probes. The capture writes a record for every probe it attached (id,
 * provider, name, the object's path, which argument it copies as a
 * string) stamped when the attach completed; hits carry the probe id and
 * the arguments whole. The table below maps (provider, probe name) to an
 * operation and says which argument is what, so a new adapter is rows,
 * not code. A hit of a probe id no record declared, or of a probe no row
 * maps, is counted and ignored. The probe table is bounded (MAX_PROBES);
 * a probe past it is counted and its hits are hits of an unknown id.
 *
 * Identity (tables.sql says it for the database):
 *  - a runtime task is ('runtime_task', 'pid:N', task id); its spawn is
 *    a birth, its exit the end of the generation, so an id reused after
 *    task_exit is a new generation;
 *  - a request is ('request', 'pid:N', request id), born at its begin,
 *    ended at its end, named by the string the probe gives;
 *  - a resource is ('resource', 'pid:N/KIND', id), because two kinds may
 *    share an id and a key means something only inside its scope. A
 *    composite identity (a lock tag, a buffer page) is spelled whole in
 *    the name and hashed into the key; two names with one hash are two
 *    nodes (the second in the scope 'pid:N/KIND/NAME'). N is the process
 *    that ran the probe, or for resources the processes of a server
 *    share, the server: the backend's parent process from its fork in
 *    the trace (cw_cls__parent_pid), the backend itself when that is not
 *    known, so that nothing is joined across backends on a guess.
 *
 * Orphans. A probe naming a task or request with no live generation
 * (a poll of a task never spawned in the trace, a request end without its
 * begin) makes an orphan with a reason, never a join to a dead or likely
 * generation. Hits before a probe was attached were not captured, so the
 * reason says which is most likely the case: the probe that shows the
 * birth was attached after it ('before attach'), loss lies between that
 * attach and the hit ('coverage break'), or no such probe was attached.
 * A poll end with no poll begun on the thread, or a wait end with no
 * wait, is counted (meta.usdt_unpaired_ends): nothing is made of it.
 *
 * What runs on a thread. Between poll begin and end a task is the
 * thread's running node; between request begin and end the request is,
 * unless a task is polled (the running hook answers at two ranks). Each
 * thread with something open has an entry of at most RUN_DEPTH frames
 * and MAX_WAITS waits, and there are at most MAX_THREADS entries (or
 * --max-live, if smaller); an answer holds only while the frame's
 * generation is still live, so a lost end can never attach later work to
 * something that is over. A request begun on one thread and ended on
 * another leaves a stale frame: stale frames are pruned before a bound
 * is applied, and a full table is swept of entries with nothing open.
 * Past the bounds the oldest frame goes, or a wait is not followed
 * (counted in meta.adapter_state_dropped): less specific, never wrong.
 *
 * Waits (resource_waits). The waiter is what ran on the thread at the
 * begin. The wake that ended the wait is the last wake or fire edge into
 * the thread in (begin, end]: this class watches the wake records, and
 * when the sched class has just written such an edge into a waiting
 * thread, it notes the edge and the waker then: the edge's src, or when
 * that is a thread, the request it was working on at that moment. It is
 * never worked out later, when the waker may be doing something else.
 * A wake that comes while a wait begun within this one is open ends a
 * sleep of that wait, not of this one (docs/model.md §6: a PostgreSQL
 * backend granted a lock waits, still inside its lock wait, for the
 * lock manager's LWLock, whose release wakes it): the wait's wake is its
 * own last, outside the waits nested in it, and none when a wait begun
 * in it was not seen to end in it (its wakes cannot be told).
 * Where the resource's releases are seen, the release lets the waiter
 * in: the wake is the last one from the thread of its last release,
 * after it (the thread may have slept on something else since, the mmap
 * lock in a uprobe, woken by another). Without such a wake (the waiter
 * had not slept; a barging thread took the lock after the wake and
 * released it without one) the waker is what ran where the last release
 * in the wait was made, reconstructed; with no release in the wait, it
 * is unknown.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "classes.h"
#include "lib/htab.h"

enum op {
	OP_SPAWN,
	OP_WAKE,
	OP_POLL_BEGIN,
	OP_POLL_END,
	OP_EXIT,
	OP_REQ_BEGIN,
	OP_REQ_END,
	OP_ACQUIRE,
	OP_RELEASE,
	OP_WAIT_BEGIN,
	OP_WAIT_END,
};

/* Where a resource's processes are: its own, or the server's. */
enum { SC_PROCESS, SC_SERVER };

/* Argument numbers in the table are A(n): 0 means none. */
#define A(n) ((n) + 1)
#define MAX_IDENT 5

/*
 * One row per probe an adapter maps. id: the argument holding the task,
 * request or resource id (none: the composite identity .ident). parent:
 * the parent task of a spawn. str: the argument whose string is the
 * request's name or the resource's kind (none: .kind). ident: the
 * arguments of a composite identity, in the order they are spelled; an
 * argument the probe copies as a string is its string, else its number.
 * quiet: a wait end whose argument is not 0 closes the wait without a
 * row, because nothing was waited for (PostgreSQL's found: the page was
 * in the buffer pool), counted in meta.resource_waits_quiet.
 */
struct row {
	const char *provider, *probe;
	uint8_t op, id, parent, str;
	const char *kind;
	uint8_t scope;
	uint8_t ident[MAX_IDENT];
	uint8_t quiet;
};

static const struct row rows[] = {
	/* include/causeway.h: the contract itself. */
	{ "causeway", "task_spawn", OP_SPAWN, .id = A(0), .parent = A(1) },
	{ "causeway", "task_wake", OP_WAKE, .id = A(0) },
	{ "causeway", "task_poll_begin", OP_POLL_BEGIN, .id = A(0) },
	{ "causeway", "task_poll_end", OP_POLL_END, .id = A(0) },
	{ "causeway", "task_exit", OP_EXIT, .id = A(0) },
	{ "causeway", "request_begin", OP_REQ_BEGIN, .id = A(0), .str = A(1) },
	{ "causeway", "request_end", OP_REQ_END, .id = A(0) },
	{ "causeway", "resource_acquire", OP_ACQUIRE, .id = A(1), .str = A(0) },
	{ "causeway", "resource_release", OP_RELEASE, .id = A(1), .str = A(0) },
	{ "causeway", "resource_wait_begin", OP_WAIT_BEGIN, .id = A(1), .str = A(0) },
	{ "causeway", "resource_wait_end", OP_WAIT_END, .id = A(1), .str = A(0) },
	/*
	 * PostgreSQL (src/backend/utils/probes.d). The capture attaches
	 * only the probes schema/adapters.h lists, and copies the string
	 * argument it names: a row here for a probe not listed there would
	 * never see a hit (tests/test_adapter.c checks both ways). A query
	 * is a request of its backend: query__start and query__done both
	 * pass the query text's address, which is the id, and the text is
	 * the name.
	 * Locks, LWLocks and buffer pages are the cluster's, shared by its
	 * backends: scoped to the postmaster.
	 *  lock__wait__*(locktag_field1..4, locktag_type, lockmode): the
	 *    lock tag is the identity (the mode is the waiter's, not the
	 *    lock's);
	 *  lwlock__wait__*(tranche name, mode): PostgreSQL names only the
	 *    tranche, so all LWLocks of a tranche are one resource;
	 *  buffer__read__*(fork, block, tablespace, database, relation,
	 *    backend, is_extend[, found]): reading a page into a buffer is
	 *    a wait on the page (tablespace/database/relation/fork/block),
	 *    which ends at once when the page is in the pool.
	 */
	{ "postgresql", "query__start", OP_REQ_BEGIN, .id = A(0), .str = A(0) },
	{ "postgresql", "query__done", OP_REQ_END, .id = A(0) },
	{ "postgresql", "lock__wait__start", OP_WAIT_BEGIN, .kind = "lock", .scope = SC_SERVER,
	  .ident = { A(0), A(1), A(2), A(3), A(4) } },
	{ "postgresql", "lock__wait__done", OP_WAIT_END, .kind = "lock", .scope = SC_SERVER,
	  .ident = { A(0), A(1), A(2), A(3), A(4) } },
	{ "postgresql", "lwlock__wait__start", OP_WAIT_BEGIN, .kind = "lwlock",
	  .scope = SC_SERVER, .ident = { A(0) } },
	{ "postgresql", "lwlock__wait__done", OP_WAIT_END, .kind = "lwlock", .scope = SC_SERVER,
	  .ident = { A(0) } },
	{ "postgresql", "buffer__read__start", OP_WAIT_BEGIN, .kind = "buffer",
	  .scope = SC_SERVER, .ident = { A(2), A(3), A(4), A(0), A(1) } },
	{ "postgresql", "buffer__read__done", OP_WAIT_END, .kind = "buffer", .scope = SC_SERVER,
	  .ident = { A(2), A(3), A(4), A(0), A(1) }, .quiet = A(7) },
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* Task ops are the runtime's, the rest the application's (edges.source). */
static uint8_t source_of(uint8_t op)
{
	return op <= OP_EXIT ? CW_SRC_RUNTIME : CW_SRC_APPLICATION;
}

/* Orphan reasons (edges.reason is a static string), by what the birth
 * probe says: [task | request][before attach | break | not attached]. */
enum { WHY_BEFORE, WHY_BREAK, WHY_UNATTACHED };
static const char *const R_ORPHAN[2][3] = {
	{ "orphan: spawn before attach", "orphan: spawn not in trace (coverage break)",
	  "orphan: spawn probe not attached" },
	{ "orphan: request begin before attach",
	  "orphan: request begin not in trace (coverage break)",
	  "orphan: request begin probe not attached" },
};
static const char R_ACROSS_BREAK[] = "join across coverage break";

#define MAX_PROBES 16384
#define PROBE_BITS 10
#define PROBE_BUCKETS (1u << PROBE_BITS)
#define MAX_THREADS 65536
#define THREAD_BITS 12
#define THREAD_BUCKETS (1u << THREAD_BITS)
#define RUN_DEPTH 8
#define MAX_WAITS 4
#define KIND_MAX 255 /* a string argument's longest */
#define NAME_MAX_ 1600 /* "KIND " + 5 components of at most 255 bytes or 20 digits */

struct probe {
	struct cw_hnode hn;
	uint32_t id, pid;
	uint8_t nargs, str_arg;
	int16_t row; /* in rows[], -1: no adapter maps it */
	uint64_t attach_ns;
	uint64_t path_hash; /* the object's path: a hash is enough to pair probes */
	/* The attach of the earliest probe that shows the birth of what this
	 * one names (same provider and object), cached for table version
	 * birth_ver; birth_found 0: there is none. */
	uint64_t birth_ns;
	uint32_t birth_ver;
	uint8_t birth_found;
};

/* Something running on a thread: a polled task or a request. */
struct frame {
	uint8_t type; /* CW_NODE_RUNTIME_TASK | CW_NODE_REQUEST */
	uint64_t key, node;
	uint64_t since; /* the poll begin or request begin: ts */
};

/* A wake into a waiting thread: its edge, the node running in the
 * waker's context then, and the waker's thread (0: not a thread's doing,
 * an interrupt's). */
struct wake_seen {
	uint64_t edge, ts, waker, thread;
	uint8_t conf;
};

/*
 * last: the wait's last own wake so far; other: its last own one from
 * another thread than last's. A wait can see a wake that is not its own
 * after the one that let it in (its thread slept on something else
 * before it said the wait was over: the mmap lock, in a uprobe): where
 * the resource's releases are seen, the wake must come from its last
 * releaser, and other keeps that one when something else came after.
 *
 * A wake is the wait's own when no other wait of the thread begun at or
 * after its begin is open (docs/model.md §6, nested waits). One that
 * comes while such a wait is open is the inner wait's if that wait ends
 * within this one, its end seen; until then it is unsure: the earliest
 * unsure wake's time (0: none). An own wake clears it (what came before
 * the wait's last own wake does not change which that is), and so does
 * the end of a wait begun after this one and before the earliest unsure
 * wake (they all lay in it). Left at the end, it makes the wake unknown.
 * nested: a wake lay in a wait nested in this one. blind: a wait begun
 * in it was not followed (the bounds), so no later wake is known to be
 * its own.
 */
struct wait {
	uint64_t res, waiter, start;
	struct wake_seen last, other;
	uint64_t unsure;
	uint8_t nested, blind;
};

/* What the class keeps with each resource (its state bytes, ident.h): its
 * last release seen: when, the thread (node id) that released it and what
 * ran there (the release edge's src). It names who let a waiter in. */
struct release {
	uint64_t ts, releaser, src;
};
CW_OBJ_STATE_OF(release_of, struct release, state)

struct thr {
	struct cw_hnode hn;
	uint64_t thread; /* node id */
	uint32_t pid;
	uint8_t depth, nwaits;
	uint64_t changed; /* the last frame begun or ended here: ts */
	struct frame run[RUN_DEPTH];
	struct wait w[MAX_WAITS];
};

/* Both tables keep the buckets they are made with: the waits still open
 * at the end are written in the thread table's order. */
/* The class's counters (analyze/counters.h's form). */
#define CW_ADAPTER_COUNTERS(X)                                                                     \
	X(probes, "usdt_probes", "probe records kept")                                             \
	X(probes_dropped, "usdt_probes_dropped", "probe records past the table's bound, or a repeated id") \
	X(hits, "usdt_hits", "hits joined")                                                        \
	X(unknown_probe, "usdt_hits_unknown_probe", "hits of a probe id no record declared")       \
	X(unmapped, "usdt_hits_unmapped", "hits of a probe no adapter row maps")                   \
	X(malformed, "usdt_malformed",                                                             \
	  "hits or probes whose fields cannot be (also in records_malformed)")                     \
	X(unpaired, "usdt_unpaired_ends", "ends with nothing open to end: a poll end, a wait end") \
	X(dropped, "adapter_state_dropped", "intervals or waits not followed: the bounds")         \
	X(waits, "resource_waits", "resource_waits rows")                                          \
	X(waits_quiet, "resource_waits_quiet", "waits whose end says nothing was waited for: no row")

struct adapter_stats {
	CW_ADAPTER_COUNTERS(CW_COUNTER_FIELD)
};

struct adapter {
	struct adapter_stats st;
	struct cw_htab probes; /* by id */
	uint32_t version; /* bumped by every probe added that shows births */
	struct cw_htab thr; /* by thread node id */
	size_t max_thr;
	size_t since_sweep, sweep_freed; /* refusals since the last sweep; what it freed */
	size_t nwaiting; /* open waits in all entries: 0 makes a wake cost nothing */
};

static struct adapter_stats *stats_of(const struct cw_cls *c)
{
	return &((struct adapter *)c->state)->st;
}

/* The hash of @x in a table of 2^bits buckets, which never grows:
 * Fibonacci hashing, already within the buckets. */
static uint64_t bucket(uint64_t x, unsigned bits)
{
	return (x * 0x9e3779b97f4a7c15ull) >> (64 - bits);
}

/* FNV-1a: a resource's composite identity into its key. */
static uint64_t hash_bytes(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* ---- the probe table -------------------------------------------------- */

static struct probe *probe_find(struct adapter *a, uint32_t id)
{
	struct probe *p;

	cw_htab_for_each_possible(&a->probes, p, hn, bucket(id, PROBE_BITS))
		if (p->id == id)
			return p;
	return NULL;
}

static int row_of(const char *prov, size_t plen, const char *name, size_t nlen)
{
	for (size_t i = 0; i < NROWS; i++)
		if (strlen(rows[i].provider) == plen && !memcmp(rows[i].provider, prov, plen) &&
		    strlen(rows[i].probe) == nlen && !memcmp(rows[i].probe, name, nlen))
			return (int)i;
	return -1;
}

static int on_probe(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_usdt_probe *r = (const void *)h;
	const char *s = (const char *)(r + 1);
	struct adapter *a = c->state;
	struct probe *p;

	if ((size_t)r->provider_len + r->name_len + r->path_len > h->size - sizeof(*r) ||
	    r->nargs > CW_USDT_MAX_ARGS ||
	    (r->str_arg != CW_USDT_NO_STR && r->str_arg >= r->nargs)) {
		stats_of(c)->malformed++;
		c->st->bad_records++;
		return 0;
	}
	/* Ids are unique in a trace: a second record for one is not
	 * believed over the first, whose hits may already be joined. */
	if (probe_find(a, r->id) || a->probes.n >= MAX_PROBES) {
		stats_of(c)->probes_dropped++;
		return 0;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->id = r->id;
	p->pid = r->pid;
	p->nargs = r->nargs;
	p->str_arg = r->str_arg;
	p->row = (int16_t)row_of(s, r->provider_len, s + r->provider_len, r->name_len);
	p->attach_ns = h->ts;
	p->path_hash = hash_bytes(s + r->provider_len + r->name_len, r->path_len);
	cw_htab__add(&a->probes, &p->hn, bucket(p->id, PROBE_BITS));
	/* only a probe that shows births changes what birth_probe finds */
	if (p->row >= 0 && (rows[p->row].op == OP_SPAWN || rows[p->row].op == OP_REQ_BEGIN))
		a->version++;
	stats_of(c)->probes++;
	return 0;
}

/*
 * The attach time of the earliest probe that would show the birth
 * (@birth_op) of what @p names: the same adapter's, in the same object,
 * for the same process. @return 0 when no such probe was attached.
 */
static int birth_probe(struct adapter *a, struct probe *p, uint8_t birth_op, uint64_t *ts)
{
	struct cw_hnode *tmp;
	struct probe *q;
	size_t b;

	if (p->birth_ver != a->version) {
		p->birth_found = 0;
		cw_htab_for_each_safe(&a->probes, b, q, tmp, hn) {
			if (q->row < 0 || rows[q->row].op != birth_op ||
			    rows[q->row].provider != rows[p->row].provider ||
			    q->path_hash != p->path_hash || (q->pid && p->pid && q->pid != p->pid))
				continue;
			if (!p->birth_found || q->attach_ns < p->birth_ns)
				p->birth_ns = q->attach_ns;
			p->birth_found = 1;
		}
		p->birth_ver = a->version;
	}
	*ts = p->birth_ns;
	return p->birth_found;
}

/* ---- threads: what runs on them, what they wait for -------------------- */

static struct thr *thr_find(struct adapter *a, uint64_t thread)
{
	struct thr *e;

	cw_htab_for_each_possible(&a->thr, e, hn, bucket(thread, THREAD_BITS))
		if (e->thread == thread)
			return e;
	return NULL;
}

static void frame_prune(struct cw_cls *c, struct thr *e);

/* Drop the entries with nothing open any more: a request begun on one
 * thread and ended on another leaves the first one's frame stale. */
static void thr_sweep(struct cw_cls *c)
{
	struct adapter *a = c->state;
	struct cw_hnode *tmp;
	struct thr *e;
	size_t b;

	cw_htab_for_each_safe(&a->thr, b, e, tmp, hn) {
		frame_prune(c, e);
		if (e->depth || e->nwaits)
			continue;
		cw_htab__del(&a->thr, &e->hn, bucket(e->thread, THREAD_BITS));
		free(e);
	}
	a->since_sweep = 0;
}

/* The entry of @thread, made if needed; NULL (counted) past the bound. */
static struct thr *thr_get(struct cw_cls *c, const struct cw_obj *thread, int *err)
{
	struct adapter *a = c->state;
	struct thr *e = thr_find(a, thread->n.id);

	*err = 0;
	if (e)
		return e;
	/* A full table is swept when the last sweep freed a quarter of it
	 * (then entries worth a quarter of a sweep were made since), or
	 * after a quarter of its size in refusals: a hostile trace cannot
	 * make every refusal cost a sweep. */
	if (a->thr.n >= a->max_thr && (a->sweep_freed >= a->max_thr / 4 ||
				       ++a->since_sweep > a->max_thr / 4)) {
		size_t before = a->thr.n;

		thr_sweep(c);
		a->sweep_freed = before - a->thr.n;
	}
	if (a->thr.n >= a->max_thr) {
		stats_of(c)->dropped++;
		return NULL;
	}
	if (!(e = calloc(1, sizeof(*e)))) {
		*err = -ENOMEM;
		return NULL;
	}
	e->thread = thread->n.id;
	e->pid = (uint32_t)thread->n.pid;
	cw_htab__add(&a->thr, &e->hn, bucket(e->thread, THREAD_BITS));
	return e;
}

/* An entry with nothing open holds no memory. */
static void thr_gc(struct adapter *a, struct thr *e)
{
	if (e->depth || e->nwaits)
		return;
	cw_htab__del(&a->thr, &e->hn, bucket(e->thread, THREAD_BITS));
	free(e);
}

static void scope_name(char *buf, size_t len, uint32_t pid)
{
	snprintf(buf, len, "pid:%u", pid);
}

/* The frame's generation, if it is still the live one. */
static struct cw_obj *frame_live(struct cw_cls *c, const struct thr *e, const struct frame *f)
{
	char name[24];
	const struct cw_scope *sc;
	struct cw_obj *o;

	scope_name(name, sizeof(name), e->pid);
	sc = cw_ident__scope_find(c->id, name);
	o = sc ? cw_ident__live(c->id, f->type, sc, f->key) : NULL;
	return o && o->n.id == f->node ? o : NULL;
}

/*
 * The innermost live frame of @type on @e at @ts. A frame with a coverage
 * break since it began is not believed: the end of its interval and the
 * begin of another could both be in the break, and the thread would be
 * named as running what it left (a wake of the wrong task). The thread
 * is then what runs: less specific, never wrong.
 */
static struct cw_obj *top_of(struct cw_cls *c, const struct thr *e, uint8_t type, uint64_t ts)
{
	for (int i = e->depth - 1; i >= 0; i--) {
		struct cw_obj *o;

		if (e->run[i].type != type || !(o = frame_live(c, e, &e->run[i])))
			continue;
		if (cw_ident__break_since(c->id, e->run[i].since, ts))
			return NULL;
		return o;
	}
	return NULL;
}

/* Keep only the frames whose generation is still live, in order. */
static void frame_prune(struct cw_cls *c, struct thr *e)
{
	uint8_t n = 0;

	for (uint8_t i = 0; i < e->depth; i++)
		if (e->run[i].node && frame_live(c, e, &e->run[i]))
			e->run[n++] = e->run[i];
	e->depth = n;
}

static void frame_push(struct cw_cls *c, struct thr *e, const struct cw_obj *o, uint64_t ts)
{
	if (e->depth == RUN_DEPTH)
		frame_prune(c, e);
	if (e->depth == RUN_DEPTH) {
		/* the outermost goes: its work falls back to what is below */
		memmove(&e->run[0], &e->run[1], sizeof(e->run[0]) * (RUN_DEPTH - 1));
		e->depth--;
		stats_of(c)->dropped++;
	}
	e->run[e->depth].type = o->n.type;
	e->run[e->depth].key = o->n.key;
	e->run[e->depth].since = ts;
	e->run[e->depth++].node = o->n.id;
	e->changed = ts;
}

/* Remove the innermost frame of (@type, @key); 0 when there is none.
 * Frames whose generation is over go too. */
static int frame_pop(struct cw_cls *c, struct thr *e, uint8_t type, uint64_t key, uint64_t ts)
{
	for (int i = e->depth - 1; i >= 0; i--) {
		if (e->run[i].type == type && e->run[i].key == key) {
			e->run[i].node = 0; /* pruned below */
			e->changed = ts;
			frame_prune(c, e);
			return 1;
		}
	}
	frame_prune(c, e);
	return 0;
}

/* A frame ended because its request ended on another thread is not
 * counted: that end is only seen when the frame is next looked at. */
static uint64_t adapter_running_since(struct cw_cls *c, const struct cw_obj *thread)
{
	const struct thr *e = thr_find(c->state, thread->n.id);

	return e ? e->changed : 0;
}

static struct cw_obj *adapter_running(struct cw_cls *c, const struct cw_obj *thread,
				      const struct cw_hdr *h, int rank)
{
	const struct thr *e = thr_find(c->state, thread->n.id);

	if (!e)
		return NULL;
	return top_of(c, e, rank == CW_RUN_RUNTIME_TASK ? CW_NODE_RUNTIME_TASK : CW_NODE_REQUEST,
		      h->ts);
}

/* ---- a hit ------------------------------------------------------------ */

struct hit {
	const struct cw_usdt *u;
	const struct cw_hdr *h;
	struct probe *p;
	const struct row *r;
	const char *str; /* the copied string, NULL when none could be read */
	size_t slen;
	struct cw_obj *thread;
	uint8_t tconf; /* confidence of the join to the thread */
	const struct cw_scope *scope; /* 'pid:N' of the process that ran it */
};

static uint64_t arg(const struct hit *x, uint8_t a)
{
	return (uint64_t)x->u->args[a - 1];
}

/* The string of argument @a, or NULL. */
static const char *str_of(const struct hit *x, uint8_t a, size_t *len)
{
	if (!x->str || x->p->str_arg != a - 1)
		return NULL;
	*len = x->slen;
	return x->str;
}

/* Does every argument the row reads exist in this hit? */
static int args_ok(const struct hit *x)
{
	const struct row *r = x->r;
	uint8_t n = x->u->nargs;

	if (r->id > n || r->parent > n || r->str > n || r->quiet > n)
		return 0;
	for (int i = 0; i < MAX_IDENT; i++)
		if (r->ident[i] > n)
			return 0;
	return 1;
}

static const char *orphan_reason(struct cw_cls *c, struct hit *x, int request)
{
	uint64_t attach;

	if (!birth_probe(c->state, x->p, request ? OP_REQ_BEGIN : OP_SPAWN, &attach))
		return R_ORPHAN[request][WHY_UNATTACHED];
	if (cw_ident__break_in(c->id, attach, x->h->ts))
		return R_ORPHAN[request][WHY_BREAK];
	return R_ORPHAN[request][WHY_BEFORE];
}

/* The live generation of the task or request @key, or an orphan. *conf:
 * the confidence of joining it. */
static struct cw_obj *named(struct cw_cls *c, struct hit *x, uint8_t type, uint64_t key,
			    uint8_t *conf, int *err)
{
	int request = type == CW_NODE_REQUEST;
	struct cw_obj *o = cw_ident__live(c->id, type, x->scope, key);

	*err = 0;
	/* Begun before a coverage break: which generation this names is
	 * unknown, so it is an orphan. */
	if ((*err = cw_ident__stale(c->id, o, x->h->ts)) < 0)
		return NULL;
	if (*err) {
		*err = 0;
		o = NULL;
	}
	if (o) {
		cw_ident__touch(c->id, o);
		*conf = CW_CONF_OBSERVED;
		return o;
	}
	/* The orphan edge is written here, not by the identity layer, whose
	 * orphans are the kernel's: this one's missing birth is the
	 * runtime's or the application's (edges.source). */
	o = cw_ident__orphan(c->id, type, x->scope, key, x->h, -1, NULL, err);
	if (!o)
		return NULL;
	o->n.pid = x->u->task.pid;
	c->st->orphans++;
	*err = cw_ident__edge(c->id, request ? CW_EDGE_BEGIN : CW_EDGE_SPAWN, NULL, o, x->h,
			      request ? CW_SRC_APPLICATION : CW_SRC_RUNTIME, CW_CONF_UNKNOWN,
			      orphan_reason(c, x, request));
	*conf = CW_CONF_OBSERVED; /* the record names both ends */
	return *err ? NULL : o;
}

static uint8_t weaker(uint8_t a, uint8_t b)
{
	return a > b ? a : b;
}

static int edge(struct cw_cls *c, struct hit *x, uint8_t type, const struct cw_obj *src,
		const struct cw_obj *dst, uint8_t conf)
{
	conf = weaker(conf, x->tconf);
	return cw_ident__edge(c->id, type, src, dst, x->h, source_of(x->r->op), conf,
			      conf == CW_CONF_RECONSTRUCTED ? R_ACROSS_BREAK : NULL);
}

static int do_spawn(struct cw_cls *c, struct hit *x)
{
	struct cw_obj *parent = NULL, *t;
	uint8_t conf = CW_CONF_OBSERVED;
	int err = 0;

	if (x->r->parent && arg(x, x->r->parent) &&
	    !(parent = named(c, x, CW_NODE_RUNTIME_TASK, arg(x, x->r->parent), &conf, &err)))
		return err;
	t = cw_ident__new_gen(c->id, CW_NODE_RUNTIME_TASK, x->scope, arg(x, x->r->id), x->h->ts, 1,
			      &err);
	if (!t)
		return err;
	t->n.pid = x->u->task.pid;
	t->n.tid = x->u->task.tid;
	return edge(c, x, CW_EDGE_SPAWN, parent ? parent : x->thread, t, conf);
}

static int do_task(struct cw_cls *c, struct hit *x)
{
	uint64_t key = arg(x, x->r->id);
	struct cw_obj *t, *src;
	struct thr *e;
	uint8_t conf;
	int err;

	if (x->r->op == OP_POLL_END) {
		/* Only what this thread polls can end here; a task that
		 * exited inside its poll is over, not an orphan. */
		e = thr_find(c->state, x->thread->n.id);
		if (!e || !frame_pop(c, e, CW_NODE_RUNTIME_TASK, key, x->h->ts))
			stats_of(c)->unpaired++;
		if (e)
			thr_gc(c->state, e);
		return 0;
	}
	t = named(c, x, CW_NODE_RUNTIME_TASK, key, &conf, &err);
	if (!t)
		return err;
	switch (x->r->op) {
	case OP_WAKE:
		src = cw_cls__running(c, x->thread, x->h);
		return edge(c, x, CW_EDGE_WAKE, src, t, conf);
	case OP_POLL_BEGIN:
		if (!(e = thr_get(c, x->thread, &err)) && err)
			return err;
		if (e)
			frame_push(c, e, t, x->h->ts);
		return edge(c, x, CW_EDGE_RESUME, t, x->thread, conf);
	default: /* OP_EXIT */
		t->n.end_ns = (int64_t)x->h->ts;
		t->ended = 1;
		return cw_ident__release(c->id, t);
	}
}

static int do_request(struct cw_cls *c, struct hit *x)
{
	uint64_t key = arg(x, x->r->id);
	struct cw_obj *q;
	struct thr *e;
	uint8_t conf = CW_CONF_OBSERVED;
	int err = 0;

	if (x->r->op == OP_REQ_BEGIN) {
		size_t len = 0;
		const char *name = x->r->str ? str_of(x, x->r->str, &len) : NULL;

		q = cw_ident__new_gen(c->id, CW_NODE_REQUEST, x->scope, key, x->h->ts, 1, &err);
		if (!q)
			return err;
		q->n.pid = x->u->task.pid;
		q->n.tid = x->u->task.tid;
		if (name)
			cw_obj__set_name(q, name, len);
		if (!(e = thr_get(c, x->thread, &err)) && err)
			return err;
		if (e)
			frame_push(c, e, q, x->h->ts);
		return edge(c, x, CW_EDGE_BEGIN, x->thread, q, conf);
	}
	q = named(c, x, CW_NODE_REQUEST, key, &conf, &err);
	if (!q)
		return err;
	if ((e = thr_find(c->state, x->thread->n.id))) {
		frame_pop(c, e, CW_NODE_REQUEST, key, x->h->ts);
		thr_gc(c->state, e);
	}
	q->n.end_ns = (int64_t)x->h->ts;
	q->ended = 1;
	err = edge(c, x, CW_EDGE_END, q, x->thread, conf);
	return err ?: cw_ident__release(c->id, q);
}

/* A composite identity spelled out: "KIND a/b/c". */
static void spell(const struct hit *x, const char *kind, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%s", kind);

	for (int i = 0; i < MAX_IDENT && x->r->ident[i] && n < len; i++) {
		size_t sl;
		const char *s = str_of(x, x->r->ident[i], &sl);

		if (s)
			n += (size_t)snprintf(buf + n, len - n, "%c%.*s", i ? '/' : ' ', (int)sl, s);
		else
			n += (size_t)snprintf(buf + n, len - n, "%c%lld", i ? '/' : ' ',
					      (long long)x->u->args[x->r->ident[i] - 1]);
	}
}

static const char *name_of(const struct cw_obj *o)
{
	return o->n.long_name ? o->n.long_name : o->n.name;
}

/* The resource a hit names (made on first sight: resources have no
 * birth); NULL without *err when the hit cannot name one. */
static struct cw_obj *resource(struct cw_cls *c, struct hit *x, int *err)
{
	char kind[KIND_MAX + 1], name[NAME_MAX_], sname[NAME_MAX_ + 48];
	const struct cw_scope *sc;
	uint32_t owner = x->u->task.pid;
	struct cw_obj *o;
	uint64_t key;
	size_t klen = 0;

	*err = 0;
	if (x->r->str) {
		const char *k = str_of(x, x->r->str, &klen); /* on_usdt checked it */

		memcpy(kind, k, klen);
		kind[klen] = '\0';
	} else {
		snprintf(kind, sizeof(kind), "%s", x->r->kind);
	}
	if (x->r->scope == SC_SERVER)
		owner = cw_cls__parent_pid(c, owner) ?: owner;
	if (x->r->ident[0]) {
		spell(x, kind, name, sizeof(name));
		key = hash_bytes(name, strlen(name));
	} else {
		snprintf(name, sizeof(name), "%s", kind);
		key = arg(x, x->r->id);
	}
	snprintf(sname, sizeof(sname), "pid:%u/%s", owner, kind);
	for (int collided = 0; collided < 2; collided++) {
		if (!(sc = cw_ident__scope(c->id, sname))) {
			*err = -ENOMEM;
			return NULL;
		}
		o = cw_ident__live(c->id, CW_NODE_RESOURCE, sc, key);
		if (o && !strcmp(name_of(o), name)) {
			cw_ident__touch(c->id, o);
			return o;
		}
		if (!o)
			break;
		/* Another identity with this hash: a scope of its own. */
		snprintf(sname, sizeof(sname), "pid:%u/%s/%s", owner, kind, name);
	}
	if (o) {
		/* even the private scope holds another name: cannot be */
		stats_of(c)->malformed++;
		return NULL;
	}
	o = cw_ident__orphan(c->id, CW_NODE_RESOURCE, sc, key, x->h, -1, NULL, err);
	if (!o)
		return NULL;
	o->n.pid = owner;
	cw_obj__set_name(o, name, strlen(name));
	return o;
}

/* The wake that ended @w on @res: the last into its thread, or where the
 * resource's releases are seen, the last from its last releaser after
 * that release. NULL: none. */
static const struct wake_seen *wait_wake(const struct wait *w, const struct release *rel)
{
	if (!rel->releaser)
		return w->last.edge ? &w->last : NULL;
	for (const struct wake_seen *k = &w->last; k <= &w->other; k++)
		if (k->edge && k->thread == rel->releaser && k->ts >= rel->ts)
			return k;
	return NULL;
}

/* @res NULL: the end was not seen (@end < 0). */
static int write_wait(struct cw_cls *c, const struct wait *w, const struct cw_obj *res,
		      int64_t end)
{
	const struct cw_sink *sink = cw_ident__sink(c->id);
	struct cw_wait_row row = {
		.resource = w->res,
		.waiter = w->waiter,
		.start_ns = w->start,
		.end_ns = end,
		.confidence = CW_CONF_UNKNOWN,
	};
	const struct release *rel = res ? release_of(res) : NULL;
	const struct wake_seen *k;

	if (end < 0) {
		row.reason = "wait end not in trace";
	} else if (cw_ident__break_in(c->id, w->start, (uint64_t)end)) {
		/* the wake seen might not be the one that ended it, and the
		 * end might belong to a later wait */
		row.confidence = CW_CONF_RECONSTRUCTED;
		row.reason = "coverage break in wait";
	} else if (rel->releaser && rel->ts <= w->start) {
		/* the release that let it in is not in the trace */
		row.reason = "no release in wait";
	} else if (w->unsure) {
		/* its last wake may be its own or a wait's begun in it */
		row.reason = w->blind ? "a wait begun in it not followed (bounds)"
				      : "wake not told apart from a wait begun in it";
	} else if (!(k = wait_wake(w, rel)) && !rel->releaser) {
		row.reason = w->nested ? "no wake in wait outside the waits nested in it"
				       : "no wake in wait";
	} else if (!k) {
		/* No wake from the releaser: the waiter did not sleep for
		 * it, or was woken by it and overtaken (a lock that is not
		 * handed off, taken by a thread that never waited, whose
		 * release need wake no one). The last release in the wait
		 * let it in. */
		row.waker = rel->src;
		row.confidence = CW_CONF_RECONSTRUCTED;
		row.reason = "let in by the last release in the wait, no wake from it";
	} else {
		row.wake_edge = k->edge;
		row.waker = k->waker;
		if (!k->waker) {
			row.reason = "waker unknown";
		} else {
			row.confidence = k->conf;
			row.reason = k->conf == CW_CONF_OBSERVED ? NULL : R_ACROSS_BREAK;
		}
	}
	stats_of(c)->waits++;
	return sink->wait ? sink->wait(sink->ctx, &row) : 0;
}

/* Take wait @i out of @e. */
static void wait_drop(struct adapter *a, struct thr *e, int i)
{
	e->w[i] = e->w[--e->nwaits];
	a->nwaiting--;
}

/* Wait @i of @e ended, its end seen: the unsure wakes of the waits begun
 * before it that all came after its begin lay in it (docs/model.md §6,
 * nested waits). A wait begun at the same time is not known to be the
 * outer one. */
static void wait_nested_end(struct thr *e, int i)
{
	const struct wait *in = &e->w[i];

	for (int j = 0; j < e->nwaits; j++) {
		struct wait *w = &e->w[j];

		if (j == i || w->start >= in->start || !w->unsure)
			continue;
		w->nested = 1;
		if (w->unsure > in->start && !w->blind)
			w->unsure = 0;
	}
}

static int do_resource(struct cw_cls *c, struct hit *x)
{
	struct adapter *a = c->state;
	struct cw_obj *res, *src;
	struct thr *e;
	int err, i;

	if (!(res = resource(c, x, &err)))
		return err;
	src = cw_cls__running(c, x->thread, x->h);
	switch (x->r->op) {
	case OP_ACQUIRE:
		return edge(c, x, CW_EDGE_ACQUIRE, src, res, CW_CONF_OBSERVED);
	case OP_RELEASE:
		*release_of(res) = (struct release){
			.ts = x->h->ts,
			.releaser = x->thread->n.id,
			.src = src->n.id,
		};
		return edge(c, x, CW_EDGE_RELEASE, src, res, CW_CONF_OBSERVED);
	case OP_WAIT_BEGIN:
		if (!(e = thr_get(c, x->thread, &err)))
			return err;
		/* A thread waits for one thing at a time: a wait still open
		 * on the same resource lost its end. */
		for (i = 0; i < e->nwaits && e->w[i].res != res->n.id; i++)
			;
		if (i < e->nwaits) {
			if ((err = write_wait(c, &e->w[i], NULL, -1)))
				return err;
			wait_drop(a, e, i);
		}
		if (e->nwaits == MAX_WAITS) {
			/* The waits open here cannot tell their wakes from
			 * this one's from now on. */
			for (i = 0; i < e->nwaits; i++)
				e->w[i].blind = 1;
			stats_of(c)->dropped++;
			thr_gc(a, e);
			return 0;
		}
		memset(&e->w[e->nwaits], 0, sizeof(e->w[0]));
		e->w[e->nwaits].res = res->n.id;
		e->w[e->nwaits].waiter = src->n.id;
		e->w[e->nwaits++].start = x->h->ts;
		a->nwaiting++;
		return 0;
	default: /* OP_WAIT_END */
		e = thr_find(a, x->thread->n.id);
		for (i = 0; e && i < e->nwaits && e->w[i].res != res->n.id; i++)
			;
		if (!e || i == e->nwaits) {
			stats_of(c)->unpaired++;
			return 0;
		}
		if (x->r->quiet && arg(x, x->r->quiet))
			stats_of(c)->waits_quiet++;
		else
			err = write_wait(c, &e->w[i], res, (int64_t)x->h->ts);
		wait_nested_end(e, i);
		wait_drop(a, e, i);
		thr_gc(a, e);
		return err;
	}
}

static int on_usdt(struct cw_cls *c, const struct cw_hdr *h)
{
	struct hit x = { .u = (const void *)h, .h = h };
	char sname[24];
	int err, matched;

	x.p = probe_find(c->state, x.u->probe);
	if (!x.p) {
		stats_of(c)->unknown_probe++;
		return 0;
	}
	if (x.p->row < 0) {
		stats_of(c)->unmapped++;
		return 0;
	}
	x.r = &rows[x.p->row];
	if (x.u->nargs > CW_USDT_MAX_ARGS || (x.p->pid && x.p->pid != x.u->task.pid) ||
	    !x.u->task.tid || !args_ok(&x)) {
		stats_of(c)->malformed++;
		c->st->bad_records++;
		return 0;
	}
	if (h->type == CW_REC_USDT_STR) {
		const struct cw_usdt_str *s = (const void *)h;

		x.slen = strnlen(s->str, sizeof(s->str));
		if (!s->str_err && x.slen < sizeof(s->str))
			x.str = s->str;
	}
	/* A resource's kind is half its identity: without it (the string
	 * could not be read, or is empty) the hit names nothing. */
	if (x.r->op >= OP_ACQUIRE && x.r->str) {
		size_t klen;

		if (!str_of(&x, x.r->str, &klen) || !klen) {
			stats_of(c)->malformed++;
			return 0;
		}
	}
	x.thread = cw_cls__thread(c, &x.u->task, x.u->task_start, h, CW_T_CREATE | CW_T_PROOF,
				  &matched, &err);
	if (!x.thread)
		return err;
	x.tconf = matched ? CW_CONF_OBSERVED : cw_ident__conf(c->id, x.thread, h->ts);
	scope_name(sname, sizeof(sname), x.u->task.pid);
	if (!(x.scope = cw_ident__scope(c->id, sname)))
		return -ENOMEM;
	stats_of(c)->hits++;
	switch (x.r->op) {
	case OP_SPAWN:
		return do_spawn(c, &x);
	case OP_WAKE:
	case OP_POLL_BEGIN:
	case OP_POLL_END:
	case OP_EXIT:
		return do_task(c, &x);
	case OP_REQ_BEGIN:
	case OP_REQ_END:
		return do_request(c, &x);
	default:
		return do_resource(c, &x);
	}
}

/*
 * After the sched class joined a wake: if it wrote a wake or fire edge
 * into a thread that waits for a resource, that edge may be the one that
 * ends the wait. Note it, and who the waker was running at this moment.
 */
static int on_wake(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_wake *r = (const void *)h;
	struct adapter *a = c->state;
	struct cw_edge_ref ref;
	struct cw_obj *wakee;
	struct thr *e, *we;
	struct wake_seen seen;
	int err = 0, matched;

	if (!a->nwaiting || !r->wakee.tid)
		return 0;
	wakee = cw_cls__thread(c, &r->wakee, CW_REC_HAS(r, wakee_start) ? r->wakee_start : 0, h, 0,
			       &matched, &err);
	if (!wakee)
		return err;
	/* Did the owner's handler just write a wake or fire into it? */
	cw_ident__last_edge_ref(c->id, &ref);
	if (!ref.id || ref.dst != wakee->n.id || ref.ts != h->ts ||
	    (ref.type != CW_EDGE_WAKE && ref.type != CW_EDGE_FIRE))
		return 0;
	if (!(e = thr_find(a, wakee->n.id)) || !e->nwaits)
		return 0;
	seen = (struct wake_seen){ .edge = ref.id, .ts = h->ts, .waker = ref.src, .conf = ref.conf };
	/* A thread works for the request it is in, if any (a task polled
	 * there is the edge's src already: cls_sched.c). */
	if (ref.src_type == CW_NODE_THREAD) {
		seen.thread = ref.src;
		if ((we = thr_find(a, ref.src))) {
			struct cw_obj *q = top_of(c, we, CW_NODE_REQUEST, h->ts);

			if (q)
				seen.waker = q->n.id;
		}
	} else if (ref.src_type == CW_NODE_RUNTIME_TASK) {
		struct cw_obj *wt = cw_cls__thread(c, &r->waker, CW_REC_HAS(r, waker_start) ? r->waker_start : 0,
						   h, 0, &matched, &err);

		if (err)
			return err;
		seen.thread = wt ? wt->n.id : 0;
	}
	for (int i = 0; i < e->nwaits; i++) {
		struct wait *w = &e->w[i];
		int inner = w->blind;

		if (h->ts <= w->start)
			continue;
		for (int j = 0; j < e->nwaits && !inner; j++)
			inner = j != i && e->w[j].start >= w->start;
		if (inner) {
			/* a sleep of a wait begun in this one, or unsure */
			if (!w->unsure)
				w->unsure = h->ts;
			continue;
		}
		if (w->last.edge && w->last.thread != seen.thread)
			w->other = w->last;
		w->last = seen;
		w->unsure = 0;
	}
	return 0;
}

static int adapter_finish(struct cw_cls *c)
{
	struct adapter *a = c->state;
	struct cw_hnode *tmp;
	struct thr *e;
	size_t b;
	int err = 0;

	cw_htab_for_each_safe(&a->thr, b, e, tmp, hn)
		for (int i = 0; i < e->nwaits && !err; i++)
			err = write_wait(c, &e->w[i], NULL, -1);
	return err;
}

static void adapter_fini(void *state);

static void *adapter_init(struct cw_ident *id, int *err)
{
	struct adapter *a = calloc(1, sizeof(*a));
	size_t live = cw_ident__max_live(id);

	if (!a || cw_htab__grow(&a->probes, PROBE_BUCKETS, NULL, 0) ||
	    cw_htab__grow(&a->thr, THREAD_BUCKETS, NULL, 0)) {
		adapter_fini(a);
		*err = -ENOMEM;
		return NULL;
	}
	a->max_thr = live && live < MAX_THREADS ? live : MAX_THREADS;
	a->sweep_freed = a->max_thr; /* the first time it fills, sweep at once */
	return a;
}

static void adapter_fini(void *state)
{
	struct adapter *a = state;

	if (!a)
		return;
	cw_htab__free_entries(&a->probes, offsetof(struct probe, hn));
	cw_htab__free_entries(&a->thr, offsetof(struct thr, hn));
	cw_htab__free(&a->probes);
	cw_htab__free(&a->thr);
	free(a);
}

static const struct cw_handler handlers[] = {
	{ CW_REC_META_USDT, on_probe },
	{ CW_REC_USDT, on_usdt },
	{ CW_REC_USDT_STR, on_usdt },
	{ 0 },
};

static const struct cw_handler watches[] = {
	{ CW_REC_WAKING, on_wake },
	{ CW_REC_WAKING_CAUSED, on_wake },
	{ 0 },
};

#define ADAPTER_ENTRY(field, key, comment) CW_COUNTER_ENTRY(struct adapter, st.field, key)
static const struct cw_counter counters[] = {
	CW_ADAPTER_COUNTERS(ADAPTER_ENTRY)
	{ NULL, 0, 0 },
};

const struct cw_aclass cw_aclass_adapter = {
	.name = "adapter",
	.init = adapter_init,
	.fini = adapter_fini,
	.finish = adapter_finish,
	.handlers = handlers,
	.watches = watches,
	.running_ranks = 1u << CW_RUN_REQUEST | 1u << CW_RUN_RUNTIME_TASK,
	.running = adapter_running,
	.running_since = adapter_running_since,
	.counters = counters,
};
