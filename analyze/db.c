// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "db.h"
#include "tables_sql.h"
#include "lib/hash.h"
#include "lib/htab.h"
#include "../schema/names.h"

#define INDEX_MARKER "-- @@INDEXES@@"

enum { ST_EXEC, ST_BREAK, ST_DIAG, ST_META, ST_FRAME, ST_STACK, ST_STACK_FRAME, ST_WAIT, ST_BLOCK,
       ST_BLOCK_KIND, ST_ATTR_REASON, ST_ATTR_REASON_FIND, ST_EDGE_REASON,
       ST_EDGE_REASON_FIND, ST_SCOPE, ST_SCOPE_FIND, ST_NAME, ST_QUIET, ST_N };

static const char *const stmt_sql[ST_N] = {
	[ST_EXEC] = "INSERT INTO execs(node,ts,comm,filename) VALUES(?,?,?,?)",
	[ST_BREAK] = "INSERT INTO coverage_breaks(start_ns,end_ns,cpu,stream,lost_events,reason,"
		     "class) VALUES(?,?,?,?,?,?,?)",
	[ST_DIAG] = "INSERT INTO diagnostics(level,message) VALUES(?,?)",
	[ST_META] = "INSERT OR REPLACE INTO meta(key,value) VALUES(?,?)",
	[ST_FRAME] = "INSERT INTO frames(id,address,kernel,module,build_id,function,file,line,"
		     "inlined) VALUES(?,?,?,?,?,?,?,?,?)",
	[ST_STACK] = "INSERT INTO stacks(id,depth) VALUES(?,?)",
	[ST_STACK_FRAME] = "INSERT INTO stack_frames(stack,position,frame) VALUES(?,?,?)",
	[ST_WAIT] = "INSERT INTO resource_waits(resource,waiter,start_ns,end_ns,wake_edge,waker,"
		    "confidence,reason) VALUES(?,?,?,?,?,?,?,?)",
	[ST_BLOCK] = "INSERT INTO block_rows(node,kind,sector,bytes,issue_rel) VALUES(?,?,?,?,?)",
	[ST_BLOCK_KIND] = "INSERT INTO block_kinds(id,dev,op,flags) VALUES(?,?,?,?)",
	[ST_ATTR_REASON] = "INSERT INTO attribution_reasons(id,reason) VALUES(?,?)",
	[ST_ATTR_REASON_FIND] = "SELECT id FROM attribution_reasons WHERE reason = ?",
	[ST_EDGE_REASON] = "INSERT INTO edge_reasons(id,reason) VALUES(?,?)",
	[ST_EDGE_REASON_FIND] = "SELECT id FROM edge_reasons WHERE reason = ?",
	[ST_SCOPE] = "INSERT INTO node_scopes(id,scope) VALUES(?,?)",
	[ST_SCOPE_FIND] = "SELECT id FROM node_scopes WHERE scope = ?",
	[ST_NAME] = "INSERT INTO node_names(id,name) VALUES(?,?)",
	[ST_QUIET] = "INSERT INTO quiet_objects(type,name,pid,objects) VALUES(?,?,?,?)",
};

/*
 * The row tables behind the views nodes, edges and samples
 * (schema/tables.sql says why they are coded), in their column order.
 * Their rows go in BATCH at a time, one INSERT of BATCH rows: a
 * statement's step, reset and cursor cost more than a row of these
 * (about 5,200 instructions a row one at a time, 3,400 in statements of
 * 32: bench/README.md). The values wait in cells until the batch is
 * full; what is left at the end, or before the tables are read, goes in
 * one row at a time.
 */
enum { R_NODE, R_EDGE, R_SAMPLE, R_N };

/* node_rows' columns, as the statement names them and a held row
 * (below) keeps them. */
#define NODE_COLS 12

static const struct {
	const char *head;
	int ncols;
} rows_sql[R_N] = {
	[R_NODE] = { "INSERT INTO node_rows(id,type,key,scope,generation,start_seen,start_ns,end_rel,"
		     "pid,tid,name,traced) VALUES", NODE_COLS },
	[R_EDGE] = { "INSERT INTO edge_rows(id,code,dst,ts,src,cpu,reason,interrupted_tid,addr,"
		     "carried_by) VALUES", 10 },
	[R_SAMPLE] = { "INSERT INTO sample_rows(thread,ts,kind,weight,weight_exact,"
		       "inclusion_probability,attr_confidence,attr_reason,cpu,wake,stack_keep,stack,"
		       "node,request,task,waker_request,carry_edge) VALUES", 17 },
};

/* edge_rows.code (schema/tables.sql): an edge's type, confidence and
 * source, which the edges view spells out. */
#define EDGE_CODE(type, conf, source) \
	((int64_t)(type) + 16 * ((int64_t)(conf) + 3 * (int64_t)(source)))
_Static_assert(CW_EDGE_NTYPES <= 16 && CW_CONF_N <= 3 && CW_SRC_INFERRED == 3,
	       "edge_rows.code and the edges view hold 16 types, 3 confidences, 4 sources");

/* An edge's columns as edge_of() reads them. */
#define EDGE_COLS "id, code % 16, src, dst, ts, code / 16 % 3"

#define BATCH 32
#define ROW_COLS_MAX 17

struct cell {
	union {
		int64_t i;
		double d;
	} v;
	enum { C_NULL, C_INT, C_REAL } t;
};

struct rows {
	sqlite3_stmt *one, *many;
	int ncols, n;
	struct cell c[BATCH * ROW_COLS_MAX];
	/* What each statement's parameters hold now: a reset keeps them,
	 * so a cell equal to its parameter's value (a column NULL in most
	 * rows, a code most rows share) is not bound again. */
	struct cell bound_one[ROW_COLS_MAX], bound_many[BATCH * ROW_COLS_MAX];
};

/*
 * A table of texts each written once, named by id in the rows
 * (schema/tables.sql): attribution_reasons, edge_reasons, node_scopes,
 * node_names. What the writer remembers of one is a dict: text -> id, of
 * at most TEXTS_MAX entries and TEXTS_MAX_BYTES, emptied when full. The
 * reasons come from a finite set (fixed strings, and attribution chains
 * of at most CW_CARRY_PATH edge types) that never fills it; scopes and
 * names come from the trace (ring scopes, flows, request names), without
 * bound. A dict with a find statement never writes a text twice: one it
 * no longer holds is looked up in its table (by the table's UNIQUE
 * index) before it is written, so that one scope has one id, which the
 * unique identity (type, scope, key, generation) and the numbering of
 * generations rely on. Names have no index to look them up by (most of
 * a name table's bytes would be in it, for names that are mostly seen
 * once): a name the dict has forgotten is written again, under a new id.
 */
