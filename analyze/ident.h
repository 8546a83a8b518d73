/* SPDX-License-Identifier: MIT */
/*
 * The identity layer (docs/model.md §5): every class handler names objects
 * through it and through nothing else.
 *
 * An object is (type, scope, key, generation). The scope is an interned
 * string ("host" for tids and pids, "ring:0x...#g" for io_uring requests,
 * "pid:N" for runtime tasks and resources): a key means something only
 * inside its scope, and nothing ever joins across scopes, because the
 * lookup compares the scope as part of the key.
 *
 * Only live generations are kept. A birth starts a new one (closing any
 * generation still live for the key: its end was not seen); an event that
 * names a key with no live generation makes an orphan (start_seen = 0, an
 * incoming edge with src NULL, confidence unknown and a reason). The
 * generation *number* is not counted here: counters for every key ever
 * seen are memory that grows with the trace, not with what is live. Node
 * ids are handed out in creation order, so the database numbers the
 * generations of each (type, scope, key) by id after the load, exactly.
 *
 * Live state is bounded (max_live): past it, the least recently named
 * object is written early and counted as evicted; a later event naming
 * its key becomes an orphan of a new generation, never a join to it.
 * Scopes live as long as an object holds them. Hints (names known before
 * an object exists: the /proc snapshot, a rename before any event) are
 * bounded too, and what does not fit is counted and dropped.
 */
#ifndef CAUSEWAY_IDENT_H
#define CAUSEWAY_IDENT_H

#include <stdint.h>
#include "join.h"
#include "lib/htab.h"

struct cw_ident;
struct cw_scope;

/*
 * What the modules above the layer keep with an object, in bytes the
 * layer clears at birth and never reads (as the kernel's skb->cb): a
 * module lays its own struct over them with CW_OBJ_STATE_OF, so that no
 * class's state is written here.
 *
 * carry   every object's, for analyze/carry.c (struct cw_carry there:
 *         the request it works for)
 * state   one owner per node type, which says so where it declares its
 *         struct: the sample class for a thread (its wait), task.c for a
 *         process (its parent), the adapter for a resource (its last
 *         release). A new owner of a type that has one shares its struct.
 */
#define CW_OBJ_CARRY_BYTES 48
#define CW_OBJ_STATE_BYTES 24

