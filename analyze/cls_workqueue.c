// SPDX-License-Identifier: MIT
/*
 * The workqueue class: work items (docs/model.md §5.2, 5.3, 5.5).
 *
 * Identity. A work item is ('work_item', 'wq', work_struct pointer,
 * generation), named by its work function. Every queue is a birth: a
 * work_struct requeued a thousand times is a thousand generations, each
 * joined to its own execution, because the kernel queues a work_struct
 * only when it is not already pending (one queue, one execution).
 *
 * Two at once. The kernel lets a work_struct be queued again while it
 * executes (its PENDING bit is cleared before its function runs), and
 * never runs it on two workers at once. So a pointer has at most one
 * executing and one queued generation, and both are live: the executing
 * one still causes things (the wakes it raises, the work it queues) and
 * its end is still to come, while the queued one waits for its own
 * execution. The identity layer keeps one live generation per (type,
 * scope, key), so a generation queued while the previous one executes
 * lives under a second, private scope (SCOPE_REQUEUED) and is written
 * with scope 'wq' like any other: the two scopes are two slots of one
 * namespace, not two namespaces. W_EXEC marks the executing one; which
 * slot holds which does not matter.
 *
 * Edges.
 *  - queue: producer -> work item, where the producer is the record's
 *    cause (the timer of delayed work, the work item that queued it, the
 *    packet being received), else the current thread in task context,
 *    else unknown with the context as reason (origin.h);
 *  - execute: work item -> worker thread, at execute start, observed when
 *    the queue is in the trace with no coverage break in between;
 *  - whatever the work item causes while it executes (wakes, queues,
 *    submissions) names it as a cause: the cause hook below gives the
 *    executing generation.
 * An execute with no queued generation (queued before the capture, or by
 * something outside the traced set, or evicted) makes an orphan with an
 * incoming queue edge, src NULL, reason 'orphan: queue not in trace'.
 * Execute end ends the executing generation only: one queued meanwhile
 * is another generation, still waiting.
 *
 * Running (samples.node, docs/model.md §4): between execute start and end the
 * worker thread runs the work item, so a sample of that thread belongs
 * to it. The class remembers, per worker thread node, the work_struct
 * and the node id of the generation it started; the answer holds only
 * while that generation is still the executing one, so a lost execute
 * end can never attach later samples to a work item that is over. At
 * most MAX_RUNNING workers are remembered (an entry goes at its execute
 * end or the worker's next start); past that a worker's samples fall
 * back to the thread, less specific but never wrong.
 */
#include <errno.h>
#include <stdlib.h>
#include "classes.h"
#include "lib/hash.h"
#include "lib/htab.h"
#include "origin.h"

#define SCOPE_WQ "wq"
#define SCOPE_REQUEUED "wq/requeued" /* never written: see above */

#define W_EXEC 0x1 /* between its execute start and end */

/* What the class keeps with a work item (the owner of its state bytes). */
struct work_state {
	uint64_t exec_ns; /* W_EXEC: its execute start (or first sighting) */
};
CW_OBJ_STATE_OF(work_of, struct work_state, state)

static const char R_NO_QUEUE[] = "orphan: queue not in trace";
static const char R_QUEUE_BREAK[] = "orphan: its queue could be in a coverage break";
static const char R_EXEC_BREAK[] = "orphan: its execute start could be in a coverage break";

#define MAX_RUNNING 65536

/* What each worker thread is executing, by its node id. */
struct running {
	struct cw_hnode hn;
	uint64_t worker; /* thread node id */
	uint64_t work;	 /* work_struct */
	uint64_t node;	 /* the executing generation's node id */
	uint64_t since;	 /* its execute start: ts */
};

struct wq {
	struct cw_htab tab; /* of struct running */
};

static struct running *running_find(struct wq *w, uint64_t worker)
{
	struct running *e;

	cw_htab_for_each_possible(&w->tab, e, hn, cw_mix64(worker))
		if (e->worker == worker)
			return e;
	return NULL;
}

static uint64_t running_rehash(const struct cw_hnode *n)
{
	return cw_mix64(cw_hentry(n, struct running, hn)->worker);
}

static int running_set(struct wq *w, uint64_t worker, uint64_t work, uint64_t node,
		       uint64_t since)
{
	struct running *e = running_find(w, worker);
	int err;

	if (!e) {
		if (w->tab.n >= MAX_RUNNING)
			return 0;
		if (w->tab.n >= w->tab.cap && (err = cw_htab__grow(&w->tab, 1024, running_rehash, 0)))
			return err;
		if (!(e = calloc(1, sizeof(*e))))
			return -ENOMEM;
		e->worker = worker;
		cw_htab__add(&w->tab, &e->hn, cw_mix64(worker));
	}
	e->work = work;
	e->node = node;
	e->since = since;
	return 0;
}

