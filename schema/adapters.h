/* SPDX-License-Identifier: MIT */
/*
 * The probes the built-in adapters map, and the argument of each that is
 * a C string: the capture attaches these (of PostgreSQL, only these) and
 * tells its BPF program which argument to copy; the analyzer's adapter
 * rows (analyze/cls_adapter.c) give each an operation and roles, and
 * read a string only where the capture copied one. One table, so the
 * two cannot disagree on what is attached and copied;
 * tests/test_adapter.c checks, over every probe the contract and
 * PostgreSQL ship, that the analyzer's rows map exactly those listed.
 *
 * causeway: docs/model.md §6 (include/causeway.h). The capture attaches every
 * probe of this provider: a program declares only what it wants traced.
 *
 * postgresql: src/backend/utils/probes.d of PostgreSQL 13 and later
 * (the query probes pass its text, LWLock probes name the tranche). Of
 * its probes only these are attached: the others fire on every
 * operation of their kind (each LWLock taken or given back, each WAL
 * insert, each executor start) and, attached, cost pgbench about half
 * its TPS for hits nothing reads. The buffer probes are mapped but
 * attached only on request (causeway-capture --usdt-probes): they fire
 * on every buffer access, hit or miss, and cost pgbench more than every
 * other probe together, while who blocked whom needs only the query and
 * lock probes.
 */
#ifndef CAUSEWAY_ADAPTERS_H
#define CAUSEWAY_ADAPTERS_H

#include <stddef.h>
#include <string.h>
#include "events.h"

struct cw_adapter_probe {
	const char *provider, *name;
	__u8 str_arg;	 /* CW_USDT_NO_STR: none */
	__u8 on_request; /* not in --usdt-probes' default set */
};

static const struct cw_adapter_probe cw_adapter_probes[] = {
	{ "causeway", "task_spawn", CW_USDT_NO_STR, 0 },
	{ "causeway", "task_wake", CW_USDT_NO_STR, 0 },
	{ "causeway", "task_poll_begin", CW_USDT_NO_STR, 0 },
	{ "causeway", "task_poll_end", CW_USDT_NO_STR, 0 },
	{ "causeway", "task_exit", CW_USDT_NO_STR, 0 },
	{ "causeway", "request_begin", 1, 0 },
	{ "causeway", "request_end", CW_USDT_NO_STR, 0 },
	{ "causeway", "resource_acquire", 0, 0 },
	{ "causeway", "resource_release", 0, 0 },
	{ "causeway", "resource_wait_begin", 0, 0 },
	{ "causeway", "resource_wait_end", 0, 0 },
	{ "postgresql", "query__start", 0, 0 },
	/* The text again: the request is its start's, named there. */
	{ "postgresql", "query__done", CW_USDT_NO_STR, 0 },
	{ "postgresql", "lock__wait__start", CW_USDT_NO_STR, 0 },
	{ "postgresql", "lock__wait__done", CW_USDT_NO_STR, 0 },
	{ "postgresql", "lwlock__wait__start", 0, 0 },
	{ "postgresql", "lwlock__wait__done", 0, 0 },
	{ "postgresql", "buffer__read__start", CW_USDT_NO_STR, 1 },
	{ "postgresql", "buffer__read__done", CW_USDT_NO_STR, 1 },
};

#define CW_ADAPTER_NPROBES (sizeof(cw_adapter_probes) / sizeof(cw_adapter_probes[0]))

/* @provider's probe @name in the table, or NULL. */
static inline const struct cw_adapter_probe *cw_adapter_probe(const char *provider,
							      const char *name)
{
	for (size_t i = 0; i < CW_ADAPTER_NPROBES; i++)
		if (!strcmp(provider, cw_adapter_probes[i].provider) &&
		    !strcmp(name, cw_adapter_probes[i].name))
			return &cw_adapter_probes[i];
	return NULL;
}

#endif
