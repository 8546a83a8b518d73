// SPDX-License-Identifier: MIT
/*
 * pprof: a gzip'd perftools.profiles.Profile (github.com/google/pprof,
 * proto/profile.proto) of the causal stacks (profile.h, docs/model.md
 * §8), written with pb.h and zlib.
 *
 * Layout (docs/model.md §8):
 *
 *   sample_type   samples/count, cpu/nanoseconds, waits/count,
 *                 offcpu/nanoseconds; default cpu. A CPU stack has
 *                 [n, ns, 0, 0], an off-CPU one [0, 0, n, ns], so the
 *                 default view is CPU time and -sample_index=offcpu
 *                 blocked time, never the two summed. Each value is
 *                 profile.c's estimate (weights over the probability the
 *                 stack was kept, docs/model.md §4.2), rounded.
 *   period        the CPU samples' (their weight), as cpu/nanoseconds.
 *   duration      the capture's, within --since and --until.
 *   location      leaf first. One Location per stack frame, except that
 *                 the inlined frames profile.c puts before the frame
 *                 that holds them at one address are one Location of
 *                 several Lines, innermost first, as profile.proto has
 *                 inlining. A causal frame is a Location of its own.
 *   function      per (name, file, mapping kind). system_name is left
 *                 unset: pprof takes a name equal to its system_name for
 *                 one to demangle, and cuts what reads as a C++
 *                 signature out of it ("(...)" of a name with "::" or
 *                 brackets, as "[kernel]+0x..." has), where our
 *                 "(reconstructed)" and "(tid N)" are meaning.
 *   mapping       [causal] (the causal frames), [kernel.kallsyms] (and
 *                 a kernel module's own, "[ext4]"), each user module by
 *                 its path, [unknown] for an address in no module; all
 *                 has_functions, so pprof symbolizes nothing. Mapping 1,
 *                 which pprof names the profile by ("File:"), is the
 *                 executable the most stacks go through (a user module
 *                 not named like a shared object), else [causal].
 *   label         request, task, confidence, mechanism, thread (strings,
 *                 for -tagfocus, -tagroot, -tags). No request id: pprof
 *                 keeps, in every node a sample passes through, each
 *                 distinct set of labels it meets, so a label of one value
 *                 per request makes its graph grow as samples times depth
 *                 (--request ID exports one request).
 *
 * Samples are written as profile.c calls back, through zlib, so that only
 * the tables (strings, locations, functions) stay in memory; they follow,
 * as protobuf's field order is free.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "pb.h"
#include "profile.h"
#include "../lib/esc.h"
#include "../lib/hash.h"
#include "../lib/htab.h"

/* perftools.profiles field numbers (profile.proto; stable) */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,
	LABEL_KEY = 1,
	LABEL_STR = 2,
	MAPPING_ID = 1,
	MAPPING_FILENAME = 5,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,
	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_FILENAME = 4,
};

/* The values of a sample, in sample_type's order. */
enum { V_SAMPLES, V_CPU, V_WAITS, V_OFFCPU, NVALUES };
static const char *const value_types[NVALUES][2] = {
	[V_SAMPLES] = { "samples", "count" },
	[V_CPU] = { "cpu", "nanoseconds" },
	[V_WAITS] = { "waits", "count" },
	[V_OFFCPU] = { "offcpu", "nanoseconds" },
};

/* Samples are handed to zlib in pieces of about this many bytes. */
#define FLUSH_BYTES (64u << 10)

enum map_kind { MK_CAUSAL, MK_KERNEL, MK_USER };

struct str {
	struct cw_hnode hn;
	uint64_t hash;
	uint32_t idx;
	char s[];
};

struct mapping {
	uint32_t file;	     /* string index */
	uint8_t kind;	     /* enum map_kind */
	bool files, lines, inlines;
	uint64_t stacks;     /* samples whose stack goes through it */
	uint64_t last_stack; /* the sample that last counted it */
};

