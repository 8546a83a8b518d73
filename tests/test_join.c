// SPDX-License-Identifier: MIT
/*
 * The join engine on random scheduler streams, checked against invariants
 * that must hold whatever the input:
 *  - an interrupt-context wakeup never has a src (contract 5.6);
 *  - every edge's ends are nodes that were (or will be) written;
 *  - (type, key, generation) is unique, generations count up from 0;
 *  - the live-state bound holds, and whatever it pushed out is counted;
 *  - the same input gives the same output (contract 5.10).
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
	size_t ne;
	uint8_t cur_ctx;
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
		l->edges[l->ne++] = *e;
	}
	l->hash = (l->hash ^ e->src ^ e->dst << 3 ^ e->type ^ e->confidence) * 0x100000001b3ull;
	return 0;
}

static uint64_t rng;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
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

			w.waker = (struct cw_task){ a, a };
			w.wakee = (struct cw_task){ b, b };
			l->cur_ctx = w.hdr.ctx;
			cw_join__record(j, &w.hdr);
		} else if (r < 7) {
			struct cw_fork f = { .hdr = { CW_REC_FORK, sizeof(f), 1, 0, 0, ts } };

			f.parent = (struct cw_task){ a, a };
			f.child = (struct cw_task){ b, a };
			f.fork_flags = CW_FORK_THREAD;
			cw_join__record(j, &f.hdr);
		} else if (r < 8) {
			struct cw_exit e = { .hdr = { CW_REC_EXIT, sizeof(e), 0, 0, 0, ts } };

			e.task = (struct cw_task){ a, a };
			cw_join__record(j, &e.hdr);
		} else {
			struct cw_switch s = { .hdr = { CW_REC_SWITCH, sizeof(s), 0, 0, 0, ts } };

			s.prev = (struct cw_task){ a, a };
			s.next = (struct cw_task){ b, b };
			s.prev_state = next_rand() % 3 ? 1 : 0x80;
			cw_join__record(j, &s.hdr);
		}
	}
	cw_join__finish(j);
	cw_join__stats(j, st);
	cw_join__free(j);
}

static int node_cmp(const void *a, const void *b)
{
	const struct cw_node *x = a, *y = b;

	if (x->type != y->type)
		return x->type - y->type;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (int)x->generation - (int)y->generation;
}

static int id_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void check_invariants(size_t max_live)
{
	struct log *l = &logs[0];
	struct cw_join_stats st;
	static uint64_t ids[MAXN];

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
	for (size_t i = 0; i < l->nn; i++)
		ids[i] = l->nodes[i].id;
	qsort(ids, l->nn, sizeof(ids[0]), id_cmp);
	for (size_t i = 0; i < l->ne; i++) {
		uint64_t want[2] = { l->edges[i].src, l->edges[i].dst };

		for (int k = 0; k < 2; k++)
			CHECK(!want[k] || bsearch(&want[k], ids, l->nn, sizeof(ids[0]), id_cmp),
			      "edge %zu names node %llu that was never written", i,
			      (unsigned long long)want[k]);
	}
	qsort(l->nodes, l->nn, sizeof(l->nodes[0]), node_cmp);
	for (size_t i = 0; i < l->nn; i++) {
		const struct cw_node *n = &l->nodes[i], *p = i ? &l->nodes[i - 1] : NULL;

		if (p && p->type == n->type && p->key == n->key)
			CHECK(n->generation == p->generation + 1, "generation gap at key %llu",
			      (unsigned long long)n->key);
		else
			CHECK(n->generation == 0, "first generation of key %llu is %u",
			      (unsigned long long)n->key, n->generation);
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
