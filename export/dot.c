// SPDX-License-Identifier: MIT
/*
 * dot: one request's causal graph for graphviz (docs/model.md §8), read
 * from the database's edges as any query would read them. What is drawn,
 * in this order of priority (the bounds below cut the later ones first):
 *
 *   1. the edges into and out of the request node: its begin and end
 *      (the threads they name run the request: its own threads);
 *   2. its critical path, where the database has one (a critical_path
 *      table or view: each segment's node and edge, a handoff's birth
 *      edge, and a stop whose cause is unknown as an edge from an
 *      "unknown" node), drawn heavy;
 *   3. the chain of every sample charged to the request: from
 *      attribution.carry_edge back through edges.carried_by to the
 *      request (docs/model.md §6.1), heaviest chains first; the wake
 *      that ended each of its off-CPU samples; and the contexts its
 *      samples ran in (a thread, and the task or work item on it with
 *      the resume or execute that put it there);
 *   4. between its begin and end, the handoffs of the contexts found so
 *      far: whatever goes into or out of an own thread (what it did and
 *      what it waited for, inside the request), whatever comes out of an
 *      object (an io_request's completion and the wake it raised, a
 *      timer's fire), new ends joining the walk for up to PASSES rounds;
 *      then, drawn gray, every edge of that time between two nodes
 *      already drawn: nothing says these were the request's.
 *
 * A wake that ended a wait on a resource has a line saying which, and
 * what let it go (waits.h). Edges with the same ends, type, confidence,
 * reason and wait line are drawn as one,
 * "wake ×3", with the times of the first and last from the request's
 * begin. A node is drawn by its type (a thread a box, the request a
 * double octagon, an io_request or block request a cylinder, a packet a
 * note, a timer or work item an ellipse), an edge by its confidence
 * (observed solid, reconstructed dashed, unknown dotted). An edge whose
 * cause is unknown (src NULL) comes from an "unknown" node of its own,
 * never a shared one: two unknown causes are not one cause (a critical
 * path's stop at such an edge shares its node: that is the same one).
 * Everything taken from the database is escaped (lib/esc.h), then
 * quoted for DOT; nodes are written in id order and edges in time order,
 * so the same database gives the same file.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "export.h"
#include "names.h"
#include "waits.h"
#include "../lib/esc.h"
#include "../lib/hash.h"
#include "../lib/htab.h"

/* What is drawn at most: graphviz lays out a few hundred nodes in
 * seconds, and a picture of more is not read. A request with a million
 * edges gets these and a note that says what was left out. */
#define EDGES_MAX 1000
#define NODES_MAX 300
/* Rows read per node and direction in the walk between begin and end. */
#define SIDE_MAX 200
#define PASSES 3
/* Chains followed: distinct carry edges of the request's samples, and
 * steps of one chain (carried_by could even cycle in a hostile
 * database: an edge is followed once). */
#define CHAINS_MAX 10000
#define CHAIN_MAX 32
#define WAKES_MAX 2000
/* The (node, thread) pairs of its samples. */
#define CONTEXTS_MAX 200
/* Critical path segments read. */
#define CRIT_MAX 4096
/* How the critical path's nodes and edges stand out. */
#define CRITICAL ", penwidth=3, color=\"#c0392b\""

struct dnode {
	struct cw_hnode hn;
	int64_t id;
	char *type, *name, *scope;
	int64_t key, generation, start_ns, end_ns;
	bool has_start, has_end;
	bool own;	/* a thread the request's begin or end names */
	bool critical;	/* on its critical path */
	int64_t crit_ns; /* its segments' time on the critical path */
};

struct dedge {
	struct cw_hnode hn;
	int64_t id;
	char *type, *reason, *confidence;
	/* the resource wait it ended, named (waits.h); NULL: none */
	char *wait;
	int64_t src, dst, ts, carried_by;
	bool has_src;
	bool walked;   /* its carried_by was followed */
	bool critical;
	/* found only as an edge between two nodes drawn, in the request's
	 * time: nothing says it was the request's */
	bool among;
	/* a stop of the critical path (not an edge of the database): its
	 * time, why the walk stopped (reason), and the segment's edge (via,
	 * 0: none) */
	bool stop;
	int64_t stop_ns, via;
};

struct dot {
	struct cw_x *x;
	struct cw_htab nodes, edges;
	struct dnode **nv;
	struct dedge **ev;
	size_t nn, ne, ncap, ecap;
	struct dnode *req;
	int64_t lo, hi; /* the request's interval, within the export's window */
	bool interval;	/* both ends known */
	/* what the bounds left out, said in the graph */
	bool cut_edges, cut_nodes, cut_side, cut_chains, cut_chain, cut_crit;
	/* the critical path: 0 no table, 1 no rows for the request, 2 drawn,
	 * -1 unreadable */
	int crit;
	size_t crit_segments, stops;
	int64_t crit_unknown_ns;
	sqlite3_stmt *node_q, *edge_q, *in_q, *out_q, *birth_q;
	struct cw_xwaits *waits;
};

static uint64_t hash_node(const struct cw_hnode *n)
{
	return cw_mix64((uint64_t)cw_hentry(n, struct dnode, hn)->id);
}

