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

struct cw_xwaits {
	struct cw_x *x;
	sqlite3_stmt *at, *ended_by;
	bool any; /* the database has a resource wait */
};

/* The columns every lookup reads, in the order row() takes them. */
#define WAIT_COLUMNS                                                                           \
	"SELECT w.id, w.wake_edge, w.start_ns, w.end_ns, e.ts, r.name, r.scope, w.waker, "     \
	"k.type, k.name, k.key, wt.type, wt.name, w.confidence, w.reason "                     \
	"FROM resource_waits w LEFT JOIN nodes r ON r.id = w.resource "                        \
	"LEFT JOIN nodes wt ON wt.id = w.waiter LEFT JOIN nodes k ON k.id = w.waker "          \
	"LEFT JOIN edges e ON e.id = w.wake_edge "

/* The latest begun: the innermost, should waits nest (a deadlock check
 * inside a lock wait waits for an LWLock); the id for a stable answer. */
static const char *const at_sql =
	WAIT_COLUMNS "WHERE w.waiter IN (?1, ?2, ?3) AND w.start_ns <= ?4 "
		     "AND (w.end_ns IS NULL OR w.end_ns > ?4) ORDER BY w.start_ns DESC, w.id DESC LIMIT 1";
static const char *const ended_by_sql =
	WAIT_COLUMNS "WHERE w.wake_edge = ?1 ORDER BY w.start_ns DESC, w.id DESC LIMIT 1";

struct cw_xwaits *cw_xwaits__open(struct cw_x *x)
{
	struct cw_xwaits *w = calloc(1, sizeof(*w));
	sqlite3_stmt *any;

	if (!w) {
		cw_x__err("out of memory");
		return NULL;
	}
	w->x = x;
	w->at = cw_x__prepare(x, at_sql);
	w->ended_by = cw_x__prepare(x, ended_by_sql);
	any = cw_x__prepare(x, "SELECT EXISTS (SELECT 1 FROM resource_waits)");
	if (!w->at || !w->ended_by || !any) {
		sqlite3_finalize(any);
		cw_xwaits__free(w);
		return NULL;
	}
	w->any = sqlite3_step(any) == SQLITE_ROW && sqlite3_column_int(any, 0);
	sqlite3_finalize(any);
	return w;
}

void cw_xwaits__free(struct cw_xwaits *w)
{
	if (!w)
		return;
	sqlite3_finalize(w->at);
	sqlite3_finalize(w->ended_by);
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
	if (rc == SQLITE_DONE)
		return 0;
	cw_x__err("the database cannot be read: %s", sqlite3_errmsg(w->x->db));
	return -1;
}

static void bind_id(sqlite3_stmt *s, int i, int64_t id)
{
	if (id)
		sqlite3_bind_int64(s, i, id);
	else
		sqlite3_bind_null(s, i);
}

int cw_xwaits__at(struct cw_xwaits *w, int64_t thread, int64_t request, int64_t task, int64_t ts,
		  struct cw_xwait *out)
{
	if (!w->any)
		return 0;
	sqlite3_reset(w->at);
	bind_id(w->at, 1, thread);
	bind_id(w->at, 2, request);
	bind_id(w->at, 3, task);
	sqlite3_bind_int64(w->at, 4, ts);
	return lookup(w, w->at, out);
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
