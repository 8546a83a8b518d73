// SPDX-License-Identifier: MIT
/*
 * The critical path of every request (docs/model.md §9). A walk starts at
 * the request's end, in the thread its end edge returned to, and goes
 * back in time; each step says what its context was doing just before
 * the walk's time t, writes that as a segment, and moves t (and perhaps
 * the context) back:
 *
 *  - a thread: its timeline is its off-CPU rows (docs/model.md §4.2: one
 *    per wait, from the switch-out to the switch-in, with the wake that
 *    ended it). Between two waits it was running (on a CPU, or
 *    preempted: a preemption is no wait). Within a wait, from its wake to
 *    its switch-in it was runnable; before the wake, blocked, and the
 *    walk follows the wake to its cause: a thread that woke it (entered
 *    at the wake), or an object;
 *  - an object (an io_request, a work item, a timer, a packet, a block
 *    request): a handoff from its birth (submit, queue, arm, transmit:
 *    the earliest edge into it) to the edge it ended the wait with, and
 *    the walk goes on in what made it, at its birth. An io-wq worker's
 *    wake is the completion of the request punted to it
 *    (punted_completion);
 *  - a runtime task: running while a thread polls it, runnable from its
 *    wake or spawn to the poll (step_task).
 *
 * What the walk cannot follow ends it: the rest of the request, back to
 * its begin, is one blocked segment, unknown, with the reason (a wake
 * not seen or of unknown cause, a thread whose waits the trace does not
 * hold, an object whose birth is not in it, a coverage break that could
 * hide a wait, the walk's bounds). It never jumps to a likely cause.
 * Segments are clipped to the request and tile it: each ends where the
 * one after it (in time) begins, and t never moves forward.
 *
 * Bounds: every row read is counted. A walk stops after CW_CRIT_STEPS
 * steps or CW_CRIT_ROWS rows, and all walks together read no more than
 * a fixed multiple of the rows the join wrote: a request whose walk
 * finds the budget spent gets one blocked segment, so a trace cannot
 * make this part grow with the square of its length (tests/hostile.sh).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "breaks.h"
#include "critical.h"
#include "db.h"

/*
 * What the walks read again and again, kept across them: the requests of
 * a thread all enter it, whose row and spawn edge are the same each time
 * (pgbench's: 127K requests on a few backends, 140K reads of each kind,
 * a tenth of the analyzer's time). The walks change nothing they read
 * (they write critical_rows alone), so a row kept is the row read; a kept
 * read is counted as the rows it read when made, so that the bounds fall
 * where they did.
 */
#define KEPT_SLOTS 1024

struct kept_spawn {
	uint64_t node; /* 0: empty */
	uint64_t rows;
	int rc;
	struct cw_db_edge e;
};

struct kept {
	struct cw_db_node node[KEPT_SLOTS]; /* id 0: empty */
	struct kept_spawn spawn[KEPT_SLOTS];
};

struct walk {
	struct kept *kept;
	struct cw_db *db;
	const struct cw_critical_opts *o;
	struct cw_critical_stats *st;
	const struct cw_db_request *r;
	uint64_t budget; /* rows all walks may still read, this one's included */
	uint64_t rows;	 /* rows this walk read */
	uint32_t seq;
	uint8_t stopped; /* cw_crit_stop: why it ended short of the begin */
};

/* Where the walk is: a context, the time t, and the edge that led there
 * (id 0: none, at the request's end). */
struct cursor {
	uint64_t node, t;
	struct cw_db_edge via;
	/* In a thread: the runtime task the walk came from, polled there
	 * since poll (0: none). At a task: queued, the walk is at the
	 * beginning of its poll, where it waited to be polled. */
	uint64_t task, poll;
	uint8_t queued;
};

static uint8_t weakest(uint8_t a, uint8_t b)
{
	return a > b ? a : b;
}

/* A segment [from, to] clipped to the request; none when empty. */
static int emit(struct walk *w, uint64_t node, uint8_t kind, uint64_t from, uint64_t to,
		uint64_t edge, uint8_t conf, uint8_t stop)
{
	struct cw_crit_row c;

	if (from < w->r->start_ns)
		from = w->r->start_ns;
	if (to > w->r->end_ns)
		to = w->r->end_ns;
	if (to <= from)
		return 0;
	c = (struct cw_crit_row){ .request = w->r->id, .node = node, .edge = edge, .seq = w->seq++,
				  .kind = kind, .confidence = conf, .stop = stop,
				  .start_ns = from, .end_ns = to };
	w->st->segments++;
	if (stop)
		w->st->unknown_ns += to - from;
	return cw_db__crit_row(w->db, &c);
}

