// SPDX-License-Identifier: MIT
/*
 * The adapter class (analyze/cls_adapter.c) through the join, with a sink
 * that counts what it is given:
 *  - the probe table is bounded: past MAX_PROBES, probe records are
 *    counted as dropped and their hits are hits of an unknown id;
 *  - the table of threads with something open is bounded by --max-live:
 *    a hostile trace of threads that all begin a wait and never end it
 *    keeps at most that many, counts the rest, and writes every wait it
 *    kept (end unknown) at the end of the trace; threads whose requests
 *    ended elsewhere are swept out of it, not counted;
 *  - random hits, each in a buffer of exactly its size (AddressSanitizer
 *    catches any read past it), with wakes between them, are each either
 *    joined or counted once as unknown, unmapped or malformed, every
 *    wait row names nodes and edges that were written before it, and no
 *    wake is the wake of two waits, however they nest or cross
 *    (docs/model.md §6, nested waits);
 *  - random nested and crossing waits on a few threads (lost ends
 *    included), with wakes between them: each wait's wake is what the
 *    rule of docs/model.md §6 (nested waits) says, worked out by brute
 *    force over the whole stream: its own last wake, outside the waits
 *    nested in it, or none when a wake after that one lies in a wait
 *    begun in it that was not seen to end in it;
 *  - the adapter rows map exactly the probes of schema/adapters.h (what
 *    the capture attaches, and their string arguments), no other probe
 *    of the contract or of PostgreSQL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/check.h"
#include "analyze/join.h"
#include "schema/adapters.h"

#define MAX_WAKE_EDGE (1u << 20)

struct log {
	uint64_t nodes, edges, waits;
	uint64_t max_node, max_edge;
	int wait_bad; /* a wait named a node or edge not written yet */
	int wake_twice; /* an edge was the wake of two waits */
	uint8_t woke[MAX_WAKE_EDGE]; /* by edge id: the wake of a wait */
};

static struct log lg;

static int on_node(void *ctx, const struct cw_node *n)
{
	struct log *l = ctx;

	l->nodes++;
	if (n->id > l->max_node)
		l->max_node = n->id;
	return 0;
}

static int on_edge(void *ctx, const struct cw_edge *e)
{
	struct log *l = ctx;

	l->edges++;
	if (e->id > l->max_edge)
		l->max_edge = e->id;
	return 0;
}

/* Nodes are written when they leave the live set, so a wait may name one
 * still live: only the edge must exist already. */
static int on_wait(void *ctx, const struct cw_wait_row *w)
{
	struct log *l = ctx;

	l->waits++;
	if (!w->resource || !w->waiter || (w->wake_edge && w->wake_edge > l->max_edge) ||
	    (w->end_ns >= 0 && (uint64_t)w->end_ns < w->start_ns) || w->wake_edge >= MAX_WAKE_EDGE)
		l->wait_bad = 1;
	else if (w->wake_edge && l->woke[w->wake_edge]++)
		l->wake_twice = 1;
	return 0;
}

static struct cw_join *new_join(size_t max_live)
{
	static struct cw_sink sink = { .node = on_node, .edge = on_edge, .wait = on_wait };
	struct cw_join_opts o = { .max_live = max_live, .no_symbols = 1 };

	memset(&lg, 0, sizeof(lg));
	sink.ctx = &lg;
	return cw_join__new(&sink, &o);
}

/* A probe record for @prov's probe @name, id @id. */
static int add_probe_of(struct cw_join *j, const char *prov, uint32_t id, const char *name,
			uint8_t nargs, uint8_t str_arg, uint64_t ts)
{
	static const char path[] = "/app";
	uint8_t buf[256] = { 0 };
	struct cw_usdt_probe *p = (void *)buf;
	size_t pl = strlen(prov), nl = strlen(name);
	size_t len = sizeof(*p) + pl + nl + sizeof(path) - 1;

	p->hdr.type = CW_REC_META_USDT;
	p->hdr.size = (uint16_t)((len + 7) & ~(size_t)7);
	p->hdr.ts = ts;
	p->id = id;
	p->nargs = nargs;
	p->str_arg = str_arg;
	p->provider_len = (uint16_t)pl;
	p->name_len = (uint16_t)nl;
	p->path_len = sizeof(path) - 1;
	memcpy(buf + sizeof(*p), prov, pl);
	memcpy(buf + sizeof(*p) + pl, name, nl);
	memcpy(buf + sizeof(*p) + pl + nl, path, sizeof(path) - 1);
	return cw_join__record(j, &p->hdr);
}

