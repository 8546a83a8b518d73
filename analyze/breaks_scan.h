/* SPDX-License-Identifier: MIT */
/*
 * Pass 1 of the analyzer: read the whole trace once, without joining, to
 * collect the coverage breaks (ring loss from accounting records, damaged
 * or missing segments) and the reader's verdict on the file; and the
 * kallsyms snapshot, so pass 2 can name kernel functions from its first
 * record whatever the records' order; and the mapping records.
 *
 * Mapping records come from the capture's perf side-band rings, which it
 * drains on its own schedule: they can reach the file well after the
 * samples they precede, later than the reorder window can wait for. They
 * are few, so pass 1 keeps them (up to CW_SCAN_MAPS_BYTES) in time order,
 * the /proc snapshot first, and pass 2 hands each to the join just before
 * the first record that is not older than it. Past the bound they are
 * all left where the file has them (maps_overflow).
 */
#ifndef CAUSEWAY_BREAKS_SCAN_H
#define CAUSEWAY_BREAKS_SCAN_H

#include "join.h"
#include "ksyms.h"
#include "trace/reader.h"

struct cw_scan {
	struct cw_breaks *breaks;
	struct cw_ksyms *ksyms; /* the kallsyms snapshot, sorted */
	struct cw_reader_stats rs;
	uint64_t events;	/* records that are not metadata or accounting */
	unsigned minor;		/* format minor version of the first segment */
	/* the mapping records in time order (see above) */
	uint8_t *maps;		/* the records, back to back */
	size_t maps_len, maps_cap;
	size_t *maps_off;	/* their offsets in maps[], sorted */
	size_t nmaps, maps_off_cap;
	int maps_overflow;	/* too many: pass 2 takes them from the file */
	/* per CPU: edge losses the accounting says gap records report, and
	 * what they did report (a capture killed before its close leaves
	 * runs unreported: breaks.c must then cover them another way) */
	struct cw_gap_tally *gaps;
	size_t ngaps;
};

struct cw_gap_tally {
	uint64_t expected, reported;
	uint64_t last_gap;	/* ts of the CPU's last gap record */
	uint64_t first_window;	/* start of the first window with reported losses */
};

#define CW_SCAN_MAPS_BYTES (64u << 20)

/* The time a kept mapping record is handed to the join by: the /proc
 * snapshot (stamped when it was read) before every event. */
static inline uint64_t cw_scan__map_ts(const struct cw_hdr *h)
{
	return (h->flags & CW_MMAP_SNAPSHOT) ? 0 : h->ts;
}

/* @return 0, or the reader's negative errno (-EINVAL: no valid segment,
 * -EPROTO: newer major version; both already reported through @ropts). */
int cw_scan__run(const char *path, const struct cw_reader_opts *ropts, struct cw_scan *scan);
void cw_scan__free(struct cw_scan *scan);

#endif /* CAUSEWAY_BREAKS_SCAN_H */
