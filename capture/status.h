/* SPDX-License-Identifier: MIT */
/*
 * What the capture tells its user while it runs and when it ends: a
 * status line on a terminal, refreshed once a second, and the summary.
 */
#ifndef CAUSEWAY_CAPTURE_STATUS_H
#define CAUSEWAY_CAPTURE_STATUS_H

#include <stdbool.h>
#include <stdint.h>

#include "capture/account.h"
#include "capture/counters.h"

struct cw_writer;

/* "\r[  12s]  1234567 ev/s  3.1 MiB written  ratio 40.1x  lost ..." */
void status__line(const struct cw_writer *w, const struct account_totals *lost, uint64_t elapsed_ns,
		  double rate);

/* Ends a status line that was shown. */
void status__end_line(void);

struct summary {
	const char *output;
	uint64_t elapsed_ns;
	const struct capture_counters *c;
	const char *stop_reason;
	const char *stop_detail; /* why, in words, or NULL */
	const char *command;	 /* COMMAND's outcome in words, or NULL */
	const char *runs_missed; /* "prog N,...": see tracer__runs_missed */
};

void status__summary(const struct cw_writer *w, const struct summary *s);

#endif /* CAUSEWAY_CAPTURE_STATUS_H */
