// SPDX-License-Identifier: MIT
/*
 * The resource waits as the exports show them: see waits.h.
 *
 * Read row by row, through the indexes the analyzer makes for it
 * (resource_waits(waiter, start_ns) for the waits a sample lies in,
 * resource_waits(wake_edge) for the wait an edge ended), and not at all
 * when the database has no resource wait: most have none, and the
 * Perfetto export asks for every off-CPU sample.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "names.h"
#include "waits.h"
#include "../lib/esc.h"

/* Request names are cut to what reads as a frame, a slice's name or a
 * label line: the length profile.c and perfetto.c cut them to. */
#define REQUEST_NAME_MAX 60

/* An outer wait whose end was not seen (below). */
struct open_wait {
	int64_t waiter, start, id;
};

struct cw_xwaits {
	struct cw_x *x;
	sqlite3_stmt *latest, *outer, *by_id, *ended_by;
	bool any; /* the database has a resource wait */
	/* the longest outer wait that ended (-1: none), and those that did
	 * not, by waiter and start */
	int64_t outer_max;
	struct open_wait *open;
	size_t nopen;
};

/* The columns every lookup reads, in the order row() takes them. */
#define WAIT_COLUMNS                                                                           \
	"SELECT w.id, w.wake_edge, w.start_ns, w.end_ns, e.ts, r.name, r.scope, w.waker, "    \
	"k.type, k.name, k.key, wt.type, wt.name, w.confidence, w.reason "                     \
	"FROM resource_waits w LEFT JOIN nodes r ON r.id = w.resource "                        \
	"LEFT JOIN nodes wt ON wt.id = w.waiter LEFT JOIN nodes k ON k.id = w.waker "          \
	"LEFT JOIN edges e ON e.id = w.wake_edge "

/*
 * The wait a sample lies in is the latest begun of those that hold its
 * time: the innermost, should waits nest (a backend granted a lock waits
 * for the lock manager's LWLock inside its lock wait), as
 * sample_mechanism finds it; the id orders equal starts. Asked as a query
 * (waiter IN (...) AND start_ns <= ts AND end_ns > ts, latest first), it
 * reads every earlier wait of the waiter for a sample in none: a thread's
 * ten thousand mutex waits and as many sleeps outside them made the
 * Perfetto export quadratic. So, per waiter: the latest begun at or
 * before the time, one seek of resource_waits(waiter, start_ns); if it
 * does not hold the time, only a wait that holds its begin can (an outer
 * wait), and an outer wait that ended is at most outer_max long: a scan
 * of that span before the time. An outer wait whose end was not seen is
 * in the open list, read once.
 */
static const char *const latest_sql =
	"SELECT id, start_ns, end_ns FROM resource_waits WHERE waiter = ?1 AND start_ns <= ?2 "
	"ORDER BY start_ns DESC, id DESC LIMIT 1";
static const char *const outer_sql =
	"SELECT id, start_ns FROM resource_waits WHERE waiter = ?1 AND start_ns >= ?2 "
	"AND start_ns <= ?3 AND (start_ns < ?3 OR id < ?4) AND end_ns > ?5 "
	"ORDER BY start_ns DESC, id DESC LIMIT 1";
/* A wait holds the begin of another of its waiter's, begun after it
 * (before @end: the end's bound is a bound of the index's range, so that
 * each wait reads only the waits begun in it). */
#define HOLDS_ANOTHER(end)                                                                     \
	"EXISTS (SELECT 1 FROM resource_waits i WHERE i.waiter = o.waiter "                    \
	"AND i.start_ns >= o.start_ns AND (i.start_ns > o.start_ns OR i.id > o.id)" end ")"
static const char *const outer_max_sql =
	"SELECT max(o.end_ns - o.start_ns) FROM resource_waits o "
	"WHERE o.end_ns IS NOT NULL AND " HOLDS_ANOTHER(" AND i.start_ns < o.end_ns");
static const char *const open_sql =
	"SELECT o.waiter, o.start_ns, o.id FROM resource_waits o "
	"WHERE o.end_ns IS NULL AND " HOLDS_ANOTHER("") " ORDER BY o.waiter, o.start_ns, o.id";
static const char *const by_id_sql = WAIT_COLUMNS "WHERE w.id = ?1";
static const char *const ended_by_sql =
	WAIT_COLUMNS "WHERE w.wake_edge = ?1 ORDER BY w.start_ns DESC, w.id DESC LIMIT 1";

static int db_error(struct cw_xwaits *w)
{
	cw_x__err("the database cannot be read: %s", sqlite3_errmsg(w->x->db));
	return -1;
}

/* What open() reads once: whether there are waits, outer_max, the open
 * list. */
