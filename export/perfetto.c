// SPDX-License-Identifier: MIT
/*
 * perfetto: the causal graph as a Perfetto trace (docs/model.md §8.3), a
 * protobuf `Trace` of `TracePacket`s written field by field (pb.h) with
 * the field numbers of perfetto's protos/perfetto/trace/ (below), for
 * ui.perfetto.dev and trace_processor.
 *
 * Tracks: one per process (ProcessDescriptor), per thread (ThreadDescriptor,
 * its process's child), per request and per runtime task (children of their
 * process), and for the objects no context runs on (io_uring requests,
 * block requests, work items, timers, packets, resources) a group per kind
 * whose lanes hold one slice per object, from its birth to its end, objects
 * that overlap in time on different lanes.
 *
 * A thread's track holds its waits, one "blocked" slice per off-CPU sample
 * (ts to ts + weight, docs/model.md §4.2), named by what ended the wait
 * (in a wait on a resource: the resource and what let it go, waits.h,
 * with the wait's arguments), with a "runnable" child from the wake to
 * the switch-in; and "running"
 * slices where the thread is known not to be blocked: from a sighting (its
 * birth, a CPU sample, an edge it caused, a switch-in) to its next wait.
 *
 * Every edge is a flow: an instant on its src's track at the edge's ts
 * begins it (flow_ids), and it ends (terminating_flow_ids) at the
 * "runnable" child of the wait the edge ended, or else at an instant on
 * its dst's track. An edge with no src is an instant on its dst's track
 * that says so ("wake from unknown: hardirq").
 *
 * The file is written in passes over the database, so that nothing grows
 * with the number of edges or samples, only with the number of nodes:
 *   0. read the nodes, then the edges and samples of the window: what is
 *      exported, each object's extent (for its lane);
 *   1. the clock, the track descriptors, and the begins of the lives of
 *      requests, tasks and objects;
 *   2. every edge: the instant at its src, and at its dst unless that is
 *      a thread with samples;
 *   3. the samples by thread and time, each thread's with the edges into
 *      it (edges(dst, ts)): its slices, and where its edges arrive;
 *   4. the ends of the slices of requests, tasks and objects, whose
 *      begins come before pass 2 (an instant at one's birth is in it).
 * trace_processor sorts packets by timestamp, keeping the file's order
 * among equal ones: a flow's src instant (pass 2) comes before its end,
 * and on each track a slice's end before the next one's begin.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "export.h"
#include "names.h"
#include "pb.h"
#include "waits.h"
#include "../lib/esc.h"
#include "../lib/hash.h"
#include "../lib/htab.h"

/*
 * Field numbers and values from perfetto's .proto files (the file named
 * beside each group, under protos/perfetto/): they are the format, and a
 * change to any of them makes a file perfetto reads wrongly.
 */
/* trace/trace.proto: Trace */
#define TRACE_PACKET 1
/* trace/trace_packet.proto: TracePacket */
#define TP_CLOCK_SNAPSHOT	      6
#define TP_TIMESTAMP		      8
#define TP_SEQ_ID		      10 /* trusted_packet_sequence_id */
#define TP_TRACK_EVENT		      11
#define TP_INTERNED_DATA	      12
#define TP_SEQ_FLAGS		      13
#define TP_CLOCK_ID		      58 /* timestamp_clock_id */
#define TP_DEFAULTS		      59 /* trace_packet_defaults */
#define TP_TRACK_DESCRIPTOR	      60
#define TP_FIRST_ON_SEQ		      87 /* first_packet_on_sequence */
#define SEQ_INCREMENTAL_STATE_CLEARED 1
#define SEQ_NEEDS_INCREMENTAL_STATE   2
/* trace/trace_packet_defaults.proto: TracePacketDefaults */
#define TPD_CLOCK_ID 58 /* timestamp_clock_id */
/* trace/clock_snapshot.proto: ClockSnapshot, ClockSnapshot.Clock */
#define CS_CLOCKS	       1
#define CS_PRIMARY_TRACE_CLOCK 2
#define CLOCK_ID	       1
#define CLOCK_TIMESTAMP	       2
/* common/builtin_clock.proto: BuiltinClock */
#define BUILTIN_CLOCK_REALTIME	1
#define BUILTIN_CLOCK_MONOTONIC 3
/* trace/track_event/track_descriptor.proto: TrackDescriptor */
#define TD_UUID	       1
#define TD_NAME	       2
#define TD_PROCESS     3
#define TD_THREAD      4
#define TD_PARENT_UUID 5
/* trace/track_event/process_descriptor.proto: ProcessDescriptor */
#define PD_PID		1
#define PD_PROCESS_NAME 6
/* trace/track_event/thread_descriptor.proto: ThreadDescriptor */
#define THD_PID		1
#define THD_TID		2
#define THD_THREAD_NAME 5
/* trace/track_event/track_event.proto: TrackEvent, TrackEvent.Type */
#define TE_DEBUG_ANNOTATIONS	4
#define TE_TYPE			9
#define TE_NAME_IID		10
#define TE_TRACK_UUID		11
#define TE_FLOW_IDS		47 /* fixed64 */
#define TE_TERMINATING_FLOW_IDS 48 /* fixed64 */
#define TYPE_SLICE_BEGIN	1
#define TYPE_SLICE_END		2
#define TYPE_INSTANT		3
/* trace/track_event/debug_annotation.proto: DebugAnnotation */
#define DA_NAME_IID	1
#define DA_BOOL_VALUE	2
#define DA_INT_VALUE	4
#define DA_STRING_VALUE 6
/* trace/interned_data/interned_data.proto: InternedData; EventName and
 * DebugAnnotationName are both (iid = 1, name = 2) */
#define ID_EVENT_NAMES		  2
#define ID_DEBUG_ANNOTATION_NAMES 3
#define INTERNED_IID		  1
#define INTERNED_NAME		  2

/* Bytes of packets written at a time. */
#define OUT_FLUSH (1 << 20)
/* The one packet sequence of the file. */
#define SEQ_ID 1
/* Request names are cut to what reads as a track's name. */
#define REQUEST_NAME_MAX 60

/*
 * Track uuids: a node's own track is its id << 8 | 1; a process track for a
 * pid no process node names, pid << 8 | 2; an object kind's group is
 * 0x10 + kind, and its lanes (lane + 1) << 8 | (0x10 + kind). Distinct by
 * their low byte, and never 0 (trace_processor's implicit global track).
 */
#define UUID_NODE(id)	((uint64_t)(id) << 8 | 1)
#define UUID_PID(pid)	((uint64_t)(uint32_t)(pid) << 8 | 2)
#define UUID_GROUP(k)	((uint64_t)(0x10 + (k)))
#define UUID_LANE(k, l) (((uint64_t)(l) + 1) << 8 | (0x10 + (k)))

enum ntype { N_OBJECT, N_PROCESS, N_THREAD, N_TASK, N_REQUEST };

/* Object kinds: a group of lanes each. */
static const char *const kinds[] = { "io_request", "block_request", "work_item",
				     "timer",	   "packet",	    "resource" };
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]) + 1) /* + any other type */

enum {
	F_USED = 1,	 /* exported */
	F_TRACED_NO = 2, /* traced = 0: its waits are not recorded */
	F_HAS_START = 4,
	F_HAS_END = 8,
	F_HAS_PID = 16,
	F_VISITED = 32,	  /* pass 3 met it */
	F_SYNTH_PID = 64, /* its parent is a process track made for its pid */
	F_SAMPLED = 128,  /* a thread with samples in the window: pass 3's */
};

