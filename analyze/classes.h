/* SPDX-License-Identifier: MIT */
/*
 * Analyzer classes: one file per class of records (cls_*.c), each a
 * table of {record type, handler} plus optional state and a
 * metadata hook. join.c dispatches records to them; a class speaks only
 * to the identity layer (ident.h) and, through it, to the sink.
 *
 * To add a class: write analyze/cls_NAME.c with its handlers and a
 * `const struct cw_aclass cw_aclass_NAME`, and name NAME in the class's
 * row of schema/classes.def, which declares it below and places it in
 * join.c's order; nothing here or in join.c lists classes by hand. See
 * docs/hacking.md (Adding an edge class).
 */
#ifndef CAUSEWAY_CLASSES_H
#define CAUSEWAY_CLASSES_H

#include "ident.h"
#include "task.h"

struct cw_cls_set;

/* What a handler sees: the identity layer, the counters, its state, and
 * (through the cw_cls__ functions below) the other classes. */
struct cw_cls {
	struct cw_ident *id;
	struct cw_join_stats *st;
	void *state;
	struct cw_tasks *tasks; /* thread and process identity (task.h) */
	const struct cw_cls_set *set;
};

/* A record shorter than its type's minimum (schema/records.def, its
 * struct or the layout before the fields a minor version appended) is
 * counted as malformed and reaches no handler: a handler reads the
 * fields of the older layout freely, the appended ones through
 * CW_REC_HAS. */
struct cw_handler {
	uint16_t type; /* CW_REC_*; 0 ends a table */
	int (*fn)(struct cw_cls *c, const struct cw_hdr *h);
};

struct cw_aclass {
	const char *name;
	/* Class state, or NULL with *err; both hooks may be NULL. */
	void *(*init)(struct cw_ident *id, int *err);
	/* Without init: a state of this many zeroed bytes, freed after fini
	 * (which then frees only what it holds). */
	size_t state_size;
	void (*fini)(void *state);
	/* End of trace, before the identity layer writes what is live. */
	int (*finish)(struct cw_cls *c);
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
	 * the event as having no cause). With CW_CAUSE_PAST, @h is an earlier
	 * event a later record tells of (cw_origin__past): the live
	 * generation only if it may have been the one then, else NULL, and
	 * never an orphan, a release or an end.
	 */
	uint32_t cause_kinds;
	struct cw_obj *(*cause)(struct cw_cls *c, const struct cw_cause *k, const struct cw_hdr *h,
				int flags, uint8_t *conf, const char **reason, int *err);
	/*
	 * Record types another class owns that this one also wants to see
	 * ({type, handler}, 0 ends it). A watcher runs after
	 * the owner's handler, so it sees the identity layer as the owner
	 * left it (the thread a fork made, the generation an exit ended),
	 * and only for records the owner accepted.
	 */
	const struct cw_handler *watches;
	/*
	 * What runs on a thread (docs/model.md §4, samples.node): the most
	 * specific node of rank @rank this class knows to be running on
	 * @thread at @h, or NULL. A class may run nodes of several ranks
	 * (the adapter: a runtime task being polled inside a request), so
	 * running_ranks has a bit per CW_RUN_* it answers for, and its hook
	 * is asked once per rank. cw_cls__running asks from the highest
	 * rank down and takes the first answer.
	 */
	uint32_t running_ranks; /* bit per CW_RUN_* */
	struct cw_obj *(*running)(struct cw_cls *c, const struct cw_obj *thread,
				  const struct cw_hdr *h, int rank);
	/* When what the running hook answers for @thread last changed (a
	 * frame begun or ended), 0: never; may be NULL. A record that tells
	 * of an earlier time cannot read what ran then from it. */
	uint64_t (*running_since)(struct cw_cls *c, const struct cw_obj *thread);
	/*
	 * Every edge any class writes, before it is written (the identity
	 * layer's edge hook; cw_ident__last_edge is its id): what a class
	 * learns of its own objects from another's edges (the sample class:
	 * the wake that ends a thread's wait). @dst is live and the hook may
	 * write its state; it writes no edge.
	 */
	void (*edge)(struct cw_cls *c, uint8_t type, const struct cw_obj *src, struct cw_obj *dst,
		     const struct cw_hdr *h);
	/* The class's counters (analyze/counters.h), as offsets into its
	 * state, ended by a NULL key, or NULL: read after the join (the
	 * meta table, the summary: cw_join__stats). */
	const struct cw_counter *counters;
};

/* Ranks of what runs on a thread: more specific is higher. The thread
 * itself is the answer when no class has one. */
