/* SPDX-License-Identifier: MIT */
/*
 * The resource waits (resource_waits, docs/model.md §6) as the exports
 * show them (waits.c): what a wait was for and what let it go, looked up
 * and spelled one way for every format, so that a frame of the off-CPU
 * profile, a blocked slice of the timeline and an edge of the DAG say the
 * same thing of one wait.
 */
#ifndef CAUSEWAY_EXPORT_WAITS_H
#define CAUSEWAY_EXPORT_WAITS_H

#include "export.h"

/* The statements a lookup runs: cw_xwaits__open(), cw_xwaits__free(). */
struct cw_xwaits;

/* One row of resource_waits and what it names. The strings are escaped
 * (lib/esc.h) and cut to their buffers; "" where there is none. */
struct cw_xwait {
	int64_t id;	    /* resource_waits.id */
	int64_t wake_edge;  /* the wake that ended it; 0: none seen */
	int64_t blocked_ns; /* its begin to its wake, else to its end; -1: neither seen */
	bool waker_known;
	bool waker_object;		/* the waker is an object (a timer, a packet...) */
	char resource[256];		/* the resource's name: "lock 735/0/0/0/4" */
	char kind[128];			/* "lock", "lwlock", "buffer", a program's kind */
	char waiting_request[1024];	/* the waiter's name, where it is a request */
	char waking_request[1024];	/* the waker's name, where it is a request */
	char waker[160];		/* the waker as a name says it: a request's name cut
					 * to 60 bytes, anything else by kind and name */
	char confidence[16];
	char reason[128];		/* resource_waits.reason */
};

/* NULL after a message. */
struct cw_xwaits *cw_xwaits__open(struct cw_x *x);
void cw_xwaits__free(struct cw_xwaits *w);

/*
 * The wait a sample of @thread at @ts lies in, one of @thread's or of the
 * request or runtime task the sample is attributed to (0: none): the
 * latest begun, as the view sample_mechanism finds it (its mechanism is
 * then resource_wait). @return 1 with *@out, 0 when there is none, -1
 * after a message.
 */
int cw_xwaits__at(struct cw_xwaits *w, int64_t thread, int64_t request, int64_t task, int64_t ts,
		  struct cw_xwait *out);

/* The wait that the edge @edge ended (resource_waits.wake_edge: one at
 * most, docs/model.md §6; the latest begun in a database that holds
 * two). @return as cw_xwaits__at(). */
int cw_xwaits__ended_by(struct cw_xwaits *w, int64_t edge, struct cw_xwait *out);

/*
 * How a sleep in the wait @w is named, @wake the wake that ended the
 * sleep (0: none seen) and @cause how that wake is named otherwise
 * (names.h: "futex from back"):
 *  - the sleep the wait's own wake ended: "lock 735/0/0/0/4 released by
 *    END;" (a request by its name, a thread or task by its name), "lock
 *    735/0/0/0/5 ended by timer hrtimer_wakeup" (an object ends a wait, it
 *    releases nothing), "lwlock BufferMapping (waker unknown)" (the
 *    wait's reason, when its waker is not known);
 *  - a sleep some other wake ended (the wait went on after it, or the
 *    wait's waker let it in without waking it): "CAUSE, in lock
 *    735/0/0/0/4", never the wait's waker, which did not end that sleep;
 *    likewise a sleep whose wake was not seen ("unknown (the wake was not
 *    seen), in ..."), unless the wait's waker is not known either: then
 *    the wait's reason, as above.
 * @wake -1: name the wait itself, as the edge that ended it does.
 */
void cw_xwait__text(char *buf, size_t cap, const struct cw_xwait *w, int64_t wake,
		    const char *cause);

#endif /* CAUSEWAY_EXPORT_WAITS_H */
