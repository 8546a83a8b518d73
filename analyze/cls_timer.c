// SPDX-License-Identifier: MIT
/*
 * The timer class: hrtimers and timer_list timers (docs/model.md §5.2, 5.3, 5.6).
 *
 * Identity. A timer is ('timer', 'hrtimer' or 'timer_list', pointer,
 * generation), named by its function ('hrtimer_wakeup' for a nanosleep,
 * 'timerfd_tmrproc' for a timerfd). Every start is a birth: the same
 * hrtimer_sleeper on a thread's stack is a new generation per sleep.
 *
 * Edges.
 *  - arm: arming context -> timer, at start: the record's cause (a timer
 *    re-armed from another's expiry, a work item), else the current
 *    thread in task context, else unknown with the context (origin.h);
 *  - fire: timer -> woken thread. Wakes raised inside the expiry window
 *    name the timer as their cause, and the sched class makes them fire
 *    edges through the cause hook below. Work queued in the window (the
 *    timer of delayed work) names it too: timer -> queue -> work item.
 * So a nanosleep reads thread -arm-> timer -fire-> the same thread.
 *
 * Records. Since format 1.7 the capture writes one record per expiry
 * (bpf/timer.bpf.c): a fire that carries its start, which it held
 * meanwhile, or an expiry without one (an orphan, below). A timer that
 * never fires has no node, and nothing below about cancels applies to
 * such a trace. Older traces have a record per start, expiry, expire
 * exit and cancel, read as they always were.
 *
 * Life. An expiry joins the live generation; with none (started before
 * the capture, lost, evicted) it makes an orphan with an incoming arm
 * edge, src NULL, reason 'orphan: start not in trace'. A timer stays
 * live after it fires (end_ns is when it last fired): nothing else names
 * it until a new start, which is a new generation anyway. The kernel
 * re-enqueues a periodic hrtimer after its expire exit, outside the
 * window, so that start names no cause: its arm edge is unknown, reason
 * 'hardirq', and the interrupted task only its interrupted_tid.
 *
 * Cancel. The kernel traces a cancel (hrtimer_cancel, timer_cancel) each
 * time it takes a timer off its queue, and that includes every expiry:
 * __run_hrtimer and expire_timers deactivate the timer, on the CPU that
 * expires it, just before the expire entry, with nothing in between. So
 * a cancel ends the generation (end_ns) but is only final once the next
 * timer record at the same CPU and context level is not that timer's
 * expiry; until then the generation stays live, marked T_CANCELLED, and
 * the expiry resumes it. A real cancel is thus released at the next
 * timer record on its CPU and level, or when something names the timer
 * again (which then finds it dead: an expiry after a real cancel means
 * the start in between was lost, so it makes an orphan).
 */
#include <errno.h>
#include <stdlib.h>
#include "classes.h"
#include "origin.h"

#define T_CANCELLED 0x1 /* cancelled: final unless its expiry follows */

/* The CPUs with a pending cancel kept apart; a cancel on a CPU past this
 * (or with no CPU) is final at once. */
#define MAX_CPUS 8192
#define LEVELS CW_CTX_MAX

static const char R_NO_START[] = "orphan: start not in trace";
static const char R_START_BREAK[] = "orphan: its start could be in a coverage break";
static const char R_GONE[] = "arming context gone by the fire";

/* The last timer record at one CPU and level, if it was a cancel. */
struct pend {
	uint64_t key;
	uint64_t id; /* its node; 0: the last record was not a cancel */
	uint8_t kind;
};

struct timers {
	struct pend *pend; /* [cpu * LEVELS + level] */
	size_t npend;
};

static const char *scope_name(uint8_t kind)
{
	return kind == CW_TIMER_HR ? "hrtimer" : kind == CW_TIMER_LIST ? "timer_list" : NULL;
}

/* The live generation of a timer, or NULL. */
static struct cw_obj *live_timer(struct cw_cls *c, uint8_t kind, uint64_t key)
{
	const struct cw_scope *s = cw_ident__scope_find(c->id, scope_name(kind));

	return s ? cw_ident__live(c->id, CW_NODE_TIMER, s, key) : NULL;
}

