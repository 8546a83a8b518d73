// SPDX-License-Identifier: MIT
/*
 * The address spaces and the symbolizer, on this very process: its own
 * functions (by name, file and line, inlined ones too), libc's, stacks
 * unwound from a copy of this thread's registers and stack (through libc,
 * which has no frame pointers), the refusals (a wrong build-id, a FIFO, a
 * device, a directory, a missing file), the paths refused before they are
 * opened (inotify sees every open; a FIFO's blocked writer stays blocked),
 * each frame labelled with its own mapping's path, the kernel's names,
 * and the address spaces' rules and bound against synthetic mapping
 * records.
 *
 * The functions below are noipa: neither inlined nor cloned, so their
 * names and frames are the ones written here, as -O2 compiles them (no
 * frame pointers on Debian's gcc: the unwinder must use the CFI).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tests/check.h"
#include "analyze/ksyms.h"
#include "analyze/maps.h"
#include "analyze/symbol.h"
#include "analyze/unwind.h"

#define NOIPA __attribute__((noipa))
#define STACK_COPY 16384

static struct cw_maps *self_maps;
static uint64_t stack_end; /* top of this thread's [stack] mapping */

/* --- this process's mappings, as the capture would record them --------- */

/* The build-id, read here with libelf alone, not with the code under test. */
static int read_build_id(const char *path, uint8_t *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), len = 0;
	Elf_Scn *scn = NULL;
	Elf *elf;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && !len && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *d;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + noff, "GNU", 4) && nh.n_descsz <= 20) {
				memcpy(out, (char *)d->d_buf + doff, nh.n_descsz);
				len = (int)nh.n_descsz;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return len;
}

/* A CW_REC_META_MMAP record, laid out as in a trace, exactly hdr.size
 * bytes long (so the sanitizers catch a read past it). */
static struct cw_mmap *mk_rec(uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
			      const char *path, const uint8_t *bid, int bid_len)
{
	size_t plen = strlen(path), size = (sizeof(struct cw_mmap) + plen + 7) & ~(size_t)7;
	struct cw_mmap *r = calloc(1, size);

	r->hdr.type = CW_REC_META_MMAP;
	r->hdr.size = (uint16_t)size;
	r->task.pid = r->task.tid = pid;
	r->start = start;
	r->len = len;
	r->pgoff = pgoff;
	r->prot = 5;
	r->build_id_len = (uint8_t)bid_len;
	if (bid_len)
		memcpy(r->build_id, bid, (size_t)bid_len);
	r->path_len = (uint16_t)plen;
	memcpy(r + 1, path, plen);
	return r;
}

static int load_self_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int n = 0;

	self_maps = cw_maps__new(0);
	if (!f || !self_maps)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8], path[2048] = "";
		uint8_t bid[20];
		struct cw_mmap *r;
		int blen;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %2047s", &start, &end, perms, &off,
			   path) < 4)
			continue;
		if (!strcmp(path, "[stack]"))
			stack_end = end;
		if (perms[2] != 'x' || path[0] != '/')
			continue;
		blen = read_build_id(path, bid);
		r = mk_rec((uint32_t)getpid(), start, end - start, off, path, bid, blen);
		if (!cw_maps__mmap(self_maps, r))
			n++;
		free(r);
	}
	fclose(f);
	return n ? 0 : -1;
}

static const struct cw_mapping *self_mapping(const void *p)
{
	return cw_maps__find(self_maps, (uint32_t)getpid(), (uint64_t)(uintptr_t)p);
}

static const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path ? path : "(null)";
}

/* --- functions to find ------------------------------------------------- */

static void *volatile grabbed;
static volatile int line_a, line_inl, line_inl_call;