static uint64_t hash_edge(const struct cw_hnode *n)
{
	return cw_mix64((uint64_t)cw_hentry(n, struct dedge, hn)->id);
}

static int oom(void)
{
	cw_x__err("out of memory");
	return -1;
}

static int db_error(struct dot *d)
{
	cw_x__err("the database cannot be read: %s", sqlite3_errmsg(d->x->db));
	return -1;
}

/* A text column, copied; NULL for NULL. @return 0 or -1 (out of memory). */
static int col_dup(sqlite3_stmt *s, int i, char **out)
{
	const char *t = (const char *)sqlite3_column_text(s, i);

	*out = NULL;
	if (!t)
		return 0;
	return (*out = strdup(t)) ? 0 : -1;
}

static struct dnode *node_find(struct dot *d, int64_t id)
{
	struct dnode *n;

	cw_htab_for_each_possible(&d->nodes, n, hn, cw_mix64((uint64_t)id))
		if (n->id == id)
			return n;
	return NULL;
}

static struct dedge *edge_find(struct dot *d, int64_t id)
{
	struct dedge *e;

	cw_htab_for_each_possible(&d->edges, e, hn, cw_mix64((uint64_t)id))
		if (e->id == id)
			return e;
	return NULL;
}

/* @p, an array of *@cap elements of @size holding @n, with room for one
 * more: @p itself, or a larger copy; NULL when out of memory (@p is then
 * as it was). */
static void *grow(void *p, size_t n, size_t *cap, size_t size)
{
	size_t c = *cap ? *cap * 2 : 64;
	void *m;

	if (n < *cap)
		return p;
	if ((m = realloc(p, c * size)))
		*cap = c;
	return m;
}

static int table_room(struct cw_htab *t, cw_htab_hash_fn *fn)
{
	if (t->n < t->cap)
		return 0;
	return cw_htab__grow(t, t->cap ? t->cap * 2 : 256, fn, 0) ? -1 : 0;
}

static void node_free(struct dnode *n)
{
	if (!n)
		return;
	free(n->type);
	free(n->name);
	free(n->scope);
	free(n);
}

static void edge_free(struct dedge *e)
{
	if (!e)
		return;
	free(e->type);
	free(e->reason);
	free(e->confidence);
	free(e->wait);
	free(e);
}

/* Step @s, a statement of one row by id ?1, for @id. @return 0 at its
 * row, 1 when there is none, -1 after a message. */
static int row_of(struct dot *d, sqlite3_stmt *s, int64_t id)
{
	int rc;

	sqlite3_reset(s);
	sqlite3_bind_int64(s, 1, id);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? 1 : db_error(d);
}

/*
 * Node @id, read and added if it is not there yet. @return 0 with *@out,
 * 1 when the node is not in the database or the bound on nodes is
 * reached (*@out NULL), -1 after a message.
 */
static int node_add(struct dot *d, int64_t id, struct dnode **out)
{
	sqlite3_stmt *s = d->node_q;
	struct dnode *n, **v;
	int rc;

	if ((*out = node_find(d, id)))
		return 0;
	if (d->nn >= NODES_MAX) {
		d->cut_nodes = true;
		return 1;
	}
	if ((rc = row_of(d, s, id)))
		return rc;
	if (!(n = calloc(1, sizeof(*n))))
		return oom();
	n->id = id;
	n->key = sqlite3_column_int64(s, 2);
	n->has_start = sqlite3_column_type(s, 3) != SQLITE_NULL;
	n->start_ns = sqlite3_column_int64(s, 3);
	n->has_end = sqlite3_column_type(s, 4) != SQLITE_NULL;
	n->end_ns = sqlite3_column_int64(s, 4);
	n->generation = sqlite3_column_int64(s, 6);
	if (col_dup(s, 0, &n->type) || col_dup(s, 1, &n->name) || col_dup(s, 5, &n->scope) ||
	    !(v = grow(d->nv, d->nn, &d->ncap, sizeof(*v)))) {
		node_free(n);
		return oom();
	}
	d->nv = v;
	if (table_room(&d->nodes, hash_node)) {
		node_free(n);
		return oom();
	}
	cw_htab__add(&d->nodes, &n->hn, cw_mix64((uint64_t)id));
	d->nv[d->nn++] = n;
	*out = n;
	return 0;
}

/* An edge that is in the table: its pointer kept in order. */
static int edge_keep(struct dot *d, struct dedge *e)
{
	struct dedge **v = grow(d->ev, d->ne, &d->ecap, sizeof(*v));

	if (!v)
		return -1;
	d->ev = v;
	d->ev[d->ne++] = e;
	return 0;
}

/*
 * Edge @id, read and added with both its ends if it is not there yet and
 * lies in the export's window. With @among, only if both ends are drawn
 * already (an unknown cause is no node drawn). @return 0 with *@out, 1
 * when it is not drawn (not in the database or the window, or a bound),
 * -1 after a message.
 */
