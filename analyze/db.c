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

enum { ST_NODE, ST_EDGE, ST_EXEC, ST_BREAK, ST_DIAG, ST_META, ST_FRAME, ST_STACK, ST_STACK_FRAME,
       ST_SAMPLE, ST_WAIT, ST_ATTR, ST_REASON, ST_N };

static const char *const stmt_sql[ST_N] = {
	[ST_NODE] = "INSERT INTO nodes(id,type,scope,key,generation,pid,tid,name,start_ns,end_ns,"
		    "start_seen,traced) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_EDGE] = "INSERT INTO edges(id,type,src,dst,ts,cpu,source,confidence,reason,"
		    "interrupted_tid,addr) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
	[ST_EXEC] = "INSERT INTO execs(node,ts,comm,filename) VALUES(?,?,?,?)",
	[ST_BREAK] = "INSERT INTO coverage_breaks(start_ns,end_ns,cpu,stream,lost_events,reason,"
		     "class) VALUES(?,?,?,?,?,?,?)",
	[ST_DIAG] = "INSERT INTO diagnostics(level,message) VALUES(?,?)",
	[ST_META] = "INSERT OR REPLACE INTO meta(key,value) VALUES(?,?)",
	[ST_FRAME] = "INSERT INTO frames(id,address,kernel,module,build_id,function,file,line,"
		     "inlined) VALUES(?,?,?,?,?,?,?,?,?)",
	[ST_STACK] = "INSERT INTO stacks(id,depth) VALUES(?,?)",
	[ST_STACK_FRAME] = "INSERT INTO stack_frames(stack,position,frame) VALUES(?,?,?)",
	[ST_ATTR] = "INSERT INTO attribution_rows(sample,request,task,confidence,reason,"
		    "waker_request) VALUES(?,?,?,?,?,?)",
	[ST_REASON] = "INSERT INTO attribution_reasons(id,reason) VALUES(?,?)",
	[ST_SAMPLE] = "INSERT INTO samples(node,thread,ts,cpu,kind,stack,weight,"
		      "inclusion_probability,weight_exact,wake,stack_probability) "
		      "VALUES(?,?,?,?,?,?,?,?,?,?,?)",
	[ST_WAIT] = "INSERT INTO resource_waits(resource,waiter,start_ns,end_ns,wake_edge,waker,"
		    "confidence,reason) VALUES(?,?,?,?,?,?,?,?)",
};

/*
 * An attribution reason, written once to attribution_reasons: a sample's
 * row names it by id (the attribution view spells it out again). Every
 * sample has a reason, and one text is shared by most of them (a trace
 * without requests gives each the same "unknown"), so spelt out per row
 * it was a third of a system-wide database. The texts come from a finite
 * set (fixed reasons, and chains of at most CW_CARRY_PATH edge types), so
 * the table is bounded by what the analyzer can say, not by the trace.
 */
struct reason {
	struct cw_hnode hn;
	uint64_t hash, id;
	char text[];
};

struct cw_db {
	sqlite3 *h;
	sqlite3_stmt *st[ST_N];
	struct cw_htab reasons;
	uint64_t next_reason;
	int failed;
};

static uint64_t reason_rehash(const struct cw_hnode *n)
{
	return cw_hentry(n, struct reason, hn)->hash;
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

static void bind_text(sqlite3_stmt *s, int i, const char *t)
{
	if (t && *t)
		sqlite3_bind_text(s, i, t, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

static int db_node(void *ctx, const struct cw_node *n)
{
	struct cw_db *db = ctx;
	sqlite3_stmt *s = db->st[ST_NODE];

	sqlite3_bind_int64(s, 1, (int64_t)n->id);
	sqlite3_bind_text(s, 2, cw_node_type_names[n->type], -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, n->scope, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, (int64_t)n->key);
	sqlite3_bind_int64(s, 5, n->generation);
	bind_opt_i64(s, 6, n->pid);
	bind_opt_i64(s, 7, n->tid);
	bind_text(s, 8, n->long_name ? n->long_name : n->name);
	bind_opt_i64(s, 9, n->start_ns);
	bind_opt_i64(s, 10, n->end_ns);
	sqlite3_bind_int(s, 11, n->start_seen);
	bind_opt_i64(s, 12, n->traced);
	return step(db, s);
}

static int db_edge(void *ctx, const struct cw_edge *e)
{
	struct cw_db *db = ctx;
	sqlite3_stmt *s = db->st[ST_EDGE];

	/* The identity layer's id, so that a sample can name the edge; a
	 * sink user without ids (0) gets SQLite's next rowid. */
	bind_id(s, 1, e->id);
	sqlite3_bind_text(s, 2, cw_edge_type_names[e->type], -1, SQLITE_STATIC);
	bind_id(s, 3, e->src);
	sqlite3_bind_int64(s, 4, (int64_t)e->dst);
	sqlite3_bind_int64(s, 5, (int64_t)e->ts);
	bind_opt_i64(s, 6, e->cpu);
	sqlite3_bind_text(s, 7, cw_source_names[e->source], -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 8, cw_confidence_names[e->confidence], -1, SQLITE_STATIC);
	bind_text(s, 9, e->reason);
	bind_opt_i64(s, 10, e->interrupted);
	bind_id(s, 11, e->addr);
	return step(db, s);
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

/* The id of reason @text in attribution_reasons, written there the first
 * time; 0 with *err on failure. */
static uint64_t reason_of(struct cw_db *db, const char *text, int *err)
{
	uint64_t h = cw_hash_str(text);
	struct reason *e;
	size_t len;

	cw_htab_for_each_possible(&db->reasons, e, hn, h)
		if (e->hash == h && !strcmp(e->text, text))
			return e->id;
	if (db->reasons.n >= db->reasons.cap &&
	    (*err = cw_htab__grow(&db->reasons, 64, reason_rehash, 0)))
		return 0;
	len = strlen(text);
	if (!(e = malloc(sizeof(*e) + len + 1))) {
		*err = -ENOMEM;
		return 0;
	}
	e->hash = h;
	e->id = ++db->next_reason;
	memcpy(e->text, text, len + 1);
	cw_htab__add(&db->reasons, &e->hn, h);
	sqlite3_bind_int64(db->st[ST_REASON], 1, (int64_t)e->id);
	sqlite3_bind_text(db->st[ST_REASON], 2, e->text, -1, SQLITE_STATIC);
	if ((*err = step(db, db->st[ST_REASON])))
		return 0;
	return e->id;
}

static int db_sample(void *ctx, const struct cw_sample_row *r)
{
	struct cw_db *db = ctx;
	sqlite3_stmt *s = db->st[ST_SAMPLE];
	const char *reason;
	uint64_t reason_id = 0;
	int64_t sample;
	int err;

	sqlite3_bind_int64(s, 1, (int64_t)r->node);
	sqlite3_bind_int64(s, 2, (int64_t)r->thread);
	sqlite3_bind_int64(s, 3, (int64_t)r->ts);
	bind_opt_i64(s, 4, r->cpu);
	sqlite3_bind_text(s, 5, r->kind == CW_SAMPLE_KIND_CPU ? "cpu" : "offcpu", -1,
			  SQLITE_STATIC);
	bind_id(s, 6, r->stack);
	sqlite3_bind_int64(s, 7, (int64_t)r->weight);
	sqlite3_bind_double(s, 8, r->inclusion_probability);
	sqlite3_bind_int(s, 9, r->weight_exact);
	bind_id(s, 10, r->wake);
	sqlite3_bind_double(s, 11, r->stack_probability);
	if ((err = step(db, s)))
		return err;
	/* the sample's id, before a new reason's insert moves it */
	sample = sqlite3_last_insert_rowid(db->h);
	reason = r->attr_reason ?: r->attr_chain[0] ? r->attr_chain : NULL;
	if (reason && !(reason_id = reason_of(db, reason, &err)))
		return err;
	s = db->st[ST_ATTR];
	sqlite3_bind_int64(s, 1, sample);
	bind_id(s, 2, r->request);
	bind_id(s, 3, r->task);
	/* the code of enum cw_confidence: the attribution view names it */
	sqlite3_bind_int(s, 4, r->attr_confidence);
	bind_id(s, 5, reason_id);
	bind_id(s, 6, r->waker_request);
	return step(db, s);
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

	if (!db || !marker)
		goto nomem;
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
	if (write_edge_types(db, errbuf, errlen))
		goto fail;
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
 * nodes.generation = row_number() OVER (PARTITION BY type, scope, key
 * ORDER BY id) - 1, writing only the rows that change (schema/tables.sql
 * says why it is done here). The same as that UPDATE ... FROM, in one
 * sorted scan: a third of its time when nothing changes, four fifths when
 * every row does. Runs inside the load's transaction, before any index:
 * the sorter has read every row before the first update. Sorted by key
 * first: any order of the partition's columns makes the partitions runs,
 * and SQLite's sorter compares a leading integer without unpacking the
 * rest of the row, where a leading type (the same text in most rows) made
 * every comparison a full one.
 */
/* Keep a copy of @s in *@buf (grown as needed). */
static int remember(char **buf, size_t *cap, const char *s)
{
	size_t n = strlen(s) + 1;

	if (n > *cap) {
		char *b = realloc(*buf, n);

		if (!b)
			return -1;
		*buf = b;
		*cap = n;
	}
	memcpy(*buf, s, n);
	return 0;
}

static int number_generations(struct cw_db *db, char *errbuf, size_t errlen)
{
	sqlite3_stmt *q = NULL, *u = NULL;
	char *type = NULL, *scope = NULL;
	size_t type_cap = 0, scope_cap = 0;
	int64_t key = 0, gen = 0;
	int rc, first = 1, err = 0;

	if (sqlite3_prepare_v2(db->h, "SELECT id, type, scope, key, generation FROM nodes"
				      " ORDER BY key, type, scope, id", -1, &q, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->h, "UPDATE nodes SET generation = ? WHERE id = ?", -1, &u,
			       NULL) != SQLITE_OK)
		goto fail;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(q, 1);
		const char *sc = (const char *)sqlite3_column_text(q, 2);
		int64_t k = sqlite3_column_int64(q, 3);

		if (!t || !sc)
			goto fail; /* NOT NULL columns: only out of memory */
		if (!first && k == key && !strcmp(t, type) && !strcmp(sc, scope)) {
			gen++;
		} else {
			gen = 0;
			key = k;
			if (remember(&type, &type_cap, t) || remember(&scope, &scope_cap, sc))
				goto fail;
			first = 0;
		}
		if (sqlite3_column_int64(q, 4) == gen)
			continue;
		sqlite3_bind_int64(u, 1, gen);
		sqlite3_bind_int64(u, 2, sqlite3_column_int64(q, 0));
		if (sqlite3_step(u) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(u);
	}
	if (rc != SQLITE_DONE)
		goto fail;
	goto done;
fail:
	snprintf(errbuf, errlen, "database: numbering generations: %s", sqlite3_errmsg(db->h));
	err = -EIO;
done:
	sqlite3_finalize(q);
	sqlite3_finalize(u);
	free(type);
	free(scope);
	return err;
}

int cw_db__finish(struct cw_db *db, char *errbuf, size_t errlen)
{
	const char *marker = strstr(cw_tables_sql, INDEX_MARKER);
	int err;

	if (db->failed) {
		snprintf(errbuf, errlen, "database: earlier write failed");
		return -EIO;
	}
	err = number_generations(db, errbuf, errlen);
	err = err ?: exec_sql(db, "COMMIT", errbuf, errlen);
	if (!err)
		err = exec_sql(db, marker, errbuf, errlen);
	for (int i = 0; i < ST_N; i++)
		sqlite3_finalize(db->st[i]);
	if (sqlite3_close(db->h) != SQLITE_OK && !err) {
		snprintf(errbuf, errlen, "database: close failed");
		err = -EIO;
	}
	cw_htab__free_entries(&db->reasons, offsetof(struct reason, hn));
	cw_htab__free(&db->reasons);
	free(db);
	return err;
}

void cw_db__abort(struct cw_db *db)
{
	if (!db)
		return;
	for (int i = 0; i < ST_N; i++)
		sqlite3_finalize(db->st[i]);
	sqlite3_close(db->h);
	cw_htab__free_entries(&db->reasons, offsetof(struct reason, hn));
	cw_htab__free(&db->reasons);
	free(db);
}
