// SPDX-License-Identifier: MIT
/*
 * The identity layer: live generations keyed by (type, scope, key), their
 * LRU bound, interned scopes, hints, and the edges and nodes that go to
 * the sink. See ident.h for the rules; this file is only their bookkeeping.
 *
 * Memory is what is live: a hash of live objects (chained through the
 * objects), a free list of released objects for reuse, the scopes that
 * live objects hold, and at most max_live hints. Nothing is kept per key
 * once its generation is written, which is what lets a trace of millions
 * of keys that never end run in the --max-live bound plus a constant.
 * That bound is most of the analyzer's memory, so an object costs only
 * its struct and a bucket: objects come from slabs, not a malloc each,
 * and the table stops growing at the bound (docs/decisions.md, "Bounded join
 * state", has the measured figure).
 *
 * Generation guesses. The database numbers the generations after the
 * load, and rewrites the row of every node whose number the join did not
 * give: an update each, 1.3M of them and a tenth of the analyzer's time
 * on a trace of io_uring keys reused by the million. So a birth guesses
 * its number from a bounded table, one word a slot, of the last number
 * born for a hash of (type, scope name, key): right while the key has
 * held its slot since its first generation, one update more when not
 * (another key took the slot). The database's numbering decides; the
 * guess only spares it work, and is no memory of the keys: nothing reads
 * it but the next birth of the same hash.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ident.h"
#include "lib/hash.h"
#include "lru.h"

#define DEFAULT_MAX_LIVE (1u << 20)

/* A guess slot: the hash's high bits above the number born last; its
 * bits from GUESS_AT up place it, so that it moves when the table grows. */
#define GUESS_GEN_BITS 20
#define GUESS_GEN_MAX ((1u << GUESS_GEN_BITS) - 1)
#define GUESS_TAG(w) ((w) & ~(uint64_t)GUESS_GEN_MAX)
#define GUESS_AT 32
#define GUESS_FIRST 1024

/* A malloc per object would add its header and rounding to each (a
 * 240-byte struct takes a 256-byte chunk); a slab of them adds nothing.
 * Slabs are never freed before the layer: a released object is reused
 * through the free list. Under 1 MiB with the headers: 256 pages, of
 * which less than an object's worth of bytes is unused. */
#define SLAB_OBJS (((1u << 20) - 64) / sizeof(struct cw_obj))

struct obj_slab {
	struct obj_slab *next;
	size_t used;
	struct cw_obj objs[SLAB_OBJS];
};

struct cw_scope {
	struct cw_hnode hn;
	struct cw_scope *dead_next; /* on the dead list while unused */
	uint64_t hash;
	uint32_t refs;
	uint8_t on_dead, permanent;
	char name[];
};

struct hint {
	struct cw_hnode hn;
	uint64_t key;
	uint32_t pid;
	uint8_t type;
	char name[CW_NAME_LEN];
};

struct cw_ident {
	struct cw_sink sink;
	const struct cw_breaks *breaks;
	size_t max_live;
	struct cw_join_stats *st;

	struct cw_htab tab; /* live objects that lookups find */
	size_t live;	    /* live objects, in the table or not */
	struct cw_obj *lru_head, *lru_tail; /* head: least recently named */
	struct cw_obj *retired;		    /* released in this record, not yet written */
	struct cw_obj *free_objs;
	struct obj_slab *slabs; /* the newest first */
	uint64_t next_id;
	uint64_t next_edge_id;
	struct cw_edge_ref last; /* the edge next_edge_id names */
	cw_edge_hook_fn *edge_hook;
	void *edge_hook_ctx;

	struct cw_htab scopes;
	struct cw_scope *dead_scopes;
	struct cw_scope *host;

	struct cw_htab hints;

	uint64_t *guess; /* nguess slots, in pairs; NULL: none yet */
	size_t nguess;

	struct cw_htab quiet; /* struct quiet: objects that caused nothing */
};

/*
 * The objects retired with their birth edge still held, by type, name and
 * pid. At most QUIET_MAX such rows; past that, a name and pid without
 * one are counted in their type's one row of every name and pid (name "",
 * pid -1), so the count stays whole.
 */
#define QUIET_MAX 4096

struct quiet {
	struct cw_hnode hn;
	uint64_t hash, count;
	int64_t pid;
	uint8_t type;
	char name[];
};

