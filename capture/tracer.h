/* SPDX-License-Identifier: MIT */
/*
 * The BPF side of a capture: one object per recorded class (classes.c),
 * sharing the edge and sample rings, the counters, the traced set and
 * the preempt count addresses; the per-CPU perf events the CPU sample
 * program runs on; the way interrupt context is told apart; attaching and
 * detaching; the traced set. Knows nothing of the trace file.
 */
#ifndef CAUSEWAY_CAPTURE_TRACER_H
#define CAUSEWAY_CAPTURE_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture/classes.h"

struct bpf_object;
struct env;

/* What the tracer needs to know besides the command line (struct env):
 * facts main learns at start. */
struct tracer_opts {
	pid_t self;	     /* never recorded */
	bool filter;	     /* record only the traced set (-p or COMMAND) */
	uint32_t traced_max; /* traced set capacity */
	unsigned features;   /* CW_FEAT_*: the programs of those to load */
	bool sampling;	     /* the sample class is recorded */
};

struct tracer;

/*
 * Choose the context method (--ctx-method), open and load the objects of
 * the classes @sel marks OK, sized and set as @env says (the rings, the
 * sample plane). @env must outlive the tracer. @return a tracer, or NULL
 * after a message with errno set (then the capture cannot start).
 */
struct tracer *tracer__load(const struct env *env, const struct tracer_opts *opts,
			    const struct cw_class_sel *sel);

/* The context method in use (CW_CTXM_*), and in words why, for the
 * notice at start. */
int tracer__ctx_method(const struct tracer *t, const char **why);

/* Put process @tgid in the traced set. @return 0 or a negative errno. */
int tracer__trace(struct tracer *t, pid_t tgid);

/*
 * Forget traced processes that no longer exist (a final switch the
 * programs did not see), then @return how many are left, or a negative
 * errno.
 */
long tracer__traced_count(struct tracer *t);

/*
 * Attach every loaded program. An optional program that does not attach
 * is left out with a notice (see tracer__records_missing). @return 0, or
 * a negative errno after a message.
 */
int tracer__attach(struct tracer *t);

/*
 * The record types the loaded classes would write but this kernel does
 * not give, because an optional program could not be loaded or attached:
 * "name:kernel" (the kernel lacks its hook) or "name:denied" (the kernel
 * refused it), comma-separated; "" when none. Complete after
 * tracer__attach(); the metadata key records_missing.
 */
const char *tracer__records_missing(const struct tracer *t);

/* What class @class goes without, "uring_free, uring_work" (NULL: all
 * its programs run), and in *@why the reason of the first. */
const char *tracer__missing(const struct tracer *t, unsigned class, const char **why);
/* Stop every program; events already in the ring stay there. Those on
 * perf events (tracefs tracepoints, the tick) stop later, in a process
 * of their own, without the capture waiting for them (tracer.c,
 * detach_slow()): what they write after the last drain is after the
 * capture's end. */
void tracer__detach(struct tracer *t);

int tracer__ring_fd(const struct tracer *t);
int tracer__sample_ring_fd(const struct tracer *t);

/* Is process @tgid in the traced set now? */
bool tracer__is_traced(const struct tracer *t, uint32_t tgid);
int tracer__counters_fd(const struct tracer *t);
/* Whether sched's fork and exit programs keep the traced set without the
 * sched class being recorded (-p with an -e list that lacks it). */
bool tracer__follows_alone(const struct tracer *t);
/* The per-CPU runs of edge reservation failures (bpf/causeway.bpf.h). */
int tracer__ring_cpu_fd(const struct tracer *t);

/*
 * Runs of the loaded programs the kernel skipped: a tracing program hit
 * on a CPU where it is already running (an interrupt inside it) is not
 * run, and counted in its recursion_misses. What such a run would have
 * written is in no ring and no lost count. @return the sum; @names gets
 * "prog N,..." (cut to its size).
 */
uint64_t tracer__runs_missed(const struct tracer *t, char *names, size_t size);

/* The loaded object of class @class_id (CW_CLASS_*), for a module that
 * attaches its programs itself (capture/usdt.c), or NULL. */
struct bpf_object *tracer__object(const struct tracer *t, int class_id);

void tracer__free(struct tracer *t);

#endif /* CAUSEWAY_CAPTURE_TRACER_H */
