/* SPDX-License-Identifier: MIT */
/*
 * What user space knows of each record type, expanded from
 * schema/records.def: its name, its size, the least size a reader
 * accepts, and who writes it; and the validity rule of a stack sample,
 * the one record whose size its contents give. The capture's drain and
 * the analyzer check records by these, so the two cannot disagree.
 */
#ifndef CAUSEWAY_RECORDS_H
#define CAUSEWAY_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "events.h"

/* Who writes a record type (the writer column of records.def). */
enum {
	CW_RW_USER = 1, /* user space: the struct, then what its lengths say */
	CW_RW_BPF,	/* BPF: exactly the struct */
	CW_RW_BPF_VAR,	/* BPF: as long as its counts say (cw_sample_ok) */
};

struct cw_rec_info {
	const char *name; /* NULL: not a type this build knows */
	uint16_t size;	  /* sizeof its struct */
	/* The least size read: the struct, or for a record that grew in a
	 * minor version the offset of the first field appended. */
	uint16_t min_size;
	uint8_t writer; /* CW_RW_* */
};

/* Indexed by record type: record types are class << 4 | n, 16 classes. */
#define CW_REC_NTYPES 256

static const struct cw_rec_info cw_rec_infos[CW_REC_NTYPES] = {
#define CW_REC(id, type, name, st, writer) \
	[type] = { name, sizeof(struct st), sizeof(struct st), writer },
#define CW_REC_GREW(id, type, name, st, writer, field) \
	[type] = { name, sizeof(struct st), offsetof(struct st, field), writer },
#include "records.def"
};

/* @return what is known of record type @type, or NULL for an unknown type. */
static inline const struct cw_rec_info *cw_rec_info(unsigned type)
{
	return type < CW_REC_NTYPES && cw_rec_infos[type].name ? &cw_rec_infos[type] : NULL;
}

/*
 * Is the sample @s of @size bytes (buffer and hdr.size alike) what BPF
 * writes (bpf/sample.bpf.c, schema/format.md)? Its size must be exactly
 * 64 + 8 * (nkernel + nuser + nregs) + stack_len rounded up to 8, the
 * counts within CW_SAMPLE_MAX_FRAMES and CW_SAMPLE_MAX_STACK, nregs 0 or
 * CW_SAMPLE_NREGS_X86_64 (dwarf mode carries registers and a stack copy,
 * frame-pointer mode user[]: never both, never a copy without
 * registers), keep in (0, 2^32] and a CPU sample's period not 0. Reads
 * only the fixed part, and that only when @size holds it.
 */
/* The fixed part of sample @s, before its stacks: a cw_sample, or a
 * cw_sample_caused (read only once the header says the type). */
static inline size_t cw_sample_fixed(const struct cw_sample *s)
{
	return s->hdr.type == CW_REC_SAMPLE_CPU_CAUSED ? sizeof(struct cw_sample_caused)
						       : sizeof(struct cw_sample);
}

static inline bool cw_sample_ok(const struct cw_sample *s, size_t size)
{
	size_t fixed;

	if (size < sizeof(*s) || s->hdr.size != size)
		return false;
	fixed = cw_sample_fixed(s);
	if (size < fixed)
		return false;
	if (s->nkernel > CW_SAMPLE_MAX_FRAMES || s->nuser > CW_SAMPLE_MAX_FRAMES ||
	    s->stack_len > CW_SAMPLE_MAX_STACK)
		return false;
	if (s->nregs != 0 && s->nregs != CW_SAMPLE_NREGS_X86_64)
		return false;
	if ((s->nregs && s->nuser) || (!s->nregs && s->stack_len))
		return false;
	if (!s->keep || s->keep > CW_KEEP_ALL)
		return false;
	if (s->hdr.type != CW_REC_SAMPLE_OFFCPU && !s->period)
		return false;
	return size == fixed + 8 * ((size_t)s->nkernel + s->nuser + s->nregs) +
			       (((size_t)s->stack_len + 7) & ~(size_t)7);
}

#endif /* CAUSEWAY_RECORDS_H */
