// SPDX-License-Identifier: MIT
/*
 * Text that came from an input (truth fields, the paths and the label of
 * the command line, SQLite's messages about a database) is printed escaped:
 * a truth file or a database is data, and none of its bytes may reach a
 * terminal as a control or split a report's line. The convention is
 * causeway-analyze --dump's (analyze/text.c, put_str): a byte that is not
 * text is written \xNN and a backslash \\, so the printed form reads back
 * to the bytes. Unlike --dump, a valid UTF-8 character other than a C1
 * control is printed as it is: these are names and paths a person reads.
 */
#include <stdio.h>
#include <string.h>
#include "eval.h"

/* Continuation bytes are 0x80..0xbf; the NUL that ends a string is not
 * one, so a sequence cut by the end of @s is not valid either. */
static int cont(const unsigned char *s, size_t n, size_t i)
{
	return i < n && s[i] >= 0x80 && s[i] <= 0xbf;
}

size_t esc_plain_len(const unsigned char *s, size_t n)
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

void esc_write(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		size_t k = esc_plain_len(p + i, n - i);

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

void esc_fput(FILE *f, const char *s)
{
	esc_write(f, s, strlen(s));
}

/* A message names a field, it does not copy it: a field may be as long
 * as its line. Cut at a whole character or escape. */
#define MSG_FIELD 96

const char *esc_msg(const char *s)
{
	static char ring[4][MSG_FIELD + 8];
	static unsigned next;
	const unsigned char *p = (const unsigned char *)s;
	char *out = ring[next++ % 4];
	size_t n = strlen(s), i = 0, o = 0;

	while (i < n) {
		size_t k = esc_plain_len(p + i, n - i);
		size_t w = p[i] == '\\' ? 2 : k ? k : 4;

		if (o + w > MSG_FIELD) {
			memcpy(out + o, "...", 4);
			return out;
		}
		if (p[i] == '\\')
			memcpy(out + o, "\\\\", 2);
		else if (k)
			memcpy(out + o, p + i, k);
		else
			snprintf(out + o, 5, "\\x%02x", p[i]);
		o += w;
		i += k ? k : 1;
	}
	out[o] = 0;
	return out;
}
