/* SPDX-License-Identifier: MIT */
/*
 * What the go class (docs/model.md §6.2) needs to know of a Go binary
 * before it attaches uprobes to it, read from the file alone (no BPF, no
 * process): where the runtime functions are (.symtab), where their arguments are at
 * entry (DWARF location lists, or the register ABI), each return
 * instruction of the functions whose returns are probed (an x86-64 length
 * decoder: uretprobes corrupt Go stacks, so a return is a uprobe on each
 * RET), where a spawn is read (the call of runtime.runqput that follows
 * newproc1's return, where one does, exactly; else newproc1's returns),
 * the struct field offsets the BPF side reads (DWARF), the wait reasons'
 * names (runtime.waitReasonStrings) and the Go version.
 *
 * Every byte of the file is untrusted: a malformed binary is refused or
 * inspected in part, never a crash, and a return offset is only given when
 * the decoder walked the whole function from its first byte to its last
 * (a uprobe placed mid-instruction would corrupt the traced program).
 */
#ifndef CAUSEWAY_CAPTURE_GOBIN_H
#define CAUSEWAY_CAPTURE_GOBIN_H

#include <stddef.h>
#include <stdint.h>

enum gobin_fn {
	GOFN_NEWPROC1,
	GOFN_EXECUTE,
	GOFN_GOPARK,
	GOFN_READY,
	GOFN_GOEXIT0,
	GOFN_NETPOLLREADY,
	GOFN_SERVEHTTP,
	GOFN_RUNQPUT, /* not probed: the spawn sites' callee (gobin.spawn) */
	GOFN_N
};

/* The symbol name of @fn ("runtime.newproc1", ...). */
const char *gobin_fn_name(enum gobin_fn fn);

#define GOBIN_MAX_RET 32
#define GOBIN_MAX_ARGS 4
#define GOBIN_MAX_REASONS 64
#define GOBIN_MAX_SEGS 16

struct gobin_fn_info {
	int found;		/* the symbol is in .symtab */
	uint64_t addr, size;	/* symbol vaddr and size */
	uint64_t off;		/* file offset of the entry, as a uprobe wants it */
	/*
	 * The file offset an entry probe goes at: the conditional jump of
	 * the stack check the Go assembler opens the function with (CMPQ
	 * 16(R14), SP, or LEAQ -N(SP), R12 and CMPQ 16(R14), R12; then JBE
	 * to morestack), when the function opens with exactly that; else
	 * off. x86-64's uprobes emulate a conditional jump but run a compare
	 * out of line under single-step, a second trap, which costs some
	 * twenty times the first in a guest that exits to its hypervisor
	 * on each (bench/README.md, "What a uprobe costs"). Every call runs
	 * the check straight from the entry and nothing else jumps into it
	 * (morestack returns to the entry), so the jump is hit once for each
	 * hit of the entry, and it changes no register: the arguments are
	 * where they were at the entry.
	 */
	uint64_t probe_off;
	/*
	 * Return instructions (RET, RET imm16), computed for NEWPROC1 and
	 * SERVEHTTP only. ret_ok: the decoder walked the whole function and
	 * landed exactly on its end, and found at most GOBIN_MAX_RET returns;
	 * when 0, nret is 0 and no return may be probed (for newproc1: no
	 * spawns; for ServeHTTP: no request ends).
	 */
	int ret_ok;
	uint32_t nret;
	uint64_t ret_off[GOBIN_MAX_RET]; /* file offsets */
	/*
	 * arg_reg[i]: the register that holds the first word of the
	 * function's i-th Go parameter (the receiver first, results not
	 * counted) at the entry, as a DWARF x86-64 register number (0 rax,
	 * 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15),
	 * -1 when unknown or on the stack. Taken from the parameter's DWARF
	 * location at the entry pc when that names a register, else from
	 * the register ABI's assignment (arg_abi). arg_dwarf and arg_abi are
	 * the two answers apart (-1: none), for the tests to cross-check.
	 * Which parameters the go class reads: newproc1 0 fn, 1 callergp;
	 * execute 0 gp; gopark 2 reason; ready 0 gp; goexit0 0 gp;
	 * netpollready 1 pd, 2 mode; ServeHTTP 2 req; runqput 1 gp (at
	 * a spawn site).
	 */
	int8_t arg_reg[GOBIN_MAX_ARGS];
	int8_t arg_dwarf[GOBIN_MAX_ARGS], arg_abi[GOBIN_MAX_ARGS];
	char arg_name[GOBIN_MAX_ARGS][16]; /* the DWARF names, "" if none */
	uint32_t nargs;			    /* Go parameters seen (may exceed MAX_ARGS) */
};