/* ... for causeway's probe @name. */
static int add_probe(struct cw_join *j, uint32_t id, const char *name, uint8_t nargs,
		     uint8_t str_arg, uint64_t ts)
{
	return add_probe_of(j, "causeway", id, name, nargs, str_arg, ts);
}

/* A hit of probe @probe by thread @tid of process @pid with a kind or
 * name string @str (NULL: a record without one). */
static int hit_in(struct cw_join *j, uint32_t probe, uint32_t tid, uint32_t pid, uint64_t ts,
		  int64_t a0, int64_t a1, const char *str)
{
	struct cw_usdt_str r = { 0 };

	r.u.hdr.type = str ? CW_REC_USDT_STR : CW_REC_USDT;
	r.u.hdr.size = str ? sizeof(struct cw_usdt_str) : sizeof(struct cw_usdt);
	r.u.hdr.ts = ts;
	r.u.task.tid = tid;
	r.u.task.pid = pid;
	r.u.task_start = tid;
	r.u.probe = probe;
	r.u.nargs = 2;
	r.u.args[0] = a0;
	r.u.args[1] = a1;
	if (str)
		snprintf(r.str, sizeof(r.str), "%s", str);
	return cw_join__record(j, &r.u.hdr);
}

/* ... by a thread that is its own process. */
static int hit(struct cw_join *j, uint32_t probe, uint32_t tid, uint64_t ts, int64_t a0,
	       int64_t a1, const char *str)
{
	return hit_in(j, probe, tid, tid, ts, a0, a1, str);
}

static void test_probe_bound(void)
{
	struct cw_join *j = new_join(0);
	struct cw_join_stats st;
	uint32_t n = 20000;

	CHECK(j, "join");
	for (uint32_t i = 1; i <= n; i++)
		CHECK(!add_probe(j, i, "task_spawn", 2, 0xff, 1), "probe %u", i);
	/* a repeated id is not believed either */
	CHECK(!add_probe(j, 1, "task_exit", 1, 0xff, 1), "repeat");
	CHECK(!hit(j, 1, 10, 100, 5, 0, NULL), "hit 1");
	CHECK(!hit(j, n, 10, 200, 6, 0, NULL), "hit n");
	CHECK(!cw_join__finish(j), "finish");
	cw_join__stats(j, &st);
	CHECK(cw_join_stats__get(&st, "usdt_probes") == 16384 && cw_join_stats__get(&st, "usdt_probes_dropped") == n - 16384 + 1,
	      "probes %llu dropped %llu", (unsigned long long)cw_join_stats__get(&st, "usdt_probes"),
	      (unsigned long long)cw_join_stats__get(&st, "usdt_probes_dropped"));
	CHECK(cw_join_stats__get(&st, "usdt_hits") == 1 && cw_join_stats__get(&st, "usdt_hits_unknown_probe") == 1, "hits %llu unknown %llu",
	      (unsigned long long)cw_join_stats__get(&st, "usdt_hits"), (unsigned long long)cw_join_stats__get(&st, "usdt_hits_unknown_probe"));
	cw_join__free(j);
	passes++;
	printf("ok probe_bound\n");
}

static void test_thread_bound(void)
{
	size_t max_live = 1000;
	uint32_t threads = 5000;
	struct cw_join *j = new_join(max_live);
	struct cw_join_stats st;

	CHECK(j, "join");
	CHECK(!add_probe(j, 1, "resource_wait_begin", 2, 0, 1), "probe");
	for (uint32_t t = 0; t < threads; t++)
		CHECK(!hit(j, 1, 100 + t, 1000 + t, 0, t, "slot"), "wait %u", t);
	CHECK(!cw_join__finish(j), "finish");
	cw_join__stats(j, &st);
	CHECK(cw_join_stats__get(&st, "adapter_state_dropped") == threads - max_live, "dropped %llu",
	      (unsigned long long)cw_join_stats__get(&st, "adapter_state_dropped"));
	CHECK(lg.waits == max_live && cw_join_stats__get(&st, "resource_waits") == max_live, "waits %llu",
	      (unsigned long long)lg.waits);
	CHECK(!lg.wait_bad, "a wait row names what does not exist");
	cw_join__free(j);
	passes++;
	printf("ok thread_bound\n");
}