struct fn {
	struct cw_hnode hn;
	uint64_t hash;
	uint32_t id;
	uint32_t name, file; /* string indexes */
	uint8_t kind;	     /* enum map_kind */
};

/* A frame, or an inlined run of them, innermost first. What is written
 * is copied: the frames are profile.c's, gone once the samples are. */
struct loc {
	struct cw_hnode hn;
	uint64_t hash;
	uint32_t id;
	uint64_t address;
	size_t n;
	struct {
		const struct cw_xframe *f; /* to compare, while it lasts */
		uint32_t fn;		   /* the function's id */
		int64_t line;
	} l[];
};

/* Entries by content (a hash table) and by number (in the order made,
 * which is the order written). */
struct tab {
	struct cw_htab h;
	void **v;
	size_t n;
};

/* A table of uint32_t by a dense index, grown on demand, 0 where unset. */
struct u32s {
	uint32_t *v;
	size_t cap;
};

struct pp {
	struct cw_x *x;
	z_stream z;
	bool z_open;
	struct cw_pb msg;
	/* locations of one frame are in locs.v, not in locs.h: see
	 * loc_of_frame */
	struct tab strs, fns, locs;
	struct mapping *maps;
	size_t nmaps;
	/* by string index: the pp.maps index + 1 of the mapping of that
	 * file; by frame id (profile.h: dense): the id of the location of
	 * that frame alone; by location id: its pp.maps index */
	struct u32s map_of_str, loc_of_frame, map_of_loc;
	uint64_t *ids; /* one sample's location ids */
	size_t ids_cap;
	uint64_t nsamples;
	/* the label keys' strings */
	uint32_t k_request, k_task, k_confidence, k_mechanism, k_thread;
	unsigned char zbuf[1 << 16];
};

static uint64_t hash_str(const struct cw_hnode *n)
{
	return cw_hentry(n, struct str, hn)->hash;
}

static uint64_t hash_fn(const struct cw_hnode *n)
{
	return cw_hentry(n, struct fn, hn)->hash;
}

static uint64_t hash_loc(const struct cw_hnode *n)
{
	return cw_hentry(n, struct loc, hn)->hash;
}

/* Room in @t for one more entry (@fn: the hash of one in it), numbered
 * at most UINT32_MAX - 1. @return 0 or -1 (out of memory). */
static int room(struct tab *t, cw_htab_hash_fn *fn)
{
	if (t->n >= UINT32_MAX - 1)
		return -1;
	if (t->h.n == t->h.cap && cw_htab__grow(&t->h, t->h.cap ? t->h.cap * 2 : 1024, fn, 0))
		return -1;
	if (!(t->n & (t->n - 1))) { /* at 0, 1, 2, 4...: the array doubles */
		void **m = realloc(t->v, (t->n ? 2 * t->n : 1) * sizeof(*m));

		if (!m)
			return -1;
		t->v = m;
	}
	return 0;
}

/* Put @e in @t, after room(): by number, and by hash @h unless @hn is
 * NULL. @return its number. */
static uint32_t add(struct tab *t, void *e, struct cw_hnode *hn, uint64_t h)
{
	t->v[t->n] = e;
	if (hn)
		cw_htab__add(&t->h, hn, h);
	return (uint32_t)t->n++;
}

static void tab_free(struct tab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	free(t->h.b);
}

static int oom(void)
{
	cw_x__err("out of memory");
	return -1;
}

/* The string table's index of @s, text of ours or escaped already (as
 * profile.c's names and labels are); UINT32_MAX: out of memory. */
static uint32_t str_raw(struct pp *p, const char *s)
{
	uint64_t h = cw_hash_str(s);
	size_t len = strlen(s);
	struct str *e;

	cw_htab_for_each_possible(&p->strs.h, e, hn, h)
		if (e->hash == h && !strcmp(e->s, s))
			return e->idx;
	if (room(&p->strs, hash_str) || !(e = malloc(sizeof(*e) + len + 1)))
		return UINT32_MAX;
	e->hash = h;
	memcpy(e->s, s, len + 1);
	e->idx = add(&p->strs, e, &e->hn, h);
	return e->idx;
}

