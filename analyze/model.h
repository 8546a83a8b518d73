/* SPDX-License-Identifier: MIT */
/*
 * The data model's types (docs/model.md §4): node, edge, source and
 * confidence, and their names as the database spells them (model.c).
 */
#ifndef CAUSEWAY_MODEL_H
#define CAUSEWAY_MODEL_H

#include <stdint.h>

/* The node types: schema/nodes.def. */
enum cw_node_type {
#define CW_NODE(id, name, takes) CW_NODE_##id,
#include "../schema/nodes.def"
	CW_NODE_NTYPES,
};

/* What a handoff into a node carries (schema/nodes.def). */
enum cw_node_takes { CW_TAKES_NONE, CW_TAKES_ALL, CW_TAKES_SPAWN };

/* The edge types: schema/edges.def. */
enum cw_edge_type {
#define CW_EDGE(id, name, carries) CW_EDGE_##id,
#include "../schema/edges.def"
	CW_EDGE_NTYPES,
};

enum cw_source { CW_SRC_KERNEL, CW_SRC_RUNTIME, CW_SRC_APPLICATION, CW_SRC_INFERRED };
enum cw_confidence { CW_CONF_OBSERVED, CW_CONF_RECONSTRUCTED, CW_CONF_UNKNOWN, CW_CONF_N };

/* A segment of a request's critical path (docs/model.md §9): what the
 * request's time was spent on. */
enum cw_crit_kind { CW_CRIT_RUNNING, CW_CRIT_RUNNABLE, CW_CRIT_BLOCKED, CW_CRIT_HANDOFF, CW_CRIT_N };

/*
 * Why the walk of a critical path stopped short of the request's begin
 * (docs/model.md §9): its last segment is blocked, unknown, and says
 * which. CW_STOP_NONE on every other segment.
 */
enum cw_crit_stop {
	CW_STOP_NONE,
	CW_STOP_NO_WAKE,	/* the wait has no wake: none seen, or a break overlaps it */
	CW_STOP_WAIT_OPEN,	/* the wait's end was not seen */
	CW_STOP_CAUSE_UNKNOWN,	/* the wake has no src: an interrupt, an orphan */
	CW_STOP_NOT_RECORDED,	/* a context whose waits the trace does not hold */
	CW_STOP_BREAK,		/* a coverage break: a wait could be missing */
	CW_STOP_BEFORE_FIRST,	/* before the first record of a thread born unseen */
	CW_STOP_BIRTH_UNSEEN,	/* an object whose birth is not in the trace */
	CW_STOP_NO_CONTEXT,	/* a node the walk cannot enter */
	CW_STOP_OUT_OF_ORDER,	/* the evidence contradicts itself in time */
	CW_STOP_BOUND,		/* the walk's bound per request */
	CW_STOP_BUDGET,		/* the analyzer's bound on all walks */
	CW_STOP_N,
};

extern const char *const cw_node_type_names[CW_NODE_NTYPES];
extern const uint8_t cw_node_type_takes[CW_NODE_NTYPES];
extern const char *const cw_edge_type_names[CW_EDGE_NTYPES];
/* 1 where the edge type carries attribution (schema/edges.def). */
extern const uint8_t cw_edge_type_carries[CW_EDGE_NTYPES];
extern const char *const cw_source_names[];
extern const char *const cw_confidence_names[CW_CONF_N];
extern const char *const cw_crit_kind_names[CW_CRIT_N];
/* The reasons' texts; NULL for CW_STOP_NONE. */
extern const char *const cw_crit_stop_names[CW_STOP_N];

#endif /* CAUSEWAY_MODEL_H */