/* Requests begun on one thread and ended on another (an async server)
 * leave the first thread's entry stale: the full table is swept, so they
 * never crowd out the threads that have something open. */
static void test_stale_sweep(void)
{
	size_t max_live = 1000;
	uint32_t threads = 5000;
	struct cw_join *j = new_join(max_live);
	struct cw_join_stats st;

	CHECK(j, "join");
	CHECK(!add_probe(j, 1, "request_begin", 2, 1, 1), "probe");
	CHECK(!add_probe(j, 2, "request_end", 2, 0xff, 1), "probe");
	for (uint32_t t = 0; t < threads; t++) {
		CHECK(!hit_in(j, 1, 100 + t, 1, 1000 + 2 * t, t, 0, "req"), "begin %u", t);
		CHECK(!hit_in(j, 2, 99, 1, 1001 + 2 * t, t, 0, NULL), "end %u", t);
	}
	CHECK(!cw_join__finish(j), "finish");
	cw_join__stats(j, &st);
	CHECK(cw_join_stats__get(&st, "adapter_state_dropped") == 0 && cw_join_stats__get(&st, "usdt_hits") == 2 * threads,
	      "dropped %llu hits %llu", (unsigned long long)cw_join_stats__get(&st, "adapter_state_dropped"),
	      (unsigned long long)cw_join_stats__get(&st, "usdt_hits"));
	cw_join__free(j);
	passes++;
	printf("ok stale_sweep\n");
}

static const char *const probes[] = {
	"task_spawn", "task_wake", "task_poll_begin", "task_poll_end", "task_exit",
	"request_begin", "request_end", "resource_acquire", "resource_release",
	"resource_wait_begin", "resource_wait_end",
};
#define NPROBES (sizeof(probes) / sizeof(probes[0]))

/* A hit, well-formed or broken, in a buffer of exactly its size. Probe
 * ids 1..NPROBES are declared, NPROBES + 1 is declared but unmapped,
 * beyond that unknown. */
static struct cw_hdr *random_hit(uint64_t ts, int *is_short)
{
	int str = next_rand() % 2;
	size_t size = str ? sizeof(struct cw_usdt_str) : sizeof(struct cw_usdt);
	struct cw_usdt_str *r;

	if (next_rand() % 10 == 0)
		size = 16 + 8 * (next_rand() % (size / 8 - 2)); /* shorter than the struct */
	*is_short = size < (str ? sizeof(struct cw_usdt_str) : sizeof(struct cw_usdt));
	r = calloc(1, size);
	r->u.hdr.type = str ? CW_REC_USDT_STR : CW_REC_USDT;
	r->u.hdr.size = (uint16_t)size;
	r->u.hdr.ts = ts;
	if (*is_short)
		return &r->u.hdr;
	r->u.task.tid = 1 + next_rand() % 6;
	r->u.task.pid = next_rand() % 20 ? r->u.task.tid : 99;
	r->u.task_start = r->u.task.tid;
	r->u.probe = 1 + next_rand() % (NPROBES + 3);
	r->u.nargs = next_rand() % 10 ? 2 : next_rand() % 16;
	for (int i = 0; i < CW_USDT_MAX_ARGS; i++)
		r->u.args[i] = (int64_t)(next_rand() % 6);
	if (str) {
		r->str_err = next_rand() % 8 ? 0 : -14;
		if (next_rand() % 10)
			snprintf(r->str, sizeof(r->str), "k%u", (unsigned)(next_rand() % 3));
		else
			memset(r->str, 'x', sizeof(r->str)); /* no NUL */
	}
	return &r->u.hdr;
}