static int load(struct cw_xwaits *w)
{
	sqlite3_stmt *s = cw_x__prepare(w->x, "SELECT EXISTS (SELECT 1 FROM resource_waits)");
	size_t cap = 0;
	int rc;

	if (!s)
		return -1;
	w->any = sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	w->outer_max = -1;
	if (!w->any)
		return 0;
	if (!(s = cw_x__prepare(w->x, outer_max_sql)))
		return -1;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
		w->outer_max = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_error(w);
	if (!(s = cw_x__prepare(w->x, open_sql)))
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (w->nopen == cap) {
			struct open_wait *m = realloc(w->open, (cap = cap ? cap * 2 : 64) * sizeof(*m));

			if (!m) {
				sqlite3_finalize(s);
				cw_x__err("out of memory");
				return -1;
			}
			w->open = m;
		}
		w->open[w->nopen++] = (struct open_wait){ .waiter = sqlite3_column_int64(s, 0),
							  .start = sqlite3_column_int64(s, 1),
							  .id = sqlite3_column_int64(s, 2) };
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : db_error(w);
}

struct cw_xwaits *cw_xwaits__open(struct cw_x *x)
{
	struct cw_xwaits *w = calloc(1, sizeof(*w));

	if (!w) {
		cw_x__err("out of memory");
		return NULL;
	}
	w->x = x;
	w->latest = cw_x__prepare(x, latest_sql);
	w->outer = cw_x__prepare(x, outer_sql);
	w->by_id = cw_x__prepare(x, by_id_sql);
	w->ended_by = cw_x__prepare(x, ended_by_sql);
	if (!w->latest || !w->outer || !w->by_id || !w->ended_by || load(w)) {
		cw_xwaits__free(w);
		return NULL;
	}
	return w;
}

void cw_xwaits__free(struct cw_xwaits *w)
{
	if (!w)
		return;
	sqlite3_finalize(w->latest);
	sqlite3_finalize(w->outer);
	sqlite3_finalize(w->by_id);
	sqlite3_finalize(w->ended_by);
	free(w->open);
	free(w);
}

static const char *col_text(sqlite3_stmt *s, int i)
{
	const char *t = (const char *)sqlite3_column_text(s, i);

	return t ? t : "";
}

/*
 * A resource's kind, from its scope: 'pid:N/KIND', or 'pid:N/KIND/NAME'
 * for the second of two composite identities with one hash
 * (analyze/cls_adapter.c). The view resource_kinds reads it the same
 * way; the export does not read the view, so that a database made before
 * it exports alike. A program's kind may hold a space or a '/': it is not
 * cut out of the name.
 */
static void kind_of(char *buf, size_t cap, const char *scope, const char *name)
{
	const char *k = strchr(scope, '/');
	size_t n, nl = strlen(name);
	char raw[512];

	if (!k) {
		buf[0] = '\0';
		return;
	}
	n = strlen(++k);
	if (strcmp(k, name) && n > nl && k[n - nl - 1] == '/' && !strcmp(k + n - nl, name))
		n -= nl + 1;
	snprintf(raw, sizeof(raw), "%.*s", (int)n, k);
	cw_esc_snprint(buf, cap, raw);
}

/* A request's name as a name says it: escaped, and where that is longer
 * than REQUEST_NAME_MAX bytes cut at a whole character with "..." within
 * them (as a profile's root frame); "request KEY" when it has none. */
static void request_text(char *buf, size_t cap, const char *name, int64_t key)
{
	char full[1024];
	size_t n;

	if (!*name)
		snprintf(buf, cap, "request %" PRId64, key);
	else if ((n = cw_esc_snprint(full, sizeof(full), name)) <= REQUEST_NAME_MAX && n < cap)
		memcpy(buf, full, n + 1);
	else
		cw_esc_snprint(buf, cap < REQUEST_NAME_MAX + 1 ? cap : REQUEST_NAME_MAX + 1, name);
}

/* The row at @s into @out. */
static void row(sqlite3_stmt *s, struct cw_xwait *out)
{
	const char *waker_type = (const char *)sqlite3_column_text(s, 8);
	const char *waiter_type = col_text(s, 11);
	int64_t start = sqlite3_column_int64(s, 2);

	memset(out, 0, sizeof(*out));
	out->id = sqlite3_column_int64(s, 0);
	out->wake_edge = sqlite3_column_int64(s, 1);
	out->blocked_ns = sqlite3_column_type(s, 4) != SQLITE_NULL ? sqlite3_column_int64(s, 4) - start
			  : sqlite3_column_type(s, 3) != SQLITE_NULL ? sqlite3_column_int64(s, 3) - start
								     : -1;
	cw_esc_snprint(out->resource, sizeof(out->resource),
		       *col_text(s, 5) ? col_text(s, 5) : "resource");
	kind_of(out->kind, sizeof(out->kind), col_text(s, 6), col_text(s, 5));
	if (!strcmp(waiter_type, "request"))
		cw_esc_snprint(out->waiting_request, sizeof(out->waiting_request), col_text(s, 12));
	/* a waker the database names no node of is not known either */
	out->waker_known = sqlite3_column_type(s, 7) != SQLITE_NULL && waker_type;
	if (out->waker_known && !strcmp(waker_type, "request")) {
		cw_esc_snprint(out->waking_request, sizeof(out->waking_request), col_text(s, 9));
		request_text(out->waker, sizeof(out->waker), col_text(s, 9),
			     sqlite3_column_int64(s, 10));
	} else if (out->waker_known) {
		struct cw_xnode n = { .type = waker_type,
				      .name = col_text(s, 9),
				      .key = sqlite3_column_int64(s, 10) };

		cw_x__node_text(out->waker, sizeof(out->waker), &n);
		out->waker_object = !cw_x__is_context(waker_type) && strcmp(waker_type, "runtime_task");
	}
	cw_esc_snprint(out->confidence, sizeof(out->confidence), col_text(s, 13));
	cw_esc_snprint(out->reason, sizeof(out->reason), col_text(s, 14));
}

