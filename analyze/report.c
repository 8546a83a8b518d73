// SPDX-License-Identifier: MIT
/* The meta table and the summary (analyze/report.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "breaks_scan.h"
#include "critical.h"
#include "db.h"
#include "join.h"
#include "options.h"
#include "order.h"
#include "report.h"
#include "trace/format.h"

#define JOIN_ENTRY(field, key, comment) CW_COUNTER_ENTRY(struct cw_join_stats, field, key)

static const struct cw_counter join_counters[] = { CW_JOIN_COUNTERS(JOIN_ENTRY) };

#define CRIT_ENTRY(field, key, comment) CW_COUNTER_ENTRY(struct cw_critical_stats, field, key)

static const struct cw_counter crit_counters[] = { CW_CRITICAL_COUNTERS(CRIT_ENTRY) };

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* The counters of @table, read from @base, as meta keys. */
static int put_counters(struct cw_db *db, const struct cw_counter *table, size_t n, const void *base)
{
	int err = 0;

	for (size_t i = 0; i < n && !err; i++)
		err = cw_db__meta_u64(db, table[i].key,
				      *(const uint64_t *)((const char *)base + table[i].off));
	return err;
}

/* What the trace and the reading of it say, besides the join's
 * counters: the reader's (pass 1), the reorder window's, the breaks'. */
static int put_trace(struct cw_db *db, const struct report *r)
{
	const struct cw_scan *s = r->scan;
	const struct {
		const char *key;
		uint64_t val;
	} keys[] = {
		{ "clean_close", (uint64_t)s->rs.clean_close },
		{ "events_total", s->events },
		{ "segments_total", s->rs.segments_ok + s->rs.segments_damaged },
		{ "segments_damaged", s->rs.segments_damaged },
		{ "bytes_skipped", s->rs.bytes_skipped },
		{ "truncated_tail", (uint64_t)s->rs.truncated_tail },
		/* reader messages past the first ones, not shown */
		{ "diagnostics_suppressed", r->diagnostics_suppressed },
		{ "events_late", r->os->late },
		{ "reorder_window_ns", CW_ORDER_WINDOW_NS },
		{ "reorder_window_events", CW_ORDER_MAX_EVENTS },
		{ "reorder_window_bytes", CW_ORDER_MAX_BYTES },
		/* Released before their 10 ms because a bound was reached:
		 * where late events come from, when there are any. */
		{ "events_released_early", r->os->forced },
		{ "breaks_coarsened", cw_breaks__coarsened(s->breaks) },
		/* 1: the mapping records were too many to put in time order
		 * in pass 1 and were joined in file order */
		{ "mappings_in_file_order", (uint64_t)s->maps_overflow },
	};
	int err = 0;

	for (size_t i = 0; i < NELEMS(keys) && !err; i++)
		err = cw_db__meta_u64(db, keys[i].key, keys[i].val);
	return err;
}

/* The go class's probe mode (--go-probes), or NULL with no Go binary. */
static const char *go_probes(const struct cw_join_stats *js)
{
	uint64_t n = cw_join_stats__get(js, "go_binaries");
	uint64_t req = cw_join_stats__get(js, "go_binaries_requests");

	return !n ? NULL : req == n ? "requests" : req ? "mixed" : "all";
}

int report__meta(struct cw_db *db, const struct report *r)
{
	const struct cw_join_stats *js = r->js;
	char ver[16], classes[128];
	int err = 0;

	snprintf(ver, sizeof(ver), "%d.%u", CW_FORMAT_MAJOR, r->scan->minor);
	err = err ?: cw_db__meta_u64(db, "schema_version", CW_SCHEMA_VERSION);
	err = err ?: cw_db__meta(db, "format_version", ver);
	/* Keys docs/model.md §4 promises are there even when the trace does not
	 * say (a damaged metadata segment): NULL, unknown. */
	if (!r->have_release)
		err = err ?: cw_db__meta(db, "kernel_release", NULL);
	if (!r->have_hostname)
		err = err ?: cw_db__meta(db, "hostname", NULL);
	if (r->start_ns)
		err = err ?: cw_db__meta(db, "capture_start_ns", r->start_ns);
	else
		err = err ?: cw_db__meta_u64(db, "capture_start_ns", js->first_ts);
	if (r->end_ns)
		err = err ?: cw_db__meta(db, "capture_end_ns", r->end_ns);
	else
		err = err ?: cw_db__meta_u64(db, "capture_end_ns", js->last_ts);
	/* -e: the edge classes joined (records_skipped: the others') */
	err = err ?: cw_db__meta(db, "classes", options__classes(r->env, classes, sizeof(classes)));
	/* Said apart from capture.usdt_probes_off, and NULL when the trace
	 * does not say: no buffer resource in the database then reads as
	 * "not recorded", not as "no buffer was read". */
	err = err ?: cw_db__meta(db, "usdt_probes_off", r->usdt_probes_off);
	/* From the go class's binary records, what the join saw: NULL when
	 * no Go binary was attached (the trace does not say). */
	err = err ?: cw_db__meta(db, "go_probes", go_probes(js));
	/* the context plane */
	err = err ?: cw_db__meta(db, "symbols", r->env->no_symbols ? "none" : "libdw");
	err = err ?: put_trace(db, r);
	err = err ?: put_counters(db, join_counters, NELEMS(join_counters), js);
	for (size_t i = 0; i < js->nclass_counters && !err; i++)
		if (js->class_counters[i].meta)
			err = cw_db__meta_u64(db, js->class_counters[i].key, js->class_counters[i].value);
	return err;
}

