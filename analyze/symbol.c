// SPDX-License-Identifier: MIT
/*
 * The symbolizer (symbol.h), with libdw/libelf.
 *
 * Three levels, each bounded:
 *  - objects: one record per build-id (per path when the mapping has no
 *    build-id) saying whether the object could be opened and where its
 *    PT_LOAD segments sit in the file. Kept while the cw_sym lives (up to
 *    MAX_OBJECTS; past that all three levels are cleared), so an object
 *    that was refused is not tried again.
 *  - sessions: the open libdw view of an object (a Dwfl holding it as its
 *    one module, at bias 0, so module addresses are ELF vaddrs), at most
 *    max_sessions of them, the least recently used closed first.
 *  - the address cache: (object, file offset, is_return) -> frames. A
 *    frame seen again costs one hash probe. Its strings are interned in
 *    the cw_sym, never pointers into a session that may be closed.
 *
 * Objects are untrusted too: the path a trace names may be anything by
 * the time it is analyzed, and opening some files does something (a FIFO's
 * open releases a writer blocked on it; a device's runs its driver). So a
 * path is checked before it is opened (check_path) and only a regular ELF
 * file whose build-id is the one recorded is used (symlinks are refused:
 * the kernel recorded the resolved path). Every file libdw reads is one
 * opened here: objects are reported to it by fd, its find_elf callback
 * opens nothing, and debug info comes only from the debug directory by
 * build-id, through the same checks, never by a name derived from the
 * trace's path (no .debug/ or debuglink lookup beside the object, no dwz
 * alt file); so debuginfod (and DEBUGINFOD_URLS) is never used either.
 * (libdw opens a split-DWARF .dwo by the name its skeleton unit holds, but
 * only when asked for the split unit, which nothing here does.)
 */
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include "ksyms.h"
#include "symbol.h"
#include "../lib/esc.h"
#include "../lib/hash.h"

#define DEFAULT_SESSIONS 64
#define MAX_OBJECTS 65536
#define MAX_LOADS 16
#define CACHE_SLOTS (1u << 18) /* address cache entries, a power of 2 */
#define CACHE_FRAMES (1u << 18) /* frames the cache holds in all */
#define MAX_FRAMES (CW_SYM_MAX_INLINE + 1)
/* Interned names (functions, files, paths): past this, new ones are
 * NULL in the frames (unknown), so no set of objects can take the
 * analyzer's memory. */
#define MAX_NAME_BYTES (256u << 20)
/* A kernel address further than this past the nearest symbol below it is
 * not in that function: kallsyms has no sizes, and guessing would name
 * module or BPF code after an unrelated function. */
#define KERNEL_MAX_OFF (1u << 20)

enum obj_state { OBJ_UNTRIED, OBJ_OK, OBJ_UNUSABLE };

struct load {
	uint64_t off, filesz, vaddr;
};

struct session;

struct obj {
	uint8_t bid[20];
	uint8_t bid_len;
	const char *path; /* interned: also the key when bid_len is 0; with a
			   * build-id, the first mapping's path, the file
			   * opened (never a frame's module: each frame
			   * names its own mapping's path) */
	const char *hex;  /* interned, NULL without build-id */
	uint64_t hash;
	enum obj_state state;
	struct load loads[MAX_LOADS];
	int nloads;
	struct session *sess;
};

struct session {
	struct obj *o;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	size_t slot;   /* in cw_sym.sess */
	uint64_t used; /* tick of the last use */
};

struct centry {
	const struct obj *o; /* NULL: free */
	uint64_t off;
	uint32_t first;
	uint8_t n, is_return;
};

struct cw_sym {
	struct cw_sym_opts o;
	char debug_dir[512];
	struct cw_sym_stats st;
	struct cw_strtab *names;
	struct obj **objs; /* open addressing on obj->hash */
	size_t nobjs;
	/* Few and opened rarely: the least recent is found by a scan when a
	 * new one needs the room. */
	struct session **sess;
	size_t nsess, max_sess;
	uint64_t tick;
	struct centry *cache;
	size_t ncache;
	struct cw_sym_frame *pool;
	uint32_t pool_used;
	struct cw_unwind *unwind;
	void (*unwind_free)(struct cw_unwind *u); /* unwind.c's, set with unwind */
	/* Paths already reported refused, by hash (open addressing, 0:
	 * free): a hostile trace naming one FIFO a million times gets one
	 * message. */
	uint64_t noticed[CW_SYM_MAX_NOTICES * 2];
	size_t nnoticed;
};

