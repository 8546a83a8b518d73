// SPDX-License-Identifier: MIT
/*
 * A database, opened read-only, and the scoring of its claims against the
 * truth's hops (FORMAT.md, RULE direct, object and wait).
 *
 * The database is never written: it is opened with SQLITE_OPEN_READONLY,
 * and what the scoring needs indexed that the schema does not index is
 * copied into TEMP tables (temp_store in memory), filtered down to the
 * edge and node types the truth names:
 *   cw_cause  the edges that may start a hop (CAUSE into an OBJ_TYPE), by (type, ts);
 *   cw_eff    the edges that may end one (EFFECT from an OBJ_TYPE), by (type, ts) and src;
 *   cw_orph   the orphan nodes of those types (start_seen = 0), by (type, first seen);
 *   cw_waits  resource_waits with their resource's name and key, by time.
 * Everything else is a seek in the schema's own indexes (nodes_identity,
 * edges_dst_ts, edges_src), one or a few per hop.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "eval.h"
#include "lib/hash.h"

double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --- the u64 map ------------------------------------------------------- */

static size_t slot_of(uint64_t k, size_t cap)
{
	return (size_t)cw_mix64(k) & (cap - 1);
}

/* v holds 2 * cap words: the values, then the occupancy of each slot (0
 * empty, 1 used), so that every key value can be stored. */
static int map_grow(struct u64map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 1024;
	uint64_t *k = calloc(ncap, sizeof(*k)), *v = calloc(ncap * 2, sizeof(*v));
	uint64_t *used;

	if (!k || !v) {
		free(k);
		free(v);
		return -1;
	}
	used = v + ncap; /* occupancy: 0 empty, 1 used */
	for (size_t i = 0; i < m->cap; i++) {
		size_t s;

		if (!m->v[m->cap + i])
			continue;
		for (s = slot_of(m->k[i], ncap); used[s]; s = (s + 1) & (ncap - 1))
			;
		k[s] = m->k[i];
		v[s] = m->v[i];
		used[s] = 1;
	}
	free(m->k);
	free(m->v);
	m->k = k;
	m->v = v;
	m->cap = ncap;
	return 0;
}

int u64map_put(struct u64map *m, uint64_t k, uint64_t v)
{
	size_t s;

	if ((m->n + 1) * 2 > m->cap && map_grow(m))
		return -1;
	for (s = slot_of(k, m->cap); m->v[m->cap + s]; s = (s + 1) & (m->cap - 1))
		if (m->k[s] == k) {
			m->v[s] = v;
			return 0;
		}
	m->k[s] = k;
	m->v[s] = v;
	m->v[m->cap + s] = 1;
	m->n++;
	return 0;
}

int u64map_get(const struct u64map *m, uint64_t k, uint64_t *v)
{
	if (!m->cap)
		return 0;
	for (size_t s = slot_of(k, m->cap); m->v[m->cap + s]; s = (s + 1) & (m->cap - 1))
		if (m->k[s] == k) {
			*v = m->v[s];
			return 1;
		}
	return 0;
}

void u64map_free(struct u64map *m)
{
	free(m->k);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* --- opening ----------------------------------------------------------- */

/*
 * "causeway-eval: DB: what: message", DB and SQLite's message escaped:
 * the message can quote the database (the name of a table or an index in
 * a schema that does not parse).
 */
void edb_say(const char *path, const char *what, const char *msg)
{
	fputs("causeway-eval: ", stderr);
	cw_esc_fput(stderr, path);
	fprintf(stderr, ": %s", what);
	if (msg) {
		fputs(": ", stderr);
		cw_esc_fput(stderr, msg);
	}
	fputc('\n', stderr);
}

int edb_fail(struct edb *db, const char *what)
{
	edb_say(db->path, what, db->h ? sqlite3_errmsg(db->h) : "cannot open");
	return -1;
}

int edb_prepare(struct edb *db, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(db->h, sql, -1, st, NULL) != SQLITE_OK) {
		edb_say(db->path, "not the causeway schema this evaluator reads",
			sqlite3_errmsg(db->h));
		*st = NULL;
		return -1;
	}
	return 0;
}

