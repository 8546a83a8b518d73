/* SPDX-License-Identifier: MIT */
/*
 * The capture's messages on stderr, each prefixed "causeway-capture: ".
 * Errors always print; notices (what the capture chose, what it lacks)
 * are silenced by -q. A closed stderr is not an error: the capture's
 * exit code says how the capture went, never whether its messages were
 * read (SIGPIPE is ignored, see capture/signals.c).
 */
#ifndef CAUSEWAY_CAPTURE_LOG_H
#define CAUSEWAY_CAPTURE_LOG_H

#include <stdarg.h>
#include <stdbool.h>

#define CW_PROG "causeway-capture"

void cw_log_quiet(bool quiet);
/* -v: cw_verbose() messages are printed too (never with -q). */
void cw_log_verbose(bool verbose);

/* An error or a refusal: printed even under -q. */
void cw_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Information: printed unless -q. */
void cw_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A notice that says nothing was lost: printed only with -v. */
void cw_verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* libbpf's warnings and errors through the same channel; debug dropped. */
void cw_log_libbpf(void);

#endif /* CAUSEWAY_CAPTURE_LOG_H */