static uint64_t hash_bytes(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static const char *intern(struct cw_sym *s, const char *str)
{
	return str ? cw_strtab__intern(s->names, str, strlen(str)) : NULL;
}

struct cw_sym *cw_sym__new(const struct cw_sym_opts *o)
{
	struct cw_sym *s = calloc(1, sizeof(*s));
	const char *dir;

	if (!s)
		return NULL;
	if (o)
		s->o = *o;
	dir = s->o.debug_dir ? s->o.debug_dir : "/usr/lib/debug";
	if (strlen(dir) >= sizeof(s->debug_dir)) {
		free(s);
		errno = ENAMETOOLONG;
		return NULL;
	}
	strcpy(s->debug_dir, dir);
	s->o.debug_dir = s->debug_dir;
	s->max_sess = s->o.max_sessions ? s->o.max_sessions : DEFAULT_SESSIONS;
	s->names = cw_strtab__new(MAX_NAME_BYTES);
	s->objs = calloc(MAX_OBJECTS * 2, sizeof(*s->objs));
	s->sess = calloc(s->max_sess, sizeof(*s->sess));
	s->cache = calloc(CACHE_SLOTS, sizeof(*s->cache));
	s->pool = calloc(CACHE_FRAMES, sizeof(*s->pool));
	if (!s->names || !s->objs || !s->sess || !s->cache || !s->pool) {
		cw_sym__free(s);
		errno = ENOMEM;
		return NULL;
	}
	elf_version(EV_CURRENT);
	return s;
}

static void session_close(struct cw_sym *s, struct session *ss)
{
	s->sess[ss->slot] = s->sess[--s->nsess];
	s->sess[ss->slot]->slot = ss->slot;
	ss->o->sess = NULL;
	dwfl_end(ss->dwfl);
	free(ss);
}

/* Forget every object (and so every cached address): the frames already
 * handed out stay valid, their strings being interned. */
static void clear_objects(struct cw_sym *s)
{
	while (s->nsess)
		session_close(s, s->sess[0]);
	for (size_t i = 0; i < MAX_OBJECTS * 2; i++) {
		free(s->objs[i]);
		s->objs[i] = NULL;
	}
	s->nobjs = 0;
	memset(s->cache, 0, CACHE_SLOTS * sizeof(*s->cache));
	s->ncache = 0;
	s->pool_used = 0;
}

void cw_sym__free(struct cw_sym *s)
{
	if (!s)
		return;
	if (s->unwind)
		s->unwind_free(s->unwind);
	if (s->objs && s->sess && s->cache)
		clear_objects(s);
	free(s->objs);
	free(s->sess);
	free(s->cache);
	free(s->pool);
	cw_strtab__free(s->names);
	free(s);
}

/* The unwinder hangs its state here with its destructor, so that this
 * file, below unwind.c, never calls into it. */
struct cw_unwind **cw_sym__unwind_state(struct cw_sym *s, void (*free_fn)(struct cw_unwind *u))
{
	s->unwind_free = free_fn;
	return &s->unwind;
}

/* --- opening objects ---------------------------------------------------- */

/* 1: @fd, a regular file, is an ELF object with build-id @bid; 0: it is
 * not. A mapping recorded without a build-id accepts any ELF file at its
 * path: nothing better is known of it, and its frames then carry no
 * build-id (NULL), which says how little the match is worth. */
static int check_file(int fd, const uint8_t *bid, int bid_len, Elf **elfp)
{
	GElf_Ehdr eh;
	const void *fbid;
	ssize_t flen;
	Elf *elf;

	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return 0;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		goto refuse;
	flen = dwelf_elf_gnu_build_id(elf, &fbid);
	if (bid_len && (flen != bid_len || memcmp(fbid, bid, (size_t)bid_len)))
		goto refuse;
	if (elfp)
		*elfp = elf;
	else
		elf_end(elf);
	return 1;
refuse:
	elf_end(elf);
	return 0;
}

/* Report @path refused, once each, the first CW_SYM_MAX_NOTICES paths. */
static void notice(struct cw_sym *s, const char *path, const char *why)
{
	size_t mask = CW_SYM_MAX_NOTICES * 2 - 1, j, n;
	uint64_t h = hash_bytes(path, strlen(path)) | 1;
	char msg[PATH_MAX + 256];

	s->st.refused++;
	if (!s->o.notice || s->nnoticed > CW_SYM_MAX_NOTICES)
		return;
	for (j = h & mask; s->noticed[j]; j = (j + 1) & mask)
		if (s->noticed[j] == h)
			return;
	if (s->nnoticed++ == CW_SYM_MAX_NOTICES) {
		snprintf(msg, sizeof(msg),
			 "symbolizer: more than %d paths refused; the rest are only counted "
			 "(symbol_objects_refused)", CW_SYM_MAX_NOTICES);
		s->o.notice(s->o.notice_ctx, msg);
		return;
	}
	s->noticed[j] = h;
	n = (size_t)snprintf(msg, sizeof(msg), "symbolizer: ");
	/* the path is the trace's: its bytes reach a terminal escaped */
	n += cw_esc_snprint(msg + n, PATH_MAX, path);
	snprintf(msg + n, sizeof(msg) - n, ": not read: %s", why);
	s->o.notice(s->o.notice_ctx, msg);
}

/*
 * Kernel filesystems whose regular files are interfaces, not stored
 * bytes: opening or reading one can act (a tracefs pipe consumes events)
 * or read memory (/proc/PID/mem, whose lstat is a regular file of size 0,
 * reads the analyzer's own address space when PID is self). No object a
 * process maps lives on one of these.
 */
static int pseudo_fs(const struct statfs *sf)
{
	switch ((unsigned long)sf->f_type) {
	case PROC_SUPER_MAGIC:
	case SYSFS_MAGIC:
	case DEBUGFS_MAGIC:
	case TRACEFS_MAGIC:
	case SECURITYFS_MAGIC:
	case SELINUX_MAGIC:
	case SMACK_MAGIC:
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
	case BPF_FS_MAGIC:
	case PSTOREFS_MAGIC:
	case EFIVARFS_MAGIC:
	case DEVPTS_SUPER_MAGIC:
	case BINFMTFS_MAGIC:
	case NSFS_MAGIC:
	case 0x62656570: /* configfs: not in linux/magic.h */
	case 0x65735543: /* fusectl */
		return 1;
	default:
		return 0;
	}
}

/*
 * NULL: @path, lstat'ed into *@st, may be opened; else why not. Nothing is
 * opened to find out. A file too small for an ELF header is no object
 * either (and the size of most pseudo-files is 0).
 */
static const char *check_path(const char *path, const struct stat *st)
{
	struct statfs sf;

	if (S_ISLNK(st->st_mode))
		return "a symbolic link (the kernel records resolved paths)";
	if (S_ISFIFO(st->st_mode))
		return "a FIFO, not a regular file";
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		return "a device, not a regular file";
	if (S_ISDIR(st->st_mode))
		return "a directory, not a regular file";
	if (S_ISSOCK(st->st_mode))
		return "a socket, not a regular file";
	if (!S_ISREG(st->st_mode))
		return "not a regular file";
	if (!statfs(path, &sf) && pseudo_fs(&sf))
		return "a file of a kernel pseudo-filesystem (procfs, sysfs, ...), not an object";
	if (st->st_size < (off_t)sizeof(Elf32_Ehdr))
		return "too small for an ELF file";
	return NULL;
}

static int open_checked(struct cw_sym *s, const char *path, const uint8_t *bid, int bid_len,
			Elf **elfp)
{
	const char *why;
	struct stat ls, fs;
	int fd;

	if (lstat(path, &ls))
		return -1; /* missing (the debug directory has no copy): no refusal */
	why = check_path(path, &ls);
	if (why) {
		notice(s, path, why);
		errno = EINVAL;
		return -1;
	}
	/*
	 * The path can change between the check and the open, so the open
	 * is made harmless for whatever it may find by then: O_NOFOLLOW (a
	 * symlink fails), O_NONBLOCK (a FIFO does not wait for a writer, a
	 * file under a lease does not wait for its holder), O_NOCTTY (a
	 * terminal does not become ours), and the fstat below makes sure
	 * the file opened is the one checked before a byte of it is read.
	 */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		if (err == ELOOP || err == ENXIO || err == EWOULDBLOCK) {
			notice(s, path, "replaced since it was checked, or under a lease");
			err = EINVAL;
		}
		errno = err; /* EMFILE and the like: the caller tries again later */
		return -1;
	}
	if (fstat(fd, &fs) || !S_ISREG(fs.st_mode) || fs.st_dev != ls.st_dev ||
	    fs.st_ino != ls.st_ino) {
		notice(s, path, "replaced since it was checked");
		goto refuse;
	}
	if (check_file(fd, bid, bid_len, elfp))
		return fd;
	notice(s, path,
	       bid_len ? "not an ELF object with the recorded build-id" : "not an ELF object");
refuse:
	close(fd);
	errno = EINVAL;
	return -1;
}

