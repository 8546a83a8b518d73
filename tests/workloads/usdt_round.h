/* SPDX-License-Identifier: MIT */
/*
 * What usdt_basic.c and its library (lib/usdt_dl.c) share: one round of
 * the 11 adapter probes, and whether they are attached. Static, so that
 * each translation unit that includes it fires and tests its own probes
 * (include/causeway.h gives every unit its own semaphores). Include after
 * causeway.h. usdt_basic.c's truth() writes what a round fires.
 */
#ifndef CAUSEWAY_WORKLOAD_USDT_ROUND_H
#define CAUSEWAY_WORKLOAD_USDT_ROUND_H

#include <stdint.h>
#include <stdio.h>

/* All the probes of this translation unit are attached: the kernel has
 * raised their semaphores. */
static inline int usdt_all_on(void)
{
	return CAUSEWAY_ON_(task_spawn) && CAUSEWAY_ON_(task_wake) && CAUSEWAY_ON_(task_poll_begin) &&
	       CAUSEWAY_ON_(task_poll_end) && CAUSEWAY_ON_(task_exit) &&
	       CAUSEWAY_ON_(request_begin) && CAUSEWAY_ON_(request_end) &&
	       CAUSEWAY_ON_(resource_acquire) && CAUSEWAY_ON_(resource_release) &&
	       CAUSEWAY_ON_(resource_wait_begin) && CAUSEWAY_ON_(resource_wait_end);
}

/* Round @i: ids from @base, strings from @prefix ("PREFIX-request-I",
 * "PREFIX_cache", "PREFIX_lock"); a negative status. */
static inline void usdt_round(uint64_t base, int i, const char *prefix)
{
	char name[64], cache[32], lock[32];

	snprintf(name, sizeof(name), "%s-request-%d", prefix, i);
	snprintf(cache, sizeof(cache), "%s_cache", prefix);
	snprintf(lock, sizeof(lock), "%s_lock", prefix);
	causeway_task_spawn(base + 100 + i, base + i);
	causeway_task_wake(base + 100 + i);
	causeway_task_poll_begin(base + 100 + i);
	causeway_task_poll_end(base + 100 + i);
	causeway_task_exit(base + 100 + i);
	causeway_request_begin(base + 200 + i, name);
	causeway_request_end(base + 200 + i, -(int64_t)i);
	causeway_resource_acquire(cache, base + 300 + i);
	causeway_resource_wait_begin(lock, base + 400 + i);
	causeway_resource_wait_end(lock, base + 400 + i);
	causeway_resource_release(cache, base + 300 + i);
}

#endif
