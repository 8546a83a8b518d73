/* SPDX-License-Identifier: MIT */
/*
 * Coverage breaks (docs/model.md §5.7): a window of lost events, a
 * coverage_breaks row, and the set of them the join asks (breaks.c).
 */
#ifndef CAUSEWAY_BREAKS_H
#define CAUSEWAY_BREAKS_H

#include <stddef.h>
#include <stdint.h>

/* The coverage_breaks.stream of sample-ring loss. */
#define CW_BREAK_STREAM_SAMPLE "sample"

/* end_ns of a break that runs to the end of the trace (stored as NULL). */
#define CW_BREAK_OPEN ((uint64_t)INT64_MAX)

/* cw_break.class of a break that is not one class's (stored as NULL). */
#define CW_BREAK_NO_CLASS (-1)

struct cw_break {
	uint64_t start_ns, end_ns;
	int32_t cpu;	    /* -1: all / unknown */
	const char *stream; /* "edge", "sample", "map", "file", "io_uring" */
	int64_t lost;	    /* -1: unknown (file damage) */
	/* CW_CLASS_* whose events were lost, as the accounting record
	 * names it: coverage_breaks.class. CW_BREAK_NO_CLASS where no one
	 * class's were: file damage, a CQE overflow, a gap record (which
	 * names none), losses no gap record reported, a class number this
	 * analyzer does not know. Never read back out of reason, which is
	 * prose for people. */
	int32_t class;
	char reason[96];
	/* 0: the break concerns every join. Otherwise the io_uring ring
	 * (io_ring_ctx pointer) whose completions it concerns (a CQE
	 * overflow): only joins on that ring see it (cw_breaks__overlap_ring). */
	uint64_t ring;
};

/*
 * Coverage breaks known before the join runs (ring loss from accounting
 * records, file damage), so that a join can tell whether its evidence could
 * lie inside one, even when the loss is reported after the events it
 * affects.
 */
struct cw_breaks;
struct cw_breaks *cw_breaks__new(void);
/* Adjacent or overlapping breaks of one stream, CPU, class, reason and
 * ring merge; past a bound, neighbours are merged into wider breaks
 * (coarsened: of no class when theirs differ). */
int cw_breaks__add(struct cw_breaks *b, const struct cw_break *br);
/* Sorts; call once after the last add and before the first query. */
void cw_breaks__finish(struct cw_breaks *b);
size_t cw_breaks__count(const struct cw_breaks *b);
/* Breaks merged into wider ones because there were too many to keep. */
uint64_t cw_breaks__coarsened(const struct cw_breaks *b);
const struct cw_break *cw_breaks__get(const struct cw_breaks *b, size_t i);
/* Does any break that concerns every join overlap [from, to]? Breaks
 * scoped to a ring are not seen here, nor are those of the sample stream
 * (CW_BREAK_STREAM_SAMPLE): a lost sample hides no fork, exit or wake,
 * so it never makes an edge join reconstructed. */
int cw_breaks__overlap(const struct cw_breaks *b, uint64_t from, uint64_t to);
/* Does a break overlap [from, to] that concerns every join or the ring
 * @ring? */
int cw_breaks__overlap_ring(const struct cw_breaks *b, uint64_t ring, uint64_t from, uint64_t to);
/* Does a break of the sample stream overlap [from, to]? */
int cw_breaks__overlap_samples(const struct cw_breaks *b, uint64_t from, uint64_t to);
void cw_breaks__free(struct cw_breaks *b);

#endif /* CAUSEWAY_BREAKS_H */
