/* SPDX-License-Identifier: MIT */
/*
 * The kallsyms snapshot (docs/model.md §2.1): the kernel's text symbols from
 * /proc/kallsyms, read once at start and written into the metadata as
 * CW_REC_META_KSYMS records (schema/format.md), so the offline analyzer
 * can name work functions, timer functions and kernel stack frames of
 * this boot. Knows nothing of BPF.
 *
 * Kept: types t, T (text) and w, W (weak: a weak default of a function
 * is listed W whatever its section). Left out: data symbols, and the
 * __pfx_ padding symbols before every function (no function starts
 * there; they are half of the text symbols of a kernel built with
 * function padding).
 */
#ifndef CAUSEWAY_CAPTURE_KSYMS_H
#define CAUSEWAY_CAPTURE_KSYMS_H

#include <stddef.h>
#include <stdint.h>

struct cw_writer;

struct ksyms_snap;

/*
 * Read @path (/proc/kallsyms). @return a snapshot, or NULL with errno
 * set; ENOENT-like failures mean no snapshot, not a failed capture.
 * When every address reads as 0 (kptr_restrict hides them from this
 * process) the snapshot is empty and ksyms_snap__hidden() says so.
 */
struct ksyms_snap *ksyms_snap__read(const char *path);

/* Symbols kept, and their bytes of text (whole lines). */
size_t ksyms_snap__count(const struct ksyms_snap *s);
size_t ksyms_snap__bytes(const struct ksyms_snap *s);
/* Were the addresses hidden? */
int ksyms_snap__hidden(const struct ksyms_snap *s);

/*
 * Append the snapshot as CW_REC_META_KSYMS records of whole lines, each
 * at most about 60 KiB, with time @ts. Before a record would take the
 * pending metadata past @seg_size raw bytes, the pending records are
 * sealed (cw_writer__split: a CW_SEG_META segment, while the metadata is
 * written), so the metadata continues over several metadata segments.
 * @return 0 or a negative errno.
 */
int ksyms_snap__write(const struct ksyms_snap *s, struct cw_writer *w, uint64_t ts,
		      size_t seg_size);

void ksyms_snap__free(struct ksyms_snap *s);

#endif /* CAUSEWAY_CAPTURE_KSYMS_H */
