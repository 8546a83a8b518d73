// SPDX-License-Identifier: MIT
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>

#include <bpf/libbpf.h>

#include "capture/drain.h"
#include "capture/segwriter.h"

/* What the callback returns to end a batch: no libbpf call returns it. */
#define MORE (-EINPROGRESS)

/*
 * One ring with its own manager, so that each is consumed in its own
 * batches: with both rings on one manager, libbpf consumes them in
 * turn and stops at the first that ends its batch, so a flood of edges
 * would starve the sample ring (or the other way round).
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

static int on_record(void *ctx, void *data, size_t size)
{
	struct drain_ring *r = ctx;
	struct drain *d = r->d;
	const struct cw_hdr *h = data;
	int err;

	/* BPF wrote it, but a record that does not describe itself, or one
	 * no recorded class declares, is never passed on. */
	if (size < sizeof(*h) || h->size != size || h->type >= 256 || !d->size_of[h->type] ||
	    (d->size_of[h->type] == CW_REC_VARIABLE ? !sample_ok(data, size)
						     : d->size_of[h->type] != size)) {
		d->rejected++;
	} else {
		err = cw_writer__append(d->w, data, size);
		if (err) {
			d->err = err;
			return err;
		}
		d->events++;
	}
	return ++r->batch >= DRAIN_BATCH ? MORE : 0;
}

static int ring_open(struct drain *d, struct drain_ring *r, int fd)
{
	r->d = d;
	r->rb = ring_buffer__new(fd, on_record, r, NULL);
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
	err = ring_open(d, &d->edges, ring_fd);
	if (!err && sample_fd >= 0)
		err = ring_open(d, &d->samples, sample_fd);
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
	int e, s;

	d->err = 0;
	/* Only to wait: the rings are read below whether it woke or not,
	 * since records submitted without a wakeup wake nobody. The epoll
	 * descriptors of the two managers are themselves pollable. */
	if (timeout_ms && poll(d->pfd, (nfds_t)d->npfd, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	e = ring_consume(&d->edges);
	if (e < 0)
		return e;
	s = ring_consume(&d->samples);
	if (s < 0)
		return s;
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
	free(d);
}
