// SPDX-License-Identifier: MIT
/*
 * The offline unwinder (cw_sym__unwind): libdw's own unwinder over a
 * Dwfl that holds the process's objects at their load addresses, with
 * the sample's registers as the thread's state and the copied stack as
 * its only memory. This is how programs and distro libraries built
 * without frame pointers still unwind: libdw follows their .eh_frame
 * (or .debug_frame from the debug file).
 *
 * Building that Dwfl means opening every object of the process, far too
 * slow per sample, so one is kept per address space, a few of them, the
 * least recently used ended first. Found by (process, mappings version),
 * else by the mappings themselves: the processes a server forks share
 * their parent's objects at the same addresses, and so share one Dwfl. libdw allows one attached
 * state per Dwfl, so the state's argument is a slot of the cache entry
 * that each unwind fills with its sample before it starts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "maps.h"
#include "symbol.h"
#include "unwind.h"

#define NPROCS 16
/* Objects tried per address space: far more than a real process maps
 * executable, and a bound on the opens a hostile trace can cause each
 * time a process's mappings change. */
#define MAX_OBJECTS 1024

struct sample {
	pid_t pid;
	const uint64_t *regs;
	const uint8_t *stack;
	size_t stack_len;
};

struct proc {
	const struct cw_maps *maps;
	uint32_t pid;
	uint64_t version;
	uint64_t used; /* tick of the last use; 0: empty */
	Dwfl *dwfl;    /* NULL: no object of the process could be opened */
	struct cw_mapping *v; /* the mappings it was built from */
	size_t n;
	uint64_t hash;
	struct sample cur;
};

struct walk {
	uint64_t *ips;
	int n, max;
	int leaf_seen;
	Dwarf_Word last_sp;
};

struct cw_unwind {
	struct proc procs[NPROCS];
	uint64_t tick;
};

static void unwind_free(struct cw_unwind *u)
{
	if (!u)
		return;
	for (int i = 0; i < NPROCS; i++) {
		if (u->procs[i].dwfl)
			dwfl_end(u->procs[i].dwfl);
		free(u->procs[i].v);
	}
	free(u);
}

/* One thread, once: the sample's. */
static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct sample *smp = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = smp;
	return smp->pid;
}

/* Only the copied stack is readable; anything else ends the unwind there
 * rather than guess. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct sample *smp = arg;
	uint64_t sp = smp->regs[7];

	(void)dwfl;
	if (smp->stack_len < sizeof(*result) || addr < sp ||
	    addr - sp > smp->stack_len - sizeof(*result))
		return false;
	memcpy(result, smp->stack + (addr - sp), sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct sample *smp = thread_arg;
	Dwarf_Word r[16];

	/* x86_64 DWARF numbering: 0..15 the general registers, 16 the
	 * return address column, which is where rip goes */
	for (int i = 0; i < 16; i++)
		r[i] = smp->regs[i];
	if (!dwfl_thread_state_registers(thread, 0, 16, r))
		return false;
	dwfl_thread_state_register_pc(thread, smp->regs[16]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/* 1 the first time @path is seen: a set of path pointers (interned, so
 * the same object has the same pointer) of MAX_OBJECTS * 2 slots. */
static int first_time(const char **seen, size_t *nseen, const char *path)
{
	size_t mask = MAX_OBJECTS * 2 - 1, j = ((uintptr_t)path >> 4) * 0x9e3779b97f4a7c15ull & mask;

	for (; seen[j]; j = (j + 1) & mask)
		if (seen[j] == path)
			return 0;
	seen[j] = path;
	++*nseen;
	return 1;
}

/* Every object of the process, once each, at its load bias; an object
 * that fails the symbolizer's checks is left out (its frames end the
 * unwind). */
static Dwfl *build(struct cw_sym *s, const struct cw_mapping *v, size_t n, struct sample *smp)
{
	Dwfl *dwfl = dwfl_begin(&cw_sym__dwfl_callbacks);
	const char **seen = calloc(MAX_OBJECTS * 2, sizeof(*seen));
	size_t nseen = 0;
	int reported = 0;

	if (!dwfl || !seen) {
		dwfl_end(dwfl);
		free(seen);
		return NULL;
	}
	dwfl_report_begin(dwfl);
	for (size_t i = 0; i < n && nseen < MAX_OBJECTS; i++) {
		const struct cw_mapping *m = &v[i];
		Dwfl_Module *mod;
		uint64_t bias;
		Elf *elf = NULL;
		int fd;

		if (!m->path || !first_time(seen, &nseen, m->path))
			continue;
		fd = cw_sym__open_object(s, m->path, m->build_id, m->build_id_len, &elf);
		if (fd < 0)
			continue;
		if (cw_sym__load_bias(elf, m->start, m->pgoff, &bias)) {
			elf_end(elf);
			close(fd);
			continue;
		}
		elf_end(elf);
		/* add_p_vaddr: the module's bias is then exactly @bias (an
		 * ET_EXEC's is 0 whatever is passed, as it must be) */
		mod = dwfl_report_elf(dwfl, m->path, m->path, fd, bias, true);
		if (!mod) {
			close(fd);
			continue;
		}
		cw_sym__adopt_module(s, mod);
		reported++;
	}
	free(seen);
	dwfl_report_end(dwfl, NULL, NULL);
	if (!reported || !dwfl_attach_state(dwfl, NULL, smp->pid, &thread_callbacks, smp)) {
		dwfl_end(dwfl);
		return NULL;
	}
	return dwfl;
}

static uint64_t maps_hash(const struct cw_mapping *v, size_t n)
{
	uint64_t h = n;

	for (size_t i = 0; i < n; i++) {
		h = (h ^ v[i].start) * 0x100000001b3ull;
		h = (h ^ v[i].pgoff) * 0x100000001b3ull;
		h = (h ^ (uint64_t)(uintptr_t)v[i].path) * 0x100000001b3ull;
	}
	return h;
}

/* Field by field: the structs' padding is not part of a mapping. */
static int same_maps(const struct cw_mapping *a, const struct cw_mapping *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (a[i].start != b[i].start || a[i].end != b[i].end || a[i].pgoff != b[i].pgoff ||
		    a[i].path != b[i].path || a[i].build_id_len != b[i].build_id_len ||
		    memcmp(a[i].build_id, b[i].build_id, a[i].build_id_len))
			return 0;
	}
	return 1;
}