static uint64_t obj_hash(uint8_t type, const struct cw_scope *scope, uint64_t key)
{
	return cw_mix64(key ^ (uint64_t)type << 56 ^ scope->hash);
}

/* Every table starts at this many buckets and doubles. */
#define FIRST_BUCKETS 1024

static uint64_t obj_rehash(const struct cw_hnode *n)
{
	const struct cw_obj *o = cw_hentry(n, struct cw_obj, hn);

	return obj_hash(o->n.type, o->scope, o->n.key);
}

static uint64_t scope_rehash(const struct cw_hnode *n)
{
	return cw_hentry(n, struct cw_scope, hn)->hash;
}

static uint64_t hint_hash(uint8_t type, uint64_t key)
{
	return cw_mix64(key ^ (uint64_t)type << 56);
}

static uint64_t hint_rehash(const struct cw_hnode *n)
{
	const struct hint *h = cw_hentry(n, struct hint, hn);

	return hint_hash(h->type, h->key);
}

/* ---- scopes ----------------------------------------------------------- */

static struct cw_scope *scope_find(const struct cw_ident *id, const char *name, uint64_t h)
{
	struct cw_scope *s;

	cw_htab_for_each_possible(&id->scopes, s, hn, h)
		if (s->hash == h && !strcmp(s->name, name))
			return s;
	return NULL;
}

static struct cw_scope *scope_intern(struct cw_ident *id, const char *name)
{
	uint64_t h = cw_hash_str(name);
	struct cw_scope *s = scope_find(id, name, h);
	size_t len = strlen(name);

	if (s)
		return s;
	if (id->scopes.n >= id->scopes.cap &&
	    cw_htab__grow(&id->scopes, FIRST_BUCKETS, scope_rehash, 0))
		return NULL;
	s = calloc(1, sizeof(*s) + len + 1);
	if (!s)
		return NULL;
	memcpy(s->name, name, len + 1);
	s->hash = h;
	cw_htab__add(&id->scopes, &s->hn, h);
	/* Unused until an object takes it: freed at the end of the record
	 * unless one does. */
	s->on_dead = 1;
	s->dead_next = id->dead_scopes;
	id->dead_scopes = s;
	return s;
}

const struct cw_scope *cw_ident__scope(struct cw_ident *id, const char *name)
{
	return scope_intern(id, name);
}

const struct cw_scope *cw_ident__scope_find(const struct cw_ident *id, const char *name)
{
	return scope_find(id, name, cw_hash_str(name));
}

const struct cw_scope *cw_ident__host(const struct cw_ident *id)
{
	return id->host;
}

const struct cw_sink *cw_ident__sink(const struct cw_ident *id)
{
	return &id->sink;
}

const struct cw_scope *cw_obj__scope(const struct cw_obj *o)
{
	return o->scope;
}

const char *cw_scope__name(const struct cw_scope *s)
{
	return s->name;
}

static void scope_put(struct cw_ident *id, struct cw_scope *s)
{
	if (--s->refs || s->permanent || s->on_dead)
		return;
	s->on_dead = 1;
	s->dead_next = id->dead_scopes;
	id->dead_scopes = s;
}

static void scopes_collect(struct cw_ident *id)
{
	struct cw_scope *s, *next;

	for (s = id->dead_scopes; s; s = next) {
		next = s->dead_next;
		s->on_dead = 0;
		if (s->refs || s->permanent)
			continue;
		cw_htab__del(&id->scopes, &s->hn, s->hash);
		free(s);
	}
	id->dead_scopes = NULL;
}

/* ---- objects ------------------------------------------------------------ */

CW_LRU_FUNCS(lru, struct cw_ident, struct cw_obj)

void cw_ident__touch(struct cw_ident *id, struct cw_obj *o)
{
	lru_touch(id, o);
}

struct cw_obj *cw_ident__live(struct cw_ident *id, uint8_t type, const struct cw_scope *scope,
			      uint64_t key)
{
	struct cw_obj *o;

	/* The scope is interned: pointer equality is scope equality. */
	cw_htab_for_each_possible(&id->tab, o, hn, obj_hash(type, scope, key))
		if (o->n.key == key && o->n.type == type && o->scope == scope)
			return o;
	return NULL;
}

