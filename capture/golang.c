// SPDX-License-Identifier: MIT
/*
 * The go class's probes; see golang.h.
 *
 * Which functions, and where: docs/model.md §6.2's table. execute, gopark,
 * ready, goexit0, netpollready and ServeHTTP at their entry; ServeHTTP at
 * each of its return instructions, never with a uretprobe (it replaces
 * the return address on the goroutine's stack, which Go's stack growth
 * copies and its unwinder checks: "unexpected return pc"); newproc1's
 * result at its spawn sites (capture/gobin.h, struct gobin_site: the call
 * of runqput after its return, else its returns). A function whose
 * returns the decoder could not find exactly is not probed at its
 * returns: no spawns (newproc1, without spawn sites), or no requests at
 * all (ServeHTTP: a begin without its end would leave every request
 * open).
 *
 * --go-probes requests attaches newproc1, goexit0 and ServeHTTP only:
 * goroutines made and ended, and requests, each hit once per goroutine or
 * request, where the scheduler's functions (execute, gopark, ready,
 * netpollready) hit on every handoff, several times a request. goexit0
 * is kept, for a goroutine without its end would stay live in the
 * analyzer for the rest of the trace, and it costs what the spawn does.
 * The binary's record says the mode (CW_GO_REQUESTS_ONLY), so that what
 * was not probed is read as not known, never as not done.
 *
 * Binaries are told apart by the uprobe's cookie, their id, which is
 * also their go_bins slot: what differs between Go versions (offsets,
 * registers) is written there before the first probe is attached.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/config.h"
#include "schema/events.h"
#include "capture/clock.h"
#include "capture/gobin.h"
#include "capture/log.h"
#include "capture/uobj.h"
#include "capture/golang.h"

#define PAD8(n) (((n) + 7u) & ~(size_t)7u)
#define PATH_MAX_REC 4096

/* The programs of bpf/go.bpf.c, and where each is attached. */
enum prog {
	P_SPAWN,
	P_EXECUTE,
	P_GOPARK,
	P_READY,
	P_GOEXIT0,
	P_NETPOLLREADY,
	/* before its entry: a begin whose end cannot be seen would leave
	 * every request open, so the entry is attached only after every
	 * return was */
	P_SERVEHTTP_RET,
	P_SERVEHTTP,
	P_N,
};

enum at {
	AT_ENTRY,
	AT_RETURNS,
	AT_SPAWN_SITES, /* gobin.spawn */
};

static const struct {
	const char *name;
	enum gobin_fn fn;
	enum at at;
	uint8_t bit; /* CW_GO_FN_*: what cw_go_binary.attached says */
} progs[P_N] = {
	[P_SPAWN] = { "go_spawn", GOFN_NEWPROC1, AT_SPAWN_SITES, CW_GO_FN_NEWPROC1 },
	[P_EXECUTE] = { "go_execute", GOFN_EXECUTE, AT_ENTRY, CW_GO_FN_EXECUTE },
	[P_GOPARK] = { "go_gopark", GOFN_GOPARK, AT_ENTRY, CW_GO_FN_GOPARK },
	[P_READY] = { "go_ready", GOFN_READY, AT_ENTRY, CW_GO_FN_READY },
	[P_GOEXIT0] = { "go_goexit0", GOFN_GOEXIT0, AT_ENTRY, CW_GO_FN_GOEXIT0 },
	[P_NETPOLLREADY] = { "go_netpollready", GOFN_NETPOLLREADY, AT_ENTRY, CW_GO_FN_NETPOLLREADY },
	[P_SERVEHTTP_RET] = { "go_servehttp_ret", GOFN_SERVEHTTP, AT_RETURNS, CW_GO_FN_SERVEHTTP },
	[P_SERVEHTTP] = { "go_servehttp", GOFN_SERVEHTTP, AT_ENTRY, CW_GO_FN_SERVEHTTP },
};

#define GO_REFUSED_NAMED 8

struct golang {
	struct uobj *o;
	struct bpf_program *prog[P_N];
	int bins_fd;
	struct gobin *bins[CW_GO_MAX_BINARIES]; /* by id - 1 */
	uint32_t nbins;
	uint16_t fns; /* 1 << CW_GO_FN_*: the functions the mode probes */
	struct golang_counts n;
	/* The first refused binaries, named again in the summary: a notice
	 * at attach time scrolls away under a long capture's status line. */
	char *refused[GO_REFUSED_NAMED];
};

