// SPDX-License-Identifier: MIT
#include "export.h"

int cw_x__dot(struct cw_x *x)
{
	(void)x;
	cw_x__err("dot: not written yet");
	return -1;
}