/* As str_raw(), for text from the database not escaped yet (module and
 * file paths are anyone's bytes); NULL is "" (index 0). */
static uint32_t str_esc(struct pp *p, const char *s)
{
	char buf[4096];

	if (!s)
		return 0;
	cw_esc_snprint(buf, sizeof(buf), s);
	return str_raw(p, buf);
}

static enum map_kind kind_of(const struct cw_xframe *f)
{
	return f->kind == CW_XF_KERNEL ? MK_KERNEL : f->kind == CW_XF_USER ? MK_USER : MK_CAUSAL;
}

/* Slot @i of @t, grown (zeroed) to hold it; NULL: out of memory. */
static uint32_t *slot(struct u32s *t, size_t i)
{
	if (i >= t->cap) {
		size_t cap = t->cap ? t->cap : 1024;
		uint32_t *m;

		while (cap <= i)
			cap *= 2;
		if (!(m = realloc(t->v, cap * sizeof(*m))))
			return NULL;
		memset(m + t->cap, 0, (cap - t->cap) * sizeof(*m));
		t->v = m;
		t->cap = cap;
	}
	return &t->v[i];
}

/* The mapping of frame @f, made when first met; -1: out of memory. */
static int64_t mapping_of(struct pp *p, const struct cw_xframe *f)
{
	enum map_kind k = kind_of(f);
	const char *name = k == MK_CAUSAL ? "[causal]" : f->module;
	uint32_t s, *mi;

	/* the analyzer's kernel module is "[kernel]" (docs/model.md §4.2);
	 * pprof, as perf, knows the kernel as [kernel.kallsyms] */
	if (k == MK_KERNEL && (!name || !strcmp(name, "[kernel]")))
		name = "[kernel.kallsyms]";
	if (!name)
		name = "[unknown]";
	if ((s = k == MK_CAUSAL ? str_raw(p, name) : str_esc(p, name)) == UINT32_MAX)
		return -1;
	if (!(mi = slot(&p->map_of_str, s)))
		return -1;
	if (!*mi) {
		struct mapping *m = realloc(p->maps, (p->nmaps + 1) * sizeof(*m));

		if (!m)
			return -1;
		p->maps = m;
		p->maps[p->nmaps] = (struct mapping){ .file = s, .kind = (uint8_t)k };
		*mi = (uint32_t)++p->nmaps;
	}
	return *mi - 1;
}

/* The function of frame @f: its id (index + 1); 0: out of memory. */
static uint32_t function_of(struct pp *p, const struct cw_xframe *f)
{
	uint32_t name = str_raw(p, f->name), file = str_esc(p, f->file);
	uint8_t kind = (uint8_t)kind_of(f);
	uint64_t h;
	struct fn *e;

	if (name == UINT32_MAX || file == UINT32_MAX)
		return 0;
	h = cw_mix64((uint64_t)name << 32 ^ (uint64_t)file << 2 ^ kind);
	cw_htab_for_each_possible(&p->fns.h, e, hn, h)
		if (e->name == name && e->file == file && e->kind == kind)
			return e->id;
	if (room(&p->fns, hash_fn) || !(e = malloc(sizeof(*e))))
		return 0;
	*e = (struct fn){ .hash = h, .name = name, .file = file, .kind = kind };
	e->id = add(&p->fns, e, &e->hn, h) + 1;
	return e->id;
}

/*
 * The location of frames @f[0..@n), root first as a sample has them (an
 * inlined run ends with its innermost frame): its id (index + 1); 0: out
 * of memory. A frame alone, the most of them, is found by its id; an
 * inlined run by its frames' hash.
 */