static int exec(struct edb *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
		edb_say(db->path, "query", msg ? msg : "error");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static int add_pair(struct edb *db, sqlite3_stmt *ins, const char *etype, const char *ntype)
{
	int rc;

	if (!etype[0] || !ntype[0])
		return 0;
	sqlite3_bind_text(ins, 1, etype, -1, SQLITE_STATIC);
	sqlite3_bind_text(ins, 2, ntype, -1, SQLITE_STATIC);
	rc = sqlite3_step(ins);
	sqlite3_reset(ins);
	return rc == SQLITE_DONE ? 0 : edb_fail(db, "temp table");
}

/* The TEMP tables the scoring reads (see the top of this file). */
static int build_temp(struct edb *db, const struct truth *t)
{
	sqlite3_stmt *cp = NULL, *ep = NULL;
	int has_cause = 0, has_eff = 0, has_wait = 0, rc = -1;

	if (exec(db, "PRAGMA temp_store = MEMORY; PRAGMA cache_size = -131072;"
		     "CREATE TEMP TABLE cw_cp(etype TEXT, ntype TEXT, PRIMARY KEY(etype, ntype))"
		     " WITHOUT ROWID;"
		     "CREATE TEMP TABLE cw_ep(etype TEXT, ntype TEXT, PRIMARY KEY(etype, ntype))"
		     " WITHOUT ROWID;"
		     "CREATE TEMP TABLE cw_cause(id INTEGER, type TEXT, ts INTEGER, conf TEXT,"
		     " src INTEGER, dst INTEGER);"
		     "CREATE TEMP TABLE cw_eff(id INTEGER, type TEXT, ts INTEGER, conf TEXT,"
		     " src INTEGER, dst INTEGER);"
		     "CREATE TEMP TABLE cw_orph(id INTEGER, type TEXT, key INTEGER, name TEXT,"
		     " t INTEGER);"
		     "CREATE TEMP TABLE cw_waits(id INTEGER, start_ns INTEGER, end_ns INTEGER,"
		     " waiter INTEGER, waker INTEGER, conf TEXT, wconf TEXT, rname TEXT,"
		     " rkey INTEGER, wts INTEGER);"))
		return -1;
	if (edb_prepare(db, "INSERT OR IGNORE INTO cw_cp VALUES(?, ?)", &cp) ||
	    edb_prepare(db, "INSERT OR IGNORE INTO cw_ep VALUES(?, ?)", &ep))
		goto out;
	for (size_t i = 0; i < t->nhops; i++) {
		const struct hop *h = &t->hops[i];

		if (h->rule == RULE_WAIT)
			has_wait = 1;
		if (h->rule != RULE_OBJECT)
			continue;
		if (add_pair(db, cp, h->cause, h->obj_type) || add_pair(db, ep, h->effect, h->obj_type))
			goto out;
		has_cause = 1;
		has_eff |= !!h->effect[0];
	}
	if (has_cause &&
	    exec(db, "INSERT INTO cw_cause SELECT e.id, e.type, e.ts, e.confidence, e.src, e.dst"
		     " FROM edges e JOIN nodes d ON d.id = e.dst"
		     " WHERE e.src IS NOT NULL AND (e.type, d.type) IN (SELECT etype, ntype FROM cw_cp);"))
		goto out;
	if (has_eff &&
	    exec(db, "INSERT INTO cw_eff SELECT e.id, e.type, e.ts, e.confidence, e.src, e.dst"
		     " FROM edges e JOIN nodes s ON s.id = e.src"
		     " WHERE (e.type, s.type) IN (SELECT etype, ntype FROM cw_ep);"))
		goto out;
	/* An orphan's birth was not seen (start_ns NULL): it is placed where
	 * the database first saw it, its first edge in or out. */
	if (has_cause &&
	    exec(db, "INSERT INTO cw_orph SELECT n.id, n.type, n.key, n.name,"
		     " coalesce(n.start_ns, (SELECT min(ts) FROM (SELECT ts FROM edges WHERE dst = n.id"
		     "   UNION ALL SELECT ts FROM edges WHERE src = n.id)))"
		     " FROM nodes n WHERE n.start_seen = 0"
		     " AND n.type IN (SELECT ntype FROM cw_cp UNION SELECT ntype FROM cw_ep);"))
		goto out;
	if (has_wait &&
	    exec(db, "INSERT INTO cw_waits SELECT w.id, w.start_ns, w.end_ns, w.waiter, w.waker,"
		     " w.confidence, e.confidence, r.name, r.key, e.ts"
		     " FROM resource_waits w JOIN nodes r ON r.id = w.resource"
		     " LEFT JOIN edges e ON e.id = w.wake_edge;"))
		goto out;
	if (exec(db, "CREATE INDEX temp.cw_cause_t ON cw_cause(type, ts);"
		     "CREATE INDEX temp.cw_eff_t ON cw_eff(type, ts);"
		     "CREATE INDEX temp.cw_eff_s ON cw_eff(src);"
		     "CREATE INDEX temp.cw_orph_t ON cw_orph(type, t);"
		     "CREATE INDEX temp.cw_waits_k ON cw_waits(rname, rkey, start_ns);"
		     "CREATE INDEX temp.cw_waits_t ON cw_waits(start_ns);"))
		goto out;
	rc = 0;
out:
	sqlite3_finalize(cp);
	sqlite3_finalize(ep);
	return rc;
}

int edb_open(const char *path, const struct truth *t, struct edb *db)
{
	static const char *const tables[] = { "nodes", "edges", "samples", "attribution",
					      "resource_waits", NULL };
	sqlite3_stmt *st = NULL;
	struct stat sb;
	int rc;

	memset(db, 0, sizeof(*db));
	db->path = path;
	if (stat(path, &sb)) {
		edb_say(path, "cannot open the database", strerror(errno));
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		edb_say(path, "cannot open the database", "not a regular file");
		return -1;
	}
	if (sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		edb_fail(db, "cannot open the database");
		edb_close(db);
		return -1;
	}
	sqlite3_busy_timeout(db->h, 5000);
	if (sqlite3_prepare_v2(db->h, "SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?",
			       -1, &st, NULL) != SQLITE_OK) {
		edb_fail(db, "not a SQLite database");
		edb_close(db);
		return -1;
	}
	for (int i = 0; tables[i]; i++) {
		sqlite3_bind_text(st, 1, tables[i], -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc == SQLITE_ROW)
			continue;
		if (rc == SQLITE_DONE) {
			char what[64];

			snprintf(what, sizeof(what), "not a causeway database: no table '%s'",
				 tables[i]);
			edb_say(path, what, NULL);
		} else {
			edb_fail(db, "not a SQLite database");
		}
		sqlite3_finalize(st);
		edb_close(db);
		return -1;
	}
	sqlite3_finalize(st);
	if (build_temp(db, t)) {
		edb_close(db);
		return -1;
	}
	return 0;
}

void edb_close(struct edb *db)
{
	if (db->h)
		sqlite3_close_v2(db->h);
	db->h = NULL;
}

/* --- nodes and contexts ------------------------------------------------ */

struct node {
	int64_t id, key, tid, pid, start, end;
	int has_start, has_end, has_tid, has_pid, start_seen;
	char type[TYPE_LEN];
	char scope[128];
};

#define NCACHE 8192

struct ctx {
	struct edb *db;
	const struct truth *t;
	sqlite3_stmt *node, *threads, *objs, *into, *cause, *from, *effwin, *orph, *waits_key, *waits_any,
		*resume;
	struct node *cache; /* direct-mapped by id */
	int failed;
};

static int64_t col_i64(sqlite3_stmt *s, int i, int *has)
{
	int h = sqlite3_column_type(s, i) != SQLITE_NULL;

	if (has)
		*has = h;
	return h ? sqlite3_column_int64(s, i) : 0;
}

static void col_str(sqlite3_stmt *s, int i, char *out, size_t len)
{
	const unsigned char *p = sqlite3_column_text(s, i);

	snprintf(out, len, "%s", p ? (const char *)p : "");
}

static int step_row(struct ctx *c, sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);

	if (rc == SQLITE_ROW)
		return 1;
	if (rc != SQLITE_DONE && !c->failed) {
		edb_fail(c->db, "query");
		c->failed = 1;
	}
	return 0;
}

