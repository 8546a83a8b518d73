// SPDX-License-Identifier: MIT
/*
 * The meta class in the join: the capture's accounting. Where events were
 * lost is known before the join (breaks_scan.c); here the losses are only
 * added up for the summary.
 */
#include "classes.h"

static int on_account(struct cw_cls *c, const struct cw_hdr *h)
{
	c->st->events_lost += ((const struct cw_account *)h)->lost;
	return 0;
}

/* The kallsyms snapshot and the gap records were read in pass 1
 * (breaks_scan.c). */
static int on_pass1(struct cw_cls *c, const struct cw_hdr *h)
{
	(void)c;
	(void)h;
	return 0;
}

static const struct cw_handler handlers[] = {
	{ CW_REC_ACCOUNT, on_account },
	{ CW_REC_GAP, on_pass1 },
	{ CW_REC_META_KSYMS, on_pass1 },
	{ 0 },
};

const struct cw_aclass cw_aclass_meta = {
	.name = "meta",
	.handlers = handlers,
};