static int edge_add(struct dot *d, int64_t id, bool among, struct dedge **out)
{
	sqlite3_stmt *s = d->edge_q;
	struct dnode *src = NULL, *dst;
	struct dedge *e;
	int64_t ts;
	bool has_src, new_src, new_dst;
	struct cw_xwait w;
	char text[640];
	int rc;

	if ((*out = edge_find(d, id)))
		return 0;
	if (d->ne >= EDGES_MAX) {
		d->cut_edges = true;
		return 1;
	}
	if ((rc = row_of(d, s, id)))
		return rc;
	ts = sqlite3_column_int64(s, 3);
	if (ts < d->x->since || ts > d->x->until)
		return 1;
	has_src = sqlite3_column_type(s, 1) != SQLITE_NULL;
	new_src = has_src && !node_find(d, sqlite3_column_int64(s, 1));
	new_dst = !node_find(d, sqlite3_column_int64(s, 2));
	if (among && (!has_src || new_src || new_dst))
		return 1;
	/* Both ends or neither: an edge is never drawn to a node the bound
	 * left out, nor a node drawn for an edge it left out. */
	if (d->nn + new_src + new_dst > NODES_MAX) {
		d->cut_nodes = true;
		return 1;
	}
	if ((has_src && (rc = node_add(d, sqlite3_column_int64(s, 1), &src))) ||
	    (rc = node_add(d, sqlite3_column_int64(s, 2), &dst)))
		return rc;
	/* node_add() ran other statements, not this one: its row stands */
	if (!(e = calloc(1, sizeof(*e))))
		return oom();
	e->id = id;
	e->among = among;
	e->has_src = has_src;
	e->src = has_src ? src->id : 0;
	e->dst = dst->id;
	e->ts = ts;
	e->carried_by = sqlite3_column_int64(s, 6);
	if (col_dup(s, 0, &e->type) || col_dup(s, 4, &e->confidence) || col_dup(s, 5, &e->reason)) {
		edge_free(e);
		return oom();
	}
	/* a wake that ended a wait on a resource says which, and what let it go */
	if ((rc = cw_xwaits__ended_by(d->waits, id, &w)) < 0) {
		edge_free(e);
		return -1;
	}
	if (rc)
		cw_xwait__text(text, sizeof(text), &w, -1, NULL);
	if ((rc && !(e->wait = strdup(text))) || table_room(&d->edges, hash_edge) ||
	    edge_keep(d, e)) {
		edge_free(e);
		return oom();
	}
	cw_htab__add(&d->edges, &e->hn, cw_mix64((uint64_t)id));
	*out = e;
	return 0;
}

/* 1. Every edge into or out of the request node, its begin and end
 * first (a request can acquire a resource a million times): they name its
 * own threads. */
static int request_edges(struct dot *d)
{
	sqlite3_stmt *s = cw_x__prepare(
		d->x, "SELECT id FROM (SELECT id, type, ts FROM edges WHERE dst = ?1 UNION "
		      "SELECT id, type, ts FROM edges WHERE src = ?1) "
		      "ORDER BY type NOT IN ('begin', 'end'), ts, id LIMIT ?2");
	size_t rows = 0;
	int rc = SQLITE_DONE, ret = 0;

	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, d->req->id);
	sqlite3_bind_int64(s, 2, SIDE_MAX + 1);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct dedge *e;
		struct dnode *n;

		if (++rows > SIDE_MAX) {
			d->cut_side = true;
			rc = SQLITE_DONE;
			break;
		}
		if ((ret = edge_add(d, sqlite3_column_int64(s, 0), false, &e)) > 0) {
			ret = 0;
			continue;
		}
		if (ret)
			break;
		if (!strcmp(e->type ? e->type : "", "begin") && e->has_src && e->dst == d->req->id)
			n = node_find(d, e->src);
		else if (!strcmp(e->type ? e->type : "", "end") && e->has_src &&
			 e->src == d->req->id)
			n = node_find(d, e->dst);
		else
			n = NULL;
		if (n && n->type && !strcmp(n->type, "thread"))
			n->own = true;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = db_error(d);
	sqlite3_finalize(s);
	return ret;
}

/* A critical-path stop: drawn as an edge from an unknown cause into
 * @node, the rest of the request's time being unexplained; from the
 * unknown node of its edge @via where that edge's cause is unknown too
 * (an interrupt's wake: the same unknown). */
static int stop_add(struct dot *d, int64_t node, int64_t ts, int64_t ns, const char *reason,
		    int64_t via)
{
	struct dedge *e = calloc(1, sizeof(*e));

	if (!e || !(e->type = strdup("blocked")) || !(e->confidence = strdup("unknown")) ||
	    (reason && !(e->reason = strdup(reason))) || edge_keep(d, e)) {
		edge_free(e);
		return oom();
	}
	e->dst = node;
	e->ts = ts;
	e->critical = e->stop = true;
	e->stop_ns = ns;
	e->via = via;
	return 0;
}

/*
 * 2. The critical path, where the database has one (a table, or a view
 * over one): every segment's node, the edge that ended its wait, and for
 * a handoff the object's birth (the earliest edge into it, where the
 * handoff began). A stop (blocked, its cause unknown) is drawn from an
 * unknown node. A database without it draws the rest alone.
 */
