/* SPDX-License-Identifier: MIT */
/*
 * The kallsyms snapshot of the trace (CW_REC_META_KSYMS records): kernel
 * addresses to function names, for work items, timers and, later, kernel
 * stack frames. Read in pass 1, so every event of pass 2 can be named
 * whatever the order of the records.
 *
 * The snapshot is untrusted input: symbols and name bytes are bounded
 * (CW_KSYMS_MAX, CW_KSYMS_BYTES); what does not fit is counted in
 * dropped, never stored, and lines that do not parse are skipped.
 */
#ifndef CAUSEWAY_KSYMS_H
#define CAUSEWAY_KSYMS_H

#include <stddef.h>
#include <stdint.h>

#define CW_KSYMS_MAX (4u << 20)	   /* symbols */
#define CW_KSYMS_BYTES (128u << 20) /* bytes of names */

struct cw_ksyms;

struct cw_ksyms *cw_ksyms__new(void);
/* With smaller bounds (tests); 0 keeps a default. */
struct cw_ksyms *cw_ksyms__new_bounded(size_t max_syms, size_t max_bytes);
void cw_ksyms__free(struct cw_ksyms *k);

/* Add the lines of one snapshot record. @return 0 or -ENOMEM. */
int cw_ksyms__add(struct cw_ksyms *k, const char *text, size_t len);

/* Sort; call once after the last add and before the first lookup. */
void cw_ksyms__finish(struct cw_ksyms *k);

size_t cw_ksyms__count(const struct cw_ksyms *k);
uint64_t cw_ksyms__dropped(const struct cw_ksyms *k);

/*
 * The symbol at or below @addr: its name, and *off the distance from it.
 * NULL when there is none (or @k is NULL). Without the symbol sizes the
 * nearest one below is only a guess for an address far from it: callers
 * print the offset.
 */
const char *cw_ksyms__lookup(const struct cw_ksyms *k, uint64_t addr, uint64_t *off);

/* The same, and *@module the kernel module holding the symbol (the
 * snapshot's "[name]" without brackets), NULL for the kernel itself.
 * @module may be NULL. */
const char *cw_ksyms__lookup_module(const struct cw_ksyms *k, uint64_t addr, uint64_t *off,
				    const char **module);

/* "name" for an exact match, "name+0xOFF" otherwise, "0xADDR" when none.
 * @return @buf. */
char *cw_ksyms__name(const struct cw_ksyms *k, uint64_t addr, char *buf, size_t len);

#endif /* CAUSEWAY_KSYMS_H */