/* The functions --go-probes requests probes. */
#define REQUESTS_FNS (1u << CW_GO_FN_NEWPROC1 | 1u << CW_GO_FN_GOEXIT0 | 1u << CW_GO_FN_SERVEHTTP)

static int look(void *ctx, struct uobj *o, int fd, const char *path, const char *open_path);

struct golang *golang__new(struct bpf_object *obj, struct uobj *o, bool requests_only)
{
	struct golang *g = calloc(1, sizeof(*g));
	struct bpf_map *map = obj ? bpf_object__find_map_by_name(obj, "go_bins") : NULL;

	if (!g)
		return NULL;
	for (int i = 0; i < P_N; i++)
		if (!obj || !(g->prog[i] = bpf_object__find_program_by_name(obj, progs[i].name)))
			map = NULL;
	if (!map) {
		cw_msg("the go class's BPF object lacks its programs or go_bins");
		free(g);
		errno = ENOENT;
		return NULL;
	}
	g->bins_fd = bpf_map__fd(map);
	g->o = o;
	g->fns = requests_only ? REQUESTS_FNS : (1u << CW_GO_FN_MAX) - 1;
	if (uobj__watch(o, look, g)) {
		free(g);
		errno = ENOSPC;
		return NULL;
	}
	return g;
}

/* What go.bpf.c reads binary @b with. */
static void config_of(const struct gobin *b, struct cw_go_cfg *c)
{
	/* the parameters go.bpf.c reads (gobin.h's arg_reg) */
	static const struct {
		enum gobin_fn fn;
		int8_t arg[2]; /* -1: none */
	} args[CW_GO_FN_MAX] = {
		[CW_GO_FN_NEWPROC1] = { GOFN_NEWPROC1, { -1, -1 } }, /* the site's cookie */
		[CW_GO_FN_EXECUTE] = { GOFN_EXECUTE, { 0, -1 } },
		[CW_GO_FN_GOPARK] = { GOFN_GOPARK, { 2, -1 } },
		[CW_GO_FN_READY] = { GOFN_READY, { 0, -1 } },
		[CW_GO_FN_GOEXIT0] = { GOFN_GOEXIT0, { 0, -1 } },
		[CW_GO_FN_NETPOLLREADY] = { GOFN_NETPOLLREADY, { 1, 2 } },
		[CW_GO_FN_SERVEHTTP] = { GOFN_SERVEHTTP, { 2, -1 } },
	};

	memset(c, 0, sizeof(*c));
	memset(c->reg, CW_GO_NO_REG, sizeof(c->reg));
	c->g_goid = b->g_goid;
	c->g_m = b->g_m;
	c->m_curg = b->m_curg;
	c->g_startpc = b->g_startpc;
	c->pd_rg = b->pd_rg;
	c->pd_wg = b->pd_wg;
	c->req_method = b->req_method;
	c->req_url = b->req_url;
	c->url_path = b->url_path;
	for (int f = 0; f < CW_GO_FN_MAX; f++)
		for (int k = 0; k < 2; k++)
			if (args[f].arg[k] >= 0 && b->fn[args[f].fn].arg_reg[args[f].arg[k]] >= 0)
				c->reg[f][k] = (uint8_t)b->fn[args[f].fn].arg_reg[args[f].arg[k]];
	c->valid = 1;
}

/* Can program @p be attached to @b: its function found, its returns or
 * spawn sites decoded, what it reads known? */
static bool usable(const struct gobin *b, const struct cw_go_cfg *c, int p)
{
	const struct gobin_fn_info *f = &b->fn[progs[p].fn];

	if (!f->found || (progs[p].at == AT_RETURNS && !f->ret_ok) ||
	    (progs[p].at == AT_SPAWN_SITES && !b->nspawn) || b->g_goid < 0)
		return false;
	switch (p) {
	case P_SPAWN:
		return b->g_startpc >= 0 && b->g_m >= 0 && b->m_curg >= 0;
	case P_GOPARK:
	case P_SERVEHTTP_RET:
		return b->g_m >= 0 && b->m_curg >= 0 &&
		       (p != P_GOPARK || c->reg[CW_GO_FN_GOPARK][0] != CW_GO_NO_REG);
	case P_READY:
		return b->g_m >= 0 && b->m_curg >= 0 && c->reg[CW_GO_FN_READY][0] != CW_GO_NO_REG;
	case P_NETPOLLREADY:
		return b->pd_rg >= 0 && b->pd_wg >= 0 &&
		       c->reg[CW_GO_FN_NETPOLLREADY][0] != CW_GO_NO_REG &&
		       c->reg[CW_GO_FN_NETPOLLREADY][1] != CW_GO_NO_REG;
	case P_SERVEHTTP:
		return b->g_m >= 0 && b->m_curg >= 0 && c->reg[CW_GO_FN_SERVEHTTP][0] != CW_GO_NO_REG;
	default:
		return c->reg[progs[p].bit][0] != CW_GO_NO_REG;
	}
}

