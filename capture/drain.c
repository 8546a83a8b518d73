// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>

#include <bpf/libbpf.h>

#include "capture/drain.h"
#include "capture/segwriter.h"

/* What the callback returns to end a batch: no libbpf call returns it. */
#define MORE (-EINPROGRESS)

struct drain {
	struct ring_buffer *rb;
	struct cw_writer *w;
	uint64_t events, rejected;
	unsigned batch;
	int err;		/* the writer's error that ended the call */
	uint16_t size_of[256];	/* record type -> exact size; 0: not ours */
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct drain *d = ctx;
	const struct cw_hdr *h = data;
	int err;

	/* BPF wrote it, but a record that does not describe itself, or one
	 * no recorded class declares, is never passed on. */
	if (size < sizeof(*h) || h->size != size || h->type >= 256 || d->size_of[h->type] != size) {
		d->rejected++;
	} else {
		err = cw_writer__append(d->w, data, size);
		if (err) {
			d->err = err;
			return err;
		}
		d->events++;
	}
	return ++d->batch >= DRAIN_BATCH ? MORE : 0;
}

struct drain *drain__new(int ring_fd, struct cw_writer *w, const struct cw_class_sel *sel)
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
	d->rb = ring_buffer__new(ring_fd, on_record, d, NULL);
	if (!d->rb) {
		err = errno;
		free(d);
		errno = err;
		return NULL;
	}
	return d;
}

int drain__poll(struct drain *d, int timeout_ms)
{
	int ret;

	d->batch = 0;
	d->err = 0;
	ret = timeout_ms ? ring_buffer__poll(d->rb, timeout_ms) : ring_buffer__consume(d->rb);
	/* A poll that timed out reports nothing: events submitted without a
	 * wakeup are still waiting. */
	if (ret == 0 && timeout_ms)
		ret = ring_buffer__consume(d->rb);
	if (ret == MORE)
		return 1;
	if (ret == -EINTR || ret >= 0)
		return 0;
	return d->err ? d->err : ret;
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
	ring_buffer__free(d->rb);
	free(d);
}