struct pnode {
	int64_t id, key, start, end;
	int64_t lo, hi;		 /* not threads: first and last exported edge */
	int64_t first_seen;	 /* threads: first sign in the window that it ran */
	const char *type, *name; /* interned; NULL: none */
	int32_t pid;
	int32_t parent; /* index of the process node; -1: none */
	int32_t sender; /* a packet: index of the context that sent it; -1 */
	uint32_t lane;
	uint8_t t, kind, flags;
};

struct istr { /* an interned string and its iid */
	struct cw_hnode hn;
	uint64_t hash, iid;
	char s[];
};

/* The debug annotations, by their interned name's iid - 1. A blocked
 * slice in a resource wait has the wait's: its row (wait), the resource
 * by name and kind, the requests that waited and let it go, its time to
 * its wake (critical_waits' names). */
enum ann {
	A_EDGE,
	A_SAMPLE,
	A_NODE,
	A_REASON,
	A_END_EXACT,
	A_START_SEEN,
	A_END_SEEN,
	A_WAIT,
	A_RESOURCE,
	A_KIND,
	A_WAITING_REQUEST,
	A_WAKING_REQUEST,
	A_BLOCKED_NS,
	NANN
};
static const char *const ann_names[NANN] = {
	"edge",	    "sample",	       "node",		 "reason",	   "end_exact",
	"start_seen", "end_seen",      "wait",		 "resource",	   "kind",
	"waiting_request", "waking_request", "blocked_ns",
};

struct ev {
	int64_t ts;
	uint64_t track;
	int type;
	const char *name;	    /* NULL: none (a slice's end) */
	uint64_t flow, term;	    /* flow ids; 0: none */
	int64_t edge, sample, node; /* annotations; 0: none */
	const char *reason;
	bool end_inexact, start_unseen, end_unseen;
	const struct cw_xwait *wait; /* a blocked slice's resource wait; NULL: none */
};

struct pf {
	struct cw_x *x;
	struct cw_pb pb, out; /* the packet under way; what is to be written */
	struct pnode *n;
	size_t nn;
	struct cw_htab strs, names;
	uint64_t next_iid;
	bool ann_sent[NANN];
	/* the event name the packet under way interns; NULL: none */
	const struct istr *fresh;
	/* the window; the first moment exported, and where running
	 * slices stop at the latest (the window's or the capture's end) */
	int64_t lo, hi, first, stop;
	bool request_mode, waits_recorded;
	int64_t anchor_mono, anchor_real;
	bool have_anchor;
	/* process tracks made for pids no process node names */
	int32_t *pids;
	size_t npids;
	uint32_t lanes[NKINDS];
	uint64_t waits_overlapping;
	struct cw_xwaits *waits;
	int err; /* 0, or -1 after a message */
};

static const char *col_text(sqlite3_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(s, i);
}

static int db_error(struct pf *p)
{
	if (!p->err)
		cw_x__err("the database cannot be read: %s", sqlite3_errmsg(p->x->db));
	p->err = -1;
	return -1;
}

static int oom(struct pf *p)
{
	if (!p->err)
		cw_x__err("out of memory");
	p->err = -1;
	return -1;
}

static uint64_t hash_istr(const struct cw_hnode *n)
{
	return cw_hentry(n, struct istr, hn)->hash;
}

/* @s interned in @t (iid 0: none given yet); NULL when out of memory. */
static struct istr *intern(struct cw_htab *t, const char *s)
{
	uint64_t h = cw_hash_str(s);
	size_t len = strlen(s);
	struct istr *e;

	cw_htab_for_each_possible(t, e, hn, h)
		if (e->hash == h && !strcmp(e->s, s))
			return e;
	if (t->n >= t->cap && cw_htab__grow(t, t->cap ? t->cap * 2 : 1024, hash_istr, 0))
		return NULL;
	if (!(e = malloc(sizeof(*e) + len + 1)))
		return NULL;
	e->hash = h;
	e->iid = 0;
	memcpy(e->s, s, len + 1);
	cw_htab__add(t, &e->hn, h);
	return e;
}

/* A string of the database kept for the export's length. */
static const char *keep(struct pf *p, const char *s)
{
	struct istr *e;

	if (!s)
		return NULL;
	if (!(e = intern(&p->strs, s))) {
		oom(p);
		return NULL;
	}
	return e->s;
}

/* ---- packets ---- */

/* Write what p->out holds. */
static int flush_out(struct pf *p)
{
	if (p->out.n && fwrite(p->out.p, 1, p->out.n, p->x->out) != p->out.n) {
		if (!p->err)
			cw_x__err("the output cannot be written: %s", strerror(errno));
		return p->err = -1;
	}
	cw_pb__reset(&p->out);
	return 0;
}

/* Trace.packet: the packet in p->pb, length-delimited, to the output
 * (through p->out: one write per packet costs a tenth of the time). */
static int put_packet(struct pf *p)
{
	if (cw_pb__failed(&p->pb))
		return oom(p);
	cw_pb__bytes(&p->out, TRACE_PACKET, p->pb.p, p->pb.n);
	if (cw_pb__failed(&p->out))
		return oom(p);
	return p->out.n >= OUT_FLUSH ? flush_out(p) : 0;
}

/*
 * Start a packet: its timestamp on the capture clock (CLOCK_MONOTONIC,
 * schema/format.md), which the first packet made the trace's clock and
 * the second the sequence's default; @clock: say so in this packet too.
 */
static void packet_start(struct pf *p, int64_t ts, uint32_t flags, bool clock)
{
	cw_pb__reset(&p->pb);
	cw_pb__uint(&p->pb, TP_TIMESTAMP, ts < 0 ? 0 : (uint64_t)ts); /* a hand-made database */
	if (clock)
		cw_pb__uint(&p->pb, TP_CLOCK_ID, BUILTIN_CLOCK_MONOTONIC);
	cw_pb__uint(&p->pb, TP_SEQ_ID, SEQ_ID);
	if (flags)
		cw_pb__uint(&p->pb, TP_SEQ_FLAGS, flags);
}

/*
 * The first packets: a clock snapshot that makes CLOCK_MONOTONIC, the
 * capture's clock, the trace's own (trace_processor's default is
 * BOOTTIME, which it could not convert ours to), with the capture's
 * realtime anchor where there is one so that the UI can show wall time,
 * and that starts the sequence's incremental state (interned names); then
 * the sequence's defaults, in a packet of their own (trace_processor reads
 * nothing after a clock snapshot in a packet): CLOCK_MONOTONIC for every
 * timestamp that names no clock, 3 bytes of every event.
 */
