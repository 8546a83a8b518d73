/* SPDX-License-Identifier: MIT */
/*
 * Offline dwarf unwinding (--call-graph dwarf), above the symbolizer:
 * it opens objects and reads CFI through what symbol.h lends it, and
 * hangs its state on the cw_sym.
 */
#ifndef CAUSEWAY_UNWIND_H
#define CAUSEWAY_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include "maps.h"
#include "symbol.h"

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

#endif /* CAUSEWAY_UNWIND_H */
