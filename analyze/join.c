// SPDX-License-Identifier: MIT
/*
 * The join engine for processes and threads (contract section 5).
 *
 * Identity. A node is (type, scope, key, generation). Tids and pids are
 * unique only while their task lives, so the key alone means nothing: the
 * live generation of a key is what later events join. A fork is the only
 * birth of a thread; it always starts a new generation, even when the key
 * still has a live one (its exit was lost: the old generation is then
 * closed with an unobserved end, never merged into the new one).
 *
 * Orphans. An event that names a key with no live generation gets a new
 * node with start_seen = 0 and an incoming spawn edge with src NULL,
 * confidence 'unknown' and a reason. It is never attached to a dead
 * generation or a "likely" candidate. A task from the start-of-capture
 * snapshot is such an orphan too (reason 'orphan: predates capture'), made
 * when an event first names it.
 *
 * Death. sched_process_exit is not the last event that names a thread: the
 * exiting task still wakes its parent (exit_notify) and is switched out one
 * last time. So exit only records end_ns; the generation stays joinable
 * until its final switch-out in TASK_DEAD state, or until a fork reuses
 * the tid. Only then is the node released and written.
 *
 * Wakeups. sched_waking runs in the waker's context, so the waker is the
 * current task, but only in task context. In hardirq, softirq or NMI
 * context the current task is merely the one that was interrupted: the
 * edge then has src NULL and the context as reason (contract 5.6).
 * sched_wakeup and sched_wakeup_new give no causal edge (the former may run
 * on the wakee's CPU, the latter duplicates the spawn edge).
 *
 * Loss. A join whose evidence could lie inside a coverage break (the key's
 * generation was established before a break that ends after it, so a lost
 * exit and fork could have replaced it) is at best 'reconstructed'.
 *
 * Bound. Live state is capped; past the cap the least recently seen
 * generation is released early and counted as evicted. A later event
 * naming it becomes an orphan of a new generation.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "join.h"

const char *const cw_node_type_names[CW_NODE_NTYPES] = {
	"process", "thread", "runtime_task", "io_request",
	"work_item", "timer", "resource", "request",
};
const char *const cw_edge_type_names[CW_EDGE_NTYPES] = {
	"spawn", "wake", "submit", "punt", "complete", "queue", "execute",
	"arm", "fire", "resume", "acquire", "release", "begin", "end",
};
const char *const cw_source_names[] = { "kernel", "runtime", "application", "inferred" };
const char *const cw_confidence_names[CW_CONF_N] = { "observed", "reconstructed", "unknown" };

/* The kernel's TASK_DEAD state bit (since 5.14): the final switch-out. */
#define KERNEL_TASK_DEAD 0x80

#define DEFAULT_MAX_LIVE (1u << 20)

static const char SCOPE_HOST[] = "host";
static const char R_PREDATES[] = "orphan: predates capture";
static const char R_UNSEEN[] = "orphan: birth not in trace";
static const char R_AFTER_BREAK[] = "orphan: birth not in trace (coverage break)";
static const char R_ACROSS_BREAK[] = "join across coverage break";

struct jnode {
	struct cw_node n;
	struct jnode *lru_prev, *lru_next;
	struct entry *entry;
	uint64_t est_ns;  /* identity established: birth or first sighting */
	uint64_t last_ns; /* last event naming it, for eviction */
	uint8_t exited;
};

/* One per (type, scope, key) ever seen: the generation counter must
 * outlive the generations themselves. */
struct entry {
	uint64_t key;
	uint8_t type;
	uint8_t used;
	uint32_t next_gen;
	struct jnode *live;
	struct snap *snap; /* what the start-of-capture snapshot said */
};

/*
 * A task alive when the capture started, from the /proc snapshot. It does
 * not become a node until an event names it: a system-wide snapshot lists
 * hundreds of tasks that the trace never mentions again, and a node with
 * an orphan edge for each would only be noise. It names the first
 * generation an event finds without a birth, and is forgotten once a
 * fork of the key shows that the snapshot no longer describes it.
 */
struct snap {
	uint32_t pid;
	char comm[CW_COMM_LEN];
};

