// SPDX-License-Identifier: MIT
/*
 * The sched class: processes and threads (docs/model.md §5.2, 5.3, 5.6, 5.7).
 *
 * Identity (what a record that names a task joins: pid, witness, exit
 * grace, orphans, the traced set) is task.c's, which every class names
 * tasks through; this class says what the sched records mean.
 *
 * Births. A fork is the birth of a thread (and, without CLONE_THREAD, of
 * a process); a non-leader exec is the birth of a new generation of the
 * leader tid, spawned from the thread that exec'd. A birth always starts
 * a new generation, even when the key still has a live one.
 *
 * Only events that carry causality (wakes, forks, execs, exits) make
 * nodes; a switch names tasks without saying anything about cause, so it
 * only touches and checks generations that exist, and a rename only names
 * them (or leaves a hint for the next one: the kernel renames the leader
 * tid before the exec record of a non-leader exec).
 *
 * Wakeups. sched_waking runs in the waker's context: the waker is the
 * current task, but only in task context. In hardirq, softirq or NMI
 * context, or when the capture could not tell (ctx unknown), the current
 * task was merely interrupted: src NULL and the context as reason.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "classes.h"
#include "../schema/names.h"

/* The kernel's TASK_DEAD state bit (since 5.14): the final switch-out. */
#define KERNEL_TASK_DEAD 0x80
static const char R_ACROSS_BREAK[] = "join across coverage break";

static uint8_t conf_of(struct cw_cls *c, const struct cw_obj *o, int matched, uint64_t ts)
{
	return matched ? CW_CONF_OBSERVED : cw_ident__conf(c->id, o, ts);
}

/* A thread's birth at @h: a new generation, whatever is live for the tid. */
static struct cw_obj *thread_birth(struct cw_cls *c, const struct cw_task *t, uint64_t witness,
				   const struct cw_hdr *h, int *err)
{
	const struct cw_scope *host = cw_ident__host(c->id);
	struct cw_obj *o = cw_ident__live(c->id, CW_NODE_THREAD, host, t->tid);

	if (o && !o->ended)
		c->st->tid_reuse_unseen_exit++;
	/* A birth shows the snapshot (or a rename) no longer describes it. */
	cw_ident__hint_drop(c->id, CW_NODE_THREAD, t->tid);
	o = cw_ident__new_gen(c->id, CW_NODE_THREAD, host, t->tid, h->ts, 1, err);
	if (!o)
		return NULL;
	o->n.tid = t->tid;
	o->n.pid = t->pid;
	o->n.traced = 1; /* births are recorded for traced tasks only */
	o->witness = witness;
	return o;
}

/* Witnesses, from records long enough to hold them (format 1.1). */
#define WITNESS(r, f) (CW_REC_HAS(r, f) ? (r)->f : 0)

static int on_task_snapshot(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_meta_task *r = (const void *)h;
	const struct cw_scope *host = cw_ident__host(c->id);
	/* A name the capture took during the capture says nothing of when
	 * the task was born (task.h: CW_HINT_LATE). */
	uint8_t late = h->flags & CW_META_TASK_LATE ? CW_HINT_LATE : 0;
	int err = 0;

	if (r->task.tid == 0)
		return 0;
	/* An event already named it: the snapshot is late and says less. */
	if (!cw_ident__live(c->id, CW_NODE_THREAD, host, r->task.tid))
		err = cw_ident__hint_set(c->id, CW_NODE_THREAD | late, r->task.tid, r->task.pid,
					 r->comm, CW_COMM_LEN);
	if (!err && r->task.tid == r->task.pid &&
	    !cw_ident__live(c->id, CW_NODE_PROCESS, host, r->task.pid))
		err = cw_ident__hint_set(c->id, CW_NODE_PROCESS | late, r->task.pid, r->task.pid,
					 r->comm, CW_COMM_LEN);
	return err;
}