static void running_drop(struct wq *w, uint64_t worker)
{
	struct running *e = running_find(w, worker);

	if (!e)
		return;
	cw_htab__del(&w->tab, &e->hn, cw_mix64(worker));
	free(e);
}

/* The live generations of one work_struct: slot 0 is scope 'wq', slot 1
 * the private one. Looking never interns a scope: only a birth does. */
static const char *const slot_scope[2] = { SCOPE_WQ, SCOPE_REQUEUED };

struct slots {
	struct cw_obj *o[2];
	struct cw_obj *exec, *queued;
};

static void slots_of(struct cw_cls *c, uint64_t work, struct slots *s)
{
	s->exec = s->queued = NULL;
	for (int i = 0; i < 2; i++) {
		const struct cw_scope *sc = cw_ident__scope_find(c->id, slot_scope[i]);

		s->o[i] = sc ? cw_ident__live(c->id, CW_NODE_WORK_ITEM, sc, work) : NULL;
		if (s->o[i] && (s->o[i]->flags & W_EXEC))
			s->exec = s->o[i];
		else if (s->o[i])
			s->queued = s->o[i];
	}
}

/* The scope of a new generation: the slot @keep (the generation that
 * stays live, if any) does not hold. NULL on ENOMEM. */
static const struct cw_scope *free_slot(struct cw_cls *c, const struct slots *s,
					const struct cw_obj *keep)
{
	return cw_ident__scope(c->id, slot_scope[keep && keep == s->o[0]]);
}

static void name_work(struct cw_cls *c, struct cw_obj *o, uint64_t function)
{
	char buf[128];

	o->n.scope = SCOPE_WQ; /* the slot's scope is private */
	if (function && !o->n.name[0])
		cw_obj__set_name(o, cw_cls__ksym(c, function, buf, sizeof(buf)), sizeof(buf));
}

/* An executing generation whose queue is not in the trace. */
static struct cw_obj *orphan_exec(struct cw_cls *c, const struct slots *s, uint64_t work,
				  uint64_t function, const struct cw_hdr *h, const char *why, int *err)
{
	const struct cw_scope *sc = free_slot(c, s, s->queued);
	struct cw_obj *o;

	if (!sc) {
		*err = -ENOMEM;
		return NULL;
	}
	o = cw_ident__orphan(c->id, CW_NODE_WORK_ITEM, sc, work, h, CW_EDGE_QUEUE, why, err);
	if (!o)
		return NULL;
	name_work(c, o, function);
	o->flags |= W_EXEC;
	work_of(o)->exec_ns = h->ts;
	return o;
}

static int on_queue(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_wq_queue *r = (const void *)h;
	const struct cw_scope *sc;
	struct cw_origin og;
	struct slots s;
	struct cw_obj *o;
	int err;

	/* The producer first: a work item that requeues itself is the
	 * executing generation, which the new one must not replace. */
	if ((err = cw_origin__of(c, h, &r->task, r->task_start, &r->cause, &og)))
		return err;
	slots_of(c, r->work, &s);
	/* A queued generation that never executed: the kernel cannot queue
	 * a pending work_struct, so its execution was lost. Its end stays
	 * unknown. */
	if (s.queued && (err = cw_ident__release(c->id, s.queued)))
		return err;
	if (!(sc = free_slot(c, &s, s.exec)))
		return -ENOMEM;
	o = cw_ident__new_gen(c->id, CW_NODE_WORK_ITEM, sc, r->work, h->ts, 1, &err);
	if (!o)
		return err;
	name_work(c, o, r->function);
	o->n.pid = og.pid;
	o->n.tid = og.tid;
	return cw_ident__edge_x(c->id, CW_EDGE_QUEUE, og.src, o, h, CW_SRC_KERNEL, og.conf,
				og.reason, &og.x);
}

/* Activation (a delayed or throttled item enters the pool's list): it
 * says the queued generation is still there, nothing about cause. */
static int on_activate(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_wq_work *r = (const void *)h;
	struct slots s;

	slots_of(c, r->work, &s);
	if (s.queued)
		cw_ident__touch(c->id, s.queued);
	return 0;
}

