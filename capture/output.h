/* SPDX-License-Identifier: MIT */
/*
 * The trace file. It is written under a temporary name beside its final
 * one (O_EXCL, O_NOFOLLOW, mode 0600) and renamed into place only once
 * the capture has really started: a capture that cannot start leaves
 * nothing behind, and with --force the old trace stays until a new one
 * replaces it in one step. A symbolic link or anything but a regular file
 * at the final name is refused, as is an existing file without --force.
 */
#ifndef CAUSEWAY_CAPTURE_OUTPUT_H
#define CAUSEWAY_CAPTURE_OUTPUT_H

#include <stdbool.h>

struct output;

/* Check @path and create the temporary file. @return NULL after a
 * message. */
struct output *output__create(const char *path, bool force);

int output__fd(const struct output *o);

/*
 * Under sudo, hand the file to SUDO_UID/SUDO_GID (when set and valid), so
 * the unprivileged analyzer can read it; then rename it into place.
 * @return 0, or a negative errno after a message.
 */
int output__commit(struct output *o);

/* Close; a file never committed is removed. NULL ok. */
void output__free(struct output *o);

#endif /* CAUSEWAY_CAPTURE_OUTPUT_H */
