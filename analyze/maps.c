// SPDX-License-Identifier: MIT
/*
 * Address spaces (maps.h): one sorted array of disjoint mappings per
 * process, found through a hash table on the pid (lib/htab.h), so a
 * lookup is one probe and one binary search. The spaces sit on a list in the
 * order they were last named (any call that takes the pid), so the bound
 * can drop the least recently named one in O(1). Paths are interned: a
 * library mapped by a thousand processes is stored once, and the frames
 * that point at a path stay valid after its mappings are gone.
 *
 * The records are untrusted input: sizes are checked against the record
 * before anything is read, and a record that does not hold together
 * changes nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "maps.h"
#include "lib/hash.h"
#include "lib/htab.h"

#define DEFAULT_MAX_MAPPINGS (1u << 20)
/* One process's executable mappings: a real one has a few hundred. An
 * insert moves the mappings above it, so this bounds what a trace of
 * mappings in random order can cost; past it the space is dropped whole,
 * like the global bound does. */
#define MAX_SPACE_MAPPINGS 8192
/* Interned path bytes: beyond this, new paths are not stored (their
 * mappings keep a NULL path and stay unsymbolized), so a trace of
 * endless distinct paths cannot take the analyzer's memory. */
#define MAX_PATH_BYTES (64u << 20)
#define ANON_PATH "[anon]"

struct space {
	struct cw_hnode hn;
	uint32_t pid;
	struct cw_mapping *v;
	size_t n, cap;
	uint64_t version;
	struct space *prev, *next; /* recency list, most recent at head */
};

struct cw_maps {
	size_t max, total;
	uint64_t dropped, version;
	struct cw_htab tab; /* pid -> space */
	struct space *head, *tail;
	struct cw_strtab *paths;
};

static uint64_t space_rehash(const struct cw_hnode *n)
{
	return cw_mix64(cw_hentry(n, struct space, hn)->pid);
}

