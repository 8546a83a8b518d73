/* SPDX-License-Identifier: MIT */
/*
 * Segment reader: walks a .cwt file segment by segment, verifies every
 * checksum and length, decompresses, decodes the columnar payload, and hands
 * out records. Distrusts every byte: a damaged segment is reported (by
 * sequence number, when its header is intact, and byte offset) and
 * skipped, and reading resynchronises on the next valid segment header.
 * Links lz4 and zlib only.
 */
#ifndef CAUSEWAY_TRACE_READER_H
#define CAUSEWAY_TRACE_READER_H

#include <stddef.h>
#include <stdint.h>
#include "../schema/events.h"

struct cw_reader;

enum cw_diag_level { CW_DIAG_INFO, CW_DIAG_WARN, CW_DIAG_ERROR };

struct cw_reader_opts {
	/* Where messages go; NULL: "causeway-analyze: warning: ..." on
	 * stderr. Each message is one line without the newline, and names
	 * the segment and the byte offset. */
	void (*diag)(void *ctx, enum cw_diag_level level, const char *msg);
	void *diag_ctx;
};

struct cw_segment {
	uint16_t seg_type;  /* CW_SEG_* */
	uint16_t minor;
	uint64_t seq;
	uint64_t offset;    /* byte offset of the header in the file */
	uint64_t first_ts, last_ts;
	uint32_t nrec;      /* records in data, after validation */
	const uint8_t *data; /* records, absolute timestamps; valid until next call */
	size_t len;
};

struct cw_reader_stats {
	uint64_t file_size;
	uint64_t segments_ok;
	uint64_t segments_damaged;  /* bad header/payload crc, bad lz4, bad records */
	uint64_t bytes_skipped;     /* bytes not part of any valid segment */
	uint64_t records;
	int truncated_tail;         /* the file ends inside a segment */
	int clean_close;            /* a CW_SEG_FINAL segment was read */
	uint64_t seq_gaps;          /* missing sequence numbers between valid segments */
	int meta_not_first;         /* the first segment read is not CW_SEG_META */
	uint64_t meta_misplaced;    /* CW_SEG_META segments after an EVENTS or FINAL one */
};

/*
 * Open @path for reading. @return NULL with errno set when the file cannot
 * be opened (the caller reports strerror).
 */
struct cw_reader *cw_reader__open(const char *path, const struct cw_reader_opts *opts);

/*
 * Next valid segment.
 * @return 1 with *seg filled; 0 at end of file; -EPROTO when the file is a
 * trace of a newer major version, -EINVAL when the file holds no valid
 * segment (empty, another format, all damaged) — both already reported
 * through diag; another negative errno for an I/O error.
 */
int cw_reader__next(struct cw_reader *r, struct cw_segment *seg);

/*
 * Iterate the records of @seg: *pos starts at 0. @return a pointer to the
 * next record (its cw_hdr.size bytes are inside seg->data, size >= 16), or
 * NULL at the end. Record sizes were validated by cw_reader__next.
 */
const struct cw_hdr *cw_segment__next_record(const struct cw_segment *seg, size_t *pos);

void cw_reader__stats(const struct cw_reader *r, struct cw_reader_stats *st);
void cw_reader__free(struct cw_reader *r);

#endif /* CAUSEWAY_TRACE_READER_H */