static void hex_of(const uint8_t *b, int len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < len; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * len] = '\0';
}

static int debug_path(const struct cw_sym *s, const uint8_t *bid, int bid_len, char *buf,
		      size_t len)
{
	char hex[41];
	int n;

	if (bid_len < 2)
		return -1;
	hex_of(bid, bid_len, hex);
	n = snprintf(buf, len, "%s/.build-id/%.2s/%s.debug", s->debug_dir, hex, hex + 2);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int cw_sym__open_object(struct cw_sym *s, const char *path, const uint8_t *bid, int bid_len,
			Elf **elfp)
{
	char dbg[1024];
	int fd = -1;

	if (path && path[0] == '/')
		fd = open_checked(s, path, bid, bid_len, elfp);
	/* Without a recorded build-id nothing ties a debug file to the
	 * mapping, so the debug directory is tried only with one. */
	if (fd < 0 && !debug_path(s, bid, bid_len, dbg, sizeof(dbg)))
		fd = open_checked(s, dbg, bid, bid_len, elfp);
	return fd;
}

/* Separate debug info for a module, by its build-id only. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct cw_sym *s = *userdata;
	const unsigned char *bits;
	GElf_Addr vaddr;
	char dbg[1024];
	int len, fd;

	(void)modname;
	(void)base;
	(void)file_name;
	/* libdw asks the same callback for a dwz alt file (a debuglink name
	 * with no CRC); alt files are not followed: the names they hold are
	 * shared ones, and the symbol table still names the function. */
	if (!s || (debuglink_file && !debuglink_crc))
		return -1;
	len = dwfl_module_build_id(mod, &bits, &vaddr);
	if (len <= 0 || len > 20 || debug_path(s, bits, len, dbg, sizeof(dbg)))
		return -1;
	fd = open_checked(s, dbg, bits, len, NULL);
	if (fd >= 0) {
		*debuginfo_file_name = strdup(dbg);
		if (!*debuginfo_file_name) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

static int find_elf_none(Dwfl_Module *mod, void **userdata, const char *modname,
			 Dwarf_Addr base, char **file_name, Elf **elfp)
{
	/* modules are always reported with their file already open */
	(void)mod;
	(void)userdata;
	(void)modname;
	(void)base;
	(void)file_name;
	(void)elfp;
	return -1;
}

const Dwfl_Callbacks cw_sym__dwfl_callbacks = {
	.find_elf = find_elf_none,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

void cw_sym__adopt_module(struct cw_sym *s, Dwfl_Module *mod)
{
	void **ud;

	dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	*ud = s;
}

int cw_sym__load_bias(Elf *elf, uint64_t start, uint64_t pgoff, uint64_t *bias)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* the mapping starts on the page holding the segment's start */
		if (pgoff >= (ph.p_offset & ~(uint64_t)4095) && pgoff < ph.p_offset + ph.p_filesz) {
			*bias = start - pgoff - (ph.p_vaddr - ph.p_offset);
			return 0;
		}
	}
	return -1;
}

static void read_loads(struct obj *o, Elf *elf)
{
	size_t n;

	o->nloads = 0;
	if (elf_getphdrnum(elf, &n))
		return;
	for (size_t i = 0; i < n && o->nloads < MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		o->loads[o->nloads++] = (struct load){ ph.p_offset, ph.p_filesz, ph.p_vaddr };
	}
}

/* The ELF vaddr of file offset @off. */
static int vaddr_of(const struct obj *o, uint64_t off, uint64_t *vaddr)
{
	for (int i = 0; i < o->nloads; i++) {
		const struct load *l = &o->loads[i];

		if (off >= l->off && off - l->off < l->filesz) {
			*vaddr = l->vaddr + (off - l->off);
			return 0;
		}
	}
	return -1;
}

static struct session *session_open(struct cw_sym *s, struct obj *o)
{
	struct session *ss;
	Elf *elf = NULL;
	int fd;

	errno = 0;
	fd = cw_sym__open_object(s, o->path, o->bid, o->bid_len, &elf);
	if (fd < 0)
		return NULL;
	if (o->state == OBJ_UNTRIED)
		read_loads(o, elf);
	elf_end(elf);
	ss = calloc(1, sizeof(*ss));
	if (!ss)
		goto fail;
	ss->dwfl = dwfl_begin(&cw_sym__dwfl_callbacks);
	if (!ss->dwfl)
		goto fail;
	/* bias 0: module addresses are the object's own vaddrs */
	ss->mod = dwfl_report_elf(ss->dwfl, o->path, o->path, fd, 0, true);
	if (!ss->mod)
		goto fail;
	fd = -1; /* the Dwfl owns it now */
	dwfl_report_end(ss->dwfl, NULL, NULL);
	cw_sym__adopt_module(s, ss->mod);
	ss->o = o;
	o->sess = ss;
	s->st.opened++;
	if (s->nsess >= s->max_sess) {
		struct session *lru = s->sess[0];

		for (size_t i = 1; i < s->nsess; i++)
			if (s->sess[i]->used < lru->used)
				lru = s->sess[i];
		session_close(s, lru);
	}
	ss->slot = s->nsess;
	s->sess[s->nsess++] = ss;
	return ss;
fail:
	if (ss && ss->dwfl)
		dwfl_end(ss->dwfl);
	if (fd >= 0)
		close(fd);
	errno = ss ? EINVAL : ENOMEM;
	free(ss);
	return NULL;
}

static struct session *session_get(struct cw_sym *s, struct obj *o)
{
	struct session *ss = o->sess;

	if (!ss) {
		ss = session_open(s, o);
		/* out of fds or memory says nothing of the object: try it
		 * again next time rather than give it up for good */
		if (!ss && (errno == EMFILE || errno == ENFILE || errno == ENOMEM))
			return NULL;
		o->state = ss && o->nloads ? OBJ_OK : OBJ_UNUSABLE;
		if (o->state == OBJ_UNUSABLE && ss)
			session_close(s, ss);
		if (o->state != OBJ_OK)
			return NULL;
	}
	ss->used = ++s->tick;
	return ss;
}

static int obj_matches(const struct obj *o, const struct cw_mapping *m)
{
	if (o->bid_len != m->build_id_len)
		return 0;
	if (m->build_id_len)
		return !memcmp(o->bid, m->build_id, m->build_id_len);
	return o->path == m->path || (o->path && m->path && !strcmp(o->path, m->path));
}

static struct obj *obj_get(struct cw_sym *s, const struct cw_mapping *m)
{
	uint64_t h = m->build_id_len ? hash_bytes(m->build_id, m->build_id_len)
				     : hash_bytes(m->path, m->path ? strlen(m->path) : 0);
	size_t mask = MAX_OBJECTS * 2 - 1, j;
	struct obj *o;
	char hex[41];

	for (j = h & mask; s->objs[j]; j = (j + 1) & mask)
		if (s->objs[j]->hash == h && obj_matches(s->objs[j], m))
			return s->objs[j];
	if (s->nobjs >= MAX_OBJECTS) {
		clear_objects(s);
		for (j = h & mask; s->objs[j]; j = (j + 1) & mask)
			;
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->hash = h;
	o->bid_len = m->build_id_len;
	memcpy(o->bid, m->build_id, m->build_id_len);
	o->path = intern(s, m->path);
	if (m->build_id_len) {
		hex_of(m->build_id, m->build_id_len, hex);
		o->hex = intern(s, hex);
	}
	/* a path that could not be kept leaves nothing to open */
	o->state = o->path ? OBJ_UNTRIED : OBJ_UNUSABLE;
	s->objs[j] = o;
	s->nobjs++;
	return o;
}

/* --- resolving ---------------------------------------------------------- */

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));

	return n;
}

