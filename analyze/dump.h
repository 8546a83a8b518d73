/* SPDX-License-Identifier: MIT */
/*
 * The text form of records: one line per record, "NAME key=value ...",
 * printed by the dump (causeway-analyze --dump) and compiled back into a
 * trace by the fixture compiler (tests/fixturec). Both sides use the field
 * tables and the parser below, so the two can never disagree, and the dump
 * checks every line it prints by parsing it back: a record the text form
 * cannot reproduce byte for byte (non-zero padding, a string with bytes
 * after its terminator, a malformed length) is printed as "raw" with its
 * body in hex instead, which always round-trips.
 *
 * Syntax: '#' at the start of a token starts a comment; integers are
 * decimal (signed fields may be negative) or 0x-hex; strings are bare (no
 * blanks, quotes, backslashes or '#') or double-quoted with \" \\ and \xHH
 * escapes; a task is "tid/pid"; missing keys are 0. The header fields ts,
 * cpu, ctx (task|softirq|hardirq|nmi) and flags are accepted on every
 * record.
 *
 * Header-only (static inline) because the fixture compiler links the
 * segment writer and nothing of the analyzer.
 */
#ifndef CAUSEWAY_DUMP_H
#define CAUSEWAY_DUMP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../schema/events.h"
#include "../schema/format.h"
#include "segreader.h"

/*
 * Print @seg: a comment line "# segment seq=N type=T offset=X records=N",
 * one line per record, and "!seal T", so that the output compiles back
 * with fixturec. @return 0 or a negative errno.
 */
int cw_dump_segment(FILE *out, const struct cw_segment *seg);

/*
 * Dump every segment @r yields. @return 0 at end of file or the negative
 * errno cw_reader__next returned (already reported through diag).
 */
int cw_dump_reader(FILE *out, struct cw_reader *r);

/* ---- the record text syntax, shared with tests/fixturec.c ---- */

enum {
	CW_FK_U,     /* unsigned integer of .size bytes, decimal */
	CW_FK_HEX,   /* unsigned integer of .size bytes, printed 0x-hex */
	CW_FK_S32,   /* signed 32-bit */
	CW_FK_TASK,  /* struct cw_task as tid/pid */
	CW_FK_STR,   /* char[.size], zero padded */
	CW_FK_CTX,   /* __u8 CW_CTX_* by name */
	CW_FK_RING,  /* __u16 CW_RING_* by name */
	CW_FK_CLASS, /* __u16 CW_CLASS_* by name */
	CW_FK_BIT,   /* 0|1: bit .arg of the __u32 at .off */
	CW_FK_VAR,   /* bytes appended after the fixed part; __u16 length at .off */
	CW_FK_SIZE,  /* raw only: the record size */
	CW_FK_BODY,  /* raw only: hex bytes after the header */
};

#define CW_FO_NONZERO 0x1 /* printed only when not 0 */
#define CW_FO_EXTRA 0x2	  /* printed only when bits outside .arg are set */

struct cw_field {
	const char *key;
	uint8_t kind;
	uint8_t size;
	uint16_t off;
	uint32_t arg;
	uint8_t opt;
};

struct cw_rectype {
	const char *name;
	uint16_t type;
	uint16_t base; /* fixed size; 0 for raw */
	const struct cw_field *fields;
};

#define CW_F_TS { "ts", CW_FK_U, 8, 8, 0, 0 }
#define CW_F_CPU { "cpu", CW_FK_U, 2, 4, 0, 0 }
#define CW_F_CTX { "ctx", CW_FK_CTX, 1, 6, 0, CW_FO_NONZERO }
#define CW_F_CTX_ALWAYS { "ctx", CW_FK_CTX, 1, 6, 0, 0 }
#define CW_F_FLAGS { "flags", CW_FK_U, 1, 7, 0, CW_FO_NONZERO }
#define CW_F_END { NULL, 0, 0, 0, 0, 0 }