static void test_random(void)
{
	struct cw_join *j = new_join(64);
	uint64_t fed = 0, shorts = 0, malformed_probes;
	struct cw_join_stats st;

	CHECK(j, "join");
	for (size_t i = 0; i < NPROBES; i++)
		CHECK(!add_probe(j, (uint32_t)i + 1, probes[i], 2,
				 i >= 7 ? 0 : i == 5 ? 1 : 0xff, 1), "probe");
	CHECK(!add_probe(j, NPROBES + 1, "not_a_contract_probe", 2, 0xff, 1), "unmapped");
	CHECK(!add_probe(j, NPROBES + 2, "task_spawn", 2, 7, 1), "malformed probe");
	cw_join__stats(j, &st);
	malformed_probes = cw_join_stats__get(&st, "usdt_malformed");
	CHECK(malformed_probes == 1, "malformed probes %llu", (unsigned long long)malformed_probes);
	rng = 0x9e3779b97f4a7c15ull; /* the stream this test has always drawn */
	for (uint64_t ts = 1000; ts < 1000 + 200000; ts += 10) {
		if (next_rand() % 4 == 0) {
			/* a wake between threads, some of them waiting */
			struct cw_wake w = { 0 };

			w.hdr.type = CW_REC_WAKING;
			w.hdr.size = sizeof(w);
			w.hdr.ts = ts;
			w.waker.tid = w.waker.pid = 1 + next_rand() % 6;
			w.wakee.tid = w.wakee.pid = 1 + next_rand() % 6;
			w.waker_start = w.waker.tid;
			w.wakee_start = w.wakee.tid;
			CHECK(!cw_join__record(j, &w.hdr), "wake");
		} else {
			int is_short;
			struct cw_hdr *h = random_hit(ts, &is_short);
			int err = cw_join__record(j, h);

			free(h);
			CHECK(!err, "hit at %llu", (unsigned long long)ts);
			fed++;
			shorts += is_short;
		}
	}
	CHECK(!cw_join__finish(j), "finish");
	cw_join__stats(j, &st);
	CHECK(cw_join_stats__get(&st, "usdt_hits") + cw_join_stats__get(&st, "usdt_hits_unknown_probe") + cw_join_stats__get(&st, "usdt_hits_unmapped") +
			      (cw_join_stats__get(&st, "usdt_malformed") - malformed_probes) + shorts == fed,
	      "hits %llu unknown %llu unmapped %llu malformed %llu short %llu of %llu",
	      (unsigned long long)cw_join_stats__get(&st, "usdt_hits"), (unsigned long long)cw_join_stats__get(&st, "usdt_hits_unknown_probe"),
	      (unsigned long long)cw_join_stats__get(&st, "usdt_hits_unmapped"), (unsigned long long)cw_join_stats__get(&st, "usdt_malformed"),
	      (unsigned long long)shorts, (unsigned long long)fed);
	CHECK(cw_join_stats__get(&st, "usdt_hits") > fed / 4 && cw_join_stats__get(&st, "resource_waits") > 0, "too little joined: %llu hits, %llu waits",
	      (unsigned long long)cw_join_stats__get(&st, "usdt_hits"), (unsigned long long)cw_join_stats__get(&st, "resource_waits"));
	CHECK(lg.waits == cw_join_stats__get(&st, "resource_waits") && !lg.wait_bad, "wait rows %llu of %llu",
	      (unsigned long long)lg.waits, (unsigned long long)cw_join_stats__get(&st, "resource_waits"));
	CHECK(!lg.wake_twice, "a wake ended two waits");
	cw_join__free(j);
	passes++;
	printf("ok random\n");
}

/* The nested-wait test's stream as it was made, and what the join wrote. */
#define NEST_THREADS 3
#define NEST_STEPS 6000
#define NEST_OPEN 3 /* below the class's bound of open waits per thread */

struct nest_wait {
	uint32_t tid;
	uint64_t start, end, lost; /* end 0: not seen; lost: when a new begin dropped it */
	uint64_t got;		    /* the join's wake: its edge's ts, 0: NULL */
	int rows;
};