/* Step @s for one row. */
static int lookup(struct cw_xwaits *w, sqlite3_stmt *s, struct cw_xwait *out)
{
	int rc = sqlite3_step(s);

	if (rc == SQLITE_ROW) {
		row(s, out);
		return 1;
	}
	return rc == SQLITE_DONE ? 0 : db_error(w);
}

/* The latest begun so far: (start, id) of the wait found, if any. */
struct best {
	bool found;
	int64_t start, id;
};

static void keep(struct best *b, int64_t start, int64_t id)
{
	if (!b->found || start > b->start || (start == b->start && id > b->id))
		*b = (struct best){ .found = true, .start = start, .id = id };
}

/* The latest begun wait of @waiter that holds @ts, into @b (see above).
 * @return 0, or -1 after a message. */
static int at_one(struct cw_xwaits *w, int64_t waiter, int64_t ts, struct best *b)
{
	sqlite3_stmt *s = w->latest;
	int64_t id, start, from;
	size_t lo = 0, hi = w->nopen;
	int rc;

	sqlite3_reset(s);
	sqlite3_bind_int64(s, 1, waiter);
	sqlite3_bind_int64(s, 2, ts);
	if ((rc = sqlite3_step(s)) != SQLITE_ROW)
		return rc == SQLITE_DONE ? 0 : db_error(w);
	id = sqlite3_column_int64(s, 0);
	start = sqlite3_column_int64(s, 1);
	if (sqlite3_column_type(s, 2) == SQLITE_NULL || sqlite3_column_int64(s, 2) > ts) {
		keep(b, start, id);
		return 0;
	}
	if (w->outer_max >= 0) {
		s = w->outer;
		from = ts < INT64_MIN + w->outer_max ? INT64_MIN : ts - w->outer_max;
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, waiter);
		sqlite3_bind_int64(s, 2, from);
		sqlite3_bind_int64(s, 3, start);
		sqlite3_bind_int64(s, 4, id);
		sqlite3_bind_int64(s, 5, ts);
		if ((rc = sqlite3_step(s)) == SQLITE_ROW)
			keep(b, sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 0));
		else if (rc != SQLITE_DONE)
			return db_error(w);
	}
	/* the open list's last of @waiter begun at or before @ts */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct open_wait *o = &w->open[mid];

		if (o->waiter < waiter || (o->waiter == waiter && o->start <= ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && w->open[lo - 1].waiter == waiter)
		keep(b, w->open[lo - 1].start, w->open[lo - 1].id);
	return 0;
}

int cw_xwaits__at(struct cw_xwaits *w, int64_t thread, int64_t request, int64_t task, int64_t ts,
		  struct cw_xwait *out)
{
	const int64_t waiters[] = { thread, request, task };
	struct best b = { .found = false };

	if (!w->any)
		return 0;
	for (size_t i = 0; i < sizeof(waiters) / sizeof(waiters[0]); i++)
		if (waiters[i] && at_one(w, waiters[i], ts, &b))
			return -1;
	if (!b.found)
		return 0;
	sqlite3_reset(w->by_id);
	sqlite3_bind_int64(w->by_id, 1, b.id);
	return lookup(w, w->by_id, out);
}

int cw_xwaits__ended_by(struct cw_xwaits *w, int64_t edge, struct cw_xwait *out)
{
	if (!w->any || !edge)
		return 0;
	sqlite3_reset(w->ended_by);
	sqlite3_bind_int64(w->ended_by, 1, edge);
	return lookup(w, w->ended_by, out);
}

void cw_xwait__text(char *buf, size_t cap, const struct cw_xwait *w, int64_t wake,
		    const char *cause)
{
	bool own = wake < 0 || (wake > 0 && wake == w->wake_edge);

	if (own && w->waker_known)
		snprintf(buf, cap, "%s %s by %s", w->resource, w->waker_object ? "ended" : "released",
			 w->waker);
	else if (own || (!wake && !w->waker_known))
		snprintf(buf, cap, "%s (%s)", w->resource, *w->reason ? w->reason : "waker unknown");
	else
		snprintf(buf, cap, "%s, in %s", cause ? cause : "unknown", w->resource);
}
