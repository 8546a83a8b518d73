// SPDX-License-Identifier: MIT
/*
 * Causal stacks for the profile formats: see profile.h.
 *
 * The stacks and frames tables are read whole first (a few MB even for a
 * large capture: both are deduplicated), then the samples once, in id
 * order. A sample's chain of handoffs is read edge by edge from
 * attribution.carry_edge through edges.carried_by, and remembered per
 * edge: the samples after one wake share it.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "names.h"
#include "profile.h"
#include "waits.h"
#include "../lib/esc.h"
#include "../lib/hash.h"
#include "../lib/htab.h"

/* A chain longer than this is cut (a hostile database's carried_by could
 * even cycle); CW_CARRY_PATH keeps 5, and the edges go back further. */
#define CHAIN_MAX 32
/* Request names are cut to what reads as a frame. */
#define REQUEST_NAME_MAX 60
/* The per-edge chain cache is emptied when it holds this many. */
#define CHAINS_MAX (1u << 20)

struct istr { /* an interned frame */
	struct cw_hnode hn;
	uint64_t hash;
	struct cw_xframe f;
	char text[];
};

struct ilabels {
	struct cw_hnode hn;
	uint64_t hash;
	struct cw_xlabels l;
};

struct idmap { /* a database id to what it names */
	struct cw_hnode hn;
	int64_t id;
	void *p;
	size_t n;
};

struct chain { /* an interned chain of hop frames, oldest first */
	struct cw_hnode hn;
	uint64_t hash;
	size_t n;
	const struct cw_xframe *f[];
};

struct agg {
	struct cw_hnode hn;
	uint64_t hash;
	struct agg *next_in_order;
	const struct cw_xframe *root, *task, *mech;
	const struct chain *chain;
	const struct stack *stack;
	const struct cw_xlabels *labels;
	bool offcpu;
	double count, ns;
	uint64_t rows;
};

struct stack {
	size_t n;
	const struct cw_xframe *f[]; /* leaf first, as stack_frames */
};

struct prof {
	struct cw_x *x;
	/* chains: by content; edge_chains: the chain ending at an edge, a
	 * cache of at most CHAINS_MAX */
	struct cw_htab strs, labels, frames, stacks, chains, edge_chains, threads, requests, aggs;
	uint32_t next_frame_id;
	struct agg *first, **tail;
	sqlite3_stmt *edge, *sender, *mechanism;
	struct cw_xwaits *waits;
	bool by_thread;
	struct stack empty;
};

static uint64_t hash_istr(const struct cw_hnode *n)
{
	return cw_hentry(n, struct istr, hn)->hash;
}

static uint64_t hash_ilabels(const struct cw_hnode *n)
{
	return cw_hentry(n, struct ilabels, hn)->hash;
}

static uint64_t hash_idmap(const struct cw_hnode *n)
{
	return cw_mix64((uint64_t)cw_hentry(n, struct idmap, hn)->id);
}

static uint64_t hash_chain(const struct cw_hnode *n)
{
	return cw_hentry(n, struct chain, hn)->hash;
}

static uint64_t hash_agg(const struct cw_hnode *n)
{
	return cw_hentry(n, struct agg, hn)->hash;
}

/* Room for one more entry in @t. @return 0 or -1 (out of memory). */
static int room(struct cw_htab *t, cw_htab_hash_fn *fn)
{
	if (t->n < t->cap)
		return 0;
	return cw_htab__grow(t, t->cap ? t->cap * 2 : 1024, fn, 0) ? -1 : 0;
}