static int is_function(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_entry_point;
}

/*
 * The functions holding @pc from DWARF: the innermost inlined call first,
 * each with the place it is at (the line at @pc for the innermost, then
 * the call site of the level inside), the real function last.
 */
/*
 * The scopes holding @pc below @parent, outermost first, appended to
 * path[depth..max). One descent that only enters DIEs holding @pc: what
 * dwarf_getscopes and then dwarf_getscopes_die would find (the inlined
 * calls and the function holding them) for a fraction of their walks,
 * which visit the whole unit. Concrete functions sit at the top of a unit
 * or in namespaces, never in types, so types are not entered.
 * @return the new depth.
 */
static int scope_path(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *path, int depth, int max)
{
	Dwarf_Die child;

	if (depth >= max || dwarf_child(parent, &child))
		return depth;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_entry_point:
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
			if (dwarf_haspc(&child, pc) == 1) {
				path[depth] = child;
				return scope_path(&path[depth], pc, path, depth + 1, max);
			}
			break;
		case DW_TAG_namespace:
		case DW_TAG_module: {
			int d = scope_path(&child, pc, path, depth, max);

			if (d > depth)
				return d;
			break;
		}
		default:
			break;
		}
	} while (!dwarf_siblingof(&child, &child));
	return depth;
}

