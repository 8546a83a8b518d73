// SPDX-License-Identifier: MIT
/*
 * The sched class: processes and threads (docs/model.md §5.2, 5.3, 5.6, 5.7).
 *
 * Identity. A thread is ('thread', 'host', tid, generation), a process
 * ('process', 'host', pid, generation). A tid names one task only while
 * it lives, so an event joins the live generation of its tid only if it
 * agrees with it on everything it says:
 *  - the pid: a thread never changes process (an exec from a non-leader
 *    thread is the one exception, and its own record says so); a tid
 *    named with another pid is another task;
 *  - the witness: a 1.1 record carries the task's start time, which names
 *    a task for good; a different one is another task, the same one is
 *    the same task whatever was lost in between, so such a join is
 *    observed even across a coverage break;
 *  - death: an exited thread is still named by its last wakes and its
 *    final switch-out, but not long after (EXIT_GRACE_NS) unless its
 *    witness says it is still the same task.
 * A disagreement ends the live generation (its end unseen) and makes an
 * orphan of a new one: never a join to a dead generation or another
 * process.
 *
 * Births. A fork is the birth of a thread (and, without CLONE_THREAD, of
 * a process); a non-leader exec is the birth of a new generation of the
 * leader tid, spawned from the thread that exec'd. A birth always starts
 * a new generation, even when the key still has a live one.
 *
 * Orphans. A thread named with no live generation becomes an orphan with
 * an incoming spawn edge (src NULL, unknown, and a reason: it predates the
 * capture when the /proc snapshot names it with the same pid, its birth
 * came after a coverage break, or it is simply not in the trace). Only
 * events that carry causality (wakes, forks, execs, exits) make nodes; a
 * switch names tasks without saying anything about cause, so it only
 * touches and checks generations that exist, and a rename only names
 * them (or leaves a hint for the next one: the kernel renames the leader
 * tid before the exec record of a non-leader exec).
 *
 * The traced set. With -p or COMMAND the capture records an edge when
 * either end is traced, so the other end may be any task that ran beside
 * it. Such a task gets a node marked traced = 0 and no orphan edge: it is
 * context, not a missed spawn. Forks, execs, exits and renames are only
 * recorded for traced tasks, so they prove their task traced.
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
/* How long after its exit a task may still be named without a witness:
 * its wakes in exit_notify and its final switch-out come within
 * microseconds, or a few scheduler latencies if it is preempted. */
#define EXIT_GRACE_NS 1000000000ull

static const char R_PREDATES[] = "orphan: predates capture";
static const char R_UNSEEN[] = "orphan: birth not in trace";
static const char R_AFTER_BREAK[] = "orphan: birth not in trace (coverage break)";
static const char R_REUSED[] = "orphan: birth not in trace (tid reused)";
static const char R_ACROSS_BREAK[] = "join across coverage break";

enum mode { MODE_UNKNOWN, MODE_SYSTEM, MODE_FILTERED };

struct sched {
	enum mode mode;
	int have_initial;	/* traced_pids was in the metadata */
	uint32_t *initial;	/* sorted: the traced set at start */
	size_t ninitial;
};

/* thread_of flags: CW_T_CREATE, CW_T_PROOF (classes.h) */
#define T_CREATE CW_T_CREATE
#define T_PROOF CW_T_PROOF

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int sched_meta(struct cw_cls *c, const char *key, const char *val)
{
	struct sched *s = c->state;

	if (!strcmp(key, "options")) {
		const char *m = strstr(val, "mode=");

		if (m && (m == val || m[-1] == ' '))
			s->mode = !strncmp(m + 5, "system", 6) ? MODE_SYSTEM : MODE_FILTERED;
	} else if (!strcmp(key, "traced_pids")) {
		size_t n = 1;
		const char *p;
		char *end;

		for (p = val; *p; p++)
			n += *p == ',';
		free(s->initial);
		s->ninitial = 0;
		s->initial = calloc(n, sizeof(*s->initial));
		if (!s->initial)
			return -ENOMEM;
		for (p = val; *p; p = *end ? end + 1 : end) {
			unsigned long v = strtoul(p, &end, 10);

			if (end == p)
				break; /* not a number: keep what was read */
			if (v && v <= UINT32_MAX && s->ninitial < n)
				s->initial[s->ninitial++] = (uint32_t)v;
		}
		qsort(s->initial, s->ninitial, sizeof(*s->initial), u32_cmp);
		s->have_initial = 1;
	}
	return 0;
}

