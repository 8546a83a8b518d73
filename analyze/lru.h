/* SPDX-License-Identifier: MIT */
/*
 * An intrusive least-recently-used list, for the bounds on live state
 * (ident.c's objects, cls_io_uring.c's rings): elements of type T carry
 * `T *lru_prev, *lru_next`, the owner `T *lru_head, *lru_tail`; the head
 * is the least recently named, the first to go.
 *
 * CW_LRU_FUNCS(name, owner type, element type) defines
 *   name_unlink(owner, e)  take e out (its links are cleared),
 *   name_append(owner, e)  put e at the tail, the most recent,
 *   name_touch(owner, e)   e was just named: move it to the tail.
 */
#ifndef CAUSEWAY_LRU_H
#define CAUSEWAY_LRU_H

#include <stddef.h>

#define CW_LRU_FUNCS(name, owner_t, elem_t)                                    \
	static inline void name##_unlink(owner_t *l, elem_t *e)                \
	{                                                                      \
		if (e->lru_prev)                                               \
			e->lru_prev->lru_next = e->lru_next;                   \
		else                                                           \
			l->lru_head = e->lru_next;                             \
		if (e->lru_next)                                               \
			e->lru_next->lru_prev = e->lru_prev;                   \
		else                                                           \
			l->lru_tail = e->lru_prev;                             \
		e->lru_prev = e->lru_next = NULL;                              \
	}                                                                      \
	static inline void name##_append(owner_t *l, elem_t *e)                \
	{                                                                      \
		e->lru_prev = l->lru_tail;                                     \
		e->lru_next = NULL;                                            \
		if (l->lru_tail)                                               \
			l->lru_tail->lru_next = e;                             \
		else                                                           \
			l->lru_head = e;                                       \
		l->lru_tail = e;                                               \
	}                                                                      \
	static inline void name##_touch(owner_t *l, elem_t *e)                 \
	{                                                                      \
		if (l->lru_tail != e) {                                        \
			name##_unlink(l, e);                                   \
			name##_append(l, e);                                   \
		}                                                              \
	}

#endif /* CAUSEWAY_LRU_H */