/*
 * Releasing only retires: the object leaves the table at once, so no
 * lookup finds it, but it is written and its memory reused only between
 * records (flush_retired). A handler may thus hold two objects while
 * naming the second releases the first (a tid that turns out to name
 * another task), and never holds a pointer to reused memory.
 */
int cw_ident__release(struct cw_ident *id, struct cw_obj *o)
{
	if (o->retired)
		return 0;
	if (!o->unlisted)
		cw_htab__del(&id->tab, &o->hn, obj_rehash(&o->hn));
	id->live--;
	lru_unlink(id, o);
	o->retired = 1;
	o->lru_next = id->retired;
	id->retired = o;
	return 0;
}

static uint64_t quiet_rehash(const struct cw_hnode *n)
{
	return cw_hentry(n, struct quiet, hn)->hash;
}

/* The quiet row of @type, @name and @pid, or NULL; *@h its hash. */
static struct quiet *quiet_find(struct cw_ident *id, uint8_t type, const char *name, int64_t pid,
				uint64_t *h)
{
	struct quiet *q;

	*h = cw_mix64(cw_hash_str(name) ^ (uint64_t)pid ^ (uint64_t)type << 56);
	cw_htab_for_each_possible(&id->quiet, q, hn, *h)
		if (q->hash == *h && q->type == type && q->pid == pid && !strcmp(q->name, name))
			return q;
	return NULL;
}

/* Count @o, retired with its birth edge held, in its quiet row. */
static int quiet_count(struct cw_ident *id, const struct cw_obj *o)
{
	const char *name = o->n.long_name ? o->n.long_name : o->n.name;
	int64_t pid = o->n.pid;
	struct quiet *q;
	uint64_t h;
	size_t len;

	id->st->edges[o->held->type][o->held->confidence]--;
	id->st->quiet++;
	/* A row that has one keeps counting past the bound: only a name and
	 * pid new then goes to the overflow row, else the rows written
	 * before it would say fewer than there were. */
	q = quiet_find(id, o->n.type, name, pid, &h);
	if (!q && id->quiet.n >= QUIET_MAX) {
		name = "";
		pid = -1;
		q = quiet_find(id, o->n.type, name, pid, &h);
	}
	if (q) {
		q->count++;
		return 0;
	}
	if (id->quiet.n >= id->quiet.cap && cw_htab__grow(&id->quiet, 64, quiet_rehash, 0))
		return -ENOMEM;
	len = strlen(name);
	if (!(q = malloc(sizeof(*q) + len + 1)))
		return -ENOMEM;
	q->hash = h;
	q->count = 1;
	q->pid = pid;
	q->type = o->n.type;
	memcpy(q->name, name, len + 1);
	cw_htab__add(&id->quiet, &q->hn, h);
	return 0;
}

static int quiet_cmp(const void *a, const void *b)
{
	const struct quiet *x = *(const struct quiet *const *)a, *y = *(const struct quiet *const *)b;
	int c = strcmp(x->name, y->name);

	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return c ? c : (x->pid > y->pid) - (x->pid < y->pid);
}

/* The quiet rows, by type, name and pid (the table's order is the
 * hash's). */
static int quiet_write(struct cw_ident *id)
{
	struct quiet **all, *q;
	struct cw_hnode *tmp;
	size_t i, n = 0;
	int err = 0;

	if (!id->sink.quiet || !id->quiet.n)
		return 0;
	if (!(all = malloc(id->quiet.n * sizeof(*all))))
		return -ENOMEM;
	cw_htab_for_each_safe(&id->quiet, i, q, tmp, hn)
		all[n++] = q;
	qsort(all, n, sizeof(*all), quiet_cmp);
	for (i = 0; i < n && !err; i++) {
		struct cw_quiet_row r = {
			.type = all[i]->type,
			.name = all[i]->name[0] ? all[i]->name : NULL,
			.pid = all[i]->pid,
			.count = all[i]->count,
		};

		err = id->sink.quiet(id->sink.ctx, &r);
	}
	free(all);
	return err;
}

