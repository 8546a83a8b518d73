/* SPDX-License-Identifier: MIT */
/*
 * causeway-eval: scores a causeway database against a truth file
 * (bench/truth/FORMAT.md). eval_truth.c reads the truth, eval_db.c opens a
 * database read-only and scores its claims, eval_attr.c the attribution,
 * eval.c the command line and the reports, eval_esc.c the fields a
 * message quotes (escaped by lib/esc.c, as all they print of an input).
 */
#ifndef CAUSEWAY_EVAL_H
#define CAUSEWAY_EVAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>
#include "../../lib/esc.h"

enum rule { RULE_DIRECT, RULE_OBJECT, RULE_WAIT };

#define F_CANCELLED 0x1
#define F_REUSED    0x2
#define F_NESTED    0x4

/*
 * What a truth file may hold (FORMAT.md, Limits): the evaluator refuses
 * more, naming the line, so no input makes it read forever or keep more
 * than about TRUTH_RECORDS_MAX * sizeof(struct hop) (the largest record)
 * + TRUTH_CONFIG_MAX * TRUTH_LINE_MAX + TRUTH_TEXT_MAX. Each is far above
 * what truthload writes.
 */
/* Bytes of one line, without its newline. The longest line truthload
 * writes is a hop: 19 fields, 12 of them numbers of at most 20 digits,
 * names of at most a kernel symbol (KSYM_NAME_LEN, 512): under 1 KiB. A
 * line past 64 KiB is not a record but a file that is not a truth file
 * (a binary, a stream without newlines), and the buffer costs nothing. */
#define TRUTH_LINE_MAX 65536
/* Bytes of the file. 10M hops of about 170 bytes and their request and
 * cpu lines are about 2 GiB. */
#define TRUTH_FILE_MAX (8ull << 30)
/* Records (lines other than comments and blank lines): the arrays grow
 * with them. 10M hops with a request and a cpu line for every hop fit. */
#define TRUTH_RECORDS_MAX (1ul << 25)
/* config lines: the knobs of a run (truthload writes 18). */
#define TRUTH_CONFIG_MAX 1024
/* Distinct MECH names: a row of every report each (FORMAT.md lists 14). */
#define TRUTH_MECHS_MAX 64
/* Bytes of the distinct thread roles and object names, each kept once
 * (truthload has a dozen, under 200 bytes). */
#define TRUTH_TEXT_MAX (64ul << 20)

/* Names of the edge and node types are short: at most this, with the NUL. */
#define TYPE_LEN 16

struct kv {
	char *key, *value;
};

struct thread_rec {
	int64_t tid;
	const char *role; /* in truth.names */
};

struct request {
	int64_t rid, app_id, origin_tid;
	int64_t b0, b1, e0, e1;
	long line;
	double cpu_ns, wall_ns; /* the sums of its cpu lines */
};

struct cpu_rec {
	int64_t rid, tid;
	double cpu_ns, wall_ns;
	size_t req; /* index into truth.reqs */
	long line;
};

struct hop {
	uint64_t hid;
	int64_t rid;
	size_t req;
	long line;
	int mech; /* index into truth.mechs */
	enum rule rule;
	int64_t src_tid;
	int has_src_tid; /* 0: '-', a thread of the pid line's process the program cannot name */
	int has_task, has_req, has_key, has_a, has_dst, has_c;
	int into_node; /* RULE direct into the OBJ_TYPE node of OBJ_KEY, not DST_TID's thread */
	int64_t src_task, src_req, obj_key;
	char cause[TYPE_LEN], obj_type[TYPE_LEN], effect[TYPE_LEN];
	const char *obj_name; /* in truth.names; NULL: not given */
	int64_t a0, a1, c0, c1, dst_tid;
	unsigned flags;
};

/* Where score_edges writes every wrong claim, one line each (NULL: nowhere):
 * what a developer reads to find the join that went wrong. */
extern FILE *eval_wrong_out;

struct truth {
	const char *path;
	int has_pid;
	int64_t pid;
	char pid_scope[32]; /* "pid:N", or "" when no pid line */
	struct kv *config;
	size_t nconfig;
	struct thread_rec *threads;
	size_t nthreads;
	struct request *reqs;
	size_t nreqs;
	struct cpu_rec *cpus;
	size_t ncpus;
	struct hop *hops;
	size_t nhops;
	char **mechs; /* the MECH names: the known ones in their order, then others */
	size_t nmechs;
	char **names; /* the distinct roles and object names */
	size_t nnames;
};

