/* SPDX-License-Identifier: MIT */
/*
 * Inside the symbolizer: what symbol.c (objects, symbols) and unwind.c
 * (cw_sym__unwind) share. Not for callers of symbol.h.
 */
#ifndef CAUSEWAY_UNWIND_H
#define CAUSEWAY_UNWIND_H

#include <stdint.h>
#include <elfutils/libdwfl.h>
#include "symbol.h"

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

/* The unwinder's state, hung on the cw_sym and freed with it. */
struct cw_unwind;
struct cw_unwind **cw_sym__unwind_state(struct cw_sym *s);
void cw_unwind__free(struct cw_unwind *u);

/* The load bias of the object @elf mapped at @start from file offset
 * @pgoff: runtime address - ELF vaddr. @return 0, or -1 when no PT_LOAD
 * holds @pgoff. */
int cw_sym__load_bias(Elf *elf, uint64_t start, uint64_t pgoff, uint64_t *bias);

#endif /* CAUSEWAY_UNWIND_H */