enum {
	CW_RUN_WORK_ITEM = 1, /* a work item a kworker executes (cls_workqueue.c) */
	/* The adapter plane (cls_adapter.c): a request a thread works on
	 * between its begin and end, and above it a runtime task being
	 * polled, which runs inside whatever the thread runs. */
	CW_RUN_REQUEST = 2,
	CW_RUN_RUNTIME_TASK = 3,
	CW_RUN_MAX = 4,
};

/* The most analyzer classes join.c may list. */
#define CW_ACLASS_MAX 16

/*
 * What the cw_cls__ services below (classes.c) read: the classes, their
 * handler views, which class owns each cause kind and which answer each
 * running rank. join.c fills it; classes.c reaches the classes only
 * through their hooks in it, so it calls no class and no class's file
 * calls join.c.
 */
struct cw_cls_set {
	const struct cw_aclass *const *aclasses;
	struct cw_cls *cls;
	uint8_t cause_owner[CW_CAUSE_MAX]; /* class index + 1; 0: none */
	/* (class, rank) of the running hooks, most specific (highest rank)
	 * first */
	struct {
		uint8_t cls, rank;
	} running[CW_ACLASS_MAX * CW_RUN_MAX];
	uint8_t nrunning;
	const struct cw_join_opts *opts;
	const struct cw_ksyms *ksyms;
};

/*
 * The thread generation the task @t (with @witness, 0: none) names at @h,
 * by the rules of task.c (pid, witness, exit grace), or
 * with CW_T_CREATE an orphan thread when none is live. *matched: the
 * witness proved the join (observed across breaks). NULL without *err
 * when there is none and none may be made.
 */
struct cw_obj *cw_cls__thread(struct cw_cls *c, const struct cw_task *t, uint64_t witness,
			      const struct cw_hdr *h, int flags, int *matched, int *err);

/* cause hook flags */
#define CW_CAUSE_PAST 0x1 /* @h tells of an earlier event: see struct cw_aclass */

/* The object a cause names (the owning class's cause hook), or NULL: see
 * struct cw_aclass. Kind CW_CAUSE_NONE, or a kind no class owns, is NULL
 * without *err. */
struct cw_obj *cw_cls__cause(struct cw_cls *c, const struct cw_cause *k, const struct cw_hdr *h,
			     int flags, uint8_t *conf, const char **reason, int *err);
/* Does a class own cause kind @kind? */
int cw_cls__cause_owned(const struct cw_cls *c, uint8_t kind);

/* The reason of a join a coverage break makes reconstructed. */
#define CW_R_ACROSS_BREAK "join across coverage break"

/* A cause hook's answer @o (not NULL), named at @h: touched, with the
 * confidence its identity has then (*conf) and, when a coverage break
 * makes that reconstructed, the reason. @return @o. */
struct cw_obj *cw_cls__named_at(struct cw_cls *c, struct cw_obj *o, const struct cw_hdr *h,
				uint8_t *conf, const char **reason);

/* The most specific node running on @thread at @h (a class's running
 * hook), or @thread itself when no class knows better. */
struct cw_obj *cw_cls__running(struct cw_cls *c, struct cw_obj *thread, const struct cw_hdr *h);
/* When what runs on @thread last changed, as its classes' running_since
 * hooks say (0: never). */
uint64_t cw_cls__running_since(struct cw_cls *c, const struct cw_obj *thread);
/* The same, asking only ranks of at least @min_rank: what the sched class
 * names as a thread's cause (a task being polled, not a request). */
struct cw_obj *cw_cls__running_from(struct cw_cls *c, struct cw_obj *thread,
				    const struct cw_hdr *h, int min_rank);

/* The node of exactly rank @rank running on @thread at @h (a request
 * under the task being polled, say), or NULL. */
struct cw_obj *cw_cls__running_at(struct cw_cls *c, struct cw_obj *thread, const struct cw_hdr *h,
				  int rank);

/* The pid of the process that forked process @pid, as a fork in the trace
 * said (task.c); 0 when that is not known. */
uint32_t cw_cls__parent_pid(struct cw_cls *c, uint32_t pid);

/* The options the join was made with (the sample class's symbolizer
 * settings, the kallsyms snapshot). */
const struct cw_join_opts *cw_cls__opts(const struct cw_cls *c);

/* A kernel function's name from the trace's kallsyms snapshot: "name",
 * "name+0xOFF", or "0xADDR" when the snapshot has none. @return @buf. */
char *cw_cls__ksym(const struct cw_cls *c, uint64_t addr, char *buf, size_t len);

/* Each class's, in analyze/cls_<aclass>.c, named by its schema/classes.def
 * row: the row is what makes join.c dispatch to it. */
#define CW_CLASS(id, n, name, ename, kind, aclass, join) \
	extern const struct cw_aclass cw_aclass_##aclass;
#include "../schema/classes.def"

#endif /* CAUSEWAY_CLASSES_H */