static int on_fork(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_fork *r = (const void *)h;
	int err, matched, is_thread = r->fork_flags & CW_FORK_THREAD;
	struct cw_obj *parent, *child;
	uint8_t conf;

	parent = cw_cls__thread(c, &r->parent, WITNESS(r, parent_start), h, CW_T_CREATE | CW_T_PROOF,
			   &matched, &err);
	if (!parent)
		return err;
	if (!is_thread) {
		struct cw_obj *p;

		cw_ident__hint_drop(c->id, CW_NODE_PROCESS, r->child.pid);
		p = cw_ident__new_gen(c->id, CW_NODE_PROCESS, cw_ident__host(c->id), r->child.pid,
				      h->ts, 1, &err);
		if (!p)
			return err;
		p->n.pid = r->child.pid;
		p->n.tid = r->parent.tid;
		cw_tasks__set_parent_pid(p, r->parent.pid);
		p->n.traced = 1;
		cw_obj__set_name(p, r->child_comm, sizeof(r->child_comm));
	} else if (!cw_tasks__process(c->tasks, r->child.pid, h, 1, &err)) {
		return err;
	}
	child = thread_birth(c, &r->child, WITNESS(r, child_start), h, &err);
	if (!child)
		return err;
	cw_obj__set_name(child, r->child_comm, sizeof(r->child_comm));
	conf = conf_of(c, parent, matched, h->ts);
	return cw_ident__edge(c->id, CW_EDGE_SPAWN, parent, child, h, CW_SRC_KERNEL, conf,
			      conf == CW_CONF_RECONSTRUCTED ? R_ACROSS_BREAK :
			      is_thread ? "thread" : "fork");
}

static void name_process(struct cw_cls *c, uint32_t pid, const char *comm)
{
	struct cw_obj *p = cw_ident__live(c->id, CW_NODE_PROCESS, cw_ident__host(c->id), pid);

	if (p)
		cw_obj__set_name(p, comm, CW_COMM_LEN);
}

static int on_exec(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_exec *r = (const void *)h;
	const struct cw_sink *sink = cw_ident__sink(c->id);
	uint64_t witness = WITNESS(r, task_start);
	struct cw_obj *n;
	int err, matched;

	if (r->old_tid && r->old_tid != r->task.tid) {
		/*
		 * A non-leader thread exec'd: it takes over the leader's tid
		 * and the old leader is gone. The task behind old_tid goes on
		 * under a new key, so it is a new generation of the leader
		 * tid, spawned from the old_tid one. The witness is no help
		 * for old_tid: the kernel gave the thread the old leader's
		 * start time.
		 */
		struct cw_task old = { .tid = r->old_tid, .pid = r->task.pid };
		struct cw_obj *prev = cw_cls__thread(c, &old, 0, h, CW_T_CREATE | CW_T_PROOF, &matched, &err);

		if (!prev)
			return err;
		prev->n.end_ns = (int64_t)h->ts;
		prev->ended = 1;
		n = thread_birth(c, &r->task, witness, h, &err);
		if (!n)
			return err;
		err = cw_ident__edge(c->id, CW_EDGE_SPAWN, prev, n, h, CW_SRC_KERNEL,
				     cw_ident__conf(c->id, prev, h->ts),
				     "exec: took over the leader tid");
		err = err ?: cw_ident__release(c->id, prev);
		if (err)
			return err;
	} else {
		n = cw_cls__thread(c, &r->task, witness, h, CW_T_CREATE | CW_T_PROOF, &matched, &err);
		if (!n)
			return err;
	}
	cw_obj__set_name(n, r->comm, sizeof(r->comm));
	name_process(c, r->task.pid, r->comm);
	if (sink->exec) {
		char comm[CW_COMM_LEN + 1], file[CW_EXEC_PATH_LEN + 1];

		memcpy(comm, r->comm, CW_COMM_LEN);
		comm[CW_COMM_LEN] = '\0';
		memcpy(file, r->filename, CW_EXEC_PATH_LEN);
		file[CW_EXEC_PATH_LEN] = '\0';
		return sink->exec(sink->ctx, n->n.id, h->ts, comm, file);
	}
	return 0;
}