static int resolve_dwarf(struct cw_sym *s, Dwfl_Module *mod, uint64_t pc,
			 struct cw_sym_frame *f, int max)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, &bias), path[64], *chain[64];
	Dwarf_Files *files = NULL;
	int depth, i, k = 0, nf = 0;
	size_t nfiles;

	if (!cu)
		return 0;
	depth = scope_path(cu, pc - bias, path, 0, 64);
	/* innermost first: the inlined calls, then the function holding
	 * them (blocks are not frames) */
	for (i = depth - 1; i >= 0; i--) {
		if (!is_function(&path[i]))
			continue;
		chain[nf++] = &path[i];
		if (dwarf_tag(&path[i]) != DW_TAG_inlined_subroutine)
			break;
	}
	if (dwarf_getsrcfiles(cu, &files, &nfiles))
		files = NULL;
	for (k = 0; k < nf && k < max; k++) {
		/* too deep: the innermost calls, and the real function last */
		int p = k == max - 1 ? nf - 1 : k;
		Dwarf_Die *d = chain[p];
		Dwarf_Attribute a;
		Dwarf_Word cf, cl;

		f[k].function = intern(s, die_name(d));
		f[k].inlined = dwarf_tag(d) == DW_TAG_inlined_subroutine;
		if (p == 0) {
			Dwfl_Line *line = dwfl_module_getsrc(mod, pc);

			if (line)
				f[k].file = intern(s, dwfl_lineinfo(line, NULL, &f[k].line, NULL,
								     NULL, NULL));
			continue;
		}
		/* where the level inside was called from */
		d = chain[p - 1];
		if (files && !dwarf_formudata(dwarf_attr(d, DW_AT_call_file, &a), &cf))
			f[k].file = intern(s, dwarf_filesrc(files, cf, NULL, NULL));
		if (!dwarf_formudata(dwarf_attr(d, DW_AT_call_line, &a), &cl))
			f[k].line = (int)cl;
	}
	return k;
}

