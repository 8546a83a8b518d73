// SPDX-License-Identifier: MIT
/*
 * The join engine on random scheduler streams, checked against invariants
 * that must hold whatever the input:
 *  - an interrupt-context wakeup never has a src (docs/model.md §5.6);
 *  - every edge's ends are nodes that were (or will be) written, once;
 *  - an edge joins only generations of the process its record names:
 *    a tid named with another pid is another task (docs/model.md §5.3);
 *  - the live-state bound holds, and whatever it pushed out is counted;
 *  - the same input gives the same output (docs/model.md §5.10).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/check.h"
#include "analyze/join.h"


#define MAXN 200000

struct log {
	struct cw_node nodes[MAXN];
	size_t nn;
	struct cw_edge edges[MAXN];
	uint8_t edge_ctx[MAXN];
	uint32_t edge_pid[MAXN][2]; /* the pids the record names: src end, dst end */
	size_t ne;
	uint8_t cur_ctx;
	uint32_t cur_pid[2];
	uint64_t hash;
};

static struct log logs[2];

static int on_node(void *ctx, const struct cw_node *n)
{
	struct log *l = ctx;

	if (l->nn < MAXN)
		l->nodes[l->nn++] = *n;
	l->hash = (l->hash ^ n->id ^ n->key << 7 ^ n->generation) * 0x100000001b3ull;
	return 0;
}

static int on_edge(void *ctx, const struct cw_edge *e)
{
	struct log *l = ctx;

	if (l->ne < MAXN) {
		l->edge_ctx[l->ne] = l->cur_ctx;
		l->edge_pid[l->ne][0] = l->cur_pid[0];
		l->edge_pid[l->ne][1] = l->cur_pid[1];
		l->edges[l->ne++] = *e;
	}
	l->hash = (l->hash ^ e->src ^ e->dst << 3 ^ e->type ^ e->confidence) * 0x100000001b3ull;
	return 0;
}

/* The pid a record names for @tid: mostly the tid's own, sometimes
 * another process's (a reused tid), so that joins are tested across
 * processes. */
static uint32_t pid_of(uint32_t tid)
{
	return next_rand() % 8 ? tid : 1000 + (uint32_t)(next_rand() % 3);
}

/* A witness: mostly the tid's, sometimes a different task's. */
static uint64_t start_of(uint32_t tid)
{
	return next_rand() % 4 ? tid * 1000ull : tid * 1000ull + 1 + next_rand() % 2;
}

/* Random stream over a small tid space, so tids collide and get reused. */
static void run(struct log *l, uint64_t seed, size_t max_live, size_t n, struct cw_join_stats *st)
{
	struct cw_sink sink = { .ctx = l, .node = on_node, .edge = on_edge };
	struct cw_join_opts o = { .max_live = max_live };
	struct cw_join *j = cw_join__new(&sink, &o);
	uint64_t ts = 1000;

	memset(l, 0, sizeof(*l));
	rng = seed;
	for (size_t i = 0; i < n; i++) {
		uint32_t a = 1 + next_rand() % 40, b = 1 + next_rand() % 40;
		uint64_t r = next_rand() % 10;

		ts += 1 + next_rand() % 100;
		l->cur_ctx = CW_CTX_TASK;
		if (r < 5) {
			struct cw_wake w = { .hdr = { CW_REC_WAKING, sizeof(w), 0,
						      (uint8_t)(next_rand() % 4), 0, ts } };

			w.waker = (struct cw_task){ a, pid_of(a) };
			w.wakee = (struct cw_task){ b, pid_of(b) };
			if (next_rand() % 2) {
				w.waker_start = start_of(a);
				w.wakee_start = start_of(b);
			}
			l->cur_ctx = w.hdr.ctx;
			l->cur_pid[0] = w.waker.pid;
			l->cur_pid[1] = w.wakee.pid;
			cw_join__record(j, &w.hdr);
		} else if (r < 7) {
			struct cw_fork f = { .hdr = { CW_REC_FORK, sizeof(f), 1, 0, 0, ts } };

			f.parent = (struct cw_task){ a, pid_of(a) };
			f.child = (struct cw_task){ b, f.parent.pid };
			f.fork_flags = CW_FORK_THREAD;
			f.child_start = ts;
			l->cur_pid[0] = f.parent.pid;
			l->cur_pid[1] = f.child.pid;
			cw_join__record(j, &f.hdr);
		} else if (r < 8) {
			struct cw_exit e = { .hdr = { CW_REC_EXIT, sizeof(e), 0, 0, 0, ts } };

			e.task = (struct cw_task){ a, pid_of(a) };
			l->cur_pid[0] = l->cur_pid[1] = e.task.pid;
			cw_join__record(j, &e.hdr);
		} else {
			struct cw_switch s = { .hdr = { CW_REC_SWITCH, sizeof(s), 0, 0, 0, ts } };

			s.prev = (struct cw_task){ a, pid_of(a) };
			s.next = (struct cw_task){ b, pid_of(b) };
			l->cur_pid[0] = s.prev.pid;
			l->cur_pid[1] = s.next.pid;
			s.prev_state = next_rand() % 3 ? 1 : 0x80;
			cw_join__record(j, &s.hdr);
		}
	}
	cw_join__finish(j);
	cw_join__stats(j, st);
	cw_join__free(j);
}

