// SPDX-License-Identifier: MIT
#include "export.h"

int cw_x__perfetto(struct cw_x *x)
{
	(void)x;
	cw_x__err("perfetto: not written yet");
	return -1;
}