/* static inline T *FN(struct cw_obj *o): @o's state bytes as a T. */
#define CW_OBJ_STATE_OF(FN, T, bytes)                                                             \
	_Static_assert(sizeof(T) <= sizeof(((struct cw_obj *)0)->bytes) && _Alignof(T) <= 8,      \
		       #T " does not fit an object's " #bytes);                                  \
	static inline T *FN(const struct cw_obj *o)                                                \
	{                                                                                          \
		return (T *)(void *)((struct cw_obj *)o)->bytes;                                   \
	}

/* A live generation. Class handlers read and write the public part. */
struct cw_obj {
	struct cw_node n;
	/* A class-defined proof of identity, 0 when none: for a task, its
	 * start time. Two records with the same non-zero witness name the
	 * same object, whatever was lost between them. */
	uint64_t witness;
	/* When the identity was last established (birth, first sighting, a
	 * matching witness): a coverage break after this could hide a
	 * change of generation. */
	uint64_t est_ns;
	uint8_t ended;	/* its end was seen; the class decides how long it stays joinable */
	uint8_t flags;	/* class-private */
	/* A runtime task that is a thread of its runtime (a goroutine,
	 * cls_go.c): every carrying handoff into it tells it whom it works
	 * for, as for a thread (schema/nodes.def's takes, carry.c). */
	uint8_t takes_all;
	uint8_t retired; /* released; written between records */
	/* Its birth edge, held until it causes something (cw_ident__edge_held). */
	struct cw_edge *held;
	_Alignas(8) unsigned char carry[CW_OBJ_CARRY_BYTES];
	_Alignas(8) unsigned char state[CW_OBJ_STATE_BYTES];

	/* private to ident.c */
	struct cw_obj *lru_prev, *lru_next;
	struct cw_hnode hn; /* in the table of live objects, unless unlisted */
	struct cw_scope *scope;
	uint8_t unlisted;
};

struct cw_ident_opts {
	const struct cw_sink *sink;
	const struct cw_breaks *breaks;	/* may be NULL */
	size_t max_live;		/* 0: default */
	struct cw_join_stats *st;	/* counters the layer keeps */
};

struct cw_ident *cw_ident__new(const struct cw_ident_opts *opts);
void cw_ident__free(struct cw_ident *id);

/*
 * The interned scope @name. The pointer is valid while an object holds it
 * and until the end of the current record (cw_ident__enforce). NULL on
 * ENOMEM. cw_ident__host() is "host", always valid.
 */
const struct cw_scope *cw_ident__scope(struct cw_ident *id, const char *name);
const struct cw_scope *cw_ident__host(const struct cw_ident *id);
/* The scope @name if it is interned now, else NULL: a lookup that never
 * allocates (no object can live in a scope that is not interned). */
const struct cw_scope *cw_ident__scope_find(const struct cw_ident *id, const char *name);
const char *cw_scope__name(const struct cw_scope *s);
/* The scope of @o. */
const struct cw_scope *cw_obj__scope(const struct cw_obj *o);

/* Where nodes and edges go; for the records a class writes itself. */
const struct cw_sink *cw_ident__sink(const struct cw_ident *id);

/* The live generation of (type, scope, key), or NULL. */
struct cw_obj *cw_ident__live(struct cw_ident *id, uint8_t type, const struct cw_scope *scope,
			      uint64_t key);

/*
 * A new generation of (type, scope, key) at @ts. Any generation still live
 * for the key is written first (its end, when unseen, stays unknown).
 * @seen_birth: 1 for a birth event, 0 for an orphan (use cw_ident__orphan,
 * which also writes the orphan edge). NULL with *err on ENOMEM or a sink
 * error.
 */
struct cw_obj *cw_ident__new_gen(struct cw_ident *id, uint8_t type, const struct cw_scope *scope,
				 uint64_t key, uint64_t ts, int seen_birth, int *err);

/*
 * An orphan: a new generation with start_seen = 0, and, when @edge_type is
 * not negative, its incoming edge of that type at @h with src NULL,
 * confidence unknown and @reason. @edge_type < 0 makes a node without an
 * orphan edge (an object outside the traced set, seen only at the other
 * end of an edge).
 */
struct cw_obj *cw_ident__orphan(struct cw_ident *id, uint8_t type, const struct cw_scope *scope,
				uint64_t key, const struct cw_hdr *h, int edge_type,
				const char *reason, int *err);

/*
 * A new generation of (type, scope, key) that no lookup finds: for a
 * class whose keys may name several live objects at once (two io_uring
 * requests in flight with one user_data), which keeps its own index of
 * them and holds them by pointer and node id (cw_obj__still). It ends no
 * other generation, and cw_ident__live never returns it; it is bounded,
 * evicted, released and written as every other object. @orphan NULL: a
 * birth at @h; else an orphan, as cw_ident__orphan makes with @edge_type
 * and @orphan as the reason. NULL with *err on ENOMEM or a sink error.
 */
struct cw_obj *cw_ident__new_unlisted(struct cw_ident *id, uint8_t type,
				      const struct cw_scope *scope, uint64_t key,
				      const struct cw_hdr *h, int edge_type, const char *orphan,
				      int *err);

/*
 * @o if it is still the live generation with node id @node, else NULL
 * (it was released or evicted). Safe on any object the layer ever
 * returned, until cw_ident__free: the memory of a written object is only
 * reused for another, under a new id, never freed before.
 */
struct cw_obj *cw_obj__still(struct cw_obj *o, uint64_t node);

/* The object was just named: it is the last to be evicted. */
void cw_ident__touch(struct cw_ident *id, struct cw_obj *o);

/* Forget @o: no lookup finds it any more. It is written, and its memory
 * reused, only between records, so a handler may go on using it to the
 * end of the record (releasing it twice is harmless). */
int cw_ident__release(struct cw_ident *id, struct cw_obj *o);

/*
 * An edge @src -> @dst at @h (src NULL: unknown cause), counted in the
 * stats. @source is a cw_source.
 */
int cw_ident__edge(struct cw_ident *id, uint8_t type, const struct cw_obj *src,
		   const struct cw_obj *dst, const struct cw_hdr *h, uint8_t source, uint8_t conf,
		   const char *reason);

/* What an edge may carry besides its ends (struct cw_edge). */
struct cw_edge_extra {
	int64_t interrupted; /* tid, or -1 */
	uint64_t addr;	     /* 0: none */
	uint8_t keeps;	     /* the dst keeps what it works for (struct cw_edge) */
};

/* Called for every edge, before it is written: what the dst learns from
 * the src (join.c hands it to analyze/carry.c and to the classes' edge
 * hooks). @dst is live, and the hook may write it; it may also fill
 * @e's carried_by. */
typedef void cw_edge_hook_fn(void *ctx, struct cw_edge *e, const struct cw_obj *src,
			     struct cw_obj *dst, const struct cw_hdr *h);
void cw_ident__set_edge_hook(struct cw_ident *id, cw_edge_hook_fn *fn, void *ctx);

/* The id of the last edge written (0: none yet). Ids are given in
 * creation order and are the database's edges.id. */
uint64_t cw_ident__last_edge(const struct cw_ident *id);

/* The last edge written: its id, type and ts, its dst's and src's node
 * ids, the src's type (0 and CW_NODE_NTYPES when the src is unknown) and
 * its confidence. A watcher of a record learns by it what the owner's
 * handler concluded. */
struct cw_edge_ref {
	uint64_t id, src, dst, ts;
	uint8_t type, src_type, conf;
};
void cw_ident__last_edge_ref(const struct cw_ident *id, struct cw_edge_ref *r);

/* cw_ident__edge with @x (NULL: none). */
int cw_ident__edge_x(struct cw_ident *id, uint8_t type, const struct cw_obj *src,
		     const struct cw_obj *dst, const struct cw_hdr *h, uint8_t source, uint8_t conf,
		     const char *reason, const struct cw_edge_extra *x);

/*
 * cw_ident__edge_x() of @dst's birth edge, but written only once @dst is
 * the src of an edge (right before that one): an object retired without
 * having caused anything is written as neither node nor edge, only
 * counted by type, name and pid (the sink's quiet rows, at
 * cw_ident__finish; meta objects_quiet), for it is no cause a query can
 * follow (docs/model.md §5.11, Timers: a timer that fired and woke no one). The edge
 * hook sees the edge now, with its id, as any edge.
 */
int cw_ident__edge_held(struct cw_ident *id, uint8_t type, const struct cw_obj *src,
			struct cw_obj *dst, const struct cw_hdr *h, uint8_t source, uint8_t conf,
			const char *reason, const struct cw_edge_extra *x);

/*
 * Confidence of a join to @o at @ts (docs/model.md §5.7): observed, unless a
 * coverage break overlaps (o->est_ns, ts], which could hide an end and a
 * rebirth of the key; then reconstructed.
 */
uint8_t cw_ident__conf(const struct cw_ident *id, const struct cw_obj *o, uint64_t ts);

/*
 * Is the join of an event at @ts to @o a guess? @o, an object whose
 * records carry no witness, was last established before a coverage break
 * in (o->est_ns, ts], which could hold its end and a new birth that
 * reused its key (docs/model.md §5.7: "at best reconstructed", and a guess is
 * not that). Then @o is released, and 1 returned: the caller names the
 * key as an orphan. 0: the join stands. Negative: an error.
 */
int cw_ident__stale(struct cw_ident *id, struct cw_obj *o, uint64_t ts);

/* Does a coverage break lie anywhere in [from, to]? */
int cw_ident__break_in(const struct cw_ident *id, uint64_t from, uint64_t to);
/* ... in (since, ts]: could what was so at @since (an identity, a frame
 * begun, a request handed over) have changed unseen by @ts? */
int cw_ident__break_since(const struct cw_ident *id, uint64_t since, uint64_t ts);
/* ... or one that concerns only the io_uring ring @ring (a CQE overflow)? */
int cw_ident__break_in_ring(const struct cw_ident *id, uint64_t ring, uint64_t from, uint64_t to);

/* The live-state bound, for a class that bounds state of its own by it. */
size_t cw_ident__max_live(const struct cw_ident *id);

/*
 * Hints: a name (and owning pid) for an object that does not exist yet.
 * set keeps at most max_live of them (more are counted and dropped); take
 * returns 1 and removes the hint, 0 when there is none; drop forgets it.
 */
int cw_ident__hint_set(struct cw_ident *id, uint8_t type, uint64_t key, uint32_t pid,
		       const char *name, size_t name_len);
int cw_ident__hint_take(struct cw_ident *id, uint8_t type, uint64_t key, uint32_t *pid,
			char name[CW_NAME_LEN]);
void cw_ident__hint_drop(struct cw_ident *id, uint8_t type, uint64_t key);

/* Copy at most @max bytes of @s (stopping at a NUL) into o->n.name; a
 * name longer than n.name holds is also kept whole in n.long_name (on
 * ENOMEM only its start is kept). */
void cw_obj__set_name(struct cw_obj *o, const char *s, size_t max);

/*
 * Between records: enforce the bound (evicting the least recently named)
 * and free scopes no object holds. Never inside a record, so no handler
 * holds a pointer to an object released under it.
 */
int cw_ident__enforce(struct cw_ident *id);

/* End of trace: write every live object, oldest first. */
int cw_ident__finish(struct cw_ident *id);

#endif /* CAUSEWAY_IDENT_H */