/* Does @pid belong to the traced set, as far as the metadata says? */
static int8_t traced_pid(const struct sched *s, uint32_t pid)
{
	if (s->mode == MODE_SYSTEM)
		return 1;
	if (s->mode == MODE_UNKNOWN)
		return -1;
	if (s->ninitial && bsearch(&pid, s->initial, s->ninitial, sizeof(pid), u32_cmp))
		return 1;
	return s->have_initial ? 0 : -1;
}

static uint8_t conf_of(struct cw_cls *c, const struct cw_obj *o, int matched, uint64_t ts)
{
	return matched ? CW_CONF_OBSERVED : cw_ident__conf(c->id, o, ts);
}

/* The live process of @pid, or an orphan process node. Process nodes are
 * containers: causality flows between threads, so they carry no edges. */
static struct cw_obj *process_of(struct cw_cls *c, uint32_t pid, const struct cw_hdr *h,
				 int proof, int *err)
{
	struct cw_obj *p = cw_ident__live(c->id, CW_NODE_PROCESS, cw_ident__host(c->id), pid);
	char name[CW_NAME_LEN];
	uint32_t hpid;

	*err = 0;
	if (!p) {
		p = cw_ident__orphan(c->id, CW_NODE_PROCESS, cw_ident__host(c->id), pid, h, -1,
				     NULL, err);
		if (!p)
			return NULL;
		p->n.pid = pid;
		p->n.traced = traced_pid(c->state, pid);
		if (cw_ident__hint_take(c->id, CW_NODE_PROCESS, pid, &hpid, name) && hpid == pid)
			cw_obj__set_name(p, name, CW_NAME_LEN);
	}
	cw_ident__touch(c->id, p);
	if (proof)
		p->n.traced = 1;
	return p;
}

static void prove_traced(struct cw_cls *c, struct cw_obj *t)
{
	struct cw_obj *p = cw_ident__live(c->id, CW_NODE_PROCESS, cw_ident__host(c->id),
					  (uint64_t)t->n.pid);

	t->n.traced = 1;
	if (p)
		p->n.traced = 1;
}

/* Does the live generation @o still name the task @t (with @witness)
 * at @ts? */
static int same_task(const struct cw_obj *o, const struct cw_task *t, uint64_t witness,
		     uint64_t ts)
{
	if (o->n.pid != (int64_t)t->pid)
		return 0;
	if (witness && o->witness)
		return witness == o->witness;
	return !o->ended || ts <= (uint64_t)o->n.end_ns + EXIT_GRACE_NS;
}

/*
 * The live thread generation that @t names, or (T_CREATE) a new orphan
 * one. *matched: the record's witness proved the join. NULL without *err
 * when there is none and none may be made.
 */
static struct cw_obj *thread_of(struct cw_cls *c, const struct cw_task *t, uint64_t witness,
				const struct cw_hdr *h, int flags, int *matched, int *err)
{
	const struct cw_scope *host = cw_ident__host(c->id);
	struct cw_obj *o = cw_ident__live(c->id, CW_NODE_THREAD, host, t->tid), *p;
	const char *why = NULL;
	char name[CW_NAME_LEN];
	uint32_t hpid;
	int8_t traced;

	*err = 0;
	*matched = 0;
	if (o && same_task(o, t, witness, h->ts)) {
		if (witness && o->witness == witness) {
			*matched = 1;
			o->est_ns = h->ts;
		} else if (witness) {
			o->witness = witness;
		}
		cw_ident__touch(c->id, o);
		if (flags & T_PROOF)
			prove_traced(c, o);
		return o;
	}
	if (o) {
		/* The tid now names another task: the old one's end was not
		 * seen, and nothing joins it any more. */
		c->st->identity_mismatch++;
		why = R_REUSED;
		if ((*err = cw_ident__release(c->id, o)))
			return NULL;
	}
	if (!(flags & T_CREATE))
		return NULL;
	p = process_of(c, t->pid, h, flags & T_PROOF, err);
	if (!p)
		return NULL;
	traced = p->n.traced;
	name[0] = '\0';
	if (cw_ident__hint_take(c->id, CW_NODE_THREAD, t->tid, &hpid, name) && hpid != t->pid)
		name[0] = '\0'; /* the snapshot described another task */
	if (!why)
		why = name[0] ? R_PREDATES :
		      cw_ident__break_in(c->id, 0, h->ts) ? R_AFTER_BREAK : R_UNSEEN;
	/* Outside the traced set a task is only context: no orphan edge. */
	o = cw_ident__orphan(c->id, CW_NODE_THREAD, host, t->tid, h,
			     traced == 0 ? -1 : CW_EDGE_SPAWN, why, err);
	if (!o)
		return NULL;
	o->n.tid = t->tid;
	o->n.pid = t->pid;
	o->n.traced = traced;
	o->witness = witness;
	if (name[0])
		cw_obj__set_name(o, name, CW_NAME_LEN);
	return o;
}