static int flush_retired(struct cw_ident *id)
{
	int err = 0;

	while (id->retired) {
		struct cw_obj *o = id->retired;

		id->retired = o->lru_next;
		if (o->held) {
			if (!err)
				err = quiet_count(id, o);
			free(o->held);
			o->held = NULL;
		} else {
			if (!err)
				err = id->sink.node(id->sink.ctx, &o->n);
			/* Counted when written: whether it belongs to the
			 * traced set may be learned after it was made. */
			id->st->nodes[o->n.type]++;
			if (o->n.traced == 0)
				id->st->nodes_untraced[o->n.type]++;
		}
		free((char *)o->n.long_name);
		o->n.long_name = NULL;
		scope_put(id, o->scope);
		o->lru_next = id->free_objs;
		id->free_objs = o;
	}
	return err;
}

static struct cw_obj *obj_alloc(struct cw_ident *id)
{
	struct obj_slab *s = id->slabs;

	if (!s || s->used == SLAB_OBJS) {
		s = malloc(sizeof(*s));
		if (!s)
			return NULL;
		s->next = id->slabs;
		s->used = 0;
		id->slabs = s;
	}
	return &s->objs[s->used++];
}

/*
 * The generation number a birth of @o guesses (see the top of the file).
 * A hash has two slots, one cache line: the one named last first. With
 * one, a quarter of the keys of the trace above shared it with another,
 * and each took it from the other at every birth.
 */
static uint64_t *guess_pair(uint64_t *t, size_t n, uint64_t w)
{
	return &t[(w >> GUESS_AT) & (n - 1) & ~(size_t)1];
}

/* @w, a used slot, as the first of its pair in @t: the one named last. */
static void guess_put(uint64_t *t, size_t n, uint64_t w)
{
	uint64_t *pair = guess_pair(t, n, w);

	pair[1] = pair[0];
	pair[0] = w;
}

/*
 * A slot per live object, grown with them up to the bound (where the
 * object table stops too): the table is memory that follows what is live.
 * On ENOMEM the guesses go on in the table there is, or none.
 */
static void guess_grow(struct cw_ident *id)
{
	size_t n = id->nguess ? id->nguess * 2 : GUESS_FIRST;
	uint64_t *t = calloc(n, sizeof(*t));

	if (!t)
		return;
	/* Second slots first, so that each pair keeps its order. */
	for (size_t first = 0; first < 2; first++)
		for (size_t i = !first; i < id->nguess; i += 2)
			if (id->guess[i])
				guess_put(t, n, id->guess[i]);
	free(id->guess);
	id->guess = t;
	id->nguess = n;
}

static uint32_t guess_gen(struct cw_ident *id, const struct cw_obj *o)
{
	uint64_t h = obj_hash(o->n.type, o->scope, o->n.key), *pair, gen = 0;
	uint64_t tag = GUESS_TAG(h) | 1u << GUESS_GEN_BITS; /* never 0: a used slot */

	if (id->live >= id->nguess && id->nguess < id->max_live)
		guess_grow(id);
	if (!id->guess)
		return 0;
	pair = guess_pair(id->guess, id->nguess, tag);
	if (GUESS_TAG(pair[0]) == tag) {
		gen = (pair[0] & GUESS_GEN_MAX) + 1;
	} else {
		if (GUESS_TAG(pair[1]) == tag)
			gen = (pair[1] & GUESS_GEN_MAX) + 1;
		pair[1] = pair[0];
	}
	/* Past the largest it holds, a number stays a wrong guess. */
	if (gen > GUESS_GEN_MAX)
		gen = GUESS_GEN_MAX;
	pair[0] = tag | gen;
	return (uint32_t)gen;
}

