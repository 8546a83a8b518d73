// SPDX-License-Identifier: MIT
/*
 * The database writer: generations are numbered after the load from
 * creation order, the identity index is unique, traced is written as
 * 1/0/NULL, docs/model.md §4.1's queries find the indexes built for them,
 * the views read every code and text back as written, and the Poisson
 * limits request_summary bounds CPU time with are the exact ones.
 */
#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include "tests/check.h"
#include "tests/sql_one.h"
#include "analyze/db.h"
#include "tables_sql.h"

static char path[64];

/* One node of the test: id, type, key, the generation the join gave it
 * (a join that keeps no counters says 0), traced. */
struct tnode {
	uint64_t id;
	uint8_t type;
	uint64_t key;
	uint32_t gen;
	int8_t traced;
};

static int write_db(const struct tnode *tn, size_t n)
{
	char err[256];
	struct cw_db *db;
	struct cw_sink sink;

	snprintf(path, sizeof(path), "/tmp/test_db.%d.db", (int)getpid());
	unlink(path);
	db = cw_db__create(path, err, sizeof(err));
	if (!db) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	cw_db__sink(db, &sink);
	for (size_t i = 0; i < n; i++) {
		struct cw_node node = {
			.id = tn[i].id, .type = tn[i].type, .scope = "host", .key = tn[i].key,
			.generation = tn[i].gen, .pid = -1, .tid = -1, .start_ns = -1,
			.end_ns = -1, .traced = tn[i].traced,
		};

		if (sink.node(sink.ctx, &node)) {
			cw_db__abort(db);
			return -1;
		}
	}
	if (cw_db__finish(db, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	return 0;
}

static void test_generations(void)
{
	/* Thread 7 born three times, interleaved with others; process 7 once;
	 * the join said 0 everywhere. */
	static const struct tnode tn[] = {
		{ 1, CW_NODE_THREAD, 7, 0, 1 },	   { 2, CW_NODE_PROCESS, 7, 0, -1 },
		{ 3, CW_NODE_THREAD, 8, 0, 0 },	   { 5, CW_NODE_THREAD, 7, 0, 1 },
		{ 4, CW_NODE_THREAD, 9, 0, 1 },	   { 9, CW_NODE_THREAD, 7, 0, 1 },
		{ 6, CW_NODE_THREAD, 8, 0, 0 },
	};
	sqlite3 *h = NULL;
	const char *got;

	CHECK(write_db(tn, sizeof(tn) / sizeof(tn[0])) == 0, "write");
	CHECK(sqlite3_open(path, &h) == SQLITE_OK, "open");
	got = one(h, "SELECT group_concat(id || ':' || generation, ' ') FROM"
		     " (SELECT id, generation FROM nodes ORDER BY id)");
	CHECK(!strcmp(got, "1:0 2:0 3:0 4:0 5:1 6:1 9:2"), "generations %s", got);
	got = one(h, "SELECT group_concat(id || ':' || coalesce(traced, 'NULL'), ' ') FROM"
		     " (SELECT id, traced FROM nodes ORDER BY id)");
	CHECK(!strcmp(got, "1:1 2:NULL 3:0 4:1 5:1 6:0 9:1"), "traced %s", got);
	got = one(h, "INSERT INTO nodes(type, scope, key, generation, start_seen)"
		     " VALUES('thread', 'host', 7, 2, 0) RETURNING id");
	CHECK(!strncmp(got, "error: UNIQUE constraint failed", 31), "duplicate identity: %s",
	      got);
	sqlite3_close(h);
	unlink(path);
	passes++;
	printf("ok generations\n");
}

/* A join that numbers generations itself gets the same numbers back. */
static void test_generations_kept(void)
{
	static const struct tnode tn[] = {
		{ 1, CW_NODE_THREAD, 7, 0, 1 }, { 2, CW_NODE_THREAD, 7, 1, 1 },
		{ 3, CW_NODE_THREAD, 7, 2, 1 }, { 4, CW_NODE_PROCESS, 7, 0, 1 },
	};
	sqlite3 *h = NULL;
	const char *got;

	CHECK(write_db(tn, sizeof(tn) / sizeof(tn[0])) == 0, "write");
	CHECK(sqlite3_open(path, &h) == SQLITE_OK, "open");
	got = one(h, "SELECT group_concat(id || ':' || generation, ' ') FROM"
		     " (SELECT id, generation FROM nodes ORDER BY id)");
	CHECK(!strcmp(got, "1:0 2:1 3:2 4:0"), "generations %s", got);
	sqlite3_close(h);
	unlink(path);
	passes++;
	printf("ok generations_kept\n");
}

/* The query plan of @sql mentions @index. */
static int uses(sqlite3 *h, const char *sql, const char *index)
{
	char q[2048];
	sqlite3_stmt *s;
	int found = 0;

	snprintf(q, sizeof(q), "EXPLAIN QUERY PLAN %s", sql);
	if (sqlite3_prepare_v2(h, q, -1, &s, NULL) != SQLITE_OK) {
		fprintf(stderr, "  %s: %s\n", sql, sqlite3_errmsg(h));
		return 0;
	}
	while (sqlite3_step(s) == SQLITE_ROW)
		if (strstr((const char *)sqlite3_column_text(s, 3), index))
			found = 1;
	sqlite3_finalize(s);
	return found;
}

/* docs/model.md §4.1's queries that look things up (rather than read a whole
 * table) find their index. */
static void test_query_plans(void)
{
	static const struct tnode tn[] = { { 1, CW_NODE_THREAD, 7, 0, 1 } };
	static const char chain[] =
		"WITH RECURSIVE chain(node, ts, depth) AS ("
		" SELECT id, (SELECT max(end_ns) FROM nodes), 0 FROM nodes"
		"  WHERE type = 'thread' AND key = :tid"
		" UNION ALL"
		" SELECT e.src, e.ts, depth + 1 FROM chain"
		"  JOIN edges e ON e.id = (SELECT id FROM edges WHERE dst = chain.node AND type = 'wake'"
		"   AND ts <= coalesce(chain.ts, ts) ORDER BY ts DESC LIMIT 1)"
		"  WHERE e.src IS NOT NULL AND depth < 5)"
		"SELECT depth, n.key AS tid, n.name, chain.ts FROM chain JOIN nodes n ON n.id = chain.node";
	static const char tree[] =
		"SELECT p.key AS parent_tid, c.key AS child_tid, c.generation, c.name, e.reason"
		" FROM edges e JOIN nodes p ON p.id = e.src JOIN nodes c ON c.id = e.dst"
		" WHERE e.type = 'spawn' ORDER BY e.ts";
	/* Lookups through the views' coded columns (an index on the
	 * expression a view column stands for, bound parameters) and the
	 * partial indexes. */
	static const struct {
		const char *sql, *index;
	} lookups[] = {
		{ "SELECT id FROM nodes WHERE type = ?1 AND key = ?2", "nodes_identity (key=?)" },
		{ "SELECT id FROM nodes WHERE type = 'thread' AND key = ?1", "nodes_identity (key=?)" },
		{ "SELECT id FROM edges WHERE dst = ?1 AND type = ?2 AND ts BETWEEN ?3 AND ?4",
		  "edges_dst_ts" },
		{ "SELECT id FROM edges WHERE src = ?1 AND type = 'resume'", "edges_src" },
		{ "SELECT * FROM orphans_by_class", "edges_unknown" },
		{ "SELECT id FROM samples WHERE node = ?1", "samples_node" },
		{ "SELECT id FROM samples WHERE thread = ?1 AND ts BETWEEN ?2 AND ?3",
		  "samples_thread" },
		{ "SELECT sample FROM attribution WHERE request = ?1", "attribution_request" },
		/* one request, one thread: a seek to their own rows */
		{ "SELECT * FROM request_summary WHERE request = ?1",
		  "attribution_request (request=?)" },
		{ "SELECT * FROM request_summary WHERE request = ?1",
		  "resource_waits_waiter (waiter=?)" },
		{ "SELECT * FROM offcpu_by_waker WHERE thread = ?1", "samples_thread (thread=?)" },
		{ "SELECT * FROM causal_ancestry", "edges_dst_ts (dst=? AND ts<?)" },
		/* one request's path to the waits it ended, not every wait */
		{ "SELECT * FROM critical_waits WHERE request = ?1", "resource_waits_wake (wake_edge=?)" },
		/* a segment's resource kind: one seek by its edge */
		{ "SELECT * FROM request_critical WHERE request = ?1",
		  "resource_waits_wake (wake_edge=?)" },
	};
	sqlite3 *h = NULL;

	CHECK(write_db(tn, 1) == 0, "write");
	CHECK(sqlite3_open(path, &h) == SQLITE_OK, "open");
	CHECK(uses(h, chain, "edges_dst_ts"), "the wake chain does not use edges(dst, ts)");
	CHECK(uses(h, chain, "nodes_identity"), "the wake chain does not find the thread by key");
	CHECK(uses(h, tree, "edges_spawn_ts"), "the process tree reads every edge");
	for (size_t i = 0; i < sizeof(lookups) / sizeof(lookups[0]); i++)
		CHECK(uses(h, lookups[i].sql, lookups[i].index), "%s: reads every row, not %s",
		      lookups[i].sql, lookups[i].index);
	/* one request is found by its id, not among every request by type,
	 * and its samples by it, not among every sample of its thread (a
	 * backend's tens of thousands, for each of its requests) */
	CHECK(!uses(h, "SELECT * FROM request_summary WHERE request = ?1", "nodes_identity"),
	      "request_summary reads every request to find one");
	CHECK(!uses(h, "SELECT * FROM request_summary WHERE request = ?1", "samples_thread"),
	      "request_summary reads every sample of the request's thread");
	sqlite3_close(h);
	unlink(path);
	passes++;
	printf("ok query_plans\n");
}

/*
 * attribution is a view over coded rows: each sample's confidence and
 * reason read back as written, for every confidence the model has (the
 * view's CASE is held to cw_confidence_names), a reason shared by many
 * samples is stored once, and a sample without one reads NULL.
 */
static void test_attribution_codes(void)
{
	static const char *const reasons[] = { "woken by an unknown cause", NULL,
					       "request > wake", "woken by an unknown cause" };
	struct cw_sample_row row = { .node = 1, .thread = 1, .weight = 1,
				     .inclusion_probability = 1.0,
				     .stack_probability = 1.0 };
	char err[256], want[512] = "", *w = want;
	struct cw_sink sink;
	struct cw_db *db;
	sqlite3 *h = NULL;
	const char *got;
	int n = 0;

	snprintf(path, sizeof(path), "/tmp/test_db.%d.db", (int)getpid());
	unlink(path);
	CHECK((db = cw_db__create(path, err, sizeof(err))) != NULL, "create: %s", err);
	if (!db)
		return;
	cw_db__sink(db, &sink);
	for (int c = 0; c < CW_CONF_N; c++) {
		for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++, n++) {
			row.ts = (uint64_t)n;
			row.attr_confidence = (uint8_t)c;
			/* a chain is a copy in the row, a fixed reason a pointer */
			row.attr_reason = i == 2 ? NULL : reasons[i];
			snprintf(row.attr_chain, sizeof(row.attr_chain), "%s", i == 2 ? reasons[i] : "");
			CHECK(sink.sample(sink.ctx, &row) == 0, "sample %d", n);
			w += snprintf(w, want + sizeof(want) - w, "%s%s:%s", n ? " " : "",
				      cw_confidence_names[c], reasons[i] ? reasons[i] : "NULL");
		}
	}
	CHECK(cw_db__finish(db, err, sizeof(err)) == 0, "finish: %s", err);
	CHECK(sqlite3_open(path, &h) == SQLITE_OK, "open");
	got = one(h, "SELECT group_concat(confidence || ':' || coalesce(reason, 'NULL'), ' ') FROM"
		     " (SELECT confidence, reason FROM attribution ORDER BY sample)");
	CHECK(!strcmp(got, want), "attribution reads\n  %s\nnot\n  %s", got, want);
	got = one(h, "SELECT count(*) FROM attribution_reasons");
	CHECK(!strcmp(got, "2"), "%s reasons stored, not 2", got);
	got = one(h, "SELECT count(*) FROM sample_rows WHERE attr_reason IS NULL");
	CHECK(!strcmp(got, "3"), "%s rows without a reason, not 3", got);
	sqlite3_close(h);
	unlink(path);
	passes++;
	printf("ok attribution_codes\n");
}

/* Run @sql; 0, or -1 after saying why. */
static int exec(sqlite3 *h, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(h, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	fprintf(stderr, "  %s: %s\n", sql, msg ? msg : sqlite3_errmsg(h));
	sqlite3_free(msg);
	return -1;
}

/* A database from @fn's rows, written through the sink; its path in
 * path. @return 0 or -1. */
static int write_rows(void (*fn)(struct cw_sink *sink))
{
	char err[256];
	struct cw_sink sink;
	struct cw_db *db;

	snprintf(path, sizeof(path), "/tmp/test_db.%d.db", (int)getpid());
	unlink(path);
	if (!(db = cw_db__create(path, err, sizeof(err)))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	cw_db__sink(db, &sink);
	fn(&sink);
	if (cw_db__finish(db, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	return 0;
}

/* A node's start and end as every_code() writes them: each way they
 * stand (unknown, both known, the end alone, the end before the start). */
static int64_t node_start(int t)
{
	return t % 4 == 1 ? 1000 + t : t % 4 == 3 ? 9000 : -1;
}

static int64_t node_end(int t)
{
	return (int64_t[]){ -1, 5000 + t, 7000 + t, 8000 }[t % 4];
}

/* The block request row @i of every_code(): 24 kinds, more than the
 * writer remembers, each twice, the second time after the others. */
static void block_row(int i, struct cw_block_row *b)
{
	static const char *const ops[] = { "READ", "WRITE", "FLUSH" };
	int k = i % 24;

	/* node i + 1 is write_rows()'s node of type i, where there is one */
	*b = (struct cw_block_row){ .node = (uint64_t)i + 1, .sector = (uint64_t)i * 8,
				    .issue_ns = 100 + (uint64_t)i,
				    .start_ns = i < CW_NODE_NTYPES ? node_start(i) : -1,
				    .bytes = 4096, .op = ops[k % 3] };
	snprintf(b->dev, sizeof(b->dev), "%d:%d", 254 + k / 6, k % 2);
	snprintf(b->flags, sizeof(b->flags), "%s", (const char *[]){ "", "SYNC", "PREFLUSH,FUA",
								    "SYNC,META" }[k / 3 % 4]);
}

/* A node of every type, an edge of every type, source and confidence, a
 * sample of each kind (node its thread, and not), of each way its
 * probabilities stand, block requests of more kinds than the writer
 * remembers. */
static void every_code(struct cw_sink *sink)
{
	static const char *const sources[] = { "kernel", "runtime", "application", "inferred" };
	struct cw_node n = { .scope = "host", .pid = -1, .tid = -1, .start_ns = -1, .end_ns = -1,
			     .traced = -1 };
	struct cw_edge e = { .cpu = -1, .interrupted = -1 };
	struct cw_sample_row r = { .thread = 1, .weight = 1 };
	static const double probs[][2] = { { 1.0, 1.0 }, { 1.0, 0.25 }, { 14714839 / 4294967296.0,
		14714839 / 4294967296.0 }, { 1.0, 1 / 3.0 }, { 0.5, 1e-300 } };
	uint64_t id = 0;

	for (int t = 0; t < CW_NODE_NTYPES; t++) {
		n.id = ++id;
		n.type = (uint8_t)t;
		n.key = (uint64_t)t;
		n.start_ns = node_start(t);
		n.end_ns = node_end(t);
		snprintf(n.name, sizeof(n.name), "n%d", t);
		CHECK(sink->node(sink->ctx, &n) == 0, "node %d", t);
	}
	id = 0;
	for (int t = 0; t < CW_EDGE_NTYPES; t++) {
		for (int src = 0; src < (int)(sizeof(sources) / sizeof(sources[0])); src++) {
			for (int c = 0; c < CW_CONF_N; c++) {
				e.id = ++id;
				e.type = (uint8_t)t;
				e.source = (uint8_t)src;
				e.confidence = (uint8_t)c;
				e.src = c == CW_CONF_UNKNOWN ? 0 : 1;
				e.dst = 2;
				e.ts = id;
				e.reason = c == CW_CONF_OBSERVED ? NULL : src & 1 ? "futex" : "hardirq";
				CHECK(sink->edge(sink->ctx, &e) == 0, "edge %d", t);
			}
		}
	}
	for (int k = 0; k < 2; k++) {
		for (size_t p = 0; p < sizeof(probs) / sizeof(probs[0]); p++) {
			r.ts++;
			r.kind = (uint8_t)k;
			r.node = p & 1 ? 2 : 1;
			r.inclusion_probability = probs[p][0];
			r.stack_probability = probs[p][1];
			CHECK(sink->sample(sink->ctx, &r) == 0, "sample %d %zu", k, p);
		}
	}
	for (int i = 0; i < 48; i++) {
		struct cw_block_row b;

		block_row(i, &b);
		CHECK(sink->block(sink->ctx, &b) == 0, "block %d", i);
	}
}

/*
 * The views spell every code as analyze/model.h's names do (their CASEs
 * are held to the enums here), read a sample's node and probabilities
 * back exactly (to the last bit: hex of the double), and the views'
 * INSERT triggers code what they are given the same way the writer does:
 * the rows read through the views, inserted again through them into a
 * fresh schema, read back the same.
 */
static void test_codes(void)
{
	static const char *const views[] = { "nodes", "edges", "samples", "attribution",
					      "block_requests" };
	char want[65536], *w = want;
	sqlite3 *h = NULL;
	const char *got;

	CHECK(write_rows(every_code) == 0, "write");
	CHECK(sqlite3_open(path, &h) == SQLITE_OK, "open");
	for (int t = 0; t < CW_NODE_NTYPES; t++)
		w += snprintf(w, want + sizeof(want) - w, "%s%s:n%d", t ? " " : "",
			      cw_node_type_names[t], t);
	got = one(h, "SELECT group_concat(type || ':' || name, ' ') FROM (SELECT * FROM nodes"
		     " ORDER BY id)");
	CHECK(!strcmp(got, want), "nodes read\n  %s\nnot\n  %s", got, want);
	w = want;
	for (int t = 0; t < CW_NODE_NTYPES; t++)
		w += snprintf(w, want + sizeof(want) - w, "%s%lld/%lld", t ? " " : "",
			      (long long)node_start(t), (long long)node_end(t));
	got = one(h, "SELECT group_concat(coalesce(start_ns, -1) || '/' || coalesce(end_ns, -1), ' ')"
		     " FROM (SELECT * FROM nodes ORDER BY id)");
	CHECK(!strcmp(got, want), "node times read\n  %s\nnot\n  %s", got, want);
	w = want;
	for (int i = 0; i < 48; i++) {
		struct cw_block_row b;

		block_row(i, &b);
		w += snprintf(w, want + sizeof(want) - w, "%s%d:%s:%s:%s:%d:%d:%d", i ? " " : "",
			      i + 1, b.dev, b.op, b.flags[0] ? b.flags : "NULL", i * 8, 4096, 100 + i);
	}
	got = one(h, "SELECT group_concat(node || ':' || dev || ':' || op || ':' ||"
		     " coalesce(flags, 'NULL') || ':' || sector || ':' || bytes || ':' || issue_ns, ' ')"
		     " FROM (SELECT * FROM block_requests ORDER BY node)");
	CHECK(!strcmp(got, want), "block requests read\n  %s\nnot\n  %s", got, want);
	w = want;
	for (int t = 0; t < CW_EDGE_NTYPES; t++)
		for (int src = 0; src < 4; src++)
			for (int c = 0; c < CW_CONF_N; c++)
				w += snprintf(w, want + sizeof(want) - w, "%s%s/%s/%s",
					      want == w ? "" : " ", cw_edge_type_names[t],
					      cw_source_names[src], cw_confidence_names[c]);
	got = one(h, "SELECT group_concat(type || '/' || source || '/' || confidence, ' ') FROM"
		     " (SELECT * FROM edges ORDER BY id)");
	CHECK(!strcmp(got, want), "edges read\n  %s\nnot\n  %s", got, want);
	got = one(h, "SELECT group_concat(coalesce(reason, 'NULL'), ' ') FROM (SELECT * FROM edges"
		     " WHERE type = 'wake' ORDER BY id)");
	CHECK(!strcmp(got, "NULL hardirq hardirq NULL futex futex NULL hardirq hardirq"
			   " NULL futex futex"), "edge reasons %s", got);
	got = one(h, "SELECT count(*) FROM edge_reasons");
	CHECK(!strcmp(got, "2"), "%s edge reasons stored, not 2", got);
	got = one(h, "SELECT group_concat(kind || ':' || node || ':' || printf('%a', "
		     "inclusion_probability) || ':' || printf('%a', stack_probability), ' ')"
		     " FROM (SELECT * FROM samples ORDER BY id)");
	w = want;
	for (int k = 0; k < 2; k++)
		for (int p = 0; p < 5; p++)
			w += snprintf(w, want + sizeof(want) - w, "%s%s:%d:%a:%a", want == w ? "" : " ",
				      k ? "offcpu" : "cpu", p & 1 ? 2 : 1,
				      (double[]){ 1.0, 1.0, 14714839 / 4294967296.0, 1.0, 0.5 }[p],
				      (double[]){ 1.0, 0.25, 14714839 / 4294967296.0, 1 / 3.0,
						  1e-300 }[p]);
	/* SQLite's printf spells %a its own way: compare the values instead
	 * when the texts differ only in spelling */
	if (strcmp(got, want)) {
		got = one(h, "SELECT count(*) FROM samples s JOIN (SELECT 1 AS p, 1.0 AS i, 1.0 AS sp"
			     " UNION ALL SELECT 2, 1.0, 0.25 UNION ALL SELECT 3, 14714839 /"
			     " 4294967296.0, 14714839 / 4294967296.0 UNION ALL SELECT 4, 1.0, 1 / 3.0"
			     " UNION ALL SELECT 5, 0.5, 1e-300) v ON v.p = (s.id - 1) % 5 + 1"
			     " WHERE s.inclusion_probability = v.i AND s.stack_probability = v.sp"
			     " AND typeof(s.stack_probability) = 'real'"
			     " AND s.node = CASE WHEN v.p % 2 = 0 THEN 2 ELSE 1 END");
		CHECK(!strcmp(got, "10"), "%s of 10 samples read back exactly", got);
	}
	/* stored as schema/tables.sql says: the thread's node and a stack
	 * probability equal to the row's as NULL, another as its keep (an
	 * integer where it is one) */
	got = one(h, "SELECT group_concat(coalesce(node, 'NULL') || ':' || CASE WHEN stack_keep IS NULL"
		     " THEN 'NULL' WHEN stack_keep = CAST(stack_keep AS INTEGER) THEN 'keep' ELSE"
		     " 'fraction' END, ' ') FROM (SELECT * FROM sample_rows WHERE kind = 0 ORDER BY id)");
	CHECK(!strcmp(got, "NULL:NULL 2:keep NULL:NULL 2:fraction NULL:fraction"), "sample rows %s",
	      got);
	/* the triggers: every view read, written through the views of a
	 * fresh schema, reads the same */
	sqlite3_close(h);
	CHECK(sqlite3_open(":memory:", &h) == SQLITE_OK, "open");
	CHECK(exec(h, cw_tables_sql) == 0, "schema");
	snprintf(want, sizeof(want), "ATTACH '%s' AS a", path);
	CHECK(exec(h, want) == 0, "attach");
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		const char *v = views[i];

		snprintf(want, sizeof(want), "INSERT INTO main.%s SELECT * FROM a.%s", v, v);
		CHECK(exec(h, want) == 0, "%s: insert", v);
		snprintf(want, sizeof(want),
			 "SELECT ((SELECT count(*) FROM (SELECT * FROM main.%s EXCEPT SELECT * FROM a.%s))"
			 " + (SELECT count(*) FROM (SELECT * FROM a.%s EXCEPT SELECT * FROM main.%s)))"
			 " || ' of ' || (SELECT count(*) FROM main.%s)", v, v, v, v, v);
		got = one(h, want);
		CHECK(!strncmp(got, "0 of ", 5) && strcmp(got, "0 of 0"),
		      "%s through its trigger: %s differ", v, got);
	}
	sqlite3_close(h);
	unlink(path);
	passes++;
	printf("ok codes\n");
}

/*
 * The regularized incomplete gamma functions P(a, x) and Q(a, x) = 1 - P,
 * each computed where it converges without cancelling (Numerical Recipes'
 * series below a + 1, Lentz's continued fraction above). For a Poisson X
 * of mean x, P(X >= n) = P(n, x) and P(X <= n) = Q(n + 1, x).
 */
static void gamma_pq(double a, double x, double *p, double *q)
{
	double pre = exp(a * log(x) - x - lgamma(a));

	if (x < a + 1) {
		double term = 1 / a, sum = term;

		for (double ap = a; fabs(term) > fabs(sum) * 1e-15;)
			sum += term *= x / ++ap;
		*p = sum * pre;
		*q = 1 - *p;
		return;
	}
	double b = x + 1 - a, c = 1e300, d = 1 / b, h = d;

	for (int i = 1;; i++) {
		double an = -i * (i - a), del;

		b += 2;
		d = an * d + b;
		d = fabs(d) < 1e-300 ? 1e-300 : d;
		c = b + an / c;
		c = fabs(c) < 1e-300 ? 1e-300 : c;
		d = 1 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-15)
			break;
	}
	*q = h * pre;
	*p = 1 - *q;
}

/*
 * poisson_limits (schema/tables.sql) holds Garwood's exact central 95%
 * limits: at low, P(X >= n) = 0.025, at high, P(X <= n) = 0.025, within
 * what its 10 digits and double precision allow; every n to 32, then
 * rows to past 2^34 at most 2^(1/2) apart (the view scales the row below
 * a count, and says how wide that may make the interval).
 */
static void test_poisson_limits(void)
{
	static const struct tnode tn[] = { { 1, CW_NODE_THREAD, 7, 0, 1 } };
	sqlite3 *h = NULL;
	sqlite3_stmt *s;
	double prev_n = -1;
	int rows = 0;

	CHECK(write_db(tn, 1) == 0, "write");
	CHECK(sqlite3_open(path, &h) == SQLITE_OK, "open");
	CHECK(sqlite3_prepare_v2(h, "SELECT n, low, high FROM poisson_limits ORDER BY n", -1, &s,
				 NULL) == SQLITE_OK,
	      "poisson_limits: %s", sqlite3_errmsg(h));
	while (sqlite3_step(s) == SQLITE_ROW) {
		double n = sqlite3_column_double(s, 0), lo = sqlite3_column_double(s, 1);
		double hi = sqlite3_column_double(s, 2), p, q;

		CHECK(n <= 32 ? n == prev_n + 1 : n <= prev_n * sqrt(2) + 1,
		      "a gap before n = %.0f", n);
		if (n == 0) {
			CHECK(lo == 0, "low %g at n = 0", lo);
		} else {
			gamma_pq(n, lo, &p, &q);
			CHECK(fabs(p - 0.025) < 1e-4, "n = %.0f: P(X >= n | %.10g) = %.6f", n, lo, p);
		}
		gamma_pq(n + 1, hi, &p, &q);
		CHECK(fabs(q - 0.025) < 1e-4, "n = %.0f: P(X <= n | %.10g) = %.6f", n, hi, q);
		prev_n = n;
		rows++;
	}
	sqlite3_finalize(s);
	CHECK(prev_n >= 17179869184.0, "the last row is n = %.0f, not past 2^34", prev_n);
	sqlite3_close(h);
	unlink(path);
	passes++;
	printf("ok poisson_limits (%d rows)\n", rows);
}

static void no_rows(struct cw_sink *sink)
{
	(void)sink;
}

/*
 * sample_mechanism asks whether a sample lies in a resource wait by
 * seeks (its comment says how), not by the plain query that reads every
 * earlier wait of the waiter: on random waits of three waiters, nested,
 * crossing, equal starts, some never ended, and samples of a thread, a
 * request and a task among them, both say the same of every sample; and
 * the plan seeks resource_waits_open for the waits never ended.
 */
static void test_mechanism_waits(void)
{
	static const char plain[] =
		"SELECT count(*) || '|' || coalesce(sum(m.mechanism = 'resource_wait'), 0) FROM samples s"
		" LEFT JOIN attribution a ON a.sample = s.id JOIN sample_mechanism m ON m.sample = s.id"
		" WHERE s.kind = 'offcpu' AND (m.mechanism = 'resource_wait') != EXISTS (SELECT 1 FROM resource_waits w"
		"  WHERE w.waiter IN (s.thread, a.request, a.task) AND w.start_ns <= s.ts"
		"  AND (w.end_ns IS NULL OR w.end_ns > s.ts))"
		" OR s.kind = 'cpu' AND m.mechanism != 'cpu'";
	sqlite3 *h = NULL;
	char sql[256];
	int in = 0;

	CHECK(write_rows(no_rows) == 0, "write");
	CHECK(sqlite3_open(path, &h) == SQLITE_OK, "open");
	rng = 0x5eed5eedull;
	CHECK(exec(h, "BEGIN") == 0, "begin");
	for (int i = 1; i <= 3000; i++) {
		int64_t start = (int64_t)(next_rand() % 100000);
		int64_t len = (int64_t)(next_rand() % (next_rand() % 4 ? 300 : 20000));

		/* one in eight starts equal to an earlier one's */
		if (next_rand() % 8 == 0)
			start -= start % 1000;
		if (next_rand() % 50 == 0)
			snprintf(sql, sizeof(sql),
				 "INSERT INTO resource_waits(id, resource, waiter, start_ns, end_ns,"
				 " confidence) VALUES (%d, 100, %d, %" PRId64 ", NULL, 'unknown')",
				 i, 1 + (int)(next_rand() % 3), start);
		else
			snprintf(sql, sizeof(sql),
				 "INSERT INTO resource_waits(id, resource, waiter, start_ns, end_ns,"
				 " confidence) VALUES (%d, 100, %d, %" PRId64 ", %" PRId64 ", 'unknown')",
				 i, 1 + (int)(next_rand() % 3), start, start + len);
		CHECK(exec(h, sql) == 0, "wait %d", i);
	}
	for (int i = 1; i <= 3000; i++) {
		unsigned r = (unsigned)(next_rand() % 4);

		snprintf(sql, sizeof(sql),
			 "INSERT INTO samples(id, thread, ts, kind, weight, weight_exact,"
			 " inclusion_probability) VALUES (%d, 1, %" PRId64 ", '%s', 1, 1, 1.0)",
			 i, (int64_t)(next_rand() % 120000), r == 3 ? "cpu" : "offcpu");
		CHECK(exec(h, sql) == 0, "sample %d", i);
		/* the request (2) or the task (3) waits, for some */
		if (r == 1 || r == 2) {
			snprintf(sql, sizeof(sql),
				 "INSERT INTO attribution(sample, request, task, confidence)"
				 " VALUES (%d, %s, %s, 'observed')",
				 i, r == 1 ? "2" : "NULL", r == 2 ? "3" : "NULL");
			CHECK(exec(h, sql) == 0, "attribution %d", i);
		}
	}
	CHECK(exec(h, "COMMIT") == 0, "commit");
	sscanf(one(h, "SELECT sum(mechanism = 'resource_wait') FROM sample_mechanism"), "%d", &in);
	CHECK(!strcmp(one(h, plain), "0|0"), "samples where sample_mechanism and the plain query"
	      " disagree, of them in a wait by the view: %s", one(h, plain));
	/* the random waits do what the test says they do */
	CHECK(in > 500 && in < 2900, "%d of 3000 samples in a wait", in);
	CHECK(uses(h, "SELECT * FROM sample_mechanism WHERE sample = ?1", "resource_waits_open"),
	      "sample_mechanism reads every wait to find those never ended");
	sqlite3_close(h);
	unlink(path);
	passes++;
	printf("ok mechanism_waits\n");
}

int main(void)
{
	test_generations();
	test_generations_kept();
	test_query_plans();
	test_attribution_codes();
	test_codes();
	test_poisson_limits();
	test_mechanism_waits();
	printf("test_db: %d passed, %d failed\n", passes, failures);
	return failures != 0;
}