static int critical_path(struct dot *d)
{
	static const char *const with_reason =
		"SELECT seq, node, kind, start_ns, end_ns, edge, confidence, reason "
		"FROM critical_path WHERE request = ?1 ORDER BY seq LIMIT ?2";
	sqlite3_stmt *has = cw_x__prepare(d->x, "SELECT 1 FROM sqlite_master WHERE name = "
						"'critical_path' AND type IN ('table', 'view')");
	sqlite3_stmt *s = NULL;
	size_t rows = 0;
	int rc, ret = 0;

	if (!has)
		return -1;
	rc = sqlite3_step(has);
	sqlite3_finalize(has);
	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE ? 0 : db_error(d);
	/* reason is not a column every critical_path has: without it, a
	 * stop is drawn without its why. */
	if (sqlite3_prepare_v2(d->x->db, with_reason, -1, &s, NULL) != SQLITE_OK) {
		sqlite3_finalize(s);
		s = NULL;
		if (sqlite3_prepare_v2(d->x->db,
				       "SELECT seq, node, kind, start_ns, end_ns, edge, confidence, "
				       "NULL FROM critical_path WHERE request = ?1 ORDER BY seq "
				       "LIMIT ?2",
				       -1, &s, NULL) != SQLITE_OK) {
			if (!d->x->quiet)
				cw_x__err("warning: critical_path cannot be read (%s): drawn without it",
					  sqlite3_errmsg(d->x->db));
			sqlite3_finalize(s);
			d->crit = -1;
			return 0;
		}
	}
	d->crit = 1;
	sqlite3_bind_int64(s, 1, d->req->id);
	sqlite3_bind_int64(s, 2, CRIT_MAX + 1);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(s, 2);
		int64_t start = sqlite3_column_int64(s, 3), end = sqlite3_column_int64(s, 4);
		bool blocked = kind && !strcmp(kind, "blocked");
		struct dnode *n;
		struct dedge *e;

		if (++rows > CRIT_MAX) {
			d->cut_crit = true;
			rc = SQLITE_DONE;
			break;
		}
		d->crit = 2;
		d->crit_segments++;
		if (blocked)
			d->crit_unknown_ns += end - start;
		if ((ret = node_add(d, sqlite3_column_int64(s, 1), &n)) > 0) {
			d->cut_crit = true;
			ret = 0;
			continue;
		}
		if (ret)
			break;
		n->critical = true;
		n->crit_ns += end - start;
		if (sqlite3_column_type(s, 5) != SQLITE_NULL) {
			if ((ret = edge_add(d, sqlite3_column_int64(s, 5), false, &e)) < 0)
				break;
			if (!ret)
				e->critical = true;
			ret = 0;
		}
		if (blocked) {
			ret = stop_add(d, n->id, start, end - start,
				       (const char *)sqlite3_column_text(s, 7),
				       sqlite3_column_int64(s, 5));
		} else if (kind && !strcmp(kind, "handoff")) {
			if (!(ret = row_of(d, d->birth_q, n->id)) &&
			    !(ret = edge_add(d, sqlite3_column_int64(d->birth_q, 0), false, &e)))
				e->critical = true;
			ret = ret < 0 ? -1 : 0;
		}
	}
	if (!ret && rc != SQLITE_DONE)
		ret = db_error(d);
	sqlite3_finalize(s);
	return ret;
}

/* One chain, from edge @id back through carried_by; each edge is
 * followed once, so chains that share their older part stop where they
 * join. */
static int chain(struct dot *d, int64_t id)
{
	size_t n;

	for (n = 0; id && n < CHAIN_MAX; n++) {
		struct dedge *e;
		int rc = edge_add(d, id, false, &e);

		if (rc)
			return rc < 0 ? -1 : 0;
		if (e->walked)
			return 0;
		e->walked = true;
		id = e->carried_by;
	}
	if (id)
		d->cut_chain = true;
	return 0;
}

/*
 * 3. The request's samples: the chain of each reconstructed one (the
 * heaviest first, so that a cut keeps where most of the time went), then
 * the wake that ended each of its waits. A wake's own carried_by is not
 * followed: it says what the waker carried, which need not be this
 * request.
 */
static int sample_edges(struct dot *d)
{
	static const char *const sql =
		"SELECT e, sum(w) AS w FROM (SELECT %s AS e, s.weight / s.inclusion_probability AS w "
		"FROM attribution a JOIN samples s ON s.id = a.sample WHERE a.request = ?1 "
		"AND %s IS NOT NULL AND s.ts >= ?2 AND s.ts <= ?3) "
		"GROUP BY e ORDER BY w DESC, e LIMIT ?4";
	static const struct {
		const char *col;
		size_t max;
		bool chain;
	} passes[] = { { "a.carry_edge", CHAINS_MAX, true }, { "s.wake", WAKES_MAX, false } };
	int ret = 0;

	for (size_t p = 0; p < sizeof(passes) / sizeof(passes[0]) && !ret; p++) {
		sqlite3_stmt *s;
		size_t rows = 0;
		char q[512];
		int rc;

		snprintf(q, sizeof(q), sql, passes[p].col, passes[p].col);
		if (!(s = cw_x__prepare(d->x, q)))
			return -1;
		sqlite3_bind_int64(s, 1, d->req->id);
		sqlite3_bind_int64(s, 2, d->x->since);
		sqlite3_bind_int64(s, 3, d->x->until);
		sqlite3_bind_int64(s, 4, (int64_t)passes[p].max + 1);
		while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
			int64_t id = sqlite3_column_int64(s, 0);
			struct dedge *e;

			if (++rows > passes[p].max) {
				d->cut_chains = true;
				rc = SQLITE_DONE;
				break;
			}
			if (passes[p].chain)
				ret = chain(d, id);
			else
				ret = edge_add(d, id, false, &e) < 0 ? -1 : 0;
		}
		if (!ret && rc != SQLITE_DONE)
			ret = db_error(d);
		sqlite3_finalize(s);
	}
	return ret;
}

