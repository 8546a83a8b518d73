// SPDX-License-Identifier: MIT
/*
 * The kallsyms snapshot (ksyms.h): one array of (address, name offset)
 * over one arena of names, sorted once.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ksyms.h"

struct sym {
	uint64_t addr;
	uint32_t name;	 /* offset in the arena */
	uint32_t module; /* offset in the arena of "[module]"'s name; NO_MODULE */
};

#define NO_MODULE UINT32_MAX

struct cw_ksyms {
	struct sym *syms;
	size_t n, cap;
	char *names;
	size_t used, room;
	uint64_t dropped;
	size_t max_syms, max_bytes;
	/* the module of the last line: a module's symbols come together, so
	 * its name is stored once per run of lines */
	uint32_t last_module;
	size_t last_module_len;
};

struct cw_ksyms *cw_ksyms__new_bounded(size_t max_syms, size_t max_bytes)
{
	struct cw_ksyms *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->max_syms = max_syms && max_syms < CW_KSYMS_MAX ? max_syms : CW_KSYMS_MAX;
	k->max_bytes = max_bytes && max_bytes < CW_KSYMS_BYTES ? max_bytes : CW_KSYMS_BYTES;
	k->last_module = NO_MODULE;
	return k;
}

struct cw_ksyms *cw_ksyms__new(void)
{
	return cw_ksyms__new_bounded(0, 0);
}

void cw_ksyms__free(struct cw_ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->names);
	free(k);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem, size_t max)
{
	size_t c = *cap ? *cap : 1024;
	void *q;

	while (c < need)
		c *= 2;
	if (c > max)
		c = max;
	q = realloc(*p, c * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* One "ADDR TYPE NAME[\t[MODULE]]" line; 0 when it was not a symbol. */
static int add_line(struct cw_ksyms *k, const char *s, size_t len)
{
	char *end;
	const char *name, *mod;
	size_t nlen, mlen, need;
	int same_mod;
	uint64_t addr;
	char hex[17];
	size_t i;

	for (i = 0; i < len && i < 16 && s[i] != ' '; i++)
		hex[i] = s[i];
	if (!i || i == len || s[i] != ' ' || i + 3 > len || s[i + 2] != ' ')
		return 0;
	hex[i] = '\0';
	addr = strtoull(hex, &end, 16);
	if (*end || !addr)
		return 0;
	name = s + i + 3;
	for (nlen = 0; name + nlen < s + len && name[nlen] != '\t' && name[nlen] != ' '; nlen++)
		;
	if (!nlen)
		return 0;
	mod = name + nlen;
	while (mod < s + len && (*mod == '\t' || *mod == ' '))
		mod++;
	/* "[module]" after the name; anything else is not a module */
	mlen = 0;
	if (mod < s + len && *mod == '[') {
		const char *close = memchr(mod, ']', (size_t)(s + len - mod));

		if (close && close > mod + 1) {
			mod++;
			mlen = (size_t)(close - mod);
		}
	}
	same_mod = mlen && k->last_module != NO_MODULE && k->last_module_len == mlen &&
		   !memcmp(k->names + k->last_module, mod, mlen);
	need = nlen + 1 + (mlen && !same_mod ? mlen + 1 : 0);
	if (k->n >= k->max_syms || k->used + need > k->max_bytes) {
		k->dropped++;
		return 0;
	}
	if (k->n == k->cap && grow((void **)&k->syms, &k->cap, k->n + 1, sizeof(*k->syms),
				   k->max_syms))
		return -ENOMEM;
	if (k->used + need > k->room &&
	    grow((void **)&k->names, &k->room, k->used + need, 1, k->max_bytes))
		return -ENOMEM;
	if (mlen && !same_mod) {
		memcpy(k->names + k->used, mod, mlen);
		k->names[k->used + mlen] = '\0';
		k->last_module = (uint32_t)k->used;
		k->last_module_len = mlen;
		k->used += mlen + 1;
	}
	memcpy(k->names + k->used, name, nlen);
	k->names[k->used + nlen] = '\0';
	k->syms[k->n].addr = addr;
	k->syms[k->n].name = (uint32_t)k->used;
	k->syms[k->n].module = mlen ? k->last_module : NO_MODULE;
	k->n++;
	k->used += nlen + 1;
	return 0;
}

int cw_ksyms__add(struct cw_ksyms *k, const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		int err = add_line(k, p, l);

		if (err)
			return err;
		p += l + 1;
	}
	return 0;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Aliases at one address: the first in the file wins, whatever
	 * qsort does with equal keys (docs/model.md §5.10: same trace, same db). */
	return x->name < y->name ? -1 : x->name > y->name;
}

void cw_ksyms__finish(struct cw_ksyms *k)
{
	if (k && k->n)
		qsort(k->syms, k->n, sizeof(*k->syms), sym_cmp);
}

size_t cw_ksyms__count(const struct cw_ksyms *k)
{
	return k ? k->n : 0;
}

uint64_t cw_ksyms__dropped(const struct cw_ksyms *k)
{
	return k ? k->dropped : 0;
}

const char *cw_ksyms__lookup(const struct cw_ksyms *k, uint64_t addr, uint64_t *off)
{
	return cw_ksyms__lookup_module(k, addr, off, NULL);
}

const char *cw_ksyms__lookup_module(const struct cw_ksyms *k, uint64_t addr, uint64_t *off,
				    const char **module)
{
	size_t lo = 0, hi;

	if (!k || !k->n || addr < k->syms[0].addr)
		return NULL;
	hi = k->n;
	/* the last symbol with addr <= @addr, the first of its aliases */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	while (lo && k->syms[lo - 1].addr == k->syms[lo].addr)
		lo--;
	*off = addr - k->syms[lo].addr;
	if (module)
		*module = k->syms[lo].module == NO_MODULE ? NULL : k->names + k->syms[lo].module;
	return k->names + k->syms[lo].name;
}

char *cw_ksyms__name(const struct cw_ksyms *k, uint64_t addr, char *buf, size_t len)
{
	uint64_t off;
	const char *name = cw_ksyms__lookup(k, addr, &off);

	if (!name)
		snprintf(buf, len, "0x%" PRIx64, addr);
	else if (!off)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "%s+0x%" PRIx64, name, off);
	return buf;
}