static int put_header(struct pf *p)
{
	size_t cs, c;

	cw_pb__reset(&p->pb);
	cw_pb__uint(&p->pb, TP_SEQ_ID, SEQ_ID);
	cw_pb__uint(&p->pb, TP_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	cw_pb__uint(&p->pb, TP_FIRST_ON_SEQ, 1);
	cs = cw_pb__open(&p->pb, TP_CLOCK_SNAPSHOT);
	c = cw_pb__open(&p->pb, CS_CLOCKS);
	cw_pb__uint(&p->pb, CLOCK_ID, BUILTIN_CLOCK_MONOTONIC);
	cw_pb__uint(&p->pb, CLOCK_TIMESTAMP,
		      (uint64_t)(p->have_anchor ? p->anchor_mono : p->first));
	cw_pb__close(&p->pb, c);
	if (p->have_anchor) {
		c = cw_pb__open(&p->pb, CS_CLOCKS);
		cw_pb__uint(&p->pb, CLOCK_ID, BUILTIN_CLOCK_REALTIME);
		cw_pb__uint(&p->pb, CLOCK_TIMESTAMP, (uint64_t)p->anchor_real);
		cw_pb__close(&p->pb, c);
	}
	cw_pb__uint(&p->pb, CS_PRIMARY_TRACE_CLOCK, BUILTIN_CLOCK_MONOTONIC);
	cw_pb__close(&p->pb, cs);
	if (put_packet(p))
		return -1;
	cw_pb__reset(&p->pb);
	cw_pb__uint(&p->pb, TP_SEQ_ID, SEQ_ID);
	cs = cw_pb__open(&p->pb, TP_DEFAULTS);
	cw_pb__uint(&p->pb, TPD_CLOCK_ID, BUILTIN_CLOCK_MONOTONIC);
	cw_pb__close(&p->pb, cs);
	return put_packet(p);
}

/* The iid of event name @s, given in this packet's interned data if it is
 * new. @return 0 when out of memory. */
static uint64_t name_iid(struct pf *p, const char *s)
{
	struct istr *e = intern(&p->names, s);

	if (!e) {
		oom(p);
		return 0;
	}
	if (!e->iid) {
		e->iid = ++p->next_iid;
		p->fresh = e;
	}
	return e->iid;
}

static void ann_begin(struct pf *p, enum ann a, size_t *m)
{
	*m = cw_pb__open(&p->pb, TE_DEBUG_ANNOTATIONS);
	cw_pb__uint(&p->pb, DA_NAME_IID, (uint64_t)a + 1);
}

static void ann_int(struct pf *p, enum ann a, int64_t v)
{
	size_t m;

	ann_begin(p, a, &m);
	cw_pb__uint(&p->pb, DA_INT_VALUE, (uint64_t)v);
	cw_pb__close(&p->pb, m);
}

static void ann_false(struct pf *p, enum ann a)
{
	size_t m;

	ann_begin(p, a, &m);
	cw_pb__uint(&p->pb, DA_BOOL_VALUE, 0);
	cw_pb__close(&p->pb, m);
}

/* @v is escaped already (lib/esc.h). */
static void ann_str(struct pf *p, enum ann a, const char *v)
{
	size_t m;

	ann_begin(p, a, &m);
	cw_pb__str(&p->pb, DA_STRING_VALUE, v);
	cw_pb__close(&p->pb, m);
}

/* A resource wait's annotations (enum ann), those it has. */
static void ann_wait(struct pf *p, const struct cw_xwait *w, bool *ann)
{
	ann_int(p, A_WAIT, w->id);
	ann[A_WAIT] = true;
	ann_str(p, A_RESOURCE, w->resource);
	ann[A_RESOURCE] = true;
	if ((ann[A_KIND] = *w->kind))
		ann_str(p, A_KIND, w->kind);
	if ((ann[A_WAITING_REQUEST] = *w->waiting_request))
		ann_str(p, A_WAITING_REQUEST, w->waiting_request);
	if ((ann[A_WAKING_REQUEST] = *w->waking_request))
		ann_str(p, A_WAKING_REQUEST, w->waking_request);
	if ((ann[A_BLOCKED_NS] = w->blocked_ns >= 0))
		ann_int(p, A_BLOCKED_NS, w->blocked_ns);
	/* why what let it go is not known */
	if (!w->waker_known && *w->reason && !ann[A_REASON]) {
		ann_str(p, A_REASON, w->reason);
		ann[A_REASON] = true;
	}
}

/* An entry of interned data (EventName, DebugAnnotationName). */
static void put_interned(struct pf *p, uint32_t field, uint64_t iid, const char *name)
{
	size_t m = cw_pb__open(&p->pb, field);

	cw_pb__uint(&p->pb, INTERNED_IID, iid);
	cw_pb__str(&p->pb, INTERNED_NAME, name);
	cw_pb__close(&p->pb, m);
}

static int put_event(struct pf *p, const struct ev *e)
{
	bool ann[NANN] = { 0 }, need;
	size_t m, im;

	p->fresh = NULL;
	/* an end names nothing interned */
	packet_start(p, e->ts, e->type == TYPE_SLICE_END ? 0 : SEQ_NEEDS_INCREMENTAL_STATE, false);
	m = cw_pb__open(&p->pb, TP_TRACK_EVENT);
	cw_pb__uint(&p->pb, TE_TYPE, (uint64_t)e->type);
	cw_pb__uint(&p->pb, TE_TRACK_UUID, e->track);
	if (e->name) {
		uint64_t iid = name_iid(p, e->name);

		if (!iid)
			return -1;
		cw_pb__uint(&p->pb, TE_NAME_IID, iid);
	}
	if (e->flow)
		cw_pb__fixed64(&p->pb, TE_FLOW_IDS, e->flow);
	if (e->term)
		cw_pb__fixed64(&p->pb, TE_TERMINATING_FLOW_IDS, e->term);
	if ((ann[A_EDGE] = e->edge != 0))
		ann_int(p, A_EDGE, e->edge);
	if ((ann[A_SAMPLE] = e->sample != 0))
		ann_int(p, A_SAMPLE, e->sample);
	if ((ann[A_NODE] = e->node != 0))
		ann_int(p, A_NODE, e->node);
	if ((ann[A_REASON] = e->reason != NULL)) {
		char why[128];

		cw_esc_snprint(why, sizeof(why), e->reason);
		ann_str(p, A_REASON, why);
	}
	if ((ann[A_END_EXACT] = e->end_inexact))
		ann_false(p, A_END_EXACT);
	if ((ann[A_START_SEEN] = e->start_unseen))
		ann_false(p, A_START_SEEN);
	if ((ann[A_END_SEEN] = e->end_unseen))
		ann_false(p, A_END_SEEN);
	if (e->wait)
		ann_wait(p, e->wait, ann);
	cw_pb__close(&p->pb, m);
	/* the names this packet is the first to use, in its interned data */
	need = p->fresh != NULL;
	for (size_t i = 0; i < NANN; i++)
		need |= ann[i] && !p->ann_sent[i];
	if (!need)
		return put_packet(p);
	im = cw_pb__open(&p->pb, TP_INTERNED_DATA);
	if (p->fresh)
		put_interned(p, ID_EVENT_NAMES, p->fresh->iid, p->fresh->s);
	for (size_t i = 0; i < NANN; i++) {
		if (ann[i] && !p->ann_sent[i])
			put_interned(p, ID_DEBUG_ANNOTATION_NAMES, i + 1, ann_names[i]);
		p->ann_sent[i] |= ann[i];
	}
	cw_pb__close(&p->pb, im);
	return put_packet(p);
}

/* An event of @type at @ts on @track, with @more's flows and annotations. */
static int put_at(struct pf *p, int type, int64_t ts, uint64_t track, const char *name,
		  const struct ev *more)
{
	struct ev e = more ? *more : (struct ev){ 0 };

	e.ts = ts;
	e.track = track;
	e.type = type;
	e.name = name;
	return put_event(p, &e);
}

static int put_instant(struct pf *p, int64_t ts, uint64_t track, const char *name,
		       const struct ev *more)
{
	return put_at(p, TYPE_INSTANT, ts, track, name, more);
}

static int put_end(struct pf *p, int64_t ts, uint64_t track)
{
	return put_at(p, TYPE_SLICE_END, ts, track, NULL, NULL);
}

/* A slice [@b, @e] on @track: its begin (with @more's flows and
 * annotations) and its end. */
static int put_slice(struct pf *p, int64_t b, int64_t e, uint64_t track, const char *name,
		     const struct ev *more)
{
	if (put_at(p, TYPE_SLICE_BEGIN, b, track, name, more))
		return -1;
	return put_end(p, e, track);
}

/* ---- nodes ---- */

static struct pnode *node(struct pf *p, int64_t id)
{
	size_t lo = 0, hi = p->nn;

	/* ids are dense from 1 in an analyzer's database: look there first */
	if (id >= 1 && (uint64_t)id <= p->nn && p->n[id - 1].id == id)
		return &p->n[id - 1];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->n[mid].id < id)
			lo = mid + 1;
		else if (p->n[mid].id > id)
			hi = mid;
		else
			return &p->n[mid];
	}
	return NULL;
}