NOIPA void grab_return(void)
{
	grabbed = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

NOIPA int named_fn(int x)
{
	int r = x * 3;

	line_a = __LINE__; grab_return();
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

static inline __attribute__((always_inline)) int inlined_fn(int x)
{
	line_inl = __LINE__; grab_return();
	__asm__ volatile("" ::: "memory");
	return x + 7;
}

NOIPA int inline_caller(int x)
{
	int r;

	line_inl_call = __LINE__; r = inlined_fn(x);
	__asm__ volatile("" ::: "memory");
	return r * 2;
}

typedef void (*qsort_fn)(void *, size_t, size_t, int (*)(const void *, const void *));

/* libc's own qsort: under ASan, qsort is the sanitizer's interceptor */
static qsort_fn libc_qsort(void)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	qsort_fn f = h ? (qsort_fn)dlsym(h, "qsort") : NULL;

	if (h)
		dlclose(h);
	return f;
}

static struct cw_sym *new_sym(void)
{
	struct cw_sym_opts o = { 0 };

	return cw_sym__new(&o);
}

static void test_named(void)
{
	struct cw_sym *s = new_sym();
	struct cw_sym_frame f[CW_SYM_MAX_INLINE + 1];
	struct cw_sym_stats st;
	const struct cw_mapping *m;
	int n;

	named_fn(1);
	m = self_mapping(grabbed);
	CHECK(s && m, "no mapping for %p", grabbed);
	CHECK(m->build_id_len == 20, "the test binary has a build-id");
	n = cw_sym__user(s, m, (uint64_t)(uintptr_t)grabbed, 1, f, CW_SYM_MAX_INLINE + 1);
	CHECK(n == 1, "%d frames", n);
	CHECK(f[0].function && !strcmp(f[0].function, "named_fn"), "function %s", f[0].function);
	CHECK(!strcmp(base(f[0].file), base(__FILE__)), "file %s", f[0].file);
	CHECK(f[0].line == line_a, "line %d, want %d", f[0].line, line_a);
	CHECK(!f[0].inlined && f[0].build_id && strlen(f[0].build_id) == 40, "build-id %s",
	      f[0].build_id);
	CHECK(f[0].module && !strcmp(f[0].module, m->path), "module %s", f[0].module);
	/* the object's own address, the load bias taken off */
	CHECK(f[0].address != (uint64_t)(uintptr_t)grabbed &&
	      f[0].address < (uint64_t)(uintptr_t)grabbed, "address 0x%" PRIx64, f[0].address);
	/* again: from the cache, the same interned strings */
	{
		struct cw_sym_frame g;

		n = cw_sym__user(s, m, (uint64_t)(uintptr_t)grabbed, 1, &g, 1);
		cw_sym__stats(s, &st);
		CHECK(n == 1 && g.function == f[0].function && g.file == f[0].file && st.hits == 1 &&
		      st.opened == 1, "cached: hits %" PRIu64 " opened %" PRIu64, st.hits,
		      st.opened);
	}
	cw_sym__free(s);
	passes++;
	printf("ok named function, file and line\n");
}

static void test_inline(void)
{
	struct cw_sym *s = new_sym();
	struct cw_sym_frame f[CW_SYM_MAX_INLINE + 1];
	const struct cw_mapping *m;
	int n;

	inline_caller(2);
	m = self_mapping(grabbed);
	CHECK(s && m, "no mapping");
	n = cw_sym__user(s, m, (uint64_t)(uintptr_t)grabbed, 1, f, CW_SYM_MAX_INLINE + 1);
	CHECK(n == 2, "%d frames (%s)", n, f[0].function);
	CHECK(f[0].inlined && f[0].function && !strcmp(f[0].function, "inlined_fn") &&
	      f[0].line == line_inl, "inner: %s:%d inlined %d, want line %d", f[0].function,
	      f[0].line, f[0].inlined, line_inl);
	CHECK(!f[1].inlined && f[1].function && !strcmp(f[1].function, "inline_caller") &&
	      f[1].line == line_inl_call && !strcmp(base(f[1].file), base(__FILE__)),
	      "outer: %s %s:%d, want line %d", f[1].function, f[1].file, f[1].line, line_inl_call);
	CHECK(f[0].address == f[1].address, "one address for both");
	/* max 1: the real function alone */
	n = cw_sym__user(s, m, (uint64_t)(uintptr_t)grabbed, 1, f, 1);
	CHECK(n == 1 && !strcmp(f[0].function, "inline_caller"), "max 1: %s", f[0].function);
	cw_sym__free(s);
	passes++;
	printf("ok inlined frames\n");
}

static void test_libc(void)
{
	struct cw_sym *s = new_sym();
	struct cw_sym_frame f[CW_SYM_MAX_INLINE + 1];
	/* libc's qsort itself, not a PLT stub; qsort is not an IFUNC */
	void *q = (void *)libc_qsort();
	const struct cw_mapping *m = self_mapping(q);
	int n;

	CHECK(s && m && strstr(m->path, "libc"), "qsort's mapping: %s", m ? m->path : "none");
	n = cw_sym__user(s, m, (uint64_t)(uintptr_t)q, 0, f, CW_SYM_MAX_INLINE + 1);
	CHECK(f[n - 1].function && strstr(f[n - 1].function, "qsort") && !f[n - 1].inlined,
	      "libc: %s", f[n - 1].function);
	printf("ok libc: %s%s%s\n", f[n - 1].function, f[n - 1].file ? " at " : "",
	       f[n - 1].file ? base(f[n - 1].file) : "");
	cw_sym__free(s);
	passes++;
}

/* One session kept: every switch between two objects closes one and
 * opens the other, and the answers stay the same (from the address cache,
 * whose frames do not depend on the session). */
static void test_sessions(void)
{
	struct cw_sym_opts o = { .max_sessions = 1 };
	struct cw_sym *s = cw_sym__new(&o);
	struct cw_sym_frame f[CW_SYM_MAX_INLINE + 1];
	struct cw_sym_stats st;
	void *q = (void *)libc_qsort(), *here;
	const char *name = NULL;

	named_fn(3);
	here = grabbed;
	CHECK(s && q && self_mapping(q) && self_mapping(here), "setup");
	for (int i = 0; i < 3; i++) {
		int n = cw_sym__user(s, self_mapping(here), (uint64_t)(uintptr_t)here + (uint64_t)i,
				     1, f, CW_SYM_MAX_INLINE + 1);

		CHECK(!strcmp(f[n - 1].function, "named_fn"), "self %d: %s", i, f[n - 1].function);
		n = cw_sym__user(s, self_mapping(q), (uint64_t)(uintptr_t)q + (uint64_t)i, 0, f,
				 CW_SYM_MAX_INLINE + 1);
		CHECK(name == NULL || f[n - 1].function == name, "libc %d: %s", i,
		      f[n - 1].function);
		name = f[n - 1].function;
	}
	cw_sym__stats(s, &st);
	CHECK(st.opened == 6 && st.hits == 0, "opened %" PRIu64 " hits %" PRIu64, st.opened,
	      st.hits);
	cw_sym__free(s);
	passes++;
	printf("ok one session at a time\n");
}

/* The recorded path is gone; a copy of the object under the debug
 * directory, by build-id, takes its place. */
static void test_debug_dir(void)
{
	char dir[] = "/tmp/cw-symdbg-XXXXXX", path[256], hex[41];
	struct cw_sym_opts o = { 0 };
	struct cw_sym_frame f[CW_SYM_MAX_INLINE + 1];
	struct cw_mapping m;
	struct cw_sym *s = NULL;
	FILE *in, *out;
	char buf[65536];
	size_t len;
	int n;

	named_fn(4);
	CHECK(self_mapping(grabbed) && mkdtemp(dir), "setup");
	m = *self_mapping(grabbed);
	for (int i = 0; i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", m.build_id[i]);
	snprintf(path, sizeof(path), "%s/.build-id", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s", dir, hex);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2);
	in = fopen(m.path, "rb");
	out = fopen(path, "wb");
	CHECK(in && out, "copy to %s", path);
	while ((len = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, len, out);
	fclose(in);
	fclose(out);
	o.debug_dir = dir;
	s = cw_sym__new(&o);
	m.path = "/nonexistent/moved-away";
	n = cw_sym__user(s, &m, (uint64_t)(uintptr_t)grabbed, 1, f, CW_SYM_MAX_INLINE + 1);
	CHECK(n == 1 && f[0].function && !strcmp(f[0].function, "named_fn") &&
	      f[0].line == line_a && !strcmp(f[0].module, m.path), "by build-id: %s:%d in %s",
	      f[0].function, f[0].line, f[0].module);
	cw_sym__free(s);
	unlink(path);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s", dir, hex);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/.build-id", dir);
	rmdir(path);
	rmdir(dir);
	passes++;
	printf("ok the debug directory by build-id\n");
}

/* --- unwinding ---------------------------------------------------------- */

struct snap {
	uint64_t regs[CW_SAMPLE_NREGS_X86_64];
	uint8_t stack[STACK_COPY];
	size_t len;
};

static struct snap snap;

/* The stack holds other frames' redzones under ASan: read it word by
 * word, unchecked, as the kernel's copy would. */
__attribute__((no_sanitize_address)) NOIPA void copy_stack(uint64_t sp)
{
	size_t len = stack_end > sp && stack_end - sp < STACK_COPY ? stack_end - sp : STACK_COPY;

	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t w = *(volatile uint64_t *)(uintptr_t)(sp + i);

		memcpy(snap.stack + i, &w, 8);
	}
	snap.len = len & ~(size_t)7;
}

/* What a sample would hold: rip, rsp and the callee-saved registers at
 * one instruction of this function (the others are the caller's to
 * lose), then the stack from rsp up. */
NOIPA void capture(void)
{
	uint64_t *r = snap.regs;

	memset(r, 0, sizeof(snap.regs));
	__asm__ volatile("movq %%rbx, 24(%0)\n\t"
			 "movq %%rbp, 48(%0)\n\t"
			 "movq %%rsp, 56(%0)\n\t"
			 "movq %%r12, 96(%0)\n\t"
			 "movq %%r13, 104(%0)\n\t"
			 "movq %%r14, 112(%0)\n\t"
			 "movq %%r15, 120(%0)\n\t"
			 "leaq 0(%%rip), %%rax\n\t"
			 "movq %%rax, 128(%0)\n\t"
			 :
			 : "r"(r)
			 : "rax", "memory");
	copy_stack(r[7]);
}

NOIPA int chain_c(int x)
{
	capture();
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

NOIPA int chain_b(int x)
{
	int r = chain_c(x + 1);

	__asm__ volatile("" ::: "memory");
	return r * 2;
}

NOIPA int chain_a(int x)
{
	int r = chain_b(x * 3);

	__asm__ volatile("" ::: "memory");
	return r - 1;
}

/* Unwind the snapshot and name each frame by its real function. */
static int unwind_pid(struct cw_sym *s, uint32_t pid, const char **names, const char **mods,
		      int max)
{
	uint64_t ips[64];
	int n = cw_sym__unwind(s, self_maps, pid, snap.regs, CW_SAMPLE_NREGS_X86_64, snap.stack,
			       snap.len, ips, 64);

	if (n > max)
		n = max;
	for (int i = 0; i < n; i++) {
		struct cw_sym_frame f[CW_SYM_MAX_INLINE + 1];
		int k = cw_sym__user(s, self_mapping((void *)(uintptr_t)ips[i]), ips[i], i > 0, f,
				     CW_SYM_MAX_INLINE + 1);

		names[i] = f[k - 1].function ? f[k - 1].function : "?";
		mods[i] = f[k - 1].module ? base(f[k - 1].module) : "?";
	}
	return n;
}

static int unwind_names(struct cw_sym *s, const char **names, const char **mods, int max)
{
	return unwind_pid(s, (uint32_t)getpid(), names, mods, max);
}

NOIPA void test_unwind(void)
{
	struct cw_sym *s = new_sym();
	const char *names[64], *mods[64];
	static const char *const want[] = { "capture", "chain_c", "chain_b", "chain_a",
					    "test_unwind", "main" };
	int n, i;

	CHECK(s, "cw_sym__new");
	chain_a(1);
	CHECK(snap.len > 512, "stack copy of %zu bytes", snap.len);
	n = unwind_names(s, names, mods, 64);
	for (i = 0; i < (int)(sizeof(want) / sizeof(want[0])); i++)
		CHECK(i < n && !strcmp(names[i], want[i]), "frame %d: %s, want %s (%d frames)", i,
		      i < n ? names[i] : "none", want[i], n);
	/* a forked child's copy of the address space unwinds the same way
	 * (through the Dwfl the parent's built, found by the mappings) */
	CHECK(!cw_maps__fork(self_maps, (uint32_t)getpid(), 999999), "fork");
	n = unwind_pid(s, 999999, names, mods, 64);
	CHECK(n > 5 && !strcmp(names[3], "chain_a"), "child: %d frames, %s", n,
	      n > 3 ? names[3] : "none");
	cw_maps__exit(self_maps, 999999);
	/* a stack copy too short for the callers: the unwind stops, no guess */
	snap.len = 16;
	n = unwind_names(s, names, mods, 64);
	CHECK(n >= 1 && n <= 2 && !strcmp(names[0], "capture"), "short copy: %d frames", n);
	cw_sym__free(s);
	passes++;
	printf("ok unwind of a chain without frame pointers\n");
}

static int captured_in_cmp;

static int cmp_capture(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (!captured_in_cmp) {
		captured_in_cmp = 1;
		capture();
	}
	return (x > y) - (x < y);
}

NOIPA void test_unwind_libc(void)
{
	struct cw_sym *s = new_sym();
	const char *names[64], *mods[64];
	int v[] = { 3, 1, 2, 5, 4 }, n, i, in_libc = 0;
	qsort_fn q = libc_qsort();

	CHECK(s && q, "cw_sym__new, libc's qsort");
	q(v, 5, sizeof(v[0]), cmp_capture);
	n = unwind_names(s, names, mods, 64);
	CHECK(n > 3 && !strcmp(names[0], "capture") && !strcmp(names[1], "cmp_capture"),
	      "%d frames, %s %s", n, n > 0 ? names[0] : "", n > 1 ? names[1] : "");
	for (i = 2; i < n && strstr(mods[i], "libc"); i++)
		in_libc++;
	CHECK(in_libc >= 1, "no libc frame after the comparator: %s in %s", names[2], mods[2]);
	CHECK(i < n && !strcmp(names[i], "test_unwind_libc"),
	      "after %d libc frames (last %s): %s, want test_unwind_libc", in_libc,
	      names[i - 1], i < n ? names[i] : "none");
	printf("ok unwind through libc (%d libc frames, %s)\n", in_libc, names[2]);
	cw_sym__free(s);
	passes++;
}

/* --- refusals ----------------------------------------------------------- */

static void test_refusals(void)
{
	struct cw_sym *s = new_sym();
	struct cw_sym_frame f[4];
	struct cw_sym_stats st;
	struct cw_mapping m;
	char dir[] = "/tmp/cw-symtest-XXXXXX", fifo[64];
	const char *refused[] = { fifo, "/dev/zero", "/tmp" };
	int n;

	named_fn(2);
	CHECK(s && self_mapping(grabbed), "setup");
	/* the test binary, recorded with another build-id */
	m = *self_mapping(grabbed);
	m.build_id[0] ^= 0xff;
	n = cw_sym__user(s, &m, (uint64_t)(uintptr_t)grabbed, 1, f, 4);
	cw_sym__stats(s, &st);
	CHECK(n == 1 && !f[0].function && f[0].module && !strcmp(f[0].module, m.path) &&
	      f[0].build_id, "mismatch: %s in %s", f[0].function, f[0].module);
	CHECK(st.refused == 1 && st.opened == 0, "refused %" PRIu64, st.refused);

	/* not regular files: each refused at once (a FIFO would block an
	 * open without O_NONBLOCK; the alarm ends the test if it does) */
	CHECK(mkdtemp(dir), "mkdtemp");
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	CHECK(!mkfifo(fifo, 0600), "mkfifo");
	alarm(10);
	for (int i = 0; i < 3; i++) {
		memset(&m, 0, sizeof(m));
		m.start = 0x10000;
		m.end = 0x20000;
		m.path = refused[i];
		n = cw_sym__user(s, &m, 0x10100, 0, f, 4);
		cw_sym__stats(s, &st);
		CHECK(n == 1 && !f[0].function && f[0].module && !strcmp(f[0].module, refused[i]) &&
		      !f[0].build_id && f[0].address == 0x10100 && st.refused == 2 + (uint64_t)i,
		      "%s: refused %" PRIu64, refused[i], st.refused);
	}
	alarm(0);
	/* a symlink to the test binary itself: refused, not followed */
	snprintf(fifo, sizeof(fifo), "%s/link", dir);
	CHECK(!symlink(self_mapping(grabbed)->path, fifo), "symlink");
	m = *self_mapping(grabbed);
	m.path = fifo;
	n = cw_sym__user(s, &m, (uint64_t)(uintptr_t)grabbed, 1, f, 4);
	cw_sym__stats(s, &st);
	CHECK(n == 1 && !f[0].function && st.refused == 5, "symlink: %s refused %" PRIu64,
	      f[0].function, st.refused);
	unlink(fifo);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	unlink(fifo);
	rmdir(dir);

	/* missing: a frame naming its module, not a refusal */
	memset(&m, 0, sizeof(m));
	m.start = 0x10000;
	m.end = 0x20000;
	m.path = "/nonexistent/libgone.so.1";
	m.build_id_len = 20;
	memset(m.build_id, 0xab, 20);
	n = cw_sym__user(s, &m, 0x10200, 1, f, 4);
	cw_sym__stats(s, &st);
	CHECK(n == 1 && !f[0].function && f[0].module && !strcmp(f[0].module, m.path) &&
	      f[0].build_id &&
	      !strcmp(f[0].build_id, "abababababababababababababababababababab") &&
	      f[0].address == 0x10200 && st.refused == 5, "missing: %s refused %" PRIu64,
	      f[0].module, st.refused);
	/* no mapping at all */
	n = cw_sym__user(s, NULL, 0x1234, 0, f, 4);
	CHECK(n == 1 && !f[0].module && !f[0].function && f[0].address == 0x1234, "no mapping");
	cw_sym__free(s);
	passes++;
	printf("ok refusals\n");
}

/* --- refused before they are opened ------------------------------------- */

struct notices {
	int n;
	char msg[16][512];
};

static void on_notice(void *ctx, const char *msg)
{
	struct notices *nt = ctx;

	if (nt->n < 16)
		snprintf(nt->msg[nt->n], sizeof(nt->msg[0]), "%s", msg);
	nt->n++;
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* An inotify instance that sees every open of @path (@path itself when
 * @nofollow, else what it leads to). */
static int watch_opens(const char *path, int nofollow)
{
	int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	if (in >= 0 && inotify_add_watch(in, path, IN_OPEN | (nofollow ? IN_DONT_FOLLOW : 0)) < 0) {
		close(in);
		return -1;
	}
	return in;
}

/* 1: @in saw an open since the last call. */
static int saw_open(int in)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int seen = 0;

	while (read(in, buf, sizeof(buf)) > 0)
		seen = 1;
	return seen;
}

/* What @pid's kernel stack is waiting in ("" when unknown). */
static void wchan_of(pid_t pid, char *out, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/wchan", (int)pid);
	out[0] = '\0';
	f = fopen(path, "r");
	if (f) {
		if (!fgets(out, (int)len, f))
			out[0] = '\0';
		fclose(f);
	}
}

/* A child that opens @fifo for writing: the open blocks until a reader
 * opens it, and the child exits as soon as it returns. @return its pid
 * once it is blocked in that open, or -1. */
static pid_t blocked_writer(const char *fifo)
{
	char wchan[64];
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(fifo, O_WRONLY | O_CLOEXEC);

		_exit(fd >= 0 ? 0 : 1);
	}
	if (pid < 0)
		return -1;
	for (int i = 0; i < 500; i++) {
		wchan_of(pid, wchan, sizeof(wchan));
		if (!strcmp(wchan, "wait_for_partner"))
			return pid;
		nap_ms(10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

/* 1: @pid is still blocked in its open (not returned, not exited). */
static int still_blocked(pid_t pid)
{
	char wchan[64];

	nap_ms(100); /* a released writer exits at once: give it the time */
	if (waitpid(pid, NULL, WNOHANG) != 0)
		return 0;
	wchan_of(pid, wchan, sizeof(wchan));
	return !strcmp(wchan, "wait_for_partner");
}

/*
 * Paths a hostile trace names: each refused with one notice and no open
 * at all (inotify would see it, even a failed-check one on procfs), its
 * frame unsymbolized but labelled with the path: a FIFO with a writer
 * blocked on it (which stays blocked), a character device, a directory,
 * a symlink to a good ELF file (neither the link nor its target opened),
 * /proc/self/mem (a regular file of size 0 on procfs). Named again, by a
 * mapping with another build-id, and through the unwinder: no second
 * notice and still no open. The good ELF file is still symbolized.
 */
NOIPA void test_refused_unopened(void)
{
	struct notices nt = { 0 };
	struct cw_sym_opts o = { .notice = on_notice, .notice_ctx = &nt };
	struct cw_sym *s = cw_sym__new(&o);
	char dir[] = "/tmp/cw-symopen-XXXXXX", fifo[64], sub[64], link[64];
	const char *paths[] = { fifo, "/dev/zero", sub, link, "/proc/self/mem" };
	const char *why[] = { "FIFO", "device", "directory", "symbolic link", "pseudo-filesystem" };
	enum { NPATHS = 5 };
	int watch[NPATHS], target = -1, n;
	struct cw_sym_frame f[CW_SYM_MAX_INLINE + 1];
	const char *names[64], *mods[64];
	struct cw_sym_stats st;
	struct cw_mapping m;
	pid_t writer = -1;
	int made = 0;

/* CHECK, but the writer and the files are cleaned up on failure */
#define EXPECT(cond, ...) CHECK_OR(goto cleanup, cond, __VA_ARGS__)

	for (int i = 0; i < NPATHS; i++)
		watch[i] = -1;
	named_fn(6);
	EXPECT(s && self_mapping(grabbed), "setup");
	EXPECT(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	made = 1;
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(sub, sizeof(sub), "%s/dir", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	EXPECT(!mkfifo(fifo, 0600) && !mkdir(sub, 0700) &&
	       !symlink(self_mapping(grabbed)->path, link), "mkfifo, mkdir, symlink");
	alarm(20); /* an open that blocks ends the test */
	writer = blocked_writer(fifo);
	EXPECT(writer > 0, "the FIFO's writer never blocked in its open");
	for (int i = 0; i < NPATHS; i++) {
		watch[i] = watch_opens(paths[i], 1);
		EXPECT(watch[i] >= 0, "inotify on %s: %s", paths[i], strerror(errno));
	}
	target = watch_opens(self_mapping(grabbed)->path, 0);
	EXPECT(target >= 0, "inotify: %s", strerror(errno));

	for (int i = 0; i < NPATHS; i++) {
		memset(&m, 0, sizeof(m));
		m.start = 0x10000;
		m.end = 0x20000;
		m.path = paths[i];
		n = cw_sym__user(s, &m, 0x10100, 0, f, CW_SYM_MAX_INLINE + 1);
		cw_sym__stats(s, &st);
		EXPECT(n == 1 && !f[0].function && !strcmp(f[0].module, paths[i]) && !f[0].build_id &&
		       f[0].address == 0x10100 && st.refused == (uint64_t)i + 1 && st.opened == 0,
		       "%s: %d frames, function %s, refused %" PRIu64, paths[i], n, f[0].function,
		       st.refused);
		EXPECT(!saw_open(watch[i]), "%s was opened", paths[i]);
		EXPECT(i != 3 || !saw_open(target), "the symlink was followed");
		EXPECT(nt.n == i + 1 && strstr(nt.msg[i], paths[i]) && strstr(nt.msg[i], why[i]),
		       "%s: %d notices, last '%s'", paths[i], nt.n, nt.n ? nt.msg[nt.n - 1] : "");
	}
	EXPECT(still_blocked(writer), "the FIFO's writer was released");

	/* again, as other objects (with a build-id), and through the
	 * unwinder (process 888888: this one's mappings and the hostile
	 * ones) */
	EXPECT(!cw_maps__fork(self_maps, (uint32_t)getpid(), 888888), "fork");
	for (int i = 0; i < NPATHS; i++) {
		uint8_t bid[20];
		struct cw_mmap *r;
		int err;

		memset(bid, 0x40 + i, sizeof(bid));
		memset(&m, 0, sizeof(m));
		m.start = 0x10000;
		m.end = 0x20000;
		m.path = paths[i];
		m.build_id_len = 20;
		memcpy(m.build_id, bid, 20);
		n = cw_sym__user(s, &m, 0x10100, 0, f, CW_SYM_MAX_INLINE + 1);
		EXPECT(n == 1 && !f[0].function && !strcmp(f[0].module, paths[i]), "again: %s",
		       paths[i]);
		r = mk_rec(888888, 0x10000 + 0x10000 * (uint64_t)i, 0x1000, 0, paths[i], bid, 20);
		err = cw_maps__mmap(self_maps, r);
		free(r);
		EXPECT(!err, "mmap record %s", paths[i]);
	}
	chain_a(2);
	n = unwind_pid(s, 888888, names, mods, 64);
	cw_maps__exit(self_maps, 888888);
	EXPECT(n > 4 && !strcmp(names[3], "chain_a"), "unwind: %d frames, %s", n,
	       n > 3 ? names[3] : "none");
	/* (not the symlink's target: it is this binary, which the unwinder
	 * opens) */
	for (int i = 0; i < NPATHS; i++)
		EXPECT(!saw_open(watch[i]), "%s was opened, again", paths[i]);
	cw_sym__stats(s, &st);
	EXPECT(nt.n == NPATHS && st.refused >= 2 * NPATHS, "again: %d notices, refused %" PRIu64,
	       nt.n, st.refused);
	EXPECT(still_blocked(writer), "the FIFO's writer was released, again");

	/* the good ELF file, beside them */
	n = cw_sym__user(s, self_mapping(grabbed), (uint64_t)(uintptr_t)grabbed, 1, f,
			 CW_SYM_MAX_INLINE + 1);
	cw_sym__stats(s, &st);
	EXPECT(n == 1 && f[0].function && !strcmp(f[0].function, "named_fn") &&
	       !strcmp(f[0].module, self_mapping(grabbed)->path) && st.opened >= 1 &&
	       nt.n == NPATHS,
	       "good file: %s, opened %" PRIu64 ", %d notices", f[0].function, st.opened, nt.n);
	passes++;
	printf("ok refused before opened: FIFO (writer still blocked), device, directory, "
	       "symlink, /proc/self/mem\n");
cleanup:
#undef EXPECT
	alarm(0);
	if (writer > 0) {
		kill(writer, SIGKILL);
		waitpid(writer, NULL, 0);
	}
	for (int i = 0; i < NPATHS; i++)
		if (watch[i] >= 0)
			close(watch[i]);
	if (target >= 0)
		close(target);
	if (made) {
		unlink(link);
		unlink(fifo);
		rmdir(sub);
		rmdir(dir);
	}
	cw_sym__free(s);
}

/*
 * Mappings that share a build-id are one object (opened once, by the first
 * path), but each frame names its own mapping's path: the same file seen
 * under two names (a hard link, a container's root), found again in the
 * address cache; and an object that cannot be found, unsymbolized under
 * each of its paths.
 */
static void test_shared_build_id(void)
{
	struct cw_sym *s = new_sym();
	struct cw_sym_frame f[CW_SYM_MAX_INLINE + 1];
	struct cw_sym_stats st;
	struct cw_mapping a, b;
	uint64_t pc;
	int n;

	inline_caller(7);
	pc = (uint64_t)(uintptr_t)grabbed;
	CHECK(s && self_mapping(grabbed), "setup");
	a = b = *self_mapping(grabbed);
	b.path = "/other/root/test_symbol";
	n = cw_sym__user(s, &a, pc, 1, f, CW_SYM_MAX_INLINE + 1);
	CHECK(n == 2 && !strcmp(f[0].module, a.path) && !strcmp(f[1].module, a.path) &&
	      !strcmp(f[1].function, "inline_caller"), "first: %d frames in %s", n, f[0].module);
	n = cw_sym__user(s, &b, pc, 1, f, CW_SYM_MAX_INLINE + 1);
	cw_sym__stats(s, &st);
	CHECK(n == 2 && !strcmp(f[0].module, b.path) && !strcmp(f[1].module, b.path) &&
	      !strcmp(f[1].function, "inline_caller") && st.hits == 1 && st.opened == 1,
	      "second path: %d frames in %s, %s (hits %" PRIu64 ")", n, f[0].module,
	      f[1].module, st.hits);
	n = cw_sym__user(s, &a, pc, 1, f, CW_SYM_MAX_INLINE + 1);
	CHECK(n == 2 && !strcmp(f[0].module, a.path) && !strcmp(f[1].module, a.path),
	      "first again: %s", f[0].module);

	memset(&a, 0, sizeof(a));
	a.start = 0x10000;
	a.end = 0x20000;
	a.build_id_len = 20;
	memset(a.build_id, 0xcd, 20);
	b = a;
	a.path = "/nonexistent/one/libshared.so";
	b.path = "/nonexistent/two/libshared.so";
	n = cw_sym__user(s, &a, 0x10100, 1, f, CW_SYM_MAX_INLINE + 1);
	CHECK(n == 1 && !f[0].function && !strcmp(f[0].module, a.path), "missing, first: %s",
	      f[0].module);
	n = cw_sym__user(s, &b, 0x10100, 1, f, CW_SYM_MAX_INLINE + 1);
	CHECK(n == 1 && !f[0].function && !strcmp(f[0].module, b.path) && f[0].build_id &&
	      !strcmp(f[0].build_id, "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"),
	      "missing, second: %s", f[0].module);
	cw_sym__free(s);
	passes++;
	printf("ok each frame labelled with its own mapping's path\n");
}

static void test_kernel(void)
{
	static const char snapshot[] = "ffffffff81000000 T _stext\n"
				       "ffffffff81000100 T schedule\n"
				       "ffffffffc0001000 t mod_fn\t[somemod]\n";
	struct cw_ksyms *k = cw_ksyms__new();
	struct cw_sym_opts o = { .ksyms = k };
	struct cw_sym *s;
	struct cw_sym_frame f;

	CHECK(k && !cw_ksyms__add(k, snapshot, strlen(snapshot)), "ksyms");
	cw_ksyms__finish(k);
	s = cw_sym__new(&o);
	CHECK(s, "cw_sym__new");
	cw_sym__kernel(s, 0xffffffff81000110ull, &f);
	CHECK(f.function && !strcmp(f.function, "schedule") && !strcmp(f.module, "[kernel]") &&
	      f.address == 0xffffffff81000110ull, "kernel: %s %s", f.function, f.module);
	cw_sym__kernel(s, 0xffffffffc0001008ull, &f);
	CHECK(f.function && !strcmp(f.function, "mod_fn") && !strcmp(f.module, "[somemod]"),
	      "module: %s %s", f.function, f.module);
	/* far past the last symbol: not that function */
	cw_sym__kernel(s, 0xffffffffc8000000ull, &f);
	CHECK(!f.function && !strcmp(f.module, "[kernel]"), "far: %s", f.function);
	cw_sym__free(s);
	cw_ksyms__free(k);
	passes++;
	printf("ok kernel frames\n");
}

/* --- address spaces ----------------------------------------------------- */

static int add(struct cw_maps *m, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
	       const char *path)
{
	struct cw_mmap *r = mk_rec(pid, start, len, pgoff, path, NULL, 0);
	int err = cw_maps__mmap(m, r);

	free(r);
	return err;
}

static void test_maps_rules(void)
{
	struct cw_maps *m = cw_maps__new(0);
	const struct cw_mapping *x, *v;
	uint64_t ver1, ver2;
	size_t n;

	CHECK(m && !add(m, 1, 0x1000, 0x4000, 0, "/lib/a.so"), "add a");
	v = cw_maps__all(m, 1, &n, &ver1);
	CHECK(n == 1 && ver1, "one mapping, version %" PRIu64, ver1);
	/* b lands in the middle of a: a is split around it */
	CHECK(!add(m, 1, 0x2000, 0x1000, 0x7000, "/lib/b.so"), "add b");
	v = cw_maps__all(m, 1, &n, &ver2);
	CHECK(n == 3 && ver2 != ver1, "split: %zu mappings", n);
	CHECK(v[0].start == 0x1000 && v[0].end == 0x2000 && v[0].pgoff == 0 &&
	      !strcmp(v[0].path, "/lib/a.so"), "left piece");
	CHECK(v[1].start == 0x2000 && v[1].end == 0x3000 && !strcmp(v[1].path, "/lib/b.so"),
	      "new one");
	CHECK(v[2].start == 0x3000 && v[2].end == 0x5000 && v[2].pgoff == 0x2000 &&
	      v[2].path == v[0].path, "right piece, its offset moved, its path interned once");
	x = cw_maps__find(m, 1, 0x2fff);
	CHECK(x && !strcmp(x->path, "/lib/b.so"), "find in b");
	CHECK(!cw_maps__find(m, 1, 0x5000) && !cw_maps__find(m, 1, 0xfff) &&
	      !cw_maps__find(m, 2, 0x2000), "outside");
	/* c covers the end of b and the start of a's right piece, and d
	 * swallows everything */
	CHECK(!add(m, 1, 0x2800, 0x1000, 0, "/lib/c.so"), "add c");
	v = cw_maps__all(m, 1, &n, NULL);
	CHECK(n == 4 && v[1].end == 0x2800 && v[2].start == 0x2800 && v[3].start == 0x3800 &&
	      v[3].pgoff == 0x2800, "partial overlaps: %zu", n);
	CHECK(!add(m, 1, 0x0, 0x10000, 0, "/lib/d.so"), "add d");
	v = cw_maps__all(m, 1, &n, NULL);
	CHECK(n == 1 && !strcmp(v[0].path, "/lib/d.so"), "covered: %zu", n);

	/* fork copies; the copy then goes its own way */
	CHECK(!cw_maps__fork(m, 1, 2), "fork");
	x = cw_maps__find(m, 2, 0x1234);
	CHECK(x && !strcmp(x->path, "/lib/d.so"), "child has the parent's");
	CHECK(!add(m, 2, 0x1000, 0x1000, 0, "/lib/e.so"), "child maps");
	CHECK(!strcmp(cw_maps__find(m, 1, 0x1234)->path, "/lib/d.so") &&
	      !strcmp(cw_maps__find(m, 2, 0x1234)->path, "/lib/e.so"), "separate copies");
	/* exec empties, exit drops */
	cw_maps__exec(m, 2);
	CHECK(!cw_maps__find(m, 2, 0x1234) && !cw_maps__all(m, 2, &n, &ver1) && !n && !ver1,
	      "exec");
	cw_maps__exit(m, 1);
	CHECK(!cw_maps__find(m, 1, 0x1234), "exit");
	CHECK(cw_maps__dropped(m) == 0, "nothing dropped");
	cw_maps__free(m);
	passes++;
	printf("ok maps: overlaps, fork, exec, exit\n");
}

static void test_maps_bound(void)
{
	struct cw_maps *m = cw_maps__new(4);
	size_t n;

	CHECK(m, "new");
	for (uint32_t pid = 1; pid <= 2; pid++)
		for (int i = 0; i < 2; i++)
			CHECK(!add(m, pid, 0x1000 * (i + 1), 0x1000, 0, "/x"), "add");
	/* naming pid 1 makes pid 2 the least recent: it goes, whole */
	CHECK(cw_maps__find(m, 1, 0x1000), "find 1");
	CHECK(!add(m, 3, 0x1000, 0x1000, 0, "/y"), "add 3");
	CHECK(cw_maps__dropped(m) == 1, "dropped %" PRIu64, cw_maps__dropped(m));
	cw_maps__all(m, 2, &n, NULL);
	CHECK(n == 0, "pid 2 dropped whole, %zu left", n);
	cw_maps__all(m, 1, &n, NULL);
	CHECK(n == 2 && cw_maps__find(m, 3, 0x1800), "pid 1 and 3 kept");
	/* a fork past the bound drops the least recent too */
	CHECK(!cw_maps__fork(m, 1, 4), "fork");
	CHECK(cw_maps__dropped(m) == 2 && cw_maps__find(m, 4, 0x1000) && !cw_maps__find(m, 3, 0x1000),
	      "fork bound: dropped %" PRIu64, cw_maps__dropped(m));
	/* one process past its own bound goes whole too */
	cw_maps__free(m);
	m = cw_maps__new(0);
	CHECK(m, "new");
	for (int i = 0; i <= 8192; i++)
		CHECK(!add(m, 7, 0x1000 * (uint64_t)(2 * i + 1), 0x1000, 0, "/z"), "add %d", i);
	cw_maps__all(m, 7, &n, NULL);
	CHECK(n == 0 && cw_maps__dropped(m) == 1, "per-process bound: %zu left", n);
	cw_maps__free(m);
	passes++;
	printf("ok maps bound\n");
}

static void test_maps_malformed(void)
{
	struct cw_maps *m = cw_maps__new(0);
	struct cw_mmap *r;
	size_t n;

	CHECK(m, "new");
	/* a path longer than the record */
	r = mk_rec(1, 0x1000, 0x1000, 0, "/lib/a.so", NULL, 0);
	r->path_len = 200;
	CHECK(cw_maps__mmap(m, r) == 1, "path_len past the record");
	free(r);
	r = mk_rec(1, 0x1000, 0x1000, 0, "/lib/a.so", NULL, 0);
	r->build_id_len = 21;
	CHECK(cw_maps__mmap(m, r) == 1, "build_id_len 21");
	r->build_id_len = 0;
	r->hdr.size = sizeof(*r) - 8;
	CHECK(cw_maps__mmap(m, r) == 1, "record shorter than its struct");
	r->hdr.size = (uint16_t)(sizeof(*r) + 16);
	r->len = 0;
	CHECK(cw_maps__mmap(m, r) == 1, "empty mapping");
	r->len = ~0ull;
	CHECK(cw_maps__mmap(m, r) == 1, "wrapping mapping");
	free(r);
	cw_maps__all(m, 1, &n, NULL);
	CHECK(n == 0, "nothing changed: %zu", n);
	/* a NUL in the path ends it */
	r = mk_rec(1, 0x1000, 0x1000, 0, "/lib/a.so", NULL, 0);
	((char *)(r + 1))[4] = '\0';
	CHECK(!cw_maps__mmap(m, r) && !strcmp(cw_maps__find(m, 1, 0x1000)->path, "/lib"),
	      "NUL in path");
	free(r);
	cw_maps__free(m);
	passes++;
	printf("ok maps malformed records\n");
}

int main(void)
{
	test_maps_rules();
	test_maps_bound();
	test_maps_malformed();
	if (load_self_maps()) {
		fprintf(stderr, "cannot read /proc/self/maps\n");
		return 1;
	}
	test_named();
	test_inline();
	test_libc();
	test_sessions();
	test_debug_dir();
	test_unwind();
	test_unwind_libc();
	test_refusals();
	test_refused_unopened();
	test_shared_build_id();
	test_kernel();
	cw_maps__free(self_maps);
	printf("test_symbol: %d passed, %d failed\n", passes, failures);
	return failures != 0;
}
