// SPDX-License-Identifier: MIT
/*
 * The database writer: generations are numbered after the load from
 * creation order, the identity index is unique, traced is written as
 * 1/0/NULL, and docs/model.md §4.1's queries find the indexes built for them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include "tests/check.h"
#include "analyze/db.h"

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

/* The first column of the first row of @sql, as text ("" if none). */
static const char *one(sqlite3 *h, const char *sql)
{
	static char buf[4096];
	sqlite3_stmt *s;

	buf[0] = '\0';
	if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) != SQLITE_OK) {
		snprintf(buf, sizeof(buf), "error: %s", sqlite3_errmsg(h));
		return buf;
	}
	switch (sqlite3_step(s)) {
	case SQLITE_ROW:
		if (sqlite3_column_text(s, 0))
			snprintf(buf, sizeof(buf), "%s", sqlite3_column_text(s, 0));
		break;
	case SQLITE_DONE:
		break;
	default:
		snprintf(buf, sizeof(buf), "error: %s", sqlite3_errmsg(h));
	}
	sqlite3_finalize(s);
	return buf;
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
	sqlite3 *h = NULL;

	CHECK(write_db(tn, 1) == 0, "write");
	CHECK(sqlite3_open(path, &h) == SQLITE_OK, "open");
	CHECK(uses(h, chain, "edges_dst_type_ts"), "the wake chain does not use edges(dst, type, ts)");
	CHECK(uses(h, chain, "nodes_identity"), "the wake chain does not find the thread by key");
	CHECK(uses(h, tree, "edges_spawn_ts"), "the process tree reads every edge");
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
	got = one(h, "SELECT count(*) FROM attribution_rows WHERE reason IS NULL");
	CHECK(!strcmp(got, "3"), "%s rows without a reason, not 3", got);
	sqlite3_close(h);
	unlink(path);
	passes++;
	printf("ok attribution_codes\n");
}

int main(void)
{
	test_generations();
	test_generations_kept();
	test_query_plans();
	test_attribution_codes();
	printf("test_db: %d passed, %d failed\n", passes, failures);
	return failures != 0;
}