static struct pnode *node_col(struct pf *p, sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? NULL
							: node(p, sqlite3_column_int64(s, i));
}

/* @n as names.h names nodes; NULL: no node (an unknown cause). */
static struct cw_xnode xnode(const struct pnode *n)
{
	struct cw_xnode x = { 0 };

	if (n) {
		x.type = n->type ? n->type : "node"; /* a type code the view has no name for */
		x.name = n->name;
		x.key = n->key;
	}
	return x;
}

static uint8_t kind_of(const char *type)
{
	for (uint8_t k = 0; k < NKINDS - 1; k++)
		if (type && !strcmp(type, kinds[k]))
			return k;
	return NKINDS - 1;
}

static int load_nodes(struct pf *p)
{
	sqlite3_stmt *s = cw_x__prepare(p->x, "SELECT id, type, key, pid, name, start_ns, end_ns, "
					      "traced FROM nodes ORDER BY id");
	size_t cap = 0;
	int rc;

	if (!s)
		return p->err = -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *type = col_text(s, 1);
		struct pnode *n;

		if (p->nn == cap) {
			struct pnode *m = realloc(p->n, (cap = cap ? cap * 2 : 4096) * sizeof(*m));

			if (!m) {
				sqlite3_finalize(s);
				return oom(p);
			}
			p->n = m;
		}
		n = &p->n[p->nn++];
		*n = (struct pnode){
			.id = sqlite3_column_int64(s, 0),
			.key = sqlite3_column_int64(s, 2),
			.pid = (int32_t)sqlite3_column_int64(s, 3),
			.start = sqlite3_column_int64(s, 5),
			.end = sqlite3_column_int64(s, 6),
			.lo = INT64_MAX,
			.hi = INT64_MIN,
			.first_seen = INT64_MAX,
			.parent = -1,
			.sender = -1,
		};
		if (!type)
			n->t = N_OBJECT;
		else if (!strcmp(type, "process"))
			n->t = N_PROCESS;
		else if (!strcmp(type, "thread"))
			n->t = N_THREAD;
		else if (!strcmp(type, "runtime_task"))
			n->t = N_TASK;
		else if (!strcmp(type, "request"))
			n->t = N_REQUEST;
		else
			n->t = N_OBJECT;
		n->kind = kind_of(type);
		n->type = keep(p, type);
		n->name = keep(p, col_text(s, 4));
		if (p->err)
			break;
		n->flags = (sqlite3_column_type(s, 3) != SQLITE_NULL ? F_HAS_PID : 0) |
			   (sqlite3_column_type(s, 5) != SQLITE_NULL ? F_HAS_START : 0) |
			   (sqlite3_column_type(s, 6) != SQLITE_NULL ? F_HAS_END : 0) |
			   (sqlite3_column_type(s, 7) != SQLITE_NULL && !sqlite3_column_int(s, 7)
				? F_TRACED_NO
				: 0);
	}
	sqlite3_finalize(s);
	if (p->err)
		return -1;
	if (rc != SQLITE_DONE)
		return db_error(p);
	/* a database made by hand need not give ids in order */
	for (size_t i = 1; i < p->nn; i++)
		if (p->n[i].id <= p->n[i - 1].id) {
			cw_x__err("nodes: ids not in order at node %" PRId64, p->n[i].id);
			return p->err = -1;
		}
	return 0;
}

/* A meta value as a number; false when the key is not there. */
static bool meta_int(struct pf *p, const char *key, int64_t *v)
{
	sqlite3_stmt *s = cw_x__prepare(p->x, "SELECT value FROM meta WHERE key = ?1");
	bool ok = false;

	if (!s) {
		p->err = -1;
		return false;
	}
	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL) {
		const char *t = col_text(s, 0);
		char *end;

		errno = 0;
		*v = strtoll(t ? t : "", &end, 10);
		ok = t && *t && !*end && !errno;
	}
	sqlite3_finalize(s);
	return ok;
}

/* ---- the window and what is exported ---- */

/*
 * --request: the requests' span becomes the window, and what is exported
 * is the requests, the threads and runtime tasks that their samples are
 * attributed to or that their begin and end edges join, and the objects
 * those contexts handed work to or got it from in the window (pass 0).
 */
static int request_contexts(struct pf *p)
{
	sqlite3_stmt *att = cw_x__prepare(p->x, "SELECT s.thread, a.task FROM attribution a "
						"JOIN samples s ON s.id = a.sample "
						"WHERE a.request = ?1");
	sqlite3_stmt *ends = cw_x__prepare(p->x, "SELECT src FROM edges WHERE dst = ?1 UNION "
						 "SELECT dst FROM edges WHERE src = ?1");
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	bool open_lo = false, open_hi = false;
	int ret = 0;

	if (!att || !ends)
		ret = p->err = -1;
	for (size_t i = 0; i < p->x->nrequests && !ret; i++) {
		struct pnode *r = node(p, p->x->requests[i]);
		sqlite3_stmt *q[2] = { att, ends };
		int rc;

		if (!r)
			continue;
		r->flags |= F_USED;
		if (r->flags & F_HAS_START)
			lo = r->start < lo ? r->start : lo;
		else
			open_lo = true;
		if (r->flags & F_HAS_END)
			hi = r->end > hi ? r->end : hi;
		else
			open_hi = true;
		for (int k = 0; k < 2 && !ret; k++) {
			sqlite3_reset(q[k]);
			sqlite3_bind_int64(q[k], 1, r->id);
			while ((rc = sqlite3_step(q[k])) == SQLITE_ROW) {
				for (int c = 0; c < sqlite3_column_count(q[k]); c++) {
					struct pnode *n = node_col(p, q[k], c);

					if (n && (n->t == N_THREAD || n->t == N_TASK))
						n->flags |= F_USED;
				}
			}
			if (rc != SQLITE_DONE)
				ret = db_error(p);
		}
	}
	sqlite3_finalize(att);
	sqlite3_finalize(ends);
	if (!open_lo && lo != INT64_MAX && lo > p->lo)
		p->lo = lo;
	if (!open_hi && hi != INT64_MIN && hi < p->hi)
		p->hi = hi;
	return ret;
}

/* Query @sql of the window (?1 and ?2 are its ends); NULL after a message. */
static sqlite3_stmt *window_query(struct pf *p, const char *sql)
{
	sqlite3_stmt *s = cw_x__prepare(p->x, sql);

	if (!s) {
		p->err = -1;
		return NULL;
	}
	sqlite3_bind_int64(s, 1, p->lo);
	sqlite3_bind_int64(s, 2, p->hi);
	return s;
}

