// SPDX-License-Identifier: MIT
/*
 * Causal attribution over kernel handoffs: see carry.h.
 */
#include <stdio.h>
#include <string.h>
#include "carry.h"

/* The handoffs that carry work from a cause to its effect (docs/model.md §4's
 * directions): schema/edges.def says which, and why the others do not. */
static int carries(uint8_t type)
{
	return type < CW_EDGE_NTYPES && cw_edge_type_carries[type];
}

void cw_carry__origin(struct cw_carry *k, const struct cw_obj *req)
{
	memset(k, 0, sizeof(*k));
	/* A request's scope is its process ('pid:N', docs/model.md §6), and
	 * its node's pid is that N (cls_adapter.c gives a request both from
	 * the hit's task): how it is found again, by the number, never by
	 * reading the scope's name back. No process: it cannot be found, no
	 * carry. */
	if (req->n.pid < 0 || req->n.pid > UINT32_MAX)
		return;
	k->req_pid = (uint32_t)req->n.pid;
	k->state = CW_CARRY_SET;
	k->req = req->n.id;
	k->req_key = req->n.key;
}

void cw_carry__of(struct cw_cls *c, struct cw_obj *o, const struct cw_hdr *h,
		  struct cw_carry *out, struct cw_obj **task, int *observed_req)
{
	struct cw_obj *req = NULL, *t = NULL;

	*observed_req = 0;
	if (task)
		*task = NULL;
	/* An edge told later than it happened (a timer's arm, written with
	 * its fire): what runs on the thread now, or what it carries, was
	 * not so then if it changed since. Unknown, not the later one. */
	if (o->n.type == CW_NODE_THREAD && h->ts < cw_cls__running_since(c, o))
		goto unknown;
	switch (o->n.type) {
	case CW_NODE_THREAD:
		req = cw_cls__running_at(c, o, h, CW_RUN_REQUEST);
		t = cw_cls__running_at(c, o, h, CW_RUN_RUNTIME_TASK);
		break;
	case CW_NODE_REQUEST:
		req = o;
		break;
	case CW_NODE_RUNTIME_TASK:
		t = o;
		break;
	}
	if (task)
		*task = t;
	if (req) {
		*observed_req = o->n.type == CW_NODE_THREAD;
		cw_carry__origin(out, req);
		return;
	}
	/* a polled task: the request it was spawned in */
	*out = *cw_carry__get(t && t != o ? t : o);
	if (out->state == CW_CARRY_SET && out->since > h->ts)
		goto unknown;
	/* A coverage break since the handoff could hold another handoff
	 * into the same context, of another request: not a guess, unknown. */
	if (out->state == CW_CARRY_SET && cw_ident__break_since(c->id, out->since, h->ts)) {
		memset(out, 0, sizeof(*out));
		out->state = CW_CARRY_UNKNOWN;
		out->broken = 1;
	}
	return;
unknown:
	memset(out, 0, sizeof(*out));
	out->state = CW_CARRY_UNKNOWN;
}

void cw_carry__edge(void *ctx, struct cw_edge *e, const struct cw_obj *src, struct cw_obj *dst,
		    const struct cw_hdr *h)
{
	struct cw_cls *c = ctx;
	uint8_t type = e->type;
	struct cw_carry k;
	struct cw_obj *t;
	int observed;

	if (!carries(type) || e->keeps)
		return;
	/* schema/nodes.def says which handoffs tell a node whom it works for */
	switch (cw_node_type_takes[dst->n.type]) {
	case CW_TAKES_ALL:
		break;
	case CW_TAKES_SPAWN:
		if (type != CW_EDGE_SPAWN && !dst->takes_all)
			return;
		break;
	default:
		return;
	}
	if (!src) {
		/* An unknown cause: the request before it is not the
		 * request now. */
		cw_carry__unknown(dst);
		return;
	}
	cw_carry__of(c, (struct cw_obj *)src, h, &k, &t, &observed);
	if (k.state == CW_CARRY_UNKNOWN && k.npath < UINT8_MAX) {
		k.npath++; /* handed on from a context whose request is unknown */
	} else if (k.state == CW_CARRY_SET) {
		/* A goroutine is a thread of its runtime (takes_all): its
		 * request is the one it serves or was handed, not one it
		 * was spawned in. */
		if ((src->n.type == CW_NODE_RUNTIME_TASK && !src->takes_all) ||
		    (t && !observed && !t->takes_all))
			k.from_task = 1;
		if (k.npath >= CW_CARRY_PATH)
			memmove(k.path, k.path + 1, CW_CARRY_PATH - 1);
		k.path[k.npath < CW_CARRY_PATH ? k.npath : CW_CARRY_PATH - 1] = type;
		if (k.npath < UINT8_MAX)
			k.npath++;
		k.since = h->ts;
		e->carried_by = k.edge;
		k.edge = e->id;
	}
	*cw_carry__get(dst) = k;
}

void cw_carry__to_row(const struct cw_carry *k, struct cw_sample_row *row)
{
	cw_carry__chain(k, row->attr_chain, sizeof(row->attr_chain));
	row->carry_edge = k->edge;
}

void cw_carry__unknown(struct cw_obj *o)
{
	struct cw_carry *k = cw_carry__get(o);

	memset(k, 0, sizeof(*k));
	k->state = CW_CARRY_UNKNOWN;
}

int cw_carry__live(struct cw_cls *c, const struct cw_carry *k)
{
	char name[32];
	const struct cw_scope *s;
	struct cw_obj *o;

	if (k->state != CW_CARRY_SET)
		return 0;
	snprintf(name, sizeof(name), "pid:%u", k->req_pid);
	if (!(s = cw_ident__scope_find(c->id, name)))
		return 0;
	o = cw_ident__live(c->id, CW_NODE_REQUEST, s, k->req_key);
	return o && o->n.id == k->req && !o->ended;
}

void cw_carry__chain(const struct cw_carry *k, char *buf, size_t len)
{
	size_t kept = k->npath < CW_CARRY_PATH ? k->npath : CW_CARRY_PATH;
	int n = snprintf(buf, len, "%s%s", k->from_task ? "task in request" : "request",
			 k->npath > kept ? " > ..." : "");

	for (size_t i = 0; i < kept && n > 0 && (size_t)n < len; i++)
		n += snprintf(buf + n, len - (size_t)n, " > %s", cw_edge_type_names[k->path[i]]);
}
