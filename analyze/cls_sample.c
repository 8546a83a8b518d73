// SPDX-License-Identifier: MIT
/*
 * The sample class: the context plane (docs/model.md §4: samples, stacks,
 * stack_frames, frames). It owns the mapping records and the CPU and
 * off-CPU samples, and watches the sched records that change an address
 * space (exec, fork, a group's exit) or end a wait (a switch-in).
 *
 * Records. A sample is checked whole before any of it is read, by the
 * rule the capture's drain applies too (cw_sample_ok, schema/records.h:
 * its size exactly what its counts say, the counts within their limits,
 * one user-stack mode, keep in (0, 2^32], a CPU sample's period not 0).
 * Anything else is counted (bad_records) and not read.
 *
 * Thread and node. A sample names its task with a witness; the sample
 * ring carries only traced tasks, so the sample proves the thread
 * traced and makes an orphan when no generation is live (the sched
 * class's rules, cw_cls__thread). samples.node is the most specific node
 * running on that thread at the sample (cw_cls__running: a work item the
 * kworker executes), else the thread.
 *
 * Stack. One stack per sample, leaf first: the kernel frames (named from
 * the kallsyms snapshot), then the user frames. User addresses come from
 * user[] (frame pointers) or, with registers (--call-graph dwarf), from
 * the offline unwinder. Every user address but the first is a return
 * address, looked up at address - 1; one address may give several frames
 * (inlined calls first). With --no-symbols nothing touches libdw: a user
 * frame is its address as sampled, its module and build-id from the
 * mapping, no function; a dwarf sample's user stack is then its leaf
 * (rip) only, since unwinding needs the CFI.
 *
 * Address spaces. The mapping records build one per process (maps.h);
 * exec empties it, a fork of a process copies it, the group's exit drops
 * it. The kernel maps a new image (the program, its interpreter) before
 * the exec tracepoint fires, so the mapping records of the exec'ing task
 * (after a non-leader exec the kernel has already given it the leader's
 * tid) from the EXEC_MAP_WINDOW before its exec record are the new
 * image's: they are applied again after the address space is emptied.
 * The last RECENT_MAPS mapping records are kept for that.
 *
 * Dedup. A frame (address, kernel, module, build_id, function, file,
 * line, inlined) and a stack (its sequence of frame ids) are written once,
 * when first seen. The tables that remember them are bounded (entries
 * and bytes); a full table is emptied and counted, after which a frame or
 * stack seen again is written again under a new id: more rows, never
 * more memory, and every row stays right.
 *
 * Weight. A CPU sample stands for its period (ns), with inclusion
 * probability keep / 2^32. An off-CPU sample is taken when its thread
 * blocks; it waits (one per thread, in a bounded table) for that thread's
 * next switch-in, and is then written with weight = switch-in ts - sample
 * ts and wake = the last wake or fire edge into the thread in (sample ts,
 * switch-in ts], unless a coverage break of the edge stream overlaps the
 * wait: the wake seen could then be an earlier one than the one that
 * ended it, so wake stays NULL (a sample-ring break says nothing about
 * wakes and does not count). The switch-in must name the same task: the
 * same thread generation (tid and witness), never a reused tid. When the
 * wait's end is not seen, the sample is written with weight_exact = 0,
 * wake NULL, and weight = the time from the sample to the moment the
 * analyzer stopped waiting: the trace's last event (the thread never ran
 * again: a lower bound), the moment the bound pushed it out (counted:
 * also a lower bound), or the moment its tid was seen running as another
 * task or the thread itself was seen running again (its switch-in was
 * lost: the wait ended no later than that). An off-CPU sample read after
 * its thread's next switch-in (a sample ring drained later than the
 * reorder window waits) is written at once, weight to the last switch-in
 * seen, weight_exact 0.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../schema/records.h"
#include "carry.h"
#include "classes.h"
#include "ksyms.h"
#include "lib/hash.h"
#include "lib/htab.h"
#include "maps.h"
#include "symbol.h"
#include "unwind.h"

#define KEEP_ALL 4294967296.0
/* Frames one sample's stack can hold: every kernel address, and every
 * user address with its inlined calls. */
#define MAX_DEPTH (CW_SAMPLE_MAX_FRAMES * (1 + CW_SYM_MAX_INLINE))
/* The dedup tables: at most this many entries (or --max-live, if
 * smaller) and bytes each. */
#define DEDUP_MAX_ENTRIES 65536
#define DEDUP_MAX_BYTES (16u << 20)
/* A frame's strings are cut here: a longer one is not a name. */
#define MAX_STR 4096

/* What the class keeps with each thread (its state bytes, ident.h):
 * what an off-CPU sample needs to know of its wait's end. */
struct thread_wait {
	/* The last wake or fire edge into the thread, whichever class wrote
	 * it: its id and ts, 0 when none. */
	uint64_t wake_edge, wake_ts;
	/* Its last switch-in seen: an off-CPU sample read after it knows
	 * its wait is over. */
	uint64_t run_ts;
};
CW_OBJ_STATE_OF(wait_of, struct thread_wait, state)