/* Pass 0 over the edges of the window. */
static int scan_edges(struct pf *p, int64_t *max_ts, uint64_t *n)
{
	sqlite3_stmt *s = window_query(p, "SELECT src, dst, ts, type FROM edges "
					  "WHERE ts >= ?1 AND ts <= ?2");
	sqlite3_stmt *count = cw_x__prepare(p->x, "SELECT count(*) FROM edges");
	uint64_t done = 0, total = 0;
	int rc;

	if (!s || !count) {
		sqlite3_finalize(s);
		sqlite3_finalize(count);
		return p->err = -1;
	}
	if (p->x->progress && sqlite3_step(count) == SQLITE_ROW)
		total = (uint64_t)sqlite3_column_int64(count, 0);
	sqlite3_finalize(count);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct pnode *src = node_col(p, s, 0), *dst = node_col(p, s, 1);
		int64_t ts = sqlite3_column_int64(s, 2);
		struct pnode *ends[2] = { src, dst };

		cw_x__progress(p->x, "reading edges", ++done, total);
		if (!dst)
			continue;
		++*n;
		*max_ts = ts > *max_ts ? ts : *max_ts;
		p->first = ts < p->first ? ts : p->first;
		for (int i = 0; i < 2; i++) {
			struct pnode *e = ends[i], *other = ends[!i];

			if (!e)
				continue;
			if (e->t == N_OBJECT || e->t == N_REQUEST || e->t == N_TASK) {
				e->lo = ts < e->lo ? ts : e->lo;
				e->hi = ts > e->hi ? ts : e->hi;
			}
			if (!p->request_mode)
				e->flags |= F_USED;
			else if (e->t == N_OBJECT && other && other->t != N_OBJECT &&
				 (other->flags & F_USED))
				e->flags |= F_USED;
		}
		/* a context causes edges only while it runs (an interrupt's are
		 * never its, docs/model.md §4), and runs a work item it
		 * executes or a task it polls */
		if (src && ts < src->first_seen)
			src->first_seen = ts;
		if (ts < dst->first_seen && col_text(s, 3) &&
		    (!strcmp(col_text(s, 3), "execute") || !strcmp(col_text(s, 3), "resume")))
			dst->first_seen = ts;
		if (src && src->t != N_OBJECT && dst->sender < 0 && dst->type &&
		    !strcmp(dst->type, "packet") && col_text(s, 3) &&
		    !strcmp(col_text(s, 3), "submit"))
			dst->sender = (int32_t)(src - p->n);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : db_error(p);
}

/* Whether edge @e's flow is begun in pass 2: in the window, both ends
 * exported, an id that can be a flow id. */
static bool has_flow(struct pf *p, int64_t e, int64_t ts, const struct pnode *src,
		     const struct pnode *dst)
{
	return e > 0 && ts >= p->lo && ts <= p->hi && src && (src->flags & F_USED) && dst &&
	       (dst->flags & F_USED);
}

/* Pass 0 over the samples of the window: the threads that have them. */
static int scan_samples(struct pf *p, bool *any_offcpu, int64_t *max_ts, uint64_t *n)
{
	sqlite3_stmt *s = window_query(p, "SELECT thread, kind, ts, weight FROM samples "
					  "WHERE ts >= ?1 AND ts <= ?2");
	int rc;

	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct pnode *t = node_col(p, s, 0);
		const char *kind = col_text(s, 1);
		int64_t ts = sqlite3_column_int64(s, 2), w = sqlite3_column_int64(s, 3);
		bool off = kind && !strcmp(kind, "offcpu");

		if (!t)
			continue;
		if (!p->request_mode)
			t->flags |= F_USED;
		if (!(t->flags & F_USED))
			continue;
		t->flags |= F_SAMPLED;
		++*n;
		*any_offcpu |= off;
		p->first = ts < p->first ? ts : p->first;
		*max_ts = ts > *max_ts ? ts : *max_ts;
		if (off && w > 0 && ts <= INT64_MAX - w && ts + w > *max_ts)
			*max_ts = ts + w;
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : db_error(p);
}

/* A node (its index), sorted by three keys compared in turn. */
struct sortkey {
	int64_t k[3];
	uint32_t idx;
};

