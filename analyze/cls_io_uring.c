// SPDX-License-Identifier: MIT
/*
 * The io_uring class: rings and their requests (docs/model.md §5.1-5.4, 5.7-5.9).
 *
 * Rings. A ring is not a node but a scope: its io_ring_ctx pointer and
 * its generation, 'ring:0x<ptr>#<generation>'. A create starts a
 * generation (a create for a pointer whose generation is still live says
 * its free was not seen: the next generation), a free ends it. A request
 * record naming a pointer with no live generation is an unseen one: the
 * pointer's first (the ring predates the capture) or, after a free, the
 * next; requests are never joined across ring generations, because the
 * generation is part of the scope. Ring state is bounded (RING_MAX, and
 * never more than the live bound): the least recently named ring is
 * pushed out with its live requests (counted as evicted), and so that its
 * pointer, named again, cannot reuse a generation number already written,
 * every pointer not in the table starts one above the highest generation
 * ever pushed out (gen_floor; 0 while nothing was).
 *
 * Requests. An io_request is ('io_request', ring scope, user_data,
 * generation), named by its opcode, pid/tid its submitter. Every submit is
 * a birth (user_data and request pointers are reused all the time). Two
 * submissions with one user_data may be in flight at once on one ring
 * (user_data is the application's; nothing makes it unique), and both
 * must be live, but the identity layer's lookups know one live
 * generation per (type, scope, key). So a request is an object no lookup
 * finds (cw_ident__new_unlisted), in the ring's scope, and the class is
 * its only index: a side table of its live requests, by (ring, request
 * pointer), which the kernel never has two requests in flight at, and by
 * (ring, user_data), with the submitter and any pending punt. The
 * database numbers the generations of (type, scope, key) by node id, so
 * two overlapping generations of one user_data get 0 and 1 in submission
 * order.
 *
 * An entry holds its object by pointer and node id (cw_obj__still), so
 * that one the live bound pushed out is known as gone: such an entry is
 * dropped when next met (and by sweeps, so the table stays within about
 * twice the live requests). A private scope per request, and lookups by
 * it, did this before: at a million requests in flight, the cache misses
 * of interning, finding and freeing them were most of a submission.
 *
 * Completions (5.4). A CQE joins the live request of its ring with the
 * same request pointer and user_data: observed. A CQE without a request
 * pointer (an auxiliary CQE), or with another one, joins by user_data:
 * one live candidate is reconstructed and the reason says why; several
 * are not guessed between: a complete edge from nothing (src NULL,
 * unknown, 'ambiguous: N live requests with this user_data'), and none of
 * them ends; none at all makes an orphan request (start_seen 0, an
 * incoming submit edge from nothing) and its complete edge. The complete
 * edge goes from the request to the completing context: the current
 * thread in task context. In interrupt context the current task was only
 * interrupted (it goes in interrupted_tid) and the CQE is for the
 * submitter, so the edge goes to the submitter's thread while that
 * generation is live, reconstructed (no record names it), the context as
 * reason. A CQE with IORING_CQE_F_MORE keeps a multishot request live;
 * the final one ends it.
 *
 * Loss (5.7). A CQE overflow is a coverage break of its ring only
 * (breaks_scan.c): a join on that ring whose evidence spans one, or any
 * coverage break, is at best reconstructed. The overflow record is itself
 * a CQE named by user_data only, never observed.
 *
 * Other records.
 *  - punt (io_uring_queue_async_work, in the submitter's context): the
 *    worker is not known yet, so the punt time is kept and the punt edge
 *    (request -> io-wq worker, at the punt time) is written once it is:
 *    observed at the io-wq start (CW_REC_URING_WORK), reconstructed from
 *    the thread that completes the request when that probe is missing;
 *    with neither (the CQE posted by the submitter itself) there is no
 *    edge, and meta.uring_punts_no_worker counts it;
 *  - link (req is linked after target): a submit edge target -> req,
 *    reason 'link': the chain's causality, since the target's completion
 *    is what issues the linked request;
 *  - poll arm: an arm edge, arming thread -> request, reason 'poll
 *    armed': when the request began to wait for readiness;
 *  - task-work add and fail link only name the request. A task-work add
 *    in interrupt context is the readiness that wakes the request's task:
 *    BPF names the request as that wake's cause (CW_REC_WAKING_CAUSED),
 *    and the cause hook below gives the live request;
 *  - free: the ring generation ends, and so does every request still
 *    live in it (their ends unseen).
 * Every request record naming a request with no live generation makes an
 * orphan (5.3): never a join to an ended one or a likely one.
 *
 * Causes. A wake raised while the CPU processed a request (its task-work
 * add or its completion, in interrupt context) names it by (ring, request
 * pointer): the live request with that pointer in the live ring
 * generation, or nothing (the wake stays uncaused). The completion record
 * comes before that wake, so a request whose final completion ran in
 * interrupt context is held, joinable by the cause only, until the next
 * completion in that CPU's context level replaces it, as the BPF cause
 * slot is.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "carry.h"
#include "classes.h"
#include "lib/hash.h"
#include "lru.h"
#include "../schema/names.h"

#define RING_MAX 4096	/* rings kept at most (and never more than max_live) */
#define CAND_MAX 16	/* user_data candidates counted at most */
#define HOLD_CPUS 8192	/* CPUs whose last interrupt completion is held */
#define SWEEP_MIN 1024	/* side entries before the first sweep */
#define RING_NAME_LEN 48 /* "ring:0x" 16 hex digits '#' 20 digits, NUL */

/* enum io_uring_op (include/uapi/linux/io_uring.h, as of 6.18), without
 * the IORING_OP_ prefix; a later opcode is named OP_<n>. */
