// SPDX-License-Identifier: MIT
/*
 * Dump: print segments in the record text form of dump.h, which the
 * fixture compiler turns back into the same bytes. Every line is checked by
 * parsing it back before it is printed; what the typed form cannot
 * reproduce exactly is printed as "raw" with a hex body, so a dump never
 * silently loses a byte of a record.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/dump.h"

#define REC_MAX 65536
/* Worst case line: a 64 KiB string of \xHH escapes. */
#define LINE_MAX_LEN (4 * REC_MAX + 1024)

struct line {
	char *p;
	size_t len;
	int full;
};

__attribute__((format(printf, 2, 3))) static void put(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->p + l->len, LINE_MAX_LEN - l->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= LINE_MAX_LEN - l->len)
		l->full = 1;
	else
		l->len += (size_t)n;
}

static void put_str(struct line *l, const uint8_t *s, size_t n)
{
	int quote = !n;

	for (size_t i = 0; i < n && !quote; i++)
		if (s[i] <= ' ' || s[i] >= 0x7f || s[i] == '"' || s[i] == '\\' || s[i] == '#')
			quote = 1;
	if (!quote) {
		put(l, "%.*s", (int)n, (const char *)s);
		return;
	}
	put(l, "\"");
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\')
			put(l, "\\%c", s[i]);
		else if (s[i] < ' ' || s[i] >= 0x7f)
			put(l, "\\x%02x", s[i]);
		else
			put(l, "%c", s[i]);
	}
	put(l, "\"");
}

/* The typed form of @rec; -1 when its lengths do not fit that form. */
static int format_typed(struct line *l, const struct cw_rectype *rt, const uint8_t *rec,
			size_t len)
{
	const struct cw_field *f;
	size_t var = 0, cur = rt->base;

	if (len < rt->base)
		return -1;
	for (f = rt->fields; f->key; f++)
		if (f->kind == CW_FK_VAR)
			var += cw_get16(rec + f->off);
	if (((rt->base + var + 7) & ~(size_t)7) != len)
		return -1;

	put(l, "%s", rt->name);
	for (f = rt->fields; f->key; f++) {
		uint64_t v = 0;

		if (f->kind != CW_FK_TASK && f->kind != CW_FK_STR && f->kind != CW_FK_VAR &&
		    f->kind != CW_FK_BIT)
			v = cw_text_get(rec + f->off, f->size);
		if ((f->opt & CW_FO_NONZERO) && !v)
			continue;
		if ((f->opt & CW_FO_EXTRA) && !(v & ~(uint64_t)f->arg))
			continue;
		put(l, " %s=", f->key);
		switch (f->kind) {
		case CW_FK_U:
			put(l, "%llu", (unsigned long long)v);
			break;
		case CW_FK_HEX:
			put(l, "0x%llx", (unsigned long long)v);
			break;
		case CW_FK_S32:
			put(l, "%d", (int32_t)(uint32_t)v);
			break;
		case CW_FK_TASK:
			put(l, "%u/%u", cw_get32(rec + f->off), cw_get32(rec + f->off + 4));
			break;
		case CW_FK_STR:
			put_str(l, rec + f->off, strnlen((const char *)rec + f->off, f->size));
			break;
		case CW_FK_CTX:
		case CW_FK_RING:
		case CW_FK_CLASS: {
			unsigned int nn;
			const char *const *names = cw_text_names(f->kind, &nn);

			if (v < nn)
				put(l, "%s", names[v]);
			else
				put(l, "%llu", (unsigned long long)v);
			break;
		}
		case CW_FK_BIT:
			put(l, "%d", !!(cw_get32(rec + f->off) & f->arg));
			break;
		case CW_FK_VAR: {
			size_t n = cw_get16(rec + f->off);

			put_str(l, rec + cur, n);
			cur += n;
			break;
		}
		}
	}
	return 0;
}

static void format_raw(struct line *l, const uint8_t *rec, size_t len)
{
	int any = 0;

	put(l, "raw type=0x%x size=%zu ts=%llu cpu=%u", cw_get16(rec), len,
	    (unsigned long long)cw_get64(rec + 8), cw_get16(rec + 4));
	if (rec[6])
		put(l, " ctx=%u", rec[6]);
	if (rec[7])
		put(l, " flags=%u", rec[7]);
	for (size_t i = sizeof(struct cw_hdr); i < len; i++)
		any |= rec[i];
	if (any) {
		put(l, " body=");
		for (size_t i = sizeof(struct cw_hdr); i < len; i++)
			put(l, "%02x", rec[i]);
	}
}

/* Does @l parse back into exactly @rec? */
static int round_trips(const struct line *l, char *scratch, uint8_t *rbuf, const uint8_t *rec,
		       size_t len)
{
	struct cw_tok tok[CW_TEXT_MAXTOK];
	const char *err;
	char msg[128];
	int n, size;

	memcpy(scratch, l->p, l->len + 1);
	n = cw_text_tokenize(scratch, tok, CW_TEXT_MAXTOK, &err);
	if (n <= 0)
		return 0;
	size = cw_text_build(tok, n, rbuf, msg, sizeof(msg));
	return size > 0 && (size_t)size == len && !memcmp(rbuf, rec, len);
}

static const char *seg_type_name(uint16_t t)
{
	switch (t) {
	case CW_SEG_META:
		return "meta";
	case CW_SEG_EVENTS:
		return "events";
	case CW_SEG_FINAL:
		return "final";
	}
	return "unknown";
}

int cw_dump_segment(FILE *out, const struct cw_segment *seg)
{
	char *buf = NULL, *scratch = NULL;
	uint8_t *rbuf = NULL;
	const struct cw_hdr *h;
	size_t pos = 0;
	int err = 0;

	buf = malloc(LINE_MAX_LEN);
	scratch = malloc(LINE_MAX_LEN);
	rbuf = malloc(REC_MAX);
	if (!buf || !scratch || !rbuf) {
		err = -ENOMEM;
		goto cleanup;
	}

	fprintf(out, "# segment seq=%llu type=%s offset=%llu records=%u\n",
		(unsigned long long)seg->seq, seg_type_name(seg->seg_type),
		(unsigned long long)seg->offset, seg->nrec);
	while ((h = cw_segment__next_record(seg, &pos))) {
		const uint8_t *rec = (const uint8_t *)h;
		const struct cw_rectype *rt = cw_text_type_by_type(h->type);
		struct line l = { buf, 0, 0 };

		buf[0] = '\0';
		if (!rt || format_typed(&l, rt, rec, h->size) || l.full ||
		    !round_trips(&l, scratch, rbuf, rec, h->size)) {
			l.len = 0;
			l.full = 0;
			format_raw(&l, rec, h->size);
		}
		fprintf(out, "%.*s\n", (int)l.len, l.p);
	}
	fprintf(out, "!seal %s\n", seg_type_name(seg->seg_type));
	if (ferror(out))
		err = -EIO;
cleanup:
	free(buf);
	free(scratch);
	free(rbuf);
	return err;
}

int cw_dump_reader(FILE *out, struct cw_reader *r)
{
	struct cw_segment seg;
	int ret;

	while ((ret = cw_reader__next(r, &seg)) > 0) {
		ret = cw_dump_segment(out, &seg);
		if (ret)
			return ret;
	}
	return ret;
}
