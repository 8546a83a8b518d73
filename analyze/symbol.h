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
#include <elfutils/libdwfl.h>
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

/* --- inside the symbolizer ---------------------------------------------
 * What symbol.c lends the unwinder (unwind.c), which sits above it: the
 * symbolizer never calls the unwinder, so the two are no circle. Not for
 * other callers. */

/*
 * Open the object a mapping names, with the symbolizer's checks: @path
 * when it is a regular ELF file (no symlink, no FIFO or device) whose
 * build-id is @bid, else the debug directory's .build-id file for @bid.
 * A file that exists but fails a check is counted as refused (and
 * reported, once per path); one that is not a regular file of a real
 * filesystem is refused before it is opened.
 * @return an fd (the caller owns it) or -1; *@elf is an ELF handle on it
 * (the caller ends it) when @elf is not NULL.
 */
int cw_sym__open_object(struct cw_sym *s, const char *path, const uint8_t *bid, int bid_len,
			Elf **elf);

/* Dwfl callbacks that never reach the network: debug info only from the
 * debug directory by build-id. A module's userdata must be its cw_sym. */
extern const Dwfl_Callbacks cw_sym__dwfl_callbacks;
void cw_sym__adopt_module(struct cw_sym *s, Dwfl_Module *mod);

/* The unwinder's state, hung on the cw_sym and freed with it by
 * @free_fn: symbol.c knows the unwinder only through it, so the
 * symbolizer is below the unwinder and never calls into it. */
struct cw_unwind;
struct cw_unwind **cw_sym__unwind_state(struct cw_sym *s, void (*free_fn)(struct cw_unwind *u));

/* The load bias of the object @elf mapped at @start from file offset
 * @pgoff: runtime address - ELF vaddr. @return 0, or -1 when no PT_LOAD
 * holds @pgoff. */
int cw_sym__load_bias(Elf *elf, uint64_t start, uint64_t pgoff, uint64_t *bias);

#endif /* CAUSEWAY_SYMBOL_H */