static int cmp_sortkey(const void *a, const void *b)
{
	const struct sortkey *x = a, *y = b;

	for (int i = 0; i < 3; i++)
		if (x->k[i] != y->k[i])
			return x->k[i] < y->k[i] ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_pid(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The process track each exported context goes under: of the process
 * nodes of its pid (a pid reused is a new generation), the last one born
 * before the context was first seen, else the first one; a pid no process
 * node names gets a track of its own.
 */
static int parents(struct pf *p)
{
	struct sortkey *v; /* process nodes: (pid, birth seen, birth) */
	size_t nv = 0;

	for (size_t i = 0; i < p->nn; i++)
		nv += p->n[i].t == N_PROCESS;
	if (!(v = malloc((nv ? nv : 1) * sizeof(*v))))
		return oom(p);
	nv = 0;
	for (size_t i = 0; i < p->nn; i++)
		if (p->n[i].t == N_PROCESS)
			v[nv++] =
			    (struct sortkey){ .k = { p->n[i].key, !!(p->n[i].flags & F_HAS_START),
						     p->n[i].start },
					      .idx = (uint32_t)i };
	qsort(v, nv, sizeof(*v), cmp_sortkey);
	for (size_t i = 0; i < p->nn; i++) {
		struct pnode *c = &p->n[i];
		int64_t at = c->flags & F_HAS_START ? c->start : c->lo;
		size_t lo = 0, hi = nv, best;

		if (!(c->flags & F_USED) || !(c->flags & F_HAS_PID) ||
		    (c->t != N_THREAD && c->t != N_TASK && c->t != N_REQUEST))
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (v[mid].k[0] < c->pid)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == nv || v[lo].k[0] != c->pid) {
			int32_t *m = realloc(p->pids, (p->npids + 1) * sizeof(*m));

			if (!m) {
				free(v);
				return oom(p);
			}
			p->pids = m;
			p->pids[p->npids++] = c->pid;
			c->flags |= F_SYNTH_PID;
			continue;
		}
		best = lo;
		for (size_t j = lo; j < nv && v[j].k[0] == c->pid; j++)
			if (v[j].k[1] && v[j].k[2] <= at)
				best = j;
		c->parent = (int32_t)v[best].idx;
		p->n[v[best].idx].flags |= F_USED;
	}
	free(v);
	/* one track per pid, in pid order */
	if (p->npids) {
		size_t n = 0;

		qsort(p->pids, p->npids, sizeof(*p->pids), cmp_pid);
		for (size_t i = 0; i < p->npids; i++)
			if (!n || p->pids[n - 1] != p->pids[i])
				p->pids[n++] = p->pids[i];
		p->npids = n;
	}
	return 0;
}

struct lane {
	int64_t end;
	uint32_t lane;
};

static void heap_push(struct lane *h, size_t *n, struct lane v)
{
	size_t i = (*n)++;

	while (i && h[(i - 1) / 2].end > v.end) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static struct lane heap_pop(struct lane *h, size_t *n)
{
	struct lane top = h[0], last = h[--*n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1].end < h[c].end)
			c++;
		if (h[c].end >= last.end)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = last;
	return top;
}

/*
 * Each exported object's extent (its birth and end where the database has
 * them, and every edge of it in the window, so that its instants fall in
 * its own slice) and its lane: objects of a kind are laid out in order of
 * birth, each on a lane whose last slice ended before it began, else on a
 * new one. A lane is a track, and slices on a track must nest: this keeps
 * them apart.
 */
static int lanes(struct pf *p)
{
	struct sortkey *v; /* objects: (kind, first moment, id) */
	struct lane *heap;
	size_t nv = 0, nh = 0;

	for (size_t i = 0; i < p->nn; i++)
		nv += p->n[i].t == N_OBJECT && (p->n[i].flags & F_USED);
	v = malloc((nv ? nv : 1) * sizeof(*v));
	heap = malloc((nv ? nv : 1) * sizeof(*heap));
	if (!v || !heap) {
		free(v);
		free(heap);
		return oom(p);
	}
	nv = 0;
	for (size_t i = 0; i < p->nn; i++) {
		struct pnode *n = &p->n[i];

		if (n->t != N_OBJECT || !(n->flags & F_USED))
			continue;
		if ((n->flags & F_HAS_START) && n->start < n->lo)
			n->lo = n->start;
		if ((n->flags & F_HAS_END) && n->end > n->hi)
			n->hi = n->end;
		/* no edge in the window: its birth or its end alone */
		if (n->hi == INT64_MIN)
			n->hi = n->lo;
		if (n->lo == INT64_MAX)
			n->lo = n->hi;
		v[nv++] = (struct sortkey){ .k = { n->kind, n->lo, n->id }, .idx = (uint32_t)i };
	}
	qsort(v, nv, sizeof(*v), cmp_sortkey);
	for (size_t i = 0; i < nv; i++) {
		struct pnode *n = &p->n[v[i].idx];
		struct lane l;

		if (i && v[i].k[0] != v[i - 1].k[0])
			nh = 0;
		if (nh && heap[0].end < n->lo)
			l = heap_pop(heap, &nh);
		else
			l.lane = p->lanes[n->kind]++;
		l.end = n->hi;
		n->lane = l.lane;
		heap_push(heap, &nh, l);
	}
	free(v);
	free(heap);
	return 0;
}

/* ---- pass 1: the track descriptors ---- */

static uint64_t track(const struct pnode *n)
{
	return n->t == N_OBJECT ? UUID_LANE(n->kind, n->lane) : UUID_NODE(n->id);
}

static uint64_t parent_track(const struct pnode *n)
{
	if (n->flags & F_SYNTH_PID)
		return UUID_PID(n->pid);
	return 0;
}

/* A track descriptor's packet: begun here, ended by put_packet() after
 * cw_pb__close(@m). */
static size_t desc_start(struct pf *p, int64_t ts, uint64_t uuid, uint64_t parent)
{
	size_t m;

	packet_start(p, ts, 0, true);
	m = cw_pb__open(&p->pb, TP_TRACK_DESCRIPTOR);
	cw_pb__uint(&p->pb, TD_UUID, uuid);
	if (parent)
		cw_pb__uint(&p->pb, TD_PARENT_UUID, parent);
	return m;
}

static int put_process(struct pf *p, int64_t ts, uint64_t uuid, int32_t pid, const char *name)
{
	size_t m = desc_start(p, ts, uuid, 0), d;
	char buf[128];

	d = cw_pb__open(&p->pb, TD_PROCESS);
	cw_pb__uint(&p->pb, PD_PID, (uint64_t)(int64_t)pid);
	if (name) {
		cw_esc_snprint(buf, sizeof(buf), name);
		cw_pb__str(&p->pb, PD_PROCESS_NAME, buf);
	}
	cw_pb__close(&p->pb, d);
	cw_pb__close(&p->pb, m);
	return put_packet(p);
}

static int put_named(struct pf *p, int64_t ts, uint64_t uuid, uint64_t parent, const char *name)
{
	size_t m = desc_start(p, ts, uuid, parent);

	cw_pb__str(&p->pb, TD_NAME, name);
	cw_pb__close(&p->pb, m);
	return put_packet(p);
}

/* A request's name as a track's and a slice's: escaped, cut. */
static void request_name(char *buf, size_t cap, const struct pnode *n)
{
	if (n->name && *n->name) {
		/* cut with "..." where it does not fit */
		cw_esc_snprint(buf, cap < REQUEST_NAME_MAX + 1 ? cap : REQUEST_NAME_MAX + 1,
			       n->name);
	} else {
		snprintf(buf, cap, "request %" PRId64, n->key);
	}
}

static int put_descriptors(struct pf *p, int64_t ts)
{
	char name[160];

	for (size_t i = 0; i < p->npids && !p->err; i++)
		put_process(p, ts, UUID_PID(p->pids[i]), p->pids[i], NULL);
	for (size_t i = 0; i < p->nn && !p->err; i++) {
		struct pnode *n = &p->n[i];
		uint64_t parent = n->parent >= 0 ? UUID_NODE(p->n[n->parent].id) : parent_track(n);
		struct cw_xnode xn = xnode(n);

		if (!(n->flags & F_USED))
			continue;
		if (n->t == N_PROCESS) {
			put_process(p, ts, UUID_NODE(n->id), (int32_t)n->key, n->name);
		} else if (n->t == N_THREAD && (n->flags & F_HAS_PID)) {
			size_t m = desc_start(p, ts, UUID_NODE(n->id), parent), d;

			d = cw_pb__open(&p->pb, TD_THREAD);
			cw_pb__uint(&p->pb, THD_PID, (uint64_t)(int64_t)n->pid);
			cw_pb__uint(&p->pb, THD_TID, (uint64_t)n->key);
			cw_x__node_text(name, sizeof(name), &xn);
			cw_pb__str(&p->pb, THD_THREAD_NAME, name);
			cw_pb__close(&p->pb, d);
			cw_pb__close(&p->pb, m);
			put_packet(p);
		} else if (n->t == N_THREAD) {
			/* no pid: not a thread trace_processor could place */
			cw_x__node_text(name, sizeof(name) - 24, &xn);
			snprintf(name + strlen(name), 24, " (tid %" PRId64 ")", n->key);
			put_named(p, ts, UUID_NODE(n->id), 0, name);
		} else if (n->t == N_REQUEST) {
			request_name(name, sizeof(name), n);
			put_named(p, ts, UUID_NODE(n->id), parent, name);
		} else if (n->t == N_TASK) {
			cw_x__node_text(name, sizeof(name), &xn);
			put_named(p, ts, UUID_NODE(n->id), parent, name);
		}
	}
	for (uint8_t k = 0; k < NKINDS && !p->err; k++) {
		const char *word = k < NKINDS - 1 ? cw_x__kind_word(kinds[k]) : "other";

		if (!p->lanes[k])
			continue;
		put_named(p, ts, UUID_GROUP(k), 0, word);
		for (uint32_t l = 0; l < p->lanes[k] && !p->err; l++)
			put_named(p, ts, UUID_LANE(k, l), UUID_GROUP(k), word);
	}
	return p->err;
}

/* ---- pass 2: the edges ---- */

/* Edge @src -> @dst as a handoff, its type, confidence and reason in @s's
 * columns from @i; a packet src by the thread that sent it, where the
 * database has its submit edge. */
static struct cw_xhop hop(const struct pf *p, sqlite3_stmt *s, int i, const struct pnode *src,
			  const struct pnode *dst)
{
	return (struct cw_xhop){
		.type = col_text(s, i) ? col_text(s, i) : "edge",
		.confidence = col_text(s, i + 1),
		.reason = col_text(s, i + 2),
		.src = xnode(src),
		.dst = xnode(dst),
		.src_from = src && src->sender >= 0 ? p->n[src->sender].name : NULL,
	};
}

static int put_edges(struct pf *p, uint64_t total)
{
	sqlite3_stmt *s = window_query(p, "SELECT id, src, dst, ts, type, confidence, reason "
					  "FROM edges WHERE ts >= ?1 AND ts <= ?2");
	uint64_t done = 0;
	int rc;

	if (!s)
		return -1;
	while (!p->err && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0), ts = sqlite3_column_int64(s, 3);
		struct pnode *src = node_col(p, s, 1), *dst = node_col(p, s, 2);
		struct cw_xhop h = hop(p, s, 4, src, dst);
		bool flow = has_flow(p, id, ts, src, dst);
		struct ev more = { .edge = id, .reason = h.reason };
		char text[320], to[160];

		cw_x__progress(p->x, "writing edges", ++done, total);
		if (!dst)
			continue;
		if (src && (src->flags & F_USED)) {
			/* the edge's annotations are its arrival's, where its
			 * flow leads: said once, for they are most of an
			 * instant's bytes */
			struct ev out = flow ? (struct ev){ .flow = (uint64_t)id } : more;

			cw_x__node_text(to, sizeof(to), &h.dst);
			snprintf(text, sizeof(text), "%s -> %s%s", h.type, to,
				 cw_x__conf_suffix(h.confidence));
			put_instant(p, ts, track(src), text, &out);
		}
		/* the arrivals of a thread with samples are pass 3's, with
		 * its waits */
		if (!(dst->flags & F_USED) || (dst->flags & F_SAMPLED))
			continue;
		cw_x__hop_text(text, sizeof(text), &h);
		more.term = flow ? (uint64_t)id : 0;
		put_instant(p, ts, track(dst), text, &more);
	}
	sqlite3_finalize(s);
	if (!p->err && rc != SQLITE_DONE)
		return db_error(p);
	return p->err;
}