static struct proc *proc_get(struct cw_sym *s, struct cw_unwind *u, struct cw_maps *maps,
			     uint32_t pid)
{
	const struct cw_mapping *v;
	struct proc *p = NULL, *lru = &u->procs[0];
	uint64_t version, h;
	size_t n;

	v = cw_maps__all(maps, pid, &n, &version);
	if (!n)
		return NULL;
	for (int i = 0; i < NPROCS && !p; i++) {
		struct proc *q = &u->procs[i];

		if (q->used && q->maps == maps && q->pid == pid && q->version == version)
			p = q;
	}
	h = p ? 0 : maps_hash(v, n);
	for (int i = 0; i < NPROCS && !p; i++) {
		struct proc *q = &u->procs[i];

		if (q->used && q->maps == maps && q->n == n && q->hash == h && same_maps(q->v, v, n))
			p = q;
		if (q->used < lru->used)
			lru = q;
	}
	if (!p) {
		p = lru;
		if (p->dwfl)
			dwfl_end(p->dwfl);
		free(p->v);
		memset(p, 0, sizeof(*p));
		p->v = malloc(n * sizeof(*v));
		if (!p->v)
			return NULL;
		memcpy(p->v, v, n * sizeof(*v));
		p->n = n;
		p->hash = h;
		p->maps = maps;
		p->cur.pid = (pid_t)(pid ? pid : 1);
		p->dwfl = build(s, v, n, &p->cur);
	}
	p->pid = pid;
	p->version = version;
	p->used = ++u->tick;
	return p;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;
	Dwarf_Word sp;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	(void)activation;
	/* libdw's first frame is the registers' own: the leaf, already there */
	if (!w->leaf_seen) {
		w->leaf_seen = 1;
		if (dwfl_frame_reg(state, 7, &w->last_sp))
			w->last_sp = 0;
		return DWARF_CB_OK;
	}
	/* The same pc at the same stack pointer is no progress (a loop in
	 * the CFI, not a stack); the same pc higher up is recursion. */
	if (dwfl_frame_reg(state, 7, &sp))
		sp = 0;
	if (pc == w->ips[w->n - 1] && sp == w->last_sp)
		return DWARF_CB_ABORT;
	w->last_sp = sp;
	w->ips[w->n++] = pc;
	return w->n < w->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int cw_sym__unwind(struct cw_sym *s, struct cw_maps *maps, uint32_t pid, const uint64_t *regs,
		   int nregs, const uint8_t *stack, size_t stack_len, uint64_t *ips, int max)
{
	struct cw_unwind **up = cw_sym__unwind_state(s, unwind_free);
	struct walk w = { ips, 0, max, 0, 0 };
	struct proc *p;

	if (max < 1 || nregs < CW_SAMPLE_NREGS_X86_64 || !regs[16])
		return 0;
	ips[w.n++] = regs[16];
	if (max == 1 || !stack || !maps)
		return w.n;
	if (!*up) {
		*up = calloc(1, sizeof(**up));
		if (!*up)
			return w.n;
	}
	p = proc_get(s, *up, maps, pid);
	if (!p || !p->dwfl)
		return w.n;
	p->cur.regs = regs;
	p->cur.stack = stack;
	p->cur.stack_len = stack_len;
	/* -1 is how every unwind ends (no CFI, memory outside the copy):
	 * the frames reached until then are the answer */
	dwfl_getthread_frames(p->dwfl, p->cur.pid, frame_cb, &w);
	p->cur.regs = NULL;
	p->cur.stack = NULL;
	return w.n;
}