static uint32_t location_of(struct pp *p, const struct cw_xframe *const *f, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	uint32_t *one = NULL, *mi;
	struct loc *e;
	int64_t m;

	if (n == 1) {
		if (!(one = slot(&p->loc_of_frame, f[0]->id)))
			return 0;
		if (*one)
			return *one;
	} else {
		for (size_t i = n; i > 0; i--)
			h = cw_mix64(h ^ (uintptr_t)f[i - 1]);
		cw_htab_for_each_possible(&p->locs.h, e, hn, h) {
			size_t i = 0;

			if (e->hash != h || e->n != n)
				continue;
			while (i < n && e->l[i].f == f[n - 1 - i])
				i++;
			if (i == n)
				return e->id;
		}
	}
	if ((m = mapping_of(p, f[n - 1])) < 0 || room(&p->locs, hash_loc) ||
	    !(mi = slot(&p->map_of_loc, p->locs.n + 1)) ||
	    !(e = malloc(sizeof(*e) + n * sizeof(e->l[0]))))
		return 0;
	e->hash = h;
	e->address = f[n - 1]->address;
	e->n = n;
	for (size_t i = 0; i < n; i++) {
		const struct cw_xframe *fr = f[n - 1 - i];

		e->l[i].f = fr;
		e->l[i].line = fr->line;
		if (!(e->l[i].fn = function_of(p, fr))) {
			free(e);
			return 0;
		}
		p->maps[m].files |= fr->file != NULL;
		p->maps[m].lines |= fr->line != 0;
	}
	p->maps[m].inlines |= n > 1;
	e->id = add(&p->locs, e, one ? NULL : &e->hn, h) + 1;
	*mi = (uint32_t)m;
	if (one)
		*one = e->id;
	return e->id;
}

/* @n bytes through zlib to the output (@flush: Z_NO_FLUSH, Z_FINISH).
 * @return 0 or -1 (the output cannot be written). */
static int deflate_out(struct pp *p, const uint8_t *b, size_t n, int flush)
{
	int rc;

	do {
		size_t k = n > (1u << 30) ? 1u << 30 : n;
		int f = k < n ? Z_NO_FLUSH : flush;

		p->z.next_in = (Bytef *)b;
		p->z.avail_in = (uInt)k;
		b += k;
		n -= k;
		do {
			size_t have;

			p->z.next_out = p->zbuf;
			p->z.avail_out = sizeof(p->zbuf);
			rc = deflate(&p->z, f);
			if (rc == Z_STREAM_ERROR)
				return -1;
			have = sizeof(p->zbuf) - p->z.avail_out;
			if (have && fwrite(p->zbuf, 1, have, p->x->out) != have)
				return -1;
		} while (p->z.avail_out == 0 || (f == Z_FINISH && rc != Z_STREAM_END));
	} while (n);
	return 0;
}

/* What is in pp.msg, to the output, once it holds @at_least bytes.
 * @return 0, or -1 after a message. */
static int flush(struct pp *p, size_t at_least)
{
	if (cw_pb__failed(&p->msg))
		return oom();
	if (p->msg.n < at_least)
		return 0;
	if (deflate_out(p, p->msg.p, p->msg.n, Z_NO_FLUSH)) {
		cw_x__err("the output cannot be written");
		return -1;
	}
	cw_pb__reset(&p->msg);
	return 0;
}

static void label_str(struct pp *p, uint32_t key, const char *value)
{
	uint32_t v;
	size_t m;

	if (!value)
		return;
	if ((v = str_raw(p, value)) == UINT32_MAX) {
		p->msg.failed = true; /* said once, as the buffer's own */
		return;
	}
	m = cw_pb__open(&p->msg, SAMPLE_LABEL);
	cw_pb__uint(&p->msg, LABEL_KEY, key);
	cw_pb__uint(&p->msg, LABEL_STR, v);
	cw_pb__close(&p->msg, m);
}

/* An estimate as pprof's int64: rounded, and never past what an int64
 * holds (a hostile row's weight over a tiny probability). */
static uint64_t value(double v)
{
	if (!(v > 0.0))
		return 0;
	if (v >= 9.2e18)
		return (uint64_t)INT64_MAX;
	return (uint64_t)llround(v);
}

