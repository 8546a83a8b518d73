/* SPDX-License-Identifier: MIT */
/*
 * How the exports name nodes and handoffs (names.c, docs/model.md §8).
 */
#ifndef CAUSEWAY_EXPORT_NAMES_H
#define CAUSEWAY_EXPORT_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A node as the database has it; type NULL: no node (an unknown cause). */
struct cw_xnode {
	const char *type, *name;
	int64_t key;
};

/* An edge as one handoff of a chain. */
struct cw_xhop {
	const char *type, *reason, *confidence;
	struct cw_xnode src, dst;
	/* a packet src: the name of the thread that sent it, where its
	 * submit edge is in the database; NULL: not known */
	const char *src_from;
};

/* The word a node type is shown by: io_request "io_uring", work_item
 * "work", block_request "block", ... */
const char *cw_x__kind_word(const char *type);

/* A thread or process: a context that runs, rather than an object. */
bool cw_x__is_context(const char *type);

/* "front" (a thread: its name, else "tid N"), "io_uring READ",
 * "block FLUSH 254:0", "work flush_to_ldisc": names escaped, cut. */
void cw_x__node_text(char *buf, size_t cap, const struct cw_xnode *n);

/*
 * A handoff as a frame or a slice's name, its confidence said where it is
 * not observed: "wake from front", "futex wake from middle", "io_uring
 * READ submit", "io_uring READ -> complete", "packet from redis-benchmark",
 * "wake from unknown: hardirq", "timer hrtimer_wakeup -> fire
 * (reconstructed)".
 */
void cw_x__hop_text(char *buf, size_t cap, const struct cw_xhop *h);

/* " (reconstructed)", " (unknown)", or "" for observed: what a handoff's
 * text says of its confidence. */
const char *cw_x__conf_suffix(const char *confidence);

/*
 * What ended a wait, named by what it was rather than by which one (a
 * thread by its name, a packet by its sender), so that waits of one kind
 * read alike: "futex from back", "wake from front", "packet from
 * redis-benchmark", "block FLUSH 254:0", "timer hrtimer_wakeup",
 * "unknown (hardirq)". @h is the wake edge; its confidence is not said.
 */
void cw_x__cause_text(char *buf, size_t cap, const struct cw_xhop *h);

#endif /* CAUSEWAY_EXPORT_NAMES_H */
