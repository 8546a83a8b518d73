// SPDX-License-Identifier: MIT
/*
 * The futex class. A futex word is not an object of the graph: a futex
 * handoff is a wake from the waking thread to the woken one. The capture
 * marks the wakes raised inside a futex call with cause futex (the
 * word's address), and the sched class gives them src = the waker
 * thread, reason 'futex' and edges.addr = the word (cls_sched.c,
 * wake_cause). The futex records themselves (one per call, at its
 * return) are informational: they only confirm that the calling thread
 * is still the task its live generation says it is, like a switch does,
 * and never make a node.
 */
#include "classes.h"

static int on_futex(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_futex *r = (const void *)h;
	int err = 0, matched;

	if (r->task.tid)
		cw_cls__thread(c, &r->task, r->task_start, h, 0, &matched, &err);
	return err;
}

static const struct cw_handler handlers[] = {
	{ CW_REC_FUTEX, on_futex },
	{ 0 },
};

const struct cw_aclass cw_aclass_futex = {
	.name = "futex",
	.handlers = handlers,
};
