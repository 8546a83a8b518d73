// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "breaks_scan.h"
#include "order.h"
#include "../schema/names.h"

static struct cw_gap_tally *gap_tally(struct cw_scan *s, uint16_t cpu)
{
	if (cpu == 0xffff)
		return NULL;
	if (cpu >= s->ngaps) {
		/* doubling: CPU numbers may come in rising one by one */
		size_t n = (size_t)cpu + 1 > 2 * s->ngaps ? (size_t)cpu + 1 : 2 * s->ngaps;
		struct cw_gap_tally *g = realloc(s->gaps, n * sizeof(*g));

		if (!g)
			return NULL;
		memset(g + s->ngaps, 0, (n - s->ngaps) * sizeof(*g));
		s->gaps = g;
		s->ngaps = n;
	}
	return &s->gaps[cpu];
}

/*
 * An accounting record with losses. Since 1.5 the edge ring's losses are
 * reported where they happened, by gap records; only the others
 * (lost_unmarked) make the whole window a break.
 */
static int add_account_break(struct cw_scan *s, const struct cw_account *a)
{
	uint64_t start = a->hdr.ts > a->window_ns ? a->hdr.ts - a->window_ns : 0, lost = a->lost;
	const char *class = cw_name_of(cw_class_names, CW_CLASS_MAX, a->class);
	struct cw_break br;

	/* A CPU that is not one (0xffff) has no gap records to report its
	 * losses: its whole window, as before 1.5. */
	if (CW_REC_HAS(a, lost_unmarked) && a->lost_unmarked <= a->lost && a->hdr.cpu != 0xffff) {
		if (a->lost > a->lost_unmarked) {
			struct cw_gap_tally *g = gap_tally(s, a->hdr.cpu);

			if (!g)
				return -ENOMEM;
			g->expected += a->lost - a->lost_unmarked;
			if (!g->first_window || start < g->first_window)
				g->first_window = start ? start : 1;
		}
		lost = a->lost_unmarked;
	}
	if (!lost)
		return 0;
	br = (struct cw_break){
		.start_ns = start,
		.end_ns = a->hdr.ts,
		.cpu = a->hdr.cpu == 0xffff ? -1 : a->hdr.cpu,
		.stream = cw_name_of(cw_ring_names, CW_RING_MAX, a->ring) ?: "unknown",
		.lost = (int64_t)(lost > INT64_MAX ? INT64_MAX : lost),
		/* the record's class number, not its name in the reason */
		.class = class ? a->class : CW_BREAK_NO_CLASS,
	};

	/* sched's one map is the traced set (bpf/sched.bpf.c): a fork it
	 * refused is a process whose every event is missing. */
	snprintf(br.reason, sizeof(br.reason), "%s: %s",
		 a->ring != CW_RING_MAP		? "ring full"
		 : a->class == CW_CLASS_SCHED ? "traced set full"
						: "join map full",
		 class ?: "unknown class");
	return cw_breaks__add(s->breaks, &br);
}

/* Edge events lost on one CPU in [first_ns, hdr.ts] (format 1.5). A run
 * that ends before it starts is not believed: then it spans [0, hdr.ts]. */
static int add_gap_break(struct cw_scan *s, const struct cw_gap *r)
{
	struct cw_gap_tally *g = gap_tally(s, r->hdr.cpu);
	struct cw_break br = {
		.start_ns = r->first_ns <= r->hdr.ts ? r->first_ns : 0,
		.end_ns = r->hdr.ts,
		.cpu = r->hdr.cpu == 0xffff ? -1 : r->hdr.cpu,
		.stream = "edge",
		.lost = (int64_t)(r->lost > INT64_MAX ? INT64_MAX : r->lost),
		.class = CW_BREAK_NO_CLASS, /* a gap record names no class */
	};

	if (g) {
		g->reported += r->lost;
		if (r->hdr.ts > g->last_gap)
			g->last_gap = r->hdr.ts;
	} else if (r->hdr.cpu != 0xffff) {
		return -ENOMEM;
	}
	snprintf(br.reason, sizeof(br.reason), "ring full");
	return cw_breaks__add(s->breaks, &br);
}

/*
 * Losses the accounting says gap records report, but none did (a capture
 * killed before its close, or segments lost): from the CPU's last report
 * (or the first window with such losses) to the end, all is in doubt.
 */
static int add_unreported_breaks(struct cw_scan *s)
{
	int err = 0;

	for (size_t cpu = 0; cpu < s->ngaps && !err; cpu++) {
		const struct cw_gap_tally *g = &s->gaps[cpu];
		struct cw_break br = {
			.end_ns = CW_BREAK_OPEN,
			.cpu = (int)cpu,
			.stream = "edge",
			/* summed over the CPU's accounting records, whatever
			 * their class: not one class's */
			.class = CW_BREAK_NO_CLASS,
		};

		if (g->reported >= g->expected)
			continue;
		br.start_ns = g->last_gap ? g->last_gap : g->first_window;
		br.lost = (int64_t)(g->expected - g->reported > INT64_MAX ? INT64_MAX
									   : g->expected - g->reported);
		snprintf(br.reason, sizeof(br.reason), "ring full: losses not reported where");
		err = cw_breaks__add(s->breaks, &br);
	}
	return err;
}

