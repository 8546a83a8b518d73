/* SPDX-License-Identifier: MIT */
/*
 * Thread and process identity (docs/model.md §5.2, 5.3, 5.7), and the
 * traced set: the bottom layer every class names tasks through. It calls
 * the identity layer (ident.h) and no class; the sched class's births,
 * exits and renames are in cls_sched.c, and task.c says what an event
 * that names a task joins.
 */
#ifndef CAUSEWAY_TASK_H
#define CAUSEWAY_TASK_H

#include <stdint.h>
#include "ident.h"

struct cw_tasks;

/* thread flags of cw_tasks__thread (and cw_cls__thread) */
#define CW_T_CREATE 0x1 /* make an orphan when there is no live generation */
#define CW_T_PROOF 0x2	/* the record is only written for traced tasks */
/* the record tells of an earlier event (a timer's start carried by its
 * expiry): a live generation of another task is not ended by it, and
 * none is returned */
#define CW_T_PAST 0x4

/* A name hint (cw_ident__hint_set) of a node type or'ed with this was
 * taken during the capture (CW_META_TASK_LATE), not from the snapshot at
 * its start: it names the task, and says nothing of when it was born. */
#define CW_HINT_LATE 0x80

/* NULL on ENOMEM. @st: where identity_mismatch is counted. */
struct cw_tasks *cw_tasks__new(struct cw_ident *id, struct cw_join_stats *st);
void cw_tasks__free(struct cw_tasks *ts);

/* A metadata key/value: "options" (mode=) and "traced_pids" set the
 * traced set; other keys are ignored. 0 or -ENOMEM. */
int cw_tasks__meta(struct cw_tasks *ts, const char *key, const char *val);

/* Does @pid belong to the traced set, as far as the metadata says?
 * 1, 0, or -1 when it is not known. */
int8_t cw_tasks__traced_pid(const struct cw_tasks *ts, uint32_t pid);

/*
 * The thread generation the task @t (with @witness, 0: none) names at @h
 * (pid, witness, exit grace: task.c), or with CW_T_CREATE an orphan
 * thread when none is live. CW_T_PROOF marks it (and its process)
 * traced. *matched: the witness proved the join (observed across
 * breaks). NULL without *err when there is none and none may be made.
 */
struct cw_obj *cw_tasks__thread(struct cw_tasks *ts, const struct cw_task *t, uint64_t witness,
				const struct cw_hdr *h, int flags, int *matched, int *err);

/* The live process of @pid, or an orphan process node; @proof marks it
 * traced. NULL with *err on ENOMEM or a sink error. */
struct cw_obj *cw_tasks__process(struct cw_tasks *ts, uint32_t pid, const struct cw_hdr *h,
				 int proof, int *err);

/* The pid of the process that forked process @pid, as a fork in the
 * trace said (cw_tasks__set_parent_pid); 0 when that is not known. */
uint32_t cw_tasks__parent_pid(const struct cw_tasks *ts, uint32_t pid);
/* A fork in the trace made @process (a live process node) from @ppid. */
void cw_tasks__set_parent_pid(struct cw_obj *process, uint32_t ppid);

#endif /* CAUSEWAY_TASK_H */
