/* SPDX-License-Identifier: MIT */
/*
 * causeway.h — the adapter contract for C and C++ programs
 * (docs/model.md §6): USDT probes that declare runtime tasks, requests and
 * resources, which kernel events cannot see. Header only; needs
 * <sys/sdt.h> (Debian: systemtap-sdt-dev).
 *
 * Every probe is guarded by its own semaphore, which the kernel raises
 * only while a tracer (causeway-capture -e usdt) is attached to it. An
 * untraced probe is one load and one predictable branch: the arguments
 * are not even evaluated. Measured cost: see docs/model.md §6 (and
 * bench/README.md), bench/usdt_cost.c.
 *
 * Ids are 64-bit values of the program's choosing, scoped to the process:
 * two processes may use the same task id for different tasks. An id
 * reused after its end (task_exit, request_end) names a new generation.
 * Strings (a request's name, a resource kind) are read when the probe
 * fires, up to 255 bytes; they must be NUL-terminated and readable then.
 *
 * Usage:
 *   #include "causeway.h"
 *   causeway_request_begin(req->id, "GET /index");
 *   ...
 *   causeway_request_end(req->id, 200);
 */
#ifndef CAUSEWAY_ADAPTER_H
#define CAUSEWAY_ADAPTER_H

#ifndef _SDT_HAS_SEMAPHORES
#define _SDT_HAS_SEMAPHORES 1
#endif
#include <stdint.h>
#include <sys/sdt.h>

/*
 * One semaphore per probe and translation unit, in the section where
 * USDT tools look for them; sys/sdt.h records its address in each probe
 * site's note. Static, so that the header needs no .c file.
 */
#define CAUSEWAY_SEMAPHORE_(name)                                                          \
	__extension__ static volatile unsigned short causeway_##name##_semaphore              \
		__attribute__((unused, section(".probes")))
#define CAUSEWAY_ON_(name) __builtin_expect(causeway_##name##_semaphore != 0, 0)

CAUSEWAY_SEMAPHORE_(task_spawn);
CAUSEWAY_SEMAPHORE_(task_wake);
CAUSEWAY_SEMAPHORE_(task_poll_begin);
CAUSEWAY_SEMAPHORE_(task_poll_end);
CAUSEWAY_SEMAPHORE_(task_exit);
CAUSEWAY_SEMAPHORE_(request_begin);
CAUSEWAY_SEMAPHORE_(request_end);
CAUSEWAY_SEMAPHORE_(resource_acquire);
CAUSEWAY_SEMAPHORE_(resource_release);
CAUSEWAY_SEMAPHORE_(resource_wait_begin);
CAUSEWAY_SEMAPHORE_(resource_wait_end);

/* ---- runtime tasks ---------------------------------------------------- */

/* Task @task is created by task @parent (0: by the thread itself, outside
 * any task). Its birth: a runtime_task node and a spawn edge. */
#define causeway_task_spawn(task, parent)                                                  \
	do {                                                                               \
		if (CAUSEWAY_ON_(task_spawn))                                              \
			STAP_PROBE2(causeway, task_spawn, (uint64_t)(task), (uint64_t)(parent)); \
	} while (0)

/* Task @task is made runnable by the current context (a wake edge from
 * the running task, request or thread). */
#define causeway_task_wake(task)                                                           \
	do {                                                                               \
		if (CAUSEWAY_ON_(task_wake))                                               \
			STAP_PROBE1(causeway, task_wake, (uint64_t)(task));                \
	} while (0)

/* The current thread starts running task @task (a resume edge task ->
 * thread); until task_poll_end the task is what this thread runs. */
#define causeway_task_poll_begin(task)                                                     \
	do {                                                                               \
		if (CAUSEWAY_ON_(task_poll_begin))                                         \
			STAP_PROBE1(causeway, task_poll_begin, (uint64_t)(task));          \
	} while (0)

/* The current thread stops running task @task (it yields or finishes). */
#define causeway_task_poll_end(task)                                                       \
	do {                                                                               \
		if (CAUSEWAY_ON_(task_poll_end))                                           \
			STAP_PROBE1(causeway, task_poll_end, (uint64_t)(task));            \
	} while (0)

/* Task @task is finished: its id may be reused for a new task. */
#define causeway_task_exit(task)                                                           \
	do {                                                                               \
		if (CAUSEWAY_ON_(task_exit))                                               \
			STAP_PROBE1(causeway, task_exit, (uint64_t)(task));                \
	} while (0)

/* ---- requests --------------------------------------------------------- */

/* The current thread begins request @id, named @name (a string, copied
 * when the probe fires); until request_end what it does is the
 * request's (unless it polls a task). */
#define causeway_request_begin(id, name)                                                   \
	do {                                                                               \
		if (CAUSEWAY_ON_(request_begin))                                           \
			STAP_PROBE2(causeway, request_begin, (uint64_t)(id), (const char *)(name)); \
	} while (0)

/* Request @id ends on the current thread with @status (the program's
 * own code: an HTTP status, an errno, 0). */
#define causeway_request_end(id, status)                                                   \
	do {                                                                               \
		if (CAUSEWAY_ON_(request_end))                                             \
			STAP_PROBE2(causeway, request_end, (uint64_t)(id), (int64_t)(status)); \
	} while (0)

/* ---- resources -------------------------------------------------------- */

/* The running context takes resource (@kind, @id): @kind a string such
 * as "cache_entry" or "mutex", @id its number within the kind. */
#define causeway_resource_acquire(kind, id)                                                \
	do {                                                                               \
		if (CAUSEWAY_ON_(resource_acquire))                                        \
			STAP_PROBE2(causeway, resource_acquire, (const char *)(kind), (uint64_t)(id)); \
	} while (0)

/* The running context gives resource (@kind, @id) back. */
#define causeway_resource_release(kind, id)                                                \
	do {                                                                               \
		if (CAUSEWAY_ON_(resource_release))                                        \
			STAP_PROBE2(causeway, resource_release, (const char *)(kind), (uint64_t)(id)); \
	} while (0)

/* The running context starts waiting for resource (@kind, @id), held by
 * someone else; wait_end when it has it (or gives up). The kernel wake
 * that ends the wait names who let it go. */
#define causeway_resource_wait_begin(kind, id)                                             \
	do {                                                                               \
		if (CAUSEWAY_ON_(resource_wait_begin))                                     \
			STAP_PROBE2(causeway, resource_wait_begin, (const char *)(kind), (uint64_t)(id)); \
	} while (0)

#define causeway_resource_wait_end(kind, id)                                               \
	do {                                                                               \
		if (CAUSEWAY_ON_(resource_wait_end))                                       \
			STAP_PROBE2(causeway, resource_wait_end, (const char *)(kind), (uint64_t)(id)); \
	} while (0)

#endif /* CAUSEWAY_ADAPTER_H */
