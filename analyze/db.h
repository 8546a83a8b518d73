/* SPDX-License-Identifier: MIT */
/*
 * The database writer: the only module that knows SQLite. Bulk loads in
 * one transaction with prepared statements; what follows the load
 * (schema/tables.sql, below its @@INDEXES@@ marker) numbers the node
 * generations from creation order and builds the indexes, the unique
 * identity index included.
 */
#ifndef CAUSEWAY_DB_H
#define CAUSEWAY_DB_H

#include <stdint.h>
#include "join.h"

#define CW_SCHEMA_VERSION 1

struct cw_db;

/* Create a new database at @path (which must not exist). NULL + errno, and
 * a message in @errbuf, on failure. */
struct cw_db *cw_db__create(const char *path, char *errbuf, size_t errlen);
/* A sink whose callbacks write nodes, edges and execs into @db. */
void cw_db__sink(struct cw_db *db, struct cw_sink *sink);
int cw_db__break(struct cw_db *db, const struct cw_break *br);
/* @level: a static string (info, warning, error). */
int cw_db__diag(struct cw_db *db, const char *level, const char *msg);
int cw_db__meta(struct cw_db *db, const char *key, const char *value);
int cw_db__meta_u64(struct cw_db *db, const char *key, uint64_t value);
/* Commit, number the generations, build the indexes, close. The caller
 * makes the file durable. @return 0 or -EIO (message in errbuf). */
int cw_db__finish(struct cw_db *db, char *errbuf, size_t errlen);

/*
 * Reading back, for what is derived from the graph once it is written
 * (analyze/critical.c, docs/model.md §9). cw_db__index commits the load,
 * numbers the generations and builds the indexes, as cw_db__finish
 * would; the database can then be read through the calls below and the
 * derived rows written, and cw_db__finish commits them and closes. The
 * readers return 1 (found), 0 (none) or -EIO.
 */
int cw_db__index(struct cw_db *db, char *errbuf, size_t errlen);
/* Rows written so far to nodes, edges and samples: the size of the
 * input, which the derived work is bounded by. */
uint64_t cw_db__rows(const struct cw_db *db);

struct cw_db_request {
	uint64_t id, start_ns, end_ns;
	uint64_t thread; /* the dst of its end edge; 0: none */
};
/* Each request node whose begin and end were seen, by id; stops at the
 * first non-zero return of @fn, which it returns. */
int cw_db__requests(struct cw_db *db, int (*fn)(void *ctx, const struct cw_db_request *r),
		    void *ctx);

struct cw_db_node {
	uint64_t id;
	uint8_t type; /* cw_node_type */
	uint8_t start_seen;
	int8_t traced; /* -1: NULL */
	int64_t start_ns; /* -1: NULL */
};
int cw_db__node(struct cw_db *db, uint64_t id, struct cw_db_node *n);

struct cw_db_edge {
	uint64_t id, src, dst, ts; /* src 0: NULL */
	uint8_t type, confidence;
};
int cw_db__edge(struct cw_db *db, uint64_t id, struct cw_db_edge *e);
/* The earliest edge into @node (by ts, then id): an object's birth. */
int cw_db__first_into(struct cw_db *db, uint64_t node, struct cw_db_edge *e);
/* The edges into @node in time order (@forward), or back from @ts: the
 * first that @pick takes (returns > 0) is put in *@e and 1 returned; 0
 * when @pick ends the scan (< 0) or the edges end. At most @max_rows
 * rows (added to *@rows): -E2BIG past that. */
int cw_db__scan_into(struct cw_db *db, uint64_t node, uint64_t ts, int forward, uint64_t max_rows,
		     uint64_t *rows, int (*pick)(void *ctx, const struct cw_db_edge *e), void *ctx,
		     struct cw_db_edge *e);
/* The latest edge of @type from @node at or before @ts. Reads every edge
 * from @node, at most @max_rows of them (adding them to *@rows): -E2BIG
 * past that. */
int cw_db__last_from(struct cw_db *db, uint64_t node, uint8_t type, uint64_t ts, uint64_t max_rows,
		     uint64_t *rows, struct cw_db_edge *e);

struct cw_db_wait {
	uint64_t ts, weight, wake; /* wake 0: NULL */
	uint8_t exact;
};
/* The latest off-CPU sample of @thread that began before @ts. Reads the
 * thread's samples back from @ts, at most @max_rows of them (adding them
 * to *@rows): -E2BIG past that. */
int cw_db__wait_before(struct cw_db *db, uint64_t thread, uint64_t ts, uint64_t max_rows,
		       uint64_t *rows, struct cw_db_wait *w);

/* A critical_path row (schema/tables.sql). */
struct cw_crit_row {
	uint64_t request, node, edge; /* edge 0: NULL */
	uint32_t seq;
	uint8_t kind, confidence, stop; /* cw_crit_kind, cw_confidence, cw_crit_stop */
	uint64_t start_ns, end_ns;
};
int cw_db__crit_row(struct cw_db *db, const struct cw_crit_row *c);
/* Close without finishing (the caller removes the file). NULL ok. */
void cw_db__abort(struct cw_db *db);

#endif /* CAUSEWAY_DB_H */