static struct {
	struct nest_wait w[NEST_STEPS];
	size_t nw;
	uint64_t wake_ts[NEST_STEPS]; /* the wakes, in order */
	uint32_t wake_tid[NEST_STEPS];
	size_t nwakes;
	uint64_t edge_ts[4 * NEST_STEPS]; /* by edge id */
	int bad;
} nest;

static int nest_edge(void *ctx, const struct cw_edge *e)
{
	(void)ctx;
	if (e->id < sizeof(nest.edge_ts) / sizeof(nest.edge_ts[0]))
		nest.edge_ts[e->id] = e->ts;
	else
		nest.bad = 1;
	return 0;
}

/* Every ts of the stream is distinct: a row is found by its start. */
static int nest_row(void *ctx, const struct cw_wait_row *r)
{
	(void)ctx;
	for (size_t i = 0; i < nest.nw; i++) {
		if (nest.w[i].start != r->start_ns)
			continue;
		nest.w[i].rows++;
		nest.w[i].got = r->wake_edge ? nest.edge_ts[r->wake_edge] : 0;
		return 0;
	}
	nest.bad = 1;
	return 0;
}

/* Was wait @x open at @ts (begun before it, not yet ended or dropped)? */
static int nest_open_at(const struct nest_wait *x, uint64_t ts)
{
	uint64_t closed = x->end ? x->end : x->lost;

	return x->start < ts && (!closed || closed > ts);
}

/* The wake docs/model.md §6 gives wait @w, by brute force: 0 for none. */
static uint64_t nest_expected(const struct nest_wait *w)
{
	uint64_t own = 0;
	int unsettled = 0;

	for (size_t k = 0; k < nest.nwakes; k++) {
		uint64_t p = nest.wake_ts[k];
		int inner = 0, settled = 0;

		if (nest.wake_tid[k] != w->tid || p <= w->start || p >= w->end)
			continue;
		for (size_t i = 0; i < nest.nw; i++) {
			const struct nest_wait *x = &nest.w[i];

			if (x == w || x->tid != w->tid || x->start <= w->start || !nest_open_at(x, p))
				continue;
			inner = 1;
			/* nested: both ends seen, ended within w */
			settled |= x->end && x->end < w->end;
		}
		if (!inner) {
			own = p;
			unsettled = 0;
		} else if (!settled) {
			unsettled = 1;
		}
	}
	return unsettled ? 0 : own;
}

