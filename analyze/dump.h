/* SPDX-License-Identifier: MIT */
/*
 * The dump (causeway-analyze --dump): every valid segment of a trace in
 * the record text form of text.h, which tests/fixturec compiles back into
 * the same records.
 */
#ifndef CAUSEWAY_DUMP_H
#define CAUSEWAY_DUMP_H

#include <stdio.h>
#include "trace/reader.h"
#include "text.h"

/*
 * Print @seg: a comment line "# segment seq=N type=T offset=X records=N",
 * one line per record, and "!seal T", so that the output compiles back
 * with fixturec. @t is scratch space (cw_text__new). @return 0, or the
 * negative errno of a failed write to @out.
 */
int cw_dump_segment(FILE *out, struct cw_text *t, const struct cw_segment *seg);

/*
 * Dump every segment @r yields. A failed write (a closed pipe, a full
 * disk) stops the printing but not the reading, so that the result still
 * says what the reader found: *write_err gets the first write error (0 if
 * none). @return 0 at end of file, the negative errno cw_reader__next
 * returned (already reported through diag), or -ENOMEM.
 */
int cw_dump_reader(FILE *out, struct cw_reader *r, int *write_err);

#endif /* CAUSEWAY_DUMP_H */
