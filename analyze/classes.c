// SPDX-License-Identifier: MIT
/*
 * The services a class handler calls (classes.h: cw_cls__thread, __cause,
 * __running, ...): they answer from the table join.c fills (struct
 * cw_cls_set) and reach another class only through its hooks there, so
 * this file sits below every class and below join.c, and the classes
 * never call the dispatcher.
 */
#include "classes.h"
#include "ksyms.h"

struct cw_obj *cw_cls__thread(struct cw_cls *c, const struct cw_task *t, uint64_t witness,
			      const struct cw_hdr *h, int flags, int *matched, int *err)
{
	return cw_tasks__thread(c->tasks, t, witness, h, flags, matched, err);
}

int cw_cls__cause_owned(const struct cw_cls *c, uint8_t kind)
{
	return kind < CW_CAUSE_MAX && c->set->cause_owner[kind];
}

struct cw_obj *cw_cls__named_at(struct cw_cls *c, struct cw_obj *o, const struct cw_hdr *h,
				uint8_t *conf, const char **reason)
{
	cw_ident__touch(c->id, o);
	*conf = cw_ident__conf(c->id, o, h->ts);
	*reason = *conf == CW_CONF_RECONSTRUCTED ? CW_R_ACROSS_BREAK : NULL;
	return o;
}

struct cw_obj *cw_cls__cause(struct cw_cls *c, const struct cw_cause *k, const struct cw_hdr *h,
			     int flags, uint8_t *conf, const char **reason, int *err)
{
	const struct cw_cls_set *s = c->set;
	unsigned owner = k->kind < CW_CAUSE_MAX ? s->cause_owner[k->kind] : 0;

	*err = 0;
	*reason = NULL;
	*conf = CW_CONF_UNKNOWN;
	if (!owner)
		return NULL;
	return s->aclasses[owner - 1]->cause(&s->cls[owner - 1], k, h, flags, conf, reason, err);
}

struct cw_obj *cw_cls__running_from(struct cw_cls *c, struct cw_obj *thread,
				    const struct cw_hdr *h, int min_rank)
{
	const struct cw_cls_set *s = c->set;

	for (size_t i = 0; i < s->nrunning && s->running[i].rank >= min_rank; i++) {
		uint8_t k = s->running[i].cls;
		struct cw_obj *o = s->aclasses[k]->running(&s->cls[k], thread, h, s->running[i].rank);

		if (o)
			return o;
	}
	return thread;
}

struct cw_obj *cw_cls__running_at(struct cw_cls *c, struct cw_obj *thread, const struct cw_hdr *h,
				  int rank)
{
	const struct cw_cls_set *s = c->set;

	for (size_t i = 0; i < s->nrunning; i++) {
		uint8_t k = s->running[i].cls;
		struct cw_obj *o;

		if (s->running[i].rank != rank)
			continue;
		o = s->aclasses[k]->running(&s->cls[k], thread, h, rank);
		if (o)
			return o;
	}
	return NULL;
}

struct cw_obj *cw_cls__running(struct cw_cls *c, struct cw_obj *thread, const struct cw_hdr *h)
{
	return cw_cls__running_from(c, thread, h, 0);
}

uint64_t cw_cls__running_since(struct cw_cls *c, const struct cw_obj *thread)
{
	const struct cw_cls_set *s = c->set;
	uint64_t since = 0;

	for (size_t i = 0; i < s->nrunning; i++) {
		uint8_t k = s->running[i].cls;
		uint64_t t;

		if (s->aclasses[k]->running_since &&
		    (t = s->aclasses[k]->running_since(&s->cls[k], thread)) > since)
			since = t;
	}
	return since;
}

uint32_t cw_cls__parent_pid(struct cw_cls *c, uint32_t pid)
{
	return cw_tasks__parent_pid(c->tasks, pid);
}

const struct cw_join_opts *cw_cls__opts(const struct cw_cls *c)
{
	return c->set->opts;
}

char *cw_cls__ksym(const struct cw_cls *c, uint64_t addr, char *buf, size_t len)
{
	return cw_ksyms__name(c->set->ksyms, addr, buf, len);
}
