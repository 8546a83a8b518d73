// SPDX-License-Identifier: MIT
/*
 * The names of the data model's node, edge, source and confidence types
 * (docs/model.md §4), as the database spells them (join.h declares
 * them). A file of its own below every other: the dispatcher, the
 * classes, carry.c and the database writer all read them.
 */
#include "model.h"

const char *const cw_node_type_names[CW_NODE_NTYPES] = {
#define CW_NODE(id, name, takes) [CW_NODE_##id] = name,
#include "../schema/nodes.def"
};
const uint8_t cw_node_type_takes[CW_NODE_NTYPES] = {
#define CW_NODE(id, name, takes) [CW_NODE_##id] = takes,
#include "../schema/nodes.def"
};
const char *const cw_edge_type_names[CW_EDGE_NTYPES] = {
#define CW_EDGE(id, name, carries) [CW_EDGE_##id] = name,
#include "../schema/edges.def"
};
const uint8_t cw_edge_type_carries[CW_EDGE_NTYPES] = {
#define CW_EDGE(id, name, carries) [CW_EDGE_##id] = carries,
#include "../schema/edges.def"
};
const char *const cw_source_names[] = { "kernel", "runtime", "application", "inferred" };
const char *const cw_confidence_names[CW_CONF_N] = { "observed", "reconstructed", "unknown" };