/* The class's counters (analyze/counters.h's form). */
#define CW_SAMPLE_COUNTERS(X)                                                                      \
	X(malformed, "samples_malformed",                                                          \
	  "malformed sample or mapping records (also in records_malformed)")                       \
	X(late, "samples_late", "samples read after newer records: their node is the thread")     \
	X(offcpu_unresolved, "offcpu_unresolved",                                                  \
	  "off-CPU samples whose weight is a lower bound: the switch-in was not seen")             \
	X(offcpu_pushed, "offcpu_pushed_out",                                                      \
	  "of those, pushed out of the pending table by its bound")                                \
	X(interrupt_work, "samples_interrupt_work",                                                \
	  "CPU samples in an interrupt charged to the object it processed, not to its thread")    \
	X(offcpu_switchin, "offcpu_switchin_reconstructed",                                        \
	  "off-CPU waits whose switch-in was not seen, ended at the thread's next record after a " \
	  "wake of it: that wake is theirs, the weight an upper bound")                            \
	X(frames_symbolized, "frames_symbolized", "frames with a function")                        \
	X(frame_resets, "frame_table_resets", "times the frame dedup table was emptied by its bound") \
	X(stack_resets, "stack_table_resets", "times the stack dedup table was emptied by its bound") \
	X(maps_dropped, "address_spaces_dropped", "address spaces dropped by the bound of cw_maps") \
	X(sym_opened, "symbol_objects_opened", "ELF objects the symbolizer opened")                \
	X(sym_refused, "symbol_objects_refused",                                                   \
	  "mapping paths the symbolizer refused to open (not a regular file, ...)")

struct sample_stats {
	uint64_t samples[2];	 /* written, by cw_sample_kind (the summary) */
	uint64_t stacks, frames; /* rows written (the summary) */
	CW_SAMPLE_COUNTERS(CW_COUNTER_FIELD)
};

/* ---- bounded dedup tables --------------------------------------------- */

struct dent {
	struct cw_hnode hn;
	uint64_t hash, id;
	uint32_t len; /* of key[] */
	uint8_t key[];
};

struct dedup {
	struct cw_htab tab; /* tab.n entries */
	size_t max_n, bytes;
	uint64_t resets;
};

/* Keys are hashed a word at a time: a frame's key holds whole paths and
 * names, and a byte at a time they were a third of the analysis. */
static uint64_t key_hash(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull ^ n, w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	for (w = 0; i < n; i++)
		w = w << 8 | b[i];
	h = (h ^ w) * 0x9e3779b97f4a7c15ull;
	return h ^ h >> 32;
}

static void dedup_clear(struct dedup *d)
{
	cw_htab__free_entries(&d->tab, offsetof(struct dent, hn));
	d->bytes = 0;
}

static uint64_t dent_rehash(const struct cw_hnode *n)
{
	return cw_hentry(n, struct dent, hn)->hash;
}

/* The id @key was given, or 0 when it is not in the table. */
static uint64_t dedup_find(const struct dedup *d, const void *key, uint32_t len, uint64_t h)
{
	struct dent *e;

	cw_htab_for_each_possible(&d->tab, e, hn, h)
		if (e->hash == h && e->len == len && !memcmp(e->key, key, len))
			return e->id;
	return 0;
}

/* Remembers @key, not in the table, with hash @h as @id (emptying the
 * table first when it is full): the caller that looked @key up keeps its
 * hash, and a whole stack's key is long. */
static int dedup_put(struct dedup *d, const void *key, uint32_t len, uint64_t h, uint64_t id)
{
	struct dent *e;

	if (d->tab.n >= d->max_n || d->bytes + len > DEDUP_MAX_BYTES) {
		dedup_clear(d);
		d->resets++;
	}
	if (!d->tab.cap && cw_htab__grow(&d->tab, 1024, dent_rehash, 0))
		return -ENOMEM;
	if (!(e = malloc(sizeof(*e) + len)))
		return -ENOMEM;
	e->hash = h;
	e->id = id;
	e->len = len;
	memcpy(e->key, key, len);
	cw_htab__add(&d->tab, &e->hn, h);
	d->bytes += sizeof(*e) + len;
	/* Grow to one entry per bucket; the bound caps it. */
	if (d->tab.n > d->tab.cap && d->tab.cap < d->max_n)
		return cw_htab__grow(&d->tab, 0, dent_rehash, 0);
	return 0;
}

/* The id @key was given when first seen, or 0 after remembering it as
 * @id. */
static int dedup_get(struct dedup *d, const void *key, uint32_t len, uint64_t id, uint64_t *found)
{
	uint64_t h = key_hash(key, len);

	if ((*found = dedup_find(d, key, len, h)))
		return 0;
	return dedup_put(d, key, len, h, id);
}

static void dedup_free(struct dedup *d)
{
	dedup_clear(d);
	cw_htab__free(&d->tab);
}

/* ---- pending off-CPU samples ------------------------------------------ */

struct pending {
	struct cw_hnode hn;
	struct pending *older, *newer;
	uint32_t tid;
	struct cw_sample_row row; /* weight and wake still to come */
};

/* The table of pending samples by tid grows to this many buckets. */
#define PENDING_BUCKETS 65536

/* The new image's mappings precede its exec record by the time the
 * kernel takes from mapping it to the tracepoint: microseconds, unless
 * a page fault waits for the disk. */
#define EXEC_MAP_WINDOW 10000000ull /* 10 ms */
#define RECENT_MAPS 256

struct recent_map {
	uint8_t *rec; /* a copy of a valid CW_REC_META_MMAP record */
	size_t cap;
};

struct sample {
	struct sample_stats st;
	struct cw_maps *maps;
	struct cw_sym *sym;
	int no_symbols;
	struct dedup frames, stacks;
	/* The raw addresses of a stack (after unwinding) in one address
	 * space version -> its stack id: a stack seen again is neither
	 * symbolized nor deduplicated frame by frame again. */
	struct dedup raws;
	uint64_t next_frame, next_stack;