static void test_nested(void)
{
	static const char *const tranche[] = { "L0", "L1", "L2", "L3" };
	static struct cw_sink sink = { .node = on_node, .edge = nest_edge, .wait = nest_row };
	struct cw_join_opts o = { .no_symbols = 1 };
	struct cw_join *j;
	size_t open[NEST_THREADS][NEST_OPEN], nopen[NEST_THREADS] = { 0 };
	uint8_t res[NEST_STEPS];
	size_t checked = 0, taken = 0, passed_over = 0;

	memset(&lg, 0, sizeof(lg));
	sink.ctx = &lg;
	j = cw_join__new(&sink, &o);
	CHECK(j, "join");
	CHECK(!add_probe_of(j, "postgresql", 1, "lwlock__wait__start", 2, 0, 1) &&
		      !add_probe_of(j, "postgresql", 2, "lwlock__wait__done", 2, 0, 1),
	      "probes");
	memset(&nest, 0, sizeof(nest));
	rng = 0x5eed5eed5eed5eedull;
	for (uint64_t step = 0, ts = 1000; step < NEST_STEPS; step++, ts += 10) {
		uint32_t t = (uint32_t)(next_rand() % NEST_THREADS), tid = 1 + t;
		unsigned r = (unsigned)(next_rand() % 8);

		if (r < 3 && nopen[t] < NEST_OPEN) {
			/* a begin; one open on the same tranche loses its end */
			uint8_t q = (uint8_t)(next_rand() % 4);
			size_t n = nest.nw++;

			for (size_t i = 0; i < nopen[t]; i++) {
				if (res[open[t][i]] != q)
					continue;
				nest.w[open[t][i]].lost = ts;
				open[t][i] = open[t][--nopen[t]];
				break;
			}
			nest.w[n] = (struct nest_wait){ .tid = tid, .start = ts };
			res[n] = q;
			open[t][nopen[t]++] = n;
			CHECK(!hit(j, 1, tid, ts, 0, 0, tranche[q]), "begin");
		} else if (r < 6 && nopen[t]) {
			/* the end of any open one: the innermost or not */
			size_t i = next_rand() % nopen[t], n = open[t][i];

			nest.w[n].end = ts;
			open[t][i] = open[t][--nopen[t]];
			CHECK(!hit(j, 2, tid, ts, 0, 0, tranche[res[n]]), "end");
		} else {
			struct cw_wake w = { 0 };
			uint32_t waker = 1 + (t + 1 + (uint32_t)(next_rand() % (NEST_THREADS - 1))) % NEST_THREADS;

			w.hdr.type = CW_REC_WAKING;
			w.hdr.size = sizeof(w);
			w.hdr.ts = ts;
			w.waker.tid = w.waker.pid = waker;
			w.wakee.tid = w.wakee.pid = tid;
			w.waker_start = waker;
			w.wakee_start = tid;
			nest.wake_ts[nest.nwakes] = ts;
			nest.wake_tid[nest.nwakes++] = tid;
			CHECK(!cw_join__record(j, &w.hdr), "wake");
		}
	}
	CHECK(!cw_join__finish(j), "finish");
	CHECK(!nest.bad, "a row or an edge the test cannot place");
	for (size_t i = 0; i < nest.nw; i++) {
		const struct nest_wait *w = &nest.w[i];
		uint64_t want;

		CHECK(w->rows == 1, "wait at %llu: %d rows", (unsigned long long)w->start, w->rows);
		if (!w->end)
			continue;
		want = nest_expected(w);
		CHECK(w->got == want, "wait at %llu-%llu on %u: wake at %llu, the rule says %llu",
		      (unsigned long long)w->start, (unsigned long long)w->end, w->tid,
		      (unsigned long long)w->got, (unsigned long long)want);
		checked++;
		taken += want != 0;
		for (size_t k = 0; k < nest.nwakes && want; k++)
			if (nest.wake_tid[k] == w->tid && nest.wake_ts[k] > want &&
			    nest.wake_ts[k] < w->end) {
				passed_over++;
				break;
			}
	}
	/* the stream holds every case: waits with a wake, and waits whose
	 * last wake was passed over for an earlier own one */
	CHECK(checked > 500 && taken > 100 && passed_over > 10, "%zu waits, %zu with a wake, %zu past a later one",
	      checked, taken, passed_over);
	cw_join__free(j);
	passes++;
	printf("ok nested (%zu waits, %zu with a wake, %zu past a later one)\n", checked, taken,
	       passed_over);
}

/*
 * Every probe PostgreSQL ships (src/backend/utils/probes.d, as the
 * stapsdt notes of PostgreSQL 15's postgres list them) and every probe
 * of the contract: the analyzer maps one exactly when schema/adapters.h
 * lists it, so the capture attaches no probe the analyzer cannot join
 * and misses none it can. A row mapping a probe the table lacks, or a
 * table entry no row maps, fails here.
 */
