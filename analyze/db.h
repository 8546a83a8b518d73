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
/* Close without finishing (the caller removes the file). NULL ok. */
void cw_db__abort(struct cw_db *db);

#endif /* CAUSEWAY_DB_H */