/* The node with this id, copied into *out; 0 when there is none (a
 * dangling reference). */
static int node_get(struct ctx *c, int64_t id, struct node *out)
{
	struct node *n = &c->cache[(uint64_t)id % NCACHE];
	sqlite3_stmt *s = c->node;

	if (n->id == id && id) {
		*out = *n;
		return 1;
	}
	sqlite3_bind_int64(s, 1, id);
	if (!step_row(c, s)) {
		sqlite3_reset(s);
		return 0;
	}
	memset(n, 0, sizeof(*n));
	n->id = id;
	col_str(s, 0, n->type, sizeof(n->type));
	col_str(s, 1, n->scope, sizeof(n->scope));
	n->key = col_i64(s, 2, NULL);
	n->start = col_i64(s, 3, &n->has_start);
	n->end = col_i64(s, 4, &n->has_end);
	n->start_seen = (int)col_i64(s, 5, NULL);
	n->tid = col_i64(s, 6, &n->has_tid);
	n->pid = col_i64(s, 7, &n->has_pid);
	sqlite3_reset(s);
	*out = *n;
	return 1;
}

/* Alive at t: a start not seen (NULL) is before the capture. */
static int alive(const struct node *n, int64_t t)
{
	return (!n->has_start || n->start <= t) && (!n->has_end || n->end >= t);
}

static int is_type(const struct node *n, const char *type)
{
	return !strcmp(n->type, type);
}

/* A runtime task or request of the workload's process. */
static int in_scope(const struct truth *t, const struct node *n)
{
	return !t->has_pid || !strcmp(n->scope, t->pid_scope);
}

enum { CTX_NO, CTX_IN, CTX_GEN /* the right identity, another generation */ };

/* FORMAT.md, "A thread's context", for SRC_TID, SRC_TASK, SRC_REQ. */
static int in_context(const struct truth *t, const struct node *n, const struct hop *h, int64_t ts)
{
	int live = alive(n, ts);

	/* SRC_TID '-': the runtime's own work on a thread of the workload
	 * that the program cannot name (a Go timer run by the scheduler),
	 * any of them, and no task or request. */
	if (!h->has_src_tid)
		return is_type(n, "thread") && n->has_pid && n->pid == t->pid && live ? CTX_IN
										   : CTX_NO;
	if (is_type(n, "thread") && n->key == h->src_tid)
		return live ? CTX_IN : CTX_GEN;
	if (is_type(n, "runtime_task") && h->has_task && n->key == h->src_task && in_scope(t, n))
		return live ? CTX_IN : CTX_GEN;
	if (is_type(n, "request") && h->has_req && n->key == h->src_req && in_scope(t, n))
		return live ? CTX_IN : CTX_GEN;
	return CTX_NO;
}

/* --- claims ------------------------------------------------------------ */

/* One (claim, hop) finding. key: an edge id * 2, or a resource_waits id * 2 + 1.
 * claim: this finding alone makes the row a claim; correct: correct for this
 * hop; fj: wrong across reuse for this hop. */
