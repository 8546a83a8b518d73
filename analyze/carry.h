/* SPDX-License-Identifier: MIT */
/*
 * Causal attribution over kernel handoffs (docs/model.md §6.1, reconstructed).
 *
 * An adapter interval names the request a thread works for (observed).
 * Where none does, the request is carried along the edges: a thread woken
 * by a context that belonged to request R, a completion of an io_request
 * submitted in R, a work item queued in R, a timer armed in R, a task
 * spawned in R all belong to R, and what they in turn wake, complete or
 * execute does too. Each handoff replaces what its dst carried, so a
 * thread belongs to the request of the last handoff into it; a handoff
 * whose cause is unknown leaves it unknown, never the request before.
 *
 * A carried request is believed only while its generation is live (work
 * after the request ended is not the request's), and only when no
 * coverage break lies since the handoff (one could hold another handoff
 * into the same context).
 */
#ifndef CAUSEWAY_CARRY_H
#define CAUSEWAY_CARRY_H

#include <stddef.h>
#include "classes.h"

/*
 * The request an object works for, carried over kernel handoffs: set on
 * an edge's dst from what its src's context belonged to. The request is
 * named by its node id, and by its key and process so that it can be
 * looked up again: a carried request is believed only while that
 * generation is still live. Every object has one, in its carry bytes
 * (ident.h).
 */
#define CW_CARRY_PATH 5
enum { CW_CARRY_NONE, CW_CARRY_SET, CW_CARRY_UNKNOWN };
struct cw_carry {
	uint64_t req;	  /* request node id (CW_CARRY_SET) */
	uint64_t edge;	  /* the last handoff of the chain, by edge id; 0: none (the
			   * object is in the request itself) */
	uint64_t since;	  /* when the object took it (the handoff's ts) */
	uint64_t req_key; /* its key, in scope 'pid:req_pid' */
	uint32_t req_pid;
	uint8_t state;	  /* CW_CARRY_* */
	uint8_t from_task; /* the chain starts at a task spawned in the request */
	uint8_t broken;	  /* CW_CARRY_UNKNOWN: a coverage break since the handoff */
	uint8_t npath;	  /* handoffs in the chain; the last CW_CARRY_PATH are in path
			   * (CW_CARRY_UNKNOWN: handoffs since the unknown cause) */
	uint8_t path[CW_CARRY_PATH]; /* edge types, oldest first */
};

/* What @o carries. */
CW_OBJ_STATE_OF(cw_carry__get, struct cw_carry, carry)

/* The edge hook (cw_ident__set_edge_hook); @ctx is any struct cw_cls of
 * the join. An edge that hands a request on names, in carried_by, the
 * edge that had handed it to its src: the chain of a reconstructed
 * attribution, edge by edge, which the exports walk (docs/model.md §6.1). */
void cw_carry__edge(void *ctx, struct cw_edge *e, const struct cw_obj *src, struct cw_obj *dst,
		    const struct cw_hdr *h);

/*
 * What the context of @o belongs to at @h: for a thread, the request and
 * task its adapter intervals name (observed), else what it carries; for a
 * task, itself and the request it was spawned in; for a request, itself;
 * for any other object, what it carries. *observed_req says whether the
 * request was named by an interval on that thread.
 */
void cw_carry__of(struct cw_cls *c, struct cw_obj *o, const struct cw_hdr *h,
		  struct cw_carry *out, struct cw_obj **task, int *observed_req);

/* @k is in the request @req itself (no handoff): what a context working
 * on a request hands on. Unset when @req has no process to find it by. */
void cw_carry__origin(struct cw_carry *k, const struct cw_obj *req);

/* @o's further handoffs are of an unknown request: a multishot io_request
 * after its first completion, whose next completions come from data sent
 * by whoever sent it, not from the context that armed it long before. */
void cw_carry__unknown(struct cw_obj *o);

/* Is the request @k names still live (the same generation)? */
int cw_carry__live(struct cw_cls *c, const struct cw_carry *k);

/* The chain @k names, as text ("request > wake > submit > complete >
 * wake"), in @buf of @len bytes. */
void cw_carry__chain(const struct cw_carry *k, char *buf, size_t len);

/* A reconstructed attribution from @k: the chain's text and its last
 * edge, into @row. */
void cw_carry__to_row(const struct cw_carry *k, struct cw_sample_row *row);

#endif /* CAUSEWAY_CARRY_H */