static uint64_t hash_mem(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* The frame (@kind, @text) and its source position, interned. */
static const struct cw_xframe *intern(struct prof *p, uint8_t kind, const char *text,
				      const char *module, const char *file, int64_t line,
				      uint64_t address, bool inlined)
{
	uint64_t h = 0xcbf29ce484222325ull;
	struct istr *e;
	size_t tl = strlen(text), ml = module ? strlen(module) + 1 : 0, fl = file ? strlen(file) + 1 : 0;

	h = hash_mem(h, &kind, 1);
	h = hash_mem(h, text, tl + 1);
	h = hash_mem(h, module ? module : "", ml);
	h = hash_mem(h, file ? file : "", fl);
	h = hash_mem(h, &line, sizeof(line));
	h = hash_mem(h, &address, sizeof(address));
	h = cw_mix64(h ^ inlined);
	cw_htab_for_each_possible(&p->strs, e, hn, h)
		if (e->hash == h && e->f.kind == kind && !strcmp(e->f.name, text) &&
		    e->f.line == line && e->f.address == address && e->f.inlined == inlined &&
		    !(module ? !e->f.module || strcmp(module, e->f.module) : !!e->f.module) &&
		    !(file ? !e->f.file || strcmp(file, e->f.file) : !!e->f.file))
			return &e->f;
	if (room(&p->strs, hash_istr) || !(e = calloc(1, sizeof(*e) + tl + 1 + ml + fl)))
		return NULL;
	e->hash = h;
	memcpy(e->text, text, tl + 1);
	e->f.name = e->text;
	if (module)
		e->f.module = memcpy(e->text + tl + 1, module, ml);
	if (file)
		e->f.file = memcpy(e->text + tl + 1 + ml, file, fl);
	e->f.id = ++p->next_frame_id;
	e->f.kind = kind;
	e->f.line = line;
	e->f.address = address;
	e->f.inlined = inlined;
	cw_htab__add(&p->strs, &e->hn, h);
	return &e->f;
}

/* A label value, interned as a frame of its own kind (never emitted). */
static const char *label(struct prof *p, const char *text)
{
	const struct cw_xframe *f = text ? intern(p, 0xff, text, NULL, NULL, 0, 0, false) : NULL;

	return f ? f->name : NULL;
}

static struct idmap *idmap_find(struct cw_htab *t, int64_t id)
{
	struct idmap *e;

	cw_htab_for_each_possible(t, e, hn, cw_mix64((uint64_t)id))
		if (e->id == id)
			return e;
	return NULL;
}

static struct idmap *idmap_add(struct cw_htab *t, int64_t id, void *ptr, size_t n)
{
	struct idmap *e;

	if (room(t, hash_idmap) || !(e = calloc(1, sizeof(*e))))
		return NULL;
	e->id = id;
	e->p = ptr;
	e->n = n;
	cw_htab__add(t, &e->hn, cw_mix64((uint64_t)id));
	return e;
}

static const char *col_text(sqlite3_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(s, i);
}

static int db_error(struct prof *p)
{
	cw_x__err("the database cannot be read: %s", sqlite3_errmsg(p->x->db));
	return -1;
}

static int oom(void)
{
	cw_x__err("out of memory");
	return -1;
}

/* frames: a frame as a person reads it, interned, by the row's id. */
static int load_frames(struct prof *p)
{
	sqlite3_stmt *s = cw_x__prepare(p->x, "SELECT id, address, kernel, module, function, file, "
					      "line, inlined FROM frames");
	struct cw_htab *t = &p->frames;
	int rc;

	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		uint64_t addr = (uint64_t)sqlite3_column_int64(s, 1);
		bool kernel = sqlite3_column_int(s, 2);
		const char *mod = col_text(s, 3), *fn = col_text(s, 4), *file = col_text(s, 5);
		char name[256], raw[160];
		const struct cw_xframe *f;

		if (fn) {
			cw_esc_snprint(name, sizeof(name), fn);
		} else if (mod) {
			/* unsymbolized: where it is, as perf prints one */
			const char *base = strrchr(mod, '/');

			snprintf(raw, sizeof(raw), "[%s+0x%" PRIx64 "]", base ? base + 1 : mod, addr);
			cw_esc_snprint(name, sizeof(name), raw);
		} else {
			snprintf(name, sizeof(name), "0x%" PRIx64, addr);
		}
		f = intern(p, kernel ? CW_XF_KERNEL : CW_XF_USER, name, mod, file,
			   sqlite3_column_int64(s, 6), addr, sqlite3_column_int(s, 7));
		if (!f || !idmap_add(t, sqlite3_column_int64(s, 0), (void *)f, 0)) {
			sqlite3_finalize(s);
			return oom();
		}
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : db_error(p);
}

/* stack_frames: every stack as its frames, leaf first. A position out of
 * order or a frame not in frames (a database made by hand) ends the
 * stack there: what is known of it, never a made-up frame. */
static int load_stacks(struct prof *p)
{
	sqlite3_stmt *s = cw_x__prepare(p->x, "SELECT stack, position, frame FROM stack_frames "
					      "ORDER BY stack, position");
	struct stack *cur = NULL;
	size_t cap = 0;
	int64_t cur_id = 0;
	bool cut = false;
	int rc;

	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0), pos = sqlite3_column_int64(s, 1);
		struct idmap *fr = idmap_find(&p->frames, sqlite3_column_int64(s, 2));

		if (!cur || id != cur_id) {
			if (idmap_find(&p->stacks, id))
				continue; /* not one stack: keep the first */
			cap = 16;
			if (!(cur = malloc(sizeof(*cur) + cap * sizeof(cur->f[0]))) ||
			    !idmap_add(&p->stacks, id, cur, 0)) {
				free(cur);
				sqlite3_finalize(s);
				return oom();
			}
			cur->n = 0;
			cur_id = id;
			cut = false;
		}
		if (cut || !fr || pos != (int64_t)cur->n) {
			cut = true;
			continue;
		}
		if (cur->n == cap) {
			struct stack *m = realloc(cur, sizeof(*cur) + (cap *= 2) * sizeof(cur->f[0]));

			if (!m) {
				sqlite3_finalize(s);
				return oom();
			}
			cur = m;
			idmap_find(&p->stacks, id)->p = cur;
		}
		cur->f[cur->n++] = fr->p;
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : db_error(p);
}