struct dict_entry {
	struct cw_hnode hn;
	uint64_t hash, id;
	char text[];
};

/* Texts at static addresses (the reasons the join writes), by address:
 * one such text is one text for the whole run, and one id in a dict with
 * a find statement, remembered or not. Most rows have a reason, and most
 * share a few: this spares hashing it every time. */
#define STATIC_SLOTS 64

struct dict {
	struct cw_htab h;
	sqlite3_stmt *add, *find; /* find NULL: a text may be written again */
	uint64_t next_id;
	size_t bytes;
	struct {
		const char *text;
		uint64_t id;
	} by_addr[STATIC_SLOTS];
};

/*
 * block_kinds (schema/tables.sql): the last BLOCK_KINDS kinds written, by
 * their texts. A workload has few (its disks' operations, each with a few
 * sets of flags); one that is not among them is written again, under a
 * new id.
 */
#define BLOCK_KINDS 16

struct block_kind {
	uint64_t id;
	char op[16];
	char dev[sizeof(((struct cw_block_row *)0)->dev)];
	char flags[sizeof(((struct cw_block_row *)0)->flags)];
};

/* Each dict's bounds: the frame and stack tables' (docs/model.md §4.2). */
#define TEXTS_MAX 65536
#define TEXTS_MAX_BYTES (16u << 20)

/*
 * Reading back (db.h: cw_db__index), prepared once the indexes exist so
 * that SQLite plans with them. Each is one seek in an index of the
 * schema: node_rows and edge_rows by id, edges_dst_ts (the earliest edge
 * into a node), edges_src (the edges from a node), samples_thread (a
 * thread's samples back in time), critical_rows' key.
 */
enum { RD_REQUESTS, RD_NODE, RD_EDGE, RD_FIRST_INTO, RD_INTO_FWD, RD_INTO_BACK, RD_FROM, RD_WAITS,
       RD_CRIT, RD_N };

static const char *const rd_sql[RD_N] = {
	[RD_REQUESTS] = "SELECT n.id, n.start_ns, n.start_ns + n.end_rel,"
			" (SELECT e.dst FROM edge_rows e WHERE e.src = n.id AND e.code % 16 = ?2"
			"   ORDER BY e.ts DESC, e.id DESC LIMIT 1)"
			" FROM node_rows n WHERE n.type = ?1 AND n.start_seen = 1"
			" AND n.start_ns IS NOT NULL AND n.end_rel IS NOT NULL ORDER BY n.id",
	[RD_NODE] = "SELECT type, start_seen, traced, start_ns FROM node_rows WHERE id = ?",
	[RD_EDGE] = "SELECT " EDGE_COLS " FROM edge_rows WHERE id = ?",
	[RD_FIRST_INTO] = "SELECT " EDGE_COLS " FROM edge_rows WHERE dst = ?"
			  " ORDER BY ts, id LIMIT 1",
	[RD_INTO_FWD] = "SELECT " EDGE_COLS " FROM edge_rows WHERE dst = ?1"
			" ORDER BY ts, id",
	[RD_INTO_BACK] = "SELECT " EDGE_COLS " FROM edge_rows"
			 " WHERE dst = ?1 AND ts <= ?2 ORDER BY ts DESC, id DESC",
	[RD_FROM] = "SELECT " EDGE_COLS " FROM edge_rows WHERE src = ?",
	[RD_WAITS] = "SELECT ts, kind, weight, weight_exact, wake FROM sample_rows"
		     " WHERE thread = ?1 AND ts < ?2 ORDER BY ts DESC",
	[RD_CRIT] = "INSERT INTO critical_rows(request,seq,node,kind,start_ns,end_rel,confidence,"
		    "edge,reason) VALUES(?,?,?,?,?,?,?,?,?)",
};

/*
 * Node rows wait in NODE_HOLD slots and go in by id. A node's id is
 * given at its birth, its row written when it ends: in the order nodes
 * end, which on a trace of long-lived requests is almost never the order
 * of their ids (17K of 1.6M rows appended on the join-heavy trace of
 * bench/analyze), so that each row went through a seek from the root of
 * node_rows into a page of its own, and the table's pages were read
 * back and written out again as SQLite's page cache turned over. Held
 * and sorted, rows of neighbouring ids share pages: 3.75 MiB, whatever
 * the trace, for 0.4 s of 12.2 s of CPU there on a quiet machine, up
 * to 1.5 s of 13 on a loaded one, whose other work evicts more of the
 * caches that random inserts miss (16384 rows bought half of that;
 * 65536 and 262144 no more, and more memory: 65536 took bench/analyze's
 * RSS ratio large/small from 1.16 to 1.19 of its 1.20).
 */
#define NODE_HOLD 32768

/* A node row held: its integers, and which columns are NULL (a node
 * row has no real). */
struct held_row {
	int64_t v[NODE_COLS];
	uint32_t nulls;
};
_Static_assert(NODE_COLS <= 32 && NODE_COLS <= ROW_COLS_MAX,
	       "a held row's NULL mask and a batch's cells hold a node row");

struct node_hold {
	struct held_row row[NODE_HOLD];
	struct {
		uint64_t id;
		uint32_t slot;
	} order[NODE_HOLD];
	uint32_t n;
};

struct cw_db {
	sqlite3 *h;
	struct node_hold *held;
	sqlite3_stmt *st[ST_N];
	sqlite3_stmt *rd[RD_N]; /* after cw_db__index */
	int indexed;
	uint64_t rows_written; /* nodes, edges and samples */
	uint64_t requests;     /* request nodes written */
	struct dict attr_reasons, edge_reasons, scopes, names;
	struct block_kind kinds[BLOCK_KINDS];
	uint64_t kinds_n; /* block_kinds rows written */
	struct rows rows[R_N];
	uint64_t edges_max; /* the largest edge id written */
	int failed;
};

static uint64_t dict_rehash(const struct cw_hnode *n)
{
	return cw_hentry(n, struct dict_entry, hn)->hash;
}