/*
 * The contexts the request's samples ran in: each thread, and where a
 * task or a work item ran on it, that node and the edge that put it
 * there (the last resume or execute from it into the thread by the
 * first such sample), the most sampled first.
 */
static int sample_contexts(struct dot *d)
{
	sqlite3_stmt *s = cw_x__prepare(
		d->x, "SELECT s.node, s.thread, min(s.ts) FROM attribution a "
		      "JOIN samples s ON s.id = a.sample WHERE a.request = ?1 AND s.ts >= ?2 "
		      "AND s.ts <= ?3 GROUP BY s.node, s.thread "
		      "ORDER BY count(*) DESC, s.node, s.thread LIMIT ?4");
	sqlite3_stmt *link = cw_x__prepare(
		d->x, "SELECT id FROM edges WHERE src = ?1 AND dst = ?2 AND ts <= ?3 "
		      "ORDER BY ts DESC, id DESC LIMIT 1");
	size_t rows = 0;
	int rc = SQLITE_DONE, ret = 0;

	if (!s || !link) {
		ret = -1;
		goto out;
	}
	sqlite3_bind_int64(s, 1, d->req->id);
	sqlite3_bind_int64(s, 2, d->x->since);
	sqlite3_bind_int64(s, 3, d->x->until);
	sqlite3_bind_int64(s, 4, CONTEXTS_MAX + 1);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t node = sqlite3_column_int64(s, 0), thread = sqlite3_column_int64(s, 1);
		struct dnode *n;
		struct dedge *e;

		if (++rows > CONTEXTS_MAX) {
			d->cut_chains = true;
			rc = SQLITE_DONE;
			break;
		}
		if ((ret = node_add(d, thread, &n)) || node == thread) {
			ret = ret < 0 ? -1 : 0;
			continue;
		}
		sqlite3_reset(link);
		sqlite3_bind_int64(link, 1, node);
		sqlite3_bind_int64(link, 2, thread);
		sqlite3_bind_int64(link, 3, sqlite3_column_int64(s, 2));
		if ((rc = sqlite3_step(link)) == SQLITE_ROW)
			ret = edge_add(d, sqlite3_column_int64(link, 0), false, &e) < 0 ? -1 : 0;
		else if (rc != SQLITE_DONE)
			ret = db_error(d);
		else
			ret = node_add(d, node, &n) < 0 ? -1 : 0;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = db_error(d);
out:
	sqlite3_finalize(s);
	sqlite3_finalize(link);
	return ret;
}

/* The edges of the window into (@in) or out of node @n, drawn where
 * @among allows (see edge_add()). */
static int side(struct dot *d, struct dnode *n, bool in, bool among)
{
	sqlite3_stmt *s = in ? d->in_q : d->out_q;
	size_t rows = 0;
	int rc;

	sqlite3_reset(s);
	sqlite3_bind_int64(s, 1, n->id);
	sqlite3_bind_int64(s, 2, d->lo);
	sqlite3_bind_int64(s, 3, d->hi);
	sqlite3_bind_int64(s, 4, SIDE_MAX + 1);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct dedge *e;

		if (++rows > SIDE_MAX) {
			d->cut_side = true;
			return 0;
		}
		if (edge_add(d, sqlite3_column_int64(s, 0), among, &e) < 0)
			return -1;
	}
	return rc == SQLITE_DONE ? 0 : db_error(d);
}

/* An object, as opposed to a context that runs or the request itself:
 * what comes out of it in the request's time was made for it or in it. */
static bool is_object(const struct dnode *n)
{
	return n->type && !cw_x__is_context(n->type) && strcmp(n->type, "request") &&
	       strcmp(n->type, "runtime_task");
}

/* 4. Between begin and end: see the top of the file. */
static int interval(struct dot *d)
{
	size_t from = 0;

	for (int pass = 0; pass < PASSES && from < d->nn; pass++) {
		size_t to = d->nn;

		for (size_t i = from; i < to; i++) {
			struct dnode *n = d->nv[i];

			if (n->own && side(d, n, true, false))
				return -1;
			if ((n->own || is_object(n)) && side(d, n, false, false))
				return -1;
		}
		from = to;
	}
	for (size_t i = 0; i < d->nn; i++) {
		struct dnode *n = d->nv[i];

		if (!n->own && side(d, n, true, true))
			return -1;
	}
	return 0;
}

/* ---- writing ---- */

/* @s as a DOT quoted string. @s is text already escaped (lib/esc.h) or
 * made here: a '\n' in it is a line break; a quote and a backslash are
 * escaped for DOT, so that graphviz shows them as they are (its \N, \G
 * and \l never happen), and any byte that is not text as \xNN. */
