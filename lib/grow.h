/* SPDX-License-Identifier: MIT */
/* A growing array, doubled as needed. */
#ifndef CAUSEWAY_LIB_GROW_H
#define CAUSEWAY_LIB_GROW_H

#include <errno.h>
#include <stdlib.h>

/* Grow *@v (of *@cap elements of @size) to hold @need. -ENOMEM: it
 * stays as it was. */
static inline int cw_grow(void *v, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	p = realloc(*(void **)v, c * size);
	if (!p)
		return -ENOMEM;
	*(void **)v = p;
	*cap = c;
	return 0;
}

#endif /* CAUSEWAY_LIB_GROW_H */