/* A node of the edge statement's columns from @i: type, name, key. */
static struct cw_xnode node_at(sqlite3_stmt *s, int i)
{
	return (struct cw_xnode){
		.type = col_text(s, i),
		.name = col_text(s, i + 1),
		.key = sqlite3_column_int64(s, i + 2),
	};
}

/* The name of the thread that sent packet @id, into @buf; NULL: not in
 * the database. */
static const char *sender(struct prof *p, int64_t id, char *buf, size_t cap)
{
	const char *name;

	sqlite3_reset(p->sender);
	sqlite3_bind_int64(p->sender, 1, id);
	if (sqlite3_step(p->sender) != SQLITE_ROW || !(name = col_text(p->sender, 0)))
		return NULL;
	snprintf(buf, cap, "%s", name);
	return buf;
}

/*
 * Edge @id as a hop: its text into @buf, its carried_by into *@prev (0:
 * none). @return 0, 1 when the edge is not there, -1 on a read error.
 */
static int read_hop(struct prof *p, int64_t id, char *buf, size_t cap, int64_t *prev,
		    bool mechanism)
{
	sqlite3_stmt *s = p->edge;
	struct cw_xhop h;
	char from[64];
	int rc;

	sqlite3_reset(s);
	sqlite3_bind_int64(s, 1, id);
	if ((rc = sqlite3_step(s)) != SQLITE_ROW)
		return rc == SQLITE_DONE ? 1 : db_error(p);
	h = (struct cw_xhop){
		.type = col_text(s, 0),
		.reason = col_text(s, 1),
		.confidence = col_text(s, 2),
		.src = node_at(s, 4),
		.dst = node_at(s, 7),
	};
	*prev = sqlite3_column_int64(s, 3);
	if (h.src.type && !strcmp(h.src.type, "packet"))
		h.src_from = sender(p, sqlite3_column_int64(s, 10), from, sizeof(from));
	if (!h.type)
		h.type = "edge";
	if (mechanism) {
		/* waits of one kind add up: named by what ended them, not by
		 * which one */
		char what[192];

		cw_x__cause_text(what, sizeof(what), &h);
		snprintf(buf, cap, "woken by: %s", what);
		return 0;
	}
	cw_x__hop_text(buf, cap, &h);
	return 0;
}