static int resolve(struct cw_sym *s, struct session *ss, uint64_t vaddr, int is_return,
		   struct cw_sym_frame *f, int max)
{
	uint64_t pc = is_return && vaddr ? vaddr - 1 : vaddr;
	int n;

	memset(f, 0, (size_t)max * sizeof(*f));
	n = resolve_dwarf(s, ss->mod, pc, f, max);
	if (n && !f[n - 1].function) {
		/* a DWARF subprogram without a name: the symbol table's */
		GElf_Off off;
		GElf_Sym sym;

		f[n - 1].function = intern(s, dwfl_module_addrinfo(ss->mod, pc, &off, &sym, NULL,
								    NULL, NULL));
	}
	if (!n) {
		GElf_Off off;
		GElf_Sym sym;
		Dwfl_Line *line = dwfl_module_getsrc(ss->mod, pc);

		f[0].function = intern(s, dwfl_module_addrinfo(ss->mod, pc, &off, &sym, NULL,
								NULL, NULL));
		if (line)
			f[0].file = intern(s, dwfl_lineinfo(line, NULL, &f[0].line, NULL, NULL,
							     NULL));
		n = 1;
	}
	/* the module is the mapping's, set by the caller: the object (and
	 * so this cache entry) is shared by every path of its build-id */
	for (int i = 0; i < n; i++) {
		f[i].address = vaddr;
		f[i].build_id = ss->o->hex;
	}
	return n;
}