static void dict_free(struct dict *d)
{
	cw_htab__free_entries(&d->h, offsetof(struct dict_entry, hn));
	cw_htab__free(&d->h);
	d->bytes = 0;
}

static int step(struct cw_db *db, sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	if (rc != SQLITE_DONE) {
		if (!db->failed)
			fprintf(stderr, "causeway-analyze: error: database: %s\n", sqlite3_errmsg(db->h));
		db->failed = 1;
		return -EIO;
	}
	return 0;
}

static void bind_opt_i64(sqlite3_stmt *s, int i, int64_t v)
{
	if (v < 0)
		sqlite3_bind_null(s, i);
	else
		sqlite3_bind_int64(s, i, v);
}

/* An id, address or count where 0 means none (NULL). */
static void bind_id(sqlite3_stmt *s, int i, uint64_t v)
{
	if (v)
		sqlite3_bind_int64(s, i, (int64_t)v);
	else
		sqlite3_bind_null(s, i);
}

static void put_i64(struct cell *c, int64_t v)
{
	c->v.i = v;
	c->t = C_INT;
}

/* -1 (any negative): unknown (NULL) */
static void put_opt(struct cell *c, int64_t v)
{
	if (v < 0)
		c->t = C_NULL;
	else
		put_i64(c, v);
}

/* An id, address or count where 0 means none (NULL). */
static void put_id(struct cell *c, uint64_t v)
{
	if (v)
		put_i64(c, (int64_t)v);
	else
		c->t = C_NULL;
}

static void put_real(struct cell *c, double d)
{
	c->v.d = d;
	c->t = C_REAL;
}

/* Bind @c to @s's first @n parameters, which hold @bound, and remember
 * them there. A real is compared by its bits: bound as it was given. */
static void bind_cells(sqlite3_stmt *s, struct cell *bound, const struct cell *c, int n)
{
	for (int i = 0; i < n; i++) {
		if (c[i].t == bound[i].t && (c[i].t == C_NULL || c[i].v.i == bound[i].v.i))
			continue;
		if (c[i].t == C_INT)
			sqlite3_bind_int64(s, i + 1, c[i].v.i);
		else if (c[i].t == C_REAL)
			sqlite3_bind_double(s, i + 1, c[i].v.d);
		else
			sqlite3_bind_null(s, i + 1);
		bound[i] = c[i];
	}
}

/* Write the rows waiting in @r: a full batch in one statement, fewer one
 * at a time. */
static int rows_flush(struct cw_db *db, struct rows *r)
{
	int err = 0;

	if (r->n == BATCH) {
		bind_cells(r->many, r->bound_many, r->c, BATCH * r->ncols);
		err = step(db, r->many);
	} else {
		for (int i = 0; i < r->n && !err; i++) {
			bind_cells(r->one, r->bound_one, r->c + i * r->ncols, r->ncols);
			err = step(db, r->one);
		}
	}
	r->n = 0;
	return err;
}

/* The cells of @r's next row; row_done() when they are filled. */
static struct cell *row_next(struct rows *r)
{
	return r->c + r->n * r->ncols;
}

static int row_done(struct cw_db *db, struct rows *r)
{
	db->rows_written++;
	return ++r->n == BATCH ? rows_flush(db, r) : 0;
}

