/* SPDX-License-Identifier: MIT */
/*
 * The join's counters: what it saw go wrong, left out or had to bound,
 * each line a counter's field, its key in the database's meta table and
 * what it counts (perf's
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
 * every class reports through them. A class with counters of its own
 * keeps their list in its file, in the same form, and names it in its
 * cw_aclass (counters, classes.h). */
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
	X(hints_dropped, "hints_dropped", "snapshot or rename names past the bound")             \
	X(quiet, "objects_quiet", "objects that caused nothing, counted in quiet_objects")

#define CW_COUNTER_FIELD(field, key, comment) uint64_t field;

/* A counter as the meta writer loops over it: its key, where it is in its
 * owner's struct, and whether it is a meta key (0: the summary's only). */
struct cw_counter {
	const char *key;
	size_t off;
	int meta;
};

#define CW_COUNTER_ENTRY(type, field, key) { key, offsetof(type, field), 1 },
#define CW_TALLY_ENTRY(type, field, key) { key, offsetof(type, field), 0 },

/* A class's counters, after the join (cw_join__stats): the lists its
 * cw_aclass gives, in the order of the classes. */
#define CW_CLASS_COUNTERS_MAX 64
struct cw_counter_value {
	const char *key;
	uint64_t value;
	int meta;
};

#endif /* CAUSEWAY_COUNTERS_H */