/* The chain of @n hops @f (oldest first), interned by content. */
static const struct chain *chain_intern(struct prof *p, const struct cw_xframe *const *f, size_t n)
{
	uint64_t h = cw_mix64(hash_mem(0xcbf29ce484222325ull, f, n * sizeof(f[0])));
	struct chain *c;

	cw_htab_for_each_possible(&p->chains, c, hn, h)
		if (c->hash == h && c->n == n && !memcmp(c->f, f, n * sizeof(f[0])))
			return c;
	if (room(&p->chains, hash_chain) || !(c = malloc(sizeof(*c) + n * sizeof(c->f[0]))))
		return NULL;
	c->hash = h;
	c->n = n;
	memcpy(c->f, f, n * sizeof(f[0]));
	cw_htab__add(&p->chains, &c->hn, h);
	return c;
}

/* The chain ending at edge @id, oldest hop first. */
static const struct chain *chain_of(struct prof *p, int64_t id)
{
	const struct cw_xframe *f[CHAIN_MAX];
	struct idmap *m = idmap_find(&p->edge_chains, id);
	const struct chain *c;
	size_t n = 0;
	int64_t e = id;

	if (m)
		return m->p;
	if (p->edge_chains.n >= CHAINS_MAX) {
		/* forget, never grow without bound (the chains themselves
		 * stay: the aggregates point at them) */
		struct cw_hnode *tmp;
		size_t i;

		cw_htab_for_each_safe(&p->edge_chains, i, m, tmp, hn)
			free(m);
		memset(p->edge_chains.b, 0, p->edge_chains.cap * sizeof(p->edge_chains.b[0]));
		p->edge_chains.n = 0;
	}
	while (e && n < CHAIN_MAX) {
		char text[256];
		int64_t prev;
		int rc = read_hop(p, e, text, sizeof(text), &prev, false);

		if (rc < 0)
			return NULL;
		if (rc)
			break; /* a carried_by to no edge: the chain is cut there */
		if (!(f[n++] = intern(p, CW_XF_HOP, text, NULL, NULL, 0, 0, false)))
			return NULL;
		e = prev;
	}
	if (e && n == CHAIN_MAX &&
	    !(f[n - 1] = intern(p, CW_XF_HOP, "... (earlier handoffs cut)", NULL, NULL, 0, 0, false)))
		return NULL;
	for (size_t i = 0; i < n / 2; i++) {
		const struct cw_xframe *t = f[i];

		f[i] = f[n - 1 - i];
		f[n - 1 - i] = t;
	}
	if (!(c = chain_intern(p, f, n)) || !idmap_add(&p->edge_chains, id, (void *)c, 0))
		return NULL;
	return c;
}

/* What a node id names, "name (tid N)" for a thread, cached. */
static const char *node_label(struct prof *p, struct cw_htab *cache, sqlite3_stmt *s, int64_t id,
			      bool request)
{
	struct idmap *m = idmap_find(cache, id);
	char buf[160], name[REQUEST_NAME_MAX + 8];
	const char *l;

	if (m)
		return m->p;
	sqlite3_reset(s);
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) != SQLITE_ROW) {
		snprintf(buf, sizeof(buf), "node %" PRId64, id);
	} else if (request) {
		const char *n = col_text(s, 1);

		if (n && *n)
			cw_esc_snprint(name, sizeof(name) - 4, n);
		else
			snprintf(name, sizeof(name), "request %" PRId64, (int64_t)sqlite3_column_int64(s, 2));
		if (strlen(name) > REQUEST_NAME_MAX)
			strcpy(name + REQUEST_NAME_MAX - 3, "...");
		snprintf(buf, sizeof(buf), "%s", name);
	} else {
		struct cw_xnode n = node_at(s, 0);
		char text[128];

		cw_x__node_text(text, sizeof(text), &n);
		if (n.type && !strcmp(n.type, "thread"))
			snprintf(buf, sizeof(buf), "%s (tid %" PRId64 ")", text, n.key);
		else
			snprintf(buf, sizeof(buf), "%s", text);
	}
	if (!(l = label(p, buf)) || !idmap_add(cache, id, (void *)l, 0))
		return NULL;
	return l;
}

