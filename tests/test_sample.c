// SPDX-License-Identifier: MIT
/*
 * The sample class (analyze/cls_sample.c) through the join, with a sink
 * that keeps what it is given:
 *  - edge ids are 1, 2, ... in the order edges are written, and an
 *    off-CPU sample's wake is the id of the wake edge that ended its
 *    wait, whichever class wrote it;
 *  - random sample and mapping records, each in a buffer of exactly its
 *    size (AddressSanitizer catches any read past it), are either a
 *    sample or counted as malformed, never both, never neither: every
 *    one is accounted for;
 *  - frames and stacks are written once while their tables hold them,
 *    and every stack names only frames written before it;
 *  - waiting off-CPU samples are bounded by --max-live, and all are
 *    written by the end of the trace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/check.h"
#include "analyze/join.h"
#include "analyze/text.h"

#define MAXE 4096

struct log {
	uint64_t edge_ids[MAXE];
	uint8_t edge_types[MAXE];
	size_t ne;
	struct cw_sample_row samples[MAXE];
	size_t ns;
	uint64_t frames, stacks, max_frame;
	int stack_bad; /* a stack named a frame not yet written */
};

static struct log lg;

static int on_node(void *ctx, const struct cw_node *n)
{
	(void)ctx;
	(void)n;
	return 0;
}

static int on_edge(void *ctx, const struct cw_edge *e)
{
	struct log *l = ctx;

	if (l->ne < MAXE) {
		l->edge_types[l->ne] = e->type;
		l->edge_ids[l->ne++] = e->id;
	}
	return 0;
}

static int on_frame(void *ctx, const struct cw_frame *f)
{
	struct log *l = ctx;

	l->frames++;
	if (f->id > l->max_frame)
		l->max_frame = f->id;
	return 0;
}

static int on_stack(void *ctx, uint64_t id, const uint64_t *frames, uint32_t depth)
{
	struct log *l = ctx;

	(void)id;
	l->stacks++;
	for (uint32_t i = 0; i < depth; i++)
		if (!frames[i] || frames[i] > l->max_frame)
			l->stack_bad = 1;
	return 0;
}

static int on_sample(void *ctx, const struct cw_sample_row *s)
{
	struct log *l = ctx;

	if (l->ns < MAXE)
		l->samples[l->ns] = *s;
	l->ns++;
	return 0;
}

static struct cw_join *new_join(size_t max_live)
{
	static struct cw_sink sink = { .node = on_node, .edge = on_edge, .frame = on_frame,
				       .stack = on_stack, .sample = on_sample };
	struct cw_join_opts o = { .max_live = max_live, .no_symbols = 1 };

	memset(&lg, 0, sizeof(lg));
	sink.ctx = &lg;
	return cw_join__new(&sink, &o);
}

/* Feed one line of the record text form. */
static int feed(struct cw_join *j, const char *text)
{
	static uint8_t rec[CW_TEXT_REC_MAX];
	struct cw_tok tok[CW_TEXT_MAXTOK];
	char line[2048], msg[256];
	const char *err;
	int n, len;

	snprintf(line, sizeof(line), "%s", text);
	n = cw_text_tokenize(line, tok, CW_TEXT_MAXTOK, &err);
	len = n > 0 ? cw_text_build(tok, n, rec, msg, sizeof(msg)) : -1;
	if (len < 0) {
		fprintf(stderr, "bad line: %s\n", text);
		return -1;
	}
	return cw_join__record(j, (const struct cw_hdr *)rec);
}

static void test_wake_link(void)
{
	static const char *const lines[] = {
		"waking ts=900 cpu=1 waker=200/200 wakee=100/100 target_cpu=0 prio=120 waker_start=6 wakee_start=5",
		"switch ts=1000 cpu=0 prev=100/100 next=0/0 prev_state=1 prev_prio=120 next_prio=120 prev_start=5",
		"sample_offcpu ts=1000 cpu=0 task=100/100 start=5 keep=0x100000000 kernel=0xffffffff81000110",
		"waking ts=1500 cpu=1 waker=200/200 wakee=100/100 target_cpu=0 prio=120 waker_start=6 wakee_start=5",
		"waking ts=1600 cpu=1 waker=100/100 wakee=200/200 target_cpu=0 prio=120 waker_start=5 wakee_start=6",
		"switch ts=2000 cpu=0 prev=0/0 next=100/100 prev_state=0 prev_prio=120 next_prio=120 next_start=5",
	};
	struct cw_join *j = new_join(0);
	uint64_t wake_id = 0;
	struct cw_join_stats st;

	CHECK(j, "join");
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		CHECK(!feed(j, lines[i]), "feed %zu", i);
	CHECK(!cw_join__finish(j), "finish");
	for (size_t i = 0; i < lg.ne; i++) {
		CHECK(lg.edge_ids[i] == i + 1, "edge %zu has id %llu", i,
		      (unsigned long long)lg.edge_ids[i]);
		/* the wake at 1500 is the fourth edge: two orphan spawns
		 * and the wake at 900 come first */
		if (i == 3)
			wake_id = lg.edge_ids[i];
	}
	CHECK(lg.ne == 5 && lg.edge_types[3] == CW_EDGE_WAKE, "edges: %zu", lg.ne);
	CHECK(lg.ns == 1, "samples: %zu", lg.ns);
	CHECK(lg.samples[0].weight == 1000 && lg.samples[0].weight_exact, "weight %llu",
	      (unsigned long long)lg.samples[0].weight);
	CHECK(lg.samples[0].wake == wake_id, "wake %llu, want %llu",
	      (unsigned long long)lg.samples[0].wake, (unsigned long long)wake_id);
	cw_join__stats(j, &st);
	CHECK(cw_join_stats__get(&st, "samples_offcpu") == 1 && cw_join_stats__get(&st, "offcpu_unresolved") == 0, "stats");
	cw_join__free(j);
	passes++;
	printf("ok wake_link\n");
}