/* The walk ends at @t in @node: the rest back to the begin is blocked,
 * unknown, and says why (docs/model.md §9). */
static int stop(struct walk *w, uint64_t node, uint64_t t, uint64_t edge, uint8_t why)
{
	w->stopped = why;
	return emit(w, node, CW_CRIT_BLOCKED, w->r->start_ns, t, edge, CW_CONF_UNKNOWN, why);
}

/* The segment [from, t] of @node, and the walk goes on at @from in what
 * @cause came from (its src), or stops there when that is unknown. */
static int go_back(struct walk *w, uint64_t node, uint8_t kind, uint64_t from, uint64_t edge,
		   uint8_t conf, struct cursor *c, const struct cw_db_edge *cause)
{
	int rc = emit(w, node, kind, from, c->t, edge, conf, CW_STOP_NONE);

	c->t = from;
	if (rc || c->t <= w->r->start_ns)
		return rc;
	if (!cause->src)
		return stop(w, node, c->t, cause->id, CW_STOP_CAUSE_UNKNOWN);
	c->node = cause->src;
	c->via = *cause;
	return 0;
}

/* Rows the next read may take, and which bound stops it there. */
static uint64_t room(const struct walk *w, uint8_t *why)
{
	uint64_t mine = w->rows < CW_CRIT_ROWS ? CW_CRIT_ROWS - w->rows : 0;
	uint64_t all = w->budget > w->rows ? w->budget - w->rows : 0;

	*why = all < mine ? CW_STOP_BUDGET : CW_STOP_BOUND;
	return all < mine ? all : mine;
}

/* A stretch in which a wait could hide: a break of the edges (a switch)
 * overlaps it, or one of the samples where a wait was a sample record. */
static int broken(const struct walk *w, uint64_t from, uint64_t to)
{
	const struct cw_breaks *b = w->o->breaks;

	return b && (cw_breaks__overlap(b, from, to) ||
		     (w->o->waits_in_samples && cw_breaks__overlap_samples(b, from, to)));
}

static int pick_spawn(void *ctx, const struct cw_db_edge *e)
{
	(void)ctx;
	return e->type == CW_EDGE_SPAWN;
}

/* cw_db__node() through the kept rows. */
static int node_of(struct walk *w, uint64_t id, struct cw_db_node *n)
{
	struct cw_db_node *k = &w->kept->node[id % KEPT_SLOTS];
	int rc;

	if (k->id == id) {
		*n = *k;
		return 1;
	}
	rc = cw_db__node(w->db, id, n);
	if (rc == 1)
		*k = *n;
	return rc;
}

/* Thread @node's spawn edge, as cw_db__scan_into() from its first edge
 * finds it, within @lim rows, through the kept reads. */
static int spawn_of(struct walk *w, uint64_t node, uint64_t lim, struct cw_db_edge *spawn)
{
	struct kept_spawn *k = &w->kept->spawn[node % KEPT_SLOTS];
	uint64_t rows = 0;
	int rc;

	if (k->node == node) {
		if (k->rows > lim) {
			w->rows += lim + 1;
			return -E2BIG;
		}
		w->rows += k->rows;
		*spawn = k->e;
		return k->rc;
	}
	rc = cw_db__scan_into(w->db, node, 0, 1, lim, &rows, pick_spawn, NULL, spawn);
	w->rows += rows;
	if (rc >= 0)
		*k = (struct kept_spawn){ .node = node, .rows = rows, .rc = rc, .e = *spawn };
	return rc;
}

/* Back from a wake in a thread's edges: its latest completion, unless a
 * wake or fire into it comes first (it ran since then, for something
 * else). */
static int pick_completion(void *ctx, const struct cw_db_edge *e)
{
	(void)ctx;
	if (e->type == CW_EDGE_WAKE || e->type == CW_EDGE_FIRE)
		return -1;
	return e->type == CW_EDGE_COMPLETE && e->src;
}

/*
 * A wake from an io-wq worker is the completion of the request it ran:
 * the worker completes a request punted to it, in its own context, and
 * the completion wakes the waiter (the capture names the worker as the
 * waker: docs/model.md §5.11, io_uring). So when the walk enters a thread
 * through its wake and the thread completed, since it last ran for a
 * wake, a request that was punted to it, the wait was on that request:
 * 1 and *@req. Reconstructed: the wake does not name the request. A
 * completion in the submitter's own task work is not one (no punt to it):
 * its later wakes are its own.
 */