static const struct cw_xlabels *labels_of(struct prof *p, const struct cw_xlabels *l)
{
	uint64_t h = hash_mem(0xcbf29ce484222325ull, l, sizeof(*l));
	struct ilabels *e;

	h = cw_mix64(h);
	cw_htab_for_each_possible(&p->labels, e, hn, h)
		if (!memcmp(&e->l, l, sizeof(*l)))
			return &e->l;
	if (room(&p->labels, hash_ilabels) || !(e = calloc(1, sizeof(*e))))
		return NULL;
	e->hash = h;
	e->l = *l;
	cw_htab__add(&p->labels, &e->hn, h);
	return &e->l;
}

static int add(struct prof *p, struct agg *k)
{
	uint64_t h = 0xcbf29ce484222325ull;
	struct agg *e;

	h = hash_mem(h, &k->root, sizeof(k->root));
	h = hash_mem(h, &k->task, sizeof(k->task));
	h = hash_mem(h, &k->mech, sizeof(k->mech));
	h = hash_mem(h, &k->chain, sizeof(k->chain));
	h = hash_mem(h, &k->stack, sizeof(k->stack));
	h = hash_mem(h, &k->labels, sizeof(k->labels));
	h = cw_mix64(h ^ k->offcpu);
	cw_htab_for_each_possible(&p->aggs, e, hn, h)
		if (e->hash == h && e->root == k->root && e->task == k->task &&
		    e->mech == k->mech && e->chain == k->chain && e->stack == k->stack &&
		    e->labels == k->labels && e->offcpu == k->offcpu)
			goto found;
	if (room(&p->aggs, hash_agg) || !(e = malloc(sizeof(*e))))
		return oom();
	*e = *k;
	e->hash = h;
	e->count = e->ns = 0;
	e->rows = 0;
	e->next_in_order = NULL;
	*p->tail = e;
	p->tail = &e->next_in_order;
	cw_htab__add(&p->aggs, &e->hn, h);
found:
	e->count += k->count;
	e->ns += k->ns;
	e->rows++;
	return 0;
}

static const char *const sample_sql =
	"SELECT s.id, s.kind, s.thread, s.stack, s.weight, s.stack_probability, "
	"a.request, a.task, a.confidence, a.reason, a.carry_edge, s.wake, s.ts "
	"FROM samples s LEFT JOIN attribution a ON a.sample = s.id "
	"WHERE s.ts >= ?1 AND s.ts <= ?2 ORDER BY s.id";

/* sample_mechanism is read for off-CPU samples only, one by one: joined
 * to every sample it doubled the export's time (its own joins run for
 * the CPU samples too). */
static const char *const mechanism_sql = "SELECT mechanism FROM sample_mechanism WHERE sample = ?1";

/*
 * What ended a wait on a resource (docs/model.md §8.1), in @buf, which
 * says what ended the sleep ("woken by: futex from back"): the wait's
 * resource and what let it go, "woken by: lock 1663/5/16397/0/0 released
 * by END;", or its reason when that is unknown; a sleep in it that
 * something else ended keeps its cause, with the resource after it
 * (export/waits.h). @return 0, or -1 after a message.
 */
static int wait_text(struct prof *p, sqlite3_stmt *s, int64_t wake, char *buf, size_t cap)
{
	static const char woken[] = "woken by: ";
	char cause[256];
	struct cw_xwait w;
	int rc = cw_xwaits__at(p->waits, sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 6),
			       sqlite3_column_int64(s, 7), sqlite3_column_int64(s, 12), &w);

	if (rc <= 0)
		return rc;
	snprintf(cause, sizeof(cause), "%s",
		 strncmp(buf, woken, sizeof(woken) - 1) ? buf : buf + sizeof(woken) - 1);
	if (cap < sizeof(woken))
		return 0;
	memcpy(buf, woken, sizeof(woken));
	cw_xwait__text(buf + sizeof(woken) - 1, cap - sizeof(woken) + 1, &w, wake, cause);
	return 0;
}