struct cw_obj *cw_sched__thread(struct cw_cls *sched, const struct cw_task *t, uint64_t witness,
				const struct cw_hdr *h, int flags, int *matched, int *err)
{
	return thread_of(sched, t, witness, h, flags, matched, err);
}

/* Only a fork seen in the trace says who the parent is: a process that
 * predates the capture, or whose fork was lost, has none here. */
uint32_t cw_sched__parent_pid(struct cw_cls *sched, uint32_t pid)
{
	struct cw_obj *p = cw_ident__live(sched->id, CW_NODE_PROCESS, cw_ident__host(sched->id), pid);

	return p ? p->parent_pid : 0;
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
	int err = 0;

	if (r->task.tid == 0)
		return 0;
	/* An event already named it: the snapshot is late and says less. */
	if (!cw_ident__live(c->id, CW_NODE_THREAD, host, r->task.tid))
		err = cw_ident__hint_set(c->id, CW_NODE_THREAD, r->task.tid, r->task.pid, r->comm,
					 CW_COMM_LEN);
	if (!err && r->task.tid == r->task.pid &&
	    !cw_ident__live(c->id, CW_NODE_PROCESS, host, r->task.pid))
		err = cw_ident__hint_set(c->id, CW_NODE_PROCESS, r->task.pid, r->task.pid, r->comm,
					 CW_COMM_LEN);
	return err;
}

static int on_fork(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_fork *r = (const void *)h;
	int err, matched, is_thread = r->fork_flags & CW_FORK_THREAD;
	struct cw_obj *parent, *child;
	uint8_t conf;

	parent = thread_of(c, &r->parent, WITNESS(r, parent_start), h, T_CREATE | T_PROOF,
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
		p->parent_pid = r->parent.pid;
		p->n.traced = 1;
		cw_obj__set_name(p, r->child_comm, sizeof(r->child_comm));
	} else if (!process_of(c, r->child.pid, h, 1, &err)) {
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
		struct cw_obj *prev = thread_of(c, &old, 0, h, T_CREATE | T_PROOF, &matched, &err);

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
		n = thread_of(c, &r->task, witness, h, T_CREATE | T_PROOF, &matched, &err);
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
	struct cw_obj *n = thread_of(c, &r->task, WITNESS(r, task_start), h, T_CREATE | T_PROOF,
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
	struct cw_obj *n = thread_of(c, &r->task, WITNESS(r, task_start), h, T_PROOF, &matched,
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
	wc->src = cw_cls__cause(c, k, &r->w.hdr, &wc->conf, &wc->reason, &err);
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
		src = thread_of(c, &r->waker, WITNESS(r, waker_start), h, T_CREATE, &src_matched,
				&err);
		if (!src)
			return err;
	}
	dst = thread_of(c, &r->wakee, WITNESS(r, wakee_start), h, T_CREATE, &dst_matched, &err);
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
		prev = thread_of(c, &r->prev, WITNESS(r, prev_start), h, 0, &matched, &err);
	if (!err && r->next.tid)
		thread_of(c, &r->next, WITNESS(r, next_start), h, 0, &matched, &err);
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
		thread_of(c, &r->wakee, WITNESS(r, wakee_start), h, 0, &matched, &err);
	return err;
}

static void *sched_init(struct cw_ident *id, int *err)
{
	struct sched *s = calloc(1, sizeof(*s));

	(void)id;
	if (!s)
		*err = -ENOMEM;
	return s;
}

static void sched_fini(void *state)
{
	struct sched *s = state;

	free(s->initial);
	free(s);
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
	.init = sched_init,
	.fini = sched_fini,
	.meta = sched_meta,
	.handlers = handlers,
};
