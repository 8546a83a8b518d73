// SPDX-License-Identifier: MIT
/*
 * The critical path against the truth (FORMAT.md, "The critical path";
 * docs/model.md §9): for each truth request, the database's critical
 * path of its request node. Each wait on the path (a runnable or handoff
 * segment, with the edge that ended the wait) should name a hop of that
 * request: the edge is a correct claim for one, or its src or the
 * segment's node (a handoff's object, a runnable task) is a hop's N(h)
 * (score_edges' names). One that names
 * only another request's hop is a wait behind another request; one that
 * names none is a handoff the truth does not record. The truth does not
 * say which of a request's hops are critical (of a fan-out, only the last
 * to finish is), so every hop is not expected on the path: hops_on_path
 * says how many were.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "eval.h"

enum { K_RUNNING, K_RUNNABLE, K_HANDOFF, K_BLOCKED };

static int kind_of(const char *k)
{
	static const char *const names[] = { "running", "runnable", "handoff", "blocked" };

	for (int i = 0; k && i < 4; i++)
		if (!strcmp(k, names[i]))
			return i;
	return -1;
}

static int conf_of(const char *c)
{
	static const char *const names[] = { "observed", "reconstructed", "unknown" };

	for (int i = 0; c && i < 3; i++)
		if (!strcmp(c, names[i]))
			return i;
	return 2;
}

/* The first name of @key in the sorted names, or nnames. */
static size_t name_first(const struct system_score *s, int64_t key)
{
	size_t lo = 0, hi = s->nnames;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->names[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* What @key names for truth request @req: 2 a hop of it (each such hop
 * marked in @on), 1 only another request's, 0 none. */
static int names_hop(const struct truth *t, const struct system_score *s, int64_t key, size_t req,
		     char *on)
{
	int found = 0;

	for (size_t i = name_first(s, key); i < s->nnames && s->names[i].key == key; i++) {
		size_t h = s->names[i].hop;

		if (t->hops[h].req == req) {
			on[h] = 1;
			found = 2;
		} else if (!found) {
			found = 1;
		}
	}
	return found;
}

static int max_named(int a, int b)
{
	return a > b ? a : b;
}

/* Count a wait that names a hop of its request (2), another's (1) or none
 * (0), @by 1 or -1. */
static void wait_count(struct crit_score *c, int named, long by)
{
	if (named == 2)
		c->waits_own += by;
	else if (named == 1)
		c->waits_other += by;
	else
		c->waits_none += by;
}

static int has_table(struct edb *db, const char *name)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (edb_prepare(db, "SELECT 1 FROM sqlite_master WHERE name = ?", &st))
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return edb_fail(db, "query");
	return rc == SQLITE_ROW;
}

int score_critical(struct edb *db, const struct truth *t, const struct system_score *s,
		   struct crit_score *c)
{
	sqlite3_stmt *seg = NULL;
	int64_t *node = NULL;
	char *on = NULL;
	int rc = -1, has;

	memset(c, 0, sizeof(*c));
	c->requests = (long)t->nreqs;
	if (!(c->hops_on_path = calloc(t->nmechs + 1, sizeof(*c->hops_on_path))) ||
	    !(node = calloc(t->nreqs ? t->nreqs : 1, sizeof(*node))) ||
	    !(on = calloc(t->nhops ? t->nhops : 1, 1))) {
		fprintf(stderr, "causeway-eval: out of memory\n");
		goto out;
	}
	if ((has = has_table(db, "critical_path")) <= 0) {
		rc = has;
		goto out;
	}
	c->measured = 1;
	if (match_requests(db, t, node) ||
	    edb_prepare(db, "SELECT c.kind, c.end_ns - c.start_ns, c.confidence, c.edge, e.src,"
			    " c.node FROM critical_path c LEFT JOIN edges e ON e.id = c.edge"
			    " WHERE c.request = ? ORDER BY c.seq", &seg))
		goto out;
	for (size_t i = 0; i < t->nreqs; i++) {
		int64_t last_edge = 0;
		int walked = 0, stopped = 0, step, last_named = 0;

		if (!node[i])
			continue;
		c->matched++;
		sqlite3_bind_int64(seg, 1, node[i]);
		while ((step = sqlite3_step(seg)) == SQLITE_ROW) {
			int k = kind_of((const char *)sqlite3_column_text(seg, 0));
			double ns = (double)sqlite3_column_int64(seg, 1);
			int64_t edge = sqlite3_column_int64(seg, 3), src = sqlite3_column_int64(seg, 4);
			int named;

			walked = 1;
			c->wall_ns += ns;
			c->conf_ns[conf_of((const char *)sqlite3_column_text(seg, 2))] += ns;
			if (k < 0)
				continue;
			c->kind_ns[k] += ns;
			stopped |= k == K_BLOCKED;
			if ((k != K_RUNNABLE && k != K_HANDOFF) || !edge)
				continue;
			named = names_hop(t, s, edge * 2, i, on);
			if (src)
				named = max_named(named, names_hop(t, s, src * 2 + 1, i, on));
			/* the object of a handoff; the task of a runnable wait */
			named = max_named(named, names_hop(t, s, sqlite3_column_int64(seg, 5) * 2 + 1, i,
							   on));
			/* A wait: a runnable segment and the handoff before it
			 * name one edge, counted once, by the better of the
			 * two. */
			if (edge == last_edge) {
				if (named <= last_named)
					continue;
				wait_count(c, last_named, -1);
			} else {
				c->waits++;
			}
			wait_count(c, named, 1);
			last_edge = edge;
			last_named = named;
		}
		sqlite3_reset(seg);
		if (step != SQLITE_DONE) {
			edb_fail(db, "query");
			goto out;
		}
		c->walked += walked;
		c->whole += walked && !stopped;
	}
	for (size_t h = 0; h < t->nhops; h++)
		if (on[h]) {
			c->hops_on_path[t->hops[h].mech]++;
			c->hops_on_path[t->nmechs]++;
		}
	rc = 0;
out:
	sqlite3_finalize(seg);
	free(node);
	free(on);
	return rc;
}