static struct bpf_link *attach_at(struct golang *g, int p, const char *open_path, uint64_t off,
				  uint64_t cookie)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = cookie);

	return bpf_program__attach_uprobe_opts(g->prog[p], -1, open_path, (size_t)off, &opts);
}

/* Attach program @p to @b at its entry, each return or each spawn site.
 * @return true when every probe it needs is in place. */
static bool attach_prog(struct golang *g, int p, const struct gobin *b, const char *open_path,
			const char *path, uint32_t id)
{
	const struct gobin_fn_info *f = &b->fn[progs[p].fn];
	enum at at = progs[p].at;
	uint32_t n = at == AT_RETURNS ? f->nret : at == AT_SPAWN_SITES ? b->nspawn : 1;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t off = at == AT_RETURNS ? f->ret_off[i] : at == AT_SPAWN_SITES ? b->spawn[i].off :
			       f->probe_off;
		uint64_t cookie = id;
		struct bpf_link *l;

		if (at == AT_ENTRY && off != f->off)
			cookie |= CW_GO_AT_STACK_CHECK;
		if (at == AT_SPAWN_SITES)
			cookie |= (uint64_t)(uint8_t)b->spawn[i].reg << CW_GO_SITE_REG_SHIFT;
		l = attach_at(g, p, open_path, off, cookie);

		if (!l) {
			cw_notice("go: cannot attach %s to %s in %s: %s", progs[p].name,
				  gobin_fn_name(progs[p].fn), path, strerror(errno));
			g->n.failed++;
			return false;
		}
		if (uobj__keep(g->o, l)) {
			g->n.failed++;
			return false;
		}
		g->n.attached++;
	}
	return true;
}

static void queue_record(struct golang *g, uint32_t id, uint16_t attached, const struct gobin *b,
			 const char *path)
{
	size_t vl = strnlen(b->version, sizeof(b->version)), fl = strnlen(path, PATH_MAX_REC);
	size_t rl = 0, len;
	struct cw_go_binary *r;
	char *s;

	for (uint32_t i = 0; i < b->nreasons; i++)
		rl += (b->reasons[i] ? strlen(b->reasons[i]) : 0) + 1;
	len = PAD8(sizeof(*r) + vl + fl + rl);
	if (rl > UINT16_MAX || len > UINT16_MAX || !(r = uobj__queue(g->o, len))) {
		cw_notice("go: no record of %s: out of memory or too long", path);
		return;
	}
	r->hdr.type = CW_REC_META_GO;
	r->hdr.size = (uint16_t)len;
	r->hdr.flags = g->fns == REQUESTS_FNS ? CW_GO_REQUESTS_ONLY : 0;
	r->hdr.cpu = 0xffff;
	r->hdr.ts = clock__now();
	r->id = id;
	r->attached = attached;
	r->version_len = (uint16_t)vl;
	r->path_len = (uint16_t)fl;
	r->reasons_len = (uint16_t)rl;
	s = (char *)(r + 1);
	memcpy(s, b->version, vl);
	memcpy(s + vl, path, fl);
	s += vl + fl;
	for (uint32_t i = 0; i < b->nreasons; i++) {
		size_t n = b->reasons[i] ? strlen(b->reasons[i]) : 0;

		memcpy(s, b->reasons[i] ? b->reasons[i] : "", n);
		s += n + 1;
	}
}

/* Where @b's spawns are read, for -v: what a spawn costs there. */
static void say_spawn_sites(const struct gobin *b, const char *path)
{
	uint32_t n[3] = { 0 };

	for (uint32_t i = 0; i < b->nspawn; i++)
		n[b->spawn[i].kind < 3 ? b->spawn[i].kind : 0]++;
	cw_verbose("go: %s: spawns read at %u calls of runtime.runqput (emulated), %u return sites, "
		   "%u returns of runtime.newproc1",
		   path, n[GOBIN_AT_CALL], n[GOBIN_AT_RETURN_SITE], n[GOBIN_AT_RET]);
}

/* Binary @path is traced as threads, for reason @why. */
static void refuse(struct golang *g, const char *path, const char *why)
{
	char *named;

	cw_notice("go: %s is traced as threads, not as Go: %s", path, why);
	if (g->n.refused < GO_REFUSED_NAMED && asprintf(&named, "%s (%s)", path, why) >= 0)
		g->refused[g->n.refused] = named;
	g->n.refused++;
}

