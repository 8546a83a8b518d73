/* SPDX-License-Identifier: MIT */
/*
 * Signals that end a capture. SIGINT, SIGTERM and SIGHUP (a dropped SSH
 * session) all mean "stop cleanly": drain the ring, write the final
 * segment, exit 0; a SIGHUP that was ignored when the capture started
 * (nohup) stays ignored. The handler only records the signal; the drain loop
 * wakes at least every 100 ms and sees it. SIGPIPE is ignored: a closed
 * stderr or stdout must not end a capture or change its exit code.
 */
#ifndef CAUSEWAY_CAPTURE_SIGNALS_H
#define CAUSEWAY_CAPTURE_SIGNALS_H

/*
 * Install the handlers and unblock those signals, first thing in main():
 * a signal that arrives while the programs load must not kill the capture
 * with a partial file, nor stay blocked because whoever started the
 * capture had blocked it. @return 0 or a negative errno.
 */
int signals__install(void);

/* The first stop signal received, or 0. */
int signals__stop(void);

/* How many stop signals were received (a second one cuts the final
 * drain short). */
int signals__count(void);

/*
 * In a forked child about to exec COMMAND: the dispositions and mask the
 * capture was started with, as if the command had been run directly.
 * Caught signals reset themselves at exec, but an ignored SIGPIPE would
 * be inherited. Async-signal-safe.
 */
void signals__default(void);

#endif /* CAUSEWAY_CAPTURE_SIGNALS_H */