static const char *const opcode_names[] = {
	"NOP", "READV", "WRITEV", "FSYNC", "READ_FIXED", "WRITE_FIXED", "POLL_ADD",
	"POLL_REMOVE", "SYNC_FILE_RANGE", "SENDMSG", "RECVMSG", "TIMEOUT", "TIMEOUT_REMOVE",
	"ACCEPT", "ASYNC_CANCEL", "LINK_TIMEOUT", "CONNECT", "FALLOCATE", "OPENAT", "CLOSE",
	"FILES_UPDATE", "STATX", "READ", "WRITE", "FADVISE", "MADVISE", "SEND", "RECV",
	"OPENAT2", "EPOLL_CTL", "SPLICE", "PROVIDE_BUFFERS", "REMOVE_BUFFERS", "TEE",
	"SHUTDOWN", "RENAMEAT", "UNLINKAT", "MKDIRAT", "SYMLINKAT", "LINKAT", "MSG_RING",
	"FSETXATTR", "SETXATTR", "FGETXATTR", "GETXATTR", "SOCKET", "URING_CMD", "SEND_ZC",
	"SENDMSG_ZC", "READ_MULTISHOT", "WAITID", "FUTEX_WAIT", "FUTEX_WAKE", "FUTEX_WAITV",
	"FIXED_FD_INSTALL", "FTRUNCATE", "BIND", "LISTEN", "RECV_ZC", "EPOLL_WAIT",
	"READV_FIXED", "WRITEV_FIXED", "PIPE",
};

#define NO_OPCODE (-1)

static const char R_ORPHAN[] = "orphan: submission not in trace";
static const char R_ORPHAN_BREAK[] = "orphan: submission not in trace (coverage break)";
static const char R_BREAK_EXACT[] =
	"unknown: a coverage break since the submission could hide a reuse of its keys";
static const char R_BREAK_UD[] =
	"unknown: by user_data alone, and a coverage break could hide the submission";
static const char R_WORKER_FROM_COMPLETE[] = "worker from the completion: io-wq start not in trace";

/* What a join rests on: the exact keys, and what loss lies in between. */
enum join {
	J_EXACT,	   /* ring, request pointer and user_data */
	J_BREAK,	   /* exact, but a coverage break lies in between */
	J_RING_BREAK,	   /* exact, but a CQE overflow on the ring lies in between */
	J_NOPTR,	   /* by user_data: the CQE has no request pointer */
	J_PTRDIFF,	   /* by user_data: the CQE has another request pointer */
	J_OVERFLOW,	   /* by user_data: a CQE overflow */
	J_OVERFLOW_ORPHAN, /* a CQE overflow that no live request has */
	J_N,
};

#define S_BREAK "join across coverage break"
#define S_RING_BREAK "join across CQE overflow on the ring"
#define S_NOPTR "joined by user_data: no request pointer"
#define S_PTRDIFF "joined by user_data: request pointer differs"
#define S_OVERFLOW "joined by user_data: CQE overflow"
#define S_OVERFLOW_ORPHAN "CQE overflow"
#define J_ROW(p)                                                                          \
	{ p, p ": " S_BREAK, p ": " S_RING_BREAK, p ": " S_NOPTR, p ": " S_PTRDIFF,        \
	  p ": " S_OVERFLOW, p ": " S_OVERFLOW_ORPHAN }

/* A complete edge's reason, by context and join. In interrupt context it
 * names the context: the dst is the submitter, not the current task. */
static const char *const complete_reasons[CW_CTX_MAX][J_N] = {
	[CW_CTX_TASK] = { NULL, S_BREAK, S_RING_BREAK, S_NOPTR, S_PTRDIFF, S_OVERFLOW,
			  S_OVERFLOW_ORPHAN },
	[CW_CTX_SOFTIRQ] = J_ROW("softirq"),
	[CW_CTX_HARDIRQ] = J_ROW("hardirq"),
	[CW_CTX_NMI] = J_ROW("nmi"),
	[CW_CTX_UNKNOWN] = J_ROW("context unknown"),
};
/* The other edges' reasons, by J_EXACT, J_BREAK, J_RING_BREAK. */
static const char *const plain_reasons[3] = { NULL, S_BREAK, S_RING_BREAK };
static const char *const link_reasons[3] = { "link", "link: " S_BREAK, "link: " S_RING_BREAK };
static const char *const arm_reasons[3] = { "poll armed", "poll armed: " S_BREAK,
					    "poll armed: " S_RING_BREAK };
static const char *const nopunt_reasons[3] = { "punt not in trace", "punt not in trace: " S_BREAK,
					       "punt not in trace: " S_RING_BREAK };

struct ring {
	struct cw_hnode hn;
	struct ring *lru_prev, *lru_next; /* head: least recently named */
	struct req *reqs;		  /* the live generation's requests */
	uint64_t ptr;
	uint64_t gen;
	uint8_t live; /* a generation is live: created (seen or not), not freed */
	uint8_t name_len;
	char name[RING_NAME_LEN]; /* 'ring:0x<ptr>#<gen>', kept with gen */
};

/* A live request, as the class knows it (see the top of the file). It
 * is in two tables: by pointer (ptr != 0 only) and by user_data. The
 * second has back links: many live requests may share a user_data (0,
 * say), and forgetting one must not walk the others. */
struct req {
	struct cw_hnode by_ptr;
	struct cw_hlnode by_ud;
	struct req *rprev, *rnext; /* the ring's list */
	struct ring *ring;
	uint64_t ptr, ud;
	struct cw_obj *obj; /* its object, while it is the generation @node */
	uint64_t node;	    /* its node id */
	uint64_t submitter; /* node id of the submitting thread; 0: none */
	uint32_t sub_tid;
	int32_t hold;	    /* its slot in uring.hold, -1 */
	uint64_t punt_ns;
	uint16_t punt_cpu;
	uint8_t punt_ctx;
	uint8_t punted;	    /* punted, its worker not known yet */
};