/* The pending-cancel slot of @h's CPU and level; with @grow, made if
 * missing (NULL on ENOMEM). NULL when there is none. */
static struct pend *pend_of(struct timers *t, const struct cw_hdr *h, int grow)
{
	size_t i = (size_t)h->cpu * LEVELS + (h->ctx < LEVELS ? h->ctx : CW_CTX_UNKNOWN);

	if (h->cpu >= MAX_CPUS)
		return NULL;
	if (i >= t->npend) {
		size_t n = ((size_t)h->cpu + 1) * LEVELS;
		struct pend *p;

		if (!grow || !(p = realloc(t->pend, n * sizeof(*p))))
			return NULL;
		for (size_t k = t->npend; k < n; k++)
			p[k].id = 0;
		t->pend = p;
		t->npend = n;
	}
	return &t->pend[i];
}

/*
 * Every timer record first settles the cancel pending at its CPU and
 * level: the record is that timer's expiry (@expire with the same timer),
 * and the cancel was the expiry's own, or the cancel was real and its
 * generation is over. @return 1 for the former.
 */
static int settle(struct cw_cls *c, const struct cw_hdr *h, uint8_t kind, uint64_t key,
		  int expire, int *err)
{
	struct pend *p = pend_of(c->state, h, 0);
	struct cw_obj *o;
	int match;

	*err = 0;
	if (!p || !p->id)
		return 0;
	match = expire && p->kind == kind && p->key == key;
	o = live_timer(c, p->kind, p->key);
	if (o && (o->n.id != p->id || !(o->flags & T_CANCELLED)))
		o = NULL; /* evicted, or already settled otherwise */
	p->id = 0;
	if (o && !match)
		*err = cw_ident__release(c->id, o);
	return o && match;
}

static void name_timer(struct cw_cls *c, struct cw_obj *o, uint64_t function)
{
	char buf[128];

	if (function && !o->n.name[0])
		cw_obj__set_name(o, cw_cls__ksym(c, function, buf, sizeof(buf)), sizeof(buf));
}

static int bad_kind(struct cw_cls *c, uint8_t kind)
{
	if (scope_name(kind))
		return 0;
	c->st->bad_records++;
	return 1;
}

/* A generation of @timer born at @h (a start), armed by @og; *@out: it.
 * @fired: the start comes with the expiry (format 1.7's fire record). */
static int armed(struct cw_cls *c, const struct cw_scope *s, uint64_t timer, uint64_t function,
		 const struct cw_hdr *h, const struct cw_origin *og, struct cw_obj **out,
		 int fired)
{
	struct cw_obj *o;
	int err;

	o = cw_ident__new_gen(c->id, CW_NODE_TIMER, s, timer, h->ts, 1, &err);
	if (!o)
		return err;
	name_timer(c, o, function);
	o->n.pid = og->pid;
	o->n.tid = og->tid;
	if (out)
		*out = o;
	/* Held: a timer that fired and woke no one, and handed nothing
	 * on, is only counted (quiet_objects, docs/model.md §5.11). A trace
	 * before format 1.7 keeps every start, as it always did. */
	if (!fired)
		return cw_ident__edge_x(c->id, CW_EDGE_ARM, og->src, o, h, CW_SRC_KERNEL,
					og->conf, og->reason, &og->x);
	return cw_ident__edge_held(c->id, CW_EDGE_ARM, og->src, o, h, CW_SRC_KERNEL, og->conf,
				   og->reason, &og->x);
}

static int on_start(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_timer_start *r = (const void *)h;
	const struct cw_scope *s;
	struct cw_origin og;
	struct cw_obj *o;
	int err;

	if (bad_kind(c, r->kind))
		return 0;
	settle(c, h, r->kind, r->timer, 0, &err);
	/* The arming context first: a timer re-armed from its own expiry
	 * is the generation that fired, and the new one replaces it. */
	if (err || (err = cw_origin__of(c, h, &r->task, r->task_start, &r->cause, &og)))
		return err;
	if (!(s = cw_ident__scope(c->id, scope_name(r->kind))))
		return -ENOMEM;
	/* Re-armed while pending: the start dequeued the armed generation
	 * (the capture drops the cancel it traces for that), so that is
	 * where it ends. */
	if (r->was_armed && (o = cw_ident__live(c->id, CW_NODE_TIMER, s, r->timer)) &&
	    !(o->flags & T_CANCELLED))
		o->n.end_ns = (int64_t)h->ts;
	return armed(c, s, r->timer, r->function, h, &og, NULL, 0);
}

