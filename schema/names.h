/* SPDX-License-Identifier: MIT */
/*
 * The names of classes, rings, contexts and record types, used by the
 * capture (-e, status, accounting), the analyzer (-e, coverage break
 * reasons, summaries) and the text form (dump, fixtures). Those of rings,
 * contexts and causes are defined here; those of classes and record types
 * are expanded from schema/classes.def and schema/records.def. The names
 * are part of the interface: -e takes them, the text form and
 * coverage_breaks.reason print them.
 */
#ifndef CAUSEWAY_NAMES_H
#define CAUSEWAY_NAMES_H

#include <stddef.h>
#include <string.h>
#include "events.h"

/* Indexed by CW_CLASS_*. */
static const char *const cw_class_names[CW_CLASS_MAX] = {
#define CW_CLASS(id, n, name, ename, kind, aclass, join) [CW_CLASS_##id] = name,
#include "classes.def"
};

/* What a class is (schema/classes.def). */
enum { CW_CK_EDGE, CW_CK_CONTEXT, CW_CK_META };

/* The classes in the order -e lists them, with their -e names. */
static const struct {
	unsigned char id; /* CW_CLASS_* */
	unsigned char kind; /* CW_CK_* */
	const char *name, *ename;
} cw_class_table[] = {
#define CW_CLASS(id, n, name, ename, kind, aclass, join) { CW_CLASS_##id, kind, name, ename },
#include "classes.def"
};

/* Indexed by CW_CAUSE_*. */
static const char *const cw_cause_names[CW_CAUSE_MAX] = {
	[CW_CAUSE_NONE] = "none",
	[CW_CAUSE_HRTIMER] = "hrtimer",
	[CW_CAUSE_TIMER] = "timer",
	[CW_CAUSE_WORK] = "work",
	[CW_CAUSE_PACKET] = "packet",
	[CW_CAUSE_IO_REQ] = "io_req",
	[CW_CAUSE_FUTEX] = "futex",
	[CW_CAUSE_BLOCK] = "block",
};

/* Indexed by CW_RING_*. */
static const char *const cw_ring_names[CW_RING_MAX] = {
	[CW_RING_EDGE] = "edge",
	[CW_RING_SAMPLE] = "sample",
	[CW_RING_MAP] = "map",
};

/* Indexed by CW_CTX_*. */
static const char *const cw_ctx_names[CW_CTX_MAX] = {
	[CW_CTX_TASK] = "task",
	[CW_CTX_SOFTIRQ] = "softirq",
	[CW_CTX_HARDIRQ] = "hardirq",
	[CW_CTX_NMI] = "nmi",
	[CW_CTX_UNKNOWN] = "unknown",
};

/* Record type names, as the text form spells them. */
static const struct {
	unsigned short type;
	const char *name;
} cw_rec_names[] = {
#define CW_REC(id, type, name, st, writer) { CW_REC_##id, name },
#include "records.def"
};

#define CW_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* @return the name of @v in @names[n], or NULL when out of range. */
static inline const char *cw_name_of(const char *const *names, size_t n, unsigned v)
{
	return v < n ? names[v] : NULL;
}

/* @return the index of @name in @names[n], or -1. */
static inline int cw_name_find(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], name))
			return (int)i;
	return -1;
}

static inline const char *cw_rec_name(unsigned type)
{
	for (size_t i = 0; i < CW_ARRAY_SIZE(cw_rec_names); i++)
		if (cw_rec_names[i].type == type)
			return cw_rec_names[i].name;
	return NULL;
}

/* @return the CW_CK_* of class @id, or -1 for a number no class has. */
static inline int cw_class_kind(unsigned id)
{
	for (size_t i = 0; i < CW_ARRAY_SIZE(cw_class_table); i++)
		if (cw_class_table[i].id == id)
			return cw_class_table[i].kind;
	return -1;
}

/*
 * The edge class -e calls @name: by its -e name, or with @by_name by its
 * name too (the two are one today: the adapter class is "usdt" since
 * format 1.10, in the metadata as in -e; the analyzer, which prints the
 * classes it joined by their -e names, takes only those).
 * @return its CW_CLASS_*, or -1: not a class, or one -e cannot choose
 * (the metadata, the samples).
 */
static inline int cw_class_find_edge(const char *name, int by_name)
{
	for (size_t i = 0; i < CW_ARRAY_SIZE(cw_class_table); i++)
		if (cw_class_table[i].kind == CW_CK_EDGE &&
		    (!strcmp(name, cw_class_table[i].ename) ||
		     (by_name && !strcmp(name, cw_class_table[i].name))))
			return cw_class_table[i].id;
	return -1;
}

/* The -e spelling of the edge classes in @buf: "sched,io_uring,...,usdt".
 * @return @buf. */
static inline char *cw_class_edge_list(char *buf, size_t len)
{
	size_t off = 0;

	if (len)
		buf[0] = 0;
	for (size_t i = 0; i < CW_ARRAY_SIZE(cw_class_table); i++) {
		size_t n = strlen(cw_class_table[i].ename);

		if (cw_class_table[i].kind != CW_CK_EDGE || off + !!off + n >= len)
			continue;
		if (off)
			buf[off++] = ',';
		memcpy(buf + off, cw_class_table[i].ename, n + 1);
		off += n;
	}
	return buf;
}

#endif /* CAUSEWAY_NAMES_H */