/*
 * Where the go class reads a goroutine's spawn (docs/model.md §6.2): an
 * instruction hit exactly once for each return of runtime.newproc1, where
 * register reg holds the new g and R14's m.curg is the goroutine of the
 * go statement, as at newproc1's return.
 *   GOBIN_AT_CALL: the CALL runtime.runqput that newproc's closure makes
 *     right after newproc1 returns (`newg := newproc1(...); ...;
 *     runqput(pp, newg, true)`), reg its gp argument. A relative CALL,
 *     which x86-64's uprobes emulate: one trap where a return takes two
 *     (bench/README.md, "What a uprobe costs").
 *   GOBIN_AT_RETURN_SITE: the instruction a call of newproc1 returns to,
 *     reg RAX (the result): for a caller without that runqput call (the
 *     debugger's runtime.debugCallWrap), single-stepped as a return is.
 *   GOBIN_AT_RET: a return instruction of newproc1 itself, reg RAX.
 * The first two are used only together and only when every reference to
 * newproc1 in the binary is a direct call that one of them covers, and
 * at least one is a GOBIN_AT_CALL (gobin.c, "where a spawn is read");
 * else the sites are newproc1's returns, as ret_off (none when !ret_ok).
 */
enum gobin_site_kind {
	GOBIN_AT_RET,
	GOBIN_AT_RETURN_SITE,
	GOBIN_AT_CALL,
};

#define GOBIN_MAX_SPAWN_CALLS 8 /* direct calls of newproc1, else its returns */

/* The registers bpf/go.bpf.c reads (DWARF 0-11: not R12-R15, which no
 * argument of the register ABI is in) */
#define GOBIN_SITE_MAX_REG 12

struct gobin_site {
	uint64_t off, vaddr; /* the probed instruction */
	int8_t reg;	     /* DWARF x86-64 register number, as arg_reg */
	uint8_t kind;	     /* enum gobin_site_kind */
};

/* A function of .symtab, for gobin_func_name. */
struct gobin_func {
	uint64_t addr, size;
	uint32_t name; /* offset in gobin.names */
};

/* A file-backed PT_LOAD range. */
struct gobin_seg {
	uint64_t vaddr, filesz, offset;
	uint32_t flags; /* PF_X, PF_W, PF_R */
};

struct gobin {
	char version[32]; /* "go1.19.8", from runtime.buildVersion or .go.buildinfo */
	int major, minor; /* 1, 19; 0 when the version could not be parsed */
	int regabi;	  /* register ABI: go >= 1.17 on amd64 (always 1 when opened) */
	struct gobin_fn_info fn[GOFN_N];
	/* Struct field offsets from DWARF, -1 when absent. */
	int32_t g_goid, g_m, g_startpc, m_curg, m_procid, funcval_fn, pd_rg, pd_wg;
	int32_t req_method, req_url, url_path;
	/* Where spawns are read (struct gobin_site); nspawn 0: nowhere. */
	struct gobin_site spawn[GOBIN_MAX_RET];
	uint32_t nspawn;
	/* runtime.waitReasonStrings, index = waitReason value; an entry
	 * that could not be read is NULL, the empty reason "". */
	char **reasons;
	uint32_t nreasons;
	/* Functions of .symtab sorted by address, and their names. */
	struct gobin_func *funcs;
	uint32_t nfuncs;
	char *names;
	struct gobin_seg segs[GOBIN_MAX_SEGS];
	uint32_t nsegs;
	uint64_t file_size;
};

/*
 * Inspect the Go binary at @path (a regular file; checked before it is
 * opened). @return
 *   0         a Go binary, inspected: some functions may be !found or
 *             !ret_ok, and @why then says which (else it is "");
 *   -ENOENT   not a Go binary (no Go runtime symbols, not ELF);
 *   -ENODATA  a Go binary without what tracing needs: stripped (no
 *             .symtab) or no DWARF;
 *   -ENOTSUP  a Go binary this cannot trace: not amd64, or the stack ABI
 *             (go < 1.17);
 *   -ENOEXEC  a malformed ELF or DWARF;
 *   other negative errno: the file could not be read.
 * On every error @why says why in one line, *@out is NULL.
 */
int gobin_open(const char *path, struct gobin **out, char *why, size_t whylen);

/* The name of the function containing @pc (a vaddr), or NULL. */
const char *gobin_func_name(const struct gobin *b, uint64_t pc);

/* The file offset of [@vaddr, @vaddr + @len) if a file-backed PT_LOAD
 * range holds all of it: 0, else -ERANGE. */
int gobin_vaddr_off(const struct gobin *b, uint64_t vaddr, uint64_t len, uint64_t *off);

void gobin_free(struct gobin *b);

/*
 * The length of the x86-64 (64-bit mode) instruction at @p, of which
 * @len bytes are readable: 1..15, or 0 when the bytes are not an
 * instruction the decoder knows (undefined in 64-bit mode) or it would
 * run past @len. *@is_ret is set for RET and RET imm16.
 */
int gobin_insn_len(const uint8_t *p, size_t len, int *is_ret);

#endif
