/* SPDX-License-Identifier: MIT */
/*
 * Analyzer classes: one file per class of records (cls_*.c), each a
 * table of {record type, minimum size, handler} plus optional state and a
 * metadata hook. join.c dispatches records to them; a class speaks only
 * to the identity layer (ident.h) and, through it, to the sink.
 *
 * To add a class: write analyze/cls_NAME.c with its handlers and a
 * `const struct cw_aclass cw_aclass_NAME`, declare it below, and list it
 * in join.c's table. See the README (Adding an edge class).
 */
#ifndef CAUSEWAY_CLASSES_H
#define CAUSEWAY_CLASSES_H

#include "ident.h"

/* What a handler sees: the identity layer, the counters, its state. */
struct cw_cls {
	struct cw_ident *id;
	struct cw_join_stats *st;
	void *state;
};

struct cw_handler {
	uint16_t type;	   /* CW_REC_*; 0 ends a table */
	uint16_t min_size; /* a shorter record is counted as malformed, never read */
	int (*fn)(struct cw_cls *c, const struct cw_hdr *h);
};

struct cw_aclass {
	const char *name;
	/* Class state, or NULL with *err; both hooks may be NULL. */
	void *(*init)(struct cw_ident *id, int *err);
	void (*fini)(void *state);
	/* A metadata key/value from the capture (NUL-terminated copies). */
	int (*meta)(struct cw_cls *c, const char *key, const char *value);
	const struct cw_handler *handlers;
};

extern const struct cw_aclass cw_aclass_meta;
extern const struct cw_aclass cw_aclass_sched;

#endif /* CAUSEWAY_CLASSES_H */
