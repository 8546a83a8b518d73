// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trace/format.h"
#include "capture/account.h"
#include "capture/clock.h"
#include "capture/command.h"
#include "capture/drain.h"
#include "capture/flusher.h"
#include "capture/log.h"
#include "capture/loop.h"
#include "capture/options.h"
#include "capture/perfev.h"
#include "trace/writer.h"
#include "capture/signals.h"
#include "capture/status.h"
#include "capture/tracer.h"
#include "capture/uobj.h"

/* The longest the loop sleeps before looking again. The programs never
 * wake it (bpf/causeway.bpf.h cw_submit): it looks this often, which an
 * edge ring of the default 8 MiB outlasts up to some 800 MB/s of
 * records, ten times what a busy machine writes. */
#define POLL_MS 10

const char *const stop_names[STOP_MAX] = {
	[STOP_NONE] = "none",		 [STOP_SIGNAL] = "signal",
	[STOP_DURATION] = "duration",	 [STOP_COMMAND] = "command-exit",
	[STOP_TARGETS] = "targets-exited", [STOP_MAX_SIZE] = "max-size",
	[STOP_ERROR] = "error",
};

/* -EFBIG is the file reaching --max-size, not a failure. */
static enum stop_reason write_failed(const struct loop *l, int err)
{
	if (err == -EFBIG)
		return STOP_MAX_SIZE;
	cw_msg("writing %s: %s; stopping", l->env->output, strerror(-err));
	return STOP_ERROR;
}

/* The once-a-second work. @return STOP_NONE to go on. */
static enum stop_reason tick(struct loop *l, uint64_t now, double secs, uint64_t events)
{
	int err = account__flush(l->acct, l->w, now);

	/* Segments reach the file at least once a second; the flusher
	 * thread syncs it to the disk. */
	err = err ?: cw_writer__seal(l->w, CW_SEG_EVENTS);
	err = err ?: flusher__error(l->flusher);
	if (err)
		return write_failed(l, err);
	/* -p: stop once the traced set is empty */
	if (l->env->npids && tracer__traced_count(l->tracer) == 0)
		return STOP_TARGETS;
	if (l->tty) {
		struct account_totals lost;

		account__totals(l->acct, &lost);
		status__line(l->w, &lost, now - l->start_ns, events / secs);
		l->status_shown = true;
	}
	return STOP_NONE;
}

enum stop_reason loop__run(struct loop *l)
{
	uint64_t next_tick = l->start_ns + NS_PER_SEC, last_events = 0;
	enum stop_reason stop = STOP_NONE;
	bool more = false;

	l->tty = isatty(STDERR_FILENO) && !l->env->quiet;
	while (stop == STOP_NONE) {
		uint64_t now;
		int ret;

		/* With records pending, no waiting: just the checks below. */
		ret = drain__poll(l->drain, more ? 0 : POLL_MS);
		if (ret < 0)
			return write_failed(l, ret);
		more = ret > 0;
		ret = perfev_maps__read(l->maps, l->w, l->acct);
		/* The probes of objects just mapped are attached by now. */
		ret = ret ?: uobj__flush(l->uobj, l->w);
		if (ret < 0)
			return write_failed(l, ret);
		if (signals__stop())
			return STOP_SIGNAL;
		if (l->cmd && command__exited(l->cmd))
			return STOP_COMMAND;
		now = clock__now();
		if (l->env->duration_ns && now - l->start_ns >= l->env->duration_ns)
			return STOP_DURATION;
		if (now < next_tick)
			continue;
		stop = tick(l, now, (now - next_tick + NS_PER_SEC) / 1e9,
			    drain__events(l->drain) - last_events);
		last_events = drain__events(l->drain);
		/* Fixed rate, so that poll latency does not stretch the
		 * interval between two seals past a second. */
		next_tick += NS_PER_SEC;
		if (next_tick <= now)
			next_tick = now + NS_PER_SEC;
	}
	return stop;
}

enum stop_reason loop__drain_rest(struct loop *l, enum stop_reason stop)
{
	int signals = signals__count(), ret;

	if (stop == STOP_MAX_SIZE || stop == STOP_ERROR)
		return stop;
	/* Uprobes take a while to detach (uobj.h): they still produce
	 * meanwhile, so drain as the loop does until they are gone. */
	do
		ret = drain__poll(l->drain, POLL_MS);
	while (ret >= 0 && uobj__detaching(l->uobj) && signals__count() == signals);
	/* Nothing produces any more, so this ends; in batches all the same,
	 * so that a user who insists (a second signal) is heard. */
	do
		ret = ret < 0 ? ret : drain__poll(l->drain, 0);
	while (ret > 0 && signals__count() == signals);
	if (ret > 0)
		cw_msg("stopped draining the ring at the second signal: the events left in it are "
		       "not in the trace");
	if (ret >= 0)
		ret = drain__finish(l->drain);
	if (ret >= 0)
		ret = perfev_maps__read(l->maps, l->w, l->acct);
	if (ret >= 0)
		ret = uobj__flush(l->uobj, l->w);
	return ret < 0 ? write_failed(l, ret) : stop;
}