struct cw_join {
	struct cw_sink sink;
	const struct cw_breaks *breaks;
	size_t max_live;

	struct entry *tab;
	size_t tab_cap, tab_used;

	struct jnode *lru_head, *lru_tail; /* head: least recently seen */
	size_t nlive;
	struct jnode *free_nodes;

	uint64_t next_id;
	int have_event_ts;
	struct cw_join_stats st;
};

static uint64_t hash_key(uint8_t type, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull ^ (uint64_t)type << 56;

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

static int tab_grow(struct cw_join *j)
{
	size_t cap = j->tab_cap ? j->tab_cap * 2 : 4096;
	struct entry *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (size_t i = 0; i < j->tab_cap; i++) {
		struct entry *o = &j->tab[i];
		size_t k;

		if (!o->used)
			continue;
		k = hash_key(o->type, o->key) & (cap - 1);
		while (tab[k].used)
			k = (k + 1) & (cap - 1);
		tab[k] = *o;
		if (tab[k].live)
			tab[k].live->entry = &tab[k];
	}
	free(j->tab);
	j->tab = tab;
	j->tab_cap = cap;
	return 0;
}

/* The entry of (type, key), created if absent; NULL only on ENOMEM. */
static struct entry *tab_get(struct cw_join *j, uint8_t type, uint64_t key)
{
	size_t k;

	if ((j->tab_used + 1) * 4 > j->tab_cap * 3 && tab_grow(j))
		return NULL;
	k = hash_key(type, key) & (j->tab_cap - 1);
	while (j->tab[k].used) {
		if (j->tab[k].key == key && j->tab[k].type == type)
			return &j->tab[k];
		k = (k + 1) & (j->tab_cap - 1);
	}
	j->tab[k].used = 1;
	j->tab[k].type = type;
	j->tab[k].key = key;
	j->tab_used++;
	return &j->tab[k];
}

static void lru_unlink(struct cw_join *j, struct jnode *n)
{
	if (n->lru_prev)
		n->lru_prev->lru_next = n->lru_next;
	else
		j->lru_head = n->lru_next;
	if (n->lru_next)
		n->lru_next->lru_prev = n->lru_prev;
	else
		j->lru_tail = n->lru_prev;
	n->lru_prev = n->lru_next = NULL;
}

static void lru_append(struct cw_join *j, struct jnode *n)
{
	n->lru_prev = j->lru_tail;
	n->lru_next = NULL;
	if (j->lru_tail)
		j->lru_tail->lru_next = n;
	else
		j->lru_head = n;
	j->lru_tail = n;
}

static void touch(struct cw_join *j, struct jnode *n, uint64_t ts)
{
	n->last_ns = ts;
	if (j->lru_tail != n) {
		lru_unlink(j, n);
		lru_append(j, n);
	}
}

/* Write the node and forget its live generation. */
static int release(struct cw_join *j, struct jnode *n)
{
	int err = j->sink.node(j->sink.ctx, &n->n);

	lru_unlink(j, n);
	if (n->entry && n->entry->live == n)
		n->entry->live = NULL;
	j->nlive--;
	n->lru_next = j->free_nodes;
	j->free_nodes = n;
	return err;
}

static int emit_edge(struct cw_join *j, uint8_t type, const struct jnode *src,
		     const struct jnode *dst, const struct cw_hdr *h, uint8_t conf,
		     const char *reason)
{
	struct cw_edge e = {
		.type = type,
		.src = src ? src->n.id : 0,
		.dst = dst->n.id,
		.ts = h->ts,
		.cpu = h->cpu == 0xffff ? -1 : h->cpu,
		.source = CW_SRC_KERNEL,
		.confidence = conf,
		.reason = reason,
	};

	j->st.edges[type][conf]++;
	return j->sink.edge(j->sink.ctx, &e);
}

static int evict_one(struct cw_join *j)
{
	struct jnode *victim = j->lru_head;

	if (!victim)
		return 0;
	j->st.evicted++;
	return release(j, victim);
}

static void set_name(struct cw_node *n, const char *s, size_t max)
{
	size_t len = strnlen(s, max);

	if (len >= sizeof(n->name))
		len = sizeof(n->name) - 1;
	memcpy(n->name, s, len);
	n->name[len] = '\0';
}

/*
 * A new generation of (type, key). Any generation still live for the key
 * is closed first: a birth always starts a new lifetime.
 */
static struct jnode *new_gen(struct cw_join *j, uint8_t type, uint64_t key, uint64_t ts,
			     int seen_birth, int *err)
{
	struct entry *e = tab_get(j, type, key);
	struct jnode *n;

	*err = 0;
	if (!e) {
		*err = -ENOMEM;
		return NULL;
	}
	if (e->snap && seen_birth) {
		free(e->snap);
		e->snap = NULL;
	}
	if (e->live) {
		if (!e->live->exited && type == CW_NODE_THREAD)
			j->st.tid_reuse_unseen_exit++;
		*err = release(j, e->live);
		if (*err)
			return NULL;
	}
	n = j->free_nodes;
	if (n)
		j->free_nodes = n->lru_next;
	else if (!(n = malloc(sizeof(*n)))) {
		*err = -ENOMEM;
		return NULL;
	}
	memset(n, 0, sizeof(*n));
	n->n.id = ++j->next_id;
	n->n.type = type;
	n->n.scope = SCOPE_HOST;
	n->n.key = key;
	n->n.generation = e->next_gen++;
	n->n.pid = n->n.tid = -1;
	n->n.traced = -1;
	n->n.start_ns = seen_birth ? (int64_t)ts : -1;
	n->n.end_ns = -1;
	n->n.start_seen = !!seen_birth;
	n->entry = e;
	n->est_ns = ts;
	n->last_ns = ts;
	e->live = n;
	lru_append(j, n);
	j->nlive++;
	j->st.nodes[type]++;
	if (!seen_birth)
		j->st.orphans++;
	return n;
}

static struct jnode *live_of(struct cw_join *j, uint8_t type, uint64_t key)
{
	struct entry *e = tab_get(j, type, key);

	return e ? e->live : NULL;
}

/* The live process of @pid, or an orphan process node. Process nodes are
 * containers: causality flows between threads, so they carry no edges. */
static int ensure_process(struct cw_join *j, uint32_t pid, uint64_t ts)
{
	struct jnode *p = live_of(j, CW_NODE_PROCESS, pid);
	int err = 0;

	if (p) {
		touch(j, p, ts);
		return 0;
	}
	p = new_gen(j, CW_NODE_PROCESS, pid, ts, 0, &err);
	if (p) {
		p->n.pid = pid;
		if (p->entry->snap) {
			set_name(&p->n, p->entry->snap->comm, CW_COMM_LEN);
			free(p->entry->snap);
			p->entry->snap = NULL;
		}
	}
	return err;
}

/*
 * The live thread generation of @t, or a new orphan one with its
 * unknown-cause spawn edge. @ts is the event's time.
 */
static struct jnode *thread_of(struct cw_join *j, const struct cw_task *t,
			       const struct cw_hdr *h, int *err)
{
	struct jnode *n = live_of(j, CW_NODE_THREAD, t->tid);
	const char *why;

	*err = 0;
	if (n) {
		touch(j, n, h->ts);
		return n;
	}
	n = new_gen(j, CW_NODE_THREAD, t->tid, h->ts, 0, err);
	if (!n)
		return NULL;
	n->n.tid = t->tid;
	n->n.pid = t->pid;
	if (n->entry->snap) {
		struct snap *sn = n->entry->snap;

		set_name(&n->n, sn->comm, sizeof(sn->comm));
		n->entry->snap = NULL;
		free(sn);
		why = R_PREDATES;
	} else {
		why = cw_breaks__overlap(j->breaks, 0, h->ts) ? R_AFTER_BREAK : R_UNSEEN;
	}
	*err = emit_edge(j, CW_EDGE_SPAWN, NULL, n, h, CW_CONF_UNKNOWN, why);
	if (!*err)
		*err = ensure_process(j, t->pid, h->ts);
	return *err ? NULL : n;
}

/* Observed, unless a break could hide a change of generation between the
 * moment @n's identity was established and now. */
static uint8_t join_conf(const struct cw_join *j, const struct jnode *n, uint64_t ts)
{
	if (n && cw_breaks__overlap(j->breaks, n->est_ns, ts))
		return CW_CONF_RECONSTRUCTED;
	return CW_CONF_OBSERVED;
}

static int remember_snap(struct cw_join *j, uint8_t type, const struct cw_meta_task *r)
{
	struct entry *e = tab_get(j, type, type == CW_NODE_THREAD ? r->task.tid : r->task.pid);

	if (!e)
		return -ENOMEM;
	if (e->live)
		return 0; /* already named by an event: the snapshot is late */
	if (!e->snap && !(e->snap = malloc(sizeof(*e->snap))))
		return -ENOMEM;
	e->snap->pid = r->task.pid;
	memcpy(e->snap->comm, r->comm, CW_COMM_LEN);
	return 0;
}

static int on_task_snapshot(struct cw_join *j, const struct cw_meta_task *r)
{
	int err;

	if (r->task.tid == 0)
		return 0;
	err = remember_snap(j, CW_NODE_THREAD, r);
	if (!err && r->task.tid == r->task.pid)
		err = remember_snap(j, CW_NODE_PROCESS, r);
	return err;
}

static int on_fork(struct cw_join *j, const struct cw_fork *r)
{
	struct jnode *parent, *child;
	int err, is_thread = r->fork_flags & CW_FORK_THREAD;
	uint8_t conf;

	parent = thread_of(j, &r->parent, &r->hdr, &err);
	if (!parent)
		return err;
	if (!is_thread) {
		struct jnode *p = new_gen(j, CW_NODE_PROCESS, r->child.pid, r->hdr.ts, 1, &err);

		if (!p)
			return err;
		p->n.pid = r->child.pid;
		p->n.tid = r->parent.tid;
		set_name(&p->n, r->child_comm, sizeof(r->child_comm));
	} else {
		err = ensure_process(j, r->child.pid, r->hdr.ts);
		if (err)
			return err;
	}
	child = new_gen(j, CW_NODE_THREAD, r->child.tid, r->hdr.ts, 1, &err);
	if (!child)
		return err;
	child->n.tid = r->child.tid;
	child->n.pid = r->child.pid;
	set_name(&child->n, r->child_comm, sizeof(r->child_comm));
	conf = join_conf(j, parent, r->hdr.ts);
	return emit_edge(j, CW_EDGE_SPAWN, parent, child, &r->hdr, conf,
			 conf == CW_CONF_RECONSTRUCTED ? R_ACROSS_BREAK :
			 is_thread ? "thread" : "fork");
}

static int on_exec(struct cw_join *j, const struct cw_exec *r)
{
	struct jnode *n, *p;
	int err;

	if (r->old_tid && r->old_tid != r->task.tid) {
		/*
		 * A non-leader thread exec'd: it takes over the leader's tid
		 * and the old leader is gone. The task behind old_tid goes on
		 * under a new key, so it is a new generation of the leader
		 * tid, spawned from the old_tid one.
		 */
		struct cw_task old = { .tid = r->old_tid, .pid = r->task.pid };
		struct jnode *prev = thread_of(j, &old, &r->hdr, &err);

		if (!prev)
			return err;
		prev->n.end_ns = r->hdr.ts;
		prev->exited = 1;
		n = new_gen(j, CW_NODE_THREAD, r->task.tid, r->hdr.ts, 1, &err);
		if (!n)
			return err;
		n->n.tid = r->task.tid;
		n->n.pid = r->task.pid;
		err = emit_edge(j, CW_EDGE_SPAWN, prev, n, &r->hdr, join_conf(j, prev, r->hdr.ts),
				"exec: took over the leader tid");
		if (err)
			return err;
		err = release(j, prev);
		if (err)
			return err;
	} else {
		n = thread_of(j, &r->task, &r->hdr, &err);
		if (!n)
			return err;
	}
	set_name(&n->n, r->comm, sizeof(r->comm));
	p = live_of(j, CW_NODE_PROCESS, r->task.pid);
	if (p)
		set_name(&p->n, r->comm, sizeof(r->comm));
	if (j->sink.exec) {
		char comm[CW_COMM_LEN + 1], file[CW_EXEC_PATH_LEN + 1];

		memcpy(comm, r->comm, CW_COMM_LEN);
		comm[CW_COMM_LEN] = '\0';
		memcpy(file, r->filename, CW_EXEC_PATH_LEN);
		file[CW_EXEC_PATH_LEN] = '\0';
		return j->sink.exec(j->sink.ctx, n->n.id, r->hdr.ts, comm, file);
	}
	return 0;
}

static int on_task_exit(struct cw_join *j, const struct cw_exit *r)
{
	int err;
	struct jnode *n = thread_of(j, &r->task, &r->hdr, &err);

	if (!n)
		return err;
	n->n.end_ns = r->hdr.ts;
	n->exited = 1;
	if (r->exit_flags & CW_EXIT_GROUP_DEAD) {
		struct jnode *p = live_of(j, CW_NODE_PROCESS, r->task.pid);

		if (p) {
			p->n.end_ns = r->hdr.ts;
			err = release(j, p);
		}
	}
	return err;
}

static int on_rename(struct cw_join *j, const struct cw_rename *r)
{
	int err;
	struct jnode *n = thread_of(j, &r->task, &r->hdr, &err);

	if (!n)
		return err;
	set_name(&n->n, r->newcomm, sizeof(r->newcomm));
	if (r->task.tid == r->task.pid) {
		struct jnode *p = live_of(j, CW_NODE_PROCESS, r->task.pid);

		if (p)
			set_name(&p->n, r->newcomm, sizeof(r->newcomm));
	}
	return 0;
}

static const char *const ctx_reason[] = {
	[CW_CTX_SOFTIRQ] = "softirq", [CW_CTX_HARDIRQ] = "hardirq", [CW_CTX_NMI] = "nmi",
};

static int on_waking(struct cw_join *j, const struct cw_wake *r)
{
	struct jnode *src = NULL, *dst;
	const char *reason = NULL;
	uint8_t conf;
	int err;

	if (r->wakee.tid == 0)
		return 0;
	if (r->hdr.ctx == CW_CTX_TASK && r->waker.tid != 0) {
		src = thread_of(j, &r->waker, &r->hdr, &err);
		if (!src)
			return err;
	}
	dst = thread_of(j, &r->wakee, &r->hdr, &err);
	if (!dst)
		return err;
	if (r->hdr.ctx != CW_CTX_TASK) {
		/* Interrupt context: the current task was only interrupted. */
		conf = CW_CONF_UNKNOWN;
		reason = r->hdr.ctx < sizeof(ctx_reason) / sizeof(ctx_reason[0]) ?
				 ctx_reason[r->hdr.ctx] : "interrupt";
	} else if (!src) {
		/* The idle task (tid 0 exists once per CPU) names no thread. */
		conf = CW_CONF_UNKNOWN;
		reason = "idle";
	} else {
		conf = join_conf(j, src, r->hdr.ts);
		if (conf == CW_CONF_OBSERVED)
			conf = join_conf(j, dst, r->hdr.ts);
		if (conf == CW_CONF_RECONSTRUCTED)
			reason = R_ACROSS_BREAK;
	}
	return emit_edge(j, CW_EDGE_WAKE, src, dst, &r->hdr, conf, reason);
}

static int on_switch(struct cw_join *j, const struct cw_switch *r)
{
	struct jnode *prev = NULL;
	int err;

	if (r->prev.tid) {
		prev = thread_of(j, &r->prev, &r->hdr, &err);
		if (!prev)
			return err;
	}
	if (r->next.tid && !thread_of(j, &r->next, &r->hdr, &err))
		return err;
	/* The final switch-out of an exited task: nothing can name this
	 * generation any more, so it can be written now. */
	if (prev && prev->exited && (r->prev_state & KERNEL_TASK_DEAD))
		return release(j, prev);
	return 0;
}

static int on_touch_wakee(struct cw_join *j, const struct cw_wake *r)
{
	int err = 0;

	if (r->wakee.tid && !thread_of(j, &r->wakee, &r->hdr, &err))
		return err;
	return 0;
}

static int on_account(struct cw_join *j, const struct cw_account *r)
{
	j->st.events_lost += r->lost;
	return 0;
}

/* Record sizes for the types the join reads; a shorter record is bad. */
static size_t min_size(uint16_t type)
{
	switch (type) {
	case CW_REC_META_TASK: return sizeof(struct cw_meta_task);
	case CW_REC_ACCOUNT: return sizeof(struct cw_account);
	case CW_REC_SWITCH: return sizeof(struct cw_switch);
	case CW_REC_WAKING:
	case CW_REC_WAKEUP:
	case CW_REC_WAKEUP_NEW: return sizeof(struct cw_wake);
	case CW_REC_FORK: return sizeof(struct cw_fork);
	case CW_REC_EXEC: return sizeof(struct cw_exec);
	case CW_REC_EXIT: return sizeof(struct cw_exit);
	case CW_REC_RENAME: return sizeof(struct cw_rename);
	case CW_REC_META_KV: return sizeof(struct cw_meta_kv);
	default: return 0;
	}
}

int cw_join__record(struct cw_join *j, const struct cw_hdr *h)
{
	size_t need = min_size(h->type);
	int err = 0;

	j->st.records++;
	if (!need) {
		j->st.unknown_records++;
		return 0;
	}
	if (h->size < need) {
		j->st.bad_records++;
		return 0;
	}
	if (h->type != CW_REC_META_KV && h->type != CW_REC_META_TASK) {
		if (!j->have_event_ts || h->ts < j->st.first_ts)
			j->st.first_ts = h->ts;
		if (!j->have_event_ts || h->ts > j->st.last_ts)
			j->st.last_ts = h->ts;
		j->have_event_ts = 1;
	}
	switch (h->type) {
	case CW_REC_META_TASK: err = on_task_snapshot(j, (const void *)h); break;
	case CW_REC_ACCOUNT: err = on_account(j, (const void *)h); break;
	case CW_REC_SWITCH: err = on_switch(j, (const void *)h); break;
	case CW_REC_WAKING: err = on_waking(j, (const void *)h); break;
	case CW_REC_WAKEUP:
	case CW_REC_WAKEUP_NEW: err = on_touch_wakee(j, (const void *)h); break;
	case CW_REC_FORK: err = on_fork(j, (const void *)h); break;
	case CW_REC_EXEC: err = on_exec(j, (const void *)h); break;
	case CW_REC_EXIT: err = on_task_exit(j, (const void *)h); break;
	case CW_REC_RENAME: err = on_rename(j, (const void *)h); break;
	}
	/*
	 * Enforce the bound between records, never inside one: the nodes an
	 * event names were just touched, so they are the last to go, and no
	 * handler ever holds a pointer to a node released under it.
	 */
	while (!err && j->nlive > j->max_live)
		err = evict_one(j);
	return err;
}

struct cw_join *cw_join__new(const struct cw_sink *sink, const struct cw_join_opts *opts)
{
	struct cw_join *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->sink = *sink;
	j->breaks = opts ? opts->breaks : NULL;
	j->max_live = opts && opts->max_live ? opts->max_live : DEFAULT_MAX_LIVE;
	if (tab_grow(j)) {
		free(j);
		errno = ENOMEM;
		return NULL;
	}
	return j;
}

int cw_join__finish(struct cw_join *j)
{
	/* Oldest first, so that the output order depends on the trace only. */
	while (j->lru_head) {
		int err = release(j, j->lru_head);

		if (err)
			return err;
	}
	return 0;
}

void cw_join__stats(const struct cw_join *j, struct cw_join_stats *st)
{
	*st = j->st;
}

void cw_join__free(struct cw_join *j)
{
	struct jnode *n, *next;

	if (!j)
		return;
	for (n = j->lru_head; n; n = next) {
		next = n->lru_next;
		free(n);
	}
	for (n = j->free_nodes; n; n = next) {
		next = n->lru_next;
		free(n);
	}
	for (size_t i = 0; i < j->tab_cap; i++)
		free(j->tab[i].snap);
	free(j->tab);
	free(j);
}