/* The class's counters (analyze/counters.h's form). */
#define CW_URING_COUNTERS(X)                                                              \
	X(punts_no_worker, "uring_punts_no_worker",                                        \
	  "punts with no edge: the io-wq worker is not in the trace (no io-wq start, and " \
	  "the CQE posted by the submitter, as on a DEFER_TASKRUN ring, or none)")

struct uring_stats {
	CW_URING_COUNTERS(CW_COUNTER_FIELD)
};

struct uring {
	struct uring_stats st;
	struct cw_htab rtab; /* rings by pointer */
	size_t rmax;
	struct ring *lru_head, *lru_tail;
	uint64_t gen_floor;

	struct cw_htab ptab, utab; /* utab.n: the live requests */
	size_t sweep_at;

	/* per (CPU, context level): the request whose final completion
	 * there is held for the wakes it raises */
	struct req **hold;
	size_t nhold;
};

/* ---- the side table of live requests ------------------------------------ */

static uint64_t hash_ptr(const struct ring *r, uint64_t ptr)
{
	return cw_mix64(ptr ^ cw_mix64(r->ptr ^ r->gen));
}

static uint64_t hash_ud(const struct ring *r, uint64_t ud)
{
	return cw_mix64(ud ^ cw_mix64(r->ptr ^ r->gen) ^ 0x9e3779b97f4a7c15ull);
}

/* Lower-case hex of @v at @p, as "%" PRIx64 prints it. @return its end.
 * Once per ring generation since requests have no scope of their own,
 * but snprintf was 7% of the analyzer's instructions when every request
 * record built one. */