static uint64_t hash_str(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

struct cw_maps *cw_maps__new(size_t max_mappings)
{
	struct cw_maps *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->max = max_mappings ? max_mappings : DEFAULT_MAX_MAPPINGS;
	m->paths = cw_strtab__new(MAX_PATH_BYTES);
	if (cw_htab__grow(&m->tab, 64, space_rehash, 0) || !m->paths) {
		cw_maps__free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

void cw_maps__free(struct cw_maps *m)
{
	struct cw_hnode *tmp;
	struct space *sp;
	size_t i;

	if (!m)
		return;
	cw_htab_for_each_safe(&m->tab, i, sp, tmp, hn) {
		free(sp->v);
		free(sp);
	}
	cw_strtab__free(m->paths);
	cw_htab__free(&m->tab);
	free(m);
}

/* --- interned strings -------------------------------------------------- */

struct chunk {
	struct chunk *next;
	size_t used, size;
	char data[];
};

/* An interned string, in a chunk: its node, its hash, its bytes. */
struct istr {
	struct cw_hnode hn;
	uint64_t hash;
	char s[];
};

struct cw_strtab {
	struct cw_htab strs;
	size_t bytes, max_bytes; /* of the strings, not their headers */
	struct chunk *chunks;
};

struct cw_strtab *cw_strtab__new(size_t max_bytes)
{
	struct cw_strtab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->max_bytes = max_bytes ? max_bytes : SIZE_MAX;
	if (cw_htab__grow(&t->strs, 256, NULL, 0)) {
		free(t);
		return NULL;
	}
	return t;
}

void cw_strtab__free(struct cw_strtab *t)
{
	if (!t)
		return;
	while (t->chunks) {
		struct chunk *c = t->chunks;

		t->chunks = c->next;
		free(c);
	}
	cw_htab__free(&t->strs);
	free(t);
}

/* @len bytes, aligned for a struct istr. */
static void *arena_alloc(struct cw_strtab *t, size_t len)
{
	struct chunk *c = t->chunks;

	len = (len + _Alignof(struct istr) - 1) & ~(_Alignof(struct istr) - 1);
	if (!c || c->size - c->used < len) {
		size_t size = len > 65536 ? len : 65536;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		/* a large string gets a chunk of its own behind the current
		 * one, so the current one's free room is not lost */
		if (t->chunks && len > 65536) {
			c->next = t->chunks->next;
			t->chunks->next = c;
		} else {
			c->next = t->chunks;
			t->chunks = c;
		}
	}
	c->used += len;
	return c->data + c->used - len;
}

static uint64_t istr_rehash(const struct cw_hnode *n)
{
	return cw_hentry(n, struct istr, hn)->hash;
}

const char *cw_strtab__intern(struct cw_strtab *t, const char *s, size_t len)
{
	uint64_t h = cw_mix64(hash_str(s, len));
	struct istr *e;

	cw_htab_for_each_possible(&t->strs, e, hn, h)
		if (e->hash == h && !strncmp(e->s, s, len) && e->s[len] == '\0')
			return e->s;
	if (len + 1 > t->max_bytes - t->bytes) {
		errno = ENOSPC;
		return NULL;
	}
	if ((t->strs.n >= t->strs.cap && cw_htab__grow(&t->strs, 0, istr_rehash, 0)) ||
	    !(e = arena_alloc(t, sizeof(*e) + len + 1))) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(e->s, s, len);
	e->s[len] = '\0';
	e->hash = h;
	cw_htab__add(&t->strs, &e->hn, h);
	t->bytes += len + 1;
	return e->s;
}

/* --- spaces ------------------------------------------------------------- */

static struct space *space_of(const struct cw_maps *m, uint32_t pid)
{
	struct space *sp;

	cw_htab_for_each_possible(&m->tab, sp, hn, cw_mix64(pid))
		if (sp->pid == pid)
			return sp;
	return NULL;
}

static void list_unlink(struct cw_maps *m, struct space *sp)
{
	if (sp->prev)
		sp->prev->next = sp->next;
	else
		m->head = sp->next;
	if (sp->next)
		sp->next->prev = sp->prev;
	else
		m->tail = sp->prev;
	sp->prev = sp->next = NULL;
}

static void list_push(struct cw_maps *m, struct space *sp)
{
	sp->next = m->head;
	if (m->head)
		m->head->prev = sp;
	m->head = sp;
	if (!m->tail)
		m->tail = sp;
}

static void touch(struct cw_maps *m, struct space *sp)
{
	if (m->head != sp) {
		list_unlink(m, sp);
		list_push(m, sp);
	}
}

static struct space *lookup(struct cw_maps *m, uint32_t pid)
{
	struct space *sp = space_of(m, pid);

	if (sp)
		touch(m, sp);
	return sp;
}

static void remove_space(struct cw_maps *m, struct space *sp)
{
	cw_htab__del(&m->tab, &sp->hn, cw_mix64(sp->pid));
	list_unlink(m, sp);
	m->total -= sp->n;
	free(sp->v);
	free(sp);
}

static struct space *get_or_add(struct cw_maps *m, uint32_t pid)
{
	struct space *sp = lookup(m, pid);

	if (sp)
		return sp;
	if (m->tab.n >= m->tab.cap && cw_htab__grow(&m->tab, 0, space_rehash, 0))
		return NULL;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return NULL;
	sp->pid = pid;
	cw_htab__add(&m->tab, &sp->hn, cw_mix64(pid));
	list_push(m, sp);
	return sp;
}

static int reserve(struct space *sp, size_t need)
{
	struct cw_mapping *v;
	size_t cap = sp->cap ? sp->cap : 8;

	if (need <= sp->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	v = realloc(sp->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	sp->v = v;
	sp->cap = cap;
	return 0;
}

/* Past the bound, whole spaces go, least recently named first: a partial
 * space would symbolize some of a process's frames and not others. The
 * space just changed is the most recent, so it goes last, and only when
 * it alone is past the bound. */
static void enforce_bound(struct cw_maps *m)
{
	while (m->total > m->max && m->tail) {
		remove_space(m, m->tail);
		m->dropped++;
	}
}

/* first index whose mapping ends above addr */
static size_t first_above(const struct space *sp, uint64_t addr)
{
	size_t lo = 0, hi = sp->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sp->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int cw_maps__mmap(struct cw_maps *m, const struct cw_mmap *rec)
{
	struct cw_mapping nm = { 0 }, left, right;
	struct space *sp;
	size_t i, j, nkeep, plen;
	int has_left, has_right;
	const char *path = (const char *)(rec + 1);

	if (rec->hdr.size < sizeof(*rec) || rec->path_len > rec->hdr.size - sizeof(*rec) ||
	    rec->build_id_len > sizeof(rec->build_id) || !rec->len ||
	    rec->start + rec->len < rec->start)
		return 1;
	nm.start = rec->start;
	nm.end = rec->start + rec->len;
	nm.pgoff = rec->pgoff;
	nm.build_id_len = rec->build_id_len;
	memcpy(nm.build_id, rec->build_id, rec->build_id_len);
	/* a NUL inside the path ends it: the rest could not name a file */
	plen = strnlen(path, rec->path_len);
	if (!plen) {
		path = ANON_PATH;
		plen = strlen(ANON_PATH);
	}
	nm.path = cw_strtab__intern(m->paths, path, plen);
	if (!nm.path && errno == ENOMEM)
		return -ENOMEM;

	sp = get_or_add(m, rec->task.pid);
	if (!sp || reserve(sp, sp->n + 2))
		return -ENOMEM;
	i = first_above(sp, nm.start);
	for (j = i; j < sp->n && sp->v[j].start < nm.end; j++)
		;
	/* Only the first and last overlapped mappings can stick out of the
	 * new one; what sticks out survives, cut to size. */
	has_left = i < j && sp->v[i].start < nm.start;
	has_right = i < j && sp->v[j - 1].end > nm.end;
	if (has_left) {
		left = sp->v[i];
		left.end = nm.start;
	}
	if (has_right) {
		right = sp->v[j - 1];
		right.pgoff += nm.end - right.start;
		right.start = nm.end;
	}
	nkeep = (size_t)has_left + 1 + (size_t)has_right;
	memmove(sp->v + i + nkeep, sp->v + j, (sp->n - j) * sizeof(*sp->v));
	sp->n = sp->n - (j - i) + nkeep;
	m->total = m->total - (j - i) + nkeep;
	if (has_left)
		sp->v[i++] = left;
	sp->v[i++] = nm;
	if (has_right)
		sp->v[i] = right;
	sp->version = ++m->version;
	if (sp->n > MAX_SPACE_MAPPINGS) {
		remove_space(m, sp);
		m->dropped++;
	}
	enforce_bound(m);
	return 0;
}

/* An exec empties the space: the same as its end (a mapping after it
 * makes a new one). */
void cw_maps__exec(struct cw_maps *m, uint32_t pid)
{
	cw_maps__exit(m, pid);
}

int cw_maps__fork(struct cw_maps *m, uint32_t parent, uint32_t child)
{
	struct space *ps, *cs;

	if (parent == child)
		return 0;
	cw_maps__exit(m, child);
	ps = lookup(m, parent);
	if (!ps || !ps->n)
		return 0;
	cs = get_or_add(m, child);
	if (!cs || reserve(cs, ps->n))
		return -ENOMEM;
	/* get_or_add may have grown the table, never moved the spaces */
	memcpy(cs->v, ps->v, ps->n * sizeof(*ps->v));
	cs->n = ps->n;
	m->total += cs->n;
	cs->version = ++m->version;
	enforce_bound(m);
	return 0;
}

void cw_maps__exit(struct cw_maps *m, uint32_t pid)
{
	struct space *sp = space_of(m, pid);

	if (sp)
		remove_space(m, sp);
}

const struct cw_mapping *cw_maps__find(struct cw_maps *m, uint32_t pid, uint64_t addr)
{
	struct space *sp = lookup(m, pid);
	size_t i;

	if (!sp)
		return NULL;
	i = first_above(sp, addr);
	return i < sp->n && sp->v[i].start <= addr ? &sp->v[i] : NULL;
}

const struct cw_mapping *cw_maps__all(struct cw_maps *m, uint32_t pid, size_t *n,
				      uint64_t *version)
{
	struct space *sp = lookup(m, pid);

	*n = sp ? sp->n : 0;
	if (version)
		*version = sp ? sp->version : 0;
	return sp ? sp->v : NULL;
}

uint64_t cw_maps__dropped(const struct cw_maps *m)
{
	return m->dropped;
}
