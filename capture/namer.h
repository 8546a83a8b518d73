/* SPDX-License-Identifier: MIT */
/*
 * Names for the tasks outside the traced set that its records meet (with
 * -p or COMMAND): a load generator whose packets wake the traced server,
 * a thread a traced one switches with. The /proc snapshot at start names
 * the tasks alive then, and forks, execs and renames name the traced
 * set's; a task outside the set born later would be nameless. The first
 * record that names such a task has a CW_REC_META_TASK written before it,
 * read from /proc then (docs/model.md §2.2).
 */
#ifndef CAUSEWAY_CAPTURE_NAMER_H
#define CAUSEWAY_CAPTURE_NAMER_H

#include <stdint.h>

#include "schema/events.h"

struct cw_writer;
struct namer;

/* @return a namer, or NULL with errno set. */
struct namer *namer__new(void);
void namer__free(struct namer *n);

/* Record @h is about to be written by @w: name, once each, the tasks it
 * names. @return 0 or a negative errno of the writer. */
int namer__see(struct namer *n, struct cw_writer *w, const struct cw_hdr *h);

/* Tasks named so far, and those the bound left unnamed. */
uint64_t namer__named(const struct namer *n);
uint64_t namer__dropped(const struct namer *n);

#endif /* CAUSEWAY_CAPTURE_NAMER_H */
