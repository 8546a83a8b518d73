/* SPDX-License-Identifier: MIT */
/*
 * The critical path of every request (docs/model.md §9): walked back from
 * the request's end over the graph the join wrote, read back from the
 * database (db.h), into critical_path rows. Runs once the database is
 * indexed (cw_db__index) and before it is finished.
 */
#ifndef CAUSEWAY_CRITICAL_H
#define CAUSEWAY_CRITICAL_H

#include <stdint.h>
#include "counters.h"

struct cw_breaks;
struct cw_db;

/*
 * The bounds (docs/model.md §9). A walk takes at most CW_CRIT_STEPS steps
 * and reads at most CW_CRIT_ROWS rows; all walks together read at most
 * CW_CRIT_ROWS_PER_ROW rows per row the join wrote, plus CW_CRIT_ROWS: a
 * trace cannot make the work grow faster than the trace. A walk cut by
 * its bound ends in a blocked segment that says so; a request left when
 * the budget is spent gets one.
 */
#define CW_CRIT_STEPS 16384
#define CW_CRIT_ROWS (1u << 20)
#define CW_CRIT_ROWS_PER_ROW 16
/* Steps in a row that may leave the walk's time where it was: more are a
 * circle (objects born of each other at one instant), which ends the
 * walk, 'times out of order'. */
#define CW_CRIT_STILL 16

struct cw_critical_opts {
	const struct cw_breaks *breaks;
	/* 1 when the trace holds every wait of a traced thread (an off-CPU
	 * row each: cw_critical__waits_recorded); 0: no stretch between
	 * waits can be said to be running. */
	int waits_recorded;
	/* 1 when a wait is a record of the sample ring (format 1.8), so
	 * that ring's losses can hide one; from 1.9 a wait is its switch
	 * record, on the edge ring, and a lost sample loses a stack only. */
	int waits_in_samples;
	/* The bound on all walks' rows; 0: CW_CRIT_ROWS_PER_ROW per row
	 * written, plus CW_CRIT_ROWS. */
	uint64_t budget;
};

/* What the walks did: the meta keys, in analyze/counters.h's form. */
#define CW_CRITICAL_COUNTERS(X)                                                                    \
	X(requests, "critical_requests", "requests with a seen begin and end, each walked")        \
	X(whole, "critical_whole", "of those, walked back to their begin with no blocked stop")   \
	X(bounded, "critical_bounded", "walks cut by their bound (steps or rows)")                \
	X(unwalked, "critical_budget_spent",                                                      \
	  "walks cut, or not begun, because all walks' budget of rows was spent")                 \
	X(segments, "critical_segments", "critical_path rows")                                    \
	X(rows_read, "critical_rows_read", "rows the walks read")                                 \
	X(wall_ns, "critical_wall_ns", "the requests' wall time")                                 \
	X(unknown_ns, "critical_unknown_ns", "of that, in blocked stops (unknown)")

struct cw_critical_stats {
	CW_CRITICAL_COUNTERS(CW_COUNTER_FIELD)
};

/*
 * Does the trace hold every wait of a traced thread? Off-CPU waits
 * recorded (the capture's offcpu key is 1), every wait a row whatever the
 * budget (format 1.8 and later) and the sched class joined (its switches
 * end the waits and, since 1.9, are them): docs/model.md §2.4.
 * @offcpu: the capture's offcpu key, NULL when absent; @minor: the
 * trace's format minor version; @sched_joined: the analyzer joined the
 * sched class.
 */
int cw_critical__waits_recorded(const char *offcpu, unsigned minor, int sched_joined);

/* Walk every request, write its rows. @return 0 or a negative errno
 * (a database error: said on stderr). */
int cw_critical__run(struct cw_db *db, const struct cw_critical_opts *o,
		     struct cw_critical_stats *st);

#endif /* CAUSEWAY_CRITICAL_H */
