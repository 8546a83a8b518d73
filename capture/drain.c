// SPDX-License-Identifier: MIT
/*
 * The drain; see drain.h.
 *
 * Two rings, one file. The analyzer puts records back in time order
 * within a window of 10 ms (analyze/order.h), so the file must not hold a
 * record much older than one written before it. Each ring alone is in
 * time order (near enough: reservation order), but draining one ring and
 * then the other would put the samples of the last poll period (10 ms,
 * more on a busy machine) after edges newer than they are. So the two are merged
 * by time, up to a horizon: the clock read before either ring is read.
 * Everything older was in a ring by then (but what BPF was writing at
 * that instant), so it is written, in time order; what is newer arrived
 * while the rings were read, and waits, staged, for the next poll's
 * horizon. Without the horizon, a drain that took long (the capture
 * descheduled on a busy machine, a segment sealed) wrote edges newer
 * than samples still in their ring, and the analyzer read those samples
 * past its window. Samples are staged first, then each edge, before it
 * is written, lets the staged samples older than itself go first.
 * Staging is bounded: past STAGE_MAX, samples stay in their ring, which
 * may then lose samples, never edges; edges past it are written at once.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/libbpf.h>

#include "capture/account.h"
#include "capture/clock.h"
#include "capture/drain.h"
#include "capture/namer.h"
#include "trace/writer.h"
#include "schema/records.h"

/* What the callback returns to end a batch: no libbpf call returns it. */
#define MORE (-EINPROGRESS)
#define STAGE_MAX (16u << 20)
#define REC_MAX 65536u

/* Records waiting to be written, in arrival order: [off, len) of buf. */
struct stage {
	uint8_t *buf;
	size_t off, len, cap;
};

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
	struct account *acct;
	uint64_t events, rejected;
	uint64_t cutoff, after_stop; /* drain__cutoff; 0: none */
	struct namer *namer;	     /* NULL: none */
	drain_fill_fn fill;	     /* NULL: none */
	void *fill_ctx;
	uint64_t fill_buf[64];	     /* the filled copy: a record is smaller */
	int err;		/* the writer's error that ended the call */
	/* record type -> CW_RW_BPF or CW_RW_BPF_VAR: a type BPF writes, of a
	 * class recorded; 0: not passed on */
	uint8_t writer[CW_REC_NTYPES];
	struct pollfd pfd[2];
	int npfd;
	struct stage samples_st, edges_st;
	uint64_t horizon; /* this poll's: records up to it are written */
	uint64_t sample_newest; /* the newest sample staged */
};

/* BPF wrote it, but a record that does not describe itself, or one no
 * recorded class declares, is never passed on. */
