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

struct cw_join;

/* What a handler sees: the identity layer, the counters, its state, and
 * (through the cw_cls__ functions below) the other classes. */
struct cw_cls {
	struct cw_ident *id;
	struct cw_join_stats *st;
	void *state;
	struct cw_join *j;
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
	/*
	 * The cause kinds (bit per CW_CAUSE_*) whose objects this class
	 * owns, and how to name one: the node of the object @k names at @h,
	 * its live generation, or an orphan (start_seen = 0, with its orphan
	 * edge) when none is live, never a dead or a likely one. *conf: the
	 * confidence of joining it; *reason: NULL, or why it is not observed.
	 * NULL without *err: the class cannot name it (then the caller treats
	 * the event as having no cause).
	 */
	uint32_t cause_kinds;
	struct cw_obj *(*cause)(struct cw_cls *c, const struct cw_cause *k, const struct cw_hdr *h,
				uint8_t *conf, const char **reason, int *err);
};

/* thread flags of cw_cls__thread */
#define CW_T_CREATE 0x1 /* make an orphan when there is no live generation */
#define CW_T_PROOF 0x2	/* the record is only written for traced tasks */

/*
 * The thread generation the task @t (with @witness, 0: none) names at @h,
 * by the sched class's rules (pid, witness, exit grace: cls_sched.c), or
 * with CW_T_CREATE an orphan thread when none is live. *matched: the
 * witness proved the join (observed across breaks). NULL without *err
 * when there is none and none may be made.
 */
struct cw_obj *cw_cls__thread(struct cw_cls *c, const struct cw_task *t, uint64_t witness,
			      const struct cw_hdr *h, int flags, int *matched, int *err);

/* The object a cause names (the owning class's cause hook), or NULL: see
 * struct cw_aclass. Kind CW_CAUSE_NONE, or a kind no class owns, is NULL
 * without *err. */
struct cw_obj *cw_cls__cause(struct cw_cls *c, const struct cw_cause *k, const struct cw_hdr *h,
			     uint8_t *conf, const char **reason, int *err);

/* A kernel function's name from the trace's kallsyms snapshot: "name",
 * "name+0xOFF", or "0xADDR" when the snapshot has none. @return @buf. */
char *cw_cls__ksym(const struct cw_cls *c, uint64_t addr, char *buf, size_t len);

extern const struct cw_aclass cw_aclass_meta;
extern const struct cw_aclass cw_aclass_sched;
extern const struct cw_aclass cw_aclass_io_uring;
extern const struct cw_aclass cw_aclass_workqueue;
extern const struct cw_aclass cw_aclass_timer;
extern const struct cw_aclass cw_aclass_net;
extern const struct cw_aclass cw_aclass_futex;

/* The sched class's thread lookup, which cw_cls__thread calls with the
 * sched class's own state. */
struct cw_obj *cw_sched__thread(struct cw_cls *sched, const struct cw_task *t, uint64_t witness,
				const struct cw_hdr *h, int flags, int *matched, int *err);

#endif /* CAUSEWAY_CLASSES_H */