/* One causal stack as a Sample. */
static int sample(void *ctx, const struct cw_xsample *s)
{
	struct pp *p = ctx;
	uint64_t vals[NVALUES] = { 0 };
	const struct cw_xlabels *l = s->labels;
	size_t n = 0, i = s->nframes, m, mm;

	if (s->nframes > p->ids_cap) {
		uint64_t *ids = realloc(p->ids, s->nframes * sizeof(*ids));

		if (!ids)
			return oom();
		p->ids = ids;
		p->ids_cap = s->nframes;
	}
	p->nsamples++;
	/* leaf first: location_id[0] is the leaf (profile.proto) */
	while (i > 0) {
		size_t j = i - 1;
		uint32_t mp;

		/* an inlined frame and those that hold it at its address:
		 * one location (profile.h: the inlined calls first, leaf
		 * first, so last here) */
		while (j > 0 && s->frames[j]->inlined && s->frames[j]->kind == CW_XF_USER &&
		       s->frames[j - 1]->kind == CW_XF_USER &&
		       s->frames[j - 1]->address == s->frames[j]->address)
			j--;
		if (!(p->ids[n] = location_of(p, s->frames + j, i - j)))
			return oom();
		mp = p->map_of_loc.v[p->ids[n]];
		if (p->maps[mp].last_stack != p->nsamples) {
			p->maps[mp].last_stack = p->nsamples;
			p->maps[mp].stacks += s->rows;
		}
		n++;
		i = j;
	}
	vals[s->offcpu ? V_WAITS : V_SAMPLES] = value(s->count);
	vals[s->offcpu ? V_OFFCPU : V_CPU] = value(s->ns);

	m = cw_pb__open(&p->msg, PROFILE_SAMPLE);
	mm = cw_pb__open(&p->msg, SAMPLE_LOCATION_ID);
	for (i = 0; i < n; i++)
		cw_pb__varint(&p->msg, p->ids[i]);
	cw_pb__close(&p->msg, mm);
	mm = cw_pb__open(&p->msg, SAMPLE_VALUE);
	for (i = 0; i < NVALUES; i++)
		cw_pb__varint(&p->msg, vals[i]);
	cw_pb__close(&p->msg, mm);
	label_str(p, p->k_request, l->request);
	label_str(p, p->k_task, l->task);
	label_str(p, p->k_confidence, l->confidence);
	label_str(p, p->k_mechanism, l->mechanism);
	label_str(p, p->k_thread, l->thread);
	cw_pb__close(&p->msg, m);
	return flush(p, FLUSH_BYTES);
}

/* Mapping 1: see the top of the file. @return its pp.maps index. */
static size_t main_mapping(const struct pp *p)
{
	size_t best = 0; /* [causal], made first */
	uint64_t most = 0;

	for (size_t i = 0; i < p->nmaps; i++) {
		const char *name = ((struct str *)p->strs.v[p->maps[i].file])->s;
		const char *base = strrchr(name, '/'), *so;

		if (p->maps[i].kind != MK_USER || name[0] == '[' || p->maps[i].stacks <= most)
			continue;
		/* "libc.so.6", "libfoo.so": a library, not the program */
		so = strstr(base ? base : name, ".so");
		if (so && (so[3] == '\0' || so[3] == '.'))
			continue;
		best = i;
		most = p->maps[i].stacks;
	}
	return best;
}

/*
 * What the database says of the capture as a whole: its span within
 * --since and --until (meta), and the period of its CPU samples, the
 * weight of one (the cpu-clock period, 1e9 / -F: docs/model.md §4.2);
 * 0 where not known. @return 0, or -1 after a message.
 */