static void dot_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);

	fputc('"', f);
	for (size_t i = 0; i < n;) {
		size_t k = cw_esc_plain_len(p + i, n - i);

		if (p[i] == '"' || p[i] == '\\') {
			fputc('\\', f);
			fputc(p[i], f);
		} else if (p[i] == '\n') {
			fputs("\\n", f);
		} else if (!k) {
			fprintf(f, "\\\\x%02x", p[i]);
		} else {
			fwrite(p + i, 1, k, f);
			i += k;
			continue;
		}
		i++;
	}
	fputc('"', f);
}

/* @ns as a person reads a duration: "850 ns", "12.3 us", "4.56 ms". */
static void fmt_ns(char *buf, size_t cap, int64_t ns)
{
	double a = ns < 0 ? -(double)ns : (double)ns;
	const char *sign = ns < 0 ? "-" : "";

	if (a < 10e3)
		snprintf(buf, cap, "%s%.0f ns", sign, a);
	else if (a < 1e6)
		snprintf(buf, cap, "%s%.1f us", sign, a / 1e3);
	else if (a < 1e9)
		snprintf(buf, cap, "%s%.2f ms", sign, a / 1e6);
	else
		snprintf(buf, cap, "%s%.2f s", sign, a / 1e9);
}

/* A time of the capture as the graph says it: from the request's begin
 * where it is known. */
static void fmt_at(const struct dot *d, char *buf, size_t cap, int64_t ts)
{
	char t[24];

	if (d->req->has_start) {
		fmt_ns(t, sizeof(t), ts - d->req->start_ns);
		snprintf(buf, cap, "%s%s", ts >= d->req->start_ns ? "+" : "", t);
	} else {
		snprintf(buf, cap, "at %" PRId64 " ns", ts);
	}
}

static const struct {
	const char *type, *attrs;
} shapes[] = {
	{ "request", "shape=doubleoctagon, style=filled, fillcolor=\"#ffe8a3\"" },
	{ "thread", "shape=box, style=filled, fillcolor=\"#dbe9f6\"" },
	{ "process", "shape=box3d, style=filled, fillcolor=\"#dbe9f6\"" },
	{ "runtime_task", "shape=box, style=\"rounded,filled\", fillcolor=\"#e4f2dc\"" },
	{ "io_request", "shape=cylinder, style=filled, fillcolor=\"#f3e1f0\"" },
	{ "block_request", "shape=cylinder, style=filled, fillcolor=\"#efe1d4\"" },
	{ "packet", "shape=note, style=filled, fillcolor=\"#e0f3f1\"" },
	{ "timer", "shape=ellipse, style=filled, fillcolor=\"#f6e6d8\"" },
	{ "work_item", "shape=ellipse, style=filled, fillcolor=\"#ece8f6\"" },
	{ "resource", "shape=hexagon, style=filled, fillcolor=\"#eeeeee\"" },
};

/* A label being built: what does not fit is cut. */
struct text {
	char s[1024];
	size_t n;
};

static void __attribute__((format(printf, 2, 3))) addf(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(t->s + t->n, sizeof(t->s) - t->n, fmt, ap);
	va_end(ap);
	if (r > 0)
		t->n += (size_t)r < sizeof(t->s) - t->n ? (size_t)r : sizeof(t->s) - t->n - 1;
}

static void write_node(struct dot *d, const struct dnode *n)
{
	struct cw_xnode xn = { .type = n->type, .name = n->name, .key = n->key };
	const char *attrs = "shape=box";
	struct text label = { .n = 0 }, tip = { .n = 0 };
	char text[160], t[32], scope[128];

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		if (n->type && !strcmp(shapes[i].type, n->type))
			attrs = shapes[i].attrs;
	cw_x__node_text(text, sizeof(text), &xn);
	addf(&label, "%s", text);
	/* an unnamed thread's text is its tid already */
	if (n->type && !strcmp(n->type, "thread") && n->name && *n->name)
		addf(&label, "\ntid %" PRId64, n->key);
	if (n == d->req && n->has_start && n->has_end) {
		fmt_ns(t, sizeof(t), n->end_ns - n->start_ns);
		addf(&label, "\n%s", t);
	}
	if (n->critical) {
		fmt_ns(t, sizeof(t), n->crit_ns);
		addf(&label, "\ncritical path: %s", t);
	}
	cw_esc_snprint(scope, sizeof(scope), n->scope ? n->scope : "");
	addf(&tip, "node %" PRId64 ": %s, scope %s, key %" PRId64 ", generation %" PRId64, n->id,
	     n->type ? n->type : "?", scope, n->key, n->generation);
	fprintf(d->x->out, "  n%" PRId64 " [label=", n->id);
	dot_str(d->x->out, label.s);
	fprintf(d->x->out, ", tooltip=");
	dot_str(d->x->out, tip.s);
	fprintf(d->x->out, ", %s%s];\n", attrs, n->critical ? CRITICAL : "");
}

static bool same(const char *a, const char *b)
{
	return a ? b && !strcmp(a, b) : !b;
}

/* Edges drawn as one: the same ends, type, confidence, reason and
 * resource wait, and both on the critical path or both not. A stop and
 * an unknown cause never merge with another: each has its own unknown
 * node. */
static bool mergeable(const struct dedge *a, const struct dedge *b)
{
	return !a->stop && !b->stop && a->has_src && b->has_src && a->src == b->src &&
	       a->dst == b->dst && a->critical == b->critical && a->among == b->among &&
	       same(a->type, b->type) && same(a->confidence, b->confidence) &&
	       same(a->reason, b->reason) && same(a->wait, b->wait);
}