/* A cancelled generation named again at @h: resumed (@resume: its expiry
 * follows the cancel, which was the expiry's own) or, the cancel having
 * been real, released. @return @o, or NULL when it is dead. */
static struct cw_obj *recheck(struct cw_cls *c, struct cw_obj *o, int resume, int *err)
{
	*err = 0;
	if (!o || !(o->flags & T_CANCELLED))
		return o;
	if (resume) {
		o->flags &= ~T_CANCELLED;
		return o;
	}
	*err = cw_ident__release(c->id, o);
	return NULL;
}

/* The timer fires at @h: the live generation, or an orphan. */
static struct cw_obj *fired(struct cw_cls *c, uint8_t kind, uint64_t key, uint64_t function,
			    const struct cw_hdr *h, int resume, int *err)
{
	struct cw_obj *o = recheck(c, live_timer(c, kind, key), resume, err);
	const struct cw_scope *s;
	const char *why = R_NO_START;

	if (*err)
		return NULL;
	/* Started before a coverage break: which start this expiry
	 * belongs to is unknown. */
	if ((*err = cw_ident__stale(c->id, o, h->ts)) < 0)
		return NULL;
	if (*err) {
		*err = 0;
		o = NULL;
		why = R_START_BREAK;
	}
	if (!o) {
		if (!(s = cw_ident__scope(c->id, scope_name(kind)))) {
			*err = -ENOMEM;
			return NULL;
		}
		o = cw_ident__orphan(c->id, CW_NODE_TIMER, s, key, h, CW_EDGE_ARM, why, err);
		if (!o)
			return NULL;
	}
	name_timer(c, o, function);
	o->n.end_ns = (int64_t)h->ts;
	cw_ident__touch(c->id, o);
	return o;
}

static int on_expire(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_timer_event *r = (const void *)h;
	int err, resume;

	if (bad_kind(c, r->kind))
		return 0;
	resume = settle(c, h, r->kind, r->timer, 1, &err);
	if (!err)
		fired(c, r->kind, r->timer, r->function, h, resume, &err);
	return err;
}

static int on_expire_exit(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_timer_event *r = (const void *)h;
	struct cw_obj *o;
	int err;

	if (bad_kind(c, r->kind))
		return 0;
	settle(c, h, r->kind, r->timer, 0, &err);
	if (!err && (o = live_timer(c, r->kind, r->timer)) && !(o->flags & T_CANCELLED))
		cw_ident__touch(c->id, o);
	return err;
}

static int on_cancel(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_timer_event *r = (const void *)h;
	struct cw_obj *o;
	struct pend *p;
	int err;

	if (bad_kind(c, r->kind))
		return 0;
	settle(c, h, r->kind, r->timer, 0, &err);
	if (err || !(o = live_timer(c, r->kind, r->timer)))
		return err; /* never started in the trace: nothing to end */
	/* The capture holds a cancel back until the next timer event on
	 * its CPU decides it, so it may come after a later start of the
	 * timer elsewhere: then it ended an earlier generation. */
	if ((int64_t)h->ts < o->n.start_ns)
		return 0;
	if (o->flags & T_CANCELLED)
		return cw_ident__release(c->id, o);
	o->n.end_ns = (int64_t)h->ts;
	o->flags |= T_CANCELLED;
	cw_ident__touch(c->id, o);
	p = pend_of(c->state, h, 1);
	if (!p && h->cpu < MAX_CPUS)
		return -ENOMEM;
	if (!p)
		return cw_ident__release(c->id, o);
	*p = (struct pend){ .key = r->timer, .id = o->n.id, .kind = r->kind };
	return 0;
}

/*
 * A timer named as a cause: its expiry window is open on that CPU (the
 * BPF side sets the cause between expire entry and exit), so it is the
 * live generation; a cancelled one only if that cancel is the one pending
 * at this CPU and level (its expire entry was lost). None: an orphan.
 */