static int held_cmp(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Write the node rows held, by id. */
static int nodes_release(struct cw_db *db)
{
	struct node_hold *h = db->held;
	struct rows *r = &db->rows[R_NODE];
	int err = 0;

	qsort(h->order, h->n, sizeof(h->order[0]), held_cmp);
	for (uint32_t i = 0; i < h->n && !err; i++) {
		const struct held_row *hr = &h->row[h->order[i].slot];
		struct cell *c = row_next(r);

		for (int k = 0; k < NODE_COLS; k++) {
			c[k].v.i = hr->v[k];
			c[k].t = hr->nulls >> k & 1 ? C_NULL : C_INT;
		}
		err = row_done(db, r);
	}
	h->n = 0;
	return err;
}

static int rows_flush_all(struct cw_db *db)
{
	int err = nodes_release(db);

	for (int i = 0; i < R_N && !err; i++)
		err = rows_flush(db, &db->rows[i]);
	return err;
}

/* The statement of @n rows of @t. */
static sqlite3_stmt *rows_prepare(struct cw_db *db, int t, int n)
{
	size_t len = strlen(rows_sql[t].head) + (size_t)n * (2 + 2 * (size_t)rows_sql[t].ncols);
	char *sql = malloc(len + 1), *p = sql;
	sqlite3_stmt *s = NULL;

	if (!sql)
		return NULL;
	p += sprintf(p, "%s", rows_sql[t].head);
	for (int i = 0; i < n; i++) {
		*p++ = i ? ',' : ' ';
		*p++ = '(';
		for (int c = 0; c < rows_sql[t].ncols; c++)
			p += sprintf(p, c ? ",?" : "?");
		*p++ = ')';
	}
	*p = '\0';
	if (sqlite3_prepare_v2(db->h, sql, -1, &s, NULL) != SQLITE_OK)
		s = NULL;
	free(sql);
	return s;
}

/* A text where "" means none (NULL), as bind_text() writes it. */
static const char *opt_text(const char *t)
{
	return t && *t ? t : NULL;
}

static void bind_text(sqlite3_stmt *s, int i, const char *t)
{
	if ((t = opt_text(t)))
		sqlite3_bind_text(s, i, t, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

/*
 * The id of @text in @d's table, written there the first time; 0 with
 * *err on failure. NULL has no id (0, *err untouched): the row's column
 * is NULL.
 */
static uint64_t dict_id(struct cw_db *db, struct dict *d, const char *text, int *err)
{
	struct dict_entry *e;
	uint64_t h, id = 0;
	size_t len;

	if (!text)
		return 0;
	h = cw_hash_str(text);
	cw_htab_for_each_possible(&d->h, e, hn, h)
		if (e->hash == h && !strcmp(e->text, text))
			return e->id;
	len = strlen(text);
	if (d->h.n >= TEXTS_MAX || d->bytes + len > TEXTS_MAX_BYTES) {
		cw_htab__free_entries(&d->h, offsetof(struct dict_entry, hn));
		d->bytes = 0;
	}
	if (d->find) {
		int rc;

		sqlite3_bind_text(d->find, 1, text, (int)len, SQLITE_STATIC);
		rc = sqlite3_step(d->find);
		if (rc == SQLITE_ROW)
			id = (uint64_t)sqlite3_column_int64(d->find, 0);
		sqlite3_reset(d->find);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE && (*err = step(db, d->find)))
			return 0;
	}
	if (!id) {
		id = ++d->next_id;
		sqlite3_bind_int64(d->add, 1, (int64_t)id);
		sqlite3_bind_text(d->add, 2, text, (int)len, SQLITE_STATIC);
		if ((*err = step(db, d->add)))
			return 0;
	}
	if (d->h.n >= d->h.cap && (*err = cw_htab__grow(&d->h, 64, dict_rehash, 0)))
		return 0;
	if (!(e = malloc(sizeof(*e) + len + 1))) {
		*err = -ENOMEM;
		return 0;
	}
	e->hash = h;
	e->id = id;
	memcpy(e->text, text, len + 1);
	cw_htab__add(&d->h, &e->hn, h);
	d->bytes += sizeof(*e) + len + 1;
	return id;
}

/* dict_id() of @text at a static address, in a dict with a find. */
static uint64_t dict_id_static(struct cw_db *db, struct dict *d, const char *text, int *err)
{
	size_t slot = ((uintptr_t)text >> 3) % STATIC_SLOTS;

	if (!text)
		return 0;
	if (d->by_addr[slot].text != text) {
		uint64_t id = dict_id(db, d, text, err);

		if (!id)
			return 0;
		d->by_addr[slot].text = text;
		d->by_addr[slot].id = id;
	}
	return d->by_addr[slot].id;
}

/* @t as stored after its node's start (end_rel, issue_rel): the views add
 * the start back, 0 where it was not seen (@start -1). */
static int64_t after_start(int64_t t, int64_t start)
{
	return t - (start < 0 ? 0 : start);
}

/* The codes of the row tables are analyze/model.h's enums, which the views
 * spell out (schema/tables.sql). */
static int db_node(void *ctx, const struct cw_node *n)
{
	struct cw_db *db = ctx;
	struct node_hold *h = db->held;
	struct held_row *hr = &h->row[h->n];
	struct cell c[NODE_COLS];
	uint64_t scope, name;
	int err = 0;

	scope = dict_id(db, &db->scopes, n->scope, &err);
	name = err ? 0 : dict_id(db, &db->names, opt_text(n->long_name ? n->long_name : n->name),
				 &err);
	if (err)
		return err;
	put_i64(&c[0], (int64_t)n->id);
	put_i64(&c[1], n->type);
	put_i64(&c[2], (int64_t)n->key);
	put_id(&c[3], scope);
	put_i64(&c[4], n->generation);
	put_i64(&c[5], n->start_seen);
	put_opt(&c[6], n->start_ns);
	/* end_rel (schema/tables.sql), which may be below 0 */
	if (n->end_ns < 0)
		c[7].t = C_NULL;
	else
		put_i64(&c[7], after_start(n->end_ns, n->start_ns));
	put_opt(&c[8], n->pid);
	put_opt(&c[9], n->tid);
	put_id(&c[10], name);
	put_opt(&c[11], n->traced);
	db->requests += n->type == CW_NODE_REQUEST;
	hr->nulls = 0;
	for (int k = 0; k < NODE_COLS; k++) {
		hr->v[k] = c[k].t == C_NULL ? 0 : c[k].v.i;
		hr->nulls |= (uint32_t)(c[k].t == C_NULL) << k;
	}
	h->order[h->n].id = n->id;
	h->order[h->n].slot = h->n;
	return ++h->n == NODE_HOLD ? nodes_release(db) : 0;
}

static int db_edge(void *ctx, const struct cw_edge *e)
{
	struct cw_db *db = ctx;
	struct rows *r = &db->rows[R_EDGE];
	struct cell *c = row_next(r);
	uint64_t reason;
	int err = 0;

	reason = dict_id_static(db, &db->edge_reasons, opt_text(e->reason), &err);
	if (err)
		return err;
	/* The identity layer's id, so that a sample can name the edge; a
	 * sink user without ids (0) gets SQLite's next rowid. Ids come one
	 * after another, and the next one is NULL to SQLite, which appends
	 * it without the seek an explicit rowid costs (a fifth of the
	 * insert). */
	put_id(&c[0], e->id == db->edges_max + 1 ? 0 : e->id);
	db->edges_max = e->id > db->edges_max ? e->id : e->id ? db->edges_max : db->edges_max + 1;
	put_i64(&c[1], EDGE_CODE(e->type, e->confidence, e->source));
	put_i64(&c[2], (int64_t)e->dst);
	put_i64(&c[3], (int64_t)e->ts);
	put_id(&c[4], e->src);
	put_opt(&c[5], e->cpu);
	put_id(&c[6], reason);
	put_opt(&c[7], e->interrupted);
	put_id(&c[8], e->addr);
	put_id(&c[9], e->carried_by);
	return row_done(db, r);
}

static int db_frame(void *ctx, const struct cw_frame *f)
{
	struct cw_db *db = ctx;
	sqlite3_stmt *s = db->st[ST_FRAME];

	sqlite3_bind_int64(s, 1, (int64_t)f->id);
	sqlite3_bind_int64(s, 2, (int64_t)f->address);
	sqlite3_bind_int(s, 3, f->kernel);
	bind_text(s, 4, f->module);
	bind_text(s, 5, f->build_id);
	bind_text(s, 6, f->function);
	bind_text(s, 7, f->file);
	bind_id(s, 8, f->line > 0 ? (uint64_t)f->line : 0);
	sqlite3_bind_int(s, 9, f->inlined);
	return step(db, s);
}

static int db_stack(void *ctx, uint64_t id, const uint64_t *frames, uint32_t depth)
{
	struct cw_db *db = ctx;
	sqlite3_stmt *s = db->st[ST_STACK], *sf = db->st[ST_STACK_FRAME];
	int err;

	sqlite3_bind_int64(s, 1, (int64_t)id);
	sqlite3_bind_int64(s, 2, depth);
	err = step(db, s);
	for (uint32_t i = 0; i < depth && !err; i++) {
		sqlite3_bind_int64(sf, 1, (int64_t)id);
		sqlite3_bind_int64(sf, 2, i);
		sqlite3_bind_int64(sf, 3, (int64_t)frames[i]);
		err = step(db, sf);
	}
	return err;
}

/* A sample and its attribution, one row (schema/tables.sql). */
static int db_sample(void *ctx, const struct cw_sample_row *s)
{
	struct cw_db *db = ctx;
	struct rows *r = &db->rows[R_SAMPLE];
	struct cell *c = row_next(r);
	uint64_t reason;
	int err = 0;

	reason = s->attr_reason ? dict_id_static(db, &db->attr_reasons, s->attr_reason, &err)
				: dict_id(db, &db->attr_reasons, s->attr_chain[0] ? s->attr_chain : NULL,
					  &err);
	if (err)
		return err;
	put_i64(&c[0], (int64_t)s->thread);
	put_i64(&c[1], (int64_t)s->ts);
	put_i64(&c[2], s->kind);
	put_i64(&c[3], (int64_t)s->weight);
	put_i64(&c[4], s->weight_exact);
	put_real(&c[5], s->inclusion_probability);
	put_i64(&c[6], s->attr_confidence);
	put_id(&c[7], reason);
	put_opt(&c[8], s->cpu);
	put_id(&c[9], s->wake);
	/* stack_keep (schema/tables.sql): NULL when the view reads it back
	 * from inclusion_probability (exactly equal, not close); else the
	 * probability times 2^32, exact both ways (a power of two), which is
	 * the capture's keep: an integer, and SQLite keeps a REAL column's
	 * integral value as an integer, in 4 bytes where the REAL took 8. */
	if (s->stack_probability == s->inclusion_probability)
		c[10].t = C_NULL;
	else
		put_real(&c[10], s->stack_probability * 4294967296.0);
	put_id(&c[11], s->stack);
	put_id(&c[12], s->node != s->thread ? s->node : 0);
	put_id(&c[13], s->request);
	put_id(&c[14], s->task);
	put_id(&c[15], s->waker_request);
	put_id(&c[16], s->carry_edge);
	return row_done(db, r);
}

static int db_wait(void *ctx, const struct cw_wait_row *w)
{
	struct cw_db *db = ctx;
	sqlite3_stmt *s = db->st[ST_WAIT];

	sqlite3_bind_int64(s, 1, (int64_t)w->resource);
	sqlite3_bind_int64(s, 2, (int64_t)w->waiter);
	sqlite3_bind_int64(s, 3, (int64_t)w->start_ns);
	bind_opt_i64(s, 4, w->end_ns);
	bind_id(s, 5, w->wake_edge);
	bind_id(s, 6, w->waker);
	sqlite3_bind_text(s, 7, cw_confidence_names[w->confidence], -1, SQLITE_STATIC);
	bind_text(s, 8, w->reason);
	return step(db, s);
}

/* The id of @b's kind, its block_kinds row written if it is not one of
 * the kinds remembered; 0 with *err on failure. */
static uint64_t block_kind_id(struct cw_db *db, const struct cw_block_row *b, int *err)
{
	sqlite3_stmt *s = db->st[ST_BLOCK_KIND];
	struct block_kind *k;
	uint64_t id;

	for (size_t i = 0; i < BLOCK_KINDS; i++) {
		k = &db->kinds[i];
		if (k->id && !strcmp(k->op, b->op) && !strcmp(k->dev, b->dev) && !strcmp(k->flags, b->flags))
			return k->id;
	}
	id = ++db->kinds_n;
	sqlite3_bind_int64(s, 1, (int64_t)id);
	sqlite3_bind_text(s, 2, b->dev, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, b->op, -1, SQLITE_STATIC);
	bind_text(s, 4, b->flags);
	if ((*err = step(db, s)))
		return 0;
	/* An op too long for the copy (cls_block.c's are shorter) is
	 * written again each time. */
	if (strlen(b->op) < sizeof(k->op)) {
		k = &db->kinds[(id - 1) % BLOCK_KINDS];
		k->id = id;
		memcpy(k->op, b->op, strlen(b->op) + 1);
		memcpy(k->dev, b->dev, sizeof(k->dev));
		memcpy(k->flags, b->flags, sizeof(k->flags));
	}
	return id;
}

static int db_block(void *ctx, const struct cw_block_row *b)
{
	struct cw_db *db = ctx;
	sqlite3_stmt *s = db->st[ST_BLOCK];
	uint64_t kind;
	int err = 0;

	if (!(kind = block_kind_id(db, b, &err)))
		return err;
	sqlite3_bind_int64(s, 1, (int64_t)b->node);
	sqlite3_bind_int64(s, 2, (int64_t)kind);
	sqlite3_bind_int64(s, 3, (int64_t)b->sector);
	sqlite3_bind_int64(s, 4, (int64_t)b->bytes);
	/* issue_rel (schema/tables.sql) */
	sqlite3_bind_int64(s, 5, after_start((int64_t)b->issue_ns, b->start_ns));
	return step(db, s);
}

static int db_quiet(void *ctx, const struct cw_quiet_row *q)
{
	struct cw_db *db = ctx;
	sqlite3_stmt *s = db->st[ST_QUIET];

	sqlite3_bind_text(s, 1, cw_node_type_names[q->type], -1, SQLITE_STATIC);
	bind_text(s, 2, q->name);
	if (q->pid < 0)
		sqlite3_bind_null(s, 3);
	else
		sqlite3_bind_int64(s, 3, q->pid);
	sqlite3_bind_int64(s, 4, (int64_t)q->count);
	return step(db, s);
}

static int db_exec(void *ctx, uint64_t node, uint64_t ts, const char *comm, const char *filename)
{
	struct cw_db *db = ctx;
	sqlite3_stmt *s = db->st[ST_EXEC];

	sqlite3_bind_int64(s, 1, (int64_t)node);
	sqlite3_bind_int64(s, 2, (int64_t)ts);
	bind_text(s, 3, comm);
	bind_text(s, 4, filename);
	return step(db, s);
}

void cw_db__sink(struct cw_db *db, struct cw_sink *sink)
{
	sink->ctx = db;
	sink->node = db_node;
	sink->edge = db_edge;
	sink->exec = db_exec;
	sink->frame = db_frame;
	sink->stack = db_stack;
	sink->sample = db_sample;
	sink->wait = db_wait;
	sink->block = db_block;
	sink->quiet = db_quiet;
}

int cw_db__break(struct cw_db *db, const struct cw_break *br)
{
	sqlite3_stmt *s = db->st[ST_BREAK];

	sqlite3_bind_int64(s, 1, (int64_t)br->start_ns);
	bind_opt_i64(s, 2, br->end_ns == CW_BREAK_OPEN ? -1 : (int64_t)br->end_ns);
	bind_opt_i64(s, 3, br->cpu);
	bind_text(s, 4, br->stream);
	bind_opt_i64(s, 5, br->lost);
	bind_text(s, 6, br->reason);
	bind_text(s, 7, br->class == CW_BREAK_NO_CLASS ?
				NULL :
				cw_name_of(cw_class_names, CW_CLASS_MAX, (unsigned)br->class));
	return step(db, s);
}

int cw_db__diag(struct cw_db *db, const char *level, const char *msg)
{
	sqlite3_stmt *s = db->st[ST_DIAG];

	sqlite3_bind_text(s, 1, level, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, msg, -1, SQLITE_TRANSIENT);
	return step(db, s);
}

int cw_db__meta(struct cw_db *db, const char *key, const char *value)
{
	sqlite3_stmt *s = db->st[ST_META];

	sqlite3_bind_text(s, 1, key, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 2, value, -1, SQLITE_TRANSIENT);
	return step(db, s);
}

int cw_db__meta_u64(struct cw_db *db, const char *key, uint64_t value)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, value);
	return cw_db__meta(db, key, buf);
}