static int node_id_cmp(const void *a, const void *b)
{
	const struct cw_node *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The written node with id @id (l->nodes sorted by id), or NULL. */
static const struct cw_node *node_by_id(const struct log *l, uint64_t id)
{
	struct cw_node k = { .id = id };

	return bsearch(&k, l->nodes, l->nn, sizeof(k), node_id_cmp);
}

static void check_invariants(size_t max_live)
{
	struct log *l = &logs[0];
	struct cw_join_stats st;

	run(l, 42 + max_live, max_live, 50000, &st);
	CHECK(l->nn < MAXN && l->ne < MAXN, "log overflow");
	for (size_t i = 0; i < l->ne; i++) {
		const struct cw_edge *e = &l->edges[i];

		if (e->type == CW_EDGE_WAKE && l->edge_ctx[i] != CW_CTX_TASK)
			CHECK(e->src == 0 && e->confidence == CW_CONF_UNKNOWN,
			      "interrupt wakeup %zu has a src", i);
		if (!e->src)
			CHECK(e->confidence == CW_CONF_UNKNOWN, "src NULL but %s",
			      cw_confidence_names[e->confidence]);
	}
	qsort(l->nodes, l->nn, sizeof(l->nodes[0]), node_id_cmp);
	for (size_t i = 1; i < l->nn; i++)
		CHECK(l->nodes[i].id != l->nodes[i - 1].id, "node %llu written twice",
		      (unsigned long long)l->nodes[i].id);
	for (size_t i = 0; i < l->ne; i++) {
		const struct cw_edge *e = &l->edges[i];
		const struct cw_node *src = e->src ? node_by_id(l, e->src) : NULL;
		const struct cw_node *dst = node_by_id(l, e->dst);

		CHECK(dst && (!e->src || src), "edge %zu names a node that was never written", i);
		if (!dst || (e->src && !src))
			continue;
		if (dst->type != CW_NODE_THREAD)
			continue;
		if (src) {
			CHECK(src->pid == l->edge_pid[i][0] && dst->pid == l->edge_pid[i][1],
			      "edge %zu joins pids %lld -> %lld for a record naming %u -> %u", i,
			      (long long)src->pid, (long long)dst->pid, l->edge_pid[i][0],
			      l->edge_pid[i][1]);
		} else {
			CHECK(dst->pid == l->edge_pid[i][0] || dst->pid == l->edge_pid[i][1],
			      "edge %zu ends at pid %lld for a record naming %u and %u", i,
			      (long long)dst->pid, l->edge_pid[i][0], l->edge_pid[i][1]);
		}
	}
	if (max_live < 1000)
		CHECK(st.evicted > 0, "bound %zu never reached", max_live);
	else
		CHECK(st.evicted == 0, "evicted %llu without pressure", (unsigned long long)st.evicted);
	passes++;
	printf("ok invariants max_live=%zu (%zu nodes, %zu edges, %llu evicted)\n", max_live,
	       l->nn, l->ne, (unsigned long long)st.evicted);
}

static void check_deterministic(void)
{
	struct cw_join_stats a, b;

	run(&logs[0], 7, 16, 30000, &a);
	run(&logs[1], 7, 16, 30000, &b);
	CHECK(logs[0].hash == logs[1].hash && logs[0].nn == logs[1].nn && logs[0].ne == logs[1].ne,
	      "same input, different output");
	passes++;
	printf("ok deterministic\n");
}

int main(void)
{
	check_invariants(1u << 20);
	check_invariants(16);
	check_invariants(3);
	check_deterministic();
	printf("test_join: %d passed, %d failed\n", passes, failures);
	return failures != 0;
}
