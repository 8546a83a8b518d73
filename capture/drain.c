// SPDX-License-Identifier: MIT
/*
 * The drain; see drain.h.
 *
 * Two rings, one file. The analyzer puts records back in time order
 * within a window of 10 ms (analyze/order.h), so the file must not hold a
 * record much older than one written before it. Each ring alone is in
 * time order (near enough: reservation order), but draining one ring and
 * then the other would put the samples of the last poll period, up to
 * 100 ms of them, after edges newer than they are. So samples are first
 * staged, and each edge, before it is written, lets the staged samples
 * older than itself go first: a merge of the two rings by time. What is
 * staged once the edge ring is empty is written then; while edges keep
 * coming, samples newer than them wait for the edges that pass them.
 * Staging is bounded: past STAGE_MAX, samples stay in their ring, which
 * may then lose samples, never edges.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "capture/drain.h"
#include "capture/segwriter.h"

/* What the callback returns to end a batch: no libbpf call returns it. */
#define MORE (-EINPROGRESS)
#define STAGE_MAX (16u << 20)
#define REC_MAX 65536u

/*
 * One ring with its own manager, so that each is consumed in its own
 * batches: with both rings on one manager, libbpf consumes them in turn
 * and stops at the first that ends its batch.
 */
struct drain_ring {
	struct drain *d;
	struct ring_buffer *rb;
	unsigned batch;
};

struct drain {
	struct drain_ring edges, samples;
	struct cw_writer *w;
	uint64_t events, rejected;
	int err;		/* the writer's error that ended the call */
	uint16_t size_of[256];	/* record type -> exact size or CW_REC_VARIABLE; 0: not ours */
	struct pollfd pfd[2];
	int npfd;
	uint8_t *stage;		/* staged samples, [stage_off, stage_len) */
	size_t stage_off, stage_len, stage_cap;
};

static uint32_t pad8(uint32_t n)
{
	return (n + 7u) & ~7u;
}

/*
 * A sample (schema/events.h) is as long as its stacks: its size must be
 * exactly what its counts say, and the counts within what BPF can write.
 */
static bool sample_ok(const void *data, size_t size)
{
	const struct cw_sample *s = data;

	if (size < sizeof(*s) || s->nkernel > CW_SAMPLE_MAX_FRAMES ||
	    s->nuser > CW_SAMPLE_MAX_FRAMES || s->nregs > CW_SAMPLE_NREGS_X86_64 ||
	    s->stack_len > CW_SAMPLE_MAX_STACK || (s->stack_len && !s->nregs))
		return false;
	return size == sizeof(*s) + 8u * ((uint32_t)s->nkernel + s->nuser + s->nregs) +
			       pad8(s->stack_len);
}

/* BPF wrote it, but a record that does not describe itself, or one no
 * recorded class declares, is never passed on. */
static bool record_ok(struct drain *d, const void *data, size_t size)
{
	const struct cw_hdr *h = data;

	if (size < sizeof(*h) || h->size != size || h->type >= 256 || !d->size_of[h->type])
		return false;
	if (d->size_of[h->type] == CW_REC_VARIABLE)
		return sample_ok(data, size);
	return d->size_of[h->type] == size;
}

static int put(struct drain *d, const void *data, size_t size)
{
	int err = cw_writer__append(d->w, data, size);

	if (err)
		d->err = err;
	else
		d->events++;
	return err;
}

/* Write the staged samples up to time @ts. */
static int flush_staged(struct drain *d, uint64_t ts)
{
	while (d->stage_off < d->stage_len) {
		const struct cw_hdr *h = (const void *)(d->stage + d->stage_off);
		int err;

		if (h->ts > ts)
			return 0;
		err = put(d, h, h->size);
		if (err)
			return err; /* kept staged for the next call */
		d->stage_off += h->size;
	}
	d->stage_off = d->stage_len = 0;
	return 0;
}

static int on_edge(void *ctx, void *data, size_t size)
{
	struct drain_ring *r = ctx;
	struct drain *d = r->d;
	int err;

	if (!record_ok(d, data, size)) {
		d->rejected++;
	} else {
		err = flush_staged(d, ((const struct cw_hdr *)data)->ts);
		err = err ?: put(d, data, size);
		if (err)
			return err;
	}
	return ++r->batch >= DRAIN_BATCH ? MORE : 0;
}