/* A new object, live from @ts, in the table of lookups unless @unlisted. */
static struct cw_obj *obj_new(struct cw_ident *id, uint8_t type, struct cw_scope *scope,
			      uint64_t key, uint64_t ts, int seen_birth, int unlisted, int *err)
{
	struct cw_obj *o;

	/* Grown up to the bound, not past it: at the bound every object
	 * made is paid for by one evicted at the end of the record, so the
	 * chains stay about one long, and a doubling there would only double
	 * the table's bytes per live object (and leave the old table's pages
	 * resident: 24 bytes per object at the default bound, not 8). */
	if (!unlisted && id->tab.n >= id->tab.cap && id->tab.cap < id->max_live &&
	    (*err = cw_htab__grow(&id->tab, FIRST_BUCKETS, obj_rehash, 0)))
		return NULL;
	o = id->free_objs;
	if (o)
		id->free_objs = o->lru_next;
	else if (!(o = obj_alloc(id))) {
		*err = -ENOMEM;
		return NULL;
	}
	memset(o, 0, sizeof(*o));
	o->n.id = ++id->next_id;
	o->n.type = type;
	o->n.scope = scope->name;
	o->n.key = key;
	o->n.pid = o->n.tid = -1;
	o->n.start_ns = seen_birth ? (int64_t)ts : -1;
	o->n.end_ns = -1;
	o->n.start_seen = !!seen_birth;
	o->n.traced = -1;
	o->est_ns = ts;
	o->scope = scope;
	scope->refs++;
	o->n.generation = guess_gen(id, o);
	o->unlisted = !!unlisted;
	if (!unlisted)
		cw_htab__add(&id->tab, &o->hn, obj_hash(type, scope, key));
	id->live++;
	lru_append(id, o);
	return o;
}

struct cw_obj *cw_ident__new_gen(struct cw_ident *id, uint8_t type, const struct cw_scope *cscope,
				 uint64_t key, uint64_t ts, int seen_birth, int *err)
{
	struct cw_scope *scope = (struct cw_scope *)cscope;
	struct cw_obj *o = cw_ident__live(id, type, scope, key);

	*err = 0;
	if (o && (*err = cw_ident__release(id, o)))
		return NULL;
	return obj_new(id, type, scope, key, ts, seen_birth, 0, err);
}

/* @o, just made (NULL: it could not be), an orphan: with its incoming
 * edge of @edge_type from nothing, when that is not negative. */
static struct cw_obj *orphan_edge(struct cw_ident *id, struct cw_obj *o, const struct cw_hdr *h,
				  int edge_type, const char *reason, int *err)
{
	if (!o || edge_type < 0)
		return o;
	id->st->orphans++;
	*err = cw_ident__edge(id, (uint8_t)edge_type, NULL, o, h, CW_SRC_KERNEL, CW_CONF_UNKNOWN,
			      reason);
	return *err ? NULL : o;
}

struct cw_obj *cw_ident__orphan(struct cw_ident *id, uint8_t type, const struct cw_scope *scope,
				uint64_t key, const struct cw_hdr *h, int edge_type,
				const char *reason, int *err)
{
	struct cw_obj *o = cw_ident__new_gen(id, type, scope, key, h->ts, 0, err);

	return orphan_edge(id, o, h, edge_type, reason, err);
}

struct cw_obj *cw_ident__new_unlisted(struct cw_ident *id, uint8_t type,
				      const struct cw_scope *scope, uint64_t key,
				      const struct cw_hdr *h, int edge_type, const char *orphan,
				      int *err)
{
	struct cw_obj *o;

	*err = 0;
	o = obj_new(id, type, (struct cw_scope *)scope, key, h->ts, !orphan, 1, err);
	return orphan ? orphan_edge(id, o, h, edge_type, orphan, err) : o;
}

struct cw_obj *cw_obj__still(struct cw_obj *o, uint64_t node)
{
	return o && o->n.id == node && !o->retired ? o : NULL;
}

int cw_ident__edge(struct cw_ident *id, uint8_t type, const struct cw_obj *src,
		   const struct cw_obj *dst, const struct cw_hdr *h, uint8_t source, uint8_t conf,
		   const char *reason)
{
	return cw_ident__edge_x(id, type, src, dst, h, source, conf, reason, NULL);
}

