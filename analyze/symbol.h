/* SPDX-License-Identifier: MIT */
/*
 * The symbolizer: addresses to function, file and line with libdw/libelf,
 * by build-id. An object is opened by its recorded path only when that is
 * a regular ELF file whose build-id matches the trace's, checked before it
 * is opened (docs/model.md §7: never a symlink, FIFO, device, directory, socket
 * or a kernel pseudo-file such as /proc/PID/mem); otherwise, and for debug
 * info, /usr/lib/debug/.build-id/xx/yyyy.debug (same checks). Each path
 * refused is reported once through @notice.
 * Never the network (debuginfod is not used). One libdw session per
 * build-id is kept open (bounded), and each resolved address is cached,
 * so a frame seen again costs a hash lookup.
 *
 * An address that cannot be symbolized still gives one frame: its
 * module (when known) and no function; it is never dropped.
 */
#ifndef CAUSEWAY_SYMBOL_H
#define CAUSEWAY_SYMBOL_H

#include <stddef.h>
#include <stdint.h>
#include "maps.h"

struct cw_sym;
struct cw_ksyms;

struct cw_sym_opts {
	const char *debug_dir;	   /* NULL: "/usr/lib/debug" */
	const struct cw_ksyms *ksyms; /* kernel frames; NULL: addresses only */
	size_t max_sessions;	   /* open objects kept; 0: default */
	/* A path refused (once each, the first CW_SYM_MAX_NOTICES of them,
	 * then one message that says the rest are only counted); NULL:
	 * counted only. */
	void (*notice)(void *ctx, const char *msg);
	void *notice_ctx;
};

#define CW_SYM_MAX_NOTICES 256

/* One frame of a resolved address; strings live as long as the cw_sym,
 * but for a user frame's module, which is its mapping's path itself (it
 * lives as long as the mapping's cw_maps). */
struct cw_sym_frame {
	uint64_t address;     /* user: the address in the object (ELF vaddr,
			       * load bias removed); kernel or unknown module:
			       * the address as sampled */
	const char *module;   /* path of the mapping (each its own, even
			       * where mappings share a build-id),
			       * "[kernel]", "[name]" for a kernel module;
			       * NULL: no mapping */
	const char *build_id; /* hex, or NULL: the mapping recorded none
			       * (the ELF file at its path was then used
			       * unchecked) */
	const char *function; /* NULL: not symbolized */
	const char *file;     /* NULL: unknown */
	int line;	      /* 0: unknown */
	int inlined;	      /* 1: an inlined call inside the next frame */
};

#define CW_SYM_MAX_INLINE 8

/* One thread at a time per cw_sym. */
struct cw_sym *cw_sym__new(const struct cw_sym_opts *o);
void cw_sym__free(struct cw_sym *s);

/*
 * Frames for user address @addr of mapping @m (NULL: no mapping known),
 * innermost inlined call first and the containing function last, at most
 * @max (>= 1). @is_return: @addr is a return address, so the call is
 * looked up at @addr - 1 (the frame's address stays @addr). @return the
 * number of frames, at least 1.
 */
int cw_sym__user(struct cw_sym *s, const struct cw_mapping *m, uint64_t addr, int is_return,
		 struct cw_sym_frame *out, int max);

/* One frame for kernel address @addr, from the kallsyms snapshot. */
void cw_sym__kernel(struct cw_sym *s, uint64_t addr, struct cw_sym_frame *out);

/* Counters: objects opened (again after a session was closed by the
 * bound), open attempts refused (a symlink, FIFO, device, directory,
 * socket, pseudo-file, a file replaced while it was opened, not an ELF
 * file, a build-id mismatch), addresses looked up (user and kernel),
 * cache hits, lookups whose outermost frame has no function. */
struct cw_sym_stats {
	uint64_t opened, refused, lookups, hits, unresolved;
};
void cw_sym__stats(const struct cw_sym *s, struct cw_sym_stats *st);

/*
 * Unwind a user stack offline (--call-graph dwarf): from the registers
 * (x86_64 DWARF numbering, CW_SAMPLE_NREGS_X86_64 of them) and @stack,
 * a copy of @stack_len bytes of user memory from regs[7] (rsp) up,
 * through the CFI of the objects mapped in process @pid of @maps.
 * Memory outside the copy is not readable: the unwind stops there.
 * @return the number of addresses written to @ips, leaf (rip) first; the
 * ones after the first are return addresses.
 */
int cw_sym__unwind(struct cw_sym *s, struct cw_maps *maps, uint32_t pid, const uint64_t *regs,
		   int nregs, const uint8_t *stack, size_t stack_len, uint64_t *ips, int max);

#endif /* CAUSEWAY_SYMBOL_H */
