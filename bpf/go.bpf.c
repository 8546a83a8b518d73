// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * causeway edge plane, go class (docs/model.md §6.2): a Go program's
 * goroutines, their handoffs and its net/http requests, read from uprobes
 * on its runtime, with no change to the program.
 *
 *   runtime.newproc1's spawn sites    CW_REC_GO_SPAWN      the goroutine made
 *   runtime.execute                   CW_REC_GO_EXECUTE    it runs on this thread
 *   runtime.gopark                    CW_REC_GO_PARK       the running one parks
 *   runtime.ready                     CW_REC_GO_READY      a parked one is readied
 *   runtime.netpollready              CW_REC_GO_READY      ... by the netpoller
 *   runtime.goexit0                   CW_REC_GO_EXIT       a goroutine's end
 *   net/http.serverHandler.ServeHTTP  CW_REC_GO_REQ_BEGIN  a request, and at each
 *                                     CW_REC_GO_REQ_END    return its end
 *
 * capture/golang.c attaches each program per binary, at the function's
 * entry or at each of its return instructions (a uretprobe rewrites the
 * return address on the goroutine's stack, which Go's stack copying and
 * unwinding do not expect); a spawn where capture/gobin.h's struct
 * gobin_site says (the call of runqput after newproc1's return, else its
 * returns). The binary's id is the cookie; go_bins
 * holds, at that id, the offsets and argument registers the binary's
 * DWARF gives, for they differ between Go versions.
 *
 * A goroutine is its goid, never its g: a g struct is reused for the next
 * goroutine once one exits. The running goroutine is the current g's
 * m.curg: R14 holds the current g under the register ABI, which is g0
 * (the scheduler's stack) inside execute, ready and goexit0, whose
 * m.curg is then the goroutine that called into the scheduler, or none.
 *
 * Filtering: the probes are attached for every process that maps the
 * binary (a traced process may exec it later); the traced set decides
 * first, before any other map is looked at.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "schema/events.h"
#include "bpf/config.h"
#include "causeway.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CW_GO_MAX_BINARIES);
	__type(key, __u32);
	__type(value, struct cw_go_cfg);
} go_bins SEC(".maps");

/* Register @n (DWARF x86-64 numbering) of @ctx; 0 for one not read.
 * The registers are copied to the stack first: the verifier refuses a
 * context read at an offset computed at run time. */
static __always_inline __u64 reg(const struct pt_regs *ctx, __u8 n)
{
	__u64 r[12] = { ctx->ax, ctx->dx, ctx->cx, ctx->bx, ctx->si, ctx->di, 0, 0,
			ctx->r8, ctx->r9, ctx->r10, ctx->r11 };

	return n < 12 ? r[n] : 0;
}

/* The word at @base + @off in the traced program; 0 when unreadable. */
static __always_inline __u64 word(__u64 base, __s32 off)
{
	__u64 v = 0;

	if (!base || off < 0)
		return 0;
	bpf_probe_read_user(&v, sizeof(v), (const void *)(base + (__u32)off));
	return v;
}

/* EFLAGS' carry and zero flags: a JBE jumps on either. */
#define GO_FLAGS_BE (0x1 | 0x40)

/* The traced program's binary, or NULL when this hit records nothing. */
static __always_inline const struct cw_go_cfg *cfg(struct pt_regs *ctx, __u32 *id)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	const struct cw_go_cfg *b;

	/* the stack must grow first: the entry is hit again after it */
	if ((cookie & CW_GO_AT_STACK_CHECK) && (ctx->flags & GO_FLAGS_BE))
		return NULL;
	if (!cw_tgid_traced(bpf_get_current_pid_tgid() >> 32))
		return NULL;
	*id = (__u32)cookie;
	b = bpf_map_lookup_elem(&go_bins, id);
	return b && b->valid ? b : NULL;
}