struct crec {
	int64_t key;
	uint32_t hop;
	uint8_t claim, correct, fj;
};

struct hstate {
	int64_t n; /* N(h): 0 none */
	int64_t n_key;
	char n_scope[128];
	int cause_observed;
	int correct, observed, orphan;
};

struct scorer {
	struct ctx c;
	struct hstate *hs;
	struct crec *recs;
	size_t nrecs, caprecs;
	int64_t *tids; /* thread nodes of a tid (edges_into) */
	size_t captids;
};

static int push(struct scorer *s, int64_t key, size_t hop, int claim, int correct, int fj)
{
	if (s->nrecs == s->caprecs) {
		size_t ncap = s->caprecs ? s->caprecs * 2 : 1024;
		struct crec *r = realloc(s->recs, ncap * sizeof(*r));

		if (!r) {
			fprintf(stderr, "causeway-eval: out of memory\n");
			return -1;
		}
		s->recs = r;
		s->caprecs = ncap;
	}
	s->recs[s->nrecs++] = (struct crec){ key, (uint32_t)hop, (uint8_t)claim, (uint8_t)correct,
					     (uint8_t)fj };
	return 0;
}

static void found(struct scorer *s, size_t i, int observed)
{
	s->hs[i].correct = 1;
	if (observed)
		s->hs[i].observed = 1;
}

static int is_observed(sqlite3_stmt *st, int col)
{
	const unsigned char *p = sqlite3_column_text(st, col);

	return p && !strcmp((const char *)p, "observed");
}