/* An edge, written, or held in @dst when @hold (cw_ident__edge_held). */
static int edge_write(struct cw_ident *id, uint8_t type, const struct cw_obj *src,
		      struct cw_obj *dst, const struct cw_hdr *h, uint8_t source, uint8_t conf,
		      const char *reason, const struct cw_edge_extra *x, int hold)
{
	struct cw_edge e = {
		.id = ++id->next_edge_id,
		.type = type,
		.src = src ? src->n.id : 0,
		.dst = dst->n.id,
		.ts = h->ts,
		.cpu = h->cpu == 0xffff ? -1 : h->cpu,
		.source = source,
		.confidence = conf,
		.reason = reason,
		.interrupted = x ? x->interrupted : -1,
		.addr = x ? x->addr : 0,
		.keeps = x ? x->keeps : 0,
	};

	id->st->edges[type][conf]++;
	id->last = (struct cw_edge_ref){
		.id = e.id,
		.src = e.src,
		.dst = e.dst,
		.ts = e.ts,
		.type = type,
		.src_type = src ? src->n.type : CW_NODE_NTYPES,
		.conf = conf,
	};
	/* The dst is live (a handler names it), so the cast only lets the
	 * hook write to an object the layer owns. */
	if (id->edge_hook)
		id->edge_hook(id->edge_hook_ctx, &e, src, (struct cw_obj *)dst, h);
	/* What @src was born of first: it has caused something. */
	if (src && src->held) {
		struct cw_obj *s = (struct cw_obj *)src;
		int err = id->sink.edge(id->sink.ctx, s->held);

		free(s->held);
		s->held = NULL;
		if (err)
			return err;
	}
	if (hold) {
		if (!(dst->held = malloc(sizeof(e))))
			return -ENOMEM;
		*dst->held = e;
		return 0;
	}
	return id->sink.edge(id->sink.ctx, &e);
}

int cw_ident__edge_x(struct cw_ident *id, uint8_t type, const struct cw_obj *src,
		     const struct cw_obj *dst, const struct cw_hdr *h, uint8_t source, uint8_t conf,
		     const char *reason, const struct cw_edge_extra *x)
{
	return edge_write(id, type, src, (struct cw_obj *)dst, h, source, conf, reason, x, 0);
}

int cw_ident__edge_held(struct cw_ident *id, uint8_t type, const struct cw_obj *src,
			struct cw_obj *dst, const struct cw_hdr *h, uint8_t source, uint8_t conf,
			const char *reason, const struct cw_edge_extra *x)
{
	/* A second birth edge (none today) is no birth: written at once. */
	return edge_write(id, type, src, dst, h, source, conf, reason, x, !dst->held);
}

void cw_ident__set_edge_hook(struct cw_ident *id, cw_edge_hook_fn *fn, void *ctx)
{
	id->edge_hook = fn;
	id->edge_hook_ctx = ctx;
}

void cw_ident__last_edge_ref(const struct cw_ident *id, struct cw_edge_ref *r)
{
	*r = id->last;
}

uint64_t cw_ident__last_edge(const struct cw_ident *id)
{
	return id->next_edge_id;
}

int cw_ident__stale(struct cw_ident *id, struct cw_obj *o, uint64_t ts)
{
	int err;

	if (!o || cw_ident__conf(id, o, ts) == CW_CONF_OBSERVED)
		return 0;
	err = cw_ident__release(id, o);
	return err ? err : 1;
}

int cw_ident__break_in(const struct cw_ident *id, uint64_t from, uint64_t to)
{
	return cw_breaks__overlap(id->breaks, from, to);
}

int cw_ident__break_since(const struct cw_ident *id, uint64_t since, uint64_t ts)
{
	/* Nothing can hide between a thing and an event at the same
	 * instant (its first sighting names it). */
	return ts > since && cw_breaks__overlap(id->breaks, since + 1, ts);
}

int cw_ident__break_in_ring(const struct cw_ident *id, uint64_t ring, uint64_t from, uint64_t to)
{
	return cw_breaks__overlap_ring(id->breaks, ring, from, to);
}

size_t cw_ident__max_live(const struct cw_ident *id)
{
	return id->max_live;
}

uint8_t cw_ident__conf(const struct cw_ident *id, const struct cw_obj *o, uint64_t ts)
{
	if (o && cw_ident__break_since(id, o->est_ns, ts))
		return CW_CONF_RECONSTRUCTED;
	return CW_CONF_OBSERVED;
}

void cw_obj__set_name(struct cw_obj *o, const char *s, size_t max)
{
	size_t len = strnlen(s, max);

	/* Only names that need it pay for the copy: comms always fit. */
	free((char *)o->n.long_name);
	o->n.long_name = len >= sizeof(o->n.name) ? strndup(s, len) : NULL;
	if (len >= sizeof(o->n.name))
		len = sizeof(o->n.name) - 1;
	memcpy(o->n.name, s, len);
	o->n.name[len] = '\0';
}

/* ---- hints ---------------------------------------------------------------- */

static struct hint *hint_find(struct cw_ident *id, uint8_t type, uint64_t key)
{
	struct hint *h;

