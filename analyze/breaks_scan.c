// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "breaks_scan.h"

static const char *const class_names[CW_CLASS_MAX] = {
	"meta", "sched", "io_uring", "workqueue", "timer", "futex", "sample", "adapter",
};
static const char *const ring_names[] = { "edge", "sample", "map" };

static int add_account_break(struct cw_scan *s, const struct cw_account *a)
{
	struct cw_break br = {
		.start_ns = a->hdr.ts > a->window_ns ? a->hdr.ts - a->window_ns : 0,
		.end_ns = a->hdr.ts,
		.cpu = a->hdr.cpu == 0xffff ? -1 : a->hdr.cpu,
		.stream = a->ring < 3 ? ring_names[a->ring] : "unknown",
		.lost = (int64_t)(a->lost > INT64_MAX ? INT64_MAX : a->lost),
	};

	snprintf(br.reason, sizeof(br.reason), "%s: %s",
		 a->ring == CW_RING_MAP ? "join map full" : "ring full",
		 a->class < CW_CLASS_MAX ? class_names[a->class] : "unknown class");
	return cw_breaks__add(s->breaks, &br);
}

/*
 * Evidence between two readable segments is gone: a break spanning the gap
 * in time strictly between them, since nothing says what the missing
 * segments held. @to is CW_BREAK_OPEN when nothing readable follows.
 */
static int add_file_break(struct cw_scan *s, uint64_t after, uint64_t before, const char *what)
{
	uint64_t from = after + 1, to = before == CW_BREAK_OPEN ? before : before - 1;
	struct cw_break br = {
		.start_ns = from,
		.end_ns = to < from ? from : to,
		.cpu = -1,
		.stream = "file",
		.lost = -1,
	};

	snprintf(br.reason, sizeof(br.reason), "%s", what);
	return cw_breaks__add(s->breaks, &br);
}

int cw_scan__run(const char *path, const struct cw_reader_opts *ropts, struct cw_scan *s)
{
	struct cw_reader *r = cw_reader__open(path, ropts);
	struct cw_reader_stats before, after;
	struct cw_segment seg;
	uint64_t hi = 0, prev_seq = 0;
	int have_prev = 0, ret, err = 0;
	char what[96];

	memset(s, 0, sizeof(*s));
	s->breaks = cw_breaks__new();
	if (!s->breaks) {
		cw_reader__free(r);
		return -ENOMEM;
	}
	if (!r)
		return -errno;
	cw_reader__stats(r, &before);
	while ((ret = cw_reader__next(r, &seg)) > 0) {
		const struct cw_hdr *h;
		size_t pos = 0;

		cw_reader__stats(r, &after);
		if (!have_prev)
			s->minor = seg.minor;
		if (after.segments_damaged != before.segments_damaged ||
		    after.bytes_skipped != before.bytes_skipped ||
		    (have_prev ? seg.seq != prev_seq + 1 : seg.seq != 0)) {
			if (have_prev)
				snprintf(what, sizeof(what), "damaged or missing segments between seq %" PRIu64
					 " and seq %" PRIu64, prev_seq, seg.seq);
			else
				snprintf(what, sizeof(what), "damaged or missing segments before seq %" PRIu64,
					 seg.seq);
			err = add_file_break(s, have_prev ? hi : 0, seg.nrec ? seg.first_ts : hi + 1, what);
		}
		before = after;
		while (!err && (h = cw_segment__next_record(&seg, &pos))) {
			if (h->type == CW_REC_ACCOUNT) {
				if (h->size >= sizeof(struct cw_account) &&
				    ((const struct cw_account *)h)->lost)
					err = add_account_break(s, (const void *)h);
			} else if (h->type != CW_REC_META_KV && h->type != CW_REC_META_TASK) {
				s->events++;
			}
		}
		if (err)
			break;
		if (seg.nrec && seg.last_ts > hi)
			hi = seg.last_ts;
		prev_seq = seg.seq;
		have_prev = 1;
	}
	cw_reader__stats(r, &s->rs);
	cw_reader__free(r);
	if (ret < 0)
		return ret;
	if (!err && (s->rs.truncated_tail || s->rs.segments_damaged != before.segments_damaged ||
		     s->rs.bytes_skipped != before.bytes_skipped)) {
		snprintf(what, sizeof(what), "%s after seq %" PRIu64,
			 s->rs.truncated_tail ? "truncated tail" : "damaged segments", prev_seq);
		err = add_file_break(s, hi, CW_BREAK_OPEN, what);
	}
	cw_breaks__finish(s->breaks);
	return err;
}

void cw_scan__free(struct cw_scan *s)
{
	cw_breaks__free(s->breaks);
	s->breaks = NULL;
}
