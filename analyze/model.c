// SPDX-License-Identifier: MIT
/*
 * The names of the data model's node, edge, source and confidence types
 * (docs/model.md §4) and of the critical path's kinds and stops (§8), as
 * the database spells them (join.h declares
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
const char *const cw_crit_kind_names[CW_CRIT_N] = { "running", "runnable", "blocked", "handoff" };
const char *const cw_crit_stop_names[CW_STOP_N] = {
	[CW_STOP_NO_WAKE] = "no wake seen",
	[CW_STOP_WAIT_OPEN] = "wait end not seen",
	[CW_STOP_CAUSE_UNKNOWN] = "wake cause unknown",
	[CW_STOP_NOT_RECORDED] = "waits not recorded",
	[CW_STOP_BREAK] = "coverage break",
	[CW_STOP_BEFORE_FIRST] = "before the thread's first record",
	[CW_STOP_BIRTH_UNSEEN] = "birth not in trace",
	[CW_STOP_NO_CONTEXT] = "no context to enter",
	[CW_STOP_OUT_OF_ORDER] = "times out of order",
	[CW_STOP_BOUND] = "walk bound",
	[CW_STOP_BUDGET] = "analyzer budget spent",
};
