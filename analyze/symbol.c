// SPDX-License-Identifier: MIT
/* The symbolizer (symbol.h). Minimal first version: every address gives
 * one unresolved frame naming its module. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ksyms.h"
#include "symbol.h"

struct cw_sym {
	struct cw_sym_opts o;
	struct cw_sym_stats st;
};

struct cw_sym *cw_sym__new(const struct cw_sym_opts *o)
{
	struct cw_sym *s = calloc(1, sizeof(*s));

	if (s && o)
		s->o = *o;
	return s;
}

void cw_sym__free(struct cw_sym *s)
{
	free(s);
}

int cw_sym__user(struct cw_sym *s, const struct cw_mapping *m, uint64_t addr, int is_return,
		 struct cw_sym_frame *out, int max)
{
	(void)is_return;
	(void)max;
	memset(out, 0, sizeof(*out));
	out->address = addr;
	out->module = m ? m->path : NULL;
	s->st.lookups++;
	s->st.unresolved++;
	return 1;
}

void cw_sym__kernel(struct cw_sym *s, uint64_t addr, struct cw_sym_frame *out)
{
	uint64_t off;

	memset(out, 0, sizeof(*out));
	out->address = addr;
	out->module = "[kernel]";
	out->function = cw_ksyms__lookup(s->o.ksyms, addr, &off);
}

void cw_sym__stats(const struct cw_sym *s, struct cw_sym_stats *st)
{
	*st = s->st;
}

int cw_sym__unwind(struct cw_sym *s, struct cw_maps *maps, uint32_t pid, const uint64_t *regs,
		   int nregs, const uint8_t *stack, size_t stack_len, uint64_t *ips, int max)
{
	(void)s;
	(void)maps;
	(void)pid;
	(void)stack;
	(void)stack_len;
	if (max < 1 || nregs <= 16)
		return 0;
	ips[0] = regs[16];
	return 1;
}
