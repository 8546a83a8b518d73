// SPDX-License-Identifier: MIT
/*
 * Go binaries, read from the file; see gobin.h.
 *
 * Where each fact comes from, and why there:
 *  - functions, their sizes, runtime.buildVersion and
 *    runtime.waitReasonStrings: .symtab (the linker keeps it unless
 *    -ldflags=-s; pclntab would name functions in a stripped binary, but
 *    a stripped binary has no DWARF either, and without DWARF there are no
 *    offsets);
 *  - struct field offsets and argument locations: .debug_info through
 *    libdw, never a table of Go versions (docs/model.md §6.2). libdw inflates
 *    SHF_COMPRESSED sections (Go >= 1.12 writes those; older linkers wrote
 *    .zdebug_*, which libdw reads too); their declared sizes are bounded
 *    here first, so that a hostile header cannot make libdw allocate
 *    gigabytes;
 *  - file offsets: the PT_LOAD segment that holds the vaddr in its
 *    file-backed part (what a uprobe's offset means);
 *  - returns: the length decoder at the end of this file.
 *
 * Everything read is bounded (counts, lengths, recursion, the DIEs
 * walked) and every offset checked against the file before it is read.
 * The file is read with pread (libelf's ELF_C_READ), not mapped: a file
 * truncated under us is a short read, not a SIGBUS.
 */
#include <dwarf.h>
#include <endian.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/gobin.h"

/* Bounds on what the file may declare. */
#define MAX_SYMS (8u << 20)
#define MAX_STRTAB (256u << 20)
#define MAX_FN_CODE (1u << 20) /* a function decoded for its returns */
#define MAX_DEBUG_SECTION (1ull << 30) /* inflated size of a DWARF section */
#define MAX_DIES (64u << 20)
#define MAX_REASON_LEN 64
#define MAX_TYPE_DEPTH 12
#define MAX_MEMBER_OFF (1 << 20)

static const char *const fn_names[GOFN_N] = {
	[GOFN_NEWPROC1] = "runtime.newproc1",
	[GOFN_EXECUTE] = "runtime.execute",
	[GOFN_GOPARK] = "runtime.gopark",
	[GOFN_READY] = "runtime.ready",
	[GOFN_GOEXIT0] = "runtime.goexit0",
	[GOFN_NETPOLLREADY] = "runtime.netpollready",
	[GOFN_SERVEHTTP] = "net/http.serverHandler.ServeHTTP",
	[GOFN_RUNQPUT] = "runtime.runqput",
};

const char *gobin_fn_name(enum gobin_fn fn)
{
	return (unsigned)fn < GOFN_N ? fn_names[fn] : NULL;
}

/* The functions whose return instructions are probed (gobin.h). */
static bool wants_returns(int fn)
{
	return fn == GOFN_NEWPROC1 || fn == GOFN_SERVEHTTP;
}

/* Struct field offsets read from DWARF: struct name, member, where. */
struct field {
	const char *type, *member;
	size_t off; /* in struct gobin */
};