static bool record_ok(struct drain *d, const void *data, size_t size)
{
	const struct cw_hdr *h = data;

	if (size < sizeof(*h) || h->size != size || h->type >= CW_REC_NTYPES ||
	    !d->writer[h->type])
		return false;
	if (d->writer[h->type] == CW_RW_BPF_VAR)
		return cw_sample_ok(data, size);
	return cw_rec_info(h->type)->size == size;
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

static bool stage_full(const struct stage *st)
{
	return st->len - st->off > STAGE_MAX - REC_MAX;
}

/* The oldest staged record, or NULL. */
static const struct cw_hdr *stage_head(const struct stage *st)
{
	return st->off < st->len ? (const void *)(st->buf + st->off) : NULL;
}

static void stage_pop(struct stage *st)
{
	st->off += stage_head(st)->size;
	if (st->off == st->len)
		st->off = st->len = 0;
}

static int stage_push(struct stage *st, const void *data, size_t size)
{
	if (st->off && st->len + size > st->cap) {
		memmove(st->buf, st->buf + st->off, st->len - st->off);
		st->len -= st->off;
		st->off = 0;
	}
	if (st->len + size > st->cap) {
		size_t cap = st->cap ? 2 * st->cap : 1u << 20;
		uint8_t *p;

		while (cap < st->len + size)
			cap *= 2;
		p = realloc(st->buf, cap);
		if (!p)
			return -ENOMEM;
		st->buf = p;
		st->cap = cap;
	}
	memcpy(st->buf + st->len, data, size);
	st->len += size;
	return 0;
}

/* Write the staged records up to time @ts, the two stages merged by time
 * (an edge before a sample of the same instant, as the rings are read). */
static int flush_staged(struct drain *d, uint64_t ts)
{
	for (;;) {
		const struct cw_hdr *e = stage_head(&d->edges_st), *s = stage_head(&d->samples_st);
		struct stage *from = e && (!s || e->ts <= s->ts) ? &d->edges_st : &d->samples_st;
		const struct cw_hdr *h = from == &d->edges_st ? e : s;
		int err;

		if (!h || h->ts > ts)
			return 0;
		err = put(d, h, h->size);
		if (err)
			return err; /* kept staged for the next call */
		stage_pop(from);
	}
}

static int on_edge(void *ctx, void *data, size_t size)
{
	struct drain_ring *r = ctx;
	struct drain *d = r->d;
	const struct cw_hdr *h = data;
	int err;

	if (!record_ok(d, data, size)) {
		d->rejected++;
		return ++r->batch >= DRAIN_BATCH ? MORE : 0;
	}
	if (d->cutoff && h->ts > d->cutoff) {
		d->after_stop++;
		return ++r->batch >= DRAIN_BATCH ? MORE : 0;
	}
	account__wrote(d->acct, CW_RING_EDGE, h);
	if (d->fill) {
		/* ring memory is read-only here: a filled record is a copy */
		h = d->fill(d->fill_ctx, h, d->fill_buf, sizeof(d->fill_buf));
		data = (void *)h;
	}
	if (d->namer && (err = namer__see(d->namer, d->w, h))) {
		d->err = err;
		return err;
	}
	if (d->samples.rb && h->ts > d->horizon && !stage_full(&d->edges_st)) {
		if ((err = stage_push(&d->edges_st, data, size))) {
			d->err = err;
			return err;
		}
	} else {
		/* Within the horizon, or past it with no sample ring or no
		 * room to stage: what is staged and older goes first. */
		err = flush_staged(d, h->ts);
		err = err ?: put(d, data, size);
		if (err)
			return err;
	}
	return ++r->batch >= DRAIN_BATCH ? MORE : 0;
}

static int on_sample(void *ctx, void *data, size_t size)
{
	struct drain_ring *r = ctx;
	struct drain *d = r->d;
	int err;

	if (!record_ok(d, data, size)) {
		d->rejected++;
	} else if (d->cutoff && ((const struct cw_hdr *)data)->ts > d->cutoff) {
		d->after_stop++;
	} else {
		account__wrote(d->acct, CW_RING_SAMPLE, data);
		if ((err = stage_push(&d->samples_st, data, size))) {
			d->err = err;
			return err;
		}
		if (((const struct cw_hdr *)data)->ts > d->sample_newest)
			d->sample_newest = ((const struct cw_hdr *)data)->ts;
	}
	/* libbpf has consumed this record already: stop while the next
	 * one still fits. */
	return ++r->batch >= DRAIN_BATCH || stage_full(&d->samples_st) ? MORE : 0;
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

struct drain *drain__new(int ring_fd, int sample_fd, struct cw_writer *w, struct account *acct,
			 const struct cw_class_sel *sel)
{
	struct drain *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return NULL;
	d->w = w;
	d->acct = acct;
	/* The types BPF writes (schema/records.def) of the classes recorded,
	 * and the metadata's gap, since every class's reservations report
	 * their failures (cw_reserve). */
	for (unsigned t = 0; t < CW_REC_NTYPES; t++) {
		const struct cw_rec_info *ri = cw_rec_info(t);
		unsigned cls = CW_CLASS_OF(t);

		if (!ri || ri->writer == CW_RW_USER)
			continue;
		if (cls == CW_CLASS_META || (cls < CW_CLASS_MAX && sel->c[cls].status == CW_CLS_OK))
			d->writer[t] = ri->writer;
	}
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
	int e, s = 0, err;

	d->err = 0;
	/* Only to wait: the rings are read below whether it woke or not,
	 * since records submitted without a wakeup wake nobody. The epoll
	 * descriptors of the two managers are themselves pollable. */
	if (timeout_ms && poll(d->pfd, (nfds_t)d->npfd, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	d->horizon = clock__now();
	if (!stage_full(&d->samples_st))
		s = ring_consume(&d->samples);
	else
		s = 1; /* left in the ring until the edges catch up */
	if (s < 0)
		return s;
	/* Samples left in their ring (a batch's end, a full stage) may be
	 * older than the horizon: the edges wait for them past the newest
	 * sample read. */
	if (s && d->sample_newest < d->horizon)
		d->horizon = d->sample_newest;
	/* What waited for this horizon goes as the edges read now pass it,
	 * and the rest up to it after them, unless edges are left in their
	 * ring: those older than staged samples go first. */
	e = ring_consume(&d->edges);
	if (e < 0)
		return e;
	if (!e && (err = flush_staged(d, d->horizon)))
		return err;
	return e || s;
}

int drain__finish(struct drain *d)
{
	return flush_staged(d, UINT64_MAX);
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
	free(d->samples_st.buf);
	free(d->edges_st.buf);
	free(d);
}

void drain__cutoff(struct drain *d, uint64_t ns)
{
	d->cutoff = ns;
}

uint64_t drain__after_stop(const struct drain *d)
{
	return d->after_stop;
}

void drain__set_filler(struct drain *d, drain_fill_fn fill, void *ctx)
{
	d->fill = fill;
	d->fill_ctx = ctx;
}

void drain__set_namer(struct drain *d, struct namer *n)
{
	d->namer = n;
}