/* The goroutine running on this thread (R14's m.curg), 0 when none. */
static __always_inline __u64 running_goid(const struct pt_regs *ctx, const struct cw_go_cfg *b)
{
	__u64 m = word(ctx->r14, b->g_m);

	return word(word(m, b->m_curg), b->g_goid);
}

static __always_inline void fill(struct cw_go *e, __u32 id, __u64 goid, __u64 other, __u64 pc)
{
	cw_current(&e->task, &e->task_start);
	e->goid = goid;
	e->other = other;
	e->pc = pc;
	e->binary = id;
	e->__pad = 0;
}

/* One cw_go record of @type. */
static __always_inline int emit(__u16 type, __u8 flags, __u32 id, __u64 goid, __u64 other, __u64 pc)
{
	struct cw_go *e = cw_reserve(sizeof(*e), type, CW_CTX_TASK);

	if (!e)
		return 0;
	e->hdr.flags = flags;
	fill(e, id, goid, other, pc);
	cw_submit(e);
	return 0;
}

/* The goroutine in the g that register @fn's first slot holds. */
static __always_inline __u64 arg_goid(struct pt_regs *ctx, const struct cw_go_cfg *b, int fn)
{
	return word(reg(ctx, b->reg[fn & 7][0]), b->g_goid);
}

/* At a spawn site: a return of newproc1, or the call of runqput with its
 * result (capture/gobin.h, struct gobin_site); the cookie names the
 * register that holds the new g there. */
SEC("uprobe")
int go_spawn(struct pt_regs *ctx)
{
	const struct cw_go_cfg *b;
	struct cw_go_spawn *e;
	__u64 newg, goid;
	__u32 id;

	if (!(b = cfg(ctx, &id)))
		return 0;
	newg = reg(ctx, CW_GO_SITE_REG(bpf_get_attach_cookie(ctx)));
	/* an unreadable g names no goroutine: nothing to write */
	if (!(goid = word(newg, b->g_goid)))
		return 0;
	e = cw_reserve(sizeof(*e), CW_REC_GO_SPAWN, CW_CTX_TASK);
	if (!e)
		return 0;
	/* newproc1 and its caller run on the scheduler's stack: m.curg is
	 * the goroutine of the go statement (none for the main goroutine's). */
	fill(&e->g, id, goid, running_goid(ctx, b), word(newg, b->g_startpc));
	/* user space names the function; ring memory holds older bytes */
	__builtin_memset(e->func, 0, sizeof(e->func));
	cw_submit(e);
	return 0;
}

/* Written even when the goroutine cannot be read (goid 0): the thread no
 * longer runs the one before. */
SEC("uprobe")
int go_execute(struct pt_regs *ctx)
{
	const struct cw_go_cfg *b;
	__u32 id;

	if (!(b = cfg(ctx, &id)))
		return 0;
	return emit(CW_REC_GO_EXECUTE, 0, id, arg_goid(ctx, b, CW_GO_FN_EXECUTE), 0, 0);
}

SEC("uprobe")
int go_gopark(struct pt_regs *ctx)
{
	const struct cw_go_cfg *b;
	__u32 id;

	if (!(b = cfg(ctx, &id)))
		return 0;
	/* waitReason is a uint8: the register's low byte */
	return emit(CW_REC_GO_PARK, 0, id, running_goid(ctx, b),
		    reg(ctx, b->reg[CW_GO_FN_GOPARK][0]) & 0xff, 0);
}

SEC("uprobe")
int go_ready(struct pt_regs *ctx)
{
	const struct cw_go_cfg *b;
	__u64 goid;
	__u32 id;

	if (!(b = cfg(ctx, &id)) || !(goid = arg_goid(ctx, b, CW_GO_FN_READY)))
		return 0;
	return emit(CW_REC_GO_READY, 0, id, goid, running_goid(ctx, b), 0);
}