/* One sample row into its aggregate. */
static int one(struct prof *p, sqlite3_stmt *s, sqlite3_stmt *nodes)
{
	bool offcpu = col_text(s, 1) && !strcmp(col_text(s, 1), "offcpu");
	int64_t stack = sqlite3_column_int64(s, 3), req = sqlite3_column_int64(s, 6);
	int64_t task = sqlite3_column_int64(s, 7), carry = sqlite3_column_int64(s, 10);
	int64_t wake = sqlite3_column_int64(s, 11);
	double w = (double)sqlite3_column_int64(s, 4), prob = sqlite3_column_double(s, 5);
	const char *conf = col_text(s, 8), *reason = col_text(s, 9), *mech = NULL;
	struct cw_xlabels l = { 0 };
	struct agg k = { .offcpu = offcpu };
	struct idmap *st = NULL;
	char text[256];

	if (p->x->nrequests && (!req || !cw_x__wants_request(p->x, req)))
		return 0;
	if (sqlite3_column_type(s, 3) != SQLITE_NULL && !(st = idmap_find(&p->stacks, stack)))
		return 0; /* a stack with no frames: nothing to show it by */
	/* A wait whose stacks the budget did not take stands in the
	 * estimate through those it did (docs/model.md §4.2): counted
	 * here, it would be counted twice. */
	if (!st && prob < 1.0)
		return 0;
	if (!(prob > 0.0) || !isfinite(prob) || !(w >= 0.0))
		return 0; /* a hostile row: no estimate can come of it */
	k.stack = st ? st->p : &p->empty;
	k.count = 1.0 / prob;
	k.ns = w / prob;
	if (req) {
		if (!(l.request = node_label(p, &p->requests, nodes, req, true)) ||
		    !(k.root = intern(p, CW_XF_REQUEST, l.request, NULL, NULL, 0, 0, false)))
			return oom();
		l.request_id = req;
	} else {
		snprintf(text, sizeof(text), "%s: %s", task ? "no request" : "unknown",
			 reason ? reason : conf ? "none given" : "not attributed");
		if (!(k.root = intern(p, CW_XF_REQUEST, text, NULL, NULL, 0, 0, false)))
			return oom();
	}
	if (task) {
		if (!(l.task = node_label(p, &p->threads, nodes, task, false)) ||
		    !(k.task = intern(p, CW_XF_TASK, l.task, NULL, NULL, 0, 0, false)))
			return oom();
	}
	if (req && carry && conf && !strcmp(conf, "reconstructed") && !(k.chain = chain_of(p, carry)))
		return oom();
	if (offcpu) {
		int64_t prev;
		int rc = wake ? read_hop(p, wake, text, sizeof(text), &prev, true) : 1;

		if (rc < 0)
			return -1;
		sqlite3_reset(p->mechanism);
		sqlite3_bind_int64(p->mechanism, 1, sqlite3_column_int64(s, 0));
		if (sqlite3_step(p->mechanism) == SQLITE_ROW)
			mech = col_text(p->mechanism, 0);
		if (rc)
			snprintf(text, sizeof(text), "woken by: unknown (the wake was not seen)");
		if (mech && !strcmp(mech, "resource_wait") && wait_text(p, s, wake, text, sizeof(text)))
			return -1;
		if (!(k.mech = intern(p, CW_XF_MECHANISM, text, NULL, NULL, 0, 0, false)))
			return oom();
	}
	l.confidence = label(p, conf ? conf : "unknown");
	l.mechanism = offcpu ? label(p, mech ? mech : "unknown") : NULL;
	l.thread = p->by_thread ? node_label(p, &p->threads, nodes, sqlite3_column_int64(s, 2), false)
				: "";
	if (!l.confidence || (offcpu && !l.mechanism) || !l.thread ||
	    !(k.labels = labels_of(p, &l)))
		return oom();
	return add(p, &k);
}

static int emit(struct prof *p, cw_xsample_fn *fn, void *ctx)
{
	const struct cw_xframe **f = NULL;
	size_t cap = 0;
	int ret = 0;

	for (struct agg *a = p->first; a && !ret; a = a->next_in_order) {
		size_t n = 0, need = 4 + (a->chain ? a->chain->n : 0) + a->stack->n;
		struct cw_xsample s;

		if (need > cap) {
			const struct cw_xframe **m = realloc(f, need * sizeof(*f));

			if (!m) {
				ret = oom();
				break;
			}
			f = m;
			cap = need;
		}
		f[n++] = a->root;
		if (a->task)
			f[n++] = a->task;
		for (size_t i = 0; a->chain && i < a->chain->n; i++)
			f[n++] = a->chain->f[i];
		if (a->mech)
			f[n++] = a->mech;
		for (size_t i = a->stack->n; i > 0; i--)
			f[n++] = a->stack->f[i - 1];
		s = (struct cw_xsample){
			.offcpu = a->offcpu,
			.count = a->count,
			.ns = a->ns,
			.rows = a->rows,
			.labels = a->labels,
			.nframes = n,
			.frames = f,
		};
		ret = fn(ctx, &s);
	}
	free(f);
	return ret;
}