static int punted_completion(struct walk *w, const struct cw_db_node *n, struct cursor *c,
			     uint64_t *req)
{
	struct cw_db_edge done, punt;
	uint64_t lim;
	uint8_t why;
	int rc;

	if (!(lim = room(w, &why)))
		return stop(w, n->id, c->t, c->via.id, why);
	rc = cw_db__scan_into(w->db, n->id, c->t, 0, lim, &w->rows, pick_completion, NULL, &done);
	if (rc == -E2BIG)
		return stop(w, n->id, c->t, c->via.id, why);
	if (rc <= 0)
		return rc;
	if (!(lim = room(w, &why)))
		return stop(w, n->id, c->t, c->via.id, why);
	rc = cw_db__last_from(w->db, done.src, CW_EDGE_PUNT, c->t, lim, &w->rows, &punt);
	if (rc == -E2BIG)
		return stop(w, n->id, c->t, c->via.id, why);
	if (rc <= 0)
		return rc;
	*req = done.src;
	return punt.dst == n->id;
}

/*
 * In a thread, the walk reached the beginning of the poll of the task it
 * came from, in a stretch with no wait: the thread ran the task since
 * then, and before, the task waited to be polled (step_task).
 */
static int poll_began(struct walk *w, const struct cw_db_node *n, struct cursor *c)
{
	uint64_t from = c->poll < w->r->start_ns ? w->r->start_ns : c->poll;
	int rc;

	if (c->poll < c->t && broken(w, from, c->t))
		return stop(w, n->id, c->t, c->via.id, CW_STOP_BREAK);
	rc = emit(w, c->task, CW_CRIT_RUNNING, c->poll < c->t ? c->poll : c->t, c->t, 0,
		  CW_CONF_OBSERVED, CW_STOP_NONE);
	if (c->poll < c->t)
		c->t = c->poll;
	c->node = c->task;
	c->task = 0;
	c->queued = 1;
	return rc;
}

/*
 * A thread at t. Its first moment is its birth (its spawn edge leads to
 * its parent), or, born unseen, its first record (its orphan spawn edge):
 * what it did before is not in the trace.
 */
static int step_thread(struct walk *w, const struct cw_db_node *n, struct cursor *c)
{
	struct cw_db_edge spawn = { 0 }, wake;
	struct cw_db_wait s;
	uint64_t first, lim, end;
	int rc, has, born;
	uint8_t why, conf;

	if (!w->o->waits_recorded || n->traced != 1)
		return stop(w, n->id, c->t, c->via.id, CW_STOP_NOT_RECORDED);
	if (c->via.type == CW_EDGE_WAKE && c->via.src == n->id) {
		uint64_t req = 0;

		rc = punted_completion(w, n, c, &req);
		if (rc < 0 || w->stopped)
			return rc;
		if (rc) {
			c->node = req;
			c->via.confidence = weakest(c->via.confidence, CW_CONF_RECONSTRUCTED);
			return 0;
		}
	}
	/* Its spawn edge: from its parent, or an orphan's at its first
	 * record. */
	if (!(lim = room(w, &why)))
		return stop(w, n->id, c->t, c->via.id, why);
	rc = spawn_of(w, n->id, lim, &spawn);
	if (rc == -E2BIG)
		return stop(w, n->id, c->t, c->via.id, why);
	if (rc < 0)
		return rc;
	born = rc == 1 && spawn.src && n->start_seen;
	if (n->start_seen && n->start_ns >= 0)
		first = (uint64_t)n->start_ns;
	else if (rc == 1)
		first = spawn.ts;
	else
		return stop(w, n->id, c->t, c->via.id, CW_STOP_BEFORE_FIRST);
	if (c->t < first)
		return stop(w, n->id, c->t, c->via.id, CW_STOP_OUT_OF_ORDER);
	if (!(lim = room(w, &why)))
		return stop(w, n->id, c->t, c->via.id, why);
	rc = cw_db__wait_before(w->db, n->id, c->t, lim, &w->rows, &s);
	if (rc == -E2BIG)
		return stop(w, n->id, c->t, c->via.id, why);
	if (rc < 0)
		return rc;
	/* A wait that began before the thread's first moment contradicts
	 * it: not this thread's timeline. */
	has = rc == 1 && s.ts >= first;
	end = has ? s.ts + s.weight : first;
	if (c->task && end <= c->poll)
		return poll_began(w, n, c);
	if (end < c->t) {
		/* Running since the wait's switch-in, or since the first
		 * moment; in the task the walk came from, if any. */
		uint64_t from = end < w->r->start_ns ? w->r->start_ns : end;

		if (broken(w, from, c->t))
			return stop(w, n->id, c->t, c->via.id, CW_STOP_BREAK);
		conf = has ? (s.exact ? CW_CONF_OBSERVED : CW_CONF_RECONSTRUCTED)
			   : (n->start_seen ? CW_CONF_OBSERVED : CW_CONF_RECONSTRUCTED);
		rc = emit(w, c->task ? c->task : n->id, CW_CRIT_RUNNING, end, c->t,
			  !has && born ? spawn.id : 0, conf, CW_STOP_NONE);
		c->t = end;
		if (rc || c->t <= w->r->start_ns)
			return rc;
	}
	/* A wait, or the thread's first moment: the walk leaves the task's
	 * poll, if it was in one. */
	c->task = 0;
	if (!has) {
		/* At its first moment: before it, its parent ran. */
		if (!born)
			return stop(w, n->id, c->t, c->via.id, CW_STOP_BEFORE_FIRST);
		c->node = spawn.src;
		c->via = spawn;
		return 0;
	}
	/* t is in the wait: (s.ts, end]. */
	if (!s.wake)
		return stop(w, n->id, c->t, 0, s.exact ? CW_STOP_NO_WAKE : CW_STOP_WAIT_OPEN);
	rc = cw_db__edge(w->db, s.wake, &wake);
	w->rows++;
	if (rc <= 0)
		return rc ?: stop(w, n->id, c->t, 0, CW_STOP_NO_WAKE);
	/* Entered within the wait before its wake: it was blocked at t, by
	 * something the walk did not come from. */
	if (wake.ts > c->t)
		return stop(w, n->id, c->t, c->via.id, CW_STOP_OUT_OF_ORDER);
	/* The wake's time is seen even when its cause is not (that is the
	 * stop's to say); a switch-in reconstructed from the wake
	 * (docs/model.md §4.2) ends the wait no later than said: runnable,
	 * reconstructed. */
	conf = wake.confidence == CW_CONF_UNKNOWN ? CW_CONF_OBSERVED : wake.confidence;
	if (!s.exact)
		conf = weakest(conf, CW_CONF_RECONSTRUCTED);
	wake.confidence = conf;
	return go_back(w, n->id, CW_CRIT_RUNNABLE, wake.ts, wake.id, conf, c, &wake);
}