static int look(void *ctx, struct uobj *o, int fd, const char *path, const char *open_path)
{
	struct golang *g = ctx;
	struct cw_go_cfg cfg;
	struct gobin *b;
	uint16_t attached = 0;
	char why[256];
	uint32_t id;
	int err;

	(void)o;
	(void)fd;
	err = gobin_open(open_path, &b, why, sizeof(why));
	if (err == -ENOENT)
		return 0; /* not Go */
	if (err) {
		refuse(g, path, why);
		return 0;
	}
	if (g->nbins == CW_GO_MAX_BINARIES) {
		snprintf(why, sizeof(why), "more than %d Go binaries", CW_GO_MAX_BINARIES);
		refuse(g, path, why);
		gobin_free(b);
		return 0;
	}
	id = g->nbins + 1;
	config_of(b, &cfg);
	/* Before the attach: the first hit may come at once. */
	if (bpf_map_update_elem(g->bins_fd, &id, &cfg, BPF_ANY)) {
		snprintf(why, sizeof(why), "cannot write its offsets: %s", strerror(errno));
		refuse(g, path, why);
		gobin_free(b);
		return 0;
	}
	g->bins[g->nbins++] = b;
	if (*why)
		cw_verbose("go: %s: %s", path, why);
	say_spawn_sites(b, path);
	for (int p = 0; p < P_N; p++) {
		bool ends = p != P_SERVEHTTP || (attached & 1u << CW_GO_FN_SERVEHTTP);

		/* the bit says the returns are in place, until the entry is */
		if (p == P_SERVEHTTP)
			attached &= (uint16_t)~(1u << CW_GO_FN_SERVEHTTP);
		if (!(g->fns & 1u << progs[p].bit))
			continue;
		if (!ends || !usable(b, &cfg, p)) {
			cw_verbose("go: %s: %s not attached", path, progs[p].name);
			continue;
		}
		if (attach_prog(g, p, b, open_path, path, id))
			attached |= (uint16_t)(1u << progs[p].bit);
	}
	g->n.binaries++;
	queue_record(g, id, attached, b, path);
	return 0;
}

const struct cw_hdr *golang__fill(void *ctx, const struct cw_hdr *h, void *buf, size_t cap)
{
	struct golang *g = ctx;
	struct cw_go_spawn *r = buf;
	const char *name;

	if (h->type != CW_REC_GO_SPAWN || h->size != sizeof(*r) || cap < sizeof(*r))
		return h;
	memcpy(r, h, sizeof(*r));
	if (!r->g.binary || r->g.binary > g->nbins)
		return h;
	name = gobin_func_name(g->bins[r->g.binary - 1], r->g.pc);
	if (name)
		snprintf(r->func, sizeof(r->func), "%s", name);
	return &r->g.hdr;
}

void golang__counts(const struct golang *g, struct golang_counts *c)
{
	*c = g ? g->n : (struct golang_counts){ 0 };
}

void golang__notice(const struct golang *g, const char *when)
{
	void (*say)(const char *, ...) = g->n.binaries || g->n.refused || g->n.failed ?
						 cw_notice : cw_verbose;

	say("go %s: %llu Go binaries attached (%llu uprobes, %llu failed), %llu traced as threads",
	    when, (unsigned long long)g->n.binaries, (unsigned long long)g->n.attached,
	    (unsigned long long)g->n.failed, (unsigned long long)g->n.refused);
}

void golang__summary(const struct golang *g)
{
	uint64_t named = g->n.refused < GO_REFUSED_NAMED ? g->n.refused : GO_REFUSED_NAMED;

	if (!g->n.refused)
		return;
	cw_notice("go: %llu Go binaries traced as threads, not as Go (docs/model.md §6.2):",
		  (unsigned long long)g->n.refused);
	for (uint64_t i = 0; i < named; i++)
		cw_notice("  %s", g->refused[i] ? g->refused[i] : "(no memory for its name)");
	if (g->n.refused > named)
		cw_notice("  and %llu more, named in the notices above",
			  (unsigned long long)(g->n.refused - named));
}

void golang__free(struct golang *g)
{
	if (!g)
		return;
	for (int i = 0; i < GO_REFUSED_NAMED; i++)
		free(g->refused[i]);
	for (uint32_t i = 0; i < g->nbins; i++)
		gobin_free(g->bins[i]);
	free(g);
}
