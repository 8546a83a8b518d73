/* SPDX-License-Identifier: MIT */
/*
 * The join's counters: what it saw go wrong, left out or had to bound,
 * one list per owner, each line a counter's field, its key in the
 * database's meta table and what it counts (perf's
 * tools/perf/util/events_stats.h is the model). The struct, the meta
 * keys and the loop that writes them (analyze/report.c) all come from
 * these lines, so a counter cannot be kept and not written, or written
 * under another name. A key is a published name: fixtures and readers of
 * the database look it up, so renaming one breaks them.
 *
 *   X(field, "meta key", "what it counts")
 */
#ifndef CAUSEWAY_COUNTERS_H
#define CAUSEWAY_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

/* The join engine and the identity layer (join.c, ident.c), and what
 * every class reports through them. */
#define CW_JOIN_COUNTERS(X)                                                                        \
	X(events_lost, "events_lost", "the sum of the accounting records' losses")                 \
	X(evicted, "evicted_total", "live entries pushed out by the bound (--max-live)")          \
	X(orphans, "orphans_total", "orphan edges: traced nodes created with start_seen = 0")     \
	X(unknown_records, "records_unknown", "records of types this analyzer does not know")     \
	X(bad_records, "records_malformed", "records of a known type with an impossible size")    \
	X(records_skipped, "records_skipped", "records of classes not joined (-e)")               \
	X(tid_reuse_unseen_exit, "tid_reuse_unseen_exit",                                          \
	  "births of a tid whose exit was never seen")                                             \
	X(identity_mismatch, "identity_mismatch",                                                  \
	  "a tid named with another pid or witness: taken as reused")                              \
	X(hints_dropped, "hints_dropped", "snapshot or rename names past the bound")

/* The sample class, the context plane (cls_sample.c). */
#define CW_SAMPLE_COUNTERS(X)                                                                      \
	X(malformed, "samples_malformed",                                                          \
	  "malformed sample or mapping records (also in records_malformed)")                       \
	X(late, "samples_late", "samples read after newer records: their node is the thread")     \
	X(offcpu_unresolved, "offcpu_unresolved",                                                  \
	  "off-CPU samples whose weight is a lower bound: the switch-in was not seen")             \
	X(offcpu_pushed, "offcpu_pushed_out",                                                      \
	  "of those, pushed out of the pending table by its bound")                                \
	X(frames_symbolized, "frames_symbolized", "frames with a function")                        \
	X(frame_resets, "frame_table_resets", "times the frame dedup table was emptied by its bound") \
	X(stack_resets, "stack_table_resets", "times the stack dedup table was emptied by its bound") \
	X(maps_dropped, "address_spaces_dropped", "address spaces dropped by the bound of cw_maps") \
	X(sym_opened, "symbol_objects_opened", "ELF objects the symbolizer opened")                \
	X(sym_refused, "symbol_objects_refused",                                                   \
	  "mapping paths the symbolizer refused to open (not a regular file, ...)")

/* The adapter class, the adapter plane (cls_adapter.c). */
#define CW_ADAPTER_COUNTERS(X)                                                                     \
	X(probes, "usdt_probes", "probe records kept")                                             \
	X(probes_dropped, "usdt_probes_dropped", "probe records past the table's bound, or a repeated id") \
	X(hits, "usdt_hits", "hits joined")                                                        \
	X(unknown_probe, "usdt_hits_unknown_probe", "hits of a probe id no record declared")       \
	X(unmapped, "usdt_hits_unmapped", "hits of a probe no adapter row maps")                   \
	X(malformed, "usdt_malformed",                                                             \
	  "hits or probes whose fields cannot be (also in records_malformed)")                     \
	X(unpaired, "usdt_unpaired_ends", "ends with nothing open to end: a poll end, a wait end") \
	X(dropped, "adapter_state_dropped", "intervals or waits not followed: the bounds")         \
	X(waits, "resource_waits", "resource_waits rows")                                          \
	X(waits_quiet, "resource_waits_quiet", "waits whose end says nothing was waited for: no row")

#define CW_COUNTER_FIELD(field, key, comment) uint64_t field;

struct cw_sample_stats {
	uint64_t samples[2];	 /* written, by cw_sample_kind (the summary) */
	uint64_t stacks, frames; /* rows written (the summary) */
	CW_SAMPLE_COUNTERS(CW_COUNTER_FIELD)
};

struct cw_adapter_stats {
	CW_ADAPTER_COUNTERS(CW_COUNTER_FIELD)
};

/* A counter as the meta writer loops over it: its key, and where it is
 * in its owner's struct. */
struct cw_counter {
	const char *key;
	size_t off;
};

#define CW_COUNTER_ENTRY(type, field, key) { key, offsetof(type, field) }

#endif /* CAUSEWAY_COUNTERS_H */
