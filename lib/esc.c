// SPDX-License-Identifier: MIT
/*
 * Text that came from an input (a trace's paths and names, a truth file's
 * fields, an ELF note's probe names, a database's messages) is printed
 * escaped: none of its bytes may reach a terminal as a control or split a
 * line of a report. The notation is causeway-analyze --dump's
 * (analyze/text.c): a byte that is not text is written \xNN and a
 * backslash \\, so the printed form reads back to the bytes. Unlike
 * --dump, a valid UTF-8 character other than a C1 control is printed as
 * it is: these are names and paths a person reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/esc.h"

/* Continuation bytes are 0x80..0xbf; the NUL that ends a string is not
 * one, so a sequence cut by the end of @s is not valid either. */
static int cont(const unsigned char *s, size_t n, size_t i)
{
	return i < n && s[i] >= 0x80 && s[i] <= 0xbf;
}

size_t cw_esc_plain_len(const unsigned char *s, size_t n)
{
	unsigned char c;

	if (!n)
		return 0;
	c = s[0];
	if (c < 0x20 || c == 0x7f)
		return 0;
	if (c < 0x80)
		return 1;
	/* RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF.
	 * U+0080..U+009F (C2 80..C2 9F) are the C1 controls, which some
	 * terminals obey (CSI is U+009B): escaped like C0. */
	if (c >= 0xc2 && c <= 0xdf)
		return cont(s, n, 1) && !(c == 0xc2 && s[1] <= 0x9f) ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (!cont(s, n, 1) || !cont(s, n, 2))
			return 0;
		if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f))
			return 0;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (!cont(s, n, 1) || !cont(s, n, 2) || !cont(s, n, 3))
			return 0;
		if ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
			return 0;
		return 4;
	}
	return 0;
}

void cw_esc_write(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		size_t k = cw_esc_plain_len(p + i, n - i);

		if (p[i] == '\\') {
			fputs("\\\\", f);
			i++;
		} else if (k) {
			fwrite(p + i, 1, k, f);
			i += k;
		} else {
			fprintf(f, "\\x%02x", p[i]);
			i++;
		}
	}
}

void cw_esc_fput(FILE *f, const char *s)
{
	cw_esc_write(f, s, strlen(s));
}

size_t cw_esc_snprint(char *dst, size_t cap, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, o = 0;

	/* Room for "..." and the NUL is kept free all along, so a cut
	 * always has it. */
	if (cap < 4) {
		if (cap)
			dst[0] = 0;
		return 0;
	}
	while (i < n) {
		size_t k = cw_esc_plain_len(p + i, n - i);
		size_t w = p[i] == '\\' ? 2 : k ? k : 4;

		if (o + w + 4 > cap) {
			memcpy(dst + o, "...", 4);
			return o + 3;
		}
		if (p[i] == '\\')
			memcpy(dst + o, "\\\\", 2);
		else if (k)
			memcpy(dst + o, p + i, k);
		else
			snprintf(dst + o, 5, "\\x%02x", p[i]);
		o += w;
		i += k ? k : 1;
	}
	dst[o] = 0;
	return o;
}

void cw_esc_vmsg(FILE *f, const char *prog, const char *fmt, va_list ap)
{
	char buf[4096];
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(buf, sizeof(buf), fmt, aq);
	va_end(aq);
	fprintf(f, "%s: ", prog);
	if (n >= 0 && (size_t)n < sizeof(buf)) {
		cw_esc_write(f, buf, (size_t)n);
	} else {
		/* Longer than a line: formatted again in full. */
		char *big = NULL;

		if (n >= 0 && vasprintf(&big, fmt, ap) >= 0)
			cw_esc_fput(f, big);
		else
			cw_esc_fput(f, buf);
		free(big);
	}
	fputc('\n', f);
}
