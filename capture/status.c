// SPDX-License-Identifier: MIT
#include <inttypes.h>
#include <stdio.h>

#include "capture/log.h"
#include "trace/writer.h"
#include "capture/status.h"

static void human_bytes(uint64_t b, char *buf, size_t len)
{
	if (b >= 1ull << 30)
		snprintf(buf, len, "%.2f GiB", b / (double)(1ull << 30));
	else if (b >= 1ull << 20)
		snprintf(buf, len, "%.1f MiB", b / (double)(1ull << 20));
	else
		snprintf(buf, len, "%.1f KiB", b / 1024.0);
}

static double ratio(const struct cw_writer_stats *st)
{
	return st->file_bytes ? (double)st->raw_bytes / st->file_bytes : 0.0;
}

void status__line(const struct cw_writer *w, const struct account_totals *lost, uint64_t elapsed_ns,
		  double rate)
{
	struct cw_writer_stats st;
	char bytes[32], dec[40] = "";

	cw_writer__stats(w, &st);
	human_bytes(st.file_bytes, bytes, sizeof(bytes));
	if (lost->decimated)
		snprintf(dec, sizeof(dec), "  decimated %" PRIu64, lost->decimated);
	fprintf(stderr, "\r[%5.0fs] %9.0f ev/s  %s written  ratio %.1fx  lost edge %" PRIu64
			" sample %" PRIu64 "%s\033[K",
		elapsed_ns / 1e9, rate, bytes, ratio(&st), lost->lost_edge, lost->lost_sample, dec);
}

void status__end_line(void)
{
	fputc('\n', stderr);
}

void status__summary(const struct cw_writer *w, const struct summary *s)
{
	const struct capture_counters *c = s->c;
	struct cw_writer_stats st;
	char bytes[32];

	cw_writer__stats(w, &st);
	human_bytes(st.file_bytes, bytes, sizeof(bytes));
	cw_notice("%s: %.1fs, %" PRIu64 " events, %" PRIu64 " lost (edge %" PRIu64
		  ", sample %" PRIu64 ", map overflow %" PRIu64 "), %s in %" PRIu64
		  " segments (ratio %.1fx), stop: %s%s%s%s",
		  s->output, s->elapsed_ns / 1e9, c->events, c->lost, c->lost - c->samples_lost,
		  c->samples_lost, c->map_overflow, bytes, st.segments, ratio(&st), s->stop_reason,
		  s->stop_detail ? " (" : "", s->stop_detail ? s->stop_detail : "",
		  s->stop_detail ? ")" : "");
	if (c->samples_decimated)
		cw_notice("%" PRIu64 " stacks not taken by --sample-budget (not lost: each CPU "
			  "sample kept and every wait records its keep probability)",
			  c->samples_decimated);
	/* docs/model.md §2.3: what caused nothing recorded is not written */
	if (c->net_receipts)
		cw_notice("net: %" PRIu64 " packets received, %" PRIu64
			  " written (those that woke a recorded context)",
			  c->net_receipts, c->net_written);
	if (c->timer_arms)
		cw_notice("timer: %" PRIu64 " starts held, %" PRIu64
			  " records (the fires, each with its start)",
			  c->timer_arms, c->timer_written);
	if (c->runs_missed)
		cw_notice("%" PRIu64 " program runs skipped by the kernel, each program already "
			  "running on that CPU (%s): their events are not in the trace",
			  c->runs_missed, s->runs_missed);
	if (c->rejected)
		cw_notice("%" PRIu64 " records from the BPF programs were malformed and not written",
			  c->rejected);
	if (s->command)
		cw_notice("command %s", s->command);
}