SEC("uprobe")
int go_goexit0(struct pt_regs *ctx)
{
	const struct cw_go_cfg *b;
	__u64 goid;
	__u32 id;

	if (!(b = cfg(ctx, &id)) || !(goid = arg_goid(ctx, b, CW_GO_FN_GOEXIT0)))
		return 0;
	return emit(CW_REC_GO_EXIT, 0, id, goid, 0, 0);
}

/* pdReady and pdWait: what a pollDesc's rg or wg holds when no goroutine
 * is parked on it (runtime/netpoll.go). */
#define GO_PD_WAIT 2

/*
 * netpollready(toRun, pd, mode) hands the goroutines parked on pd for
 * mode ('r', 'w' or both) to the scheduler, without runtime.ready: what
 * rg and wg hold at its entry are those goroutines. The netpoller is the
 * thread's own work (the kernel woke it in epoll_wait), not a goroutine's.
 */
SEC("uprobe")
int go_netpollready(struct pt_regs *ctx)
{
	const struct cw_go_cfg *b;
	__u64 pd, mode, g;
	__u32 id;

	if (!(b = cfg(ctx, &id)))
		return 0;
	pd = reg(ctx, b->reg[CW_GO_FN_NETPOLLREADY][0]);
	mode = reg(ctx, b->reg[CW_GO_FN_NETPOLLREADY][1]) & 0xffffffff;
	if (mode == 'r' || mode == 'r' + 'w') {
		g = word(pd, b->pd_rg);
		if (g > GO_PD_WAIT && (g = word(g, b->g_goid)))
			emit(CW_REC_GO_READY, CW_GO_NETPOLL, id, g, 0, 0);
	}
	if (mode == 'w' || mode == 'r' + 'w') {
		g = word(pd, b->pd_wg);
		if (g > GO_PD_WAIT && (g = word(g, b->g_goid)))
			emit(CW_REC_GO_READY, CW_GO_NETPOLL, id, g, 0, 0);
	}
	return 0;
}

/* A Go string (pointer, length) at @at, copied to @dst of at most @max
 * bytes (a constant, so that the verifier sees the copy bounded);
 * @return the bytes copied. */
static __always_inline __u32 go_string(char *dst, __u32 max, __u64 at)
{
	__u64 p = word(at, 0), n = word(at, 8);

	if (!p || !n)
		return 0;
	if (n > max)
		n = max;
	if (bpf_probe_read_user(dst, n, (const void *)p))
		return 0;
	return n;
}

#define GO_METHOD_MAX 15

SEC("uprobe")
int go_servehttp(struct pt_regs *ctx)
{
	const struct cw_go_cfg *b;
	struct cw_go_req *e;
	__u64 req, url;
	__u32 id, n;

	if (!(b = cfg(ctx, &id)))
		return 0;
	req = reg(ctx, b->reg[CW_GO_FN_SERVEHTTP][0]);
	e = cw_reserve(sizeof(*e), CW_REC_GO_REQ_BEGIN, CW_CTX_TASK);
	if (!e)
		return 0;
	fill(&e->g, id, running_goid(ctx, b), 0, req);
	__builtin_memset(e->name, 0, sizeof(e->name));
	/* "METHOD PATH": a method is a short token (GET, OPTIONS) */
	n = b->req_method >= 0 ? go_string(e->name, GO_METHOD_MAX, req + (__u32)b->req_method) : 0;
	url = word(req, b->req_url);
	if (n && url && b->url_path >= 0) {
		n &= GO_METHOD_MAX;
		e->name[n] = ' ';
		go_string(e->name + n + 1, CW_GO_REQ_LEN - GO_METHOD_MAX - 2,
			  url + (__u32)b->url_path);
	}
	cw_submit(e);
	return 0;
}

SEC("uprobe")
int go_servehttp_ret(struct pt_regs *ctx)
{
	const struct cw_go_cfg *b;
	__u32 id;

	if (!(b = cfg(ctx, &id)))
		return 0;
	return emit(CW_REC_GO_REQ_END, 0, id, running_goid(ctx, b), 0, 0);
}