static const struct field fields[] = {
	{ "runtime.g", "goid", offsetof(struct gobin, g_goid) },
	{ "runtime.g", "m", offsetof(struct gobin, g_m) },
	{ "runtime.g", "startpc", offsetof(struct gobin, g_startpc) },
	{ "runtime.m", "curg", offsetof(struct gobin, m_curg) },
	{ "runtime.m", "procid", offsetof(struct gobin, m_procid) },
	{ "runtime.funcval", "fn", offsetof(struct gobin, funcval_fn) },
	{ "runtime.pollDesc", "rg", offsetof(struct gobin, pd_rg) },
	{ "runtime.pollDesc", "wg", offsetof(struct gobin, pd_wg) },
	{ "net/http.Request", "Method", offsetof(struct gobin, req_method) },
	{ "net/http.Request", "URL", offsetof(struct gobin, req_url) },
	{ "net/url.URL", "Path", offsetof(struct gobin, url_path) },
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

/*
 * The Go register ABI's integer argument registers on amd64, in
 * assignment order (internal/abi, cmd/compile/abi-internal.md: RAX, RBX,
 * RCX, RDI, RSI, R8, R9, R10, R11), as DWARF register numbers; floats
 * take X0-X14 apart.
 */
static const int8_t abi_int_regs[] = { 0, 3, 2, 5, 4, 8, 9, 10, 11 };
#define ABI_NINT 9
#define ABI_NFLOAT 15

struct ctx {
	int fd;
	Elf *elf;
	Dwarf *dw;
	struct gobin *b;
	char *why;
	size_t whylen;
	size_t whyused;
	/* symbols found in .symtab */
	uint64_t bv_addr, bv_size; /* runtime.buildVersion */
	uint64_t wr_addr, wr_size; /* runtime.waitReasonStrings */
	bool go_runtime;	   /* a runtime.* function */
	bool go_sections;	   /* .gopclntab, .go.buildinfo, .note.go.buildid */
	Elf_Scn *symtab, *buildinfo;
	uint64_t pcln_lo, pcln_hi; /* .gopclntab's vaddrs */
	bool has_debug_info;
	unsigned long dies;
};

static int fail(struct ctx *c, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct ctx *c, int err, const char *fmt, ...)
{
	va_list ap;

	if (c->why && c->whylen) {
		va_start(ap, fmt);
		vsnprintf(c->why, c->whylen, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* A note for a binary that is opened all the same ("; "-separated). */
static void warn(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	size_t used = c->whyused;

	if (!c->why || used + 3 >= c->whylen)
		return;
	if (used) {
		memcpy(c->why + used, "; ", 3);
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(c->why + used, c->whylen - used, fmt, ap);
	va_end(ap);
	c->whyused = strlen(c->why);
}

int gobin_vaddr_off(const struct gobin *b, uint64_t vaddr, uint64_t len, uint64_t *off)
{
	for (uint32_t i = 0; i < b->nsegs; i++) {
		const struct gobin_seg *s = &b->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr <= s->filesz &&
		    len <= s->filesz - (vaddr - s->vaddr)) {
			*off = vaddr - s->vaddr + s->offset;
			return 0;
		}
	}
	return -ERANGE;
}

/* [@vaddr, +@len) of the file into @buf: 0 or -ERANGE/-EIO. */
static int read_vaddr(struct ctx *c, uint64_t vaddr, void *buf, size_t len)
{
	uint64_t off;
	size_t got = 0;

	if (gobin_vaddr_off(c->b, vaddr, len, &off))
		return -ERANGE;
	while (got < len) {
		ssize_t n = pread(c->fd, (char *)buf + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		got += (size_t)n;
	}
	return 0;
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* A Go string (ptr, len) at @vaddr, of at most @max bytes, all printable
 * ASCII (a version, a wait reason: anything else is not what it claims
 * to be). @return a malloc'd string or NULL. */
static char *read_gostring(struct ctx *c, uint64_t vaddr, size_t max)
{
	uint8_t hdr[16];
	uint64_t ptr, len;
	char *s;

	if (read_vaddr(c, vaddr, hdr, sizeof(hdr)))
		return NULL;
	ptr = le64(hdr);
	len = le64(hdr + 8);
	if (len > max)
		return NULL;
	s = calloc(1, len + 1);
	if (!s)
		return NULL;
	if (len && read_vaddr(c, ptr, s, len)) {
		free(s);
		return NULL;
	}
	for (uint64_t i = 0; i < len; i++) {
		if (s[i] < 0x20 || s[i] > 0x7e) {
			free(s);
			return NULL;
		}
	}
	return s;
}

/* The file-backed PT_LOAD ranges, cut to the file's size. */
static int read_segments(struct ctx *c)
{
	size_t n;

	if (elf_getphdrnum(c->elf, &n))
		return fail(c, -ENOEXEC, "no program headers: %s", elf_errmsg(-1));
	for (size_t i = 0; i < n && i < 4096; i++) {
		GElf_Phdr ph;
		struct gobin_seg *s;

		if (!gelf_getphdr(c->elf, (int)i, &ph))
			return fail(c, -ENOEXEC, "program header %zu: %s", i, elf_errmsg(-1));
		if (ph.p_type != PT_LOAD || !ph.p_filesz || ph.p_offset >= c->b->file_size)
			continue;
		if (c->b->nsegs == GOBIN_MAX_SEGS)
			return fail(c, -ENOEXEC, "more than %d PT_LOAD segments", GOBIN_MAX_SEGS);
		if (ph.p_vaddr + ph.p_filesz < ph.p_vaddr)
			return fail(c, -ENOEXEC, "PT_LOAD %zu wraps around", i);
		s = &c->b->segs[c->b->nsegs++];
		s->vaddr = ph.p_vaddr;
		s->offset = ph.p_offset;
		s->filesz = ph.p_filesz;
		if (s->filesz > c->b->file_size - s->offset)
			s->filesz = c->b->file_size - s->offset;
		s->flags = ph.p_flags;
	}
	return 0;
}

/*
 * Compressed sections declare their inflated size: libdw allocates it
 * before it inflates. Bounded here, for SHF_COMPRESSED (Elf64_Chdr) and
 * for the older .zdebug_* ("ZLIB" and a big-endian 64-bit size).
 */
static int check_compressed(struct ctx *c, Elf_Scn *scn, const GElf_Shdr *sh, const char *name)
{
	uint64_t size = 0;

	if (sh->sh_flags & SHF_COMPRESSED) {
		GElf_Chdr ch;

		if (!gelf_getchdr(scn, &ch))
			return fail(c, -ENOEXEC, "%s: bad compression header: %s", name, elf_errmsg(-1));
		size = ch.ch_size;
	} else if (!strncmp(name, ".zdebug", 7)) {
		Elf_Data *d = elf_rawdata(scn, NULL);
		const uint8_t *p;

		if (!d || d->d_size < 12 || !d->d_buf || memcmp(d->d_buf, "ZLIB", 4))
			return fail(c, -ENOEXEC, "%s: not a ZLIB section", name);
		p = d->d_buf;
		for (int i = 4; i < 12; i++)
			size = size << 8 | p[i];
	}
	if (size > MAX_DEBUG_SECTION)
		return fail(c, -ENOEXEC, "%s: inflates to %llu bytes", name, (unsigned long long)size);
	return 0;
}

static int scan_sections(struct ctx *c)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	unsigned n = 0;

	if (elf_getshdrstrndx(c->elf, &shstrndx))
		return fail(c, -ENOEXEC, "no section names: %s", elf_errmsg(-1));
	while ((scn = elf_nextscn(c->elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		int err;

		if (++n > 65536)
			return fail(c, -ENOEXEC, "more than 65536 sections");
		if (!gelf_getshdr(scn, &sh))
			return fail(c, -ENOEXEC, "section %u: %s", n, elf_errmsg(-1));
		name = elf_strptr(c->elf, shstrndx, sh.sh_name);
		if (!name)
			name = "";
		if (sh.sh_type == SHT_SYMTAB && !c->symtab)
			c->symtab = scn;
		if (!strcmp(name, ".go.buildinfo"))
			c->buildinfo = scn;
		if (!strcmp(name, ".gopclntab") && (sh.sh_flags & SHF_ALLOC) &&
		    sh.sh_addr + sh.sh_size >= sh.sh_addr) {
			c->pcln_lo = sh.sh_addr;
			c->pcln_hi = sh.sh_addr + sh.sh_size;
		}
		if (!strcmp(name, ".go.buildinfo") || !strcmp(name, ".gopclntab") ||
		    !strcmp(name, ".note.go.buildid"))
			c->go_sections = true;
		if (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"))
			c->has_debug_info = true;
		if (!strncmp(name, ".debug_", 7) || !strncmp(name, ".zdebug_", 8)) {
			err = check_compressed(c, scn, &sh, name);
			if (err)
				return err;
		}
	}
	return 0;
}

static int cmp_func(const void *a, const void *b)
{
	const struct gobin_func *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int read_symtab(struct ctx *c)
{
	struct gobin *b = c->b;
	GElf_Shdr sh;
	Elf_Scn *strscn;
	Elf_Data *syms, *strs;
	size_t nsyms;

	if (!gelf_getshdr(c->symtab, &sh))
		return fail(c, -ENOEXEC, ".symtab: %s", elf_errmsg(-1));
	strscn = elf_getscn(c->elf, sh.sh_link);
	syms = elf_getdata(c->symtab, NULL);
	strs = strscn ? elf_getdata(strscn, NULL) : NULL;
	if (!syms || !strs || !strs->d_buf || !sh.sh_entsize)
		return fail(c, -ENOEXEC, ".symtab unreadable: %s", elf_errmsg(-1));
	if (strs->d_size > MAX_STRTAB)
		return fail(c, -ENOEXEC, ".strtab of %zu bytes", strs->d_size);
	nsyms = syms->d_size / sh.sh_entsize;
	if (nsyms > MAX_SYMS)
		return fail(c, -ENOEXEC, ".symtab of %zu symbols", nsyms);
	/* A copy, NUL-terminated whatever the file says. */
	b->names = malloc(strs->d_size + 1);
	b->funcs = calloc(nsyms ? nsyms : 1, sizeof(*b->funcs));
	if (!b->names || !b->funcs)
		return fail(c, -ENOMEM, "out of memory for %zu symbols", nsyms);
	memcpy(b->names, strs->d_buf, strs->d_size);
	b->names[strs->d_size] = 0;

	for (size_t i = 0; i < nsyms; i++) {
		GElf_Sym s;
		const char *name;

		if (!gelf_getsym(syms, (int)i, &s))
			break;
		if (s.st_name >= strs->d_size || s.st_shndx == SHN_UNDEF)
			continue;
		name = b->names + s.st_name;
		if (GELF_ST_TYPE(s.st_info) == STT_OBJECT) {
			if (!strcmp(name, "runtime.buildVersion")) {
				c->bv_addr = s.st_value;
				c->bv_size = s.st_size;
			} else if (!strcmp(name, "runtime.waitReasonStrings")) {
				c->wr_addr = s.st_value;
				c->wr_size = s.st_size;
			}
			continue;
		}
		if (GELF_ST_TYPE(s.st_info) != STT_FUNC)
			continue;
		b->funcs[b->nfuncs++] = (struct gobin_func){ s.st_value, s.st_size, (uint32_t)s.st_name };
		if (!strncmp(name, "runtime.", 8))
			c->go_runtime = true;
		for (int f = 0; f < GOFN_N; f++) {
			if (!b->fn[f].found && !strcmp(name, fn_names[f])) {
				b->fn[f].found = 1;
				b->fn[f].addr = s.st_value;
				b->fn[f].size = s.st_size;
			}
		}
	}
	qsort(b->funcs, b->nfuncs, sizeof(*b->funcs), cmp_func);
	return 0;
}

/*
 * The version: runtime.buildVersion, else the inline form of
 * .go.buildinfo (Go >= 1.18: 16-byte header, the flag 2, then at 32 a
 * varint-prefixed version string).
 */
static void read_version(struct ctx *c)
{
	struct gobin *b = c->b;
	char *v = NULL;
	const char *go;

	if (c->bv_addr && c->bv_size >= 16)
		v = read_gostring(c, c->bv_addr, sizeof(b->version) - 1);
	if (!v && c->buildinfo) {
		Elf_Data *d = elf_rawdata(c->buildinfo, NULL);
		const uint8_t *p = d ? d->d_buf : NULL;

		if (p && d->d_size > 33 && !memcmp(p, "\xff Go buildinf:", 14) && (p[15] & 2) &&
		    p[32] < sizeof(b->version) && (size_t)p[32] + 33 <= d->d_size) {
			v = calloc(1, (size_t)p[32] + 1);
			if (v)
				memcpy(v, p + 33, p[32]);
			for (size_t i = 0; v && v[i]; i++)
				if (v[i] < 0x20 || v[i] > 0x7e)
					v[i] = '?';
		}
	}
	if (!v)
		return;
	snprintf(b->version, sizeof(b->version), "%s", v);
	free(v);
	go = strstr(b->version, "go");
	if (!go || sscanf(go, "go%d.%d", &b->major, &b->minor) != 2 || b->major < 1)
		b->major = b->minor = 0;
}

static void read_reasons(struct ctx *c)
{
	struct gobin *b = c->b;
	uint64_t n = c->wr_size / 16;

	if (!c->wr_addr || !n)
		return;
	if (n > GOBIN_MAX_REASONS)
		n = GOBIN_MAX_REASONS;
	b->reasons = calloc(n, sizeof(*b->reasons));
	if (!b->reasons)
		return;
	b->nreasons = (uint32_t)n;
	for (uint64_t i = 0; i < n; i++)
		b->reasons[i] = read_gostring(c, c->wr_addr + 16 * i, MAX_REASON_LEN);
}

/* ---- DWARF ---- */

static int member_offset(Dwarf_Die *member)
{
	Dwarf_Attribute a;
	Dwarf_Word w;
	Dwarf_Op *ops;
	size_t nops;

	if (!dwarf_attr(member, DW_AT_data_member_location, &a))
		return -1;
	if (!dwarf_formudata(&a, &w))
		return w <= MAX_MEMBER_OFF ? (int)w : -1;
	/* DWARF 2's form: an expression, DW_OP_plus_uconst N */
	if (!dwarf_getlocation(&a, &ops, &nops) && nops == 1 && ops[0].atom == DW_OP_plus_uconst)
		return ops[0].number <= MAX_MEMBER_OFF ? (int)ops[0].number : -1;
	return -1;
}

static void struct_fields(struct ctx *c, Dwarf_Die *die, const char *name)
{
	Dwarf_Die m;
	unsigned n = 0;

	if (dwarf_hasattr(die, DW_AT_declaration))
		return;
	if (dwarf_child(die, &m))
		return;
	do {
		const char *mname;

		if (++n > 100000 || ++c->dies > MAX_DIES)
			return;
		if (dwarf_tag(&m) != DW_TAG_member || !(mname = dwarf_diename(&m)))
			continue;
		for (size_t f = 0; f < NFIELDS; f++) {
			int32_t *dst = (int32_t *)((char *)c->b + fields[f].off);

			if (*dst < 0 && !strcmp(fields[f].type, name) && !strcmp(fields[f].member, mname))
				*dst = member_offset(&m);
		}
	} while (dwarf_siblingof(&m, &m) == 0);
}

/*
 * How the register ABI assigns a value of type @t: adds the integer and
 * float registers it takes to *@ni, *@nf; sets *@first (1 int, 2 float)
 * by its first non-empty word. @return 0, 1 when it goes on the stack
 * (an array of more than one element), -1 when the type is not one this
 * knows (the assignment of every later argument is then unknown too).
 */
static int abi_words(Dwarf_Die *t, int depth, int *ni, int *nf, int *first)
{
	Dwarf_Die sub, m;
	Dwarf_Attribute a;
	Dwarf_Word w, enc;
	unsigned n = 0;
	int r;

	if (depth > MAX_TYPE_DEPTH || *ni + *nf > 64)
		return -1;
	switch (dwarf_tag(t)) {
	case DW_TAG_typedef:
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
		if (!dwarf_attr(t, DW_AT_type, &a) || !dwarf_formref_die(&a, &sub))
			return -1;
		return abi_words(&sub, depth + 1, ni, nf, first);
	case DW_TAG_pointer_type:
	case DW_TAG_subroutine_type:
		*first = *first ? *first : 1;
		++*ni;
		return 0;
	case DW_TAG_base_type:
		if (!dwarf_attr(t, DW_AT_byte_size, &a) || dwarf_formudata(&a, &w))
			return -1;
		if (!dwarf_attr(t, DW_AT_encoding, &a) || dwarf_formudata(&a, &enc))
			return -1;
		if (w == 0)
			return 0;
		if (enc == DW_ATE_float && w <= 8) {
			*first = *first ? *first : 2;
			++*nf;
			return 0;
		}
		if (enc == DW_ATE_complex_float && w <= 16) {
			*first = *first ? *first : 2;
			*nf += 2;
			return 0;
		}
		if (w > 8)
			return -1;
		*first = *first ? *first : 1;
		++*ni;
		return 0;
	case DW_TAG_structure_type:
		if (dwarf_child(t, &m))
			return 0; /* struct{} */
		r = 0;
		do {
			if (++n > 4096)
				return -1;
			if (dwarf_tag(&m) != DW_TAG_member)
				continue;
			if (!dwarf_attr(&m, DW_AT_type, &a) || !dwarf_formref_die(&a, &sub))
				return -1;
			r = abi_words(&sub, depth + 1, ni, nf, first);
			if (r)
				return r;
			if (*ni + *nf > 64)
				return -1;
		} while (dwarf_siblingof(&m, &m) == 0);
		return 0;
	case DW_TAG_array_type: {
		Dwarf_Word count = 0;

		if (dwarf_child(t, &m) || dwarf_tag(&m) != DW_TAG_subrange_type)
			return -1;
		if (dwarf_attr(&m, DW_AT_count, &a)) {
			if (dwarf_formudata(&a, &count))
				return -1;
		} else if (dwarf_attr(&m, DW_AT_upper_bound, &a)) {
			if (dwarf_formudata(&a, &count) || count == (Dwarf_Word)-1)
				return -1;
			count++;
		} else {
			return -1;
		}
		if (count == 0)
			return 0;
		if (count > 1)
			return 1;
		if (!dwarf_attr(t, DW_AT_type, &a) || !dwarf_formref_die(&a, &sub))
			return -1;
		return abi_words(&sub, depth + 1, ni, nf, first);
	}
	default:
		return -1;
	}
}

/* The register a location expression names at its start, or -1. Only
 * the general registers (DWARF 0-15): a word in an X register is not a
 * pointer the BPF side reads. */
static int8_t loc_reg(Dwarf_Attribute *a, uint64_t pc)
{
	Dwarf_Op *ops;
	size_t nops;
	Dwarf_Word r;

	if (dwarf_getlocation_addr(a, pc, &ops, &nops, 1) != 1 || nops < 1)
		return -1;
	if (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31)
		r = ops[0].atom - DW_OP_reg0;
	else if (ops[0].atom == DW_OP_regx)
		r = ops[0].number;
	else
		return -1;
	/* one register, or the first piece of a composite (DW_OP_piece) */
	if (nops > 1 && ops[1].atom != DW_OP_piece)
		return -1;
	return r <= 15 ? (int8_t)r : -1;
}

/*
 * The parameters of @fi's concrete DIE @sp: their DWARF names and
 * locations at the entry pc, and the register ABI's assignment of them,
 * computed from their types as the compiler does (the fallback when
 * DWARF has no location at the entry; both are kept for the tests).
 * Results (DW_AT_variable_parameter) are not arguments and are skipped.
 */
static void fn_params(struct ctx *c, struct gobin_fn_info *fi, Dwarf_Die *sp)
{
	Dwarf_Die p, t;
	Dwarf_Attribute a;
	int ni = 0, nf = 0;
	bool lost = false;
	unsigned n = 0;

	if (dwarf_child(sp, &p))
		return;
	do {
		bool result = false;
		const char *name;
		uint32_t i;
		int r, first = 0, pi = ni, pf = nf;

		if (++n > 4096 || ++c->dies > MAX_DIES)
			return;
		if (dwarf_tag(&p) != DW_TAG_formal_parameter)
			continue;
		/* through DW_AT_abstract_origin for an inlined function's
		 * out-of-line copy, whose parameters name only their origin */
		if (dwarf_attr_integrate(&p, DW_AT_variable_parameter, &a))
			dwarf_formflag(&a, &result);
		if (result)
			continue;
		i = fi->nargs++;
		if (i >= GOBIN_MAX_ARGS)
			continue;
		name = dwarf_diename(&p);
		snprintf(fi->arg_name[i], sizeof(fi->arg_name[i]), "%s", name ? name : "");
		if (dwarf_attr(&p, DW_AT_location, &a))
			fi->arg_dwarf[i] = loc_reg(&a, fi->addr);
		if (lost || !dwarf_attr_integrate(&p, DW_AT_type, &a) || !dwarf_formref_die(&a, &t)) {
			lost = true;
			continue;
		}
		r = abi_words(&t, 0, &ni, &nf, &first);
		if (r < 0) {
			lost = true;
		} else if (r > 0 || ni > ABI_NINT || nf > ABI_NFLOAT) {
			/* on the stack: the registers it would have taken stay free */
			ni = pi;
			nf = pf;
		} else if (first == 1) {
			fi->arg_abi[i] = abi_int_regs[pi];
		}
	} while (dwarf_siblingof(&p, &p) == 0);
}

/* Top-level DIEs of every CU: the structs of `fields` and the concrete
 * subprograms of the GOFN functions (matched by their entry pc). */
static int walk_dwarf(struct ctx *c)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	unsigned cus = 0;

	while (dwarf_nextcu(c->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, d;

		if (++cus > 1000000 || next <= off)
			break;
		if (!dwarf_offdie(c->dw, off + hsize, &cu) || dwarf_child(&cu, &d)) {
			off = next;
			continue;
		}
		off = next;
		do {
			int tag = dwarf_tag(&d);
			const char *name;
			Dwarf_Addr lo;

			if (++c->dies > MAX_DIES)
				return fail(c, -ENOEXEC, "DWARF: more than %u DIEs", MAX_DIES);
			if (tag == DW_TAG_structure_type && (name = dwarf_diename(&d)))
				struct_fields(c, &d, name);
			if (tag != DW_TAG_subprogram || dwarf_lowpc(&d, &lo))
				continue;
			for (int f = 0; f < GOFN_N; f++) {
				struct gobin_fn_info *fi = &c->b->fn[f];

				if (fi->found && fi->addr == lo && !fi->nargs)
					fn_params(c, fi, &d);
			}
		} while (dwarf_siblingof(&d, &d) == 0);
	}
	return 0;
}

/* ---- return instructions ---- */

/* Walk @fi from its first byte to its end, one instruction at a time,
 * and keep the returns' file offsets; ret_ok only when the walk lands
 * exactly on the end. */
static void find_returns(struct ctx *c, struct gobin_fn_info *fi, const char *name)
{
	uint8_t *code;
	uint64_t pos = 0;

	if (!fi->size || fi->size > MAX_FN_CODE) {
		warn(c, "%s: size %llu, its returns are not probed", name, (unsigned long long)fi->size);
		return;
	}
	code = malloc(fi->size);
	if (!code || read_vaddr(c, fi->addr, code, fi->size)) {
		free(code);
		warn(c, "%s: code outside the file, its returns are not probed", name);
		return;
	}
	while (pos < fi->size) {
		int ret, n = gobin_insn_len(code + pos, fi->size - pos, &ret);

		if (!n) {
			warn(c, "%s: no instruction decoded at +0x%llx, its returns are not probed", name,
			     (unsigned long long)pos);
			goto out;
		}
		if (ret) {
			if (fi->nret == GOBIN_MAX_RET) {
				warn(c, "%s: more than %d returns, its returns are not probed", name,
				     GOBIN_MAX_RET);
				goto out;
			}
			fi->ret_off[fi->nret++] = fi->off + pos;
		}
		pos += (uint64_t)n;
	}
	fi->ret_ok = 1;
out:
	if (!fi->ret_ok)
		fi->nret = 0;
	free(code);
}

/* ---- where an entry probe goes ---- */

/* The stack check of gobin.h's probe_off, as the Go assembler writes it
 * (cmd/internal/obj/x86 stacksplit) for a frame below StackBig. */
static size_t stack_check_len(const uint8_t *p, size_t len)
{
	static const uint8_t cmp_sp[] = { 0x49, 0x3b, 0x66, 0x10 };  /* CMPQ 16(R14), SP */
	static const uint8_t cmp_r12[] = { 0x4d, 0x3b, 0x66, 0x10 }; /* CMPQ 16(R14), R12 */
	size_t at = 0;

	/* LEAQ -N(SP), R12: disp8 or disp32 */
	if (len >= 5 && p[0] == 0x4c && p[1] == 0x8d && p[2] == 0x64 && p[3] == 0x24)
		at = 5;
	else if (len >= 8 && p[0] == 0x4c && p[1] == 0x8d && p[2] == 0xa4 && p[3] == 0x24)
		at = 8;
	if (len < at + sizeof(cmp_sp) || memcmp(p + at, at ? cmp_r12 : cmp_sp, sizeof(cmp_sp)))
		return 0;
	at += sizeof(cmp_sp);
	/* JBE rel8 | JBE rel32 */
	if (len >= at + 2 && p[at] == 0x76)
		return at;
	if (len >= at + 6 && p[at] == 0x0f && p[at + 1] == 0x86)
		return at;
	return 0;
}

static void find_probe_point(struct ctx *c, struct gobin_fn_info *fi)
{
	uint8_t code[16];
	size_t len = fi->size < sizeof(code) ? (size_t)fi->size : sizeof(code);

	fi->probe_off = fi->off;
	if (len && !read_vaddr(c, fi->addr, code, len))
		fi->probe_off += stack_check_len(code, len);
}

/* ---- where a spawn is read (gobin.h, struct gobin_site) ----
 *
 * A uprobe on newproc1's RET is single-stepped; the CALL runtime.runqput
 * that newproc's closure makes with the new g a few instructions after
 * newproc1 returns is emulated. A spawn read there is exact only if that
 * CALL runs once for each return of newproc1 to its caller and never
 * otherwise, with the new g in the register read and R14 (the current g,
 * whose m.curg is the spawning goroutine) unchanged. From the file alone:
 *  1. every reference to newproc1 is found: each relative branch or
 *     RIP-relative LEA in the executable segments whose target is its
 *     entry, each 8-byte word equal to its address in a loaded segment
 *     but .gopclntab (the runtime's function table, never called
 *     through): a funcval, an imm64, a relocation's addend. A candidate
 *     must be an instruction of a function decoded whole (bytes inside
 *     another instruction are none), and a direct CALL from outside
 *     newproc1 (its own jump back to its entry after morestack makes no
 *     new return). Anything else, a word, or a candidate in code that
 *     could not be decoded, and the returns are probed instead;
 *  2. after each such call the instructions up to the next CALL are
 *     walked: moves, loads, stores to the stack, ALU and NOPs only (no
 *     branch, no write to R14 or to other memory), following the
 *     registers that hold newproc1's result (RAX) through register
 *     moves. The site is that CALL (GOBIN_AT_CALL) when it calls runqput
 *     with the result in its gp argument's register (gobin.h's arg_reg);
 *     else the return address itself (GOBIN_AT_RETURN_SITE, RAX);
 *  3. nothing else reaches the stretch from the return address to the
 *     site: no branch or LEA anywhere targets it (the scan of 1), and the
 *     function holds no indirect JMP (a jump table's targets are not in
 *     the code).
 * Go's compiler reaches code through nothing else: a call or a jump names
 * its target relatively, an address taken is a LEA or a word in data. The
 * call sites are used only when one is a GOBIN_AT_CALL: else they would
 * cost what the returns do.
 */
#define SPAWN_MAX_DECODED 16
#define SPAWN_MAX_WALK 64 /* instructions from a return address to its site */
#define SCAN_CHUNK (1u << 20)

_Static_assert(GOBIN_MAX_SPAWN_CALLS <= GOBIN_MAX_RET, "spawn sites fit gobin.spawn");

/* The index in b->funcs of the function holding @pc, or -1. */
static int64_t func_at(const struct gobin *b, uint64_t pc)
{
	uint32_t lo = 0, hi;
	const struct gobin_func *f;

	if (!b || !b->nfuncs)
		return -1;
	hi = b->nfuncs;
	/* the last function starting at or below pc */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (b->funcs[mid].addr <= pc)
			lo = mid;
		else
			hi = mid;
	}
	f = &b->funcs[lo];
	if (pc < f->addr || pc - f->addr >= (f->size ? f->size : 1))
		return -1;
	return lo;
}

/* A function decoded for the spawn sites. */
struct dfn {
	uint32_t fn; /* index in gobin.funcs */
	bool whole;  /* walked from its first byte exactly to its end */
	bool ind_jmp;
	uint8_t *code;
	uint8_t *starts; /* a bit per byte: an instruction starts there */
};

struct spawn_scan {
	struct dfn d[SPAWN_MAX_DECODED];
	unsigned nd;
};

/* [lo, hi] vaddrs that nothing but the expected flow may reach */
struct span {
	uint64_t lo, hi;
};

struct sref {
	uint64_t at;   /* vaddr of the opcode */
	uint32_t span; /* the span it targets */
	uint8_t op;    /* its first opcode byte */
};

/* What the walk needs of an instruction gobin_insn_len measured. */
struct insn {
	int len;
	int op0;     /* offset of the first opcode byte (0F of a 2-byte one) */
	int at;	     /* offset of the last opcode byte; ModRM follows */
	int map;     /* 0: one-byte, 1: 0F, 2: anything else */
	int legacy;  /* legacy prefixes other than 66 and 2E */
	int pfx;     /* any legacy prefix */
	uint8_t rex; /* 0 when none */
	uint8_t op;
};

static void insn_parse(const uint8_t *p, int len, struct insn *in)
{
	int i = 0;

	memset(in, 0, sizeof(*in));
	in->len = len;
	for (; i < len; i++) {
		uint8_t b = p[i];

		if (b == 0x66 || b == 0x2e) {
			in->pfx++;
		} else if (b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x36 || b == 0x3e ||
			   b == 0x26 || b == 0x64 || b == 0x65) {
			in->pfx++;
			in->legacy++;
		} else {
			break;
		}
	}
	if (i < len && (p[i] & 0xf0) == 0x40)
		in->rex = p[i++];
	in->op0 = in->at = i;
	in->map = 0;
	if (i < len && (p[i] == 0xc4 || p[i] == 0xc5 || p[i] == 0x62)) {
		in->map = 2;
	} else if (i + 1 < len && p[i] == 0x0f) {
		in->at = i + 1;
		in->map = p[i + 1] == 0x38 || p[i + 1] == 0x3a ? 2 : 1;
	}
	in->op = in->at < len ? p[in->at] : 0;
}

static void dfn_free(struct spawn_scan *s)
{
	for (unsigned i = 0; i < s->nd; i++) {
		free(s->d[i].code);
		free(s->d[i].starts);
	}
	s->nd = 0;
}

/* Function @fn decoded (once): NULL when out of room or memory. */
static struct dfn *decoded(struct ctx *c, struct spawn_scan *s, uint32_t fn)
{
	const struct gobin_func *f = &c->b->funcs[fn];
	struct dfn *d;
	uint64_t pos = 0;

	for (unsigned i = 0; i < s->nd; i++)
		if (s->d[i].fn == fn)
			return &s->d[i];
	if (s->nd == SPAWN_MAX_DECODED)
		return NULL;
	d = &s->d[s->nd++];
	memset(d, 0, sizeof(*d));
	d->fn = fn;
	if (!f->size || f->size > MAX_FN_CODE)
		return d; /* not whole */
	d->code = malloc(f->size);
	d->starts = calloc(1, (f->size + 7) / 8);
	if (!d->code || !d->starts || read_vaddr(c, f->addr, d->code, f->size))
		return d;
	while (pos < f->size) {
		int ret, n = gobin_insn_len(d->code + pos, f->size - pos, &ret);
		struct insn in;

		if (!n)
			return d;
		d->starts[pos / 8] |= (uint8_t)(1u << (pos % 8));
		insn_parse(d->code + pos, n, &in);
		/* FF /4, FF /5 */
		if (in.map == 0 && in.op == 0xff && in.at + 1 < n &&
		    ((d->code[pos + in.at + 1] >> 3) & 7) >= 4 && ((d->code[pos + in.at + 1] >> 3) & 7) <= 5)
			d->ind_jmp = true;
		pos += (uint64_t)n;
	}
	d->whole = true;
	return d;
}

enum { REF_NONE, REF_REAL, REF_UNKNOWN };

/*
 * Is the candidate whose opcode is at vaddr @v, @n bytes from its opcode
 * to its end, an instruction? REF_REAL with its function in *@out;
 * REF_NONE when its bytes lie inside another instruction of a function
 * decoded whole; REF_UNKNOWN when that cannot be told.
 */
static int ref_kind(struct ctx *c, struct spawn_scan *s, uint64_t v, int n, struct dfn **out)
{
	int64_t fi = func_at(c->b, v);
	struct dfn *d;
	uint64_t off, st;
	struct insn in;
	int ret, len;

	if (fi < 0 || !(d = decoded(c, s, (uint32_t)fi)) || !d->whole)
		return REF_UNKNOWN;
	off = v - c->b->funcs[fi].addr;
	/* the instruction holding v: the last start at or below it */
	for (st = off + 1; st-- > 0;)
		if (d->starts[st / 8] & (1u << (st % 8)))
			break;
	len = gobin_insn_len(d->code + st, c->b->funcs[fi].size - st, &ret);
	insn_parse(d->code + st, len, &in);
	if (st + (uint64_t)in.op0 != off || st + (uint64_t)len != off + (uint64_t)n)
		return REF_NONE;
	*out = d;
	return REF_REAL;
}

static int32_t le32s(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

static int span_of(const struct span *sp, uint32_t nsp, uint64_t t)
{
	for (uint32_t k = 0; k < nsp; k++)
		if (t >= sp[k].lo && t <= sp[k].hi)
			return (int)k;
	return -1;
}

/*
 * Every reference into @sp (this section's 1 and 3) into @refs: the
 * count, or -1 when one could not be told from data, a word holds an
 * address in a span, more than @max were found, or the file could not
 * be read.
 */
static int scan_refs(struct ctx *c, struct spawn_scan *s, const struct span *sp, uint32_t nsp,
		     struct sref *refs, int max)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	uint8_t *buf = malloc(SCAN_CHUNK + 16);
	int nref = 0;

	if (!buf)
		return -1;
	for (uint32_t k = 0; k < nsp; k++) {
		lo = sp[k].lo < lo ? sp[k].lo : lo;
		hi = sp[k].hi > hi ? sp[k].hi : hi;
	}
	for (uint32_t g = 0; g < c->b->nsegs; g++) {
		const struct gobin_seg *seg = &c->b->segs[g];
		bool x = seg->flags & PF_X;

		for (uint64_t at = 0; at < seg->filesz; at += SCAN_CHUNK) {
			uint64_t avail = seg->filesz - at < SCAN_CHUNK + 16 ? seg->filesz - at : SCAN_CHUNK + 16;
			uint64_t npos = avail < SCAN_CHUNK ? avail : SCAN_CHUNK;

			if (read_vaddr(c, seg->vaddr + at, buf, avail))
				goto unknown;
			for (uint64_t i = 0; i < npos; i++) {
				uint64_t v = seg->vaddr + at + i, rem = avail - i, t, w;
				const uint8_t *p = buf + i;
				struct dfn *d;
				int n, k;

				if (rem >= 8 && (v < c->pcln_lo || v >= c->pcln_hi)) {
					memcpy(&w, p, 8); /* le64(), at the speed of a load */
					w = le64toh(w);
					if (w >= lo && w <= hi && span_of(sp, nsp, w) >= 0)
						goto unknown;
				}
				if (!x)
					continue;
				if ((p[0] == 0xe8 || p[0] == 0xe9) && rem >= 5)
					n = 5, t = v + 5 + (uint64_t)(int64_t)le32s(p + 1);
				else if (p[0] == 0x0f && rem >= 6 && (p[1] & 0xf0) == 0x80)
					n = 6, t = v + 6 + (uint64_t)(int64_t)le32s(p + 2);
				else if (((p[0] & 0xf0) == 0x70 || p[0] == 0xeb || (p[0] >= 0xe0 && p[0] <= 0xe3)) &&
					 rem >= 2)
					n = 2, t = v + 2 + (uint64_t)(int64_t)(int8_t)p[1];
				else if (p[0] == 0x8d && rem >= 6 && (p[1] & 0xc7) == 0x05)
					n = 6, t = v + 6 + (uint64_t)(int64_t)le32s(p + 2);
				else
					continue;
				if (t < lo || t > hi || (k = span_of(sp, nsp, t)) < 0)
					continue;
				switch (ref_kind(c, s, v, n, &d)) {
				case REF_NONE:
					continue;
				case REF_UNKNOWN:
					goto unknown;
				}
				if (nref == max)
					goto unknown;
				refs[nref++] = (struct sref){ v, (uint32_t)k, p[0] };
			}
		}
	}
	free(buf);
	return nref;
unknown:
	free(buf);
	return -1;
}

/* x86's register encoding (ModRM, REX) to DWARF numbering */
static const int8_t enc_dwarf[16] = { 0, 2, 1, 3, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15 };
#define DW_R14 14

/*
 * What instruction @in at @p does to @held (a bit per DWARF register
 * that holds the value followed): 0, or -1 when the walk may not pass it
 * (a branch, a call, a write to R14 or to memory off the stack, anything
 * else it does not know).
 */
static int follow(const uint8_t *p, const struct insn *in, uint32_t *held)
{
	int w = in->rex & 8, r = (in->rex >> 2) & 1, bx = in->rex & 1;
	uint8_t modrm = in->at + 1 < in->len ? p[in->at + 1] : 0;
	int mod = modrm >> 6, reg = enc_dwarf[((modrm >> 3) & 7) | r << 3];
	int rm = enc_dwarf[(modrm & 7) | bx << 3], dst = -1, src = -1;
	bool store = false;

	/* NOPs, Go's padding: 90 (not REX.B 90, xchg r8), 0F 1F /0 */
	if ((in->map == 0 && in->op == 0x90 && !bx) || (in->map == 1 && in->op == 0x1f))
		return in->legacy ? -1 : 0;
	if (in->pfx || in->map == 2)
		return -1;
	if (in->map == 1) {
		if (in->op != 0xb6 && in->op != 0xb7 && in->op != 0xbe && in->op != 0xbf)
			return -1;
		dst = reg; /* movzx, movsx */
	} else if (in->op == 0x89 || in->op == 0x88) {
		if (mod == 3)
			dst = rm, src = in->op == 0x89 && w ? reg : -1;
		else
			store = true;
	} else if (in->op == 0x8b) {
		dst = reg, src = mod == 3 && w ? rm : -1;
	} else if (in->op == 0x8a || in->op == 0x8d || in->op == 0x63) {
		dst = reg;
	} else if (in->op >= 0xb0 && in->op <= 0xbf) {
		dst = enc_dwarf[(in->op & 7) | bx << 3];
	} else if (in->op == 0xc6 || in->op == 0xc7) {
		if (((modrm >> 3) & 7) != 0)
			return -1;
		if (mod == 3)
			dst = rm;
		else
			store = true;
	} else if (in->op < 0x40 && (in->op & 7) <= 3) {
		/* add or adc sbb and sub xor cmp: r/m, r (0, 1) or r, r/m (2, 3) */
		if ((in->op & 0x38) == 0x38)
			; /* cmp: flags only */
		else if (in->op & 2)
			dst = reg;
		else if (mod == 3)
			dst = rm;
		else
			store = true;
	} else if (in->op == 0x84 || in->op == 0x85) {
		; /* test */
	} else if (in->op == 0x80 || in->op == 0x81 || in->op == 0x83) {
		if (((modrm >> 3) & 7) == 7)
			; /* cmp */
		else if (mod == 3)
			dst = rm;
		else
			store = true;
	} else {
		return -1;
	}
	/* a store only to the goroutine's stack: [RSP + ...] through a SIB */
	if (store && !((modrm & 7) == 4 && in->at + 2 < in->len && (p[in->at + 2] & 7) == 4 && !bx))
		return -1;
	if (dst == DW_R14)
		return -1;
	if (dst >= 0) {
		if (src >= 0 && (*held & 1u << src))
			*held |= 1u << dst;
		else
			*held &= ~(1u << dst);
	}
	return 0;
}

/*
 * The site of the call of newproc1 at vaddr @call (in @d, 5 bytes):
 * this section's 2, its span (3) in *@sp. @return 0, or -1 when the
 * function could not be walked.
 */
static int call_site(struct ctx *c, const struct dfn *d, uint64_t call, struct gobin_site *site,
		     struct span *sp)
{
	const struct gobin_func *f = &c->b->funcs[d->fn];
	const struct gobin_fn_info *rq = &c->b->fn[GOFN_RUNQPUT];
	uint64_t ret = call + 5, pos = ret - f->addr;
	uint32_t held = 1u << 0; /* RAX: newproc1's result */

	*site = (struct gobin_site){ .vaddr = ret, .reg = 0, .kind = GOBIN_AT_RETURN_SITE };
	*sp = (struct span){ ret, ret };
	if (d->ind_jmp || pos >= f->size)
		return -1;
	for (int i = 0; i < SPAWN_MAX_WALK && pos < f->size; i++) {
		int isret, n = gobin_insn_len(d->code + pos, f->size - pos, &isret);
		uint64_t v = f->addr + pos;
		struct insn in;

		if (!n)
			return -1;
		insn_parse(d->code + pos, n, &in);
		if (in.map == 0 && in.op == 0xe8 && !in.pfx && !in.rex && n == 5) {
			int8_t gp = rq->arg_reg[1];

			if (rq->found && v + 5 + (uint64_t)(int64_t)le32s(d->code + pos + 1) == rq->addr &&
			    rq->nargs >= 2 && !strcmp(rq->arg_name[1], "gp") && gp >= 0 &&
			    gp < GOBIN_SITE_MAX_REG && (held & 1u << gp)) {
				*site = (struct gobin_site){ .vaddr = v, .reg = gp, .kind = GOBIN_AT_CALL };
				sp->hi = v;
			}
			return 0;
		}
		if (follow(d->code + pos, &in, &held))
			return 0;
		pos += (uint64_t)n;
	}
	return 0;
}

/* gobin.spawn: the call sites when this section's rules hold, else
 * newproc1's returns. */
static void find_spawn_sites(struct ctx *c)
{
	struct gobin *b = c->b;
	const struct gobin_fn_info *np = &b->fn[GOFN_NEWPROC1];
	struct spawn_scan s = { .nd = 0 };
	struct sref refs[GOBIN_MAX_SPAWN_CALLS + 4];
	struct gobin_site sites[GOBIN_MAX_SPAWN_CALLS];
	struct span spans[GOBIN_MAX_SPAWN_CALLS];
	const char *why = NULL;
	uint32_t nsites = 0;
	int n, calls = 0;

	b->nspawn = 0;
	if (!np->found)
		return;
	n = scan_refs(c, &s, &(struct span){ np->addr, np->addr }, 1, refs, GOBIN_MAX_SPAWN_CALLS + 4);
	if (n < 0)
		why = "a reference to it not proven a direct call";
	for (int i = 0; i < n && !why; i++) {
		bool inside = refs[i].at - np->addr < np->size;
		struct dfn *d;
		int64_t fi;

		if (inside && refs[i].op != 0xe8 && refs[i].op != 0x8d)
			continue; /* newproc1 starting again after morestack */
		if (inside || refs[i].op != 0xe8)
			why = "a reference to it other than a call";
		else if (nsites == GOBIN_MAX_SPAWN_CALLS)
			why = "too many calls";
		else if ((fi = func_at(b, refs[i].at)) < 0 || !(d = decoded(c, &s, (uint32_t)fi)) ||
			 call_site(c, d, refs[i].at, &sites[nsites], &spans[nsites]))
			why = "a caller with a jump table";
		else
			calls += sites[nsites++].kind == GOBIN_AT_CALL;
	}
	if (!why && !calls)
		why = "no call followed by runtime.runqput with its result";
	if (!why && scan_refs(c, &s, spans, nsites, refs, 0) != 0)
		why = "code after a call may be reached from elsewhere";
	for (uint32_t i = 0; i < nsites && !why; i++) {
		if (gobin_vaddr_off(b, sites[i].vaddr, 1, &sites[i].off))
			why = "a call outside the file's segments";
	}
	dfn_free(&s);
	if (!why) {
		memcpy(b->spawn, sites, nsites * sizeof(sites[0]));
		b->nspawn = nsites;
		return;
	}
	warn(c, "runtime.newproc1: spawns read at its returns (%s)", why);
	for (uint32_t i = 0; i < np->nret; i++)
		b->spawn[b->nspawn++] = (struct gobin_site){ .off = np->ret_off[i],
							     .vaddr = np->ret_off[i] - np->off + np->addr,
							     .reg = 0,
							     .kind = GOBIN_AT_RET };
}

/* ---- the whole ---- */

static int inspect(struct ctx *c)
{
	struct gobin *b = c->b;
	GElf_Ehdr eh;
	int err;

	if (elf_kind(c->elf) != ELF_K_ELF)
		return fail(c, -ENOENT, "not an ELF file");
	if (!gelf_getehdr(c->elf, &eh))
		return fail(c, -ENOEXEC, "bad ELF header: %s", elf_errmsg(-1));
	if ((err = read_segments(c)) || (err = scan_sections(c)))
		return err;
	if (!c->symtab) {
		if (c->go_sections)
			return fail(c, -ENODATA, "a stripped Go binary (no .symtab: built with -ldflags=-s?)");
		return fail(c, -ENOENT, "not a Go binary (no .symtab, no Go sections)");
	}
	if ((err = read_symtab(c)))
		return err;
	if (!c->go_runtime)
		return fail(c, -ENOENT, "not a Go binary (no runtime symbols)");
	if (eh.e_machine != EM_X86_64 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return fail(c, -ENOTSUP, "a Go binary for another machine than amd64 (e_machine %u)",
			    eh.e_machine);
	read_version(c);
	if (!b->major)
		return fail(c, -ENOTSUP, "a Go binary of unknown version (no runtime.buildVersion): its ABI is unknown");
	/* The register ABI came with go1.17 on amd64; before it, arguments
	 * were on the stack, which the BPF side does not read. */
	if (b->major == 1 && b->minor < 17)
		return fail(c, -ENOTSUP, "%s uses the stack ABI (go < 1.17), not traced", b->version);
	b->regabi = 1;
	if (!c->has_debug_info)
		return fail(c, -ENODATA, "a Go binary without DWARF (built with -ldflags=-w?)");
	c->dw = dwarf_begin_elf(c->elf, DWARF_C_READ, NULL);
	if (!c->dw)
		return fail(c, -ENOEXEC, "DWARF unreadable: %s", dwarf_errmsg(-1));
	for (int f = 0; f < GOFN_N; f++) {
		struct gobin_fn_info *fi = &b->fn[f];

		for (int i = 0; i < GOBIN_MAX_ARGS; i++)
			fi->arg_reg[i] = fi->arg_dwarf[i] = fi->arg_abi[i] = -1;
		if (fi->found && gobin_vaddr_off(b, fi->addr, fi->size ? fi->size : 1, &fi->off)) {
			warn(c, "%s: outside the file's segments", fn_names[f]);
			fi->found = 0;
		}
	}
	if ((err = walk_dwarf(c)))
		return err;
	for (int f = 0; f < GOFN_N; f++) {
		struct gobin_fn_info *fi = &b->fn[f];

		if (!fi->found)
			continue;
		for (int i = 0; i < GOBIN_MAX_ARGS; i++)
			fi->arg_reg[i] = fi->arg_dwarf[i] >= 0 ? fi->arg_dwarf[i] : fi->arg_abi[i];
		find_probe_point(c, fi);
		if (wants_returns(f))
			find_returns(c, fi, fn_names[f]);
	}
	find_spawn_sites(c);
	read_reasons(c);
	return 0;
}

int gobin_open(const char *path, struct gobin **out, char *why, size_t whylen)
{
	struct ctx c = { .fd = -1, .why = why, .whylen = whylen };
	struct stat st, st2;
	int err;

	*out = NULL;
	if (why && whylen)
		why[0] = 0;
	/* Checked before it is opened: opening a FIFO or a device does
	 * something (docs/model.md §7). */
	if (stat(path, &st))
		return fail(&c, -errno, "%s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fail(&c, -EINVAL, "not a regular file");
	c.fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (c.fd < 0)
		return fail(&c, -errno, "%s", strerror(errno));
	if (fstat(c.fd, &st2) || !S_ISREG(st2.st_mode) || st2.st_ino != st.st_ino ||
	    st2.st_dev != st.st_dev) {
		close(c.fd);
		return fail(&c, -EINVAL, "changed while it was opened");
	}
	c.b = calloc(1, sizeof(*c.b));
	if (!c.b) {
		close(c.fd);
		return fail(&c, -ENOMEM, "out of memory");
	}
	for (size_t f = 0; f < NFIELDS; f++)
		*(int32_t *)((char *)c.b + fields[f].off) = -1;
	c.b->file_size = (uint64_t)st2.st_size;
	elf_version(EV_CURRENT);
	c.elf = elf_begin(c.fd, ELF_C_READ, NULL);
	if (!c.elf)
		err = fail(&c, -ENOENT, "not an ELF file: %s", elf_errmsg(-1));
	else
		err = inspect(&c);
	if (c.dw)
		dwarf_end(c.dw);
	if (c.elf)
		elf_end(c.elf);
	close(c.fd);
	if (err) {
		gobin_free(c.b);
		return err;
	}
	*out = c.b;
	return 0;
}

const char *gobin_func_name(const struct gobin *b, uint64_t pc)
{
	int64_t f = func_at(b, pc);

	return f < 0 ? NULL : b->names + b->funcs[f].name;
}

void gobin_free(struct gobin *b)
{
	if (!b)
		return;
	for (uint32_t i = 0; i < b->nreasons; i++)
		free(b->reasons[i]);
	free(b->reasons);
	free(b->funcs);
	free(b->names);
	free(b);
}

/* ---- x86-64 instruction lengths (gobin_insn_len) ----
 *
 *
 * Only lengths: the go class needs the offset of every return instruction
 * of a function, and the only way to know a C3 byte is a RET and not the
 * middle of another instruction is to walk the function from its first
 * byte, one whole instruction at a time (a uprobe's int3 written into the
 * middle of an instruction corrupts the traced program). So this decoder
 * refuses (returns 0) rather than guesses: opcodes undefined in 64-bit
 * mode, group members that are undefined, prefixes VEX forbids, near
 * branches with an operand-size prefix (rel16 on AMD, rel32 on Intel: a
 * length that depends on the CPU), anything longer than 15 bytes or past
 * the end of the buffer. A refusal costs the function its return probes,
 * never the traced program its correctness.
 *
 * The layout of an instruction (Intel SDM vol. 2, ch. 2): legacy
 * prefixes (66 67 F0 F2 F3 2E 36 3E 26 64 65), a REX prefix (40-4F, the
 * last prefix: refused elsewhere), then either a VEX (C4/C5), EVEX (62) or
 * XOP (8F with ModRM.reg != 0) prefix that implies the opcode map, or the
 * opcode in the 1-byte map, 0F, 0F 38 or 0F 3A; then ModRM, SIB,
 * displacement and immediate as the opcode says.
 */
enum {
	F_MODRM = 1,	 /* a ModRM byte (and SIB, displacement) follows */
	F_I8 = 2,	 /* imm8 */
	F_IZ = 4,	 /* imm16 with 66, else imm32 */
	F_I16 = 8,	 /* imm16 */
	F_IV = 16,	 /* imm64 with REX.W, imm16 with 66, else imm32 (B8-BF) */
	F_MOFFS = 32,	 /* an address: 8 bytes, 4 with 67 (A0-A3) */
	F_BAD = 64,	 /* undefined in 64-bit mode */
	F_REL = 128,	 /* a near branch's rel32: refused with 66 */
	F_I32 = 256,	 /* imm32 whatever the prefixes (XOP map A) */
	F_NOMOD = 512,	 /* ModRM whose mod is taken as 3 (mov cr/dr) */
	F_I8_03 = 1024,	 /* imm8 when ModRM.reg is 0 or 1 (F6 test) */
	F_IZ_01 = 2048,	 /* immz when ModRM.reg is 0 or 1 (F7 test) */
};

/* The 1-byte map, prefixes and escapes excepted (handled by the caller). */
static unsigned one_byte(uint8_t op)
{
	if (op < 0x40) {
		switch (op & 7) {
		case 0: case 1: case 2: case 3:
			return F_MODRM;
		case 4:
			return F_I8;
		case 5:
			return F_IZ;
		default: /* push/pop es cs ss ds, daa das aaa aas */
			return F_BAD;
		}
	}
	if (op >= 0x50 && op <= 0x5f)
		return 0;
	if (op >= 0x70 && op <= 0x7f)
		return F_I8;
	if (op >= 0x84 && op <= 0x8e)
		return F_MODRM;
	if ((op >= 0x90 && op <= 0x99) || (op >= 0x9b && op <= 0x9f))
		return 0;
	if (op >= 0xa0 && op <= 0xa3)
		return F_MOFFS;
	if ((op >= 0xa4 && op <= 0xa7) || (op >= 0xaa && op <= 0xaf))
		return 0;
	if (op >= 0xb0 && op <= 0xb7)
		return F_I8;
	if (op >= 0xb8 && op <= 0xbf)
		return F_IV;
	if (op >= 0xd8 && op <= 0xdf) /* x87 */
		return F_MODRM;
	if (op >= 0xe0 && op <= 0xe7)
		return F_I8;
	switch (op) {
	case 0x63: return F_MODRM;
	case 0x68: return F_IZ;
	case 0x69: return F_MODRM | F_IZ;
	case 0x6a: return F_I8;
	case 0x6b: return F_MODRM | F_I8;
	case 0x6c: case 0x6d: case 0x6e: case 0x6f: return 0;
	case 0x80: return F_MODRM | F_I8;
	case 0x81: return F_MODRM | F_IZ;
	case 0x83: return F_MODRM | F_I8;
	case 0x8f: return F_MODRM; /* pop Ev; XOP is seen by the caller */
	case 0xa8: return F_I8;
	case 0xa9: return F_IZ;
	case 0xc0: case 0xc1: return F_MODRM | F_I8;
	case 0xc2: return F_I16;
	case 0xc3: return 0;
	case 0xc6: return F_MODRM | F_I8;
	case 0xc7: return F_MODRM | F_IZ;
	case 0xc8: return F_I16 | F_I8; /* enter */
	case 0xc9: return 0;
	case 0xca: return F_I16;
	case 0xcb: case 0xcc: return 0;
	case 0xcd: return F_I8;
	case 0xcf: return 0;
	case 0xd0: case 0xd1: case 0xd2: case 0xd3: return F_MODRM;
	case 0xd7: return 0;
	case 0xe8: case 0xe9: return F_IZ | F_REL;
	case 0xeb: return F_I8;
	case 0xec: case 0xed: case 0xee: case 0xef: return 0;
	case 0xf1: case 0xf4: case 0xf5: return 0;
	case 0xf6: return F_MODRM | F_I8_03;
	case 0xf7: return F_MODRM | F_IZ_01;
	case 0xf8: case 0xf9: case 0xfa: case 0xfb: case 0xfc: case 0xfd: return 0;
	case 0xfe: case 0xff: return F_MODRM;
	}
	/* 60 61 82 9a c4 c5 (VEX, by the caller) ce d4 d5 d6 ea, and the
	 * prefixes, which never reach here. */
	return F_BAD;
}

/* The 0F map (legacy encoding). @pfx66, @pfxf2: for 0F 78; @pff3: 0F B8
 * is popcnt with F3, else jmpe, which 64-bit mode does not have. */
static unsigned two_byte(uint8_t op, int pfx66, int pfxf2, int pff3)
{
	if (op >= 0x10 && op <= 0x1f)
		return F_MODRM;
	if (op >= 0x20 && op <= 0x23)
		return F_MODRM | F_NOMOD;
	if (op >= 0x28 && op <= 0x2f)
		return F_MODRM;
	if (op == 0x6c || op == 0x6d) /* punpck[lh]qdq: 66 only, no MMX form */
		return pfx66 ? F_MODRM : F_BAD;
	if (op >= 0x40 && op <= 0x6f)
		return F_MODRM;
	if (op >= 0x70 && op <= 0x73)
		return F_MODRM | F_I8;
	if (op >= 0x80 && op <= 0x8f)
		return F_IZ | F_REL;
	if (op >= 0x90 && op <= 0x9f)
		return F_MODRM;
	if (op >= 0xb0 && op <= 0xbf)
		return op == 0xba ? F_MODRM | F_I8 : op == 0xb8 && !pff3 ? F_BAD : F_MODRM;
	if (op >= 0xc8 && op <= 0xcf) /* bswap */
		return 0;
	if (op >= 0xd0)
		return F_MODRM;
	switch (op) {
	case 0x00: case 0x01: case 0x02: case 0x03: return F_MODRM;
	case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0b: return 0;
	case 0x0d: return F_MODRM;
	case 0x0e: return 0;			/* femms */
	case 0x0f: return F_MODRM | F_I8;	/* 3DNow!: the suffix opcode */
	case 0x30: case 0x31: case 0x32: case 0x33: case 0x34: case 0x35: case 0x37: return 0;
	case 0x74: case 0x75: case 0x76: return F_MODRM;
	case 0x77: return 0;			/* emms */
	case 0x78:				/* vmread; 66: extrq, F2: insertq, imm8 imm8 */
		return (pfx66 || pfxf2) ? F_MODRM | F_I16 : F_MODRM;
	case 0x79: case 0x7c: case 0x7d: case 0x7e: case 0x7f: return F_MODRM;
	case 0xa0: case 0xa1: case 0xa2: return 0;
	case 0xa3: return F_MODRM;
	case 0xa4: return F_MODRM | F_I8;
	case 0xa5: return F_MODRM;
	case 0xa8: case 0xa9: case 0xaa: return 0;
	case 0xab: return F_MODRM;
	case 0xac: return F_MODRM | F_I8;
	case 0xad: case 0xae: case 0xaf: return F_MODRM;
	case 0xc0: case 0xc1: return F_MODRM;
	case 0xc2: return F_MODRM | F_I8;
	case 0xc3: return F_MODRM;
	case 0xc4: case 0xc5: case 0xc6: return F_MODRM | F_I8;
	case 0xc7: return F_MODRM;
	}
	/* 04 0a 0c 24-27 36 39 3b-3f 7a 7b a6 a7; 38 and 3a are escapes
	 * the caller took. */
	return F_BAD;
}

/*
 * The 0F map under VEX or EVEX: which implied prefixes (pp: bit 0 none,
 * bit 1 66, bit 2 F3, bit 3 F2) each opcode exists with, from the SDM's
 * VEX and EVEX opcode tables (no system or integer rows of the legacy
 * map; the mask instructions are VEX only; no MMX forms, which have no
 * VEX encoding). Bytes that look like one outside these are data (the
 * marker in Go's crypto/internal/boring/sig functions) or corruption.
 */
static unsigned vex1_pps(uint8_t op, int evex)
{
	if (op == 0x10 || op == 0x11 || op == 0x12 || op == 0x51 || op == 0x58 || op == 0x59 ||
	    op == 0x5a || (op >= 0x5c && op <= 0x5f) || op == 0xc2)
		return 0xf;
	if (op == 0x13 || op == 0x14 || op == 0x15 || op == 0x17 || op == 0x28 || op == 0x29 ||
	    op == 0x2b || op == 0x2e || op == 0x2f || op == 0x50 || (op >= 0x54 && op <= 0x57) ||
	    op == 0xc6)
		return 0x3;
	if (op == 0x16 || op == 0x5b)
		return 0x7;
	if (op == 0x2a || op == 0x2c || op == 0x2d)
		return 0xc;
	if (op == 0x52 || op == 0x53)
		return evex ? 0 : 0x5;
	if ((op >= 0x60 && op <= 0x6e) || (op >= 0x71 && op <= 0x76) || op == 0xc4 || op == 0xc5 ||
	    (op >= 0xd1 && op <= 0xfe && op != 0xe6 && op != 0xf0))
		return 0x2;
	if (op == 0x6f || op == 0x7f)
		return evex ? 0xe : 0x6;
	if (op == 0x70 || op == 0xe6)
		return 0xe;
	if (op == 0x7e)
		return 0x6;
	if (evex)
		return op == 0x78 || op == 0x79 ? 0xf : op == 0x7a || op == 0x7b ? 0xe : 0;
	if (op == 0x41 || op == 0x42 || (op >= 0x44 && op <= 0x47) || op == 0x4a || op == 0x4b ||
	    op == 0x90 || op == 0x91 || op == 0x98 || op == 0x99)
		return 0x3;
	if (op == 0x92 || op == 0x93)
		return 0xb;
	if (op == 0x77 || op == 0xae)
		return 0x1;
	if (op == 0x7c || op == 0x7d || op == 0xd0)
		return 0xa;
	if (op == 0xf0)
		return 0x8;
	return 0;
}

/* The 0F map under VEX or EVEX with implied prefix @pp: all ModRM but
 * vzeroupper/vzeroall (77), the legacy map's imm8 opcodes. */
static unsigned vex_map1(uint8_t op, int evex, int pp)
{
	if (!(vex1_pps(op, evex) & (1u << pp)))
		return F_BAD;
	if (op == 0x77)
		return 0;
	if ((op >= 0x70 && op <= 0x73) || op == 0xc2 || (op >= 0xc4 && op <= 0xc6))
		return F_MODRM | F_I8;
	return F_MODRM;
}

/* ModRM, SIB and displacement at @p (@left bytes): their length, or -1. */
static int modrm_len(const uint8_t *p, size_t left, int nomod)
{
	uint8_t modrm, mod, rm;
	int n = 1;

	if (left < 1)
		return -1;
	modrm = p[0];
	mod = modrm >> 6;
	rm = modrm & 7;
	if (nomod || mod == 3)
		return 1;
	if (rm == 4) { /* SIB */
		if (left < 2)
			return -1;
		n = 2;
		if (mod == 0 && (p[1] & 7) == 5)
			return n + 4;
	} else if (mod == 0 && rm == 5) { /* RIP-relative */
		return n + 4;
	}
	if (mod == 1)
		return n + 1;
	if (mod == 2)
		return n + 4;
	return n;
}

int gobin_insn_len(const uint8_t *p, size_t len, int *is_ret)
{
	size_t i = 0, max = len < 15 ? len : 15;
	int p66 = 0, p67 = 0, pf2 = 0, pf3 = 0, plock = 0, rex = 0, rexw = 0, map0 = 0;
	unsigned f;
	uint8_t op, reg;
	int m;

	*is_ret = 0;
	for (;; i++) {
		if (i >= max)
			return 0;
		/* A REX prefix must be the last one: the CPU ignores one
		 * that another prefix follows, objdump shows it as an
		 * instruction of its own; no compiler writes that, so it is
		 * refused. */
		if (rex && ((p[i] & 0xf0) == 0x40 || p[i] == 0x66 || p[i] == 0x67 || p[i] == 0xf0 ||
			    p[i] == 0xf2 || p[i] == 0xf3 || p[i] == 0x2e || p[i] == 0x36 ||
			    p[i] == 0x3e || p[i] == 0x26 || p[i] == 0x64 || p[i] == 0x65))
			return 0;
		switch (p[i]) {
		case 0x66: p66 = 1; continue;
		case 0x67: p67 = 1; continue;
		case 0xf0: plock = 1; continue;
		case 0xf2: pf2 = 1; continue;
		case 0xf3: pf3 = 1; continue;
		case 0x2e: case 0x36: case 0x3e: case 0x26: case 0x64: case 0x65:
			continue;
		}
		if ((p[i] & 0xf0) == 0x40) {
			rex = 1;
			rexw = (p[i] >> 3) & 1;
			continue;
		}
		break;
	}
	op = p[i++];
	/* fwait before an x87 instruction: one instruction, as objdump
	 * shows it (the CPU runs them apart; a boundary left out is safe,
	 * only an invented one is not) */
	if (op == 0x9b && i == 1 && i < max && p[i] >= 0xd8 && p[i] <= 0xdf) {
		int n = gobin_insn_len(p + 1, len - 1, is_ret);

		return n && n < 15 ? n + 1 : 0;
	}

	if (op == 0xc4 || op == 0xc5 || op == 0x62 ||
	    (op == 0x8f && i < max && (p[i] & 0x38) != 0)) {
		/* VEX, EVEX, XOP: what they replace may not be there too */
		int map, pp, evex = op == 0x62;
		int plen = op == 0xc5 ? 1 : op == 0x62 ? 3 : 2;

		if (p66 || pf2 || pf3 || plock || rex)
			return 0;
		if (i + (size_t)plen >= max)
			return 0;
		/* pp: the byte that holds W vvvv L pp, P1 of EVEX */
		pp = p[i + (op == 0xc5 ? 0 : 1)] & 3;
		if (op == 0xc5) {
			map = 1;
		} else if (op == 0xc4) {
			map = p[i] & 0x1f;
			if (map < 1 || map > 3)
				return 0;
		} else if (evex) {
			/* P0 bit 3 and P1 bit 2 are fixed (0 and 1) outside APX */
			if ((p[i] & 0x08) || !(p[i + 1] & 0x04))
				return 0;
			/* maps 1-3: the FP16 maps (5, 6) are left out, as
			 * no Go code uses them */
			map = p[i] & 7;
			if (map < 1 || map > 3)
				return 0;
		} else {
			map = p[i] & 0x1f;
			if (map < 8 || map > 10)
				return 0;
		}
		i += (size_t)plen;
		op = p[i++];
		/* 0F38 and 0F3A exist with 66 only, but for VEX's BMI
		 * rows (0F38 F2-F7, 0F3A F0 rorx) and EVEX 0F38's F3/F2 rows
		 * (down-conversions and the like) */
		if ((map == 2 && pp != 1 && !(op >= 0xf2 && op <= 0xf7) && !(evex && pp)) ||
		    (map == 3 && pp != 1 && !(!evex && op == 0xf0 && pp == 3)))
			return 0;
		switch (map) {
		case 1: f = vex_map1(op, evex, pp); break;
		case 3: f = F_MODRM | F_I8; break;
		case 8: f = F_MODRM | F_I8; break;
		case 10: f = F_MODRM | F_I32; break;
		default: f = F_MODRM; break; /* 0F38, XOP 9 */
		}
	} else if (op == 0x0f) {
		if (i >= max)
			return 0;
		op = p[i++];
		if (op == 0x38) {
			if (i >= max)
				return 0;
			i++;
			f = F_MODRM;
		} else if (op == 0x3a) {
			if (i >= max)
				return 0;
			i++;
			f = F_MODRM | F_I8;
		} else {
			f = two_byte(op, p66, pf2, pf3);
		}
	} else {
		map0 = 1;
		f = one_byte(op);
		if (op == 0xc3 || op == 0xc2)
			*is_ret = 1;
	}
	if (f & F_BAD)
		return 0;
	if ((f & F_REL) && p66)
		return 0;

	reg = 0;
	if (f & F_MODRM) {
		if (i >= max)
			return 0;
		reg = (p[i] >> 3) & 7;
		m = modrm_len(p + i, max - i, !!(f & F_NOMOD));
		if (m < 0)
			return 0;
		/* Undefined members of the 1-byte map's groups: refused, as
		 * a corrupt byte is likelier there than a new instruction. */
		if (map0) {
			uint8_t mod = p[i] >> 6, rm = p[i] & 7;

			if (op == 0xfe && reg >= 2)
				f |= F_BAD;
			/* ff /7 does not exist, far call and jmp (/3 /5) take
			 * memory only */
			if (op == 0xff && (reg == 7 || ((reg == 3 || reg == 5) && mod == 3)))
				f |= F_BAD;
			if (op == 0x8f && reg != 0)
				f |= F_BAD;
			if (op == 0xc6 && reg != 0 && !(reg == 7 && mod == 3 && rm == 0))
				f |= F_BAD;
			if (op == 0xc7 && reg != 0 && !(reg == 7 && mod == 3 && rm == 0))
				f |= F_BAD;
		}
		i += (size_t)m;
	}
	if (f & F_BAD)
		return 0;
	if ((f & F_I8) || ((f & F_I8_03) && reg <= 1))
		i += 1;
	if ((f & F_IZ) || ((f & F_IZ_01) && reg <= 1))
		i += p66 && !rexw ? 2 : 4;
	if (f & F_I16)
		i += 2;
	if (f & F_I32)
		i += 4;
	if (f & F_IV)
		i += rexw ? 8 : p66 ? 2 : 4;
	if (f & F_MOFFS)
		i += p67 ? 4 : 8;
	if (i > max)
		return 0;
	return (int)i;
}
