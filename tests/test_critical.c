// SPDX-License-Identifier: MIT
/*
 * The critical path (analyze/critical.c, docs/model.md §9): on random
 * graphs, hostile ones included (waits that contradict each other, wakes
 * outside their waits, births after their effects, cycles of objects,
 * requests that end before they begin), every request's segments tile
 * its wall time exactly, only the last is a blocked stop and it says why,
 * and the same graph gives the same rows; the views spell every code as
 * analyze/model.h's names do, and take rows back through their triggers;
 * the walks' work stays within their bounds on a graph whose requests
 * would each walk the same long chain.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include "tests/check.h"
#include "tests/sql_one.h"
#include "analyze/breaks.h"
#include "analyze/critical.h"
#include "analyze/db.h"
#include "tables_sql.h"

static char path[64];

/* A graph written through the database's sink. */
struct g {
	struct cw_db *db;
	struct cw_sink sink;
	uint64_t nodes, edges;
	int failed;
};

static int g_open(struct g *g)
{
	char err[256];

	memset(g, 0, sizeof(*g));
	snprintf(path, sizeof(path), "/tmp/test_critical.%d.db", (int)getpid());
	unlink(path);
	if (!(g->db = cw_db__create(path, err, sizeof(err)))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	cw_db__sink(g->db, &g->sink);
	return 0;
}

static uint64_t node(struct g *g, uint8_t type, int64_t start, uint8_t seen, int8_t traced)
{
	struct cw_node n = { .id = ++g->nodes, .type = type, .scope = "host", .key = g->nodes,
			     .pid = -1, .tid = -1, .start_ns = start, .end_ns = -1,
			     .start_seen = seen, .traced = traced };

	g->failed |= g->sink.node(g->sink.ctx, &n) != 0;
	return n.id;
}

static uint64_t edge(struct g *g, uint8_t type, uint64_t src, uint64_t dst, uint64_t ts,
		     uint8_t conf)
{
	struct cw_edge e = { .id = ++g->edges, .type = type, .src = src, .dst = dst, .ts = ts,
			     .cpu = 0, .confidence = conf, .interrupted = -1 };

	g->failed |= g->sink.edge(g->sink.ctx, &e) != 0;
	return e.id;
}

/* A request node [start, end] (end -1: not seen), its begin from @thread
 * and its end back to @to. */
static uint64_t request(struct g *g, uint64_t thread, uint64_t to, uint64_t start, int64_t end)
{
	struct cw_node n = { .id = ++g->nodes, .type = CW_NODE_REQUEST, .scope = "pid:1",
			     .key = g->nodes, .pid = -1, .tid = -1, .start_ns = (int64_t)start,
			     .end_ns = end, .start_seen = 1, .traced = -1 };

	g->failed |= g->sink.node(g->sink.ctx, &n) != 0;
	edge(g, CW_EDGE_BEGIN, thread, n.id, start, CW_CONF_OBSERVED);
	if (end >= 0)
		edge(g, CW_EDGE_END, n.id, to, (uint64_t)end, CW_CONF_OBSERVED);
	return n.id;
}

static void sample(struct g *g, uint64_t thread, uint8_t kind, uint64_t ts, uint64_t weight,
		   uint64_t wake, uint8_t exact)
{
	struct cw_sample_row s = { .node = thread, .thread = thread, .ts = ts, .cpu = 0,
				   .kind = kind, .weight_exact = exact, .weight = weight,
				   .inclusion_probability = 1, .stack_probability = 1,
				   .wake = wake, .attr_confidence = CW_CONF_UNKNOWN };

	g->failed |= g->sink.sample(g->sink.ctx, &s) != 0;
}

/* Index, walk with @o, finish. */
static int g_walk(struct g *g, const struct cw_critical_opts *o, struct cw_critical_stats *st)
{
	char err[256];
	int rc;

	if (g->failed) {
		cw_db__abort(g->db);
		return -1;
	}
	if (cw_db__index(g->db, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		cw_db__abort(g->db);
		return -1;
	}
	rc = cw_critical__run(g->db, o, st);
	if (rc) {
		cw_db__abort(g->db);
		return rc;
	}
	return cw_db__finish(g->db, err, sizeof(err)) ? -1 : 0;
}

/*
 * The tiling, in SQL over the views: a count of what is wrong, each
 * query a rule of docs/model.md §9. "0" each.
 */
static const char *const tiling_rules[] = {
	/* a request ended after its begin has segments; one that did not has none */
	"SELECT count(*) FROM nodes r WHERE r.type = 'request' AND r.end_ns IS NOT NULL"
	" AND (r.end_ns > r.start_ns) != EXISTS (SELECT 1 FROM critical_path c WHERE c.request = r.id)",
	/* seq 0 ends at the end, the last begins at the begin, seqs from 0 without a hole */
	"SELECT count(*) FROM (SELECT r.id, r.start_ns, r.end_ns, count(*) AS n, max(c.seq) AS m,"
	" min(c.seq) AS m0, sum(c.end_ns - c.start_ns) AS ns,"
	" max(CASE WHEN c.seq = 0 THEN c.end_ns END) AS e,"
	" min(c.start_ns) AS s FROM critical_path c JOIN nodes r ON r.id = c.request GROUP BY r.id)"
	" WHERE n != m + 1 OR m0 != 0 OR e != end_ns OR s != start_ns OR ns != end_ns - start_ns",
	/* each seam meets */
	"SELECT count(*) FROM critical_path a JOIN critical_path b ON b.request = a.request"
	" AND b.seq = a.seq + 1 WHERE b.end_ns != a.start_ns",
	/* no empty segment */
	"SELECT count(*) FROM critical_path WHERE end_ns <= start_ns",
	/* every code spelled */
	"SELECT count(*) FROM critical_path WHERE kind IS NULL OR confidence IS NULL",
	/* a blocked segment is the last, unknown, with its reason; no other has one */
	"SELECT count(*) FROM critical_path c WHERE (c.kind = 'blocked') != (c.reason IS NOT NULL)"
	" OR (c.kind = 'blocked' AND (c.confidence != 'unknown' OR c.seq !="
	" (SELECT max(seq) FROM critical_path x WHERE x.request = c.request)))",
	/* every node and edge it names exists */
	"SELECT count(*) FROM critical_path c WHERE c.node NOT IN (SELECT id FROM nodes)"
	" OR (c.edge IS NOT NULL AND c.edge NOT IN (SELECT id FROM edges))",
};

static int check_tiling(const char *what)
{
	sqlite3 *h = NULL;
	int bad = 0;

	if (sqlite3_open(path, &h) != SQLITE_OK)
		return -1;
	for (size_t i = 0; i < sizeof(tiling_rules) / sizeof(tiling_rules[0]); i++) {
		const char *got = one(h, tiling_rules[i]);

		if (strcmp(got, "0")) {
			fprintf(stderr, "%s: rule %zu: %s\n", what, i, got);
			bad = 1;
		}
	}
	sqlite3_close(h);
	return bad ? -1 : 0;
}

static uint64_t rnd(uint64_t n)
{
	return n ? next_rand() % n : 0;
}

static const uint8_t object_types[] = { CW_NODE_IO_REQUEST, CW_NODE_WORK_ITEM, CW_NODE_TIMER,
					CW_NODE_PACKET, CW_NODE_BLOCK_REQUEST,
					CW_NODE_RUNTIME_TASK, CW_NODE_RESOURCE };
static const uint8_t birth_types[] = { CW_EDGE_SUBMIT, CW_EDGE_QUEUE, CW_EDGE_ARM, CW_EDGE_SPAWN,
				       CW_EDGE_PUNT, CW_EDGE_COMPLETE };

/* A random graph, often a lying one, from the generator's state. */
static void random_graph(struct g *g, uint64_t *threads, size_t nt, uint64_t *objs, size_t no,
			 size_t nreq)
{
	const uint64_t span = 100000;

	for (size_t i = 0; i < nt; i++) {
		int born = rnd(3) == 0;
		int64_t start = born ? (int64_t)rnd(rnd(4) ? span / 50 : span) : -1;

		threads[i] = node(g, CW_NODE_THREAD, start, (uint8_t)born,
				  (int8_t)(rnd(8) ? 1 : rnd(2) ? 0 : -1));
	}
	for (size_t i = 0; i < no; i++)
		objs[i] = node(g, object_types[rnd(sizeof(object_types))], (int64_t)rnd(span),
			       (uint8_t)(rnd(5) != 0), -1);
	/* births and spawns: from anything (a cycle of objects, a thread its
	 * own parent), at any time, a few with no src */
	for (size_t i = 0; i < nt; i++)
		if (rnd(4))
			edge(g, CW_EDGE_SPAWN, rnd(5) ? threads[rnd(nt)] : 0, threads[i],
			     rnd(rnd(4) ? span / 50 : span), (uint8_t)rnd(CW_CONF_N));
	for (size_t i = 0; i < no; i++)
		for (uint64_t k = rnd(3); k--;)
			edge(g, birth_types[rnd(sizeof(birth_types))],
			     rnd(6) ? (rnd(2) ? threads[rnd(nt)] : objs[rnd(no)]) : 0,
			     rnd(8) ? objs[i] : threads[rnd(nt)], rnd(span), (uint8_t)rnd(CW_CONF_N));
	/* resumes of tasks, to threads and to other things */
	for (size_t i = 0; i < no; i++)
		if (rnd(3) == 0)
			edge(g, CW_EDGE_RESUME, objs[i], rnd(6) ? threads[rnd(nt)] : objs[rnd(no)],
			     rnd(span), CW_CONF_OBSERVED);
	/* waits, mostly one after another on each thread, with a wake in
	 * them, now and then overlapping, woken outside, or without one */
	for (size_t i = 0; i < nt; i++) {
		uint64_t t = rnd(span / 10);

		for (uint64_t k = rnd(80); k--;) {
			uint64_t w = 1 + rnd(rnd(4) ? 300 : 3000), wake = 0, wts;

			t += rnd(rnd(4) ? 3000 : 1);
			if (rnd(6))
				sample(g, threads[i], CW_SAMPLE_KIND_CPU, t + rnd(w), 1000, 0, 1);
			wts = rnd(8) ? t + 1 + rnd(w) : rnd(span);
			if (rnd(7)) {
				uint64_t src = rnd(8) ? (rnd(2) ? threads[rnd(nt)] : objs[rnd(no)]) : 0;

				wake = edge(g, rnd(5) ? CW_EDGE_WAKE : CW_EDGE_FIRE, src, threads[i], wts,
					    (uint8_t)(src ? rnd(2) : CW_CONF_UNKNOWN));
			}
			sample(g, threads[i], CW_SAMPLE_KIND_OFFCPU, t, w, rnd(10) ? wake : 0,
			       (uint8_t)(rnd(6) != 0));
			t += rnd(5) ? w : w / 2;
		}
	}
	/* completions and punts, for the io-wq rule */
	for (size_t i = 0; i < no; i++)
		if (rnd(3) == 0) {
			uint64_t th = threads[rnd(nt)], ts = rnd(span);

			edge(g, CW_EDGE_PUNT, objs[i], th, ts, CW_CONF_RECONSTRUCTED);
			edge(g, CW_EDGE_COMPLETE, objs[i], th, ts + rnd(500), CW_CONF_OBSERVED);
		}
	for (size_t i = 0; i < nreq; i++) {
		uint64_t s = rnd(span), th = threads[rnd(nt)];
		int64_t e = rnd(10) ? (int64_t)(s + rnd(span / 4)) : rnd(3) ? (int64_t)rnd(span) : -1;

		request(g, th, rnd(8) ? th : rnd(2) ? objs[rnd(no)] : threads[rnd(nt)], s, e);
	}
}

/* The rows of critical_rows, as one text. */
static char *dump_rows(void)
{
	sqlite3 *h = NULL;
	char *out = NULL;

	if (sqlite3_open(path, &h) == SQLITE_OK)
		out = strdup(one(h, "SELECT count(*) || ':' || total(request * 7 + seq * 13 + node * 17"
				    " + kind * 19 + start_ns * 3 + (start_ns + end_rel) * 5 + confidence * 23"
				    " + coalesce(edge, 0) * 29 + coalesce(reason, 0) * 31)"
				    " FROM critical_rows"));
	sqlite3_close(h);
	return out;
}

/*
 * Random graphs: the tiling holds whatever the graph, and the same graph
 * gives the same rows. With waits not recorded, every walk is one stop.
 */
static void test_random(void)
{
	enum { NT = 12, NO = 30, NREQ = 40, ROUNDS = 50 };
	uint64_t threads[NT], objs[NO];

	for (int round = 0; round < ROUNDS; round++) {
		uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(round + 1);
		struct cw_breaks *br = cw_breaks__new();
		struct cw_critical_opts o = { .waits_recorded = round % 10 != 9, .breaks = br };
		struct cw_critical_stats st;
		char *first = NULL, *second;
		struct g g;

		CHECK(br, "breaks");
		if (round % 3 == 0) {
			struct cw_break b = { .start_ns = rnd(100000), .cpu = -1, .stream = "edge",
					      .class = CW_BREAK_NO_CLASS, .lost = 1 };

			b.end_ns = b.start_ns + rnd(5000);
			CHECK(cw_breaks__add(br, &b) == 0, "break");
		}
		cw_breaks__finish(br);
		for (int pass = 0; pass < 2; pass++) {
			rng = seed;
			CHECK(g_open(&g) == 0, "open");
			random_graph(&g, threads, NT, objs, NO, NREQ);
			CHECK(g_walk(&g, &o, &st) == 0, "round %d: walk", round);
			CHECK(st.requests > 0, "round %d: no requests walked", round);
			CHECK(check_tiling("random") == 0, "round %d (seed %llu): tiling", round,
			      (unsigned long long)seed);
			if (!o.waits_recorded)
				CHECK(st.segments <= st.requests, "round %d: %llu segments for %llu"
				      " requests with waits not recorded", round,
				      (unsigned long long)st.segments, (unsigned long long)st.requests);
			second = dump_rows();
			CHECK(second, "dump");
			if (!pass) {
				first = second;
				continue;
			}
			CHECK(!strcmp(first, second), "round %d: not the same rows twice: %s, %s",
			      round, first, second);
			free(first);
			free(second);
		}
		cw_breaks__free(br);
	}
	unlink(path);
	passes++;
	printf("ok random (%d graphs, each twice)\n", ROUNDS);
}

/*
 * A chain longer than a walk's bound: two threads that wake each other
 * LINKS times, and NREQ requests on the first that all end at the
 * chain's end, each of which would walk the whole chain back. The first
 * walks are cut by their bound; once the budget is spent every request
 * left gets one stop; the rows read stay within the budget (and a few
 * single reads of the step that found it spent); every request tiles.
 */
static void test_bounds(void)
{
	enum { LINKS = CW_CRIT_STEPS + 4000, NREQ = 300 };
	/* room for a few walks cut by their bound (about 5 rows a step) */
	const uint64_t budget = 12 * CW_CRIT_STEPS;
	struct cw_critical_opts o = { .waits_recorded = 1, .budget = budget };
	struct cw_critical_stats st;
	uint64_t a, b, t = 1000;
	struct g g;

	CHECK(g_open(&g) == 0, "open");
	a = node(&g, CW_NODE_THREAD, -1, 0, 1);
	b = node(&g, CW_NODE_THREAD, -1, 0, 1);
	edge(&g, CW_EDGE_SPAWN, 0, a, 10, CW_CONF_UNKNOWN);
	edge(&g, CW_EDGE_SPAWN, 0, b, 10, CW_CONF_UNKNOWN);
	/* link k: the thread of parity k blocks at t, the other wakes it at
	 * t + 50, it runs again at t + 60 */
	for (uint64_t k = 0; k < LINKS; k++) {
		uint64_t me = k % 2 ? b : a, other = k % 2 ? a : b;
		uint64_t wake = edge(&g, CW_EDGE_WAKE, other, me, t + 50, CW_CONF_OBSERVED);

		sample(&g, me, CW_SAMPLE_KIND_OFFCPU, t, 60, wake, 1);
		t += 55;
	}
	for (uint64_t i = 0; i < NREQ; i++)
		request(&g, a, a, 500 + i, (int64_t)t + 100);
	CHECK(g_walk(&g, &o, &st) == 0, "walk");
	CHECK(check_tiling("bounds") == 0, "tiling");
	CHECK(st.requests == NREQ, "%llu requests", (unsigned long long)st.requests);
	CHECK(st.bounded >= 1, "no walk was cut by its bound (%llu rows read)",
	      (unsigned long long)st.rows_read);
	CHECK(st.unwalked >= NREQ - 5, "only %llu requests met the spent budget",
	      (unsigned long long)st.unwalked);
	CHECK(st.rows_read <= budget + 8 * NREQ, "%llu rows read for a budget of %llu",
	      (unsigned long long)st.rows_read, (unsigned long long)budget);
	CHECK(st.segments < 3 * CW_CRIT_STEPS * (NREQ - st.unwalked) + NREQ, "%llu segments",
	      (unsigned long long)st.segments);
	unlink(path);
	passes++;
	printf("ok bounds (%llu walked whole, %llu cut by their bound, %llu by the budget, "
	       "%llu rows read)\n", (unsigned long long)st.whole, (unsigned long long)st.bounded,
	       (unsigned long long)st.unwalked, (unsigned long long)st.rows_read);
}

/*
 * critical_path spells every code as analyze/model.h's names do, and
 * takes its rows back through its trigger; a blocked row of every
 * reason.
 */
static void test_codes(void)
{
	char want[8192], *w = want, sql[512];
	struct g g;
	char err[256];
	sqlite3 *h = NULL;
	const char *got;
	uint64_t r, t;
	uint32_t seq = 0;

	CHECK(g_open(&g) == 0, "open");
	t = node(&g, CW_NODE_THREAD, -1, 0, 1);
	r = request(&g, t, t, 0, 1000);
	CHECK(cw_db__index(g.db, err, sizeof(err)) == 0, "index: %s", err);
	for (int k = 0; k < CW_CRIT_N; k++)
		for (int c = 0; c < CW_CONF_N; c++)
			for (int s = 0; s < CW_STOP_N; s++) {
				struct cw_crit_row row = { .request = r, .node = t, .seq = seq,
							   .kind = (uint8_t)k, .confidence = (uint8_t)c,
							   .stop = (uint8_t)s, .start_ns = seq,
							   .end_ns = seq + 1, .edge = s % 2 };

				CHECK(cw_db__crit_row(g.db, &row) == 0, "row");
				w += snprintf(w, want + sizeof(want) - w, "%s%s/%s/%s", seq ? " " : "",
					      cw_crit_kind_names[k], cw_confidence_names[c],
					      s ? cw_crit_stop_names[s] : "NULL");
				seq++;
			}
	CHECK(cw_db__finish(g.db, err, sizeof(err)) == 0, "finish: %s", err);
	CHECK(sqlite3_open(path, &h) == SQLITE_OK, "open");
	got = one(h, "SELECT group_concat(kind || '/' || confidence || '/' || coalesce(reason, 'NULL'),"
		     " ' ') FROM (SELECT * FROM critical_path ORDER BY seq)");
	CHECK(!strcmp(got, want), "critical_path read\n  %s\nnot\n  %s", got, want);
	sqlite3_close(h);
	CHECK(sqlite3_open(":memory:", &h) == SQLITE_OK, "open");
	CHECK(sqlite3_exec(h, cw_tables_sql, NULL, NULL, NULL) == SQLITE_OK, "schema");
	snprintf(sql, sizeof(sql), "ATTACH '%s' AS a", path);
	CHECK(sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK, "attach");
	CHECK(sqlite3_exec(h, "INSERT INTO main.critical_path SELECT * FROM a.critical_path", NULL,
			   NULL, NULL) == SQLITE_OK, "insert: %s", sqlite3_errmsg(h));
	got = one(h, "SELECT ((SELECT count(*) FROM (SELECT * FROM main.critical_path EXCEPT"
		     " SELECT * FROM a.critical_path)) + (SELECT count(*) FROM (SELECT * FROM"
		     " a.critical_path EXCEPT SELECT * FROM main.critical_path))) || ' of ' ||"
		     " (SELECT count(*) FROM main.critical_path)");
	snprintf(want, sizeof(want), "0 of %u", seq);
	CHECK(!strcmp(got, want), "critical_path through its trigger: %s", got);
	CHECK(sqlite3_exec(h, "DELETE FROM main.critical_path", NULL, NULL, NULL) == SQLITE_OK,
	      "delete");
	got = one(h, "SELECT count(*) FROM main.critical_rows");
	CHECK(!strcmp(got, "0"), "%s rows left after DELETE", got);
	sqlite3_close(h);
	unlink(path);
	passes++;
	printf("ok codes\n");
}

/*
 * request_critical's mechanisms (docs/model.md §9): a runnable or blocked
 * segment whose edge ended a resource wait is that resource's kind, read
 * from its scope (a composite identity's second scope, a program's kind
 * with a space or a '/'); a kind that spells another mechanism is
 * 'resource_wait'; of two nested waits one wake ended, the latest begun;
 * a handoff keeps its object's; the rest as without waits (running and a
 * plain runnable NULL, blocked futex, wake or unknown).
 */
static void test_mechanisms(void)
{
	static const struct {
		const char *scope, *name, *want;
	} res[] = {
		{ "pid:1/lock", "lock 1663/5/16397/0/0", "lock" },
		{ "pid:1/lwlock/lwlock LockManager", "lwlock LockManager", "lwlock" },
		{ "pid:1/my mutex", "my mutex", "my mutex" },
		{ "pid:1/a/b", "a/b", "a/b" },
		{ "pid:1/timer", "timer", "resource_wait" },
		{ "pid:1/wake", "wake", "resource_wait" },
		{ "pid:1", "nokind", "resource_wait" },
	};
	enum { NRES = sizeof(res) / sizeof(res[0]) };
	struct mseg {
		uint8_t kind;
		uint64_t node, edge, request;
		const char *want;
	} seg[NRES + 16];
	struct cw_edge fx = { .type = CW_EDGE_WAKE, .ts = 7300, .confidence = CW_CONF_OBSERVED,
			      .reason = "futex", .interrupted = -1 };
	char want[1024] = "", err[256];
	uint64_t t, o, tm, e, rid[NRES];
	size_t ns = 0, wl = 0;
	sqlite3 *h = NULL;
	const char *got;
	struct g g;

	CHECK(g_open(&g) == 0, "open");
	t = node(&g, CW_NODE_THREAD, -1, 0, 1);
	o = node(&g, CW_NODE_THREAD, -1, 0, 1);
	tm = node(&g, CW_NODE_TIMER, 5, 1, -1);
	for (size_t i = 0; i < NRES; i++) {
		struct cw_node n = { .id = rid[i] = ++g.nodes, .type = CW_NODE_RESOURCE,
				     .scope = res[i].scope, .key = i, .pid = 1, .tid = -1,
				     .start_ns = -1, .end_ns = -1, .traced = -1 };

		snprintf(n.name, sizeof(n.name), "%s", res[i].name);
		g.failed |= g.sink.node(g.sink.ctx, &n) != 0;
		e = edge(&g, CW_EDGE_WAKE, o, t, 100 * i + 40, CW_CONF_OBSERVED);
		g.failed |= g.sink.wait(g.sink.ctx, &(struct cw_wait_row){
			.resource = n.id, .waiter = t, .start_ns = 100 * i + 1,
			.end_ns = 100 * i + 50, .wake_edge = e, .waker = o,
			.confidence = CW_CONF_OBSERVED }) != 0;
		seg[ns++] = (struct mseg){ CW_CRIT_RUNNABLE, t, e, 0, res[i].want };
	}
	/* an lwlock wait inside a lock wait, one wake ending both: the
	 * lwlock's; a blocked stop at it (its cause unknown) too */
	e = edge(&g, CW_EDGE_WAKE, 0, t, 5000, CW_CONF_UNKNOWN);
	g.failed |= g.sink.wait(g.sink.ctx, &(struct cw_wait_row){
		.resource = rid[0], .waiter = t, .start_ns = 4000, .end_ns = 5100, .wake_edge = e,
		.confidence = CW_CONF_UNKNOWN, .reason = "waker unknown" }) != 0;
	g.failed |= g.sink.wait(g.sink.ctx, &(struct cw_wait_row){
		.resource = rid[1], .waiter = t, .start_ns = 4500, .end_ns = 5050, .wake_edge = e,
		.confidence = CW_CONF_UNKNOWN, .reason = "waker unknown" }) != 0;
	seg[ns++] = (struct mseg){ CW_CRIT_RUNNABLE, t, e, 0, "lwlock" };
	seg[ns++] = (struct mseg){ CW_CRIT_BLOCKED, t, e, 0, "lwlock" };
	/* a timer's fire that ended a lock wait: the handoff is the timer's,
	 * the runnable segment after it the lock's */
	e = edge(&g, CW_EDGE_FIRE, tm, t, 6000, CW_CONF_OBSERVED);
	g.failed |= g.sink.wait(g.sink.ctx, &(struct cw_wait_row){
		.resource = rid[0], .waiter = t, .start_ns = 5500, .end_ns = 6100, .wake_edge = e,
		.waker = tm, .confidence = CW_CONF_OBSERVED }) != 0;
	seg[ns++] = (struct mseg){ CW_CRIT_HANDOFF, tm, e, 0, "timer" };
	seg[ns++] = (struct mseg){ CW_CRIT_RUNNABLE, t, e, 0, "lock" };
	/* no resource wait: as without the adapter */
	seg[ns++] = (struct mseg){ CW_CRIT_RUNNING, t, 0, 0, "NULL" };
	e = edge(&g, CW_EDGE_WAKE, o, t, 7000, CW_CONF_OBSERVED);
	seg[ns++] = (struct mseg){ CW_CRIT_RUNNABLE, t, e, 0, "NULL" };
	seg[ns++] = (struct mseg){ CW_CRIT_BLOCKED, t, e, 0, "wake" };
	e = edge(&g, CW_EDGE_WAKE, 0, t, 7200, CW_CONF_UNKNOWN);
	seg[ns++] = (struct mseg){ CW_CRIT_BLOCKED, t, e, 0, "unknown" };
	fx.id = ++g.edges;
	fx.src = o;
	fx.dst = t;
	g.failed |= g.sink.edge(g.sink.ctx, &fx) != 0;
	seg[ns++] = (struct mseg){ CW_CRIT_BLOCKED, t, fx.id, 0, "futex" };
	/* a request each, read back in id order */
	for (size_t i = 0; i < ns; i++) {
		seg[i].request = request(&g, t, t, 0, 10);
		wl += (size_t)snprintf(want + wl, sizeof(want) - wl, "%s%s", i ? "|" : "", seg[i].want);
	}
	CHECK(!g.failed, "graph");
	CHECK(cw_db__index(g.db, err, sizeof(err)) == 0, "index: %s", err);
	for (size_t i = 0; i < ns; i++) {
		struct cw_crit_row c = { .request = seg[i].request, .node = seg[i].node, .seq = 0,
					 .kind = seg[i].kind, .confidence = CW_CONF_OBSERVED,
					 .edge = seg[i].edge,
					 .stop = seg[i].kind == CW_CRIT_BLOCKED ? 1 : 0,
					 .start_ns = 0, .end_ns = 10 };

		CHECK(cw_db__crit_row(g.db, &c) == 0, "row %zu", i);
	}
	CHECK(cw_db__finish(g.db, err, sizeof(err)) == 0, "finish: %s", err);
	CHECK(sqlite3_open(path, &h) == SQLITE_OK, "open");
	got = one(h, "SELECT group_concat(coalesce(mechanism, 'NULL'), '|') FROM"
		     " (SELECT mechanism FROM request_critical ORDER BY request)");
	CHECK(!strcmp(got, want), "request_critical's mechanisms\n  %s\nnot\n  %s", got, want);
	/* a segment a row, each its request's whole */
	got = one(h, "SELECT count(*) || ' ' || sum(segments = 1 AND share = 1.0) FROM request_critical");
	snprintf(want, sizeof(want), "%zu %zu", ns, ns);
	CHECK(!strcmp(got, want), "request_critical: %s rows, not %s", got, want);
	sqlite3_close(h);
	unlink(path);
	passes++;
	printf("ok mechanisms\n");
}

/*
 * A break of the sample stream over a stretch that would be running: in
 * a trace whose waits are sample records (format 1.8) a wait could hide
 * in it, so the walk stops ('coverage break'); from 1.9 a wait is its
 * switch, on the edge ring, so the stretch ran. A break of the edges
 * stops it either way.
 */
static void test_sample_breaks(void)
{
	static const struct {
		const char *stream;
		int in_samples;
		const char *want;
	} cases[] = {
		{ CW_BREAK_STREAM_SAMPLE, 1, "blocked/unknown/coverage break" },
		/* reconstructed: the thread's first moment is its first record */
		{ CW_BREAK_STREAM_SAMPLE, 0, "running/reconstructed/NULL" },
		{ "edge", 0, "blocked/unknown/coverage break" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cw_break b = { .start_ns = 400, .end_ns = 500, .cpu = -1,
				      .stream = cases[i].stream, .class = CW_BREAK_NO_CLASS,
				      .lost = 3 };
		struct cw_breaks *br = cw_breaks__new();
		struct cw_critical_opts o = { .waits_recorded = 1, .breaks = br,
					      .waits_in_samples = cases[i].in_samples };
		struct cw_critical_stats st;
		sqlite3 *h = NULL;
		const char *got;
		uint64_t t;
		struct g g;

		CHECK(br && cw_breaks__add(br, &b) == 0, "break");
		cw_breaks__finish(br);
		CHECK(g_open(&g) == 0, "open");
		t = node(&g, CW_NODE_THREAD, -1, 0, 1);
		edge(&g, CW_EDGE_SPAWN, 0, t, 10, CW_CONF_UNKNOWN);
		request(&g, t, t, 100, 900);
		CHECK(g_walk(&g, &o, &st) == 0, "walk");
		CHECK(sqlite3_open(path, &h) == SQLITE_OK, "open");
		got = one(h, "SELECT group_concat(kind || '/' || confidence || '/' ||"
			     " coalesce(reason, 'NULL'), ' ') FROM (SELECT * FROM critical_path"
			     " ORDER BY seq)");
		CHECK(!strcmp(got, cases[i].want), "a %s break, waits in samples %d: %s, not %s",
		      cases[i].stream, cases[i].in_samples, got, cases[i].want);
		sqlite3_close(h);
		cw_breaks__free(br);
		unlink(path);
	}
	passes++;
	printf("ok sample breaks\n");
}

int main(void)
{
	test_codes();
	test_mechanisms();
	test_random();
	test_bounds();
	test_sample_breaks();
	printf("test_critical: %d passed, %d failed\n", passes, failures);
	return failures != 0;
}