static int on_exec_start(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_wq_work *r = (const void *)h;
	struct cw_obj *o, *worker = NULL;
	const char *reason = NULL, *why = R_NO_QUEUE;
	int err, matched = 0;
	struct slots s;
	uint8_t conf;

	slots_of(c, r->work, &s);
	/* Still executing: its end was lost (no worker runs it twice). */
	if (s.exec && (err = cw_ident__release(c->id, s.exec)))
		return err;
	/* Queued before a coverage break: which queue this executes is
	 * unknown. */
	if ((err = cw_ident__stale(c->id, s.queued, h->ts)) < 0)
		return err;
	if (err) {
		err = 0;
		why = R_QUEUE_BREAK;
		slots_of(c, r->work, &s);
	}
	if (s.queued) {
		o = s.queued;
		conf = CW_CONF_OBSERVED;
		o->flags |= W_EXEC;
		work_of(o)->exec_ns = h->ts;
		name_work(c, o, r->function);
		cw_ident__touch(c->id, o);
	} else {
		o = orphan_exec(c, &s, r->work, r->function, h, why, &err);
		if (!o)
			return err;
		conf = CW_CONF_OBSERVED; /* the record names both ends */
	}
	if (r->task.tid) {
		worker = cw_cls__thread(c, &r->task, r->task_start, h, CW_T_CREATE, &matched, &err);
		if (!worker)
			return err;
	}
	if (!worker)
		return 0;
	if ((err = running_set(c->state, worker->n.id, r->work, o->n.id, h->ts)))
		return err;
	if (conf == CW_CONF_OBSERVED && !matched)
		conf = cw_ident__conf(c->id, worker, h->ts);
	if (conf == CW_CONF_RECONSTRUCTED)
		reason = CW_R_ACROSS_BREAK;
	return cw_ident__edge(c->id, CW_EDGE_EXECUTE, o, worker, h, CW_SRC_KERNEL, conf, reason);
}

static int on_exec_end(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_wq_work *r = (const void *)h;
	struct cw_obj *worker = NULL;
	int err = 0, matched;
	struct slots s;

	slots_of(c, r->work, &s);
	if (r->task.tid)
		worker = cw_cls__thread(c, &r->task, r->task_start, h, 0, &matched, &err);
	if (worker)
		running_drop(c->state, worker->n.id);
	if (err || !s.exec)
		return err; /* an execution whose start is not in the trace */
	s.exec->n.end_ns = (int64_t)h->ts;
	s.exec->ended = 1;
	return cw_ident__release(c->id, s.exec);
}

/*
 * A work item named as a cause: the BPF side sets the cause between
 * execute start and end, so it is the executing generation. With none
 * (its execute start predates the capture or was lost), an orphan that
 * executes now, never the queued generation: that one may well be a
 * requeue waiting for its turn. Asked of the past, the one executing
 * now if it executed then already: an execution that ended since is
 * gone (a work item that re-arms its own delayed work is over when the
 * timer fires).
 */
static struct cw_obj *wq_cause(struct cw_cls *c, const struct cw_cause *k, const struct cw_hdr *h,
			       int flags, uint8_t *conf, const char **reason, int *err)
{
	const char *why = R_NO_QUEUE;
	struct slots s;
	struct cw_obj *o;

	*err = 0;
	*reason = NULL;
	slots_of(c, k->key, &s);
	if (flags & CW_CAUSE_PAST) {
		if (!s.exec || work_of(s.exec)->exec_ns > h->ts)
			return NULL;
		return cw_cls__named_at(c, s.exec, h, conf, reason);
	}
	/* Executing since before a coverage break: which execution this
	 * is, is unknown. */
	if ((*err = cw_ident__stale(c->id, s.exec, h->ts)) < 0)
		return NULL;
	if (*err) {
		*err = 0;
		slots_of(c, k->key, &s);
		why = R_EXEC_BREAK;
	}
	if (s.exec) {
		cw_ident__touch(c->id, s.exec);
		*conf = CW_CONF_OBSERVED;
		return s.exec;
	}
	o = orphan_exec(c, &s, k->key, k->aux, h, why, err);
	*conf = CW_CONF_OBSERVED;
	return o;
}

/* The work item @thread executes now, if it is still executing. */
static struct cw_obj *wq_running(struct cw_cls *c, const struct cw_obj *thread,
				 const struct cw_hdr *h, int rank)
{
	struct running *e = running_find(c->state, thread->n.id);
	struct slots s;

	(void)rank;
	if (!e)
		return NULL;
	/* An execution with a coverage break since it began is not
	 * believed: its end and the next start could both be in the break,
	 * and the kworker would be named as running what it finished. */
	if (cw_ident__break_since(c->id, e->since, h->ts))
		return NULL;
	slots_of(c, e->work, &s);
	return s.exec && s.exec->n.id == e->node ? s.exec : NULL;
}

static void wq_fini(void *state)
{
	struct wq *w = state;

	cw_htab__free_entries(&w->tab, offsetof(struct running, hn));
	cw_htab__free(&w->tab);
}

static const struct cw_handler handlers[] = {
	{ CW_REC_WQ_QUEUE, on_queue },
	{ CW_REC_WQ_ACTIVATE, on_activate },
	{ CW_REC_WQ_EXEC_START, on_exec_start },
	{ CW_REC_WQ_EXEC_END, on_exec_end },
	{ 0 },
};

const struct cw_aclass cw_aclass_workqueue = {
	.name = "workqueue",
	.state_size = sizeof(struct wq),
	.fini = wq_fini,
	.handlers = handlers,
	.running_ranks = 1u << CW_RUN_WORK_ITEM,
	.running = wq_running,
	.cause_kinds = 1u << CW_CAUSE_WORK,
	.cause = wq_cause,
};
