/* SPDX-License-Identifier: MIT */
/*
 * The consumer of the edge and sample rings: records from the BPF
 * programs into the segment writer, in bounded batches, each ring in
 * batches of its own, the two merged by time (drain.c says why).
 *
 * libbpf 1.1's ring_buffer__poll() keeps consuming for as long as the
 * producers keep up; a loop around it would then never see SIGINT, -d,
 * COMMAND's exit or the second boundary, and that is exactly when events
 * are being lost. So the callback stops the call after DRAIN_BATCH records
 * (having consumed them: libbpf advances past a record before calling
 * back), and the caller does its checks before asking for more.
 */
#ifndef CAUSEWAY_CAPTURE_DRAIN_H
#define CAUSEWAY_CAPTURE_DRAIN_H

#include <stdint.h>

#include "capture/classes.h"

#define DRAIN_BATCH 16384

struct cw_writer;
struct drain;

/*
 * Drain the edge ring @ring_fd and, unless @sample_fd is -1, the sample
 * ring, into @w, counting each record drained in @acct. Only records the classes @sel records declare are passed
 * on: at their exact size, or for samples at the size their counts give;
 * others are counted (drain__rejected). @return a drain, or NULL with
 * errno set.
 */
struct account;
struct drain *drain__new(int ring_fd, int sample_fd, struct cw_writer *w, struct account *acct,
			 const struct cw_class_sel *sel);

/*
 * Consume up to DRAIN_BATCH records of each ring; wait up to @timeout_ms
 * for the first when none is pending (0: do not wait). @return 0 when the ring is
 * drained (as far as it has been told), 1 when more is pending, -EFBIG
 * when the writer's limit stopped it (--max-size), or another negative
 * errno (writing the file failed).
 */
int drain__poll(struct drain *d, int timeout_ms);

/* Write what is still staged, once nothing more is drained (the rings'
 * last records can be newer than the last horizon). @return 0 or as
 * drain__poll. */
int drain__finish(struct drain *d);

/* Records passed to the writer, and records refused, so far. */
uint64_t drain__events(const struct drain *d);
uint64_t drain__rejected(const struct drain *d);

/* The capture stopped recording at @ns: records newer than that, which
 * programs still being detached write, are dropped (counted:
 * drain__after_stop), so the trace ends where the capture said it
 * stops. */
void drain__cutoff(struct drain *d, uint64_t ns);

struct namer;
/* Name the tasks outside the traced set that edge records meet
 * (capture/namer.h); @n stays the caller's. */
void drain__set_namer(struct drain *d, struct namer *n);
uint64_t drain__after_stop(const struct drain *d);

/* A class's record filler: what the capture adds to a record BPF wrote
 * (golang.h's names), in a copy at @buf of @cap bytes that it returns,
 * or @h itself unchanged. */
typedef const struct cw_hdr *(*drain_fill_fn)(void *ctx, const struct cw_hdr *h, void *buf,
					      size_t cap);
void drain__set_filler(struct drain *d, drain_fill_fn fill, void *ctx);

void drain__free(struct drain *d);

#endif /* CAUSEWAY_CAPTURE_DRAIN_H */
