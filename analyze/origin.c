// SPDX-License-Identifier: MIT
/* The src of a birth edge: see origin.h for the rule. */
#include "origin.h"
#include "../schema/names.h"

const char *cw_origin__ctx_reason(uint8_t ctx)
{
	/* In task context with no task: the idle task (tid 0 exists once
	 * per CPU, it names no thread) or the capture itself (0/0). */
	if (ctx == CW_CTX_TASK)
		return "idle";
	if (ctx == CW_CTX_UNKNOWN)
		return "context unknown";
	return cw_name_of(cw_ctx_names, CW_CTX_MAX, ctx) ?: "interrupt";
}

static int origin(struct cw_cls *c, const struct cw_hdr *h, const struct cw_task *t,
		  uint64_t start, const struct cw_cause *k, const char *gone, struct cw_origin *o)
{
	int err = 0, matched;

	o->src = NULL;
	o->conf = CW_CONF_UNKNOWN;
	o->reason = NULL;
	o->x = (struct cw_edge_extra){ .interrupted = -1 };
	o->pid = o->tid = -1;
	if (h->ctx != CW_CTX_TASK)
		o->x.interrupted = t->tid; /* context, never the cause */
	else if (t->tid) {
		o->pid = t->pid;
		o->tid = t->tid;
	}
	if (k && k->kind != CW_CAUSE_NONE) {
		o->src = cw_cls__cause(c, k, h, gone ? CW_CAUSE_PAST : 0, &o->conf, &o->reason,
				       &err);
		if (err)
			return err;
		/* Over by now, or known only since after @h (the generation
		 * the cause was then may have ended and its key been
		 * reborn): not named, and not the thread either, which only
		 * ran it. */
		if (gone && cw_cls__cause_owned(c, k->kind) && (!o->src || o->src->est_ns > h->ts)) {
			o->src = NULL;
			o->conf = CW_CONF_UNKNOWN;
			o->reason = gone;
			return 0;
		}
		if (o->src) {
			if (!o->reason)
				o->reason = cw_name_of(cw_cause_names, CW_CAUSE_MAX, k->kind);
			return 0;
		}
		/* A kind no class names (a futex): as if there were none. */
	}
	if (h->ctx == CW_CTX_TASK && t->tid) {
		o->src = cw_cls__thread(c, t, start, h, CW_T_CREATE | (gone ? CW_T_PAST : 0),
					&matched, &err);
		if (!o->src && !err && gone) {
			o->conf = CW_CONF_UNKNOWN;
			o->reason = gone;
			return 0;
		}
		if (!o->src)
			return err;
		o->conf = matched ? CW_CONF_OBSERVED : cw_ident__conf(c->id, o->src, h->ts);
		o->reason = o->conf == CW_CONF_RECONSTRUCTED ? CW_R_ACROSS_BREAK : NULL;
		return 0;
	}
	o->conf = CW_CONF_UNKNOWN;
	o->reason = cw_origin__ctx_reason(h->ctx);
	return 0;
}

int cw_origin__of(struct cw_cls *c, const struct cw_hdr *h, const struct cw_task *t,
		  uint64_t start, const struct cw_cause *k, struct cw_origin *o)
{
	return origin(c, h, t, start, k, NULL, o);
}

int cw_origin__past(struct cw_cls *c, const struct cw_hdr *h, const struct cw_task *t,
		    uint64_t start, const struct cw_cause *k, const char *gone, struct cw_origin *o)
{
	return origin(c, h, t, start, k, gone, o);
}