static int capture(struct pp *p, int64_t *span, int64_t *period)
{
	sqlite3_stmt *s = cw_x__prepare(
		p->x, "SELECT (SELECT value FROM meta WHERE key = 'capture_start_ns'), "
		      "(SELECT value FROM meta WHERE key = 'capture_end_ns'), "
		      "(SELECT weight FROM samples WHERE kind = 'cpu' AND ts >= ?1 AND ts <= ?2 "
		      "LIMIT 1)");
	int64_t start, end;

	*span = *period = 0;
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, p->x->since);
	sqlite3_bind_int64(s, 2, p->x->until);
	if (sqlite3_step(s) != SQLITE_ROW) {
		cw_x__err("the database cannot be read: %s", sqlite3_errmsg(p->x->db));
		sqlite3_finalize(s);
		return -1;
	}
	if (sqlite3_column_type(s, 0) != SQLITE_NULL && sqlite3_column_type(s, 1) != SQLITE_NULL) {
		start = sqlite3_column_int64(s, 0);
		end = sqlite3_column_int64(s, 1);
		start = start > p->x->since ? start : p->x->since;
		end = end < p->x->until ? end : p->x->until;
		*span = end > start ? end - start : 0;
	}
	if (sqlite3_column_int64(s, 2) > 0)
		*period = sqlite3_column_int64(s, 2);
	sqlite3_finalize(s);
	return 0;
}

static void value_type(struct cw_pb *b, uint32_t field, uint32_t type, uint32_t unit)
{
	size_t m = cw_pb__open(b, field);

	cw_pb__uint(b, VALUE_TYPE_TYPE, type);
	cw_pb__uint(b, VALUE_TYPE_UNIT, unit);
	cw_pb__close(b, m);
}

static const char comment[] =
	"causeway: a stack's root frames are the request it worked for, its task, the handoffs "
	"that carried the work to the thread and, off CPU, what ended the wait; values are "
	"estimates; -sample_index=offcpu for blocked time";

/* Everything but the samples, after them. @return 0, or -1 after a
 * message. */
static int tables(struct pp *p)
{
	struct cw_pb *b = &p->msg;
	uint32_t vt[NVALUES][2], com, cpu;
	size_t first = main_mapping(p), m, mm;
	uint64_t *id_of;
	int64_t span, period;

	if (capture(p, &span, &period))
		return -1;
	if (!(id_of = calloc(p->nmaps ? p->nmaps : 1, sizeof(*id_of))))
		return oom();
	for (size_t i = 0; i < NVALUES; i++)
		for (size_t k = 0; k < 2; k++)
			if ((vt[i][k] = str_raw(p, value_types[i][k])) == UINT32_MAX)
				b->failed = true;
	cpu = vt[V_CPU][0];
	if ((com = str_raw(p, comment)) == UINT32_MAX)
		b->failed = true;
	for (size_t i = 0; i < NVALUES; i++)
		value_type(b, PROFILE_SAMPLE_TYPE, vt[i][0], vt[i][1]);
	value_type(b, PROFILE_PERIOD_TYPE, cpu, vt[V_CPU][1]);
	if (period)
		cw_pb__uint(b, PROFILE_PERIOD, (uint64_t)period);
	cw_pb__uint(b, PROFILE_DEFAULT_SAMPLE_TYPE, cpu);
	cw_pb__uint(b, PROFILE_COMMENT, com);
	if (span)
		cw_pb__uint(b, PROFILE_DURATION_NANOS, (uint64_t)span);

	/* mapping ids: the main one 1, the others in the order met */
	id_of[first] = 1;
	for (size_t i = 0, next = 2; i < p->nmaps; i++)
		if (i != first)
			id_of[i] = next++;
	for (size_t k = 0; k < p->nmaps; k++) {
		size_t i = k == 0 ? first : k <= first ? k - 1 : k;
		const struct mapping *mp = &p->maps[i];

		m = cw_pb__open(b, PROFILE_MAPPING);
		cw_pb__uint(b, MAPPING_ID, id_of[i]);
		cw_pb__uint(b, MAPPING_FILENAME, mp->file);
		cw_pb__uint(b, MAPPING_HAS_FUNCTIONS, 1);
		cw_pb__uint(b, MAPPING_HAS_FILENAMES, mp->files);
		cw_pb__uint(b, MAPPING_HAS_LINE_NUMBERS, mp->lines);
		cw_pb__uint(b, MAPPING_HAS_INLINE_FRAMES, mp->inlines);
		cw_pb__close(b, m);
	}
	for (size_t i = 0; i < p->locs.n; i++) {
		const struct loc *lc = p->locs.v[i];

		m = cw_pb__open(b, PROFILE_LOCATION);
		cw_pb__uint(b, LOCATION_ID, lc->id);
		cw_pb__uint(b, LOCATION_MAPPING_ID, id_of[p->map_of_loc.v[lc->id]]);
		if (lc->address)
			cw_pb__uint(b, LOCATION_ADDRESS, lc->address);
		for (size_t k = 0; k < lc->n; k++) {
			mm = cw_pb__open(b, LOCATION_LINE);
			cw_pb__uint(b, LINE_FUNCTION_ID, lc->l[k].fn);
			if (lc->l[k].line > 0)
				cw_pb__uint(b, LINE_LINE, (uint64_t)lc->l[k].line);
			cw_pb__close(b, mm);
		}
		cw_pb__close(b, m);
		if (flush(p, FLUSH_BYTES))
			goto fail;
	}
	for (size_t i = 0; i < p->fns.n; i++) {
		const struct fn *f = p->fns.v[i];

		m = cw_pb__open(b, PROFILE_FUNCTION);
		cw_pb__uint(b, FUNCTION_ID, f->id);
		cw_pb__uint(b, FUNCTION_NAME, f->name);
		if (f->file)
			cw_pb__uint(b, FUNCTION_FILENAME, f->file);
		cw_pb__close(b, m);
		if (flush(p, FLUSH_BYTES))
			goto fail;
	}
	/* last: every string is in the table by now */
	for (size_t i = 0; i < p->strs.n; i++) {
		cw_pb__str(b, PROFILE_STRING_TABLE, ((struct str *)p->strs.v[i])->s);
		if (flush(p, FLUSH_BYTES))
			goto fail;
	}
	free(id_of);
	if (flush(p, 0))
		return -1;
	if (deflate_out(p, NULL, 0, Z_FINISH)) {
		cw_x__err("the output cannot be written");
		return -1;
	}
	return 0;
fail:
	free(id_of);
	return -1;
}