/* Reads PATH; on error prints "causeway-eval: PATH:LINE: ..." (PATH and
 * the fields escaped) and returns -1. */
int truth_read(const char *path, struct truth *t);
void truth_free(struct truth *t);

/* One (system, MECH) row; index nmechs is `all`. */
struct mstat {
	long hops;      /* scored: not cancelled */
	long cancelled; /* cancelled hops (left out of the per-hop figures) */
	long claims, correct, false_joins;
	long recalled, orphans, observed, reconstructed;
};

/* What names a hop in the database, for the critical path's score
 * (eval_crit.c): key, an edge that is a correct claim for it (edge id *
 * 2; a correct resource_waits row's wake edge), or its cause node N(h)
 * (node id * 2 + 1); hop, its index. */
struct hop_name {
	int64_t key;
	size_t hop;
};

struct system_score {
	const char *name, *db_path;
	struct mstat *m; /* nmechs + 1 */
	double seconds;
	struct hop_name *names; /* sorted by key */
	size_t nnames;
};

/* The critical path against the truth (FORMAT.md, "The critical path"),
 * causeway's only. */
struct crit_score {
	int measured;	    /* 0: the database has no critical_path */
	long requests, matched, walked, whole;
	long waits, waits_own, waits_other, waits_none; /* waits on the paths */
	double wall_ns;					 /* of the walked requests */
	double kind_ns[4];				 /* running, runnable, handoff, blocked */
	double conf_ns[3];				 /* observed, reconstructed, unknown */
	long *hops_on_path; /* per MECH (nmechs + 1): hops a wait on their request's path names */
};

struct attr_score {
	const char *name;
	int measured;       /* 0: not measured (no database): by construction */
	int has_shares;     /* confidence shares apply (causeway only) */
	int has_matched;    /* request matching applies (not the thread baseline) */
	long requests, matched, cpu_scored, wall_scored, thread_scored;
	double cpu_mae, wall_mae;               /* % over requests with truth > 0; NAN: none */
	double cpu_agg, wall_agg;               /* %: sum|est - truth| / sum truth */
	double cpu_mae_thread, wall_mae_thread; /* % over (request, thread) cpu lines */
	double est_cpu, est_wall, truth_cpu, truth_wall;
	double share_observed, share_reconstructed, share_unknown;
};

/* A database opened read-only with its temp tables. */
struct edb {
	const char *path;
	sqlite3 *h;
};

int edb_open(const char *path, const struct truth *t, struct edb *db);
void edb_close(struct edb *db);
/* Prints "causeway-eval: PATH: WHAT: MSG" (": MSG" when MSG), PATH and MSG
 * escaped. */
void edb_say(const char *path, const char *what, const char *msg);
/* Prints "causeway-eval: DB: what: sqlite's message" and returns -1. */
int edb_fail(struct edb *db, const char *what);
int edb_prepare(struct edb *db, const char *sql, sqlite3_stmt **st);

int score_edges(struct edb *db, const struct truth *t, struct system_score *s);
/* Each truth request's request node (FORMAT.md, Attribution error: key
 * APP_ID, born in [B0, B1], in the workload's scope): node[i], 0 when
 * there is none. */
int match_requests(struct edb *db, const struct truth *t, int64_t *node);
int score_attribution(struct edb *db, const struct truth *t, struct attr_score *a);
/* @s: causeway's score_edges, whose names it reads. */
int score_critical(struct edb *db, const struct truth *t, const struct system_score *s,
		   struct crit_score *c);
int score_thread_baseline(struct edb *db, const struct truth *t, struct attr_score *a);
/* The attribution of a system with no database: nothing attributed. */
void score_attribution_none(const struct truth *t, struct attr_score *a);

/* A u64 -> u64 map, open addressing; keys may be anything but ~0. */
struct u64map {
	uint64_t *k, *v;
	size_t cap, n;
};
int u64map_put(struct u64map *m, uint64_t k, uint64_t v);
int u64map_get(const struct u64map *m, uint64_t k, uint64_t *v);
void u64map_free(struct u64map *m);

double now_seconds(void);

/* Printing text that came from an input: lib/esc.h. */
/* @s escaped and cut to about 100 bytes ("..." after), for a message; the
 * result lives until the fourth call after. */
const char *esc_msg(const char *s);

#endif
