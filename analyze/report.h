/* SPDX-License-Identifier: MIT */
/*
 * What a run of the analyzer reports once the join is done: the keys of
 * the database's meta table (schema/tables.sql) and the summary on
 * stdout. The counters come from the join's list (analyze/counters.h)
 * and each class's (cw_join_stats.class_counters), written by loops over
 * them.
 */
#ifndef CAUSEWAY_REPORT_H
#define CAUSEWAY_REPORT_H

#include <stdint.h>

struct cw_critical_stats;
struct cw_db;
struct cw_join_stats;
struct cw_order_stats;
struct cw_scan;
struct env;

struct report {
	const struct env *env;
	const struct cw_join_stats *js;
	const struct cw_scan *scan;	  /* pass 1 */
	const struct cw_order_stats *os;
	uint64_t diagnostics_suppressed;  /* reader messages not shown */
	/* The capture's own keys, as the trace gave them (NULL: it did
	 * not, and the join's first and last timestamps stand in). */
	const char *start_ns, *end_ns;
	/* The adapter probes the capture left out by choice; NULL: the
	 * trace does not say (no adapter class, or a capture before the
	 * key), so nothing can be read from a probe's absence. */
	const char *usdt_probes_off;
	int have_release, have_hostname;
	const struct cw_critical_stats *crit; /* docs/model.md §9 */
	const char *out;		  /* the database's name */
};

/* Every meta key the analyzer writes. @return 0 or a negative errno. */
int report__meta(struct cw_db *db, const struct report *r);

/* The critical path's keys (critical_*), once its walks are done.
 * @return 0 or a negative errno. */
int report__meta_critical(struct cw_db *db, const struct cw_critical_stats *c);

/* The summary, on stdout. */
void report__summary(const struct report *r);

#endif /* CAUSEWAY_REPORT_H */
