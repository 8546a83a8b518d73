// SPDX-License-Identifier: MIT
/*
 * sqlceil: what the database alone costs, the ceiling of the analyzer's
 * throughput. Rows of the shape a trace gives are handed to the
 * analyzer's own writer (analyze/db.c's sink, then cw_db__finish: the
 * generations numbered, the indexes built), with no trace read and no
 * join, and the CPU time (user + system) is what storing them costs.
 *
 *   sqlceil --uring OUT.db NODES EDGES
 *	io_requests as gentrace --uring makes them: user_data drawn from
 *	400,000 values (so that most nodes are a later generation of a key),
 *	a few hundred ring scopes, an opcode name each, written about when
 *	they die (in id order give or take the live window); edges among the
 *	recent nodes, of the class's types and reasons, in time order.
 *   sqlceil --pingpong OUT.db WAKES
 *	a system-wide trace of two pipe ping-pongs: 16 threads, two pairs of
 *	which wake each other in turn (one wake in 16 is another's), a wake
 *	edge and an off-CPU sample per wake (its wait, no stack, the budget's
 *	keep as stack probability).
 *
 * Prints the rows written, the CPU seconds and the rows per second, to
 * hold against the analyzer's figures on the trace of that shape
 * (bench/README.md). Deterministic: a fixed xorshift seed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "analyze/db.h"
#include "lib/rand.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	return cw_xorshift64(&rng);
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

#define LIVE 4096 /* nodes waiting to be written: the window they die in */

static int uring(struct cw_sink *sink, uint64_t nodes, uint64_t edges, uint64_t *rows)
{
	static const uint8_t types[] = { CW_EDGE_SUBMIT, CW_EDGE_ARM, CW_EDGE_QUEUE,
					 CW_EDGE_WAKE, CW_EDGE_EXECUTE, CW_EDGE_COMPLETE };
	static const char *const reasons[] = { NULL, "poll armed", NULL, "io_req", NULL, NULL };
	static struct cw_node live[LIVE];
	char scopes[256][48];
	uint64_t ts = 1607466878710ull, e = 0;
	int err = 0;

	for (int i = 0; i < 256; i++)
		snprintf(scopes[i], sizeof(scopes[i]), "ring:0x%llx#0",
			 0xffff888100000000ull + (unsigned long long)i * 0x4000);
	for (uint64_t id = 1; id <= nodes && !err; id++) {
		struct cw_node *n = &live[id % LIVE];

		/* the node that held the slot dies now */
		if (n->id && (err = sink->node(sink->ctx, n)))
			break;
		*n = (struct cw_node){ .id = id, .type = CW_NODE_IO_REQUEST, .key = rnd() % 400000,
				       .pid = 1000, .tid = 1001 + (int64_t)(rnd() % 8),
				       .start_ns = (int64_t)ts, .end_ns = -1, .start_seen = 1,
				       .traced = -1 };
		n->scope = scopes[n->key % 256];
		snprintf(n->name, sizeof(n->name), "%s", rnd() % 3 ? "READ" : "NOP");
		for (; e < edges * id / nodes && !err; e++) {
			int t = (int)(rnd() % sizeof(types));
			struct cw_edge ed = {
				.id = e + 1, .type = types[t],
				.src = rnd() % 8 ? id - rnd() % (id < LIVE ? id : LIVE) : 0,
				.dst = id - rnd() % (id < LIVE ? id : LIVE), .ts = ts += 300 + rnd() % 200,
				.cpu = (int32_t)(rnd() % 2), .source = CW_SRC_KERNEL,
				.confidence = CW_CONF_OBSERVED, .reason = reasons[t], .interrupted = -1,
			};

			if (!ed.src)
				ed.confidence = CW_CONF_UNKNOWN, ed.reason = "orphan: submission not in trace";
			err = sink->edge(sink->ctx, &ed);
		}
	}
	for (int i = 0; i < LIVE && !err; i++)
		if (live[i].id && live[i].id + LIVE > nodes)
			err = sink->node(sink->ctx, &live[i]);
	*rows = nodes + edges;
	return err;
}

static int pingpong(struct cw_sink *sink, uint64_t wakes, uint64_t *rows)
{
	uint64_t ts = 1607466878710ull;
	int err = 0;

	for (uint64_t t = 1; t <= 16 && !err; t++) {
		struct cw_node n = { .id = t, .type = CW_NODE_THREAD, .scope = "host",
				     .key = 5000 + t, .pid = 5000, .tid = (int64_t)(5000 + t),
				     .start_ns = -1, .end_ns = -1, .traced = 1 };

		snprintf(n.name, sizeof(n.name), "pingpong");
		err = sink->node(sink->ctx, &n);
	}
	for (uint64_t w = 1; w <= wakes && !err; w++) {
		/* two pairs ping-pong (1 and 2, 3 and 4); one wake in 16 is
		 * another thread's */
		uint64_t a = rnd() % 16 ? 1 + (w & 3) : 5 + rnd() % 12, b = a & 1 ? a + 1 : a - 1;
		uint64_t wait = 40000 + rnd() % 30000;
		struct cw_edge e = { .id = w, .type = CW_EDGE_WAKE, .src = a, .dst = b,
				     .ts = ts + wait, .cpu = (int32_t)(rnd() % 2), .interrupted = -1 };
		struct cw_sample_row s = {
			.node = b, .thread = b, .ts = ts, .cpu = e.cpu, .kind = CW_SAMPLE_KIND_OFFCPU,
			.weight_exact = 1, .weight = wait, .inclusion_probability = 1.0,
			.stack_probability = (double)(14000000 + rnd() % 1000000) / 4294967296.0,
			.wake = w, .attr_confidence = CW_CONF_UNKNOWN,
			.attr_reason = "handed over from a context whose request is unknown",
		};

		ts += 3000 + rnd() % 500;
		err = sink->edge(sink->ctx, &e) ?: sink->sample(sink->ctx, &s);
	}
	*rows = 16 + 2 * wakes;
	return err;
}

int main(int argc, char **argv)
{
	char errbuf[512];
	struct cw_sink sink;
	struct cw_db *db;
	uint64_t rows = 0;
	double t0;
	int err;

	int is_uring = argc == 5 && !strcmp(argv[1], "--uring");

	if (!is_uring && (argc != 4 || strcmp(argv[1], "--pingpong"))) {
		fprintf(stderr, "usage: sqlceil --uring OUT.db NODES EDGES | --pingpong OUT.db WAKES\n");
		return 2;
	}
	unlink(argv[2]);
	t0 = cpu_seconds();
	if (!(db = cw_db__create(argv[2], errbuf, sizeof(errbuf)))) {
		fprintf(stderr, "sqlceil: %s\n", errbuf);
		return 1;
	}
	cw_db__sink(db, &sink);
	err = is_uring ? uring(&sink, strtoull(argv[3], NULL, 0),
					strtoull(argv[4], NULL, 0), &rows)
				: pingpong(&sink, strtoull(argv[3], NULL, 0), &rows);
	if (err) {
		cw_db__abort(db);
		fprintf(stderr, "sqlceil: writing failed\n");
		return 1;
	}
	if (cw_db__finish(db, errbuf, sizeof(errbuf))) {
		fprintf(stderr, "sqlceil: %s\n", errbuf);
		return 1;
	}
	t0 = cpu_seconds() - t0;
	printf("%s: %llu rows in %.2f s of CPU: %.0f rows/s\n", argv[1] + 2,
	       (unsigned long long)rows, t0, (double)rows / t0);
	return 0;
}