/* A sample record, well-formed or broken in one of the ways a hostile or
 * damaged trace can be, in a buffer of exactly its size. */
static struct cw_hdr *random_record(void)
{
	uint16_t nk = next_rand() % 4 ? next_rand() % 8 : next_rand() % 300;
	uint16_t nu = next_rand() % 4 ? next_rand() % 8 : next_rand() % 300;
	uint16_t nr = next_rand() % 3 ? 0 : next_rand() % 2 ? 17 : next_rand() % 40;
	uint16_t sl = nr && next_rand() % 2 ? next_rand() % 200 : 0;
	size_t size = 64 + 8 * ((size_t)nk + nu + nr) + ((sl + 7u) & ~7u);
	struct cw_sample *s;

	if (next_rand() % 5 == 0)
		size = (size + (next_rand() % 64) - 32) & ~(size_t)7; /* a lie */
	if (size < 64)
		size = 64;
	if (size > 65528)
		size = 65528;
	s = malloc(size);
	for (size_t i = 0; i < size; i++)
		((uint8_t *)s)[i] = (uint8_t)next_rand();
	if (next_rand() % 7 == 0) {
		s->hdr.type = CW_REC_META_MMAP; /* random bytes as a mapping */
	} else {
		s->hdr.type = next_rand() % 2 ? CW_REC_SAMPLE_CPU : CW_REC_SAMPLE_OFFCPU;
		s->nkernel = nk;
		s->nuser = nu;
		s->nregs = nr;
		s->stack_len = sl;
		s->keep = next_rand() % 8 ? 1 + next_rand() % (1ull << 32) : next_rand();
		s->task.tid = 1 + next_rand() % 50;
		s->task.pid = s->task.tid;
		s->task_start = s->task.tid;
	}
	s->hdr.size = (uint16_t)size;
	return &s->hdr;
}

static void test_random(void)
{
	struct cw_join *j = new_join(16);
	struct cw_join_stats st;
	uint64_t fed = 0, mmaps = 0, ts = 1000;

	CHECK(j, "join");
	for (int i = 0; i < 20000; i++) {
		struct cw_hdr *h = random_record();

		h->ts = ts;
		h->cpu = (uint16_t)(next_rand() % 4);
		ts += next_rand() % 1000;
		if (h->type == CW_REC_META_MMAP)
			mmaps++;
		else
			fed++;
		CHECK(!cw_join__record(j, h), "record %d", i);
		free(h);
		if (i % 97 == 0) {
			char line[256];

			/* switch-ins end some waits */
			snprintf(line, sizeof(line),
				 "switch ts=%llu cpu=0 prev=0/0 next=%d/%d prev_state=0 prev_prio=0 "
				 "next_prio=0 next_start=%d",
				 (unsigned long long)ts, i % 50 + 1, i % 50 + 1, i % 50 + 1);
			CHECK(!feed(j, line), "switch");
		}
	}
	CHECK(!cw_join__finish(j), "finish");
	cw_join__stats(j, &st);
	/* every sample record is a sample or malformed; a mapping may be
	 * malformed too */
	CHECK(cw_join_stats__get(&st, "samples_cpu") + cw_join_stats__get(&st, "samples_offcpu") + cw_join_stats__get(&st, "samples_malformed") >= fed &&
		      cw_join_stats__get(&st, "samples_cpu") + cw_join_stats__get(&st, "samples_offcpu") + cw_join_stats__get(&st, "samples_malformed") <= fed + mmaps,
	      "samples %llu + %llu, malformed %llu, fed %llu (+%llu mappings)",
	      (unsigned long long)cw_join_stats__get(&st, "samples_cpu"), (unsigned long long)cw_join_stats__get(&st, "samples_offcpu"),
	      (unsigned long long)cw_join_stats__get(&st, "samples_malformed"), (unsigned long long)fed,
	      (unsigned long long)mmaps);
	CHECK(lg.ns == cw_join_stats__get(&st, "samples_cpu") + cw_join_stats__get(&st, "samples_offcpu"), "sink saw %zu samples", lg.ns);
	CHECK(cw_join_stats__get(&st, "samples_malformed") > 0 && lg.ns > 0, "the mix has both kinds");
	CHECK(!lg.stack_bad, "a stack names a frame not written before it");
	CHECK(lg.frames == cw_join_stats__get(&st, "frames") && lg.stacks == cw_join_stats__get(&st, "stacks"), "row counts");
	CHECK(cw_join_stats__get(&st, "offcpu_pushed_out") > 0, "16 waiting samples at most: none pushed out?");
	cw_join__free(j);
	passes++;
	printf("ok random\n");
}

int main(void)
{
	test_wake_link();
	test_random();
	printf("test_sample: %d passed, %d failed\n", passes, failures);
	return failures != 0;
}