/* An object at t: in flight since its birth, which came from what the
 * walk enters next. */
static int step_object(struct walk *w, const struct cw_db_node *n, struct cursor *c)
{
	struct cw_db_edge birth;
	uint64_t from;
	int rc;

	rc = cw_db__first_into(w->db, n->id, &birth);
	w->rows++;
	if (rc < 0)
		return rc;
	if (!rc || !n->start_seen)
		return stop(w, n->id, c->t, c->via.id, CW_STOP_BIRTH_UNSEEN);
	/* A birth stamped after the edge it led to (two CPUs' clocks) is
	 * taken at that edge: t never moves forward. */
	from = birth.ts < c->t ? birth.ts : c->t;
	return go_back(w, n->id, CW_CRIT_HANDOFF, from, c->via.id,
		       weakest(birth.confidence, c->via.confidence), c, &birth);
}

static int pick_task_wake(void *ctx, const struct cw_db_edge *e)
{
	(void)ctx;
	return e->type == CW_EDGE_WAKE || e->type == CW_EDGE_SPAWN;
}

/*
 * A runtime task (an adapter's task, a goroutine): it runs while a thread
 * polls it (from its resume edge to the thread's next task), and between
 * polls it waits to be polled again, runnable from its wake or spawn.
 * Entered at t through what it did (a wake it raised, an object it made):
 * it was being polled then, by the thread whose poll of it began last,
 * whose timeline the walk follows back to that poll's beginning
 * (poll_began). At the beginning of the poll: runnable since its last
 * wake or spawn, whose src the walk enters next.
 */