static int unresolved(struct cw_sym *s, const struct cw_mapping *m, const struct obj *o,
		      uint64_t addr, struct cw_sym_frame *out)
{
	memset(out, 0, sizeof(*out));
	out->address = addr;
	if (m)
		out->module = m->path;
	if (o)
		out->build_id = o->hex;
	s->st.unresolved++;
	return 1;
}

static size_t cache_slot(const struct obj *o, uint64_t off, int is_return)
{
	return cw_mix64((uint64_t)(uintptr_t)o ^ (off * 0x9e3779b97f4a7c15ull) ^ (uint64_t)is_return) &
	       (CACHE_SLOTS - 1);
}

/* Out of room: start the cache afresh, the simplest bound that keeps a
 * hot working set (it refills within a few thousand lookups). */
static void cache_reset(struct cw_sym *s)
{
	memset(s->cache, 0, CACHE_SLOTS * sizeof(*s->cache));
	s->ncache = 0;
	s->pool_used = 0;
}

static int copy_out(const struct cw_sym_frame *f, int n, struct cw_sym_frame *out, int max)
{
	if (n <= max) {
		memcpy(out, f, (size_t)n * sizeof(*f));
		return n;
	}
	/* the innermost calls and, last, the function that holds them */
	memcpy(out, f, (size_t)(max - 1) * sizeof(*f));
	out[max - 1] = f[n - 1];
	return max;
}

int cw_sym__user(struct cw_sym *s, const struct cw_mapping *m, uint64_t addr, int is_return,
		 struct cw_sym_frame *out, int max)
{
	struct cw_sym_frame f[MAX_FRAMES];
	struct session *ss;
	struct centry *e;
	struct obj *o;
	uint64_t off, vaddr;
	size_t j;
	int n;

	if (max < 1)
		return 0;
	is_return = !!is_return;
	s->st.lookups++;
	if (!m || addr < m->start || addr >= m->end)
		return unresolved(s, NULL, NULL, addr, out);
	o = obj_get(s, m);
	if (!o || o->state == OBJ_UNUSABLE)
		return unresolved(s, m, o, addr, out);
	off = addr - m->start + m->pgoff;
	for (j = cache_slot(o, off, is_return); (e = &s->cache[j])->o;
	     j = (j + 1) & (CACHE_SLOTS - 1)) {
		if (e->o == o && e->off == off && e->is_return == is_return) {
			s->st.hits++;
			n = copy_out(&s->pool[e->first], e->n, out, max);
			goto own_path;
		}
	}
	ss = session_get(s, o);
	if (!ss)
		return unresolved(s, m, o, addr, out);
	if (vaddr_of(o, off, &vaddr))
		return unresolved(s, m, o, addr, out);
	n = resolve(s, ss, vaddr, is_return, f, MAX_FRAMES);
	if (s->ncache * 4 >= CACHE_SLOTS * 3 || s->pool_used + n > CACHE_FRAMES) {
		cache_reset(s);
		for (j = cache_slot(o, off, is_return); s->cache[j].o; j = (j + 1) & (CACHE_SLOTS - 1))
			;
	}
	e = &s->cache[j];
	*e = (struct centry){ o, off, s->pool_used, (uint8_t)n, (uint8_t)!!is_return };
	memcpy(&s->pool[s->pool_used], f, (size_t)n * sizeof(*f));
	s->pool_used += (uint32_t)n;
	s->ncache++;
	n = copy_out(f, n, out, max);
own_path:
	for (int i = 0; i < n; i++)
		out[i].module = m->path;
	if (!out[n - 1].function)
		s->st.unresolved++;
	return n;
}

void cw_sym__kernel(struct cw_sym *s, uint64_t addr, struct cw_sym_frame *out)
{
	const char *mod = NULL;
	uint64_t off = 0;
	const char *name = cw_ksyms__lookup_module(s->o.ksyms, addr, &off, &mod);

	memset(out, 0, sizeof(*out));
	out->address = addr;
	out->module = "[kernel]";
	s->st.lookups++;
	if (!name || off > KERNEL_MAX_OFF) {
		s->st.unresolved++;
		return;
	}
	out->function = intern(s, name);
	if (mod) {
		char buf[80];

		snprintf(buf, sizeof(buf), "[%s]", mod);
		out->module = intern(s, buf);
	}
}

void cw_sym__stats(const struct cw_sym *s, struct cw_sym_stats *st)
{
	*st = s->st;
}
