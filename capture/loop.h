/* SPDX-License-Identifier: MIT */
/*
 * The drain loop: drain the rings in bounded batches (capture/drain.h),
 * and the perf rings of mapping changes (capture/perfev.h), and
 * between two batches look at what can end the capture: a signal, -d,
 * COMMAND's exit, every -p process gone, the file full, an error. Once a
 * second, write the accounting, seal the segment (a flusher thread syncs
 * it) and refresh the status line.
 */
#ifndef CAUSEWAY_CAPTURE_LOOP_H
#define CAUSEWAY_CAPTURE_LOOP_H

#include <stdbool.h>
#include <stdint.h>

enum stop_reason {
	STOP_NONE,
	STOP_SIGNAL,
	STOP_DURATION,
	STOP_COMMAND,
	STOP_TARGETS,
	STOP_MAX_SIZE,
	STOP_ERROR,
	STOP_MAX
};

/* The metadata's stop_reason, by STOP_*. */
extern const char *const stop_names[STOP_MAX];

struct loop {
	struct drain *drain;
	struct cw_writer *w;
	struct account *acct;
	struct flusher *flusher;
	struct tracer *tracer;
	struct command *cmd;  /* NULL without COMMAND */
	struct perfev_maps *maps; /* mapping changes; NULL without samples or uprobes */
	struct uobj *uobj;    /* the uprobe classes' objects; NULL without them */
	const struct env *env; /* -p, -d, -q, the output's name */
	uint64_t start_ns;
	bool tty;	      /* loop__run: show the status line */
	bool status_shown;    /* out: a status line was printed */
};

/* Run until something ends the capture. @return why. */
enum stop_reason loop__run(struct loop *l);

/*
 * Once the programs are detached: drain what the ring still holds,
 * unless @stop says the file cannot take it; a second signal cuts it
 * short. @return @stop, or what ended the drain (max-size, error).
 */
enum stop_reason loop__drain_rest(struct loop *l, enum stop_reason stop);

#endif /* CAUSEWAY_CAPTURE_LOOP_H */
