/* SPDX-License-Identifier: MIT */
/*
 * Causal stacks (docs/model.md §8.1): every sample's call stack with, at
 * its root end, what the sample worked for and how the work got to its
 * context, read from attribution and the edges of its chain
 * (attribution.carry_edge, then edges.carried_by):
 *
 *   req-7 /item/3                         the request (its name, cut)
 *   task 91                               the runtime task
 *   wake from front                       each handoff, oldest first, its
 *   futex wake from middle (reconstructed)  confidence said where it is not
 *                                          observed
 *   woken by: futex from back             off-CPU: what ended the wait
 *   main  ...  __schedule_[k]             the call stack, root to leaf
 *
 * A sample no request can be named for is rooted by why
 * ("unknown: woken by an unknown cause"). Samples with the same frames
 * and labels (and thread, with CW_XP_THREADS) are summed into one: the profile formats get one
 * struct cw_xsample per distinct stack.
 */
#ifndef CAUSEWAY_EXPORT_PROFILE_H
#define CAUSEWAY_EXPORT_PROFILE_H

#include "export.h"

enum cw_xframe_kind {
	CW_XF_REQUEST,	 /* the request, or why none is named */
	CW_XF_TASK,	 /* the runtime task */
	CW_XF_HOP,	 /* a handoff of the chain */
	CW_XF_MECHANISM, /* off-CPU: what ended the wait */
	CW_XF_USER,	 /* a frame of the call stack */
	CW_XF_KERNEL,
};

/* A frame name, interned: one per distinct (kind, name), numbered from 1
 * in the order first met, so that a writer can key its own tables by id. */
struct cw_xframe {
	uint32_t id;
	uint8_t kind;	  /* enum cw_xframe_kind */
	const char *name; /* escaped where it came from the trace */
	const char *module; /* a stack frame's module; NULL: none */
	const char *file;   /* a stack frame's source file; NULL: none */
	int64_t line;	    /* 0: none */
	uint64_t address;   /* 0: none */
	bool inlined;
};

/* The labels of a sample (docs/model.md §8.1); a string, NULL where it
 * does not apply. Interned like frames: equal labels are equal pointers. */
struct cw_xlabels {
	const char *request;	/* the request's name */
	const char *task;	/* the runtime task's label */
	const char *confidence; /* attribution's: observed | reconstructed | unknown */
	const char *mechanism;	/* off-CPU: sample_mechanism's word */
	const char *thread;	/* the thread's label, "name (tid N)"; "" without
				 * CW_XP_THREADS */
	int64_t request_id;	/* node id; 0: none */
};

struct cw_xsample {
	bool offcpu;
	/* estimates of the whole (weights over the probability the stack
	 * was kept, docs/model.md §4.2): samples and ns */
	double count, ns;
	uint64_t rows; /* database samples summed into this one */
	const struct cw_xlabels *labels;
	size_t nframes;
	const struct cw_xframe *const *frames; /* root first */
};

typedef int cw_xsample_fn(void *ctx, const struct cw_xsample *s);

/* Samples of different threads are apart (the thread label is set):
 * pprof's, whose labels people filter by. folded has no thread column,
 * and a system-wide trace's thousands of threads would keep apart what it
 * sums anyway. */
#define CW_XP_THREADS 1u

/*
 * Read every sample in the export's window (and of its --request, when
 * given), build its causal stack and call @fn once per distinct stack,
 * in a fixed order (the database's, so the same database gives the same
 * file). @return 0, @fn's nonzero return, or -1 after a message.
 */
int cw_xprofile__each(struct cw_x *x, unsigned flags, cw_xsample_fn *fn, void *ctx);

#endif /* CAUSEWAY_EXPORT_PROFILE_H */
