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

extern const char *const cw_node_type_names[CW_NODE_NTYPES];
extern const uint8_t cw_node_type_takes[CW_NODE_NTYPES];
extern const char *const cw_edge_type_names[CW_EDGE_NTYPES];
/* 1 where the edge type carries attribution (schema/edges.def). */
extern const uint8_t cw_edge_type_carries[CW_EDGE_NTYPES];
extern const char *const cw_source_names[];
extern const char *const cw_confidence_names[CW_CONF_N];

#endif /* CAUSEWAY_MODEL_H */
