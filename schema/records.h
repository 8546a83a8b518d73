/* SPDX-License-Identifier: MIT */
/*
 * What user space knows of each record type, expanded from
 * schema/records.def: its name, its size, the least size a reader
 * accepts, and who writes it. The capture's drain and the analyzer check
 * records by these, so the two cannot disagree.
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
	CW_RW_BPF_VAR,	/* BPF: as long as its counts say (a sample) */
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

#endif /* CAUSEWAY_RECORDS_H */