static int exec_sql(struct cw_db *db, const char *sql, char *errbuf, size_t errlen)
{
	char *msg = NULL;

	if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(errbuf, errlen, "database: %s", msg ? msg : sqlite3_errmsg(db->h));
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

/* The edge_types table: schema/edges.def, for the views to walk. */
static int write_edge_types(struct cw_db *db, char *errbuf, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(db->h, "INSERT INTO edge_types(type,carries) VALUES(?,?)", -1,
				    &s, NULL);

	for (int t = 0; rc == SQLITE_OK && t < CW_EDGE_NTYPES; t++) {
		sqlite3_bind_text(s, 1, cw_edge_type_names[t], -1, SQLITE_STATIC);
		sqlite3_bind_int(s, 2, cw_edge_type_carries[t]);
		rc = sqlite3_step(s) == SQLITE_DONE ? sqlite3_reset(s) : SQLITE_ERROR;
	}
	if (rc != SQLITE_OK)
		snprintf(errbuf, errlen, "database: edge_types: %s", sqlite3_errmsg(db->h));
	sqlite3_finalize(s);
	return rc == SQLITE_OK ? 0 : -EIO;
}

struct cw_db *cw_db__create(const char *path, char *errbuf, size_t errlen)
{
	struct cw_db *db = calloc(1, sizeof(*db));
	const char *marker = strstr(cw_tables_sql, INDEX_MARKER);
	char *ddl = NULL;

	if (!db || !marker || !(db->held = malloc(sizeof(*db->held))))
		goto nomem;
	db->held->n = 0;
	/* One thread uses SQLite: no mutex around every call, which was 4%
	 * of the analyzer's instructions on a join-heavy trace, nor around
	 * its allocator and page cache, and no count of its allocations
	 * (another 2%). Only possible before SQLite's first use, which this
	 * is in the analyzer; later, the calls fail and change nothing. */
	sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	if (sqlite3_open_v2(path, &db->h,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		snprintf(errbuf, errlen, "cannot create %s: %s", path,
			 db->h ? sqlite3_errmsg(db->h) : "out of memory");
		goto fail;
	}
	ddl = strndup(cw_tables_sql, (size_t)(marker - cw_tables_sql));
	if (!ddl)
		goto nomem;
	/* The file is a temporary renamed into place at the end, so a crash
	 * loses nothing a journal would have saved. */
	if (exec_sql(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
			 " PRAGMA cache_size=-16384;", errbuf, errlen) ||
	    exec_sql(db, ddl, errbuf, errlen) ||
	    exec_sql(db, "BEGIN", errbuf, errlen))
		goto fail;
	for (int i = 0; i < ST_N; i++) {
		if (sqlite3_prepare_v2(db->h, stmt_sql[i], -1, &db->st[i], NULL) != SQLITE_OK) {
			snprintf(errbuf, errlen, "database: %s", sqlite3_errmsg(db->h));
			goto fail;
		}
	}
	for (int t = 0; t < R_N; t++) {
		db->rows[t].ncols = rows_sql[t].ncols;
		if (!(db->rows[t].one = rows_prepare(db, t, 1)) ||
		    !(db->rows[t].many = rows_prepare(db, t, BATCH))) {
			snprintf(errbuf, errlen, "database: %s", sqlite3_errmsg(db->h));
			goto fail;
		}
	}
	if (write_edge_types(db, errbuf, errlen))
		goto fail;
	db->attr_reasons = (struct dict){ .add = db->st[ST_ATTR_REASON],
					  .find = db->st[ST_ATTR_REASON_FIND] };
	db->edge_reasons = (struct dict){ .add = db->st[ST_EDGE_REASON],
					  .find = db->st[ST_EDGE_REASON_FIND] };
	db->scopes = (struct dict){ .add = db->st[ST_SCOPE], .find = db->st[ST_SCOPE_FIND] };
	db->names = (struct dict){ .add = db->st[ST_NAME] };
	free(ddl);
	return db;
nomem:
	snprintf(errbuf, errlen, "out of memory");
fail:
	free(ddl);
	cw_db__abort(db);
	errno = EIO;
	return NULL;
}

/*
 * node_rows.generation = row_number() OVER (PARTITION BY type, scope, key
 * ORDER BY id) - 1, writing only the rows that change (schema/tables.sql
 * says why it is done here): those whose number the join guessed wrong
 * (analyze/ident.c), few when it had room for the keys. The same as that UPDATE ... FROM, in one
 * sorted scan: a third of its time when nothing changes, four fifths when
 * every row does. Runs inside the load's transaction, before any index:
 * the sorter has read every row before the first update. Sorted by key
 * first: any order of the partition's columns makes the partitions runs,
 * and SQLite's sorter compares a leading integer without unpacking the
 * rest of the row. Type and scope are codes and ids: a partition is a run
 * of equal integers.
 */
/* A node whose generation changes, and the pairs of one round of
 * updates. */
struct gen_update {
	int64_t id, gen;
};

#define GEN_UPDATES 262144 /* 4 MiB */

static int gen_cmp(const void *a, const void *b)
{
	const struct gen_update *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/*
 * Write @n updates in id order. In the scan's order (by key) each update
 * lands on a page of its own: once the nodes outgrow SQLite's page cache
 * that is a page read and written back per update, which was a fifth of
 * the analyzer's time on a join-heavy trace; in id order the updates of
 * one page come together.
 */
static int gen_apply(sqlite3_stmt *u, struct gen_update *g, size_t n)
{
	qsort(g, n, sizeof(*g), gen_cmp);
	for (size_t i = 0; i < n; i++) {
		sqlite3_bind_int64(u, 1, g[i].gen);
		sqlite3_bind_int64(u, 2, g[i].id);
		if (sqlite3_step(u) != SQLITE_DONE)
			return -EIO;
		sqlite3_reset(u);
	}
	return 0;
}

static int number_generations(struct cw_db *db, char *errbuf, size_t errlen)
{
	sqlite3_stmt *q = NULL, *u = NULL;
	struct gen_update *g = malloc(GEN_UPDATES * sizeof(*g));
	int64_t key = 0, type = 0, scope = 0, gen = 0;
	int rc, first = 1, err = 0;
	size_t n = 0;

	if (!g) {
		snprintf(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	if (sqlite3_prepare_v2(db->h, "SELECT id, type, scope, key, generation FROM node_rows"
				      " ORDER BY key, type, scope, id", -1, &q, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->h, "UPDATE node_rows SET generation = ? WHERE id = ?", -1, &u,
			       NULL) != SQLITE_OK)
		goto fail;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t t = sqlite3_column_int64(q, 1), sc = sqlite3_column_int64(q, 2);
		int64_t k = sqlite3_column_int64(q, 3);

		if (!first && k == key && t == type && sc == scope) {
			gen++;
		} else {
			gen = 0;
			key = k;
			type = t;
			scope = sc;
			first = 0;
		}
		if (sqlite3_column_int64(q, 4) == gen)
			continue;
		g[n++] = (struct gen_update){ sqlite3_column_int64(q, 0), gen };
		if (n == GEN_UPDATES && gen_apply(u, g, n))
			goto fail;
		n %= GEN_UPDATES;
	}
	if (rc != SQLITE_DONE || gen_apply(u, g, n))
		goto fail;
	goto done;
fail:
	snprintf(errbuf, errlen, "database: numbering generations: %s", sqlite3_errmsg(db->h));
	err = -EIO;
done:
	sqlite3_finalize(q);
	sqlite3_finalize(u);
	free(g);
	return err;
}

static void finalize_all(struct cw_db *db)
{
	for (int i = 0; i < ST_N; i++)
		sqlite3_finalize(db->st[i]);
	for (int i = 0; i < RD_N; i++)
		sqlite3_finalize(db->rd[i]);
	for (int t = 0; t < R_N; t++) {
		sqlite3_finalize(db->rows[t].one);
		sqlite3_finalize(db->rows[t].many);
	}
}

static void free_db(struct cw_db *db)
{
	free(db->held);
	dict_free(&db->attr_reasons);
	dict_free(&db->edge_reasons);
	dict_free(&db->scopes);
	dict_free(&db->names);
	free(db);
}

int cw_db__index(struct cw_db *db, char *errbuf, size_t errlen)
{
	const char *marker = strstr(cw_tables_sql, INDEX_MARKER);
	int err;

	if (db->indexed)
		return 0;
	if (db->failed || rows_flush_all(db)) {
		snprintf(errbuf, errlen, "database: earlier write failed");
		return -EIO;
	}
	err = number_generations(db, errbuf, errlen);
	err = err ?: exec_sql(db, "COMMIT", errbuf, errlen);
	err = err ?: exec_sql(db, marker, errbuf, errlen);
	/* What is derived from the graph goes in one transaction of its own. */
	err = err ?: exec_sql(db, "BEGIN", errbuf, errlen);
	for (int i = 0; i < RD_N && !err; i++) {
		if (sqlite3_prepare_v2(db->h, rd_sql[i], -1, &db->rd[i], NULL) != SQLITE_OK) {
			snprintf(errbuf, errlen, "database: %s", sqlite3_errmsg(db->h));
			err = -EIO;
		}
	}
	db->indexed = !err;
	db->failed |= !!err;
	return err;
}

int cw_db__finish(struct cw_db *db, char *errbuf, size_t errlen)
{
	int err = cw_db__index(db, errbuf, errlen);

	if (!err && db->failed) {
		snprintf(errbuf, errlen, "database: earlier write failed");
		err = -EIO;
	}
	err = err ?: exec_sql(db, "COMMIT", errbuf, errlen);
	finalize_all(db);
	if (sqlite3_close(db->h) != SQLITE_OK && !err) {
		snprintf(errbuf, errlen, "database: close failed");
		err = -EIO;
	}
	free_db(db);
	return err;
}

uint64_t cw_db__rows(const struct cw_db *db)
{
	return db->rows_written;
}

/* A step of a reading statement: 1 a row, 0 done (reset), -EIO. */
static int rd_step(struct cw_db *db, sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);

	if (rc == SQLITE_ROW)
		return 1;
	sqlite3_reset(s);
	if (rc == SQLITE_DONE)
		return 0;
	if (!db->failed)
		fprintf(stderr, "causeway-analyze: error: database: %s\n", sqlite3_errmsg(db->h));
	db->failed = 1;
	return -EIO;
}

static uint64_t col_id(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? 0 : (uint64_t)sqlite3_column_int64(s, i);
}

int cw_db__requests(struct cw_db *db, int (*fn)(void *ctx, const struct cw_db_request *r),
		    void *ctx)
{
	sqlite3_stmt *s = db->rd[RD_REQUESTS];
	int rc;

	/* The query reads every node (there is no index by type): not when
	 * no request was written. */
	if (!db->requests)
		return 0;
	sqlite3_bind_int(s, 1, CW_NODE_REQUEST);
	sqlite3_bind_int(s, 2, CW_EDGE_END);
	while ((rc = rd_step(db, s)) == 1) {
		const struct cw_db_request r = {
			.id = (uint64_t)sqlite3_column_int64(s, 0),
			.start_ns = (uint64_t)sqlite3_column_int64(s, 1),
			.end_ns = (uint64_t)sqlite3_column_int64(s, 2),
			.thread = col_id(s, 3),
		};

		if ((rc = fn(ctx, &r))) {
			sqlite3_reset(s);
			return rc;
		}
	}
	return rc;
}

int cw_db__node(struct cw_db *db, uint64_t id, struct cw_db_node *n)
{
	sqlite3_stmt *s = db->rd[RD_NODE];
	int rc;

	sqlite3_bind_int64(s, 1, (int64_t)id);
	if ((rc = rd_step(db, s)) != 1)
		return rc;
	n->id = id;
	n->type = (uint8_t)sqlite3_column_int(s, 0);
	n->start_seen = (uint8_t)sqlite3_column_int(s, 1);
	n->traced = sqlite3_column_type(s, 2) == SQLITE_NULL ? -1 : (int8_t)sqlite3_column_int(s, 2);
	n->start_ns = sqlite3_column_type(s, 3) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 3);
	sqlite3_reset(s);
	return 1;
}

static void edge_of(sqlite3_stmt *s, struct cw_db_edge *e)
{
	e->id = (uint64_t)sqlite3_column_int64(s, 0);
	e->type = (uint8_t)sqlite3_column_int(s, 1);
	e->src = col_id(s, 2);
	e->dst = (uint64_t)sqlite3_column_int64(s, 3);
	e->ts = (uint64_t)sqlite3_column_int64(s, 4);
	e->confidence = (uint8_t)sqlite3_column_int(s, 5);
}

/* The first row of @s, with its one parameter @id, as an edge. */
static int one_edge(struct cw_db *db, sqlite3_stmt *s, uint64_t id, struct cw_db_edge *e)
{
	int rc;

	sqlite3_bind_int64(s, 1, (int64_t)id);
	if ((rc = rd_step(db, s)) != 1)
		return rc;
	edge_of(s, e);
	sqlite3_reset(s);
	return 1;
}

int cw_db__edge(struct cw_db *db, uint64_t id, struct cw_db_edge *e)
{
	return one_edge(db, db->rd[RD_EDGE], id, e);
}

int cw_db__first_into(struct cw_db *db, uint64_t node, struct cw_db_edge *e)
{
	return one_edge(db, db->rd[RD_FIRST_INTO], node, e);
}

int cw_db__scan_into(struct cw_db *db, uint64_t node, uint64_t ts, int forward, uint64_t max_rows,
		     uint64_t *rows, int (*pick)(void *ctx, const struct cw_db_edge *e), void *ctx,
		     struct cw_db_edge *e)
{
	sqlite3_stmt *s = db->rd[forward ? RD_INTO_FWD : RD_INTO_BACK];
	uint64_t n = 0;
	int rc;

	sqlite3_bind_int64(s, 1, (int64_t)node);
	if (!forward)
		sqlite3_bind_int64(s, 2, ts > INT64_MAX ? INT64_MAX : (int64_t)ts);
	while ((rc = rd_step(db, s)) == 1) {
		int p;

		if (++n > max_rows) {
			rc = -E2BIG;
			break;
		}
		edge_of(s, e);
		if ((p = pick(ctx, e))) {
			rc = p > 0;
			break;
		}
	}
	sqlite3_reset(s);
	*rows += n;
	return rc;
}

/* edges_src holds a node's edges by src alone, not in time: they are all
 * read, and counted, to find the latest. */
int cw_db__last_from(struct cw_db *db, uint64_t node, uint8_t type, uint64_t ts, uint64_t max_rows,
		     uint64_t *rows, struct cw_db_edge *e)
{
	sqlite3_stmt *s = db->rd[RD_FROM];
	struct cw_db_edge c;
	uint64_t n = 0;
	int rc, found = 0;

	sqlite3_bind_int64(s, 1, (int64_t)node);
	while ((rc = rd_step(db, s)) == 1) {
		if (++n > max_rows) {
			sqlite3_reset(s);
			*rows += n;
			return -E2BIG;
		}
		edge_of(s, &c);
		if (c.type != type || c.ts > ts)
			continue;
		if (!found || c.ts > e->ts || (c.ts == e->ts && c.id > e->id))
			*e = c;
		found = 1;
	}
	*rows += n;
	return rc < 0 ? rc : found;
}

/* A thread's samples back from @ts in samples_thread, CPU samples among
 * them, each counted: the first off-CPU one is the wait. */
int cw_db__wait_before(struct cw_db *db, uint64_t thread, uint64_t ts, uint64_t max_rows,
		       uint64_t *rows, struct cw_db_wait *w)
{
	sqlite3_stmt *s = db->rd[RD_WAITS];
	uint64_t n = 0;
	int rc;

	sqlite3_bind_int64(s, 1, (int64_t)thread);
	sqlite3_bind_int64(s, 2, (int64_t)ts);
	while ((rc = rd_step(db, s)) == 1) {
		if (++n > max_rows) {
			rc = -E2BIG;
			break;
		}
		if (sqlite3_column_int(s, 1) != CW_SAMPLE_KIND_OFFCPU)
			continue;
		w->ts = (uint64_t)sqlite3_column_int64(s, 0);
		w->weight = (uint64_t)sqlite3_column_int64(s, 2);
		w->exact = (uint8_t)sqlite3_column_int(s, 3);
		w->wake = col_id(s, 4);
		rc = 1;
		break;
	}
	sqlite3_reset(s);
	*rows += n;
	return rc;
}

int cw_db__crit_row(struct cw_db *db, const struct cw_crit_row *c)
{
	sqlite3_stmt *s = db->rd[RD_CRIT];

	sqlite3_bind_int64(s, 1, (int64_t)c->request);
	sqlite3_bind_int64(s, 2, c->seq);
	sqlite3_bind_int64(s, 3, (int64_t)c->node);
	sqlite3_bind_int(s, 4, c->kind);
	sqlite3_bind_int64(s, 5, (int64_t)c->start_ns);
	sqlite3_bind_int64(s, 6, (int64_t)(c->end_ns - c->start_ns));
	sqlite3_bind_int(s, 7, c->confidence);
	bind_id(s, 8, c->edge);
	bind_id(s, 9, c->stop);
	return step(db, s);
}

void cw_db__abort(struct cw_db *db)
{
	if (!db)
		return;
	finalize_all(db);
	sqlite3_close(db->h);
	free_db(db);
}