static struct cw_obj *timer_cause(struct cw_cls *c, const struct cw_cause *k,
				  const struct cw_hdr *h, int flags, uint8_t *conf,
				  const char **reason, int *err)
{
	uint8_t kind = k->kind == CW_CAUSE_HRTIMER ? CW_TIMER_HR : CW_TIMER_LIST;
	struct cw_obj *o = live_timer(c, kind, k->key);

	*err = 0;
	/* Asked of the past (a timer re-armed from its own or another's
	 * expiry, told by its fire): the generation that fired last, which
	 * the caller holds to having fired by then. */
	if (flags & CW_CAUSE_PAST) {
		if (!o || (o->flags & T_CANCELLED))
			return NULL;
		return cw_cls__named_at(c, o, h, conf, reason);
	}
	if (o && !(o->flags & T_CANCELLED) && cw_ident__conf(c->id, o, h->ts) == CW_CONF_OBSERVED) {
		cw_ident__touch(c->id, o);
	} else {
		/* Cancelled: the expiry of that cancel if it is the one
		 * pending here (its expire entry was lost), else dead. None:
		 * an orphan. Either way it fires now. */
		struct pend *p = o ? pend_of(c->state, h, 0) : NULL;
		int resume = p && p->id == o->n.id;

		if (resume)
			p->id = 0;
		if (!(o = fired(c, kind, k->key, k->aux, h, resume, err)))
			return NULL;
	}
	*conf = cw_ident__conf(c->id, o, h->ts);
	*reason = *conf == CW_CONF_RECONSTRUCTED ? CW_R_ACROSS_BREAK : NULL;
	return o;
}

static void timer_fini(void *state)
{
	struct timers *t = state;

	free(t->pend);
}

/*
 * An expiry that carries its start (format 1.7): the start the capture
 * held back, made here as its own record would have made it (a
 * generation born at the start, its arm edge at the start's time, CPU
 * and context), then the expiry. The capture paired them in BPF, where
 * every start of the pointer replaces what it held, so no loss on the
 * ring between them can hide a rebirth: the generation is established
 * at the expiry. What the start names is looked up now, later than it
 * happened (cw_origin__past): a thread or cause reborn since is not
 * named.
 */
static int on_fire(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_timer_fire *r = (const void *)h;
	const struct cw_timer_event *x = &r->ev;
	const struct cw_hdr ah = {
		.type = CW_REC_TIMER_START,
		.size = sizeof(struct cw_timer_start),
		.cpu = r->arm.cpu,
		.ctx = r->arm.ctx,
		.ts = r->arm.ts,
	};
	const struct cw_scope *s;
	struct cw_origin og;
	struct cw_obj *o = NULL;
	int err;

	if (bad_kind(c, x->kind))
		return 0;
	if (r->arm.ts > h->ts) {
		c->st->bad_records++;
		return 0;
	}
	settle(c, h, x->kind, x->timer, 0, &err);
	if (err || (err = cw_origin__past(c, &ah, &r->arm.task, r->arm.task_start, &r->arm.cause,
					  R_GONE, &og)))
		return err;
	if (!(s = cw_ident__scope(c->id, scope_name(x->kind))))
		return -ENOMEM;
	err = armed(c, s, x->timer, x->function, &ah, &og, &o, 1);
	if (o) {
		o->n.end_ns = (int64_t)h->ts;
		o->est_ns = h->ts;
	}
	return err;
}

static const struct cw_handler handlers[] = {
	{ CW_REC_TIMER_START, on_start },
	{ CW_REC_TIMER_EXPIRE, on_expire },
	{ CW_REC_TIMER_EXPIRE_EXIT, on_expire_exit },
	{ CW_REC_TIMER_CANCEL, on_cancel },
	{ CW_REC_TIMER_FIRE, on_fire },
	{ 0 },
};

const struct cw_aclass cw_aclass_timer = {
	.name = "timer",
	.state_size = sizeof(struct timers),
	.fini = timer_fini,
	.handlers = handlers,
	.cause_kinds = 1u << CW_CAUSE_HRTIMER | 1u << CW_CAUSE_TIMER,
	.cause = timer_cause,
};