static int by_time(const void *pa, const void *pb)
{
	const struct dedge *a = *(const struct dedge *const *)pa, *b = *(const struct dedge *const *)pb;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->stop != b->stop)
		return a->stop ? 1 : -1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->dst < b->dst ? -1 : a->dst > b->dst;
}

static int by_id(const void *pa, const void *pb)
{
	const struct dnode *a = *(const struct dnode *const *)pa, *b = *(const struct dnode *const *)pb;

	return a->id < b->id ? -1 : a->id > b->id;
}

static const char *style_of(const char *confidence)
{
	if (confidence && !strcmp(confidence, "observed"))
		return "solid";
	if (confidence && !strcmp(confidence, "reconstructed"))
		return "dashed";
	return "dotted";
}

/* An unknown cause's node: "unknown" and why. */
static void write_unknown(struct dot *d, const char *id, const char *why, bool critical)
{
	struct text u = { .n = 0 };
	char w[96];

	addf(&u, "unknown");
	if (why) {
		cw_esc_snprint(w, sizeof(w), why);
		addf(&u, "\n%s", w);
	}
	fprintf(d->x->out, "  %s [label=", id);
	dot_str(d->x->out, u.s);
	fprintf(d->x->out, ", shape=octagon, style=dotted, fontcolor=\"#666666\"%s];\n",
		critical ? CRITICAL : "");
}

/* The @n edges @g that merge into one, written as one. An edge whose
 * cause is unknown comes from its own unknown node, u<edge id>. */
static void write_edge(struct dot *d, struct dedge *const *g, size_t n)
{
	const struct dedge *e = g[0], *via;
	struct text label = { .n = 0 }, tip = { .n = 0 };
	char from[32], why[96], a[32], b[32];

	fmt_at(d, a, sizeof(a), e->ts);
	if (e->stop) {
		via = e->via ? edge_find(d, e->via) : NULL;
		if (via && !via->has_src) {
			snprintf(from, sizeof(from), "u%" PRId64, via->id);
		} else {
			snprintf(from, sizeof(from), "s%zu", d->stops++);
			write_unknown(d, from, NULL, true);
		}
		fmt_ns(b, sizeof(b), e->stop_ns);
		cw_esc_snprint(why, sizeof(why), e->reason ? e->reason : "no reason given");
		addf(&label, "critical path stops (%s):\nblocked %s from %s", why, b, a);
		addf(&tip, "the critical path's walk stopped here: before, its cause is unknown");
	} else {
		if (e->has_src) {
			snprintf(from, sizeof(from), "n%" PRId64, e->src);
		} else {
			snprintf(from, sizeof(from), "u%" PRId64, e->id);
			write_unknown(d, from, e->reason ? e->reason : "no cause recorded",
				      e->critical);
		}
		cw_esc_snprint(why, sizeof(why), e->type ? e->type : "edge");
		addf(&label, "%s", why);
		if (e->has_src && e->reason) {
			cw_esc_snprint(why, sizeof(why), e->reason);
			addf(&label, " (%s)", why);
		}
		if (e->wait) /* escaped already */
			addf(&label, "\n%s", e->wait);
		if (n > 1) {
			fmt_at(d, b, sizeof(b), g[n - 1]->ts);
			addf(&label, " \u00d7%zu\n%s .. %s", n, a, b);
		} else {
			addf(&label, "\n%s", a);
		}
		addf(&tip, "edge %" PRId64 "%s, %s", e->id, n > 1 ? " and more" : "",
		     e->confidence ? e->confidence : "?");
	}
	fprintf(d->x->out, "  %s -> n%" PRId64 " [label=", from, e->dst);
	dot_str(d->x->out, label.s);
	fprintf(d->x->out, ", tooltip=");
	dot_str(d->x->out, tip.s);
	fprintf(d->x->out, ", style=%s%s];\n", style_of(e->confidence),
		e->critical ? CRITICAL ", fontcolor=\"#c0392b\""
		: e->among  ? ", color=\"#999999\", fontcolor=\"#777777\""
			    : "");
}

/* The graph's caption: what it is, how to read it, what was left out. */
static void write_caption(struct dot *d)
{
	struct cw_xnode xn = { .type = d->req->type, .name = d->req->name, .key = d->req->key };
	struct text c = { .n = 0 };
	char text[160], t[32];

	cw_x__node_text(text, sizeof(text), &xn);
	addf(&c, "%s (node %" PRId64 ")", text, d->req->id);
	if (d->req->has_start && d->req->has_end) {
		fmt_ns(t, sizeof(t), d->req->end_ns - d->req->start_ns);
		addf(&c, ", %s", t);
	}
	addf(&c, "\nedges: solid observed, dashed reconstructed, dotted unknown; gray: other "
		 "handoffs among these nodes in the request's time");
	if (d->crit == 2) {
		fmt_ns(t, sizeof(t), d->crit_unknown_ns);
		addf(&c, "\nheavy red: the critical path, %zu segments%s (%s of it unknown)",
		     d->crit_segments, d->cut_crit ? ", not all drawn" : "", t);
	} else {
		addf(&c, "\ncritical path: %s",
		     d->crit == 1    ? "none for this request"
		     : d->crit == -1 ? "unreadable in this database"
				     : "not in this database");
	}
	if (!d->interval)
		addf(&c, "\nits %s is not in the trace: no walk between begin and end",
		     !d->req->has_start ? "begin" : "end");
	if (d->cut_edges || d->cut_nodes || d->cut_side || d->cut_chains || d->cut_chain)
		addf(&c,
		     "\ncut: more was found than is drawn (at most %d edges, %d nodes, %d edges "
		     "of a node in the walk, %d chains of %d handoffs)",
		     EDGES_MAX, NODES_MAX, SIDE_MAX, CHAINS_MAX, CHAIN_MAX);
	fprintf(d->x->out, "  label=");
	dot_str(d->x->out, c.s);
	fprintf(d->x->out, ";\n");
}

