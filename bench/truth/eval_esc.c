// SPDX-License-Identifier: MIT
/* A field quoted in a message, escaped (lib/esc.h) and cut. */
#include <stdio.h>
#include <string.h>
#include "eval.h"

/* A message names a field, it does not copy it: a field may be as long
 * as its line. Cut at a whole character or escape. */
#define MSG_FIELD 96

const char *esc_msg(const char *s)
{
	static char ring[4][MSG_FIELD + 8];
	static unsigned next;
	char *out = ring[next++ % 4];

	cw_esc_snprint(out, MSG_FIELD + 4, s);
	return out;
}
