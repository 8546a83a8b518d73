// SPDX-License-Identifier: MIT
/*
 * The record text form (syntax in text.h): the field tables, the parser
 * that builds records from lines, and the formatter that prints records
 * as lines. The tables are schema/fields.def's rows, one table per struct
 * of schema/events.h, each row where a field lives (offsetof on the
 * struct, so a layout change moves the text form with it) and how it is
 * spelled; which record types there are, and the struct of each, is
 * schema/records.def. Names of record types, contexts, rings and classes
 * come from schema/names.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../schema/events.h"
#include "trace/format.h"
#include "../schema/names.h"
#include "text.h"

/* The kinds and options of schema/fields.def's rows. They are this file's,
 * not a header's: the formatter and the parser below are all that read
 * them, and fields.def's other includer drops those columns. */
enum {
	FK_U,	  /* unsigned integer of .size bytes, decimal */
	FK_HEX,	  /* unsigned integer of .size bytes, printed 0x-hex */
	FK_S32,	  /* signed 32-bit */
	FK_S64,	  /* signed 64-bit */
	FK_TASK,  /* struct cw_task as tid/pid */
	FK_STR,	  /* char[.size], zero padded */
	FK_CTX,	  /* __u8 CW_CTX_* by name */
	FK_RING,  /* __u16 CW_RING_* by name */
	FK_CLASS, /* __u16 CW_CLASS_* by name */
	FK_BIT,	  /* 0|1: the bits .arg of the .size-byte field at .off */
	FK_VAR,	  /* bytes appended after the fixed part; .size-byte length at .off */
	FK_BYTES, /* __u8[.size] as hex digits */
	FK_CAUSE, /* __u8 CW_CAUSE_* by name */
	FK_U64S,  /* u64s appended after the fixed part, 0x-hex, comma-separated;
		   * .size-byte count at .off */
	FK_HEXVAR, /* bytes appended after the fixed part, as hex; .size-byte length at .off */
	FK_BUILDID, /* __u8[.size] at .off, as hex of its first n bytes; n is the byte at .arg */
	FK_S64S,  /* __s64[.size / 8], signed decimal, comma-separated; trailing zeros
		   * left out */
	FK_SIZE,  /* raw only: the record size */
	FK_BODY,  /* raw only: hex bytes after the header */
};

#define FO_NONZERO 0x1 /* printed only when not 0 */
#define FO_EXTRA 0x2   /* printed only when bits outside .arg are set */

struct field {
	const char *key;
	uint8_t kind;
	uint16_t size; /* a string may be 256 bytes */
	uint16_t off;
	uint32_t arg;
	uint8_t opt;
};

/* A typed record: its type, its fixed size, and its fields in the order
 * they are printed and built (a whole-field key such as flags comes
 * before the bit keys that refine it). */
struct rectype {
	uint16_t type;
	uint16_t base; /* 0: raw */
	const struct field *fields;
};

#define F(key, kind, st, member, arg, opt)                                           \
	{ key, kind, sizeof(((struct st *)0)->member), offsetof(struct st, member), arg, \
	  opt }
#define F_END { NULL, 0, 0, 0, 0, 0 }

/* One table per struct, STRUCT_fields, from schema/fields.def. */
#define CW_FIELDS(st) static const struct field st##_fields[] = {
#define CW_FIELD(st, key, kind, member, arg, opt) F(key, kind, st, member, arg, opt),
#define CW_HFIELD(st, key, kind, member, arg, opt) F(key, kind, cw_hdr, member, arg, opt),
#define CW_FIELDS_END(st) F_END };
#include "../schema/fields.def"

/* Any record, typed or not, as its header and its body in hex: what a
 * line the typed form cannot reproduce falls back to, and how a fixture
 * spells a record no struct holds. It is the text form's own, not a
 * struct's, so it is no table of fields.def. */