/* ---- pass 3: the threads' slices ---- */

struct timeline {
	struct pnode *t;
	int64_t since;	  /* running since; INT64_MAX: not known to run */
	int64_t last_end; /* end of the last wait */
	bool running;	  /* its waits are recorded: running slices can be told */
	sqlite3_stmt *in; /* the edges into it, in time order */
	bool more;	  /* the next of them is in @in's row */
};

static void tl_next_edge(struct pf *p, struct timeline *tl)
{
	int rc = sqlite3_step(tl->in);

	tl->more = rc == SQLITE_ROW;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		db_error(p);
}

static void tl_start(struct pf *p, struct timeline *tl, struct pnode *t)
{
	tl->t = t;
	tl->since = INT64_MAX;
	tl->last_end = INT64_MIN;
	tl->running = p->waits_recorded && !(t->flags & F_TRACED_NO);
	t->flags |= F_VISITED;
	/* its birth, or the first edge that shows it running (pass 0) */
	if ((t->flags & F_HAS_START) && t->start >= p->lo && t->start <= p->hi)
		tl->since = t->start;
	if (t->first_seen < tl->since)
		tl->since = t->first_seen;
	tl->more = false;
	if (t->flags & F_SAMPLED) {
		sqlite3_reset(tl->in);
		sqlite3_bind_int64(tl->in, 3, t->id);
		tl_next_edge(p, tl);
	}
}

/*
 * The next edge into the thread, where it arrives: the "runnable" slice
 * [its ts, @end] if it is the wake that ended the wait @sample (0: none),
 * else an instant. Its flow, if it has one, ends there. An edge with no
 * src has its instant in either case.
 */
static void tl_arrive(struct pf *p, struct timeline *tl, int64_t sample_wake, int64_t end)
{
	sqlite3_stmt *s = tl->in;
	int64_t id = sqlite3_column_int64(s, 0), ts = sqlite3_column_int64(s, 2);
	struct pnode *src = node_col(p, s, 1);
	struct cw_xhop h = hop(p, s, 3, src, tl->t);
	struct ev more = { .edge = id, .reason = h.reason };
	uint64_t track = UUID_NODE(tl->t->id);
	bool runnable = sample_wake && id == sample_wake;
	char name[320];

	if (has_flow(p, id, ts, src, tl->t))
		more.term = (uint64_t)id;
	if (runnable)
		put_at(p, TYPE_SLICE_BEGIN, ts, track, "runnable", &more);
	/* A wake from no thread (an interrupt's: a disk's completion ending
	 * a page fault) begins no flow, so only an instant can say what it
	 * was (docs/model.md §8.3, "Unknown causes"), also where it ended a
	 * wait: written after the runnable slice's begin, it nests in it. */
	if (!runnable || !src) {
		cw_x__hop_text(name, sizeof(name), &h);
		put_instant(p, ts, track, name, &more);
	}
	if (runnable)
		put_end(p, end, track);
	tl_next_edge(p, tl);
}

/* The edges into the thread before @ts. */
static void tl_arrive_before(struct pf *p, struct timeline *tl, int64_t ts)
{
	while (tl->more && !p->err && sqlite3_column_int64(tl->in, 2) < ts)
		tl_arrive(p, tl, 0, 0);
}

static void tl_run_to(struct pf *p, struct timeline *tl, int64_t ts)
{
	if (tl->running && tl->since < ts)
		put_slice(p, tl->since, ts, UUID_NODE(tl->t->id), "running", NULL);
}

static void tl_finish(struct pf *p, struct timeline *tl)
{
	int64_t stop = p->stop;

	if (!tl->t)
		return;
	tl_arrive_before(p, tl, INT64_MAX);
	if ((tl->t->flags & F_HAS_END) && tl->t->end < stop)
		stop = tl->t->end;
	tl_run_to(p, tl, stop);
	tl->t = NULL;
}

/*
 * One wait: a "blocked" slice from the switch-out (ts) for its weight,
 * named by what ended it, and under it a "runnable" slice from the wake
 * to the switch-in, where the wake's flow ends; the edges into the thread
 * before it, and in it, where they arrive.
 */
static void tl_wait(struct pf *p, struct timeline *tl, sqlite3_stmt *s)
{
	int64_t id = sqlite3_column_int64(s, 0), ts = sqlite3_column_int64(s, 3);
	int64_t w = sqlite3_column_int64(s, 4), wake = 0, end;
	bool has_wake =
	    sqlite3_column_type(s, 6) != SQLITE_NULL && sqlite3_column_type(s, 7) != SQLITE_NULL;
	struct pnode *src = node_col(p, s, 8);
	struct cw_xhop h = hop(p, s, 9, src, tl->t);
	struct cw_xwait rw;
	char cause[256], name[640], woke[sizeof(name)];
	int in_wait;

	tl_arrive_before(p, tl, ts);
	if (w < 0 || ts < tl->last_end) {
		/* overlaps the wait before (a database made by hand): a track's
		 * slices must nest, and this one cannot */
		p->waits_overlapping++;
		return;
	}
	end = ts > INT64_MAX - w ? INT64_MAX : ts + w;
	if (has_wake && sqlite3_column_int64(s, 7) >= ts && sqlite3_column_int64(s, 7) <= end)
		wake = sqlite3_column_int64(s, 6);
	tl_run_to(p, tl, ts);
	if (!has_wake) {
		snprintf(name, sizeof(name), "unknown (the wake was not seen)");
	} else {
		cw_x__cause_text(cause, sizeof(cause), &h);
		snprintf(name, sizeof(name), "%s%s", cause,
			 src ? cw_x__conf_suffix(h.confidence) : "");
	}
	/* a wait on a resource: named by it and what let it go (waits.h) */
	in_wait = cw_xwaits__at(p->waits, tl->t->id, sqlite3_column_int64(s, 12),
				sqlite3_column_int64(s, 13), ts, &rw);
	if (in_wait < 0) {
		p->err = -1;
		return;
	}
	if (in_wait) {
		int64_t own = has_wake ? sqlite3_column_int64(s, 6) : 0;
		size_t n;

		memcpy(woke, name, strlen(name) + 1);
		cw_xwait__text(name, sizeof(name), &rw, own, woke);
		/* as a wake that is not observed says so (above) */
		n = strlen(name);
		if (own && own == rw.wake_edge && rw.waker_known)
			snprintf(name + n, sizeof(name) - n, "%s", cw_x__conf_suffix(rw.confidence));
	}
	put_event(p, &(struct ev){ .ts = ts,
				   .track = UUID_NODE(tl->t->id),
				   .type = TYPE_SLICE_BEGIN,
				   .name = name,
				   .sample = id,
				   .end_inexact = !sqlite3_column_int(s, 5),
				   .wait = in_wait ? &rw : NULL });
	while (tl->more && !p->err && sqlite3_column_int64(tl->in, 2) <= end)
		tl_arrive(p, tl, wake, end);
	if (wake && sqlite3_column_int64(s, 7) > p->hi) /* a wake after the window */
		put_slice(p, sqlite3_column_int64(s, 7), end, UUID_NODE(tl->t->id), "runnable",
			  &(struct ev){ .edge = wake });
	put_end(p, end, UUID_NODE(tl->t->id));
	tl->last_end = end;
	tl->since = end; /* it runs from its switch-in */
}