static void free_all(struct pp *p)
{
	tab_free(&p->strs);
	tab_free(&p->fns);
	tab_free(&p->locs);
	free(p->maps);
	free(p->map_of_str.v);
	free(p->loc_of_frame.v);
	free(p->map_of_loc.v);
	free(p->ids);
	cw_pb__free(&p->msg);
	if (p->z_open)
		deflateEnd(&p->z);
}

int cw_x__pprof(struct cw_x *x)
{
	static const struct cw_xframe causal = { .kind = CW_XF_REQUEST, .name = "" };
	struct pp *p = calloc(1, sizeof(*p));
	int ret = -1;

	if (!p)
		return oom();
	p->x = x;
	/* gzip (windowBits 15 + 16), as pprof reads it; fastest level:
	 * the tables repeat, and speed is what a large export lacks */
	if (deflateInit2(&p->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		cw_x__err("zlib cannot start");
		free(p);
		return -1;
	}
	p->z_open = true;
	/* "" is string 0 (profile.proto); [causal] is mapping 0, the main
	 * one when no executable is met */
	if (str_raw(p, "") || mapping_of(p, &causal) < 0 ||
	    (p->k_request = str_raw(p, "request")) == UINT32_MAX ||
	    (p->k_task = str_raw(p, "task")) == UINT32_MAX ||
	    (p->k_confidence = str_raw(p, "confidence")) == UINT32_MAX ||
	    (p->k_mechanism = str_raw(p, "mechanism")) == UINT32_MAX ||
	    (p->k_thread = str_raw(p, "thread")) == UINT32_MAX) {
		oom();
		goto out;
	}
	if (cw_xprofile__each(x, CW_XP_THREADS, sample, p) || tables(p))
		goto out;
	ret = 0;
out:
	free_all(p);
	free(p);
	return ret;
}