	cw_htab_for_each_possible(&id->hints, h, hn, hint_hash(type, key))
		if (h->key == key && h->type == type)
			return h;
	return NULL;
}

int cw_ident__hint_set(struct cw_ident *id, uint8_t type, uint64_t key, uint32_t pid,
		       const char *name, size_t name_len)
{
	struct hint *h = hint_find(id, type, key);

	if (!h) {
		if (id->hints.n >= id->max_live) {
			id->st->hints_dropped++;
			return 0;
		}
		if (id->hints.n >= id->hints.cap &&
		    cw_htab__grow(&id->hints, FIRST_BUCKETS, hint_rehash, 0))
			return -ENOMEM;
		h = calloc(1, sizeof(*h));
		if (!h)
			return -ENOMEM;
		h->type = type;
		h->key = key;
		cw_htab__add(&id->hints, &h->hn, hint_hash(type, key));
	}
	h->pid = pid;
	name_len = strnlen(name, name_len);
	if (name_len >= sizeof(h->name))
		name_len = sizeof(h->name) - 1;
	memset(h->name, 0, sizeof(h->name));
	memcpy(h->name, name, name_len);
	return 0;
}

int cw_ident__hint_take(struct cw_ident *id, uint8_t type, uint64_t key, uint32_t *pid,
			char name[CW_NAME_LEN])
{
	struct hint *h = hint_find(id, type, key);

	if (!h)
		return 0;
	cw_htab__del(&id->hints, &h->hn, hint_hash(type, key));
	*pid = h->pid;
	memcpy(name, h->name, CW_NAME_LEN);
	free(h);
	return 1;
}

void cw_ident__hint_drop(struct cw_ident *id, uint8_t type, uint64_t key)
{
	struct hint *h = hint_find(id, type, key);

	if (!h)
		return;
	cw_htab__del(&id->hints, &h->hn, hint_hash(type, key));
	free(h);
}

/* ---- life ------------------------------------------------------------------ */

struct cw_ident *cw_ident__new(const struct cw_ident_opts *opts)
{
	struct cw_ident *id = calloc(1, sizeof(*id));

	if (!id)
		return NULL;
	id->sink = *opts->sink;
	id->breaks = opts->breaks;
	id->st = opts->st;
	id->max_live = opts->max_live ? opts->max_live : DEFAULT_MAX_LIVE;
	if (cw_htab__grow(&id->tab, FIRST_BUCKETS, obj_rehash, 0) ||
	    !(id->host = scope_intern(id, "host"))) {
		cw_ident__free(id);
		errno = ENOMEM;
		return NULL;
	}
	id->host->permanent = 1;
	return id;
}

int cw_ident__enforce(struct cw_ident *id)
{
	int err = 0;

	while (id->live > id->max_live) {
		id->st->evicted++;
		cw_ident__release(id, id->lru_head);
	}
	err = flush_retired(id);
	if (id->dead_scopes)
		scopes_collect(id);
	return err;
}

int cw_ident__finish(struct cw_ident *id)
{
	int err = flush_retired(id);

	/* Oldest first, so that the output order depends on the trace only. */
	while (!err && id->lru_head) {
		cw_ident__release(id, id->lru_head);
		err = flush_retired(id);
	}
	scopes_collect(id);
	return err ?: quiet_write(id);
}

void cw_ident__free(struct cw_ident *id)
{
	struct cw_obj *o;

	if (!id)
		return;
	/* Objects on the free list own no name any more (flush_retired). */
	for (o = id->lru_head; o; o = o->lru_next) {
		free((char *)o->n.long_name);
		free(o->held);
	}
	for (o = id->retired; o; o = o->lru_next) {
		free((char *)o->n.long_name);
		free(o->held);
	}
	while (id->slabs) {
		struct obj_slab *s = id->slabs;

		id->slabs = s->next;
		free(s);
	}
	cw_htab__free_entries(&id->scopes, offsetof(struct cw_scope, hn));
	cw_htab__free_entries(&id->hints, offsetof(struct hint, hn));
	cw_htab__free_entries(&id->quiet, offsetof(struct quiet, hn));
	cw_htab__free(&id->quiet);
	cw_htab__free(&id->scopes);
	cw_htab__free(&id->hints);
	cw_htab__free(&id->tab);
	free(id->guess);
	free(id);
}
