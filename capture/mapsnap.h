/* SPDX-License-Identifier: MIT */
/*
 * The initial snapshot of executable mappings (docs/model.md §2.1), read from
 * /proc/PID/maps with each object's build-id, written as CW_REC_META_MMAP
 * records flagged CW_MMAP_SNAPSHOT. Mappings made later come from the
 * perf rings (perfev.h). Knows nothing of BPF.
 */
#ifndef CAUSEWAY_CAPTURE_MAPSNAP_H
#define CAUSEWAY_CAPTURE_MAPSNAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cw_writer;

/*
 * Write the executable file-backed mappings (and [vdso]) of processes
 * @pids[0..n), or with @pids NULL of every process but @skip, stamped
 * @ts. A process that exits meanwhile is skipped. *@count: records
 * written. @return 0 or the writer's negative errno.
 */
int mapsnap__write(struct cw_writer *w, const pid_t *pids, size_t n, pid_t skip, uint64_t ts,
		   uint64_t *count);

#endif /* CAUSEWAY_CAPTURE_MAPSNAP_H */