static const struct field raw_fields[] = {
	F("type", FK_HEX, cw_hdr, type, 0, 0),
	F("size", FK_SIZE, cw_hdr, size, 0, 0),
	F("ts", FK_U, cw_hdr, ts, 0, 0),
	F("cpu", FK_U, cw_hdr, cpu, 0, 0),
	F("ctx", FK_CTX, cw_hdr, ctx, 0, FO_NONZERO),
	F("flags", FK_U, cw_hdr, flags, 0, FO_NONZERO),
	{ "body", FK_BODY, 0, sizeof(struct cw_hdr), 0, FO_NONZERO },
	F_END,
};

/* Every type of schema/records.def, with the fields of its struct. */
static const struct rectype rectypes[] = {
#define CW_REC(id, type, name, st, writer) { CW_REC_##id, sizeof(struct st), st##_fields },
#include "../schema/records.def"
};
static const struct rectype raw_type = { 0, 0, raw_fields };
static const char RAW_NAME[] = "raw";

/* The typed entry for a record type, NULL if only "raw" can print it. */
static const struct rectype *type_by_type(uint16_t type)
{
	for (size_t i = 0; i < CW_ARRAY_SIZE(rectypes); i++)
		if (rectypes[i].type == type)
			return &rectypes[i];
	return NULL;
}

static const struct rectype *type_by_name(const char *name)
{
	if (!strcmp(name, RAW_NAME))
		return &raw_type;
	for (size_t i = 0; i < CW_ARRAY_SIZE(cw_rec_names); i++)
		if (!strcmp(cw_rec_names[i].name, name))
			return type_by_type(cw_rec_names[i].type);
	return NULL;
}

static const char *type_name(const struct rectype *rt)
{
	return rt->base ? cw_rec_name(rt->type) : RAW_NAME;
}