static const struct {
	const char *provider, *name;
} shipped[] = {
	{ "causeway", "task_spawn" },
	{ "causeway", "task_wake" },
	{ "causeway", "task_poll_begin" },
	{ "causeway", "task_poll_end" },
	{ "causeway", "task_exit" },
	{ "causeway", "request_begin" },
	{ "causeway", "request_end" },
	{ "causeway", "resource_acquire" },
	{ "causeway", "resource_release" },
	{ "causeway", "resource_wait_begin" },
	{ "causeway", "resource_wait_end" },
	{ "postgresql", "transaction__start" },
	{ "postgresql", "transaction__commit" },
	{ "postgresql", "transaction__abort" },
	{ "postgresql", "lwlock__acquire" },
	{ "postgresql", "lwlock__release" },
	{ "postgresql", "lwlock__wait__start" },
	{ "postgresql", "lwlock__wait__done" },
	{ "postgresql", "lwlock__condacquire" },
	{ "postgresql", "lwlock__condacquire__fail" },
	{ "postgresql", "lwlock__acquire__or__wait" },
	{ "postgresql", "lwlock__acquire__or__wait__fail" },
	{ "postgresql", "lock__wait__start" },
	{ "postgresql", "lock__wait__done" },
	{ "postgresql", "query__parse__start" },
	{ "postgresql", "query__parse__done" },
	{ "postgresql", "query__rewrite__start" },
	{ "postgresql", "query__rewrite__done" },
	{ "postgresql", "query__plan__start" },
	{ "postgresql", "query__plan__done" },
	{ "postgresql", "query__execute__start" },
	{ "postgresql", "query__execute__done" },
	{ "postgresql", "query__start" },
	{ "postgresql", "query__done" },
	{ "postgresql", "statement__status" },
	{ "postgresql", "sort__start" },
	{ "postgresql", "sort__done" },
	{ "postgresql", "buffer__read__start" },
	{ "postgresql", "buffer__read__done" },
	{ "postgresql", "buffer__flush__start" },
	{ "postgresql", "buffer__flush__done" },
	{ "postgresql", "buffer__write__dirty__start" },
	{ "postgresql", "buffer__write__dirty__done" },
	{ "postgresql", "buffer__sync__start" },
	{ "postgresql", "buffer__sync__written" },
	{ "postgresql", "buffer__sync__done" },
	{ "postgresql", "buffer__checkpoint__start" },
	{ "postgresql", "buffer__checkpoint__sync__start" },
	{ "postgresql", "buffer__checkpoint__done" },
	{ "postgresql", "deadlock__found" },
	{ "postgresql", "checkpoint__start" },
	{ "postgresql", "checkpoint__done" },
	{ "postgresql", "clog__checkpoint__start" },
	{ "postgresql", "clog__checkpoint__done" },
	{ "postgresql", "subtrans__checkpoint__start" },
	{ "postgresql", "subtrans__checkpoint__done" },
	{ "postgresql", "multixact__checkpoint__start" },
	{ "postgresql", "multixact__checkpoint__done" },
	{ "postgresql", "twophase__checkpoint__start" },
	{ "postgresql", "twophase__checkpoint__done" },
	{ "postgresql", "smgr__md__read__start" },
	{ "postgresql", "smgr__md__read__done" },
	{ "postgresql", "smgr__md__write__start" },
	{ "postgresql", "smgr__md__write__done" },
	{ "postgresql", "wal__insert" },
	{ "postgresql", "wal__switch" },
	{ "postgresql", "wal__buffer__write__dirty__start" },
	{ "postgresql", "wal__buffer__write__dirty__done" },
};

static void test_schema_table(void)
{
	size_t listed = 0;

	for (size_t i = 0; i < sizeof(shipped) / sizeof(shipped[0]); i++) {
		const struct cw_adapter_probe *t = cw_adapter_probe(shipped[i].provider,
								   shipped[i].name);
		struct cw_join *j = new_join(64);
		struct cw_join_stats st;

		CHECK(j, "join");
		/* A hit of a probe no row maps is counted as unmapped before
		 * its arguments are looked at. */
		CHECK(!add_probe_of(j, shipped[i].provider, 1, shipped[i].name, 8,
				    t ? t->str_arg : CW_USDT_NO_STR, 1) &&
		      !hit(j, 1, 7, 2, 1, 0, NULL), "records");
		cw_join__stats(j, &st);
		CHECK(cw_join_stats__get(&st, "usdt_hits_unmapped") == !t, "%s %s: %s in schema/adapters.h, %s by a row",
		      shipped[i].provider, shipped[i].name, t ? "listed" : "not listed",
		      cw_join_stats__get(&st, "usdt_hits_unmapped") ? "not mapped" : "mapped");
		cw_join__free(j);
		listed += t != NULL;
	}
	/* Every entry of the table is a probe that exists, checked above. */
	CHECK(listed == CW_ADAPTER_NPROBES, "%zu of the %zu table entries are shipped probes",
	      listed, CW_ADAPTER_NPROBES);
	passes++;
	printf("ok schema table\n");
}

int main(void)
{
	test_probe_bound();
	test_thread_bound();
	test_stale_sweep();
	test_random();
	test_nested();
	test_schema_table();
	printf("test_adapter: %d passed, %d failed\n", passes, failures);
	return failures != 0;
}
