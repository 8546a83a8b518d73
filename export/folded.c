// SPDX-License-Identifier: MIT
/*
 * folded: "root;...;leaf weight" lines (docs/model.md §8.2), as
 * flamegraph.pl's stackcollapse scripts write them, so that
 * flamegraph.pl, inferno and speedscope read them: the causal frames
 * first, then the call stack, kernel frames suffixed "_[k]". A frame's
 * own ';' would split it, and a newline end the line: both are written
 * as ':' and ' '. The weight is microseconds of CPU (or, with --offcpu,
 * of blocked time), estimated as pprof's values are, rounded; a stack
 * that rounds to 0 is left out.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "profile.h"

static void put_frame(FILE *f, const struct cw_xframe *fr)
{
	for (const char *c = fr->name; *c; c++)
		fputc(*c == ';' ? ':' : *c == '\n' || *c == '\r' ? ' ' : *c, f);
	if (fr->kind == CW_XF_KERNEL)
		fputs("_[k]", f);
}

static int line(void *ctx, const struct cw_xsample *s)
{
	struct cw_x *x = ctx;
	double us = round(s->ns / 1000.0);

	if (s->offcpu != x->offcpu || !(us >= 1.0))
		return 0;
	for (size_t i = 0; i < s->nframes; i++) {
		if (i)
			fputc(';', x->out);
		put_frame(x->out, s->frames[i]);
	}
	fprintf(x->out, " %.0f\n", us);
	return ferror(x->out) ? -1 : 0;
}

int cw_x__folded(struct cw_x *x)
{
	int ret = cw_xprofile__each(x, 0, line, x);

	if (ret > 0 || (ret < 0 && ferror(x->out)))
		cw_x__err("the output cannot be written");
	return ret ? -1 : 0;
}