static int write_graph(struct dot *d)
{
	FILE *f = d->x->out;
	size_t i;

	qsort(d->nv, d->nn, sizeof(d->nv[0]), by_id);
	qsort(d->ev, d->ne, sizeof(d->ev[0]), by_time);
	fprintf(f, "digraph \"request %" PRId64 "\" {\n", d->req->id);
	fprintf(f, "  graph [rankdir=LR, labelloc=t, labeljust=l, fontname=\"sans-serif\"];\n"
		   "  node [fontname=\"sans-serif\", fontsize=11];\n"
		   "  edge [fontname=\"sans-serif\", fontsize=9];\n");
	write_caption(d);
	for (i = 0; i < d->nn; i++)
		write_node(d, d->nv[i]);
	/* Merge groups in time order: an edge joins the first group it
	 * merges with (a group's edges are then moved together). At most
	 * EDGES_MAX edges: the quadratic search is a million compares. */
	for (i = 0; i < d->ne; i++) {
		size_t n = 1;

		for (size_t j = i + 1; j < d->ne; j++) {
			if (mergeable(d->ev[i], d->ev[j])) {
				struct dedge *m = d->ev[j];

				/* keep the group's order by time: shift up */
				memmove(&d->ev[i + n + 1], &d->ev[i + n], (j - i - n) * sizeof(d->ev[0]));
				d->ev[i + n] = m;
				n++;
			}
		}
		write_edge(d, &d->ev[i], n);
		i += n - 1;
	}
	fprintf(f, "}\n");
	return ferror(f) ? -1 : 0;
}

int cw_x__dot(struct cw_x *x)
{
	struct dot d = { .x = x };
	struct cw_hnode *tmp;
	struct dnode *nd;
	struct dedge *ed;
	size_t i;
	int ret = -1, rc;

	d.node_q = cw_x__prepare(x, "SELECT type, name, key, start_ns, end_ns, scope, "
				    "generation FROM nodes WHERE id = ?1");
	d.edge_q = cw_x__prepare(x, "SELECT type, src, dst, ts, confidence, reason, carried_by "
				    "FROM edges WHERE id = ?1");
	d.in_q = cw_x__prepare(x, "SELECT id FROM edges WHERE dst = ?1 AND ts >= ?2 AND ts <= ?3 "
				  "ORDER BY ts, id LIMIT ?4");
	d.out_q = cw_x__prepare(x, "SELECT id FROM edges WHERE src = ?1 AND ts >= ?2 AND ts <= ?3 "
				   "ORDER BY ts, id LIMIT ?4");
	d.birth_q = cw_x__prepare(x, "SELECT id FROM edges WHERE dst = ?1 ORDER BY ts, id LIMIT 1");
	d.waits = cw_xwaits__open(x);
	if (!d.node_q || !d.edge_q || !d.in_q || !d.out_q || !d.birth_q || !d.waits)
		goto out;
	if ((rc = node_add(&d, x->requests[0], &d.req)) < 0)
		goto out;
	if (rc || !d.req->type || strcmp(d.req->type, "request")) {
		cw_x__err("node %" PRId64 " is not a request", x->requests[0]);
		goto out;
	}
	d.interval = d.req->has_start && d.req->has_end;
	d.lo = d.req->start_ns > x->since ? d.req->start_ns : x->since;
	d.hi = d.req->end_ns < x->until ? d.req->end_ns : x->until;
	if (request_edges(&d) || critical_path(&d) || sample_edges(&d) || sample_contexts(&d))
		goto out;
	if (d.interval && d.lo <= d.hi && interval(&d))
		goto out;
	if (write_graph(&d)) {
		cw_x__err("the output cannot be written");
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(d.node_q);
	sqlite3_finalize(d.edge_q);
	sqlite3_finalize(d.in_q);
	sqlite3_finalize(d.out_q);
	sqlite3_finalize(d.birth_q);
	cw_xwaits__free(d.waits);
	cw_htab_for_each_safe(&d.nodes, i, nd, tmp, hn)
		node_free(nd);
	for (i = 0; i < d.ne; i++)
		if (d.ev[i]->stop)
			edge_free(d.ev[i]); /* not in the table */
	cw_htab_for_each_safe(&d.edges, i, ed, tmp, hn)
		edge_free(ed);
	cw_htab__free(&d.nodes);
	cw_htab__free(&d.edges);
	free(d.nv);
	free(d.ev);
	return ret;
}