int report__meta_critical(struct cw_db *db, const struct cw_critical_stats *c)
{
	return put_counters(db, crit_counters, NELEMS(crit_counters), c);
}

void report__summary(const struct report *r)
{
	const struct cw_join_stats *js = r->js;
	/* the sample class's counters, by their keys */
#define K(key) cw_join_stats__get(js, key)
	const struct cw_scan *scan = r->scan;
	int first;

	printf("%s: %" PRIu64 " segments (%" PRIu64 " damaged), %" PRIu64 " events, %s\n",
	       r->env->trace, scan->rs.segments_ok + scan->rs.segments_damaged,
	       scan->rs.segments_damaged, scan->events, scan->rs.clean_close ? "closed cleanly" :
	       "NOT closed cleanly");
	if (r->env->classes) {
		char classes[128];

		printf("  classes joined (-e): %s; %" PRIu64 " records of the others skipped\n",
		       options__classes(r->env, classes, sizeof(classes)), js->records_skipped);
	}
	printf("  nodes:");
	first = 1;
	for (int t = 0; t < CW_NODE_NTYPES; t++) {
		uint64_t traced = js->nodes[t] - js->nodes_untraced[t];

		if (!traced)
			continue;
		printf("%s %s %" PRIu64, first ? "" : ",", cw_node_type_names[t], traced);
		first = 0;
	}
	printf("%s\n", first ? " none" : "");
	/* Tasks outside the traced set only appear at the other end of an
	 * edge with a traced one: context, kept apart so that they are not
	 * read as missed spawns. */
	first = 1;
	for (int t = 0; t < CW_NODE_NTYPES; t++) {
		if (!js->nodes_untraced[t])
			continue;
		printf("%s %s %" PRIu64, first ? "  outside the traced set:" : ",",
		       cw_node_type_names[t], js->nodes_untraced[t]);
		first = 0;
	}
	if (!first)
		printf("\n");
	printf("  edges:\n");
	first = 1;
	for (int t = 0; t < CW_EDGE_NTYPES; t++) {
		uint64_t sum = 0;

		for (int c = 0; c < CW_CONF_N; c++)
			sum += js->edges[t][c];
		if (!sum)
			continue;
		first = 0;
		printf("    %-8s %10" PRIu64 " observed %10" PRIu64 " reconstructed %10" PRIu64 " unknown\n",
		       cw_edge_type_names[t], js->edges[t][CW_CONF_OBSERVED],
		       js->edges[t][CW_CONF_RECONSTRUCTED], js->edges[t][CW_CONF_UNKNOWN]);
	}
	if (first)
		printf("    none\n");
	printf("  orphans %" PRIu64 ", coverage breaks %zu, lost events %" PRIu64
	       ", damaged segments %" PRIu64 ", evicted %" PRIu64 ", late %" PRIu64
	       ", unknown records %" PRIu64 "\n",
	       js->orphans, cw_breaks__count(scan->breaks), js->events_lost,
	       scan->rs.segments_damaged, js->evicted, r->os->late, js->unknown_records);
	/* Records the join had to leave without their edge: said, not
	 * dropped silently. */
	if (K("uring_punts_no_worker") || K("block_merges_unjoined"))
		printf("  not joined: %" PRIu64 " io_uring punts whose io-wq worker the trace does "
		       "not name, %" PRIu64 " block merges of a request not live\n",
		       K("uring_punts_no_worker"), K("block_merges_unjoined"));
	if (K("samples_cpu") || K("samples_offcpu") || K("samples_malformed")) {
		printf("  samples: cpu %" PRIu64 ", offcpu %" PRIu64 " (%" PRIu64
		       " without a seen switch-in, %" PRIu64 " pushed out; %" PRIu64
		       " whose switch-in was reconstructed from their wake), malformed %" PRIu64 "\n",
		       K("samples_cpu"), K("samples_offcpu"), K("offcpu_unresolved"),
		       K("offcpu_pushed_out"), K("offcpu_switchin_reconstructed"),
		       K("samples_malformed"));
		printf("  stacks %" PRIu64 ", frames %" PRIu64 " (%" PRIu64 " with a function)",
		       K("stacks"), K("frames"), K("frames_symbolized"));
		if (r->env->no_symbols)
			printf(", symbols: none (--no-symbols)\n");
		else
			printf(", objects opened %" PRIu64 ", refused %" PRIu64 "\n",
			       K("symbol_objects_opened"), K("symbol_objects_refused"));
	}
	if (K("go_binaries")) {
		const char *mode = go_probes(js);

		printf("  go: %" PRIu64 " binaries, %" PRIu64 " runtime probe hits, probes %s%s\n",
		       K("go_binaries"), K("go_hits"), mode,
		       strcmp(mode, "all") ? " (--go-probes requests: goroutines made and ended, "
					     "and requests; no handoff probed, no wake or resume "
					     "edge, samples left on their threads)" : "");
	}
#undef K
	if (r->crit && r->crit->requests) {
		const struct cw_critical_stats *c = r->crit;

		printf("  critical path: %" PRIu64 " requests, %" PRIu64 " walked back to their begin,"
		       " %.1f%% of their wall time unknown",
		       c->requests, c->whole,
		       c->wall_ns ? 100.0 * (double)c->unknown_ns / (double)c->wall_ns : 0.0);
		if (c->bounded || c->unwalked)
			printf(" (%" PRIu64 " cut by a walk's bound, %" PRIu64 " by the budget)",
			       c->bounded, c->unwalked);
		printf("\n");
	}
	printf("wrote %s\n", r->out);
}
