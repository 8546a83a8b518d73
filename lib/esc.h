/* SPDX-License-Identifier: MIT */
/*
 * Printing text that came from an input (lib/esc.c): a byte below 0x20,
 * 0x7f, a byte that is not part of valid UTF-8 and a C1 control are
 * written \xNN, a backslash \\; the rest as it is.
 */
#ifndef CAUSEWAY_LIB_ESC_H
#define CAUSEWAY_LIB_ESC_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* How many bytes at @s (of @n) print as they are: 0 when s[0] is escaped. */
size_t cw_esc_plain_len(const unsigned char *s, size_t n);
void cw_esc_write(FILE *f, const char *s, size_t n);
void cw_esc_fput(FILE *f, const char *s);

/*
 * @s escaped into @dst of @cap bytes, always terminated; what does not fit
 * is cut at a whole character or escape and "..." put after it (when there
 * is room for it). @return the length written.
 */
size_t cw_esc_snprint(char *dst, size_t cap, const char *s);

/* "PROG: message\n" on @f, the message formatted and then escaped whole:
 * what a format names (a path, a probe's name) may be anyone's bytes. */
void cw_esc_vmsg(FILE *f, const char *prog, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

#endif /* CAUSEWAY_LIB_ESC_H */