/*
 * A CQE that did not fit its ring's completion queue (docs/model.md §5.4): the
 * kernel posts it later from its overflow list, or drops it (ocqe 0), and
 * either way no io_uring_complete names it, so any of that ring's
 * requests may have completed unseen here. Only that ring's joins see
 * the break.
 */
static int add_overflow_break(struct cw_scan *s, const struct cw_uring_overflow *o)
{
	struct cw_break br = {
		.start_ns = o->hdr.ts,
		.end_ns = o->hdr.ts,
		.cpu = -1,
		.stream = "io_uring",
		.lost = o->ocqe ? 0 : 1,
		.class = CW_BREAK_NO_CLASS,
		.ring = o->ring,
	};

	snprintf(br.reason, sizeof(br.reason), "CQE overflow on ring 0x%" PRIx64, (uint64_t)o->ring);
	return cw_breaks__add(s->breaks, &br);
}

/*
 * Evidence between two readable segments is gone. @after is the newest
 * event before the gap, @before the oldest after it (CW_BREAK_OPEN when
 * nothing readable follows). Records reach the file in ring order, which
 * is time order only within the reorder window across CPUs, so what the
 * missing segments held may reach that far into the time of the segments
 * around them: the break is widened by the window on both sides.
 */
static int add_file_break(struct cw_scan *s, uint64_t after, uint64_t before, const char *what)
{
	uint64_t from = after > CW_ORDER_WINDOW_NS ? after - CW_ORDER_WINDOW_NS : 0;
	uint64_t to = before == CW_BREAK_OPEN || before > CW_BREAK_OPEN - CW_ORDER_WINDOW_NS ?
			      CW_BREAK_OPEN : before + CW_ORDER_WINDOW_NS;
	struct cw_break br = {
		.start_ns = from,
		.end_ns = to,
		.cpu = -1,
		.stream = "file",
		.lost = -1,
		.class = CW_BREAK_NO_CLASS,
	};

	snprintf(br.reason, sizeof(br.reason), "%s", what);
	return cw_breaks__add(s->breaks, &br);
}