static int step_task(struct walk *w, const struct cw_db_node *n, struct cursor *c)
{
	struct cw_db_edge e;
	uint64_t lim;
	uint8_t why;
	int rc;

	if (!(lim = room(w, &why)))
		return stop(w, n->id, c->t, c->via.id, why);
	if (c->queued) {
		c->queued = 0;
		rc = cw_db__scan_into(w->db, n->id, c->t, 0, lim, &w->rows, pick_task_wake, NULL, &e);
		if (rc == -E2BIG)
			return stop(w, n->id, c->t, c->via.id, why);
		if (rc <= 0)
			return rc ?: stop(w, n->id, c->t, c->via.id, CW_STOP_BIRTH_UNSEEN);
		if (e.confidence == CW_CONF_UNKNOWN)
			e.confidence = CW_CONF_OBSERVED; /* its time is seen: as a thread's wake */
		return go_back(w, n->id, CW_CRIT_RUNNABLE, e.ts, e.id, e.confidence, c, &e);
	}
	rc = cw_db__last_from(w->db, n->id, CW_EDGE_RESUME, c->t, lim, &w->rows, &e);
	if (rc == -E2BIG)
		return stop(w, n->id, c->t, c->via.id, why);
	if (rc <= 0)
		return rc ?: stop(w, n->id, c->t, c->via.id, CW_STOP_NO_CONTEXT);
	c->node = e.dst;
	c->task = n->id;
	c->poll = e.ts;
	return 0;
}

static int walk(struct walk *w)
{
	struct cursor c = { .node = w->r->thread, .t = w->r->end_ns };
	struct cw_db_node n;
	uint64_t last_t = c.t;
	uint32_t still = 0;
	uint8_t why;
	int rc = 0;

	if (!c.node)
		return stop(w, w->r->id, c.t, 0, CW_STOP_NO_CONTEXT);
	for (uint32_t steps = 0; c.t > w->r->start_ns && !w->stopped && !rc; steps++) {
		if (steps >= CW_CRIT_STEPS)
			return stop(w, c.node, c.t, c.via.id, CW_STOP_BOUND);
		/* A few steps stay at one t (a task to its thread, a wake to
		 * the request punted to the waker, a birth stamped at its
		 * effect); many are a circle of objects born of each other. */
		still = c.t == last_t ? still + 1 : 0;
		last_t = c.t;
		if (still > CW_CRIT_STILL)
			return stop(w, c.node, c.t, c.via.id, CW_STOP_OUT_OF_ORDER);
		if (!room(w, &why))
			return stop(w, c.node, c.t, c.via.id, why);
		rc = node_of(w, c.node, &n);
		w->rows++;
		if (rc <= 0)
			return rc ?: stop(w, c.node, c.t, c.via.id, CW_STOP_NO_CONTEXT);
		switch (n.type) {
		case CW_NODE_THREAD:
			rc = step_thread(w, &n, &c);
			break;
		case CW_NODE_IO_REQUEST:
		case CW_NODE_WORK_ITEM:
		case CW_NODE_TIMER:
		case CW_NODE_PACKET:
		case CW_NODE_BLOCK_REQUEST:
			rc = step_object(w, &n, &c);
			break;
		case CW_NODE_RUNTIME_TASK:
			rc = step_task(w, &n, &c);
			break;
		default:
			rc = stop(w, n.id, c.t, c.via.id, CW_STOP_NO_CONTEXT);
			break;
		}
	}
	return rc;
}

struct run {
	struct kept *kept;
	struct cw_db *db;
	const struct cw_critical_opts *o;
	struct cw_critical_stats *st;
	uint64_t budget;
};

static int on_request(void *ctx, const struct cw_db_request *r)
{
	struct run *run = ctx;
	struct walk w = { .kept = run->kept, .db = run->db, .o = run->o, .st = run->st, .r = r,
			  .budget = run->budget };
	int rc;

	run->st->requests++;
	if (r->end_ns <= r->start_ns)
		return 0;
	run->st->wall_ns += r->end_ns - r->start_ns;
	rc = walk(&w);
	run->st->rows_read += w.rows;
	run->budget -= w.rows < run->budget ? w.rows : run->budget;
	run->st->whole += !w.stopped;
	run->st->bounded += w.stopped == CW_STOP_BOUND;
	run->st->unwalked += w.stopped == CW_STOP_BUDGET;
	return rc;
}

int cw_critical__waits_recorded(const char *offcpu, unsigned minor, int sched_joined)
{
	return offcpu && !strcmp(offcpu, "1") && minor >= 8 && sched_joined;
}

int cw_critical__run(struct cw_db *db, const struct cw_critical_opts *o,
		     struct cw_critical_stats *st)
{
	struct run run = { .db = db, .o = o, .st = st, .budget = o->budget };
	int rc;

	memset(st, 0, sizeof(*st));
	if (!run.budget)
		run.budget = CW_CRIT_ROWS_PER_ROW * cw_db__rows(db) + CW_CRIT_ROWS;
	if (!(run.kept = calloc(1, sizeof(*run.kept))))
		return -ENOMEM;
	rc = cw_db__requests(db, on_request, &run);
	free(run.kept);
	return rc;
}
