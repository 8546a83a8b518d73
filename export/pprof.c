// SPDX-License-Identifier: MIT
#include "export.h"

int cw_x__pprof(struct cw_x *x)
{
	(void)x;
	cw_x__err("pprof: not written yet");
	return -1;
}