static char *put_hex(char *p, uint64_t v)
{
	char tmp[16];
	int n = 0;

	do
		tmp[n++] = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* Decimal of @v at @p, as "%" PRIu64 prints it. @return its end. */
static char *put_dec(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* @r's scope, 'ring:0x<ptr>#<gen>': once per generation, not per record. */
static void ring_name(struct ring *r)
{
	char *p = put_hex(r->name + 7, r->ptr);

	memcpy(r->name, "ring:0x", 7);
	*p++ = '#';
	p = put_dec(p, r->gen);
	*p = '\0';
	r->name_len = (uint8_t)(p - r->name);
}

/* A new live generation of @r. */
static void ring_next_gen(struct ring *r)
{
	r->gen++;
	r->live = 1;
	ring_name(r);
}

/* @e's object, or NULL when it is gone (pushed out by the live bound). */
static struct cw_obj *req_obj(const struct req *e)
{
	return cw_obj__still(e->obj, e->node);
}

/* Forget @e (not its object). */
static void req_unlink(struct uring *u, struct req *e)
{
	if (e->ptr)
		cw_htab__del(&u->ptab, &e->by_ptr, hash_ptr(e->ring, e->ptr));
	cw_htab__unlink(&u->utab, &e->by_ud);
	if (e->rprev)
		e->rprev->rnext = e->rnext;
	else
		e->ring->reqs = e->rnext;
	if (e->rnext)
		e->rnext->rprev = e->rprev;
	if (e->hold >= 0)
		u->hold[e->hold] = NULL;
	free(e);
}

/* @e's object, or NULL after forgetting @e, whose object is gone. */
static struct cw_obj *req_check(struct cw_cls *c, struct req *e)
{
	struct cw_obj *o = req_obj(e);

	if (!o)
		req_unlink(c->state, e);
	return o;
}

/* End @e: its object is written (its end unseen unless set) and @e
 * forgotten. @evicted: pushed out with its ring, and counted so. */
static int req_release(struct cw_cls *c, struct req *e, int evicted)
{
	struct cw_obj *o = req_obj(e);

	/* Still punted, its worker never known: counted before @e is gone. */
	if (o && e->punted)
		((struct uring *)c->state)->st.punts_no_worker++;
	req_unlink(c->state, e);
	if (!o)
		return 0;
	if (evicted)
		c->st->evicted++;
	return cw_ident__release(c->id, o);
}

static struct req *req_by_ptr(const struct uring *u, const struct ring *r, uint64_t ptr)
{
	struct req *e;

	if (!ptr)
		return NULL;
	cw_htab_for_each_possible(&u->ptab, e, by_ptr, hash_ptr(r, ptr))
		if (e->ring == r && e->ptr == ptr)
			return e;
	return NULL;
}

static uint64_t req_rehash_ptr(const struct cw_hnode *n)
{
	const struct req *e = cw_hentry(n, struct req, by_ptr);

	return hash_ptr(e->ring, e->ptr);
}

static uint64_t req_rehash_ud(const struct cw_hnode *n)
{
	const struct req *e = cw_hentry(n, struct req, by_ud.n);

	return hash_ud(e->ring, e->ud);
}

/* Both tables grow together, at one live request per bucket. */
static int req_tables_grow(struct uring *u)
{
	int err = cw_htab__grow(&u->utab, 1024, req_rehash_ud, 1);

	return err ? err : cw_htab__grow(&u->ptab, 1024, req_rehash_ptr, 0);
}

/* Forget the entries whose objects the live bound pushed out, so that
 * the table stays within about twice the live requests. */
static void req_sweep(struct cw_cls *c)
{
	struct uring *u = c->state;

	for (struct ring *r = u->lru_head; r; r = r->lru_next) {
		struct req *e, *next;

		for (e = r->reqs; e; e = next) {
			next = e->rnext;
			req_check(c, e);
		}
	}
	u->sweep_at = u->utab.n * 2 > SWEEP_MIN ? u->utab.n * 2 : SWEEP_MIN;
}

static const char *orphan_reason(struct cw_cls *c, const struct cw_hdr *h)
{
	return cw_ident__break_in(c->id, 0, h->ts) ? R_ORPHAN_BREAK : R_ORPHAN;
}

/*
 * A new request generation of (@r, @ptr, @ud) at @h: a birth, or with
 * @orphan an orphan (with its incoming submit edge: src NULL, @orphan as
 * reason). A request still live at @ptr ends first: the kernel reused its
 * io_kiocb, so its end was not seen. *ep: the new entry.
 */
static struct cw_obj *req_new(struct cw_cls *c, struct ring *r, uint64_t ptr, uint64_t ud,
			      const struct cw_hdr *h, const char *orphan, struct req **ep, int *err)
{
	struct uring *u = c->state;
	struct req *e = req_by_ptr(u, r, ptr);
	const struct cw_scope *s;
	struct cw_obj *o;

	*err = 0;
	if (e && (*err = req_release(c, e, 0)))
		return NULL;
	if (u->utab.n >= u->utab.cap && (*err = req_tables_grow(u)))
		return NULL;
	if (!(s = cw_ident__scope(c->id, r->name)) || !(e = calloc(1, sizeof(*e)))) {
		*err = -ENOMEM;
		return NULL;
	}
	o = cw_ident__new_unlisted(c->id, CW_NODE_IO_REQUEST, s, ud, h, CW_EDGE_SUBMIT, orphan, err);
	if (!o) {
		free(e);
		return NULL;
	}
	e->ring = r;
	e->ptr = ptr;
	e->ud = ud;
	e->obj = o;
	e->node = o->n.id;
	e->hold = -1;
	e->rnext = r->reqs;
	if (r->reqs)
		r->reqs->rprev = e;
	r->reqs = e;
	if (ptr)
		cw_htab__add(&u->ptab, &e->by_ptr, hash_ptr(r, ptr));
	cw_htab__add(&u->utab, &e->by_ud.n, hash_ud(r, ud));
	if (u->utab.n > u->sweep_at)
		req_sweep(c);
	*ep = e;
	return o;
}

/* ---- rings ------------------------------------------------------------------ */

static struct ring *ring_find(const struct uring *u, uint64_t ptr)
{
	struct ring *r;

	cw_htab_for_each_possible(&u->rtab, r, hn, cw_mix64(ptr))
		if (r->ptr == ptr)
			return r;
	return NULL;
}

static uint64_t ring_rehash(const struct cw_hnode *n)
{
	return cw_mix64(cw_hentry(n, struct ring, hn)->ptr);
}

CW_LRU_FUNCS(ring_lru, struct uring, struct ring)

/* The ring was just named: it is the last to be pushed out. */
static void ring_touch(struct uring *u, struct ring *r)
{
	ring_lru_touch(u, r);
}

/* End @r's live generation, and every request still live in it (their
 * ends unseen). @evicted: pushed out, and counted so. */
static int ring_end(struct cw_cls *c, struct ring *r, int evicted)
{
	int err = 0;

	while (r->reqs && !err)
		err = req_release(c, r->reqs, evicted);
	r->live = 0;
	return err;
}

/* Push out the least recently named ring (docs/model.md §5.8). */
static int ring_evict(struct cw_cls *c)
{
	struct uring *u = c->state;
	struct ring *r = u->lru_head;
	int err = 0;

	if (r->live) {
		c->st->evicted++;
		err = ring_end(c, r, 1);
	}
	if (r->gen + 1 > u->gen_floor)
		u->gen_floor = r->gen + 1;
	ring_lru_unlink(u, r);
	cw_htab__del(&u->rtab, &r->hn, cw_mix64(r->ptr));
	free(r);
	return err;
}

/* A ring pointer not in the table, with a live generation. */
static struct ring *ring_add(struct cw_cls *c, uint64_t ptr, int *err)
{
	struct uring *u = c->state;
	struct ring *r;

	if (u->rtab.n >= u->rmax && (*err = ring_evict(c)))
		return NULL;
	if (u->rtab.n >= u->rtab.cap && (*err = cw_htab__grow(&u->rtab, 64, ring_rehash, 0)))
		return NULL;
	if (!(r = calloc(1, sizeof(*r)))) {
		*err = -ENOMEM;
		return NULL;
	}
	r->ptr = ptr;
	r->gen = u->gen_floor;
	r->live = 1;
	ring_name(r);
	cw_htab__add(&u->rtab, &r->hn, cw_mix64(ptr));
	ring_lru_append(u, r);
	return r;
}

/* The live generation of ring @ptr, or a new unseen one: the pointer's
 * first, or the next after a free. */
static struct ring *ring_named(struct cw_cls *c, uint64_t ptr, int *err)
{
	struct uring *u = c->state;
	struct ring *r = ring_find(u, ptr);

	*err = 0;
	if (!r)
		return ring_add(c, ptr, err);
	if (!r->live)
		ring_next_gen(r);
	ring_touch(u, r);
	return r;
}

/* ---- contexts and joins ------------------------------------------------------ */

static uint8_t ctx_of(const struct cw_hdr *h)
{
	return h->ctx < CW_CTX_MAX ? h->ctx : CW_CTX_UNKNOWN;
}

/* Why an edge whose src would be the current thread has none. */
static const char *ctx_reason(uint8_t ctx)
{
	if (ctx == CW_CTX_TASK)
		return "idle";
	if (ctx == CW_CTX_UNKNOWN)
		return "context unknown";
	return cw_name_of(cw_ctx_names, CW_CTX_MAX, ctx);
}

/*
 * The thread current at @h in task context (an orphan thread when none
 * is live), and in *conf the confidence of naming it; NULL in interrupt
 * context, where the current task was only interrupted, and for the idle
 * task.
 */
static struct cw_obj *current_thread(struct cw_cls *c, const struct cw_hdr *h,
				     const struct cw_task *t, uint64_t witness, uint8_t *conf,
				     int *err)
{
	struct cw_obj *o;
	int matched;

	*err = 0;
	*conf = CW_CONF_OBSERVED;
	if (h->ctx != CW_CTX_TASK || !t->tid)
		return NULL;
	o = cw_cls__thread(c, t, witness, h, CW_T_CREATE, &matched, err);
	if (o && !matched)
		*conf = cw_ident__conf(c->id, o, h->ts);
	return o;
}

/* The submitting thread (node @node, tid @tid), if that generation is
 * still live. A lookup only: our memory of it proves nothing about what
 * the tid names now, so it must not end or make a generation. */
static struct cw_obj *submitter_of(struct cw_cls *c, uint64_t node, uint32_t tid)
{
	struct cw_obj *t;

	if (!node)
		return NULL;
	t = cw_ident__live(c->id, CW_NODE_THREAD, cw_ident__host(c->id), tid);
	return t && t->n.id == node ? t : NULL;
}

/* How a join at @ts to @o, a request of @r, stands against loss
 * (docs/model.md §5.7): J_EXACT, or the kind of break since its submission
 * that could hide its end and a reuse of its keys. */
static enum join join_loss(struct cw_cls *c, const struct ring *r, const struct cw_obj *o,
			   uint64_t ts)
{
	if (cw_ident__break_since(c->id, o->est_ns, ts))
		return J_BREAK;
	if (ts > o->est_ns && cw_ident__break_in_ring(c->id, r->ptr, o->est_ns + 1, ts))
		return J_RING_BREAK;
	return J_EXACT;
}

static uint8_t conf_of(enum join j)
{
	return j == J_EXACT ? CW_CONF_OBSERVED : CW_CONF_RECONSTRUCTED;
}

static void set_opcode(struct cw_obj *o, int opcode)
{
	char buf[CW_NAME_LEN];

	if (opcode == NO_OPCODE)
		return;
	if ((size_t)opcode < CW_ARRAY_SIZE(opcode_names)) {
		cw_obj__set_name(o, opcode_names[opcode], CW_NAME_LEN);
		return;
	}
	snprintf(buf, sizeof(buf), "OP_%d", opcode);
	cw_obj__set_name(o, buf, sizeof(buf));
}

/*
 * The live request (@ptr, @ud) of @r that a request record at @h names,
 * or an orphan when it has none (docs/model.md §5.3). @task: the record's
 * current task; in task context its process owns the ring.
 */
static struct cw_obj *req_named(struct cw_cls *c, const struct cw_hdr *h, struct ring *r,
				uint64_t ptr, uint64_t ud, int opcode, const struct cw_task *task,
				struct req **ep, int *err)
{
	struct req *e = req_by_ptr(c->state, r, ptr);
	struct cw_obj *o = e ? req_check(c, e) : NULL;

	*err = 0;
	if (o && e->ud == ud && !o->ended) {
		cw_ident__touch(c->id, o);
		*ep = e;
		return o;
	}
	o = req_new(c, r, ptr, ud, h, orphan_reason(c, h), ep, err);
	if (!o)
		return NULL;
	set_opcode(o, opcode);
	if (h->ctx == CW_CTX_TASK && task->pid)
		o->n.pid = task->pid;
	return o;
}

/* ---- records ------------------------------------------------------------------- */

static int on_create(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_uring_create *rec = (const void *)h;
	struct uring *u = c->state;
	struct ring *r = ring_find(u, rec->ring);
	int err = 0;

	if (!r)
		return ring_add(c, rec->ring, &err) ? 0 : err;
	/* A create for a live generation: its free was not seen. */
	if (r->live && (err = ring_end(c, r, 0)))
		return err;
	ring_next_gen(r);
	ring_touch(u, r);
	return 0;
}

static int on_free(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_uring_free *rec = (const void *)h;
	struct ring *r = ring_find(c->state, rec->ring);

	/* A ring never named has no request to end, and its generation
	 * number was never written: the next create may have it. */
	if (!r || !r->live)
		return 0;
	ring_touch(c->state, r);
	return ring_end(c, r, 0);
}

static int on_submit(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_uring_req *rec = (const void *)h;
	struct cw_obj *thr, *o;
	struct ring *r;
	struct req *e;
	uint8_t tconf;
	int err;

	if (!(r = ring_named(c, rec->ring, &err)))
		return err;
	thr = current_thread(c, h, &rec->task, rec->task_start, &tconf, &err);
	if (err)
		return err;
	if (!(o = req_new(c, r, rec->req, rec->user_data, h, NULL, &e, &err)))
		return err;
	set_opcode(o, rec->opcode);
	if (!thr)
		return cw_ident__edge(c->id, CW_EDGE_SUBMIT, NULL, o, h, CW_SRC_KERNEL,
				      CW_CONF_UNKNOWN, ctx_reason(ctx_of(h)));
	o->n.pid = rec->task.pid;
	o->n.tid = rec->task.tid;
	e->submitter = thr->n.id;
	e->sub_tid = rec->task.tid;
	return cw_ident__edge(c->id, CW_EDGE_SUBMIT, thr, o, h, CW_SRC_KERNEL, tconf,
			      tconf == CW_CONF_OBSERVED ? NULL : S_BREAK);
}

/* The reason of a complete edge from nothing: several live requests
 * could be the one. Static, as every reason is (struct cw_edge). */
#define AMBIGUOUS(n) "ambiguous: " #n " live requests with this user_data"
static const char *const ambiguous_reasons[CAND_MAX + 1] = {
	[2] = AMBIGUOUS(2),   [3] = AMBIGUOUS(3),   [4] = AMBIGUOUS(4),   [5] = AMBIGUOUS(5),
	[6] = AMBIGUOUS(6),   [7] = AMBIGUOUS(7),   [8] = AMBIGUOUS(8),   [9] = AMBIGUOUS(9),
	[10] = AMBIGUOUS(10), [11] = AMBIGUOUS(11), [12] = AMBIGUOUS(12), [13] = AMBIGUOUS(13),
	[14] = AMBIGUOUS(14), [15] = AMBIGUOUS(15), [16] = AMBIGUOUS(16 or more),
};
_Static_assert(CAND_MAX == 16, "ambiguous_reasons lists 2 .. CAND_MAX");

/*
 * The live, not yet completed requests of @r with user_data @ud, counted
 * up to CAND_MAX. *one, *one_o: the first; *sub, *sub_tid: their common
 * submitting thread, 0 when they differ.
 */
static unsigned candidates(struct cw_cls *c, const struct ring *r, uint64_t ud, struct req **one,
			   struct cw_obj **one_o, uint64_t *sub, uint32_t *sub_tid)
{
	struct uring *u = c->state;
	struct cw_hnode *next;
	struct req *e;
	unsigned n = 0;

	/* req_check may forget @e: the walk has read the next one. */
	cw_htab_for_each_possible_safe(&u->utab, e, next, by_ud.n, hash_ud(r, ud)) {
		struct cw_obj *o;

		if (n >= CAND_MAX)
			break;
		if (e->ring != r || e->ud != ud)
			continue;
		if (!(o = req_check(c, e)) || o->ended)
			continue;
		if (++n == 1) {
			*one = e;
			*one_o = o;
			*sub = e->submitter;
			*sub_tid = e->sub_tid;
		} else if (e->submitter != *sub) {
			*sub = 0;
		}
	}
	return n;
}

/* The punt edge @o -> @worker: at the punt's time when it was seen. */
static int punt_edge(struct cw_cls *c, struct req *e, struct cw_obj *o, struct cw_obj *worker,
		     const struct cw_hdr *h, uint8_t conf, const char *reason)
{
	struct cw_hdr ph = *h;

	if (e->punted) {
		ph.ts = e->punt_ns;
		ph.cpu = e->punt_cpu;
		ph.ctx = e->punt_ctx;
	}
	e->punted = 0;
	return cw_ident__edge(c->id, CW_EDGE_PUNT, o, worker, &ph, CW_SRC_KERNEL, conf, reason);
}

/* Hold @e, just completed in interrupt context, for the wakes that its
 * completion raises there (see the top of the file), and release the one
 * it replaces. */
static int req_hold(struct cw_cls *c, struct req *e, const struct cw_hdr *h)
{
	struct uring *u = c->state;
	size_t i = (size_t)h->cpu * CW_CTX_MAX + ctx_of(h);
	struct req *prev;

	if (h->cpu >= HOLD_CPUS)
		return req_release(c, e, 0);
	if (i >= u->nhold) {
		size_t n = ((size_t)h->cpu + 1) * CW_CTX_MAX;
		struct req **v = realloc(u->hold, n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + u->nhold, 0, (n - u->nhold) * sizeof(*v));
		u->hold = v;
		u->nhold = n;
	}
	if (e->hold >= 0)
		u->hold[e->hold] = NULL;
	prev = u->hold[i];
	u->hold[i] = e;
	e->hold = (int32_t)i;
	if (!prev || prev == e)
		return 0;
	prev->hold = -1;
	return req_release(c, prev, 0);
}

/* A CQE whose request is not known: a complete edge of unknown cause into
 * the context it was posted in (@thr), or, in an interrupt, into its
 * submitter (@sub, @sub_tid) when that is known. */
static int complete_unknown(struct cw_cls *c, const struct cw_hdr *h, struct cw_obj *thr,
			    uint64_t sub, uint32_t sub_tid, const char *reason,
			    const struct cw_edge_extra *x)
{
	struct cw_obj *dst = ctx_of(h) == CW_CTX_TASK ? thr : submitter_of(c, sub, sub_tid);

	return dst ? cw_ident__edge_x(c->id, CW_EDGE_COMPLETE, NULL, dst, h, CW_SRC_KERNEL,
				      CW_CONF_UNKNOWN, reason, x)
		   : 0;
}

/*
 * A CQE of ring @ring_ptr for request @ptr (0: none named) and user_data
 * @ud with @cflags, posted at @h in the context of @task (@witness);
 * @overflow: it did not fit the CQ ring (CW_REC_URING_OVERFLOW).
 */
static int complete(struct cw_cls *c, const struct cw_hdr *h, const struct cw_task *task,
		    uint64_t witness, uint64_t ring_ptr, uint64_t ptr, uint64_t ud, uint32_t cflags,
		    int overflow)
{
	uint8_t ctx = ctx_of(h), tconf;
	struct cw_edge_extra x = { .interrupted = ctx == CW_CTX_TASK ? -1 : (int64_t)task->tid };
	struct cw_obj *thr, *o = NULL, *dst;
	enum join j = J_EXACT;
	struct req *e = NULL;
	struct ring *r;
	uint64_t sub = 0;
	uint32_t sub_tid = 0;
	unsigned n;
	int err;

	if (!(r = ring_named(c, ring_ptr, &err)))
		return err;
	thr = current_thread(c, h, task, witness, &tconf, &err);
	if (err)
		return err;
	if (ptr && (e = req_by_ptr(c->state, r, ptr)) && (o = req_check(c, e)) &&
	    (e->ud != ud || o->ended))
		o = NULL;
	if (o) {
		j = join_loss(c, r, o, h->ts);
		sub = e->submitter;
		sub_tid = e->sub_tid;
		/* The keys match, but the break since the submission could
		 * hold this request's completion and a new submission that
		 * reused both its pointer and its user_data: which one this
		 * is, is unknown. The keys are free again either way. */
		if (j == J_BREAK) {
			if ((err = complete_unknown(c, h, thr, sub, sub_tid, R_BREAK_EXACT, &x)))
				return err;
			if (cflags & CW_CQE_F_MORE) {
				cw_carry__unknown(o);
				return 0;
			}
			o->n.end_ns = (int64_t)h->ts;
			o->ended = 1;
			return req_release(c, e, 0);
		}
	} else if ((n = candidates(c, r, ud, &e, &o, &sub, &sub_tid)) > 1 ||
		   (n == 1 && join_loss(c, r, o, h->ts) == J_BREAK)) {
		/* Which one completed is not known: none ends, none is named.
		 * A lone candidate by user_data is not enough when a break
		 * since its submission could hide the submission of the one
		 * that completed. */
		return complete_unknown(c, h, thr, sub, sub_tid,
					n > 1 ? ambiguous_reasons[n] : R_BREAK_UD, &x);
	} else if (n == 1) {
		j = overflow ? J_OVERFLOW : ptr ? J_PTRDIFF : J_NOPTR;
	} else {
		if (!(o = req_new(c, r, ptr, ud, h, orphan_reason(c, h), &e, &err)))
			return err;
		if (thr)
			o->n.pid = thr->n.pid;
		if (overflow)
			j = J_OVERFLOW_ORPHAN;
	}
	if (ctx == CW_CTX_TASK) {
		dst = thr;
		if (j == J_EXACT && tconf != CW_CONF_OBSERVED)
			j = J_BREAK;
	} else {
		/* The current task was interrupted: the CQE is the
		 * submitter's, which the record does not name. */
		dst = submitter_of(c, sub, sub_tid);
	}
	if (dst && (err = cw_ident__edge_x(c->id, CW_EDGE_COMPLETE, o, dst, h, CW_SRC_KERNEL,
					   ctx == CW_CTX_TASK ? conf_of(j) : CW_CONF_RECONSTRUCTED,
					   complete_reasons[ctx][j], &x)))
		return err;
	/* Punted, and no io-wq start seen: the worker is the thread that
	 * completes it, unless that is its submitter (a DEFER_TASKRUN ring
	 * posts an io-wq completion from the submitter's own task work):
	 * then no thread of the trace is known to have run it, and the punt
	 * is counted, not joined. */
	if (e->punted && thr && thr->n.id != e->submitter &&
	    (err = punt_edge(c, e, o, thr, h, CW_CONF_RECONSTRUCTED, R_WORKER_FROM_COMPLETE)))
		return err;
	if (e->punted && !(cflags & CW_CQE_F_MORE)) {
		((struct uring *)c->state)->st.punts_no_worker++;
		e->punted = 0;
	}
	if (cflags & CW_CQE_F_MORE) {
		cw_carry__unknown(o);
		cw_ident__touch(c->id, o);
		return 0;
	}
	o->n.end_ns = (int64_t)h->ts;
	o->ended = 1;
	/* BPF names a request completed in an interrupt, by its pointer, as
	 * the cause of the wakes the interrupt raises. */
	if (ptr && e->ptr == ptr && (ctx == CW_CTX_SOFTIRQ || ctx == CW_CTX_HARDIRQ))
		return req_hold(c, e, h);
	return req_release(c, e, 0);
}

static int on_complete(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_uring_complete *rec = (const void *)h;

	return complete(c, h, &rec->task, rec->task_start, rec->ring, rec->req, rec->user_data,
			rec->cflags, 0);
}

static int on_overflow(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_uring_overflow *rec = (const void *)h;

	return complete(c, h, &rec->task, rec->task_start, rec->ring, 0, rec->user_data,
			rec->cflags, 1);
}

/* Handed to io-wq, in the submitter's context: the worker comes later. */
static int on_punt(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_uring_req *rec = (const void *)h;
	struct ring *r;
	struct req *e;
	int err;

	if (!(r = ring_named(c, rec->ring, &err)))
		return err;
	if (!req_named(c, h, r, rec->req, rec->user_data, rec->opcode, &rec->task, &e, &err))
		return err;
	e->punted = 1;
	e->punt_ns = h->ts;
	e->punt_cpu = h->cpu;
	e->punt_ctx = h->ctx;
	return 0;
}

/* An io-wq worker (the record's task) starts running the request. */
static int on_work(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_uring_req *rec = (const void *)h;
	struct cw_obj *o, *worker;
	struct ring *r;
	struct req *e;
	enum join j;
	uint8_t wconf;
	int err;

	if (!(r = ring_named(c, rec->ring, &err)))
		return err;
	if (!(o = req_named(c, h, r, rec->req, rec->user_data, rec->opcode, &rec->task, &e, &err)))
		return err;
	if (!(worker = current_thread(c, h, &rec->task, rec->task_start, &wconf, &err)))
		return err;
	j = join_loss(c, r, o, h->ts);
	if (j == J_EXACT && wconf != CW_CONF_OBSERVED)
		j = J_BREAK;
	return punt_edge(c, e, o, worker, h, conf_of(j),
			 e->punted ? plain_reasons[j] : nopunt_reasons[j]);
}

/* The request begins to wait for readiness: an arm edge from the thread
 * that armed it. */
static int on_poll_arm(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_uring_req *rec = (const void *)h;
	struct cw_obj *o, *thr;
	struct ring *r;
	struct req *e;
	enum join j;
	uint8_t tconf;
	int err;

	if (!(r = ring_named(c, rec->ring, &err)))
		return err;
	if (!(o = req_named(c, h, r, rec->req, rec->user_data, rec->opcode, &rec->task, &e, &err)))
		return err;
	thr = current_thread(c, h, &rec->task, rec->task_start, &tconf, &err);
	if (err)
		return err;
	if (!thr)
		return cw_ident__edge(c->id, CW_EDGE_ARM, NULL, o, h, CW_SRC_KERNEL, CW_CONF_UNKNOWN,
				      ctx_reason(ctx_of(h)));
	j = join_loss(c, r, o, h->ts);
	if (j == J_EXACT && tconf != CW_CONF_OBSERVED)
		j = J_BREAK;
	return cw_ident__edge(c->id, CW_EDGE_ARM, thr, o, h, CW_SRC_KERNEL, conf_of(j),
			      arm_reasons[j]);
}

/* Task-work add, fail link: they only name the request. */
static int on_named(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_uring_req *rec = (const void *)h;
	struct ring *r;
	struct req *e;
	int err;

	if (!(r = ring_named(c, rec->ring, &err)))
		return err;
	req_named(c, h, r, rec->req, rec->user_data, rec->opcode, &rec->task, &e, &err);
	return err;
}

/* req is linked after target: the target's completion issues req. */
static int on_link(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_uring_link *rec = (const void *)h;
	struct cw_obj *o, *t;
	struct ring *r;
	struct req *e;
	enum join j, jt;
	int err;

	if (!(r = ring_named(c, rec->ring, &err)))
		return err;
	if (!(o = req_named(c, h, r, rec->req, rec->user_data, NO_OPCODE, &rec->task, &e, &err)))
		return err;
	if (!(t = req_named(c, h, r, rec->target, rec->target_user_data, NO_OPCODE, &rec->task, &e,
			    &err)))
		return err;
	j = join_loss(c, r, o, h->ts);
	jt = join_loss(c, r, t, h->ts);
	if (jt > j)
		j = jt;
	return cw_ident__edge(c->id, CW_EDGE_SUBMIT, t, o, h, CW_SRC_KERNEL, conf_of(j),
			      link_reasons[j]);
}

/*
 * The cause hook: a wake raised while the CPU processed request @k->key
 * of ring @k->aux names the live request with that pointer in the live
 * ring generation (one just completed in interrupt context is held for
 * this), or nothing: never a guess, and never an orphan, which would
 * claim a request the trace does not show from a pointer alone.
 */
/* Never an orphan, so asked of the past too it names what is live (the
 * caller holds it to having been known then). */
static struct cw_obj *uring_cause(struct cw_cls *c, const struct cw_cause *k,
				  const struct cw_hdr *h, int flags, uint8_t *conf,
				  const char **reason, int *err)
{
	struct ring *r = ring_find(c->state, k->aux);
	struct cw_obj *o;
	struct req *e;
	enum join j;

	(void)flags;
	*err = 0;
	if (!r || !r->live || !(e = req_by_ptr(c->state, r, k->key)) || !(o = req_check(c, e)))
		return NULL;
	j = join_loss(c, r, o, h->ts);
	*conf = conf_of(j);
	*reason = plain_reasons[j];
	cw_ident__touch(c->id, o);
	return o;
}

static void *uring_init(struct cw_ident *id, int *err)
{
	struct uring *u = calloc(1, sizeof(*u));
	size_t max_live = cw_ident__max_live(id);

	if (!u) {
		*err = -ENOMEM;
		return NULL;
	}
	u->rmax = max_live < RING_MAX ? max_live : RING_MAX;
	u->sweep_at = SWEEP_MIN;
	return u;
}

static void uring_fini(void *state)
{
	struct uring *u = state;
	struct ring *r, *rn;
	struct req *e, *en;

	for (r = u->lru_head; r; r = rn) {
		rn = r->lru_next;
		for (e = r->reqs; e; e = en) {
			en = e->rnext;
			free(e);
		}
		free(r);
	}
	cw_htab__free(&u->rtab);
	cw_htab__free(&u->ptab);
	cw_htab__free(&u->utab);
	free(u->hold);
	free(u);
}

static const struct cw_handler handlers[] = {
	{ CW_REC_URING_CREATE, on_create },
	{ CW_REC_URING_SUBMIT, on_submit },
	{ CW_REC_URING_PUNT, on_punt },
	{ CW_REC_URING_POLL_ARM, on_poll_arm },
	{ CW_REC_URING_TASK_ADD, on_named },
	{ CW_REC_URING_LINK, on_link },
	{ CW_REC_URING_FAIL_LINK, on_named },
	{ CW_REC_URING_COMPLETE, on_complete },
	{ CW_REC_URING_OVERFLOW, on_overflow },
	{ CW_REC_URING_FREE, on_free },
	{ CW_REC_URING_WORK, on_work },
	{ 0 },
};

#define URING_ENTRY(field, key, comment) CW_COUNTER_ENTRY(struct uring, st.field, key)
static const struct cw_counter counters[] = {
	CW_URING_COUNTERS(URING_ENTRY)
	{ NULL, 0, 0 },
};

const struct cw_aclass cw_aclass_io_uring = {
	.name = "io_uring",
	.counters = counters,
	.init = uring_init,
	.fini = uring_fini,
	.handlers = handlers,
	.cause_kinds = 1u << CW_CAUSE_IO_REQ,
	.cause = uring_cause,
};