	struct cw_htab ptab; /* ptab.n pending */
	struct pending *oldest, *newest;
	size_t max_pending;

	struct recent_map recent[RECENT_MAPS]; /* a ring, oldest at next */
	size_t next_recent;

	/* scratch for one sample */
	uint64_t ips[CW_SAMPLE_MAX_FRAMES];
	uint64_t stack_ids[MAX_DEPTH];
	uint64_t raw[4 + 2 * CW_SAMPLE_MAX_FRAMES];
	uint8_t key[4 * MAX_STR + 64];
};

static struct sample_stats *stats_of(const struct cw_cls *c)
{
	return &((struct sample *)c->state)->st;
}

static struct pending *pending_find(struct sample *s, uint32_t tid)
{
	struct pending *e;

	cw_htab_for_each_possible(&s->ptab, e, hn, cw_mix64(tid))
		if (e->tid == tid)
			return e;
	return NULL;
}

static uint64_t pending_rehash(const struct cw_hnode *n)
{
	return cw_mix64(cw_hentry(n, struct pending, hn)->tid);
}

static void pending_unlink(struct sample *s, struct pending *e)
{
	cw_htab__del(&s->ptab, &e->hn, cw_mix64(e->tid));
	if (e->older)
		e->older->newer = e->newer;
	else
		s->oldest = e->newer;
	if (e->newer)
		e->newer->older = e->older;
	else
		s->newest = e->older;
}

static int write_sample(struct cw_cls *c, const struct cw_sample_row *row)
{
	const struct cw_sink *sink = cw_ident__sink(c->id);

	stats_of(c)->samples[row->kind]++;
	return sink->sample ? sink->sample(sink->ctx, row) : 0;
}

/*
 * An off-CPU sample's request is the one its context was blocked in. When
 * only a handoff said so (reconstructed), the wait is the request's only
 * if what ended it was a handoff of the same request (@woke: the thread's
 * carry after its wake; NULL: the wait's end or its wake was not seen).
 * A worker blocked after finishing one request and woken for the next
 * waited for neither.
 */
static void settle_wait(struct cw_sample_row *row, const struct cw_carry *woke)
{
	if (row->attr_confidence != CW_CONF_RECONSTRUCTED || !row->request)
		return;
	if (woke && woke->state == CW_CARRY_SET && woke->req == row->request) {
		cw_carry__to_row(woke, row);
		return;
	}
	row->request = 0;
	row->attr_chain[0] = 0;
	row->carry_edge = 0;
	if (row->task) {
		row->attr_confidence = CW_CONF_OBSERVED;
		return;
	}
	row->attr_confidence = CW_CONF_UNKNOWN;
	row->attr_reason = woke ? "the wait was not ended by its request's handoff"
				: "the wait's end or its wake was not seen";
}

/* The wait of @e ended at @ts unseen (or is given up on): weight to @ts,
 * no wake. */
static int close_unresolved(struct cw_cls *c, struct pending *e, uint64_t ts)
{
	struct sample *s = c->state;
	int err;

	pending_unlink(s, e);
	e->row.weight = ts > e->row.ts ? ts - e->row.ts : 0;
	e->row.weight_exact = 0;
	e->row.wake = 0;
	settle_wait(&e->row, NULL);
	stats_of(c)->offcpu_unresolved++;
	err = write_sample(c, &e->row);
	free(e);
	return err;
}

/* The wake that ended wait @e of thread @t, which runs again at @ts: the
 * last wake or fire into it after the wait began and by @ts, with no
 * coverage break since the wait began (the wake seen may not be the one
 * that ended it). 0: none. */
static uint64_t wake_of(struct cw_cls *c, const struct pending *e, struct cw_obj *t, uint64_t ts)
{
	const struct thread_wait *w = wait_of(t);

	if (w->wake_edge && w->wake_ts > e->row.ts && w->wake_ts <= ts &&
	    !cw_ident__break_in(c->id, e->row.ts, ts))
		return w->wake_edge;
	return 0;
}

/*
 * Wait @e of thread @t ends at @ts, ended by edge @wake (0: not seen):
 * written. @exact: @ts is its switch-in; else its switch-in was not seen
 * but @wake was (close_seen_again), and what the wait's context
 * observed becomes reconstructed.
 */
static int end_wait(struct cw_cls *c, struct pending *e, struct cw_obj *t, uint64_t ts, int exact,
		    uint64_t wake)
{
	int err;

	pending_unlink(c->state, e);
	e->row.weight = ts - e->row.ts;
	e->row.weight_exact = exact;
	e->row.wake = wake;
	settle_wait(&e->row, wake ? cw_carry__get(t) : NULL);
	if (wake && cw_carry__live(c, cw_carry__get(t)))
		e->row.waker_request = cw_carry__get(t)->req;
	if (!exact) {
		if (e->row.attr_confidence == CW_CONF_OBSERVED) {
			e->row.attr_confidence = CW_CONF_RECONSTRUCTED;
			e->row.attr_reason =
				"switch-in not seen: ended by its wake, by the thread's next record";
		}
		stats_of(c)->offcpu_switchin++;
	}
	err = write_sample(c, &e->row);
	free(e);
	return err;
}

/*
 * The wait of @e, of thread @t, was not seen to end, and the thread is
 * seen running again at @ts (its own sample or switch-out). A wake of it
 * after the wait began and by @ts, with no coverage break since the
 * wait began, is what ended it: the kernel sometimes writes no switch-in
 * (a new thread's first run, some runs after a nanosleep), but a thread
 * that blocked runs again only once woken. The switch-in is then
 * reconstructed: the wait gets that wake, its weight to @ts is an upper
 * bound (weight_exact 0), and an attribution the wait's context observed
 * becomes reconstructed, with the reason. Otherwise the wait is
 * unresolved.
 */