/* The record types the text form knows; NULL name ends the table. */
static inline const struct cw_rectype *cw_text_types(void)
{
	static const struct cw_field kv[] = {
		CW_F_TS, CW_F_CPU, CW_F_CTX, CW_F_FLAGS,
		{ "key", CW_FK_VAR, 0, 16, 0, 0 },
		{ "value", CW_FK_VAR, 0, 18, 0, 0 },
		CW_F_END,
	};
	static const struct cw_field task[] = {
		CW_F_TS, CW_F_CPU, CW_F_CTX, CW_F_FLAGS,
		{ "tid", CW_FK_U, 4, 16, 0, 0 },
		{ "pid", CW_FK_U, 4, 20, 0, 0 },
		{ "ppid", CW_FK_U, 4, 24, 0, 0 },
		{ "comm", CW_FK_STR, CW_COMM_LEN, 32, 0, 0 },
		{ "exe", CW_FK_VAR, 0, 28, 0, 0 },
		CW_F_END,
	};
	static const struct cw_field sw[] = {
		CW_F_TS, CW_F_CPU, CW_F_CTX, CW_F_FLAGS,
		{ "prev", CW_FK_TASK, 8, 16, 0, 0 },
		{ "next", CW_FK_TASK, 8, 24, 0, 0 },
		{ "prev_state", CW_FK_U, 8, 32, 0, 0 },
		{ "prev_prio", CW_FK_S32, 4, 40, 0, 0 },
		{ "next_prio", CW_FK_S32, 4, 44, 0, 0 },
		{ "prev_start", CW_FK_U, 8, 48, 0, CW_FO_NONZERO },
		{ "next_start", CW_FK_U, 8, 56, 0, CW_FO_NONZERO },
		CW_F_END,
	};
	static const struct cw_field wake[] = {
		CW_F_TS, CW_F_CPU, CW_F_CTX_ALWAYS, CW_F_FLAGS,
		{ "waker", CW_FK_TASK, 8, 16, 0, 0 },
		{ "wakee", CW_FK_TASK, 8, 24, 0, 0 },
		{ "target_cpu", CW_FK_S32, 4, 32, 0, 0 },
		{ "prio", CW_FK_S32, 4, 36, 0, 0 },
		{ "waker_start", CW_FK_U, 8, 40, 0, CW_FO_NONZERO },
		{ "wakee_start", CW_FK_U, 8, 48, 0, CW_FO_NONZERO },
		CW_F_END,
	};
	static const struct cw_field fork[] = {
		CW_F_TS, CW_F_CPU, CW_F_CTX, CW_F_FLAGS,
		{ "parent", CW_FK_TASK, 8, 16, 0, 0 },
		{ "child", CW_FK_TASK, 8, 24, 0, 0 },
		{ "fork_flags", CW_FK_HEX, 4, 32, CW_FORK_THREAD, CW_FO_EXTRA },
		{ "thread", CW_FK_BIT, 4, 32, CW_FORK_THREAD, 0 },
		{ "clone_flags", CW_FK_HEX, 8, 40, 0, 0 },
		{ "comm", CW_FK_STR, CW_COMM_LEN, 48, 0, 0 },
		{ "parent_start", CW_FK_U, 8, 64, 0, CW_FO_NONZERO },
		{ "child_start", CW_FK_U, 8, 72, 0, CW_FO_NONZERO },
		CW_F_END,
	};
	static const struct cw_field exec[] = {
		CW_F_TS, CW_F_CPU, CW_F_CTX, CW_F_FLAGS,
		{ "task", CW_FK_TASK, 8, 16, 0, 0 },
		{ "old_tid", CW_FK_U, 4, 24, 0, 0 },
		{ "comm", CW_FK_STR, CW_COMM_LEN, 32, 0, 0 },
		{ "filename", CW_FK_STR, CW_EXEC_PATH_LEN, 48, 0, 0 },
		{ "start", CW_FK_U, 8, 176, 0, CW_FO_NONZERO },
		CW_F_END,
	};
	static const struct cw_field ex[] = {
		CW_F_TS, CW_F_CPU, CW_F_CTX, CW_F_FLAGS,
		{ "task", CW_FK_TASK, 8, 16, 0, 0 },
		{ "exit_flags", CW_FK_HEX, 4, 24, CW_EXIT_GROUP_DEAD, CW_FO_EXTRA },
		{ "group_dead", CW_FK_BIT, 4, 24, CW_EXIT_GROUP_DEAD, 0 },
		{ "code", CW_FK_S32, 4, 28, 0, 0 },
		{ "start", CW_FK_U, 8, 32, 0, CW_FO_NONZERO },
		CW_F_END,
	};
	static const struct cw_field ren[] = {
		CW_F_TS, CW_F_CPU, CW_F_CTX, CW_F_FLAGS,
		{ "task", CW_FK_TASK, 8, 16, 0, 0 },
		{ "old", CW_FK_STR, CW_COMM_LEN, 24, 0, 0 },
		{ "new", CW_FK_STR, CW_COMM_LEN, 40, 0, 0 },
		{ "start", CW_FK_U, 8, 56, 0, CW_FO_NONZERO },
		CW_F_END,
	};
	static const struct cw_field acct[] = {
		CW_F_TS, CW_F_CPU, CW_F_CTX, CW_F_FLAGS,
		{ "window", CW_FK_U, 8, 16, 0, 0 },
		{ "ring", CW_FK_RING, 2, 40, 0, 0 },
		{ "class", CW_FK_CLASS, 2, 42, 0, 0 },
		{ "written", CW_FK_U, 8, 24, 0, 0 },
		{ "lost", CW_FK_U, 8, 32, 0, 0 },
		CW_F_END,
	};
	static const struct cw_field raw[] = {
		{ "type", CW_FK_HEX, 2, 0, 0, 0 },
		{ "size", CW_FK_SIZE, 2, 2, 0, 0 },
		CW_F_TS, CW_F_CPU, CW_F_CTX, CW_F_FLAGS,
		{ "body", CW_FK_BODY, 0, 16, 0, CW_FO_NONZERO },
		CW_F_END,
	};
	static const struct cw_rectype types[] = {
		{ "kv", CW_REC_META_KV, sizeof(struct cw_meta_kv), kv },
		{ "task", CW_REC_META_TASK, sizeof(struct cw_meta_task), task },
		{ "account", CW_REC_ACCOUNT, sizeof(struct cw_account), acct },
		{ "switch", CW_REC_SWITCH, sizeof(struct cw_switch), sw },
		{ "waking", CW_REC_WAKING, sizeof(struct cw_wake), wake },
		{ "wakeup", CW_REC_WAKEUP, sizeof(struct cw_wake), wake },
		{ "wakeup_new", CW_REC_WAKEUP_NEW, sizeof(struct cw_wake), wake },
		{ "fork", CW_REC_FORK, sizeof(struct cw_fork), fork },
		{ "exec", CW_REC_EXEC, sizeof(struct cw_exec), exec },
		{ "exit", CW_REC_EXIT, sizeof(struct cw_exit), ex },
		{ "rename", CW_REC_RENAME, sizeof(struct cw_rename), ren },
		{ "raw", 0, 0, raw },
		{ NULL, 0, 0, NULL },
	};
	return types;
}

