// SPDX-License-Identifier: MIT
/*
 * The truth file (bench/truth/FORMAT.md): one record a line, fields
 * separated by one tab, '-' an empty field, '#' a comment. Every field is
 * checked: a line that is not what the format says is an error that names
 * the file and the line, never a guess. Nothing in the file is trusted to
 * be small: every line, the file and what is kept of it are bounded
 * (eval.h, TRUTH_*), and what a message quotes of it is escaped.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "eval.h"

static const char *const edge_types[] = { "spawn", "wake",    "submit",  "punt", "complete",
					  "queue", "execute", "arm",     "fire", "resume",
					  "acquire", "release", "begin", "end", NULL };
static const char *const node_types[] = { "process", "thread", "runtime_task", "io_request",
					  "work_item", "timer", "packet", "resource",
					  "request", NULL };
/* The mechanisms FORMAT.md lists, in the order the reports show them. */
static const char *const known_mechs[] = { "futex",     "io_uring", "io_uring_multishot",
					   "io_uring_link", "workqueue", "timer",
					   "timerfd",   "task",     "resource_wait",
					   "go_http",   "go_chan",  "go_spawn",
					   "go_mutex",  "go_timer", NULL };

struct rd {
	const char *path;
	long line;
};

static int bad(const struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(const struct rd *r, const char *fmt, ...)
{
	va_list ap;

	fputs("causeway-eval: ", stderr);
	cw_esc_fput(stderr, r->path);
	fprintf(stderr, ":%ld: ", r->line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static int in_list(const char *const *list, const char *s)
{
	for (int i = 0; list[i]; i++)
		if (!strcmp(list[i], s))
			return 1;
	return 0;
}

static int is_empty(const char *s)
{
	return !strcmp(s, "-");
}

/* A decimal integer: digits (up to 2^64 - 1, kept as the int64 with those
 * bits, as the database keeps u64 keys) or '-' and digits. */
static int parse_int(const char *s, int64_t *v)
{
	const char *d = s[0] == '-' ? s + 1 : s;
	char *end;

	if (!*d)
		return -1;
	for (const char *p = d; *p; p++)
		if (*p < '0' || *p > '9')
			return -1;
	errno = 0;
	if (s[0] == '-') {
		long long x = strtoll(s, &end, 10);

		if (errno || *end)
			return -1;
		*v = x;
	} else {
		unsigned long long x = strtoull(s, &end, 10);

		if (errno || *end)
			return -1;
		*v = (int64_t)x;
	}
	return 0;
}

static int get_int(const struct rd *r, const char *what, const char *s, int64_t *v)
{
	if (parse_int(s, v))
		return bad(r, "%s: '%s' is not a decimal integer", what, esc_msg(s));
	return 0;
}

/* An optional integer: '-' is none. */
static int get_opt_int(const struct rd *r, const char *what, const char *s, int *has, int64_t *v)
{
	*has = !is_empty(s);
	*v = 0;
	return *has ? get_int(r, what, s, v) : 0;
}

static int get_time(const struct rd *r, const char *what, const char *s, int64_t *v)
{
	if (s[0] == '-' || parse_int(s, v) || *v < 0)
		return bad(r, "%s: '%s' is not a time (ns of CLOCK_MONOTONIC, >= 0)", what,
			   esc_msg(s));
	return 0;
}

/* A window: two times, or '-' '-' where it may be absent. */
static int get_window(const struct rd *r, const char *what, const char *s0, const char *s1,
		      int *has, int64_t *t0, int64_t *t1)
{
	*t0 = *t1 = 0;
	*has = !(is_empty(s0) && is_empty(s1));
	if (!*has)
		return 0;
	if (get_time(r, what, s0, t0) || get_time(r, what, s1, t1))
		return -1;
	if (*t0 > *t1)
		return bad(r, "%s: window [%s, %s] ends before it begins", what, esc_msg(s0),
			   esc_msg(s1));
	return 0;
}

static int get_type(const struct rd *r, const char *what, const char *const *list, const char *s,
		    char out[TYPE_LEN], int required)
{
	out[0] = 0;
	if (is_empty(s)) {
		if (required)
			return bad(r, "%s is required here", what);
		return 0;
	}
	if (!in_list(list, s))
		return bad(r, "%s: unknown type '%s'", what, esc_msg(s));
	snprintf(out, TYPE_LEN, "%s", s);
	return 0;
}

static void *grow(void *p, size_t n, size_t *cap, size_t size)
{
	void *q;

	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 64;
	q = realloc(p, *cap * size);
	if (!q) {
		fprintf(stderr, "causeway-eval: out of memory\n");
		exit(1);
	}
	return q;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d) {
		fprintf(stderr, "causeway-eval: out of memory\n");
		exit(1);
	}
	return d;
}

/* What truth_read keeps while it reads: the arrays' capacities (each a
 * power of two no larger than TRUTH_RECORDS_MAX, as it starts at 64 and
 * doubles), and the index of the names kept once. */
struct caps {
	size_t config, threads, reqs, cpus, hops, mechs, names;
	size_t records;
	uint32_t *slot; /* open addressing: 1 + an index into truth.names, 0 empty */
	size_t nslot;
	size_t text; /* bytes charged to TRUTH_TEXT_MAX */
};

/* A name and the 32 bytes more it costs (its pointer, its slot, the
 * allocator's header): so TRUTH_TEXT_MAX bounds the index as well as the
 * text, however short the names. */
#define NAME_COST(len) ((len) + 1 + 32)

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	return h;
}

static int names_rehash(struct truth *t, struct caps *c)
{
	size_t n = c->nslot ? c->nslot * 2 : 64;
	uint32_t *slot = calloc(n, sizeof(*slot));

	if (!slot)
		return -1;
	for (size_t i = 0; i < t->nnames; i++) {
		size_t k = name_hash(t->names[i]) & (n - 1);

		while (slot[k])
			k = (k + 1) & (n - 1);
		slot[k] = (uint32_t)i + 1;
	}
	free(c->slot);
	c->slot = slot;
	c->nslot = n;
	return 0;
}

/*
 * A thread's role or a hop's OBJ_NAME, kept once however many lines name
 * it: 10M hops name a dozen kernel functions, and memory for the names
 * must not grow with the lines. NULL after a message when the distinct
 * names would pass TRUTH_TEXT_MAX.
 */
static const char *intern(struct truth *t, struct caps *c, const struct rd *r, const char *s)
{
	size_t len = strlen(s), k;

	if (c->nslot)
		for (k = name_hash(s) & (c->nslot - 1); c->slot[k]; k = (k + 1) & (c->nslot - 1))
			if (!strcmp(t->names[c->slot[k] - 1], s))
				return t->names[c->slot[k] - 1];
	if (c->text + NAME_COST(len) > TRUTH_TEXT_MAX) {
		bad(r, "the distinct thread roles and object names pass %lu bytes (TRUTH_TEXT_MAX)",
		    (unsigned long)TRUTH_TEXT_MAX);
		return NULL;
	}
	if ((t->nnames + 1) * 2 > c->nslot && names_rehash(t, c)) {
		fprintf(stderr, "causeway-eval: out of memory\n");
		exit(1);
	}
	t->names = grow(t->names, t->nnames, &c->names, sizeof(*t->names));
	t->names[t->nnames] = xstrdup(s);
	for (k = name_hash(s) & (c->nslot - 1); c->slot[k]; k = (k + 1) & (c->nslot - 1))
		;
	c->slot[k] = (uint32_t)t->nnames + 1;
	c->text += NAME_COST(len);
	return t->names[t->nnames++];
}

static int mech_index(struct truth *t, struct caps *c, const struct rd *r, const char *s)
{
	size_t len = strlen(s);

	if (!len || len > 31)
		return bad(r, "MECH '%s': want a name of 1 to 31 characters", esc_msg(s));
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return bad(r, "MECH '%s': want lower case letters, digits and '_'",
				   esc_msg(s));
	for (size_t i = 0; i < t->nmechs; i++)
		if (!strcmp(t->mechs[i], s))
			return (int)i;
	if (t->nmechs == TRUTH_MECHS_MAX)
		return bad(r, "MECH '%s': more than %d mechanisms (TRUTH_MECHS_MAX)", s,
			   TRUTH_MECHS_MAX);
	t->mechs = grow(t->mechs, t->nmechs, &c->mechs, sizeof(*t->mechs));
	t->mechs[t->nmechs] = xstrdup(s);
	return (int)t->nmechs++;
}

static int parse_flags(const struct rd *r, char *s, unsigned *flags)
{
	char *save = NULL, *f;

	*flags = 0;
	if (is_empty(s))
		return 0;
	for (f = strtok_r(s, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		if (!strcmp(f, "cancelled"))
			*flags |= F_CANCELLED;
		else if (!strcmp(f, "reused"))
			*flags |= F_REUSED;
		else if (!strcmp(f, "nested"))
			*flags |= F_NESTED;
		else
			return bad(r, "FLAGS: unknown flag '%s' (cancelled, reused, nested)",
				   esc_msg(f));
	}
	return 0;
}

/* hop HID RID MECH RULE SRC_TID SRC_TASK SRC_REQ CAUSE OBJ_TYPE OBJ_KEY OBJ_NAME A0 A1
 *     EFFECT DST_TID C0 C1 FLAGS */
static int parse_hop(struct truth *t, struct caps *c, const struct rd *r, char **f)
{
	struct hop h;
	int64_t v;
	int m;

	memset(&h, 0, sizeof(h));
	h.line = r->line;
	if (f[1][0] == '-' || get_int(r, "HID", f[1], &v))
		return f[1][0] == '-' ? bad(r, "HID: '%s' is not a hop id", esc_msg(f[1])) : -1;
	h.hid = (uint64_t)v;
	if (get_int(r, "RID", f[2], &h.rid))
		return -1;
	if ((m = mech_index(t, c, r, f[3])) < 0)
		return -1;
	h.mech = m;
	if (!strcmp(f[4], "direct"))
		h.rule = RULE_DIRECT;
	else if (!strcmp(f[4], "object"))
		h.rule = RULE_OBJECT;
	else if (!strcmp(f[4], "wait"))
		h.rule = RULE_WAIT;
	else
		return bad(r, "RULE: '%s' is not direct, object or wait", esc_msg(f[4]));
	if (get_opt_int(r, "SRC_TID", f[5], &h.has_src_tid, &h.src_tid) ||
	    get_opt_int(r, "SRC_TASK", f[6], &h.has_task, &h.src_task) ||
	    get_opt_int(r, "SRC_REQ", f[7], &h.has_req, &h.src_req))
		return -1;
	if (parse_flags(r, f[18], &h.flags))
		return -1;
	int cancelled = !!(h.flags & F_CANCELLED);
	if (get_type(r, "CAUSE", edge_types, f[8], h.cause, h.rule == RULE_OBJECT) ||
	    get_type(r, "OBJ_TYPE", node_types, f[9], h.obj_type, h.rule == RULE_OBJECT) ||
	    get_opt_int(r, "OBJ_KEY", f[10], &h.has_key, &h.obj_key))
		return -1;
	if (get_window(r, "A0 A1", f[12], f[13], &h.has_a, &h.a0, &h.a1))
		return -1;
	if (!h.has_a && h.rule != RULE_DIRECT)
		return bad(r, "A0 A1: the cause window is required for RULE %s", f[4]);
	if (get_type(r, "EFFECT", edge_types, f[14], h.effect, !cancelled) ||
	    get_opt_int(r, "DST_TID", f[15], &h.has_dst, &h.dst_tid) ||
	    get_window(r, "C0 C1", f[16], f[17], &h.has_c, &h.c0, &h.c1))
		return -1;
	if (!cancelled && !h.has_c)
		return bad(r, "C0 C1: the effect window is required (the hop is not cancelled)");
	/* A direct handoff into a goroutine or a request: its claims are
	 * the edges into that node (FORMAT.md, RULE direct). */
	h.into_node = h.rule == RULE_DIRECT && h.has_key &&
		      (!strcmp(h.obj_type, "runtime_task") || !strcmp(h.obj_type, "request"));
	if (!cancelled && !h.has_dst && h.rule != RULE_OBJECT && !h.into_node)
		return bad(r, "DST_TID is required for RULE %s (but a direct hop into a runtime_task or"
			      " request of OBJ_KEY)", f[4]);
	if (!h.has_src_tid && !t->has_pid)
		return bad(r, "SRC_TID '-' (a thread of the workload) needs the 'pid' line before it");
	if (h.rule == RULE_WAIT && h.has_c && h.c1 < h.a0)
		return bad(r, "the wait window [A0, C1] ends before it begins");
	if (!is_empty(f[11]) && !(h.obj_name = intern(t, c, r, f[11])))
		return -1;
	t->hops = grow(t->hops, t->nhops, &c->hops, sizeof(*t->hops));
	t->hops[t->nhops++] = h;
	return 0;
}

static int parse_line(struct truth *t, struct caps *c, const struct rd *r, char **f, size_t n)
{
	static const struct {
		const char *kind;
		size_t fields; /* with the kind; 0: at least 3 (config) */
	} kinds[] = { { "truth", 2 }, { "pid", 2 },     { "config", 0 }, { "thread", 3 },
		      { "request", 8 }, { "cpu", 5 }, { "hop", 19 } };
	size_t k;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (!strcmp(f[0], kinds[k].kind))
			break;
	if (k == sizeof(kinds) / sizeof(kinds[0]))
		return bad(r, "unknown record kind '%s'", esc_msg(f[0]));
	if (kinds[k].fields ? n != kinds[k].fields : n < 3)
		return bad(r, "%s: %zu fields, want %s%zu (fields are separated by one tab)", f[0],
			   n, kinds[k].fields ? "" : "at least ",
			   kinds[k].fields ? kinds[k].fields : 3);
	for (size_t i = 0; i < n; i++)
		if (!f[i][0])
			return bad(r, "%s: field %zu is empty (an empty field is '-')", f[0], i + 1);
	/* The arrays grow with the records, so their number is what bounds
	 * the memory; the header is not counted, the pid line is. */
	if (++c->records > TRUTH_RECORDS_MAX)
		return bad(r, "more than %lu records (TRUTH_RECORDS_MAX)",
			   (unsigned long)TRUTH_RECORDS_MAX);

	if (!strcmp(f[0], "truth"))
		return bad(r, "a second 'truth' line");
	if (!strcmp(f[0], "pid")) {
		if (t->has_pid)
			return bad(r, "a second 'pid' line");
		if (get_int(r, "PID", f[1], &t->pid))
			return -1;
		if (t->pid <= 0)
			return bad(r, "PID: '%s' is not a process id", esc_msg(f[1]));
		t->has_pid = 1;
		snprintf(t->pid_scope, sizeof(t->pid_scope), "pid:%lld", (long long)t->pid);
		return 0;
	}
	if (!strcmp(f[0], "config")) {
		size_t len = 0;
		char *v;

		if (t->nconfig == TRUTH_CONFIG_MAX)
			return bad(r, "more than %d config lines (TRUTH_CONFIG_MAX)",
				   TRUTH_CONFIG_MAX);
		for (size_t i = 2; i < n; i++)
			len += strlen(f[i]) + 1;
		v = malloc(len + 1);
		if (!v)
			return bad(r, "out of memory");
		v[0] = 0;
		for (size_t i = 2; i < n; i++) {
			if (i > 2)
				strcat(v, "\t");
			strcat(v, f[i]);
		}
		t->config = grow(t->config, t->nconfig, &c->config, sizeof(*t->config));
		t->config[t->nconfig].key = xstrdup(f[1]);
		t->config[t->nconfig++].value = v;
		return 0;
	}
	if (!strcmp(f[0], "thread")) {
		const char *role;
		int64_t tid;

		if (get_int(r, "TID", f[1], &tid) || !(role = intern(t, c, r, f[2])))
			return -1;
		t->threads = grow(t->threads, t->nthreads, &c->threads, sizeof(*t->threads));
		t->threads[t->nthreads].tid = tid;
		t->threads[t->nthreads++].role = role;
		return 0;
	}
	if (!strcmp(f[0], "request")) {
		struct request q;

		memset(&q, 0, sizeof(q));
		q.line = r->line;
		if (get_int(r, "RID", f[1], &q.rid) || get_int(r, "APP_ID", f[2], &q.app_id) ||
		    get_int(r, "ORIGIN_TID", f[3], &q.origin_tid) ||
		    get_time(r, "B0", f[4], &q.b0) || get_time(r, "B1", f[5], &q.b1) ||
		    get_time(r, "E0", f[6], &q.e0) || get_time(r, "E1", f[7], &q.e1))
			return -1;
		if (q.b0 > q.b1 || q.e0 > q.e1 || q.b0 > q.e1)
			return bad(r, "request: the windows [B0, B1] and [E0, E1] are out of order");
		t->reqs = grow(t->reqs, t->nreqs, &c->reqs, sizeof(*t->reqs));
		t->reqs[t->nreqs++] = q;
		return 0;
	}
	if (!strcmp(f[0], "cpu")) {
		struct cpu_rec p;
		int64_t cpu, wall;

		memset(&p, 0, sizeof(p));
		p.line = r->line;
		if (get_int(r, "RID", f[1], &p.rid) || get_int(r, "TID", f[2], &p.tid) ||
		    get_time(r, "CPU_NS", f[3], &cpu) || get_time(r, "WALL_NS", f[4], &wall))
			return -1;
		p.cpu_ns = (double)cpu;
		p.wall_ns = (double)wall;
		t->cpus = grow(t->cpus, t->ncpus, &c->cpus, sizeof(*t->cpus));
		t->cpus[t->ncpus++] = p;
		return 0;
	}
	return parse_hop(t, c, r, f);
}

/* The mechanisms in report order; the hops renumbered. */
static int order_mechs(struct truth *t)
{
	char **m = calloc(t->nmechs ? t->nmechs : 1, sizeof(*m));
	int *map = calloc(t->nmechs ? t->nmechs : 1, sizeof(*map));
	size_t n = 0;

	if (!m || !map) {
		free(m);
		free(map);
		fprintf(stderr, "causeway-eval: out of memory\n");
		return -1;
	}
	for (int k = 0; known_mechs[k]; k++)
		for (size_t i = 0; i < t->nmechs; i++)
			if (!strcmp(t->mechs[i], known_mechs[k])) {
				map[i] = (int)n;
				m[n++] = t->mechs[i];
			}
	for (size_t i = 0; i < t->nmechs; i++)
		if (!in_list(known_mechs, t->mechs[i])) {
			map[i] = (int)n;
			m[n++] = t->mechs[i];
		}
	for (size_t i = 0; i < t->nhops; i++)
		t->hops[i].mech = map[t->hops[i].mech];
	free(t->mechs);
	free(map);
	t->mechs = m;
	return 0;
}

/* cpu lines by (request, thread), then by line. */
static int cmp_pair(const void *a, const void *b, void *arg)
{
	const struct cpu_rec *c = arg, *x = &c[*(const size_t *)a], *y = &c[*(const size_t *)b];

	if (x->req != y->req)
		return x->req < y->req ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Ids unique, references resolved. */
static int link_records(struct truth *t)
{
	struct u64map rids = { 0 }, hids = { 0 };
	struct rd r = { t->path, 0 };
	size_t *pairs = NULL, dup = SIZE_MAX, first = 0;
	uint64_t v;
	int rc = -1;

	for (size_t i = 0; i < t->nreqs; i++) {
		r.line = t->reqs[i].line;
		if (u64map_get(&rids, (uint64_t)t->reqs[i].rid, &v)) {
			bad(&r, "request %lld: a second request with this RID (the first on line %ld)",
			    (long long)t->reqs[i].rid, t->reqs[v].line);
			goto out;
		}
		if (u64map_put(&rids, (uint64_t)t->reqs[i].rid, i))
			goto oom;
	}
	for (size_t i = 0; i < t->ncpus; i++) {
		struct cpu_rec *p = &t->cpus[i];

		r.line = p->line;
		if (!u64map_get(&rids, (uint64_t)p->rid, &v)) {
			bad(&r, "cpu: no request line has RID %lld", (long long)p->rid);
			goto out;
		}
		p->req = v;
		t->reqs[v].cpu_ns += p->cpu_ns;
		t->reqs[v].wall_ns += p->wall_ns;
	}
	/*
	 * (RID, TID) unique: checked by sorting the indexes, so that a second
	 * line for a pair is next to the first. (A hash of the pair, whose
	 * collisions were settled by a scan of the lines before, let lines
	 * made to collide cost a scan each: 100K of them took 9 s.) The line
	 * named is the first that repeats a pair, as in reading order.
	 */
	if (t->ncpus && !(pairs = malloc(t->ncpus * sizeof(*pairs))))
		goto oom;
	for (size_t i = 0; i < t->ncpus; i++)
		pairs[i] = i;
	if (t->ncpus)
		qsort_r(pairs, t->ncpus, sizeof(*pairs), cmp_pair, t->cpus);
	for (size_t i = 1, run = 0; i < t->ncpus; i++) {
		const struct cpu_rec *a = &t->cpus[pairs[run]], *b = &t->cpus[pairs[i]];

		if (a->req != b->req || a->tid != b->tid) {
			run = i;
		} else if (dup == SIZE_MAX || b->line < t->cpus[dup].line) {
			dup = pairs[i];
			first = pairs[run];
		}
	}
	if (dup != SIZE_MAX) {
		r.line = t->cpus[dup].line;
		bad(&r, "cpu: a second line for request %lld and thread %lld (the first on line %ld)",
		    (long long)t->cpus[dup].rid, (long long)t->cpus[dup].tid, t->cpus[first].line);
		goto out;
	}
	for (size_t i = 0; i < t->nhops; i++) {
		struct hop *h = &t->hops[i];

		r.line = h->line;
		if (!u64map_get(&rids, (uint64_t)h->rid, &v)) {
			bad(&r, "hop %llu: no request line has RID %lld", (unsigned long long)h->hid,
			    (long long)h->rid);
			goto out;
		}
		h->req = v;
		if (u64map_get(&hids, h->hid, &v)) {
			bad(&r, "hop %llu: a second hop with this HID (the first on line %ld)",
			    (unsigned long long)h->hid, t->hops[v].line);
			goto out;
		}
		if (u64map_put(&hids, h->hid, i))
			goto oom;
	}
	rc = 0;
	goto out;
oom:
	fprintf(stderr, "causeway-eval: out of memory\n");
out:
	u64map_free(&rids);
	u64map_free(&hids);
	free(pairs);
	return rc;
}

/*
 * The file's lines, read through one buffer of TRUTH_LINE_MAX + 1 bytes
 * (a longest line and its newline): a line is never longer than that in
 * memory, whatever the file (getline grows its buffer to the line, which
 * in /dev/zero or a binary has no end), and the bytes read are counted
 * against TRUTH_FILE_MAX for a stream that fstat cannot measure.
 */
struct lines {
	FILE *fp;
	char buf[TRUTH_LINE_MAX + 2]; /* the line, its newline, a NUL put after */
	size_t len, pos;              /* bytes in buf; the start of the next line */
	uint64_t read;
	int eof;
};

/* The next line in *line (NUL-terminated, without its newline), *n its
 * length. @return 1, 0 at the end, -1 after a message naming the line. */
static int lines_next(struct lines *l, struct rd *r, char **line, size_t *n)
{
	for (;;) {
		char *p = l->buf + l->pos, *nl = memchr(p, '\n', l->len - l->pos);
		size_t got;

		if (!nl && l->len - l->pos > TRUTH_LINE_MAX) {
			/* No newline in TRUTH_LINE_MAX + 1 bytes. A binary
			 * file says so by its NULs before its length: the
			 * more telling message. */
			r->line++;
			if (memchr(p, 0, TRUTH_LINE_MAX))
				return bad(r, "a NUL byte: this is not a text file");
			return bad(r, "longer than %d bytes (TRUTH_LINE_MAX): not a line of a "
				      "truth file",
				   TRUTH_LINE_MAX);
		}
		if (nl || (l->eof && l->len > l->pos)) {
			*n = nl ? (size_t)(nl - p) : l->len - l->pos;
			p[*n] = 0;
			l->pos += *n + !!nl;
			r->line++;
			*line = p;
			return 1;
		}
		if (l->eof)
			return 0;
		memmove(l->buf, p, l->len - l->pos);
		l->len -= l->pos;
		l->pos = 0;
		got = fread(l->buf + l->len, 1, TRUTH_LINE_MAX + 1 - l->len, l->fp);
		if (!got) {
			if (ferror(l->fp)) {
				fprintf(stderr, "causeway-eval: ");
				cw_esc_fput(stderr, r->path);
				fprintf(stderr, ": read error after line %ld: %s\n", r->line,
					strerror(errno));
				return -1;
			}
			l->eof = 1;
		}
		l->len += got;
		l->read += got;
		if (l->read > TRUTH_FILE_MAX) {
			/* Named by the line being read when it passed. */
			r->line++;
			return bad(r, "the file is larger than %llu bytes (TRUTH_FILE_MAX)",
				   (unsigned long long)TRUTH_FILE_MAX);
		}
	}
}

int truth_read(const char *path, struct truth *t)
{
	struct rd r = { path, 0 };
	struct caps caps = { 0 };
	struct lines *l = NULL;
	char *line = NULL, **f = NULL;
	size_t len = 0, fcap = 0;
	struct stat st;
	int seen_header = 0, rc = -1, got;

	memset(t, 0, sizeof(*t));
	t->path = path;
	if (!(l = calloc(1, sizeof(*l)))) {
		fprintf(stderr, "causeway-eval: out of memory\n");
		return -1;
	}
	l->fp = fopen(path, "r");
	if (!l->fp) {
		fputs("causeway-eval: ", stderr);
		cw_esc_fput(stderr, path);
		fprintf(stderr, ": cannot open the truth file: %s\n", strerror(errno));
		free(l);
		return -1;
	}
	/* A file known too large is refused before it is read. */
	if (!fstat(fileno(l->fp), &st) && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size > TRUTH_FILE_MAX) {
		fputs("causeway-eval: ", stderr);
		cw_esc_fput(stderr, path);
		fprintf(stderr, ": larger than %llu bytes (TRUTH_FILE_MAX): it has %" PRId64 "\n",
			(unsigned long long)TRUTH_FILE_MAX, (int64_t)st.st_size);
		goto out;
	}
	while ((got = lines_next(l, &r, &line, &len)) > 0) {
		size_t n = 0;
		char *p;

		if (memchr(line, 0, len)) {
			bad(&r, "a NUL byte: this is not a text file");
			goto out;
		}
		if (len && line[len - 1] == '\r')
			line[--len] = 0;
		if (!len || line[0] == '#')
			continue;
		for (p = line;; p++) {
			char *tab = strchr(p, '\t');

			f = grow(f, n, &fcap, sizeof(*f));
			f[n++] = p;
			if (!tab)
				break;
			*tab = 0;
			p = tab;
		}
		if (!seen_header) {
			/* FORMAT.md spells it `truth 1`: a space is taken for the tab. */
			char *sp = n == 1 ? strchr(f[0], ' ') : NULL;

			if (sp && !strchr(sp + 1, ' ')) {
				*sp = 0;
				f[n++] = sp + 1;
			}
			if (n != 2 || strcmp(f[0], "truth")) {
				bad(&r, "not a truth file: the first line must be 'truth<TAB>1'");
				goto out;
			}
			if (strcmp(f[1], "1")) {
				bad(&r, "truth format version '%s': this evaluator reads version 1",
				    esc_msg(f[1]));
				goto out;
			}
			seen_header = 1;
			continue;
		}
		if (parse_line(t, &caps, &r, f, n))
			goto out;
	}
	if (got < 0)
		goto out;
	if (!seen_header) {
		fputs("causeway-eval: ", stderr);
		cw_esc_fput(stderr, path);
		fprintf(stderr, ": %s: not a truth file (no 'truth<TAB>1' line)\n",
			r.line ? "only blank lines and comments" : "empty");
		goto out;
	}
	if (order_mechs(t) || link_records(t))
		goto out;
	rc = 0;
out:
	free(f);
	free(caps.slot);
	fclose(l->fp);
	free(l);
	if (rc)
		truth_free(t);
	return rc;
}

void truth_free(struct truth *t)
{
	for (size_t i = 0; i < t->nconfig; i++) {
		free(t->config[i].key);
		free(t->config[i].value);
	}
	for (size_t i = 0; i < t->nnames; i++)
		free(t->names[i]);
	for (size_t i = 0; i < t->nmechs; i++)
		free(t->mechs[i]);
	free(t->names);
	free(t->config);
	free(t->threads);
	free(t->reqs);
	free(t->cpus);
	free(t->hops);
	free(t->mechs);
	memset(t, 0, sizeof(*t));
}