static int on_task_exit(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_exit *r = (const void *)h;
	int err, matched;
	struct cw_obj *n = cw_cls__thread(c, &r->task, WITNESS(r, task_start), h, CW_T_CREATE | CW_T_PROOF,
				     &matched, &err);

	if (!n)
		return err;
	n->n.end_ns = (int64_t)h->ts;
	n->ended = 1;
	if (r->exit_flags & CW_EXIT_GROUP_DEAD) {
		struct cw_obj *p = cw_ident__live(c->id, CW_NODE_PROCESS, cw_ident__host(c->id),
						  r->task.pid);

		if (p) {
			p->n.end_ns = (int64_t)h->ts;
			err = cw_ident__release(c->id, p);
		}
	}
	return err;
}

static int on_rename(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_rename *r = (const void *)h;
	int err, matched;
	struct cw_obj *n = cw_cls__thread(c, &r->task, WITNESS(r, task_start), h, CW_T_PROOF, &matched,
				     &err);

	if (err)
		return err;
	if (!n) {
		/* Nothing live to rename: name whatever comes next for the
		 * tid. The kernel renames the leader tid of a non-leader exec
		 * before its exec record, when the old leader is gone. */
		err = cw_ident__hint_set(c->id, CW_NODE_THREAD, r->task.tid, r->task.pid, r->newcomm,
					 sizeof(r->newcomm));
		if (!err && r->task.tid == r->task.pid)
			err = cw_ident__hint_set(c->id, CW_NODE_PROCESS, r->task.pid, r->task.pid,
						 r->newcomm, sizeof(r->newcomm));
		return err;
	}
	cw_obj__set_name(n, r->newcomm, sizeof(r->newcomm));
	if (r->task.tid == r->task.pid)
		name_process(c, r->task.pid, r->newcomm);
	return 0;
}

/*
 * A wake's cause when the BPF side saw the CPU (or, in task context, the
 * waker) processing an object (format 1.2, CW_REC_WAKING_CAUSED):
 *  - a futex wake: the waker thread is still the cause; the edge says
 *    'futex' and carries the futex word;
 *  - an expiring timer: a fire edge from the timer;
 *  - a work item being executed, a packet being received, an io_uring
 *    request being completed: a wake edge from that object.
 * The owning class names the object (its live generation, or an orphan
 * when its birth is not in the trace). When no class can, the wake is
 * treated as uncaused.
 */
struct wake_cause {
	struct cw_obj *src;
	uint8_t edge, conf;
	const char *reason;
	uint64_t addr;
};

static int wake_cause(struct cw_cls *c, const struct cw_wake_caused *r, struct wake_cause *wc)
{
	const struct cw_cause *k = &r->cause;
	int err;

	memset(wc, 0, sizeof(*wc));
	if (k->kind == CW_CAUSE_FUTEX) {
		wc->reason = "futex";
		wc->addr = k->key;
		return 0;
	}
	wc->src = cw_cls__cause(c, k, &r->w.hdr, 0, &wc->conf, &wc->reason, &err);
	if (!wc->src)
		return err;
	wc->edge = k->kind == CW_CAUSE_HRTIMER || k->kind == CW_CAUSE_TIMER ? CW_EDGE_FIRE :
									       CW_EDGE_WAKE;
	if (!wc->reason)
		wc->reason = cw_name_of(cw_cause_names, CW_CAUSE_MAX, k->kind);
	return 0;
}