static bool stage_full(const struct drain *d)
{
	return d->stage_len - d->stage_off > STAGE_MAX - REC_MAX;
}

static int on_sample(void *ctx, void *data, size_t size)
{
	struct drain_ring *r = ctx;
	struct drain *d = r->d;

	if (!record_ok(d, data, size)) {
		d->rejected++;
	} else {
		if (d->stage_off && d->stage_len + size > d->stage_cap) {
			memmove(d->stage, d->stage + d->stage_off, d->stage_len - d->stage_off);
			d->stage_len -= d->stage_off;
			d->stage_off = 0;
		}
		if (d->stage_len + size > d->stage_cap) {
			size_t cap = d->stage_cap ? 2 * d->stage_cap : 1u << 20;
			uint8_t *p;

			while (cap < d->stage_len + size)
				cap *= 2;
			p = realloc(d->stage, cap);
			if (!p) {
				d->err = -ENOMEM;
				return -ENOMEM;
			}
			d->stage = p;
			d->stage_cap = cap;
		}
		memcpy(d->stage + d->stage_len, data, size);
		d->stage_len += size;
	}
	/* libbpf has consumed this record already: stop while the next
	 * one still fits. */
	return ++r->batch >= DRAIN_BATCH || stage_full(d) ? MORE : 0;
}

static int ring_open(struct drain *d, struct drain_ring *r, int fd, ring_buffer_sample_fn fn)
{
	r->d = d;
	r->rb = ring_buffer__new(fd, fn, r, NULL);
	if (!r->rb)
		return -errno;
	d->pfd[d->npfd].fd = ring_buffer__epoll_fd(r->rb);
	d->pfd[d->npfd++].events = POLLIN;
	return 0;
}

struct drain *drain__new(int ring_fd, int sample_fd, struct cw_writer *w,
			 const struct cw_class_sel *sel)
{
	struct drain *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return NULL;
	d->w = w;
	for (size_t i = 0; i < cw_nclasses; i++) {
		const struct cw_class_desc *c = &cw_classes[i];

		if (sel->c[c->id].status != CW_CLS_OK)
			continue;
		for (const struct cw_rec_desc *r = c->records; r->type; r++)
			if (r->type < 256)
				d->size_of[r->type] = r->size;
	}
	/* Every class's reservations report their failures (cw_reserve). */
	d->size_of[CW_REC_GAP] = sizeof(struct cw_gap);
	err = ring_open(d, &d->edges, ring_fd, on_edge);
	if (!err && sample_fd >= 0)
		err = ring_open(d, &d->samples, sample_fd, on_sample);
	if (err) {
		drain__free(d);
		errno = -err;
		return NULL;
	}
	return d;
}

/* Consume one batch of @r. @return 1 when more is pending, 0, or a
 * negative errno. */
static int ring_consume(struct drain_ring *r)
{
	int ret;

	if (!r->rb)
		return 0;
	r->batch = 0;
	ret = ring_buffer__consume(r->rb);
	if (ret == MORE)
		return 1;
	if (ret == -EINTR || ret >= 0)
		return 0;
	return r->d->err ? r->d->err : ret;
}

int drain__poll(struct drain *d, int timeout_ms)
{
	int e, s = 0;

	d->err = 0;
	/* Only to wait: the rings are read below whether it woke or not,
	 * since records submitted without a wakeup wake nobody. The epoll
	 * descriptors of the two managers are themselves pollable. */
	if (timeout_ms && poll(d->pfd, (nfds_t)d->npfd, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	if (!stage_full(d))
		s = ring_consume(&d->samples);
	else
		s = 1; /* left in the ring until the edges catch up */
	if (s < 0)
		return s;
	e = ring_consume(&d->edges);
	if (e < 0)
		return e;
	/* No edge is pending: nothing older than the staged samples can
	 * still come (but what BPF is writing right now). */
	if (!e) {
		int err = flush_staged(d, UINT64_MAX);

		if (err)
			return err;
	}
	return e || s;
}

uint64_t drain__events(const struct drain *d)
{
	return d->events;
}

uint64_t drain__rejected(const struct drain *d)
{
	return d->rejected;
}

void drain__free(struct drain *d)
{
	if (!d)
		return;
	ring_buffer__free(d->edges.rb);
	ring_buffer__free(d->samples.rb);
	free(d->stage);
	free(d);
}