static const char *const *names_of(int kind, size_t *n)
{
	switch (kind) {
	case FK_CTX:
		*n = CW_ARRAY_SIZE(cw_ctx_names);
		return cw_ctx_names;
	case FK_RING:
		*n = CW_ARRAY_SIZE(cw_ring_names);
		return cw_ring_names;
	case FK_CAUSE:
		*n = CW_ARRAY_SIZE(cw_cause_names);
		return cw_cause_names;
	default:
		*n = CW_ARRAY_SIZE(cw_class_names);
		return cw_class_names;
	}
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A double-quoted string at *pp, decoded in place to *wp. */
static int unquote(char **pp, char **wp, const char **err)
{
	char *p = *pp + 1, *w = *wp;

	for (;;) {
		int hi, lo;

		if (!*p) {
			*err = "unterminated string";
			return -1;
		}
		if (*p == '"') {
			p++;
			break;
		}
		if (*p != '\\') {
			*w++ = *p++;
			continue;
		}
		p++;
		if (*p == '"' || *p == '\\') {
			*w++ = *p++;
		} else if (*p == 'x' && (hi = hexval(p[1])) >= 0 && (lo = hexval(p[2])) >= 0) {
			*w++ = (char)(hi << 4 | lo);
			p += 3;
		} else {
			*err = "bad escape in string (use \\\" \\\\ or \\xHH)";
			return -1;
		}
	}
	if (*p && !is_blank(*p)) {
		*err = "garbage after closing quote";
		return -1;
	}
	*pp = p;
	*wp = w;
	return 0;
}

int cw_text_tokenize(char *line, struct cw_tok *tok, int max, const char **err)
{
	char *p = line;
	int n = 0;

	for (;;) {
		char *key, *w;

		while (is_blank(*p))
			p++;
		if (!*p || *p == '#')
			return n;
		if (n == max) {
			*err = "too many fields";
			return -1;
		}
		key = p;
		while (*p && *p != '=' && !is_blank(*p)) {
			if (*p == '"' || *p == '\\') {
				*err = "unexpected quote or backslash";
				return -1;
			}
			p++;
		}
		tok[n].key = key;
		tok[n].val = NULL;
		tok[n].vlen = 0;
		if (*p != '=') {
			if (*p)
				*p++ = '\0';
			n++;
			continue;
		}
		*p++ = '\0';
		if (!*key) {
			*err = "missing key before '='";
			return -1;
		}
		w = p;
		tok[n].val = w;
		if (*p == '"') {
			if (unquote(&p, &w, err))
				return -1;
		} else {
			while (*p && !is_blank(*p)) {
				if (*p == '"' || *p == '\\') {
					*err = "quote or backslash in a bare value (quote the value)";
					return -1;
				}
				w++;
				p++;
			}
		}
		tok[n].vlen = (size_t)(w - tok[n].val);
		if (*p)
			p++;
		*w = '\0';
		n++;
	}
}

int cw_text_num(const struct cw_tok *t, uint64_t *v, int *neg)
{
	const char *s = t->val;
	uint64_t x = 0;
	int base = 10, any = 0;

	if (!s || strlen(s) != t->vlen)
		return -1;
	if (neg) {
		*neg = *s == '-';
		if (*neg)
			s++;
	}
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (; *s; s++) {
		int d = base == 16 ? hexval(*s) : (*s >= '0' && *s <= '9' ? *s - '0' : -1);

		if (d < 0)
			return -1;
		if (x > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return -1;
		x = x * (uint64_t)base + (uint64_t)d;
		any = 1;
	}
	if (!any)
		return -1;
	*v = x;
	return 0;
}

static void put_n(uint8_t *p, int size, uint64_t v)
{
	switch (size) {
	case 1:
		*p = (uint8_t)v;
		break;
	case 2:
		cw_put16(p, (uint16_t)v);
		break;
	case 4:
		cw_put32(p, (uint32_t)v);
		break;
	default:
		cw_put64(p, v);
	}
}

static uint64_t get_n(const uint8_t *p, int size)
{
	switch (size) {
	case 1:
		return *p;
	case 2:
		return cw_get16(p);
	case 4:
		return cw_get32(p);
	default:
		return cw_get64(p);
	}
}

/* Where cw_text_build is: the record so far and what went wrong. */
struct build {
	const struct rectype *rt;
	uint8_t *buf;
	size_t cur, size; /* end of the variable part; record size */
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 3, 4))) static int bad(struct build *b, const struct field *f,
						     const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(b->err, b->errlen, "%s: %s: ", type_name(b->rt), f->key);

	if (n < 0 || (size_t)n >= b->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(b->err + n, b->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static int build_task(struct build *b, const struct field *f, const struct cw_tok *t)
{
	char *slash = strchr(t->val, '/');
	struct cw_tok a = { NULL, t->val, 0 }, p = { NULL, NULL, 0 };
	uint64_t tid, pid;
	int fail;

	if (!slash)
		return bad(b, f, "expected tid/pid, got '%s'", t->val);
	*slash = '\0';
	a.vlen = strlen(a.val);
	p.val = slash + 1;
	p.vlen = strlen(p.val);
	fail = cw_text_num(&a, &tid, NULL) || cw_text_num(&p, &pid, NULL);
	*slash = '/';
	if (fail || tid > UINT32_MAX || pid > UINT32_MAX)
		return bad(b, f, "expected tid/pid, got '%s'", t->val);
	cw_put32(b->buf + f->off, (uint32_t)tid);
	cw_put32(b->buf + f->off + 4, (uint32_t)pid);
	return 0;
}

static int build_body(struct build *b, const struct field *f, const struct cw_tok *t)
{
	size_t want = 2 * (b->size - sizeof(struct cw_hdr));

	if (t->vlen != want)
		return bad(b, f, "must be %zu hex digits (size - 16 bytes)", want);
	for (size_t k = 0; k < t->vlen; k += 2) {
		int hi = hexval(t->val[k]), lo = hexval(t->val[k + 1]);

		if (hi < 0 || lo < 0)
			return bad(b, f, "bad hex digit");
		b->buf[f->off + k / 2] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* Hex digits @t (an even number of them) into @out, at most @max bytes.
 * @return the number of bytes, or -1. */
static long unhex(const struct cw_tok *t, uint8_t *out, size_t max)
{
	if (t->vlen % 2 || t->vlen / 2 > max)
		return -1;
	for (size_t k = 0; k < t->vlen; k += 2) {
		int hi = hexval(t->val[k]), lo = hexval(t->val[k + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[k / 2] = (uint8_t)(hi << 4 | lo);
	}
	return (long)(t->vlen / 2);
}

/* "0x1,0x2,...": appended to the record, the count into the field. */
static int build_u64s(struct build *b, const struct field *f, const struct cw_tok *t)
{
	char *p = t->val;
	uint64_t n = 0;

	while (*p) {
		char *comma = strchr(p, ',');
		struct cw_tok one = { NULL, p, comma ? (size_t)(comma - p) : strlen(p) };
		uint64_t v;
		int fail;

		if (comma)
			*comma = '\0';
		fail = cw_text_num(&one, &v, NULL);
		if (comma)
			*comma = ',';
		if (fail)
			return bad(b, f, "bad number in list '%s'", t->val);
		if (b->cur + 8 > 65528 || (f->size < 8 && (n + 1) >> (8 * f->size)))
			return bad(b, f, "too many values");
		cw_put64(b->buf + b->cur, v);
		b->cur += 8;
		n++;
		p = comma ? comma + 1 : p + one.vlen;
	}
	put_n(b->buf + f->off, f->size, n);
	return 0;
}

/* "1,-2,...": at most .size / 8 values into the array, the rest 0. */
static int build_s64s(struct build *b, const struct field *f, const struct cw_tok *t)
{
	char *p = t->val;
	size_t n = 0;

	while (*p) {
		char *comma = strchr(p, ',');
		struct cw_tok one = { NULL, p, comma ? (size_t)(comma - p) : strlen(p) };
		uint64_t v;
		int neg, fail;

		if (comma)
			*comma = '\0';
		fail = cw_text_num(&one, &v, &neg) ||
		       (neg ? v > 0x8000000000000000ull : v > INT64_MAX);
		if (comma)
			*comma = ',';
		if (fail)
			return bad(b, f, "bad number in list '%s'", t->val);
		if (n == f->size / 8u)
			return bad(b, f, "more than %u values", f->size / 8u);
		cw_put64(b->buf + f->off + 8 * n++, neg ? 0 - v : v);
		p = comma ? comma + 1 : p + one.vlen;
	}
	return 0;
}

/* Set field @f of the record from token @t. */
static int build_field(struct build *b, const struct field *f, const struct cw_tok *t)
{
	uint8_t *p = b->buf + f->off;
	uint64_t v, bits;
	int neg;

	switch (f->kind) {
	case FK_U:
	case FK_HEX:
		if (cw_text_num(t, &v, NULL) || (f->size < 8 && v >> (8 * f->size)))
			return bad(b, f, "bad number '%s'", t->val);
		put_n(p, f->size, v);
		return 0;
	case FK_S32:
		if (cw_text_num(t, &v, &neg) || (neg ? v > 0x80000000ull : v > 0xffffffffull))
			return bad(b, f, "bad number '%s'", t->val);
		cw_put32(p, neg ? (uint32_t)(0 - (uint32_t)v) : (uint32_t)v);
		return 0;
	case FK_S64:
		if (cw_text_num(t, &v, &neg) || (neg ? v > 0x8000000000000000ull : v > INT64_MAX))
			return bad(b, f, "bad number '%s'", t->val);
		cw_put64(p, neg ? 0 - v : v);
		return 0;
	case FK_TASK:
		return build_task(b, f, t);
	case FK_STR:
		if (t->vlen > f->size)
			return bad(b, f, "string longer than %u bytes", f->size);
		memcpy(p, t->val, t->vlen);
		return 0;
	case FK_CTX:
	case FK_RING:
	case FK_CAUSE:
	case FK_CLASS: {
		size_t nn;
		const char *const *names = names_of(f->kind, &nn);
		int k = cw_name_find(names, nn, t->val);

		if (k >= 0)
			v = (uint64_t)k;
		else if (cw_text_num(t, &v, NULL) || v >> (8 * f->size))
			return bad(b, f, "unknown value '%s'", t->val);
		put_n(p, f->size, v);
		return 0;
	}
	case FK_BIT:
		if (cw_text_num(t, &v, NULL) || v > 1)
			return bad(b, f, "expected 0 or 1");
		bits = get_n(p, f->size);
		put_n(p, f->size, v ? bits | f->arg : bits & ~(uint64_t)f->arg);
		return 0;
	case FK_VAR:
		if (t->vlen > 65528 - b->cur)
			return bad(b, f, "too long for a record");
		memcpy(b->buf + b->cur, t->val, t->vlen);
		put_n(p, f->size, t->vlen);
		b->cur += t->vlen;
		return 0;
	case FK_BYTES:
		if (t->vlen != 2u * f->size || unhex(t, p, f->size) < 0)
			return bad(b, f, "must be %u hex digits", 2u * f->size);
		return 0;
	case FK_U64S:
		return build_u64s(b, f, t);
	case FK_S64S:
		return build_s64s(b, f, t);
	case FK_HEXVAR: {
		long n = unhex(t, b->buf + b->cur, 65528 - b->cur);

		if (n < 0 || (f->size < 8 && (uint64_t)n >> (8 * f->size)))
			return bad(b, f, "expected hex digits, whole bytes, that fit a record");
		put_n(p, f->size, (uint64_t)n);
		b->cur += (size_t)n;
		return 0;
	}
	case FK_BUILDID: {
		long n = unhex(t, p, f->size);

		if (n < 0)
			return bad(b, f, "expected at most %u bytes of hex", f->size);
		b->buf[f->arg] = (uint8_t)n;
		return 0;
	}
	case FK_SIZE:
		if (cw_text_num(t, &v, NULL) || v < sizeof(struct cw_hdr) || v > 65528 || v % 8)
			return bad(b, f, "must be a multiple of 8 between 16 and 65528");
		b->size = b->cur = (size_t)v;
		return 0;
	case FK_BODY:
		return build_body(b, f, t);
	}
	return bad(b, f, "internal error: unknown field kind");
}

/* Every key of the line names a field of @rt, once, with a value. */
static int check_keys(const struct rectype *rt, const struct cw_tok *tok, int n, char *err,
		      size_t errlen)
{
	for (int i = 1; i < n; i++) {
		const struct field *f;

		for (f = rt->fields; f->key && strcmp(f->key, tok[i].key); f++)
			;
		if (!f->key) {
			snprintf(err, errlen, "%s: unknown key '%s'", type_name(rt), tok[i].key);
			return -1;
		}
		if (!tok[i].val) {
			snprintf(err, errlen, "%s: '%s' needs a value (key=value)", type_name(rt),
				 tok[i].key);
			return -1;
		}
		for (int j = 1; j < i; j++) {
			if (!strcmp(tok[j].key, tok[i].key)) {
				snprintf(err, errlen, "%s: duplicate key '%s'", type_name(rt),
					 tok[i].key);
				return -1;
			}
		}
	}
	return 0;
}

int cw_text_build(const struct cw_tok *tok, int n, uint8_t *buf, char *err, size_t errlen)
{
	const struct rectype *rt = type_by_name(tok[0].key);
	struct build b = { rt, buf, 0, 0, err, errlen };

	if (!rt || tok[0].val) {
		snprintf(err, errlen, "unknown record type '%s'", tok[0].key);
		return -1;
	}
	if (check_keys(rt, tok, n, err, errlen))
		return -1;
	b.size = b.cur = rt->base ? rt->base : sizeof(struct cw_hdr);
	memset(buf, 0, CW_TEXT_REC_MAX);
	/* In table order, not line order: a whole-field key is set before
	 * the bit keys that refine it. */
	for (const struct field *f = rt->fields; f->key; f++) {
		for (int i = 1; i < n; i++)
			if (!strcmp(tok[i].key, f->key) && build_field(&b, f, &tok[i]))
				return -1;
	}
	b.size = (b.cur + 7) & ~(size_t)7;
	if (rt->base)
		cw_put16(buf, rt->type);
	cw_put16(buf + 2, (uint16_t)b.size);
	return (int)b.size;
}

/* ---- formatting ---- */

struct cw_text {
	char line[CW_TEXT_LINE_MAX];
	char scratch[CW_TEXT_LINE_MAX];
	uint8_t rec[CW_TEXT_REC_MAX];
	size_t len;
	int full;
};

struct cw_text *cw_text__new(void)
{
	return malloc(sizeof(struct cw_text));
}

void cw_text__free(struct cw_text *t)
{
	free(t);
}

__attribute__((format(printf, 2, 3))) static void put(struct cw_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->line + t->len, sizeof(t->line) - t->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(t->line) - t->len)
		t->full = 1;
	else
		t->len += (size_t)n;
}

static void put_str(struct cw_text *t, const uint8_t *s, size_t n)
{
	int quote = !n;

	for (size_t i = 0; i < n && !quote; i++)
		if (s[i] <= ' ' || s[i] >= 0x7f || s[i] == '"' || s[i] == '\\' || s[i] == '#')
			quote = 1;
	if (!quote) {
		put(t, "%.*s", (int)n, (const char *)s);
		return;
	}
	put(t, "\"");
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\')
			put(t, "\\%c", s[i]);
		else if (s[i] < ' ' || s[i] >= 0x7f)
			put(t, "\\x%02x", s[i]);
		else
			put(t, "%c", s[i]);
	}
	put(t, "\"");
}

/* The value a field's FO_ options are judged by. */
static uint64_t field_value(const struct field *f, const uint8_t *rec)
{
	switch (f->kind) {
	case FK_TASK:
	case FK_STR:
	case FK_VAR:
	case FK_BYTES:
	case FK_BODY:
		return 0;
	case FK_BIT:
		return !!(get_n(rec + f->off, f->size) & f->arg);
	case FK_BUILDID:
		return rec[f->arg];
	case FK_S64S: {
		/* how many to print: up to the last non-zero one */
		uint64_t n = 0;

		for (size_t k = 0; k < f->size / 8u; k++)
			if (cw_get64(rec + f->off + 8 * k))
				n = k + 1;
		return n;
	}
	default:
		return get_n(rec + f->off, f->size);
	}
}

static void format_field(struct cw_text *t, const struct field *f, const uint8_t *rec,
			 uint64_t v, size_t *cur)
{
	switch (f->kind) {
	case FK_U:
	case FK_BIT:
		put(t, "%llu", (unsigned long long)v);
		break;
	case FK_HEX:
		put(t, "0x%llx", (unsigned long long)v);
		break;
	case FK_S32:
		put(t, "%d", (int32_t)(uint32_t)v);
		break;
	case FK_S64:
		put(t, "%lld", (long long)(int64_t)v);
		break;
	case FK_TASK:
		put(t, "%u/%u", cw_get32(rec + f->off), cw_get32(rec + f->off + 4));
		break;
	case FK_STR:
		put_str(t, rec + f->off, strnlen((const char *)rec + f->off, f->size));
		break;
	case FK_CTX:
	case FK_RING:
	case FK_CAUSE:
	case FK_CLASS: {
		size_t nn;
		const char *const *names = names_of(f->kind, &nn);
		const char *name = cw_name_of(names, nn, (unsigned)v);

		if (name)
			put(t, "%s", name);
		else
			put(t, "%llu", (unsigned long long)v);
		break;
	}
	case FK_VAR: {
		size_t n = (size_t)get_n(rec + f->off, f->size);

		put_str(t, rec + *cur, n);
		*cur += n;
		break;
	}
	case FK_BYTES:
		for (size_t k = 0; k < f->size; k++)
			put(t, "%02x", rec[f->off + k]);
		break;
	case FK_U64S:
		for (uint64_t k = 0; k < v; k++, *cur += 8)
			put(t, "%s0x%llx", k ? "," : "", (unsigned long long)cw_get64(rec + *cur));
		break;
	case FK_HEXVAR:
		for (uint64_t k = 0; k < v; k++)
			put(t, "%02x", rec[(*cur)++]);
		break;
	case FK_S64S:
		for (uint64_t k = 0; k < v; k++)
			put(t, "%s%lld", k ? "," : "", (long long)(int64_t)cw_get64(rec + f->off + 8 * k));
		break;
	case FK_BUILDID:
		/* a length past the array does not round-trip: raw */
		for (uint64_t k = 0; k < v && k < f->size; k++)
			put(t, "%02x", rec[f->off + k]);
		break;
	}
}

/* Bytes field @f appends after the fixed part of @rec. */
static size_t var_bytes(const struct field *f, const uint8_t *rec)
{
	switch (f->kind) {
	case FK_VAR:
	case FK_HEXVAR:
		return (size_t)get_n(rec + f->off, f->size);
	case FK_U64S:
		return 8 * (size_t)get_n(rec + f->off, f->size);
	default:
		return 0;
	}
}

/* The typed form of @rec; -1 when its lengths do not fit that form. */
static int format_typed(struct cw_text *t, const struct rectype *rt, const uint8_t *rec,
			size_t len)
{
	const struct field *f;
	size_t var = 0, cur = rt->base;

	if (len < rt->base)
		return -1;
	for (f = rt->fields; f->key; f++)
		var += var_bytes(f, rec);
	if (((rt->base + var + 7) & ~(size_t)7) != len)
		return -1;

	put(t, "%s", type_name(rt));
	for (f = rt->fields; f->key; f++) {
		uint64_t v = field_value(f, rec);

		if ((f->opt & FO_NONZERO) && !v)
			continue;
		if ((f->opt & FO_EXTRA) && !(v & ~(uint64_t)f->arg))
			continue;
		put(t, " %s=", f->key);
		format_field(t, f, rec, v, &cur);
	}
	return 0;
}

static void format_raw(struct cw_text *t, const uint8_t *rec, size_t len)
{
	const struct cw_hdr *h = (const struct cw_hdr *)rec;
	int any = 0;

	put(t, "%s type=0x%x size=%zu ts=%llu cpu=%u", RAW_NAME, h->type, len,
	    (unsigned long long)h->ts, h->cpu);
	if (h->ctx)
		put(t, " ctx=%u", h->ctx);
	if (h->flags)
		put(t, " flags=%u", h->flags);
	for (size_t i = sizeof(struct cw_hdr); i < len; i++)
		any |= rec[i];
	if (any) {
		put(t, " body=");
		for (size_t i = sizeof(struct cw_hdr); i < len; i++)
			put(t, "%02x", rec[i]);
	}
}

/* Does the line parse back into exactly @rec? */
static int round_trips(struct cw_text *t, const uint8_t *rec, size_t len)
{
	struct cw_tok tok[CW_TEXT_MAXTOK];
	const char *err;
	char msg[128];
	int n, size;

	memcpy(t->scratch, t->line, t->len + 1);
	n = cw_text_tokenize(t->scratch, tok, CW_TEXT_MAXTOK, &err);
	if (n <= 0)
		return 0;
	size = cw_text_build(tok, n, t->rec, msg, sizeof(msg));
	return size > 0 && (size_t)size == len && !memcmp(t->rec, rec, len);
}

const char *cw_text_format(struct cw_text *t, const uint8_t *rec, size_t len)
{
	const struct rectype *rt = type_by_type(cw_get16(rec));

	t->len = 0;
	t->full = 0;
	t->line[0] = '\0';
	if (!rt || format_typed(t, rt, rec, len) || t->full || !round_trips(t, rec, len)) {
		t->len = 0;
		t->full = 0;
		format_raw(t, rec, len);
	}
	return t->line;
}