static int keep_map(struct cw_scan *s, const struct cw_hdr *h)
{
	if (s->maps_overflow)
		return 0;
	if (s->maps_len + h->size > CW_SCAN_MAPS_BYTES) {
		s->maps_overflow = 1;
		return 0;
	}
	if (s->maps_len + h->size > s->maps_cap) {
		size_t cap = s->maps_cap ? s->maps_cap * 2 : 65536;
		uint8_t *p;

		while (cap < s->maps_len + h->size)
			cap *= 2;
		if (!(p = realloc(s->maps, cap)))
			return -ENOMEM;
		s->maps = p;
		s->maps_cap = cap;
	}
	if (s->nmaps == s->maps_off_cap) {
		size_t cap = s->maps_off_cap ? s->maps_off_cap * 2 : 1024;
		size_t *p = realloc(s->maps_off, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->maps_off = p;
		s->maps_off_cap = cap;
	}
	memcpy(s->maps + s->maps_len, h, h->size);
	s->maps_off[s->nmaps++] = s->maps_len;
	s->maps_len += h->size;
	return 0;
}

/* By the time the join gets them, then by file order (the offset into
 * @maps, the records). */
static int map_cmp(const void *a, const void *b, void *maps)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	uint64_t tx = cw_scan__map_ts((const struct cw_hdr *)((uint8_t *)maps + x));
	uint64_t ty = cw_scan__map_ts((const struct cw_hdr *)((uint8_t *)maps + y));

	if (tx != ty)
		return tx < ty ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void sort_kept_maps(struct cw_scan *s)
{
	if (s->maps_overflow) {
		free(s->maps);
		free(s->maps_off);
		s->maps = NULL;
		s->maps_off = NULL;
		s->nmaps = s->maps_len = s->maps_cap = s->maps_off_cap = 0;
		return;
	}
	if (s->nmaps)
		qsort_r(s->maps_off, s->nmaps, sizeof(*s->maps_off), map_cmp, s->maps);
}

/* Metadata records are stamped when they were written, not when what
 * they describe happened (the /proc snapshot, of tasks and of their
 * mappings, comes after the first events; a probe's record, after its
 * attach): they say nothing about where in time a gap lies. A mapping seen being made is an event. */
static int is_event(const struct cw_hdr *h)
{
	return h->type != CW_REC_META_KV && h->type != CW_REC_META_TASK &&
	       h->type != CW_REC_META_KSYMS && h->type != CW_REC_META_USDT &&
	       !(h->type == CW_REC_META_MMAP && (h->flags & CW_MMAP_SNAPSHOT));
}

int cw_scan__run(const char *path, const struct cw_reader_opts *ropts, struct cw_scan *s)
{
	struct cw_reader *r = cw_reader__open(path, ropts);
	struct cw_reader_stats before, after;
	struct cw_segment seg;
	uint64_t hi = 0, prev_seq = 0, pending_from = 0;
	int pending = 0;
	int have_prev = 0, ret, err = 0;
	char what[96];

	memset(s, 0, sizeof(*s));
	s->breaks = cw_breaks__new();
	s->ksyms = cw_ksyms__new();
	if (!s->breaks || !s->ksyms) {
		cw_reader__free(r);
		return -ENOMEM;
	}
	if (!r)
		return -errno;
	cw_reader__stats(r, &before);
	while ((ret = cw_reader__next(r, &seg)) > 0) {
		const struct cw_hdr *h;
		uint64_t lo = UINT64_MAX, seg_hi = 0;
		size_t pos = 0;
		int gap;

		cw_reader__stats(r, &after);
		if (!have_prev)
			s->minor = seg.minor;
		gap = after.segments_damaged != before.segments_damaged ||
		      after.bytes_skipped != before.bytes_skipped ||
		      (have_prev ? seg.seq != prev_seq + 1 : seg.seq != 0);
		before = after;
		while (!err && (h = cw_segment__next_record(&seg, &pos))) {
			if (h->type == CW_REC_ACCOUNT) {
				if (h->size >= offsetof(struct cw_account, lost_unmarked) &&
				    ((const struct cw_account *)h)->lost)
					err = add_account_break(s, (const void *)h);
			} else if (h->type == CW_REC_GAP) {
				if (h->size >= sizeof(struct cw_gap) && ((const struct cw_gap *)h)->lost)
					err = add_gap_break(s, (const void *)h);
			} else if (h->type == CW_REC_META_MMAP) {
				err = keep_map(s, h);
				if (!err && is_event(h))
					s->events++;
			} else if (h->type == CW_REC_META_KSYMS) {
				const struct cw_meta_blob *b = (const void *)h;

				if (h->size >= sizeof(*b) && b->len <= h->size - sizeof(*b))
					err = cw_ksyms__add(s->ksyms, (const char *)(b + 1), b->len);
			} else if (is_event(h)) {
				s->events++;
				if (h->type == CW_REC_URING_OVERFLOW &&
				    h->size >= sizeof(struct cw_uring_overflow))
					err = add_overflow_break(s, (const void *)h);
			}
			if (is_event(h)) {
				lo = h->ts < lo ? h->ts : lo;
				seg_hi = h->ts > seg_hi ? h->ts : seg_hi;
			}
		}
		if (gap && !pending) {
			if (have_prev)
				snprintf(what, sizeof(what), "damaged or missing segments between seq %" PRIu64
					 " and seq %" PRIu64, prev_seq, seg.seq);
			else
				snprintf(what, sizeof(what), "damaged or missing segments before seq %" PRIu64,
					 seg.seq);
			pending = 1;
			pending_from = have_prev ? hi : 0;
		}
		/* A segment without events says nothing of where the gap
		 * ends: it runs to the next event seen. */
		if (!err && pending && lo != UINT64_MAX) {
			err = add_file_break(s, pending_from, lo, what);
			pending = 0;
		}
		if (err)
			break;
		if (seg_hi > hi)
			hi = seg_hi;
		prev_seq = seg.seq;
		have_prev = 1;
	}
	cw_reader__stats(r, &s->rs);
	cw_reader__free(r);
	if (ret < 0)
		return ret;
	if (!err && pending) {
		err = add_file_break(s, pending_from, CW_BREAK_OPEN, what);
	} else if (!err && (s->rs.truncated_tail ||
			    s->rs.segments_damaged != before.segments_damaged ||
			    s->rs.bytes_skipped != before.bytes_skipped)) {
		snprintf(what, sizeof(what), "%s after seq %" PRIu64,
			 s->rs.truncated_tail ? "truncated tail" : "damaged segments", prev_seq);
		err = add_file_break(s, hi, CW_BREAK_OPEN, what);
	}
	err = err ?: add_unreported_breaks(s);
	cw_breaks__finish(s->breaks);
	cw_ksyms__finish(s->ksyms);
	sort_kept_maps(s);
	return err;
}

void cw_scan__free(struct cw_scan *s)
{
	cw_breaks__free(s->breaks);
	s->breaks = NULL;
	cw_ksyms__free(s->ksyms);
	s->ksyms = NULL;
	free(s->maps);
	free(s->maps_off);
	s->maps = NULL;
	s->maps_off = NULL;
	free(s->gaps);
	s->gaps = NULL;
	s->ngaps = 0;
}
