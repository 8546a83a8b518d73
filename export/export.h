/* SPDX-License-Identifier: MIT */
/*
 * causeway-export: a database in, one file a person opens out (pprof,
 * folded stacks, a Perfetto trace, graphviz; docs/model.md §8). An export
 * reads the database's documented tables and views only, never the trace,
 * so that what it shows is what a query of the database would say.
 *
 * main.c parses the command line, opens the database read-only and the
 * output (lib/outfile.h), and hands a struct cw_x to one format's writer.
 * profile.c turns samples into causal stacks for the two profile formats
 * (pprof.c, folded.c); perfetto.c and dot.c read the graph itself.
 */
#ifndef CAUSEWAY_EXPORT_H
#define CAUSEWAY_EXPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

#define PROG "causeway-export"

struct cw_x {
	sqlite3 *db;
	FILE *out;
	/* [since, until] on the capture clock; INT64_MIN / INT64_MAX: open */
	int64_t since, until;
	/* --request: node ids of the chosen requests (names resolved by
	 * main.c); none: every request */
	const int64_t *requests;
	size_t nrequests;
	bool quiet;
	/* a progress line on stderr: not -q, and stderr is a terminal */
	bool progress, progress_drawn;
	uint64_t progress_last_ns;
	/* folded: off-CPU time rather than CPU samples (--offcpu) */
	bool offcpu;
};

/* Say how far a long export is, at most a few times a second. @total 0:
 * unknown. */
void cw_x__progress(struct cw_x *x, const char *what, uint64_t done, uint64_t total);
/* End the progress line, if one was drawn. */
void cw_x__progress_done(struct cw_x *x);

/* "PROG: message\n" on stderr, the message escaped (lib/esc.h). */
void cw_x__err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Is request node @id among --request's (or were none given)? */
bool cw_x__wants_request(const struct cw_x *x, int64_t id);

/* A statement on the export's database; NULL after a message. */
sqlite3_stmt *cw_x__prepare(struct cw_x *x, const char *sql);

/* The writers. @return 0, or -1 after a message (the output is then
 * dropped). */
int cw_x__pprof(struct cw_x *x);
int cw_x__folded(struct cw_x *x);
int cw_x__perfetto(struct cw_x *x);
int cw_x__dot(struct cw_x *x);

#endif /* CAUSEWAY_EXPORT_H */
