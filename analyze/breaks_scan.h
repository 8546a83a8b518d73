/* SPDX-License-Identifier: MIT */
/*
 * Pass 1 of the analyzer: read the whole trace once, without joining, to
 * collect the coverage breaks (ring loss from accounting records, damaged
 * or missing segments) and the reader's verdict on the file; and the
 * kallsyms snapshot, so pass 2 can name kernel functions from its first
 * record whatever the records' order.
 */
#ifndef CAUSEWAY_BREAKS_SCAN_H
#define CAUSEWAY_BREAKS_SCAN_H

#include "join.h"
#include "ksyms.h"
#include "segreader.h"

struct cw_scan {
	struct cw_breaks *breaks;
	struct cw_ksyms *ksyms; /* the kallsyms snapshot, sorted */
	struct cw_reader_stats rs;
	uint64_t events;	/* records that are not metadata or accounting */
	unsigned minor;		/* format minor version of the first segment */
};

/* @return 0, or the reader's negative errno (-EINVAL: no valid segment,
 * -EPROTO: newer major version; both already reported through @ropts). */
int cw_scan__run(const char *path, const struct cw_reader_opts *ropts, struct cw_scan *scan);
void cw_scan__free(struct cw_scan *scan);

#endif /* CAUSEWAY_BREAKS_SCAN_H */