/* The node ids statement @st (bound) yields, into *ids. */
static int node_ids(struct ctx *c, sqlite3_stmt *st, int64_t **ids, size_t *n, size_t *cap)
{
	*n = 0;
	while (step_row(c, st)) {
		if (*n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 16;
			int64_t *p = realloc(*ids, ncap * sizeof(*p));

			if (!p) {
				sqlite3_reset(st);
				fprintf(stderr, "causeway-eval: out of memory\n");
				return -1;
			}
			*ids = p;
			*cap = ncap;
		}
		(*ids)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_reset(st);
	return c->failed ? -1 : 0;
}

/* The nodes (every generation) a hop's effect goes into: DST_TID's
 * threads, or for a direct hop into a goroutine or a request the nodes of
 * OBJ_TYPE and OBJ_KEY in the workload's scope. */
static int dst_nodes(struct ctx *c, const struct hop *h, int64_t **ids, size_t *n, size_t *cap)
{
	if (!h->into_node) {
		sqlite3_bind_int64(c->threads, 1, h->dst_tid);
		return node_ids(c, c->threads, ids, n, cap);
	}
	sqlite3_bind_text(c->objs, 1, h->obj_type, -1, SQLITE_STATIC);
	sqlite3_bind_int64(c->objs, 2, h->obj_key);
	if (c->t->has_pid)
		sqlite3_bind_text(c->objs, 3, c->t->pid_scope, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(c->objs, 3);
	return node_ids(c, c->objs, ids, n, cap);
}

/*
 * The EFFECT edges into DST_TID's thread in [C0, C1] (into the OBJ_TYPE
 * node of OBJ_KEY for a direct hop into a goroutine or a request): calls
 * fn for each with a src, and notes an orphan effect (src NULL).
 */
typedef int (*into_fn)(struct scorer *s, size_t i, int64_t edge, const struct node *src,
		       int64_t dst, int64_t ts, int observed);

static int edges_into(struct scorer *s, size_t i, into_fn fn)
{
	const struct hop *h = &s->c.t->hops[i];
	sqlite3_stmt *st = s->c.into;
	size_t n;

	if (dst_nodes(&s->c, h, &s->tids, &n, &s->captids))
		return -1;
	for (size_t g = 0; g < n; g++) {
		int64_t tid_node = s->tids[g];
		struct node tn, sn;

		if (!node_get(&s->c, tid_node, &tn))
			continue;
		sqlite3_bind_int64(st, 1, tid_node);
		sqlite3_bind_text(st, 2, h->effect, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, h->c0);
		sqlite3_bind_int64(st, 4, h->c1);
		while (step_row(&s->c, st)) {
			int64_t e = sqlite3_column_int64(st, 0), ts = sqlite3_column_int64(st, 2);
			int has_src, obs = is_observed(st, 3);
			int64_t src = col_i64(st, 1, &has_src);

			if (!alive(&tn, ts))
				continue;
			if (!has_src) {
				s->hs[i].orphan = 1;
				continue;
			}
			if (!node_get(&s->c, src, &sn))
				continue;
			if (fn(s, i, e, &sn, tid_node, ts, obs)) {
				sqlite3_reset(st);
				return -1;
			}
		}
		sqlite3_reset(st);
	}
	return s->c.failed ? -1 : 0;
}

/* RULE direct: every edge is a claim; correct when its src is in context. */
static int direct_edge(struct scorer *s, size_t i, int64_t e, const struct node *src, int64_t dst,
		       int64_t ts, int observed)
{
	const struct hop *h = &s->c.t->hops[i];
	int cx = in_context(s->c.t, src, h, ts);
	int correct = cx == CTX_IN && !(h->flags & F_CANCELLED);

	(void)dst;
	if (correct)
		found(s, i, observed);
	return push(s, e * 2, i, 1, correct, !correct && cx == CTX_GEN);
}

/* RULE object, step 1: N(h), the latest matching cause edge in [A0, A1]. */
/* Bind @h's object key to parameter @ikey and its name to @iname, each
 * NULL where the truth gives none. */
static void bind_obj(sqlite3_stmt *st, int ikey, int iname, const struct hop *h)
{
	if (h->has_key)
		sqlite3_bind_int64(st, ikey, h->obj_key);
	else
		sqlite3_bind_null(st, ikey);
	if (h->obj_name)
		sqlite3_bind_text(st, iname, h->obj_name, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, iname);
}

static int find_cause(struct scorer *s, size_t i)
{
	const struct hop *h = &s->c.t->hops[i];
	struct hstate *hs = &s->hs[i];
	sqlite3_stmt *st = s->c.cause;

	sqlite3_bind_text(st, 1, h->cause, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, h->a0);
	sqlite3_bind_int64(st, 3, h->a1);
	sqlite3_bind_text(st, 4, h->obj_type, -1, SQLITE_STATIC);
	bind_obj(st, 5, 6, h);
	while (step_row(&s->c, st)) {
		int64_t ts = sqlite3_column_int64(st, 1), src = sqlite3_column_int64(st, 3);
		int64_t dst = sqlite3_column_int64(st, 4);
		struct node sn, dn;

		if (!node_get(&s->c, src, &sn) || in_context(s->c.t, &sn, h, ts) != CTX_IN)
			continue;
		if (!node_get(&s->c, dst, &dn))
			continue;
		hs->n = dst;
		hs->n_key = dn.key;
		snprintf(hs->n_scope, sizeof(hs->n_scope), "%s", dn.scope);
		hs->cause_observed = is_observed(st, 2);
		break;
	}
	sqlite3_reset(st);
	return s->c.failed ? -1 : 0;
}

/*
 * RULE object, in hop i's effect window: an EFFECT edge from N(h) is a
 * correct claim; one from another node of N(h)'s type, key and scope is a
 * claim across reuse (rule 2), wrong. Without N(h), one from a node with
 * OBJ_KEY is wrong across reuse if it is a claim at all (the src is some
 * other hop's N).
 */
static int object_edge(struct scorer *s, size_t i, int64_t e, const struct node *src, int64_t dst,
		       int64_t ts, int observed)
{
	const struct hop *h = &s->c.t->hops[i];
	struct hstate *hs = &s->hs[i];

	(void)dst;
	(void)ts;
	if (!is_type(src, h->obj_type))
		return 0;
	if (hs->n && src->id == hs->n) {
		int correct = !(h->flags & F_CANCELLED);

		if (correct)
			found(s, i, observed && hs->cause_observed);
		return push(s, e * 2, i, 1, correct, 0);
	}
	if (!src->start_seen) {
		/* An orphan: its effect counts toward the orphan rate. If
		 * it is the hop's object (OBJ_KEY, and a task or request of
		 * the workload: an io_request's ring is not in the truth),
		 * the edge is still true to this hop (that object, of an
		 * unseen birth, had this effect here), though another hop
		 * may have the orphan as its cause (a task woken after its
		 * unseen spawn) and judge it by another window. Correct,
		 * but no recall: the cause is missing. */
		if (h->has_key && src->key == h->obj_key && in_scope(s->c.t, src))
			return push(s, e * 2, i, 1, !(h->flags & F_CANCELLED), 0);
		return 0;
	}
	if (hs->n) {
		if (src->key == hs->n_key && !strcmp(src->scope, hs->n_scope))
			return push(s, e * 2, i, 1, 0, 1);
	} else if (h->has_key && src->key == h->obj_key) {
		return push(s, e * 2, i, 0, 0, 1);
	}
	return 0;
}

static int object_window(struct scorer *s, size_t i)
{
	const struct hop *h = &s->c.t->hops[i];
	sqlite3_stmt *st = s->c.effwin;

	if (!h->has_c || !h->effect[0])
		return 0;
	if (h->has_dst)
		return edges_into(s, i, object_edge);
	sqlite3_bind_text(st, 1, h->effect, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, h->c0);
	sqlite3_bind_int64(st, 3, h->c1);
	while (step_row(&s->c, st)) {
		int64_t e = sqlite3_column_int64(st, 0), src = sqlite3_column_int64(st, 1);
		int64_t dst = sqlite3_column_int64(st, 2), ts = sqlite3_column_int64(st, 3);
		struct node sn;

		if (node_get(&s->c, src, &sn) && object_edge(s, i, e, &sn, dst, ts, is_observed(st, 4))) {
			sqlite3_reset(st);
			return -1;
		}
	}
	sqlite3_reset(st);
	return s->c.failed ? -1 : 0;
}

/* An orphan node of OBJ_TYPE (OBJ_KEY, OBJ_NAME where given) first seen in [C0, C1]. */
static int object_orphan(struct scorer *s, size_t i)
{
	const struct hop *h = &s->c.t->hops[i];
	sqlite3_stmt *st = s->c.orph;
	int hit;

	if (!h->has_c)
		return 0;
	sqlite3_bind_text(st, 1, h->obj_type, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, h->c0);
	sqlite3_bind_int64(st, 3, h->c1);
	bind_obj(st, 4, 5, h);
	hit = step_row(&s->c, st);
	sqlite3_reset(st);
	if (hit)
		s->hs[i].orphan = 1;
	return s->c.failed ? -1 : 0;
}

/* RULE object, rule 2's first half: every EFFECT edge from some N(h) is a
 * claim, whatever its ts and dst. One pass per distinct N. */
static int cmp_by_n(const void *a, const void *b, void *arg)
{
	const struct hstate *hs = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (hs[x].n != hs[y].n)
		return hs[x].n < hs[y].n ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int object_claims_from_n(struct scorer *s)
{
	const struct truth *t = s->c.t;
	uint32_t *idx = malloc((t->nhops ? t->nhops : 1) * sizeof(*idx));
	size_t n = 0, a, b;
	sqlite3_stmt *st = s->c.from;

	if (!idx) {
		fprintf(stderr, "causeway-eval: out of memory\n");
		return -1;
	}
	for (size_t i = 0; i < t->nhops; i++)
		if (t->hops[i].rule == RULE_OBJECT && s->hs[i].n && t->hops[i].effect[0])
			idx[n++] = (uint32_t)i;
	if (n)
		qsort_r(idx, n, sizeof(*idx), cmp_by_n, s->hs);
	for (a = 0; a < n; a = b) {
		int64_t node = s->hs[idx[a]].n;

		for (b = a; b < n && s->hs[idx[b]].n == node; b++)
			;
		sqlite3_bind_int64(st, 1, node);
		while (step_row(&s->c, st)) {
			int64_t e = sqlite3_column_int64(st, 0);
			const char *type = (const char *)sqlite3_column_text(st, 1);

			/* The first hop of this N with this EFFECT. */
			for (size_t k = a; k < b; k++)
				if (type && !strcmp(t->hops[idx[k]].effect, type)) {
					if (push(s, e * 2, idx[k], 1, 0, 0)) {
						sqlite3_reset(st);
						free(idx);
						return -1;
					}
					break;
				}
		}
		sqlite3_reset(st);
	}
	free(idx);
	return s->c.failed ? -1 : 0;
}

/* RULE wait: the waiter ran on DST_TID at the wait's start: DST_TID's
 * thread, a request it began, or a task whose last resume went to it. */
static int waiter_on(struct ctx *c, const struct node *w, int64_t tid, int64_t ts)
{
	int64_t id = w->id;
	int ok = 0;

	if (!alive(w, ts))
		return 0;
	if (is_type(w, "thread"))
		return w->key == tid;
	if (!in_scope(c->t, w))
		return 0;
	if (is_type(w, "request"))
		return w->has_tid && w->tid == tid;
	if (!is_type(w, "runtime_task"))
		return 0;
	sqlite3_bind_int64(c->resume, 1, id);
	sqlite3_bind_int64(c->resume, 2, ts);
	if (step_row(c, c->resume)) {
		int64_t d = sqlite3_column_int64(c->resume, 0);
		struct node dn;

		sqlite3_reset(c->resume);
		ok = node_get(c, d, &dn) && is_type(&dn, "thread") && dn.key == tid && alive(&dn, ts);
	}
	sqlite3_reset(c->resume);
	return ok;
}

static int wait_hop(struct scorer *s, size_t i)
{
	const struct hop *h = &s->c.t->hops[i];
	int64_t end = h->has_c ? h->c1 : h->a1;
	sqlite3_stmt *st = h->obj_name && h->has_key ? s->c.waits_key : s->c.waits_any;

	if (!h->has_dst)
		return 0;
	bind_obj(st, 2, 1, h);
	sqlite3_bind_int64(st, 3, h->a0);
	sqlite3_bind_int64(st, 4, end);
	while (step_row(&s->c, st)) {
		int64_t row = sqlite3_column_int64(st, 0), start = sqlite3_column_int64(st, 1);
		int has_end, has_waker, cx, correct;
		int64_t wend = col_i64(st, 2, &has_end), waker = col_i64(st, 4, &has_waker);
		int has_wts;
		int64_t wts = col_i64(st, 7, &has_wts);
		struct node w, k;
		int observed = is_observed(st, 5) &&
			       (sqlite3_column_type(st, 6) == SQLITE_NULL || is_observed(st, 6));

		if (!node_get(&s->c, sqlite3_column_int64(st, 3), &w) ||
		    !waiter_on(&s->c, &w, h->dst_tid, start))
			continue;
		if (!has_waker) {
			s->hs[i].orphan = 1;
			continue;
		}
		if (!node_get(&s->c, waker, &k))
			continue;
		/* the waker is what ran in its context at its wake */
		cx = in_context(s->c.t, &k, h, has_wts ? wts : has_end ? wend : start);
		correct = cx == CTX_IN && !(h->flags & F_CANCELLED);
		if (correct)
			found(s, i, observed);
		if (push(s, row * 2 + 1, i, 1, correct, !correct && cx == CTX_GEN)) {
			sqlite3_reset(st);
			return -1;
		}
	}
	sqlite3_reset(st);
	return s->c.failed ? -1 : 0;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct crec *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->hop < y->hop ? -1 : x->hop > y->hop;
}

/* Each claim counted once, under the MECH of the hop it is correct for,
 * else wrong across reuse for, else the first hop that claims it. */
FILE *eval_wrong_out;

static void resolve(struct scorer *s, struct system_score *out)
{
	const struct truth *t = s->c.t;
	size_t a, b;

	if (s->nrecs)
		qsort(s->recs, s->nrecs, sizeof(*s->recs), cmp_rec);
	for (a = 0; a < s->nrecs; a = b) {
		int claim = 0, correct = 0, fj = 0;
		long owner_c = -1, owner_f = -1, owner = -1;
		struct mstat *m;

		for (b = a; b < s->nrecs && s->recs[b].key == s->recs[a].key; b++) {
			const struct crec *r = &s->recs[b];

			claim |= r->claim;
			if (r->correct && owner_c < 0)
				owner_c = r->hop;
			if (r->fj && owner_f < 0)
				owner_f = r->hop;
			if (r->claim && owner < 0)
				owner = r->hop;
			correct |= r->correct;
			fj |= r->fj;
		}
		if (!claim)
			continue;
		fj = !correct && fj;
		owner = correct ? owner_c : fj ? owner_f : owner;
		m = &out->m[t->hops[owner].mech];
		if (!correct && eval_wrong_out) {
			/* One line, its fields separated by tabs: the MECH is
			 * escaped like all it prints, though eval_truth.c admits
			 * only [a-z0-9_]. */
			fprintf(eval_wrong_out, "hop %" PRIu64 "\t", t->hops[owner].hid);
			cw_esc_fput(eval_wrong_out, t->mechs[t->hops[owner].mech]);
			fprintf(eval_wrong_out, "\t%s %" PRId64 "\t%s\n",
				s->recs[a].key & 1 ? "resource_waits" : "edge", s->recs[a].key / 2,
				fj ? "false join across reuse" : "wrong");
		}
		m->claims++;
		m->correct += correct;
		m->false_joins += fj;
	}
}

static int name_push(struct system_score *out, size_t *cap, int64_t key, size_t hop)
{
	if (out->nnames == *cap) {
		size_t ncap = *cap ? *cap * 2 : 1024;
		struct hop_name *p = realloc(out->names, ncap * sizeof(*p));

		if (!p) {
			fprintf(stderr, "causeway-eval: out of memory\n");
			return -1;
		}
		out->names = p;
		*cap = ncap;
	}
	out->names[out->nnames++] = (struct hop_name){ key, hop };
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	const struct hop_name *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->hop > y->hop) - (x->hop < y->hop);
}

/*
 * What names each hop (struct hop_name): the edges that are correct
 * claims for it (a resource_waits row by its wake edge) and its N(h).
 * Cancelled hops have no correct claim and are named by nothing.
 */
static int collect_names(struct scorer *s, struct system_score *out)
{
	const struct truth *t = s->c.t;
	sqlite3_stmt *wake = NULL;
	size_t cap = 0;
	int rc = -1;

	if (edb_prepare(s->c.db, "SELECT wake_edge FROM resource_waits WHERE id = ?", &wake))
		return -1;
	for (size_t i = 0; i < s->nrecs; i++) {
		const struct crec *r = &s->recs[i];
		int64_t key = r->key;

		if (!r->correct)
			continue;
		if (key & 1) {
			sqlite3_bind_int64(wake, 1, key / 2);
			key = step_row(&s->c, wake) && sqlite3_column_type(wake, 0) != SQLITE_NULL
				      ? sqlite3_column_int64(wake, 0) * 2
				      : 0;
			sqlite3_reset(wake);
			if (s->c.failed)
				goto out;
		}
		if (key && name_push(out, &cap, key, r->hop))
			goto out;
	}
	for (size_t i = 0; i < t->nhops; i++)
		if (s->hs[i].n && !(t->hops[i].flags & F_CANCELLED) &&
		    name_push(out, &cap, s->hs[i].n * 2 + 1, i))
			goto out;
	if (out->nnames)
		qsort(out->names, out->nnames, sizeof(*out->names), cmp_name);
	rc = 0;
out:
	sqlite3_finalize(wake);
	return rc;
}

int score_edges(struct edb *db, const struct truth *t, struct system_score *out)
{
	struct scorer s;
	struct ctx *c = &s.c;
	double t0 = now_seconds();
	int rc = -1;

	memset(&s, 0, sizeof(s));
	c->db = db;
	c->t = t;
	out->m = calloc(t->nmechs + 1, sizeof(*out->m));
	c->cache = calloc(NCACHE, sizeof(*c->cache));
	s.hs = calloc(t->nhops ? t->nhops : 1, sizeof(*s.hs));
	if (!out->m || !c->cache || !s.hs) {
		fprintf(stderr, "causeway-eval: out of memory\n");
		goto out;
	}
	if (edb_prepare(db, "SELECT type, scope, key, start_ns, end_ns, start_seen, tid, pid FROM nodes"
			    " WHERE id = ?", &c->node) ||
	    edb_prepare(db, "SELECT id FROM nodes WHERE type = 'thread' AND key = ?", &c->threads) ||
	    edb_prepare(db, "SELECT id FROM nodes WHERE type = ?1 AND key = ?2"
			    " AND (?3 IS NULL OR scope = ?3)", &c->objs) ||
	    edb_prepare(db, "SELECT id, src, ts, confidence FROM edges"
			    " WHERE dst = ?1 AND type = ?2 AND ts BETWEEN ?3 AND ?4", &c->into) ||
	    edb_prepare(db, "SELECT c.id, c.ts, c.conf, c.src, c.dst FROM cw_cause c"
			    " JOIN nodes d ON d.id = c.dst"
			    " WHERE c.type = ?1 AND c.ts BETWEEN ?2 AND ?3 AND d.type = ?4"
			    " AND (?5 IS NULL OR d.key = ?5) AND (?6 IS NULL OR d.name = ?6)"
			    " ORDER BY c.ts DESC, c.id DESC", &c->cause) ||
	    edb_prepare(db, "SELECT id, type FROM cw_eff WHERE src = ?", &c->from) ||
	    edb_prepare(db, "SELECT id, src, dst, ts, conf FROM cw_eff"
			    " WHERE type = ?1 AND ts BETWEEN ?2 AND ?3", &c->effwin) ||
	    edb_prepare(db, "SELECT 1 FROM cw_orph WHERE type = ?1 AND t BETWEEN ?2 AND ?3"
			    " AND (?4 IS NULL OR key = ?4) AND (?5 IS NULL OR name = ?5) LIMIT 1",
			&c->orph) ||
	    edb_prepare(db, "SELECT id, start_ns, end_ns, waiter, waker, conf, wconf, wts FROM cw_waits"
			    " WHERE rname = ?1 AND rkey = ?2 AND start_ns BETWEEN ?3 AND ?4",
			&c->waits_key) ||
	    edb_prepare(db, "SELECT id, start_ns, end_ns, waiter, waker, conf, wconf, wts FROM cw_waits"
			    " WHERE start_ns BETWEEN ?3 AND ?4 AND (?1 IS NULL OR rname = ?1)"
			    " AND (?2 IS NULL OR rkey = ?2)", &c->waits_any) ||
	    edb_prepare(db, "SELECT dst FROM edges WHERE src = ? AND type = 'resume' AND ts <= ?"
			    " ORDER BY ts DESC, id DESC LIMIT 1", &c->resume))
		goto out;

	for (size_t i = 0; i < t->nhops; i++) {
		const struct hop *h = &t->hops[i];
		int r = 0;

		switch (h->rule) {
		case RULE_DIRECT:
			if (h->has_c && (h->has_dst || h->into_node) && h->effect[0])
				r = edges_into(&s, i, direct_edge);
			break;
		case RULE_OBJECT:
			r = find_cause(&s, i);
			break;
		case RULE_WAIT:
			r = wait_hop(&s, i);
			break;
		}
		if (r)
			goto out;
	}
	for (size_t i = 0; i < t->nhops; i++)
		if (t->hops[i].rule == RULE_OBJECT && object_window(&s, i))
			goto out;
	if (object_claims_from_n(&s))
		goto out;
	for (size_t i = 0; i < t->nhops; i++)
		if (t->hops[i].rule == RULE_OBJECT && !s.hs[i].correct && !s.hs[i].orphan &&
		    object_orphan(&s, i))
			goto out;
	resolve(&s, out);
	if (collect_names(&s, out))
		goto out;
	for (size_t i = 0; i < t->nhops; i++) {
		const struct hstate *hs = &s.hs[i];
		struct mstat *m = &out->m[t->hops[i].mech];

		if (t->hops[i].flags & F_CANCELLED) {
			m->cancelled++;
			continue;
		}
		m->hops++;
		if (hs->correct) {
			m->recalled++;
			if (hs->observed)
				m->observed++;
			else
				m->reconstructed++;
		} else if (hs->orphan) {
			m->orphans++;
		}
	}
	for (size_t k = 0; k < t->nmechs; k++) {
		struct mstat *m = &out->m[k], *all = &out->m[t->nmechs];

		all->hops += m->hops;
		all->cancelled += m->cancelled;
		all->claims += m->claims;
		all->correct += m->correct;
		all->false_joins += m->false_joins;
		all->recalled += m->recalled;
		all->orphans += m->orphans;
		all->observed += m->observed;
		all->reconstructed += m->reconstructed;
	}
	rc = 0;
out:
	sqlite3_finalize(c->node);
	sqlite3_finalize(c->threads);
	sqlite3_finalize(c->objs);
	sqlite3_finalize(c->into);
	sqlite3_finalize(c->cause);
	sqlite3_finalize(c->from);
	sqlite3_finalize(c->effwin);
	sqlite3_finalize(c->orph);
	sqlite3_finalize(c->waits_key);
	sqlite3_finalize(c->waits_any);
	sqlite3_finalize(c->resume);
	free(c->cache);
	free(s.hs);
	free(s.recs);
	free(s.tids);
	out->seconds = now_seconds() - t0;
	return rc;
}