static int close_seen_again(struct cw_cls *c, struct pending *e, struct cw_obj *t, uint64_t ts)
{
	uint64_t wake = t && t->n.id == e->row.thread ? wake_of(c, e, t, ts) : 0;

	return wake ? end_wait(c, e, t, ts, 0, wake) : close_unresolved(c, e, ts);
}

/* ---- frames and stacks -------------------------------------------------- */

static size_t put_str(uint8_t *k, const char *str)
{
	uint32_t n = str ? (uint32_t)strnlen(str, MAX_STR - 1) + 1 : 0;

	/* 0: NULL; else the length + 1, then the bytes: NULL and "" differ. */
	memcpy(k, &n, sizeof(n));
	if (n)
		memcpy(k + sizeof(n), str, n - 1);
	return sizeof(n) + (n ? n - 1 : 0);
}

/* The id of frame @f, written when first seen. */
static int frame_id(struct cw_cls *c, struct cw_frame *f, uint64_t *id)
{
	struct sample *s = c->state;
	const struct cw_sink *sink = cw_ident__sink(c->id);
	uint8_t *k = s->key;
	size_t n = 0;
	int err;

	memcpy(k, &f->address, 8);
	k[8] = f->kernel;
	k[9] = f->inlined;
	memcpy(k + 10, &f->line, 4);
	n = 14;
	n += put_str(k + n, f->module);
	n += put_str(k + n, f->build_id);
	n += put_str(k + n, f->function);
	n += put_str(k + n, f->file);
	if ((err = dedup_get(&s->frames, k, (uint32_t)n, s->next_frame + 1, id)))
		return err;
	if (*id)
		return 0;
	*id = f->id = ++s->next_frame;
	stats_of(c)->frames++;
	if (f->function)
		stats_of(c)->frames_symbolized++;
	return sink->frame ? sink->frame(sink->ctx, f) : 0;
}

static int add_frame(struct cw_cls *c, const struct cw_sym_frame *sf, int kernel, uint32_t *depth)
{
	struct sample *s = c->state;
	struct cw_frame f = {
		.address = sf->address,
		.kernel = (uint8_t)kernel,
		.inlined = (uint8_t)!!sf->inlined,
		.line = sf->line,
		.module = sf->module,
		.build_id = sf->build_id,
		.function = sf->function,
		.file = sf->file,
	};

	if (*depth >= MAX_DEPTH)
		return 0;
	return frame_id(c, &f, &s->stack_ids[(*depth)++]);
}

