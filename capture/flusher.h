/* SPDX-License-Identifier: MIT */
/*
 * The flusher: a thread that fdatasync()s the trace file once a second.
 * fdatasync can take half a second on a busy disk; done in the drain loop
 * it stalls the consumer while the ring fills, and edges are lost. In its
 * own thread it only costs the disk. (A killed capture loses nothing that
 * write() returned: the page cache survives the process. The sync is for
 * the machine going down.)
 */
#ifndef CAUSEWAY_FLUSHER_H
#define CAUSEWAY_FLUSHER_H

struct flusher;

/* Start syncing @fd every second. NULL with errno set on failure. */
struct flusher *flusher__start(int fd);
/* The first error a sync returned (negative errno), or 0. */
int flusher__error(struct flusher *f);
/* Stop and join the thread. NULL ok. */
void flusher__stop(struct flusher *f);

#endif /* CAUSEWAY_FLUSHER_H */