static inline const struct cw_rectype *cw_text_type_by_name(const char *name)
{
	for (const struct cw_rectype *t = cw_text_types(); t->name; t++)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

/* The typed entry for a record type, NULL if only "raw" can print it. */
static inline const struct cw_rectype *cw_text_type_by_type(uint16_t type)
{
	for (const struct cw_rectype *t = cw_text_types(); t->name; t++)
		if (t->base && t->type == type)
			return t;
	return NULL;
}

static inline const char *const *cw_text_names(int kind, unsigned int *n)
{
	static const char *const ctx[] = { "task", "softirq", "hardirq", "nmi", "unknown" };
	static const char *const ring[] = { "edge", "sample", "map" };
	static const char *const cls[] = { "meta",  "sched",  "io_uring", "workqueue",
					   "timer", "futex", "sample",   "adapter" };

	switch (kind) {
	case CW_FK_CTX:
		*n = 5;
		return ctx;
	case CW_FK_RING:
		*n = 3;
		return ring;
	default:
		*n = 8;
		return cls;
	}
}

/* One "key=value" (or bare word) of a line; val is decoded and
 * NUL-terminated, vlen excludes the NUL, val NULL for a bare word. */
struct cw_tok {
	const char *key;
	char *val;
	size_t vlen;
};

#define CW_TEXT_MAXTOK 32

static inline int cw_text_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Split @line (modified in place) into tokens. @return the number of
 * tokens (0 for a blank or comment line) or -1 with *err set.
 */
static inline int cw_text_tokenize(char *line, struct cw_tok *tok, int max, const char **err)
{
	char *p = line;
	int n = 0;

	for (;;) {
		char *key, *w;

		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (!*p || *p == '#')
			return n;
		if (n == max) {
			*err = "too many fields";
			return -1;
		}
		key = p;
		while (*p && *p != '=' && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') {
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
			p++;
			for (;;) {
				if (!*p) {
					*err = "unterminated string";
					return -1;
				}
				if (*p == '"') {
					p++;
					break;
				}
				if (*p == '\\') {
					int hi, lo;

					p++;
					if (*p == '"' || *p == '\\') {
						*w++ = *p++;
					} else if (*p == 'x' && (hi = cw_text_hexval(p[1])) >= 0 &&
						   (lo = cw_text_hexval(p[2])) >= 0) {
						*w++ = (char)(hi << 4 | lo);
						p += 3;
					} else {
						*err = "bad escape in string (use \\\" \\\\ or \\xHH)";
						return -1;
					}
					continue;
				}
				*w++ = *p++;
			}
			if (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') {
				*err = "garbage after closing quote";
				return -1;
			}
		} else {
			while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') {
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

/* Decimal or 0x-hex, optionally negative when @neg is not NULL. */
static inline int cw_text_num(const struct cw_tok *t, uint64_t *v, int *neg)
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
		int d = base == 16 ? cw_text_hexval(*s) : (*s >= '0' && *s <= '9' ? *s - '0' : -1);

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

static inline void cw_text_put(uint8_t *p, int size, uint64_t v)
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

static inline uint64_t cw_text_get(const uint8_t *p, int size)
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

/*
 * Build the record described by tokens @tok[0..n) (tok[0] is the record
 * name) into @buf (at least 65536 bytes). @return the record size, or -1
 * with an English message in @err.
 */
static inline int cw_text_build(const struct cw_tok *tok, int n, uint8_t *buf, char *err,
				size_t errlen)
{
	const struct cw_rectype *rt = cw_text_type_by_name(tok[0].key);
	const struct cw_field *f;
	size_t cur, size;
	uint64_t v;
	int neg;

	if (!rt || tok[0].val) {
		snprintf(err, errlen, "unknown record type '%s'", tok[0].key);
		return -1;
	}
	for (int i = 1; i < n; i++) {
		for (f = rt->fields; f->key && strcmp(f->key, tok[i].key); f++)
			;
		if (!f->key) {
			snprintf(err, errlen, "%s: unknown key '%s'", rt->name, tok[i].key);
			return -1;
		}
		if (!tok[i].val) {
			snprintf(err, errlen, "%s: '%s' needs a value (key=value)", rt->name,
				 tok[i].key);
			return -1;
		}
		for (int j = 1; j < i; j++) {
			if (!strcmp(tok[j].key, tok[i].key)) {
				snprintf(err, errlen, "%s: duplicate key '%s'", rt->name, tok[i].key);
				return -1;
			}
		}
	}

	size = rt->base ? rt->base : sizeof(struct cw_hdr);
	memset(buf, 0, 65536);
	cur = size;
	for (f = rt->fields; f->key; f++) {
		const struct cw_tok *t = NULL;

		for (int i = 1; i < n; i++)
			if (!strcmp(tok[i].key, f->key))
				t = &tok[i];
		if (!t)
			continue;
		switch (f->kind) {
		case CW_FK_U:
		case CW_FK_HEX:
			if (cw_text_num(t, &v, NULL) ||
			    (f->size < 8 && v >> (8 * f->size)))
				goto bad_num;
			cw_text_put(buf + f->off, f->size, v);
			break;
		case CW_FK_S32:
			if (cw_text_num(t, &v, &neg) || (neg ? v > 0x80000000ull : v > 0xffffffffull))
				goto bad_num;
			cw_put32(buf + f->off, neg ? (uint32_t)(0 - (uint32_t)v) : (uint32_t)v);
			break;
		case CW_FK_TASK: {
			char *slash = strchr(t->val, '/');
			struct cw_tok a = { NULL, t->val, 0 }, b = { NULL, NULL, 0 };
			uint64_t tid, pid;

			if (!slash)
				goto bad_task;
			*slash = '\0';
			a.vlen = strlen(a.val);
			b.val = slash + 1;
			b.vlen = strlen(b.val);
			neg = cw_text_num(&a, &tid, NULL) || cw_text_num(&b, &pid, NULL);
			*slash = '/';
			if (neg || tid > UINT32_MAX || pid > UINT32_MAX)
				goto bad_task;
			cw_put32(buf + f->off, (uint32_t)tid);
			cw_put32(buf + f->off + 4, (uint32_t)pid);
			break;
		}
		case CW_FK_STR:
			if (t->vlen > f->size) {
				snprintf(err, errlen, "%s: %s: string longer than %u bytes", rt->name,
					 f->key, f->size);
				return -1;
			}
			memcpy(buf + f->off, t->val, t->vlen);
			break;
		case CW_FK_CTX:
		case CW_FK_RING:
		case CW_FK_CLASS: {
			unsigned int nn, k;
			const char *const *names = cw_text_names(f->kind, &nn);

			for (k = 0; k < nn && strcmp(names[k], t->val); k++)
				;
			if (k < nn) {
				v = k;
			} else if (cw_text_num(t, &v, NULL) || v >> (8 * f->size)) {
				snprintf(err, errlen, "%s: %s: unknown value '%s'", rt->name, f->key,
					 t->val);
				return -1;
			}
			cw_text_put(buf + f->off, f->size, v);
			break;
		}
		case CW_FK_BIT:
			if (cw_text_num(t, &v, NULL) || v > 1) {
				snprintf(err, errlen, "%s: %s: expected 0 or 1", rt->name, f->key);
				return -1;
			}
			if (v)
				cw_put32(buf + f->off, cw_get32(buf + f->off) | f->arg);
			else
				cw_put32(buf + f->off, cw_get32(buf + f->off) & ~f->arg);
			break;
		case CW_FK_VAR:
			if (t->vlen > 65528 - cur) {
				snprintf(err, errlen, "%s: %s: too long for a record", rt->name, f->key);
				return -1;
			}
			memcpy(buf + cur, t->val, t->vlen);
			cw_put16(buf + f->off, (uint16_t)t->vlen);
			cur += t->vlen;
			break;
		case CW_FK_SIZE:
			if (cw_text_num(t, &v, NULL) || v < sizeof(struct cw_hdr) || v > 65528 ||
			    v % 8) {
				snprintf(err, errlen,
					 "%s: size must be a multiple of 8 between 16 and 65528",
					 rt->name);
				return -1;
			}
			size = cur = (size_t)v;
			break;
		case CW_FK_BODY:
			if (t->vlen != 2 * (size - sizeof(struct cw_hdr))) {
				snprintf(err, errlen, "%s: body must be %zu hex digits (size - 16 bytes)",
					 rt->name, 2 * (size - sizeof(struct cw_hdr)));
				return -1;
			}
			for (size_t k = 0; k < t->vlen; k += 2) {
				int hi = cw_text_hexval(t->val[k]), lo = cw_text_hexval(t->val[k + 1]);

				if (hi < 0 || lo < 0) {
					snprintf(err, errlen, "%s: body: bad hex digit", rt->name);
					return -1;
				}
				buf[f->off + k / 2] = (uint8_t)(hi << 4 | lo);
			}
			break;
		}
		continue;
bad_num:
		snprintf(err, errlen, "%s: %s: bad number '%s'", rt->name, f->key, t->val);
		return -1;
bad_task:
		snprintf(err, errlen, "%s: %s: expected tid/pid, got '%s'", rt->name, f->key,
			 t->val);
		return -1;
	}
	size = (cur + 7) & ~(size_t)7;
	if (rt->base)
		cw_put16(buf, rt->type);
	cw_put16(buf + 2, (uint16_t)size);
	return (int)size;
}

#endif /* CAUSEWAY_DUMP_H */