static void hex(char *out, const uint8_t *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* A user address's frames: symbolized, or (--no-symbols) the address as
 * sampled with its mapping's module and build-id. */
static int user_frames(struct cw_cls *c, uint32_t pid, uint64_t addr, int is_return,
		       uint32_t *depth)
{
	struct sample *s = c->state;
	const struct cw_mapping *m = cw_maps__find(s->maps, pid, addr);
	struct cw_sym_frame out[CW_SYM_MAX_INLINE];
	char bid[41];
	int n, err = 0;

	if (s->no_symbols) {
		memset(out, 0, sizeof(out[0]));
		out[0].address = addr;
		if (m) {
			out[0].module = m->path;
			if (m->build_id_len && m->build_id_len <= 20) {
				hex(bid, m->build_id, m->build_id_len);
				out[0].build_id = bid;
			}
		}
		return add_frame(c, &out[0], 0, depth);
	}
	n = cw_sym__user(s->sym, m, addr, is_return, out, CW_SYM_MAX_INLINE);
	for (int i = 0; i < n && i < CW_SYM_MAX_INLINE && !err; i++)
		err = add_frame(c, &out[i], 0, depth);
	return err;
}

/*
 * Is @fn a frame of the capture's own program, which a stack taken in a
 * tracepoint (an off-CPU stack, at sched_switch) starts with: the
 * program, the kernel's call into it (bpf_trace_run4), and on some
 * kernels the tracepoint's iterator and BPF stub before the traced
 * function (__schedule)? Those are the profiler's frames, not the task's,
 * so the stack begins where perf's would (docs/model.md §4). Only a
 * stack's leading run of them is skipped.
 */
static int profiler_frame(const char *fn)
{
	static const char *const prefixes[] = { "bpf_prog_", "bpf_trace_run", "__bpf_trace_",
						"__traceiter_", "bpf_trampoline_" };

	if (!fn)
		return 0;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(fn, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

/* The stack of sample @r (already validated): its id, 0 when empty. */
static int stack_of(struct cw_cls *c, const struct cw_sample *r, uint64_t *stack)
{
	struct sample *s = c->state;
	const struct cw_sink *sink = cw_ident__sink(c->id);
	const uint64_t *kern = (const uint64_t *)((const uint8_t *)r + cw_sample_fixed(r));
	const uint64_t *user = kern + r->nkernel, *regs = user + r->nuser;
	const uint64_t *ips = user;
	uint32_t depth = 0;
	int nips = r->nuser, err = 0;
	size_t nraw, nmaps;
	uint64_t known, h;

	*stack = 0;
	if (r->nregs && s->no_symbols) {
		ips = &regs[16]; /* rip: the leaf, all there is without CFI */
		nips = 1;
	} else if (r->nregs) {
		nips = cw_sym__unwind(s->sym, s->maps, r->task.pid, regs, r->nregs,
				      (const uint8_t *)(regs + r->nregs), r->stack_len, s->ips,
				      CW_SAMPLE_MAX_FRAMES);
		nips = nips < 0 ? 0 : nips;
		ips = s->ips;
	}
	/* The key: what the frames follow from. User addresses mean
	 * something only in their address space as it is now (the version
	 * changes with every mapping change, and is never reused). */
	s->raw[0] = nips ? r->task.pid : 0;
	s->raw[1] = 0;
	if (nips)
		cw_maps__all(s->maps, r->task.pid, &nmaps, &s->raw[1]);
	s->raw[2] = r->nkernel;
	s->raw[3] = (uint64_t)nips;
	memcpy(&s->raw[4], kern, 8u * r->nkernel);
	memcpy(&s->raw[4 + r->nkernel], ips, 8u * (unsigned)nips);
	nraw = 4 + r->nkernel + (size_t)nips;
	h = key_hash(s->raw, 8 * nraw);
	if ((known = dedup_find(&s->raws, s->raw, (uint32_t)(8 * nraw), h))) {
		*stack = known - 1; /* stored + 1: an empty stack is 0 */
		return 0;
	}
	for (int i = 0, leaf = 1; i < r->nkernel && !err; i++) {
		struct cw_sym_frame kf;

		cw_sym__kernel(s->sym, kern[i], &kf);
		if (leaf && profiler_frame(kf.function))
			continue;
		leaf = 0;
		err = add_frame(c, &kf, 1, &depth);
	}
	for (int i = 0; i < nips && !err; i++)
		err = user_frames(c, r->task.pid, ips[i], i > 0, &depth);
	if (!err && depth)
		err = dedup_get(&s->stacks, s->stack_ids, depth * 8, s->next_stack + 1, stack);
	if (!err && depth && !*stack) {
		*stack = ++s->next_stack;
		stats_of(c)->stacks++;
		err = sink->stack ? sink->stack(sink->ctx, *stack, s->stack_ids, depth) : 0;
	}
	return err ?: dedup_put(&s->raws, s->raw, (uint32_t)(8 * nraw), h, *stack + 1);
}

/* ---- records ------------------------------------------------------------- */

static int bad(struct cw_cls *c)
{
	c->st->bad_records++;
	stats_of(c)->malformed++;
	return 0;
}



/*
 * Which request and runtime task the sample worked for (docs/model.md §6.1).
 * Observed where an adapter interval names them on the sample's thread
 * (a request between its begin and end, a task between poll begin and
 * end); reconstructed where the request is carried to the thread, or to
 * the polled task, over kernel handoffs from a context that belonged to
 * it (carry.h: the reason is the chain); otherwise unknown, with why.
 * Nothing is charged to a likely request. A late sample (read after
 * newer records) is unknown too: what runs on the thread now is not what
 * ran then.
 */
static void attribute(struct cw_cls *c, struct cw_obj *t, const struct cw_hdr *h, int late,
		      struct cw_sample_row *row)
{
	struct cw_carry k;
	struct cw_obj *task;
	int observed;

	row->request = row->task = 0;
	row->attr_chain[0] = 0;
	row->carry_edge = 0;
	row->attr_reason = NULL;
	row->attr_confidence = CW_CONF_UNKNOWN;
	if (late) {
		row->attr_reason = "sample read past the reorder window";
		return;
	}
	cw_carry__of(c, t, h, &k, &task, &observed);
	row->task = task ? task->n.id : 0;
	if (observed) {
		row->request = k.req;
		row->attr_confidence = CW_CONF_OBSERVED;
		return;
	}
	if (cw_carry__live(c, &k)) {
		row->request = k.req;
		row->attr_confidence = CW_CONF_RECONSTRUCTED;
		cw_carry__to_row(&k, row);
		return;
	}
	if (task) {
		row->attr_confidence = CW_CONF_OBSERVED; /* the task; no request */
		return;
	}
	if (k.state == CW_CARRY_SET)
		row->attr_reason = "the request handed over here had ended";
	else if (k.state == CW_CARRY_UNKNOWN && k.npath)
		row->attr_reason = "handed over from a context whose request is unknown";
	else if (k.state == CW_CARRY_UNKNOWN)
		row->attr_reason = k.broken ? "a coverage break since the request was handed over"
					    : "woken by an unknown cause";
	else
		row->attr_reason = "no request interval on the thread, nor in what handed over to it";
}

/*
 * The row of a sample of thread @t at @h, but for its kind, weight and
 * stack: the node running on @t, its attribution, its probabilities (@keep:
 * the budget's, x 2^32; @every_wait: a wait of a capture that writes every
 * one, format 1.8 and later, is in the trace for sure, and only its stacks
 * were sampled: its weight counts as it is, its stack for 1 / keep,
 * docs/model.md §2.4).
 */
static void sample_row(struct cw_cls *c, struct cw_obj *t, const struct cw_hdr *h, uint64_t keep,
		       bool every_wait, struct cw_sample_row *row)
{
	/* What runs on the thread is known as of the newest record joined;
	 * a sample older than that (read past the reorder window) would be
	 * given whatever runs now: it gets the thread, less specific but
	 * never another work item's. */
	int late = h->ts < c->st->last_ts;

	stats_of(c)->late += late;
	row->thread = t->n.id;
	row->node = late ? t->n.id : cw_cls__running(c, t, h)->n.id;
	attribute(c, t, h, late, row);
	row->ts = h->ts;
	row->cpu = h->cpu == 0xffff ? -1 : h->cpu;
	row->stack_probability = (double)keep / KEEP_ALL;
	row->inclusion_probability = every_wait ? 1.0 : row->stack_probability;
}

/*
 * Thread @t (tid @tid) blocks at @h: the wait @row (sample_row's, with
 * its stack) is held until the thread's switch-in says how long it was.
 */
static int open_wait(struct cw_cls *c, struct cw_obj *t, uint32_t tid, const struct cw_hdr *h,
		     struct cw_sample_row *row)
{
	struct sample *s = c->state;
	struct pending *e;
	int err;

	row->kind = CW_SAMPLE_KIND_OFFCPU;
	if (wait_of(t)->run_ts > h->ts) {
		/* Read after the thread was switched in again: the wait ended
		 * at a switch-in no later than the last one seen. */
		row->weight = wait_of(t)->run_ts - h->ts;
		settle_wait(row, NULL);
		stats_of(c)->offcpu_unresolved++;
		return write_sample(c, row);
	}
	e = pending_find(s, tid);
	if (e) {
		/* A late record (past the reorder window): the thread ran
		 * again before the newer wait began, unseen. One wait per
		 * tid is ever open. */
		row->weight = e->row.ts - h->ts;
		settle_wait(row, NULL);
		stats_of(c)->offcpu_unresolved++;
		return write_sample(c, row);
	}
	if (s->ptab.n >= s->max_pending) {
		stats_of(c)->offcpu_pushed++;
		if ((err = close_unresolved(c, s->oldest, h->ts)))
			return err;
	}
	if (s->ptab.n >= s->ptab.cap && s->ptab.cap < PENDING_BUCKETS &&
	    (err = cw_htab__grow(&s->ptab, 1024, pending_rehash, 0)))
		return err;
	if (!(e = calloc(1, sizeof(*e))))
		return -ENOMEM;
	e->tid = tid;
	e->row = *row;
	cw_htab__add(&s->ptab, &e->hn, cw_mix64(e->tid));
	e->older = s->newest;
	if (s->newest)
		s->newest->newer = e;
	else
		s->oldest = e;
	s->newest = e;
	return 0;
}

/* The wait of thread @t that a switch record at @h opened (format 1.9),
 * still open, or NULL. */
static struct pending *switch_wait(struct sample *s, const struct cw_obj *t, uint32_t tid,
				   const struct cw_hdr *h)
{
	struct pending *e = pending_find(s, tid);

	return e && e->row.ts == h->ts && e->row.thread == t->n.id ? e : NULL;
}

/*
 * A tick in an interrupt that processed an object (format 1.10): the
 * sample is that object's work (the packet being received, the block
 * request completing), its node, and works for the request the object
 * carries; the interrupted thread stays the row's thread, as context. An
 * object no class can name leaves the sample the thread's.
 */
static int interrupt_work(struct cw_cls *c, const struct cw_sample *r, const struct cw_hdr *h,
			  struct cw_sample_row *row)
{
	const struct cw_sample_caused *rc = (const void *)r;
	const struct cw_carry *k;
	const char *reason;
	struct cw_obj *o;
	uint8_t conf;
	int err;

	if (row->ts < c->st->last_ts)
		return 0; /* late: what ran then is not known now */
	o = cw_cls__cause(c, &rc->cause, h, 0, &conf, &reason, &err);
	if (!o)
		return err;
	row->node = o->n.id;
	stats_of(c)->interrupt_work++;
	row->request = row->task = 0;
	row->attr_chain[0] = 0;
	row->carry_edge = 0;
	row->attr_reason = NULL;
	k = cw_carry__get(o);
	if (cw_carry__live(c, k)) {
		row->request = k->req;
		row->attr_confidence = CW_CONF_RECONSTRUCTED;
		cw_carry__to_row(k, row);
		return 0;
	}
	row->attr_confidence = CW_CONF_UNKNOWN;
	row->attr_reason = "interrupt work for no request known";
	return 0;
}

static int on_sample(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_sample *r = (const void *)h;
	struct sample *s = c->state;
	struct cw_sample_row row = { 0 };
	struct cw_obj *t;
	struct pending *e;
	int err, matched;

	if (!cw_sample_ok(r, r->hdr.size))
		return bad(c);
	if (!r->task.tid)
		return 0; /* the idle task is no thread: it waits for nothing */
	/* A tick in interrupt context took the interrupted task, whatever
	 * it is: a softirq delivering a traced server's packets interrupts
	 * its untraced client. Only a task-level sample proves its task
	 * traced (analyze/task.c). */
	t = cw_cls__thread(c, &r->task, r->task_start, h,
			   CW_T_CREATE | (h->ctx == CW_CTX_TASK ? CW_T_PROOF : 0), &matched, &err);
	if (!t)
		return err;
	/* The stacks of a wait its switch record opened (format 1.9): they
	 * join it, whichever of the two was read first. */
	if (h->type == CW_REC_SAMPLE_OFFCPU && (h->flags & CW_SAMPLE_AT_SWITCH) &&
	    (e = switch_wait(s, t, r->task.tid, h))) {
		if ((h->flags & CW_SAMPLE_NOSTACK) || e->row.stack)
			return 0;
		e->row.stack_probability = (double)r->keep / KEEP_ALL;
		return stack_of(c, r, &e->row.stack);
	}
	/* The thread was seen again while a wait of its tid was open: that
	 * wait's switch-in was lost (or the tid is another task now). */
	e = pending_find(s, r->task.tid);
	if (e && e->row.ts <= h->ts && (err = close_seen_again(c, e, t, h->ts)))
		return err;
	sample_row(c, t, h, r->keep,
		   h->type == CW_REC_SAMPLE_OFFCPU && (h->flags & CW_SAMPLE_EVERY_WAIT), &row);
	if (h->type == CW_REC_SAMPLE_CPU_CAUSED && (err = interrupt_work(c, r, h, &row)))
		return err;
	if (!(h->flags & CW_SAMPLE_NOSTACK) && (err = stack_of(c, r, &row.stack)))
		return err;
	if (h->type != CW_REC_SAMPLE_OFFCPU) {
		row.kind = CW_SAMPLE_KIND_CPU;
		row.weight = r->period;
		row.weight_exact = 1;
		return write_sample(c, &row);
	}
	return open_wait(c, t, r->task.tid, h, &row);
}

/*
 * A switch record that is a wait (CW_SWITCH_WAIT, format 1.9) opens the
 * wait of its prev, as an off-CPU sample record did before: certain, its
 * stacks taken with probability keep (a sample record with
 * CW_SAMPLE_AT_SWITCH brings them, before or after this). A switch-out
 * of a prev still runnable (preempted, CW_SWITCH_PREEMPT, or yielding,
 * state 0), never a wait, shows it running: a wait of its tid opened
 * before was ended by a switch-in the trace lacks (docs/model.md §4.2),
 * not by the prev's next switch-in, which would give the wait the time
 * the thread ran as if blocked, and call it exact.
 */
static int switch_out(struct cw_cls *c, const struct cw_switch *r, const struct cw_hdr *h)
{
	struct sample *s = c->state;
	struct cw_sample_row row = { 0 };
	struct pending *e;
	struct cw_obj *t;
	int err = 0, matched;

	if (!r->prev.tid)
		return 0;
	if ((h->flags & CW_SWITCH_PREEMPT) || !r->prev_state) {
		e = pending_find(s, r->prev.tid);
		if (!e || e->row.ts >= h->ts)
			return 0;
		t = cw_cls__thread(c, &r->prev, r->prev_start, h, 0, &matched, &err);
		return err ? err : close_seen_again(c, e, t, h->ts);
	}
	if (!(h->flags & CW_SWITCH_WAIT) || !CW_REC_HAS(r, keep))
		return 0;
	t = cw_cls__thread(c, &r->prev, r->prev_start, h, CW_T_CREATE | CW_T_PROOF, &matched, &err);
	if (!t || switch_wait(s, t, r->prev.tid, h))
		return err;
	e = pending_find(s, r->prev.tid);
	if (e && e->row.ts <= h->ts && (err = close_seen_again(c, e, t, h->ts)))
		return err;
	sample_row(c, t, h, r->keep, true, &row);
	return open_wait(c, t, r->prev.tid, h, &row);
}

/* A switch-in ends the wait of the task switched in, if it is the task
 * that blocked (the same thread generation); a switch-out that says so
 * opens the wait of the task switched out. */
static int on_switch(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_switch *r = (const void *)h;
	struct sample *s = c->state;
	struct pending *e;
	uint64_t witness = CW_REC_HAS(r, next_start) ? r->next_start : 0;
	struct cw_obj *t;
	int err = 0, matched;

	if ((err = switch_out(c, r, h)))
		return err;
	if (!r->next.tid)
		return 0;
	t = cw_cls__thread(c, &r->next, witness, h, 0, &matched, &err);
	if (err)
		return err;
	if (t && h->ts > wait_of(t)->run_ts)
		wait_of(t)->run_ts = h->ts;
	e = pending_find(s, r->next.tid);
	/* A late record (past the reorder window) from before the block
	 * says nothing about its end. */
	if (!e || h->ts < e->row.ts)
		return 0;
	if (!t || t->n.id != e->row.thread)
		return close_unresolved(c, e, h->ts);
	return end_wait(c, e, t, h->ts, 1, wake_of(c, e, t, h->ts));
}

/* What ends a thread's wait: a wake, or a timer's fire straight into the
 * thread. */
static void sample_edge(struct cw_cls *c, uint8_t type, const struct cw_obj *src,
			struct cw_obj *dst, const struct cw_hdr *h)
{
	(void)src;
	if ((type == CW_EDGE_WAKE || type == CW_EDGE_FIRE) && dst->n.type == CW_NODE_THREAD) {
		wait_of(dst)->wake_edge = cw_ident__last_edge(c->id);
		wait_of(dst)->wake_ts = h->ts;
	}
}

/* Keep a copy of mapping record @h (valid) in the ring of recent ones. */
static int remember_map(struct sample *s, const struct cw_hdr *h)
{
	struct recent_map *m = &s->recent[s->next_recent];

	if (m->cap < h->size) {
		uint8_t *p = realloc(m->rec, h->size);

		if (!p)
			return -ENOMEM;
		m->rec = p;
		m->cap = h->size;
	}
	memcpy(m->rec, h, h->size);
	s->next_recent = (s->next_recent + 1) % RECENT_MAPS;
	return 0;
}

static int on_mmap(struct cw_cls *c, const struct cw_hdr *h)
{
	struct sample *s = c->state;
	int ret = cw_maps__mmap(s->maps, (const struct cw_mmap *)h);

	if (ret > 0)
		return bad(c);
	/* The /proc snapshot describes the image that runs, never a new one. */
	if (ret || (h->flags & CW_MMAP_SNAPSHOT))
		return ret;
	return remember_map(s, h);
}

/* A new image: an empty address space, then the mappings the exec'ing
 * task made just before (see the top of this file), oldest first. */
static int on_exec_maps(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_exec *r = (const void *)h;
	struct sample *s = c->state;
	int err = 0;

	cw_maps__exec(s->maps, r->task.pid);
	for (size_t i = 0; i < RECENT_MAPS && !err; i++) {
		const struct recent_map *m = &s->recent[(s->next_recent + i) % RECENT_MAPS];
		const struct cw_mmap *mr = (const void *)m->rec;

		if (!mr || mr->task.pid != r->task.pid || mr->task.tid != r->task.tid ||
		    mr->hdr.ts > h->ts || mr->hdr.ts + EXEC_MAP_WINDOW < h->ts)
			continue;
		err = cw_maps__mmap(s->maps, mr);
		err = err > 0 ? 0 : err;
	}
	return err;
}

static int on_fork_maps(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_fork *r = (const void *)h;

	if (r->fork_flags & CW_FORK_THREAD)
		return 0; /* a thread shares its process's address space */
	return cw_maps__fork(((struct sample *)c->state)->maps, r->parent.pid, r->child.pid);
}

static int on_group_exit(struct cw_cls *c, const struct cw_hdr *h)
{
	const struct cw_exit *r = (const void *)h;

	if (r->exit_flags & CW_EXIT_GROUP_DEAD)
		cw_maps__exit(((struct sample *)c->state)->maps, r->task.pid);
	return 0;
}

/* ---- life ------------------------------------------------------------------ */

static void *sample_init(struct cw_ident *id, int *err)
{
	struct sample *s = calloc(1, sizeof(*s));
	size_t max = cw_ident__max_live(id);

	if (!s || !(s->maps = cw_maps__new(0))) {
		free(s);
		*err = -ENOMEM;
		return NULL;
	}
	s->max_pending = max;
	s->frames.max_n = s->stacks.max_n = s->raws.max_n =
		max < DEDUP_MAX_ENTRIES ? max : DEDUP_MAX_ENTRIES;
	return s;
}

/* The symbolizer needs the join's options (kallsyms, --no-symbols), which
 * class init does not see: it is made at the first sample. */
static int ensure_sym(struct cw_cls *c)
{
	struct sample *s = c->state;
	const struct cw_join_opts *o = cw_cls__opts(c);
	struct cw_sym_opts so = { .debug_dir = o->debug_dir, .ksyms = o->ksyms,
				  .notice = o->notice, .notice_ctx = o->notice_ctx };

	if (s->sym)
		return 0;
	s->no_symbols = o->no_symbols;
	s->sym = cw_sym__new(&so);
	return s->sym ? 0 : -ENOMEM;
}

static int on_sample_rec(struct cw_cls *c, const struct cw_hdr *h)
{
	int err = ensure_sym(c);

	return err ?: on_sample(c, h);
}

/* End of trace: the waits still open never ended in the trace. */
static int sample_finish(struct cw_cls *c)
{
	struct sample *s = c->state;
	struct cw_sym_stats st;
	int err = 0;

	while (s->oldest && !err)
		err = close_unresolved(c, s->oldest, c->st->last_ts);
	stats_of(c)->stack_resets = s->stacks.resets;
	stats_of(c)->frame_resets = s->frames.resets;
	stats_of(c)->maps_dropped = cw_maps__dropped(s->maps);
	if (s->sym && !s->no_symbols) {
		cw_sym__stats(s->sym, &st);
		stats_of(c)->sym_opened = st.opened;
		stats_of(c)->sym_refused = st.refused;
	}
	return err;
}

static void sample_fini(void *state)
{
	struct sample *s = state;

	while (s->oldest) {
		struct pending *e = s->oldest;

		pending_unlink(s, e);
		free(e);
	}
	dedup_free(&s->frames);
	dedup_free(&s->stacks);
	dedup_free(&s->raws);
	cw_htab__free(&s->ptab);
	for (size_t i = 0; i < RECENT_MAPS; i++)
		free(s->recent[i].rec);
	cw_sym__free(s->sym);
	cw_maps__free(s->maps);
	free(s);
}

static const struct cw_handler handlers[] = {
	{ CW_REC_META_MMAP, on_mmap },
	{ CW_REC_SAMPLE_CPU, on_sample_rec },
	{ CW_REC_SAMPLE_OFFCPU, on_sample_rec },
	{ CW_REC_SAMPLE_CPU_CAUSED, on_sample_rec },
	{ 0 },
};

static const struct cw_handler watches[] = {
	{ CW_REC_SWITCH, on_switch },
	{ CW_REC_EXEC, on_exec_maps },
	{ CW_REC_FORK, on_fork_maps },
	{ CW_REC_EXIT, on_group_exit },
	{ 0 },
};

#define SAMPLE_ENTRY(field, key, comment) CW_COUNTER_ENTRY(struct sample, st.field, key)
static const struct cw_counter counters[] = {
	CW_TALLY_ENTRY(struct sample, st.samples[CW_SAMPLE_KIND_CPU], "samples_cpu")
	CW_TALLY_ENTRY(struct sample, st.samples[CW_SAMPLE_KIND_OFFCPU], "samples_offcpu")
	CW_TALLY_ENTRY(struct sample, st.stacks, "stacks")
	CW_TALLY_ENTRY(struct sample, st.frames, "frames")
	CW_SAMPLE_COUNTERS(SAMPLE_ENTRY)
	{ NULL, 0, 0 },
};

const struct cw_aclass cw_aclass_sample = {
	.name = "sample",
	.init = sample_init,
	.fini = sample_fini,
	.finish = sample_finish,
	.handlers = handlers,
	.watches = watches,
	.edge = sample_edge,
	.counters = counters,
};
