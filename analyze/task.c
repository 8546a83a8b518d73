// SPDX-License-Identifier: MIT
/*
 * Thread and process identity (docs/model.md §5.2, 5.3, 5.7): what a
 * record that names a task joins, for every class. Below join.c and
 * every class: it calls the identity layer only.
 *
 * A thread is ('thread', 'host', tid, generation), a process
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
 * Orphans. A thread named with no live generation becomes an orphan with
 * an incoming spawn edge (src NULL, unknown, and a reason: it predates the
 * capture when the /proc snapshot names it with the same pid, its birth
 * came after a coverage break, or it is simply not in the trace).
 *
 * The traced set. With -p or COMMAND the capture records an edge when
 * either end is traced, so the other end may be any task that ran beside
 * it. Such a task gets a node marked traced = 0 and no orphan edge: it is
 * context, not a missed spawn. Forks, execs, exits and renames are only
 * recorded for traced tasks, so they prove their task traced (CW_T_PROOF).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "task.h"

/* How long after its exit a task may still be named without a witness:
 * its wakes in exit_notify and its final switch-out come within
 * microseconds, or a few scheduler latencies if it is preempted. */
#define EXIT_GRACE_NS 1000000000ull

static const char R_PREDATES[] = "orphan: predates capture";
static const char R_UNSEEN[] = "orphan: birth not in trace";
static const char R_AFTER_BREAK[] = "orphan: birth not in trace (coverage break)";
static const char R_REUSED[] = "orphan: birth not in trace (tid reused)";

enum mode { MODE_UNKNOWN, MODE_SYSTEM, MODE_FILTERED };

struct cw_tasks {
	struct cw_ident *id;
	struct cw_join_stats *st;
	enum mode mode;
	int have_initial;	/* traced_pids was in the metadata */
	uint32_t *initial;	/* sorted: the traced set at start */
	size_t ninitial;
};

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int cw_tasks__meta(struct cw_tasks *s, const char *key, const char *val)
{

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

int8_t cw_tasks__traced_pid(const struct cw_tasks *s, uint32_t pid)
{
	if (s->mode == MODE_SYSTEM)
		return 1;
	if (s->mode == MODE_UNKNOWN)
		return -1;
	if (s->ninitial && bsearch(&pid, s->initial, s->ninitial, sizeof(pid), u32_cmp))
		return 1;
	return s->have_initial ? 0 : -1;
}

/* The live process of @pid, or an orphan process node. Process nodes are
 * containers: causality flows between threads, so they carry no edges. */
struct cw_obj *cw_tasks__process(struct cw_tasks *ts, uint32_t pid, const struct cw_hdr *h,
				 int proof, int *err)
{
	struct cw_obj *p = cw_ident__live(ts->id, CW_NODE_PROCESS, cw_ident__host(ts->id), pid);
	char name[CW_NAME_LEN];
	uint32_t hpid;

	*err = 0;
	if (!p) {
		p = cw_ident__orphan(ts->id, CW_NODE_PROCESS, cw_ident__host(ts->id), pid, h, -1,
				     NULL, err);
		if (!p)
			return NULL;
		p->n.pid = pid;
		p->n.traced = cw_tasks__traced_pid(ts, pid);
		if ((cw_ident__hint_take(ts->id, CW_NODE_PROCESS, pid, &hpid, name) ||
		     cw_ident__hint_take(ts->id, CW_NODE_PROCESS | CW_HINT_LATE, pid, &hpid, name)) &&
		    hpid == pid)
			cw_obj__set_name(p, name, CW_NAME_LEN);
	}
	cw_ident__touch(ts->id, p);
	if (proof)
		p->n.traced = 1;
	return p;
}

static void prove_traced(struct cw_tasks *ts, struct cw_obj *t)
{
	struct cw_obj *p = cw_ident__live(ts->id, CW_NODE_PROCESS, cw_ident__host(ts->id),
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
struct cw_obj *cw_tasks__thread(struct cw_tasks *ts, const struct cw_task *t, uint64_t witness,
				const struct cw_hdr *h, int flags, int *matched, int *err)
{
	const struct cw_scope *host = cw_ident__host(ts->id);
	struct cw_obj *o = cw_ident__live(ts->id, CW_NODE_THREAD, host, t->tid), *p;
	const char *why = NULL;
	char name[CW_NAME_LEN];
	uint32_t hpid;
	int8_t traced;

	*err = 0;
	*matched = 0;
	if (o && same_task(o, t, witness, h->ts)) {
		if (witness && o->witness == witness) {
			*matched = 1;
			if (!(flags & CW_T_PAST) || h->ts > o->est_ns)
				o->est_ns = h->ts;
		} else if (witness) {
			o->witness = witness;
		}
		cw_ident__touch(ts->id, o);
		if (flags & CW_T_PROOF)
			prove_traced(ts, o);
		return o;
	}
	/* The tid names another task now than it did then: that says
	 * nothing of the one it names now. */
	if (o && (flags & CW_T_PAST))
		return NULL;
	if (o) {
		/* The tid now names another task: the old one's end was not
		 * seen, and nothing joins it any more. */
		ts->st->identity_mismatch++;
		why = R_REUSED;
		if ((*err = cw_ident__release(ts->id, o)))
			return NULL;
	}
	if (!(flags & CW_T_CREATE))
		return NULL;
	p = cw_tasks__process(ts, t->pid, h, flags & CW_T_PROOF, err);
	if (!p)
		return NULL;
	traced = p->n.traced;
	name[0] = '\0';
	if (cw_ident__hint_take(ts->id, CW_NODE_THREAD, t->tid, &hpid, name) && hpid != t->pid)
		name[0] = '\0'; /* the snapshot described another task */
	if (!why)
		why = name[0] ? R_PREDATES :
		      cw_ident__break_in(ts->id, 0, h->ts) ? R_AFTER_BREAK : R_UNSEEN;
	/* Named during the capture: a name, not a birth before it. */
	if (!name[0] &&
	    cw_ident__hint_take(ts->id, CW_NODE_THREAD | CW_HINT_LATE, t->tid, &hpid, name) &&
	    hpid != t->pid)
		name[0] = '\0';
	/* Outside the traced set a task is only context: no orphan edge. */
	o = cw_ident__orphan(ts->id, CW_NODE_THREAD, host, t->tid, h,
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

/* What this layer keeps with each process (its state bytes, ident.h). */
struct process_state {
	uint32_t parent_pid; /* 0: not seen */
};
CW_OBJ_STATE_OF(process_of_obj, struct process_state, state)

void cw_tasks__set_parent_pid(struct cw_obj *process, uint32_t ppid)
{
	process_of_obj(process)->parent_pid = ppid;
}

/* Only a fork seen in the trace says who the parent is: a process that
 * predates the capture, or whose fork was lost, has none here. */
uint32_t cw_tasks__parent_pid(const struct cw_tasks *ts, uint32_t pid)
{
	struct cw_obj *p = cw_ident__live(ts->id, CW_NODE_PROCESS, cw_ident__host(ts->id), pid);

	return p ? process_of_obj(p)->parent_pid : 0;
}

struct cw_tasks *cw_tasks__new(struct cw_ident *id, struct cw_join_stats *st)
{
	struct cw_tasks *ts = calloc(1, sizeof(*ts));

	if (!ts)
		return NULL;
	ts->id = id;
	ts->st = st;
	return ts;
}

void cw_tasks__free(struct cw_tasks *ts)
{
	if (!ts)
		return;
	free(ts->initial);
	free(ts);
}
