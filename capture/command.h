/* SPDX-License-Identifier: MIT */
/*
 * -- COMMAND: the traced child. It is forked before the programs load
 * and waits on a pipe, so that it execs only once its pid is in the
 * traced set and the programs are attached: its first events are
 * recorded. A second pipe, closed by a successful exec (O_CLOEXEC), tells
 * the capture whether the exec failed and why.
 *
 * The child dies with the capture (PR_SET_PDEATHSIG, SIGKILL): a capture
 * killed with SIGKILL leaves no command running behind it. It execs with
 * empty ambient and inheritable capability sets: the privilege given to
 * the capture is not the command's.
 */
#ifndef CAUSEWAY_CAPTURE_COMMAND_H
#define CAUSEWAY_CAPTURE_COMMAND_H

#include <stdbool.h>
#include <sys/types.h>

struct command;

/* Fork @argv[0] with @argv, waiting. @return NULL after a message. */
struct command *command__start(char **argv);

pid_t command__pid(const struct command *c);

/*
 * Let the command exec and wait for the outcome. @return 0 once it has
 * exec'd, or a negative errno after a message naming the command (the
 * exec failed: the capture cannot start).
 */
int command__release(struct command *c);

/* Has the command exited? Reaps it. */
bool command__exited(struct command *c);

/* End a command still running: SIGTERM, then SIGKILL after 2 s. */
void command__stop(struct command *c);

/*
 * The exit code the capture passes on: the command's status, 128 + N
 * when a signal N killed it (as a shell says it). -1 when it did not run.
 */
int command__exit_code(const struct command *c);

/* The status in words ("exited with status 3", "killed by signal 15"). */
const char *command__describe(const struct command *c, char *buf, size_t len);

/* Stop (command__stop), reap and free; a command never released exits
 * without running. NULL ok. */
void command__free(struct command *c);

#endif /* CAUSEWAY_CAPTURE_COMMAND_H */