static void free_table(struct cw_htab *t, size_t off, bool free_p)
{
	struct cw_hnode *n, *tmp;
	size_t i;

	for (i = 0; i < t->cap; i++)
		for (n = t->b[i]; n && (tmp = n->next, 1); n = tmp) {
			if (free_p)
				free(cw_hentry(n, struct idmap, hn)->p);
			free((char *)n - off);
		}
	free(t->b);
}

int cw_xprofile__each(struct cw_x *x, unsigned flags, cw_xsample_fn *fn, void *ctx)
{
	struct prof p = { .x = x, .by_thread = flags & CW_XP_THREADS };
	sqlite3_stmt *s = NULL, *nodes = NULL, *count = NULL;
	uint64_t done = 0, total = 0;
	int ret = -1, rc;

	p.tail = &p.first;
	p.edge = cw_x__prepare(x, "SELECT e.type, e.reason, e.confidence, e.carried_by, "
				  "s.type, s.name, s.key, d.type, d.name, d.key, e.src "
				  "FROM edges e LEFT JOIN nodes s ON s.id = e.src "
				  "LEFT JOIN nodes d ON d.id = e.dst WHERE e.id = ?1");
	p.sender = cw_x__prepare(x, "SELECT n.name FROM edges e JOIN nodes n ON n.id = e.src "
				    "WHERE e.dst = ?1 AND e.type = 'submit' ORDER BY e.ts, e.id "
				    "LIMIT 1");
	p.mechanism = cw_x__prepare(x, mechanism_sql);
	p.waits = cw_xwaits__open(x);
	nodes = cw_x__prepare(x, "SELECT type, name, key FROM nodes WHERE id = ?1");
	s = cw_x__prepare(x, sample_sql);
	count = cw_x__prepare(x, "SELECT count(*) FROM sample_rows WHERE ts >= ?1 AND ts <= ?2");
	if (!p.edge || !p.sender || !p.mechanism || !p.waits || !nodes || !s || !count)
		goto out;
	if (load_frames(&p) || load_stacks(&p))
		goto out;
	sqlite3_bind_int64(count, 1, x->since);
	sqlite3_bind_int64(count, 2, x->until);
	if (x->progress && sqlite3_step(count) == SQLITE_ROW)
		total = (uint64_t)sqlite3_column_int64(count, 0);
	sqlite3_bind_int64(s, 1, x->since);
	sqlite3_bind_int64(s, 2, x->until);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (one(&p, s, nodes))
			goto out;
		cw_x__progress(x, "samples", ++done, total);
	}
	if (rc != SQLITE_DONE) {
		db_error(&p);
		goto out;
	}
	ret = emit(&p, fn, ctx);
out:
	sqlite3_finalize(s);
	sqlite3_finalize(nodes);
	sqlite3_finalize(count);
	sqlite3_finalize(p.edge);
	sqlite3_finalize(p.sender);
	sqlite3_finalize(p.mechanism);
	cw_xwaits__free(p.waits);
	free_table(&p.aggs, offsetof(struct agg, hn), false);
	free_table(&p.labels, offsetof(struct ilabels, hn), false);
	free_table(&p.edge_chains, offsetof(struct idmap, hn), false);
	free_table(&p.chains, offsetof(struct chain, hn), false);
	free_table(&p.stacks, offsetof(struct idmap, hn), true);
	free_table(&p.frames, offsetof(struct idmap, hn), false);
	free_table(&p.threads, offsetof(struct idmap, hn), false);
	free_table(&p.requests, offsetof(struct idmap, hn), false);
	free_table(&p.strs, offsetof(struct istr, hn), false);
	return ret;
}