static int put_threads(struct pf *p, uint64_t total)
{
	sqlite3_stmt *s = window_query(p, "SELECT s.id, s.thread, s.kind, s.ts, s.weight, "
					  "s.weight_exact, s.wake, e.ts, e.src, e.type, "
					  "e.confidence, e.reason, a.request, a.task FROM samples s "
					  "LEFT JOIN edges e ON e.id = s.wake "
					  "LEFT JOIN attribution a ON a.sample = s.id "
					  "WHERE s.ts >= ?1 AND s.ts <= ?2 "
					  "ORDER BY s.thread, s.ts, s.id");
	struct timeline tl = { .in = window_query(p, "SELECT id, src, ts, type, confidence, reason "
						     "FROM edges WHERE dst = ?3 AND ts >= ?1 "
						     "AND ts <= ?2 ORDER BY ts, id") };
	uint64_t done = 0;
	int rc = SQLITE_DONE;

	while (s && tl.in && !p->err && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct pnode *t = node_col(p, s, 1);
		const char *kind = col_text(s, 2);
		int64_t ts = sqlite3_column_int64(s, 3);

		cw_x__progress(p->x, "writing samples", ++done, total);
		if (!t || !(t->flags & F_USED))
			continue;
		if (t != tl.t) {
			tl_finish(p, &tl);
			tl_start(p, &tl, t);
		}
		if (kind && !strcmp(kind, "offcpu"))
			tl_wait(p, &tl, s);
		else if (ts >= tl.last_end && ts < tl.since)
			tl.since = ts; /* a CPU sample: it runs */
	}
	if (s && tl.in && !p->err && rc != SQLITE_DONE)
		db_error(p);
	if (!p->err)
		tl_finish(p, &tl);
	/* threads with no sample in the window (pass 2 wrote where their
	 * edges arrive): running from a sighting */
	for (size_t i = 0; i < p->nn && s && tl.in && !p->err; i++) {
		struct pnode *t = &p->n[i];

		if (t->t != N_THREAD || !(t->flags & F_USED) || (t->flags & F_VISITED))
			continue;
		tl_start(p, &tl, t);
		tl_finish(p, &tl);
	}
	sqlite3_finalize(s);
	sqlite3_finalize(tl.in);
	return p->err;
}

/* ---- the slices of requests, tasks and objects ---- */

/*
 * The begins (@begin) or the ends of the lives of requests, tasks and
 * objects: the begins before pass 2, so that an instant at an object's
 * birth falls inside its slice, and the ends after it, for one at its end.
 */
static int put_lives(struct pf *p, bool begin)
{
	char name[160];

	for (size_t i = 0; i < p->nn && !p->err; i++) {
		struct pnode *n = &p->n[i];
		struct cw_xnode xn = xnode(n);
		struct ev ev = { .node = n->id, .track = track(n) };
		int64_t b, e;

		if (!(n->flags & F_USED))
			continue;
		if (n->t == N_OBJECT) {
			b = n->lo;
			e = n->hi;
			cw_x__node_text(name, sizeof(name), &xn);
		} else if (n->t == N_REQUEST || n->t == N_TASK) {
			/* a life whose birth is not in the database is shown from
			 * its first edge, one whose end is not, to the end of
			 * what is exported (it was still going on, as far as
			 * anything says), and says so */
			ev.start_unseen = !(n->flags & F_HAS_START);
			ev.end_unseen = !(n->flags & F_HAS_END);
			b = ev.start_unseen ? (n->lo != INT64_MAX ? n->lo : p->first) : n->start;
			e = !ev.end_unseen ? n->end : n->hi > p->stop ? n->hi : p->stop;
			if (b == INT64_MAX || e == INT64_MIN)
				continue; /* no moment to show it at */
			if (n->t == N_REQUEST)
				request_name(name, sizeof(name), n);
			else
				cw_x__node_text(name, sizeof(name), &xn);
		} else {
			continue;
		}
		ev.ts = begin ? b : e < b ? b : e;
		ev.type = begin ? TYPE_SLICE_BEGIN : TYPE_SLICE_END;
		ev.name = begin ? name : NULL;
		if (!begin)
			ev.node = 0, ev.start_unseen = ev.end_unseen = false;
		put_event(p, &ev);
	}
	return p->err;
}

static void free_strs(struct cw_htab *t)
{
	cw_htab__free_entries(t, offsetof(struct istr, hn));
	cw_htab__free(t);
}

int cw_x__perfetto(struct cw_x *x)
{
	struct pf p = {
		.x = x,
		.lo = x->since == INT64_MIN ? 0 : x->since,
		.hi = x->until,
		.request_mode = x->nrequests > 0,
		.first = INT64_MAX,
	};
	int64_t max_ts = INT64_MIN, v;
	uint64_t nedges = 0, nsamples = 0;
	bool any_offcpu = false;

	if (load_nodes(&p) || !(p.waits = cw_xwaits__open(x)))
		goto out;
	p.have_anchor = meta_int(&p, "capture.anchor_monotonic_ns", &p.anchor_mono) &&
			meta_int(&p, "capture.anchor_realtime_ns", &p.anchor_real) &&
			p.anchor_mono >= 0 && p.anchor_real >= 0;
	if (p.request_mode && request_contexts(&p))
		goto out;
	if (p.lo <= p.hi &&
	    (scan_edges(&p, &max_ts, &nedges) || scan_samples(&p, &any_offcpu, &max_ts, &nsamples)))
		goto out;
	/* Waits are recorded when the capture recorded off-CPU samples
	 * (meta capture.offcpu; a database made without that key: when it
	 * has any). Where they are not, nothing tells running from blocked,
	 * and no "running" slice is drawn. */
	p.waits_recorded = meta_int(&p, "capture.offcpu", &v) ? v == 1 : any_offcpu;
	p.stop = meta_int(&p, "capture_end_ns", &v) && v > max_ts ? v : max_ts;
	if (p.stop > p.hi)
		p.stop = p.hi;
	if (p.err)
		goto out;
	for (size_t i = 0; i < p.nn && !p.request_mode; i++) {
		/* a request or task whose life spans the window, with no
		 * edge in it */
		struct pnode *n = &p.n[i];

		if ((n->t == N_REQUEST || n->t == N_TASK) && (n->flags & F_HAS_START) &&
		    n->start <= p.hi && (!(n->flags & F_HAS_END) || n->end >= p.lo) && p.lo <= p.hi)
			n->flags |= F_USED;
	}
	if (p.first == INT64_MAX)
		p.first = p.lo;
	if (parents(&p) || lanes(&p) || put_header(&p) || put_descriptors(&p, p.first) ||
	    put_lives(&p, true) ||
	    (p.lo <= p.hi && (put_edges(&p, nedges) || put_threads(&p, nsamples))) ||
	    put_lives(&p, false) || flush_out(&p))
		goto out;
	if (p.waits_overlapping && !x->quiet)
		cw_x__err("%" PRIu64
			  " waits overlap the wait before them on their thread: left out "
			  "(a database made by hand?)",
			  p.waits_overlapping);
out:
	cw_xwaits__free(p.waits);
	free_strs(&p.strs);
	free_strs(&p.names);
	free(p.n);
	free(p.pids);
	cw_pb__free(&p.pb);
	cw_pb__free(&p.out);
	return p.err ? -1 : 0;
}
