/* SPDX-License-Identifier: MIT */
/*
 * The data model's types (docs/model.md §4): node, edge, source and
 * confidence, and their names as the database spells them (model.c).
 */
#ifndef CAUSEWAY_MODEL_H
#define CAUSEWAY_MODEL_H

#include <stdint.h>

enum cw_node_type {
	CW_NODE_PROCESS,
	CW_NODE_THREAD,
	CW_NODE_RUNTIME_TASK,
	CW_NODE_IO_REQUEST,
	CW_NODE_WORK_ITEM,
	CW_NODE_TIMER,
	CW_NODE_RESOURCE,
	CW_NODE_REQUEST,
	CW_NODE_PACKET, /* a network packet: one generation per transmit */
	CW_NODE_NTYPES,
};

/* The edge types: schema/edges.def. */
enum cw_edge_type {
#define CW_EDGE(id, name, carries) CW_EDGE_##id,
#include "../schema/edges.def"
	CW_EDGE_NTYPES,
};

enum cw_source { CW_SRC_KERNEL, CW_SRC_RUNTIME, CW_SRC_APPLICATION, CW_SRC_INFERRED };
enum cw_confidence { CW_CONF_OBSERVED, CW_CONF_RECONSTRUCTED, CW_CONF_UNKNOWN, CW_CONF_N };

extern const char *const cw_node_type_names[CW_NODE_NTYPES];
extern const char *const cw_edge_type_names[CW_EDGE_NTYPES];
/* 1 where the edge type carries attribution (schema/edges.def). */
extern const uint8_t cw_edge_type_carries[CW_EDGE_NTYPES];
extern const char *const cw_source_names[];
extern const char *const cw_confidence_names[CW_CONF_N];

#endif /* CAUSEWAY_MODEL_H */
