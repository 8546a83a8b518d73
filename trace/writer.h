/* SPDX-License-Identifier: MIT */
/*
 * Segment writer: buffers records, seals them into LZ4-compressed,
 * checksummed segments (trace/format.h) and appends them to a file.
 * Shared by causeway-capture and the fixture compiler, so fixtures are
 * written by exactly the code that writes real traces. Links lz4 and zlib
 * only.
 */
#ifndef CAUSEWAY_TRACE_WRITER_H
#define CAUSEWAY_TRACE_WRITER_H

#include <stddef.h>
#include <stdint.h>

struct cw_writer;

struct cw_writer_opts {
	size_t segment_size; /* raw payload bytes per segment; 0: default 1 MiB */
	int no_ts_delta;     /* plain records, absolute timestamps, no columnar
			      * encoding (tests only) */
};

struct cw_writer_stats {
	uint64_t segments;     /* segments written */
	uint64_t records;      /* records written in those segments */
	uint64_t raw_bytes;    /* record bytes, before encoding and compression */
	uint64_t file_bytes;   /* bytes appended to the file, headers included */
};

/*
 * Start writing segments to @fd at its current offset, first sequence
 * number 0. The writer does not own @fd.
 * @return a writer, or NULL with errno set.
 */
struct cw_writer *cw_writer__new(int fd, const struct cw_writer_opts *opts);

/*
 * Append one record. @rec starts with a struct cw_hdr whose size equals
 * @len. When the pending payload would pass the segment size, the pending
 * records are first sealed, as by cw_writer__split; so they are when,
 * under a limit (cw_writer__set_limit), the record could otherwise take
 * the file past it.
 * @return 0, -EINVAL for a malformed record, -EFBIG when the record does
 * not fit under the limit, or a negative errno from sealing (the record is
 * then not appended).
 */
int cw_writer__append(struct cw_writer *w, const void *rec, size_t len);

/*
 * Never let the file (the bytes this writer appends) pass @max_bytes;
 * 0: no limit. The writer keeps the worst case of the pending records
 * (cw_writer__worst_case) within the limit, sealing early when it must,
 * so a seal never takes the file past it: the limit holds exactly, not
 * on average. A limit below what is already written is -EINVAL.
 */
int cw_writer__set_limit(struct cw_writer *w, uint64_t max_bytes);

/*
 * The most bytes a segment of @nrec records of @raw bytes in all can take
 * in the file, header included, however they encode and compress.
 */
uint64_t cw_writer__worst_case(size_t raw, size_t nrec);

/*
 * Seal the pending records (possibly none) into one segment of @seg_type
 * and write it. With no pending records and @seg_type CW_SEG_EVENTS this
 * does nothing. Metadata and final segments are written even when empty.
 * The first call ends the metadata (schema/format.md: META segments come
 * first, before any EVENTS segment): until it, the segments an append
 * seals are CW_SEG_META, after it CW_SEG_EVENTS.
 * @return 0 or a negative errno (e.g. -ENOSPC); on error, what was
 * written before stays valid, the pending records are kept and the
 * metadata is not ended.
 */
int cw_writer__seal(struct cw_writer *w, uint16_t seg_type);

/*
 * Seal the pending records into a segment of the type they are filling,
 * and go on filling one of that type: CW_SEG_META before the first
 * cw_writer__seal, CW_SEG_EVENTS after. What an append past the segment
 * size does, for a caller that cuts its records into segments itself
 * (the kallsyms snapshot). With no pending records this does nothing.
 * @return as cw_writer__seal.
 */
int cw_writer__split(struct cw_writer *w);

/* Bytes of records waiting for the next seal. */
size_t cw_writer__pending(const struct cw_writer *w);

void cw_writer__stats(const struct cw_writer *w, struct cw_writer_stats *st);

/* Frees the writer; pending records are dropped (seal first). NULL ok. */
void cw_writer__free(struct cw_writer *w);

#endif /* CAUSEWAY_TRACE_WRITER_H */
