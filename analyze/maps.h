/* SPDX-License-Identifier: MIT */
/*
 * Address spaces: the executable mappings of every process of the trace
 * as they stand at the record being joined, from the CW_REC_META_MMAP
 * records (the /proc snapshot and mmap2 changes) and the sched records
 * that change an address space wholesale (exec empties it, fork copies
 * the parent's, the group's exit drops it). Bounded: past max_mappings
 * in all, the address space least recently named is dropped whole (and
 * counted), and so is one process's past 8192 mappings; its addresses
 * then stay unsymbolized, never misattributed.
 */
#ifndef CAUSEWAY_MAPS_H
#define CAUSEWAY_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include "../schema/events.h"

struct cw_maps;

/* One mapping; the strings live as long as the cw_maps. */
struct cw_mapping {
	uint64_t start, end; /* [start, end) */
	uint64_t pgoff;	     /* file offset of start */
	const char *path;    /* interned */
	uint8_t build_id[20];
	uint8_t build_id_len; /* 0: not recorded */
};

struct cw_maps *cw_maps__new(size_t max_mappings); /* 0: default */
void cw_maps__free(struct cw_maps *m);

/* A CW_REC_META_MMAP record (its path follows it in @rec): the mapping
 * replaces whatever it overlaps in @rec->task.pid's address space.
 * @return 0, 1 when the record is malformed (nothing changed), -ENOMEM. */
int cw_maps__mmap(struct cw_maps *m, const struct cw_mmap *rec);
/* exec: @pid's address space starts empty. */
void cw_maps__exec(struct cw_maps *m, uint32_t pid);
/* fork of a process (not a thread): @child gets a copy of @parent's. */
int cw_maps__fork(struct cw_maps *m, uint32_t parent, uint32_t child);
/* The process is gone. */
void cw_maps__exit(struct cw_maps *m, uint32_t pid);

/* The mapping of @pid holding @addr, or NULL. */
const struct cw_mapping *cw_maps__find(struct cw_maps *m, uint32_t pid, uint64_t addr);

/* Every mapping of @pid, in address order (for the unwinder): *n of them,
 * valid until the next change to @m. A version that changes whenever
 * @pid's mappings do (0: none known) lets a caller cache by it. */
const struct cw_mapping *cw_maps__all(struct cw_maps *m, uint32_t pid, size_t *n,
				      uint64_t *version);

/* Address spaces dropped by the bound. */
uint64_t cw_maps__dropped(const struct cw_maps *m);

/*
 * Interned strings (the paths here, and the symbolizer's names): one copy
 * of each, stable until the table is freed. Bounded: past @max_bytes (0:
 * no bound) a new string is refused.
 */
struct cw_strtab;
struct cw_strtab *cw_strtab__new(size_t max_bytes);
void cw_strtab__free(struct cw_strtab *t);
/* @return the copy of s[0..len) (no NUL inside), or NULL with errno
 * ENOSPC (past the bound) or ENOMEM. */
const char *cw_strtab__intern(struct cw_strtab *t, const char *s, size_t len);

#endif /* CAUSEWAY_MAPS_H */
