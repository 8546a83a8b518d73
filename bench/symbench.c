// SPDX-License-Identifier: MIT
/*
 * symbench [ROUNDS]: frames per second of the symbolizer (cw_sym__user)
 * on the objects of this very process: libc (debug info from
 * /usr/lib/debug when libc6-dbg is installed, else its symbol table) and
 * this binary (built with -g).
 *  - cached: a few thousand distinct addresses, looked up ROUNDS times
 *    (default 500) after one warm-up pass: what a profile's hot frames
 *    cost once seen (one hash probe each);
 *  - cold: as many distinct addresses, each looked up once by a fresh
 *    symbolizer: libdw's work (DWARF scopes, line tables, inline chains),
 *    object opening included.
 * And the offline unwinder's stacks per second on a copy of this
 * thread's stack (registers from getcontext, in a sample's order).
 * The address spaces come from dl_iterate_phdr, as a trace's mapping
 * records would describe them.
 */
#include <elf.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include "analyze/maps.h"
#include "analyze/symbol.h"
#include "analyze/unwind.h"

#define PER_OBJECT 2000

struct env {
	struct cw_maps *maps;
	uint32_t pid;
	uint64_t *addrs;
	size_t naddrs, cap;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int note_build_id(const struct dl_phdr_info *info, uint8_t *out)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const void *)p;
			const uint8_t *name = p + sizeof(*nh);
			const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);

			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && nh->n_descsz <= 20) {
				memcpy(out, desc, nh->n_descsz);
				return (int)nh->n_descsz;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

/* One mapping record per executable segment; addresses spread over the
 * text of libc and of this binary. */
static int add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct env *e = arg;
	const char *path = info->dlpi_name;
	char self[4096];
	uint8_t bid[20];
	int blen = note_build_id(info, bid), want;

	(void)size;
	if (!path[0]) {
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (n <= 0)
			return 0;
		self[n] = '\0';
		path = self;
	}
	if (path[0] != '/')
		return 0; /* the vDSO */
	want = path == self || strstr(path, "/libc.so");
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start, pgoff, len;
		size_t plen = strlen(path), recsize = (sizeof(struct cw_mmap) + plen + 7) & ~7ul;
		struct cw_mmap *r;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		start = (info->dlpi_addr + ph->p_vaddr) & ~4095ul;
		pgoff = ph->p_offset & ~4095ul;
		len = info->dlpi_addr + ph->p_vaddr + ph->p_memsz - start;
		r = calloc(1, recsize);
		if (!r)
			return 1;
		r->hdr.type = CW_REC_META_MMAP;
		r->hdr.size = (uint16_t)recsize;
		r->task.pid = r->task.tid = e->pid;
		r->start = start;
		r->len = len;
		r->pgoff = pgoff;
		r->build_id_len = (uint8_t)blen;
		memcpy(r->build_id, bid, (size_t)blen);
		r->path_len = (uint16_t)plen;
		memcpy(r + 1, path, plen);
		cw_maps__mmap(e->maps, r);
		free(r);
		for (int k = 0; want && k < PER_OBJECT; k++) {
			uint64_t a = info->dlpi_addr + ph->p_vaddr + ph->p_memsz * (uint64_t)k / PER_OBJECT;

			if (e->naddrs == e->cap) {
				e->cap = e->cap ? 2 * e->cap : 4096;
				e->addrs = realloc(e->addrs, e->cap * sizeof(*e->addrs));
				if (!e->addrs)
					return 1;
			}
			e->addrs[e->naddrs++] = a;
		}
	}
	return 0;
}

/* @return frames returned by one pass over every address. */
static uint64_t pass(struct env *e, struct cw_sym *s, uint64_t *unresolved)
{
	struct cw_sym_frame f[CW_SYM_MAX_INLINE + 1];
	uint64_t frames = 0;

	for (size_t i = 0; i < e->naddrs; i++) {
		const struct cw_mapping *m = cw_maps__find(e->maps, e->pid, e->addrs[i]);
		int n = cw_sym__user(s, m, e->addrs[i], 0, f, CW_SYM_MAX_INLINE + 1);

		frames += (uint64_t)n;
		if (unresolved && !f[n - 1].function)
			++*unresolved;
	}
	return frames;
}

struct snap {
	uint64_t regs[CW_SAMPLE_NREGS_X86_64];
	uint8_t stack[4096];
};

static struct snap snap;

/* The registers from getcontext (its return point in this function),
 * in the DWARF order a sample holds them. */
__attribute__((noipa)) static void take_snapshot(void)
{
	static const int dwarf_to_greg[CW_SAMPLE_NREGS_X86_64] = {
		REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP, REG_R8,
		REG_R9,	 REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP,
	};
	ucontext_t uc;

	if (getcontext(&uc))
		return;
	for (int i = 0; i < CW_SAMPLE_NREGS_X86_64; i++)
		snap.regs[i] = (uint64_t)uc.uc_mcontext.gregs[dwarf_to_greg[i]];
	/* enough for the walk, never past the stack top (this runs well
	 * below main) */
	memcpy(snap.stack, (const void *)(uintptr_t)snap.regs[7], sizeof(snap.stack));
}

/* A stack of @depth more frames, small ones, above the snapshot's. */
__attribute__((noipa)) static void recurse(int depth)
{
	if (depth > 0)
		recurse(depth - 1);
	else
		take_snapshot();
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	struct env e = { .pid = (uint32_t)getpid() };
	int rounds = argc > 1 ? atoi(argv[1]) : 500;
	struct cw_sym_opts o = { 0 };
	struct cw_sym *s;
	struct cw_sym_stats st;
	uint64_t frames = 0, unresolved = 0, ips[64];
	double t;
	int depth = 0, nunwind = 20000;

	e.maps = cw_maps__new(0);
	if (!e.maps || dl_iterate_phdr(add_object, &e) || !e.naddrs || rounds < 1) {
		fprintf(stderr, "symbench: no objects or addresses\n");
		return 1;
	}

	s = cw_sym__new(&o);
	t = now();
	frames = pass(&e, s, &unresolved);
	t = now() - t;
	cw_sym__stats(s, &st);
	printf("cold:   %zu distinct addresses, %" PRIu64 " frames (%" PRIu64
	       " unresolved) in %.3f s: %.0f frames/s (objects opened %" PRIu64 ")\n",
	       e.naddrs, frames, unresolved, t, (double)frames / t, st.opened);

	frames = 0;
	t = now();
	for (int r = 0; r < rounds; r++)
		frames += pass(&e, s, NULL);
	t = now() - t;
	cw_sym__stats(s, &st);
	printf("cached: %zu addresses x %d rounds, %" PRIu64 " frames in %.3f s: %.0f frames/s"
	       " (cache hits %" PRIu64 ")\n",
	       e.naddrs, rounds, frames, t, (double)frames / t, st.hits);

	recurse(8);
	t = now();
	for (int i = 0; i < nunwind; i++)
		depth = cw_sym__unwind(s, e.maps, e.pid, snap.regs, CW_SAMPLE_NREGS_X86_64,
				       snap.stack, sizeof(snap.stack), ips, 64);
	t = now() - t;
	printf("unwind: %d stacks of %d frames in %.3f s: %.0f stacks/s\n", nunwind, depth, t,
	       (double)nunwind / t);
	cw_sym__free(s);
	cw_maps__free(e.maps);
	free(e.addrs);
	return 0;
}