static int on_waking(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_wake *r = (const void *)h;
	struct cw_edge_extra x = { .interrupted = -1 };
	struct wake_cause wc = { 0 };
	struct cw_obj *src = NULL, *dst;
	const char *reason = NULL;
	int err, src_matched = 0, dst_matched;
	uint8_t conf;

	if (r->wakee.tid == 0)
		return 0;
	if (h->type == CW_REC_WAKING_CAUSED &&
	    (err = wake_cause(c, (const struct cw_wake_caused *)h, &wc)))
		return err;
	if (h->ctx == CW_CTX_TASK && r->waker.tid != 0 && !wc.src) {
		src = cw_cls__thread(c, &r->waker, WITNESS(r, waker_start), h, CW_T_CREATE, &src_matched,
				&err);
		if (!src)
			return err;
	}
	dst = cw_cls__thread(c, &r->wakee, WITNESS(r, wakee_start), h, CW_T_CREATE, &dst_matched, &err);
	if (!dst)
		return err;
	if (h->ctx != CW_CTX_TASK)
		x.interrupted = r->waker.tid; /* context, never the cause */
	if (wc.src) {
		/* The object is the cause, in whatever context it ran. */
		conf = wc.conf;
		if (conf == CW_CONF_OBSERVED)
			conf = conf_of(c, dst, dst_matched, h->ts);
		return cw_ident__edge_x(c->id, wc.edge, wc.src, dst, h, CW_SRC_KERNEL, conf,
					conf == CW_CONF_RECONSTRUCTED && wc.conf == CW_CONF_OBSERVED ?
						R_ACROSS_BREAK : wc.reason, &x);
	}
	if (h->ctx != CW_CTX_TASK) {
		/* Interrupt context, or the capture could not tell: the
		 * current task was only interrupted. */
		conf = CW_CONF_UNKNOWN;
		reason = h->ctx == CW_CTX_UNKNOWN ? "context unknown" :
			 cw_name_of(cw_ctx_names, CW_CTX_MAX, h->ctx) ?: "interrupt";
	} else if (!src) {
		/* The idle task (tid 0 exists once per CPU) names no thread. */
		conf = CW_CONF_UNKNOWN;
		reason = "idle";
	} else {
		conf = conf_of(c, src, src_matched, h->ts);
		if (conf == CW_CONF_OBSERVED)
			conf = conf_of(c, dst, dst_matched, h->ts);
		if (conf == CW_CONF_RECONSTRUCTED)
			reason = R_ACROSS_BREAK;
		else if (wc.reason)
			reason = wc.reason; /* 'futex' */
		x.addr = wc.addr;
		/* A runtime task being polled on the waker thread is what
		 * runs there (docs/model.md §6): it is the cause. A request is
		 * not: the thread does the request's work, so the edge keeps
		 * the thread, and the request is one join away (its begin
		 * and end edges on that thread). */
		src = cw_cls__running_from(c, src, h, CW_RUN_RUNTIME_TASK);
	}
	return cw_ident__edge_x(c->id, CW_EDGE_WAKE, src, dst, h, CW_SRC_KERNEL, conf, reason, &x);
}

static int on_switch(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_switch *r = (const void *)h;
	struct cw_obj *prev = NULL;
	int err = 0, matched;

	if (r->prev.tid)
		prev = cw_cls__thread(c, &r->prev, WITNESS(r, prev_start), h, 0, &matched, &err);
	if (!err && r->next.tid)
		cw_cls__thread(c, &r->next, WITNESS(r, next_start), h, 0, &matched, &err);
	if (err)
		return err;
	/* The final switch-out of an exited task: nothing can name this
	 * generation any more, so it can be written now. */
	if (prev && prev->ended && (r->prev_state & KERNEL_TASK_DEAD))
		return cw_ident__release(c->id, prev);
	return 0;
}

/* sched_wakeup and sched_wakeup_new give no causal edge (the former may
 * run on the wakee's CPU, the latter duplicates the spawn edge): they
 * only say the wakee is still the task it was. */
static int on_touch_wakee(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_wake *r = (const void *)h;
	int err = 0, matched;

	if (r->wakee.tid)
		cw_cls__thread(c, &r->wakee, WITNESS(r, wakee_start), h, 0, &matched, &err);
	return err;
}

/* The witnesses are read only when present (WITNESS): the records'
 * minimum sizes are the 1.0 layouts (schema/records.def). */
static const struct cw_handler handlers[] = {
	{ CW_REC_META_TASK, on_task_snapshot },
	{ CW_REC_SWITCH, on_switch },
	{ CW_REC_WAKING, on_waking },
	{ CW_REC_WAKING_CAUSED, on_waking },
	{ CW_REC_WAKEUP, on_touch_wakee },
	{ CW_REC_WAKEUP_NEW, on_touch_wakee },
	{ CW_REC_FORK, on_fork },
	{ CW_REC_EXEC, on_exec },
	{ CW_REC_EXIT, on_task_exit },
	{ CW_REC_RENAME, on_rename },
	{ 0 },
};

const struct cw_aclass cw_aclass_sched = {
	.name = "sched",
	.handlers = handlers,
};
