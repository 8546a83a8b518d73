// SPDX-License-Identifier: MIT
/*
 * USDT probes; see usdt.h.
 *
 * Which probes: those of the providers in `providers` below, the
 * adapter header's (include/causeway.h) and the built-in adapters'
 * (PostgreSQL's own probes, only those schema/adapters.h lists: the
 * ones the analyzer joins). Other providers are not attached: libc,
 * libstdc++ and the JVM ship probes of their own (setjmp, memory
 * allocation, ...) that fire far more often than anything here and that
 * the analyzer has no mapping for; attaching them would cost every traced
 * program a trap per call for records nobody reads. How many were left
 * out is said (a notice, the metadata key usdt_probes_skipped). Of the
 * adapter's probes, --usdt-probes chooses (by default all but
 * PostgreSQL's per-buffer ones); what it leaves out is counted apart
 * (usdt_probes_deselected), so that a reader can tell "not attached"
 * from "not in the binary".
 *
 * A probe's string argument (a request's name, a query's text; which
 * argument: schema/adapters.h) is copied by the BPF program, which
 * learns which argument it is from the usdt_str_arg map, written here
 * before the attach.
 *
 * Semaphores (include/causeway.h guards every probe with one) are
 * libbpf's: bpf_program__attach_usdt() passes their offsets to the
 * kernel, which raises them in every process that maps the object, now
 * or later, while the probe is attached.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "schema/adapters.h"
#include "lib/grow.h"
#include "schema/events.h"
#include "capture/clock.h"
#include "capture/log.h"
#include "trace/writer.h"
#include "capture/uobj.h"
#include "capture/usdt.h"

#define PAD8(n) (((n) + 7u) & ~(size_t)7u)
#define PATH_MAX_REC 4096
/* The usdt_str_arg map's size (bpf/usdt.bpf.c): ids past it are not
 * attached. */
#define MAX_PROBES 65536
#define NOTE_STAPSDT 3

/* The providers attached. */
static const char *const providers[] = { "causeway", "postgresql" };

/* A probe of one object: its sites share provider and name. */
struct note_probe {
	char *provider, *name;
	uint8_t nargs;
};

struct usdt {
	struct uobj *o;
	struct bpf_program *prog;
	const bool *on; /* by schema/adapters.h index */
	int str_fd;
	uint32_t next_id;
	struct usdt_counts n;
};

static int look(void *ctx, struct uobj *o, int fd, const char *path, const char *open_path);

static bool known_provider(const char *p)
{
	for (size_t i = 0; i < sizeof(providers) / sizeof(providers[0]); i++)
		if (!strcmp(p, providers[i]))
			return true;
	return false;
}

/* Of PostgreSQL's probes only those the analyzer joins: the others are
 * costly and unread (schema/adapters.h). Of the adapter's, those @u
 * chose; causeway probes the table does not list are attached, as a
 * program declares only what it wants traced. Counts what it refuses. */
static bool wanted(struct usdt *u, const char *provider, const char *name)
{
	const struct cw_adapter_probe *p = cw_adapter_probe(provider, name);

	if (p && !u->on[p - cw_adapter_probes]) {
		u->n.deselected++;
		return false;
	}
	if (!p && (!known_provider(provider) || !strcmp(provider, "postgresql"))) {
		u->n.skipped++;
		return false;
	}
	return true;
}

static uint8_t string_arg(const char *provider, const char *name)
{
	const struct cw_adapter_probe *p = cw_adapter_probe(provider, name);

	return p ? p->str_arg : CW_USDT_NO_STR;
}

struct usdt *usdt__new(struct bpf_object *obj, struct uobj *o, const bool *on)
{
	struct usdt *u = calloc(1, sizeof(*u));
	struct bpf_map *map = obj ? bpf_object__find_map_by_name(obj, "usdt_str_arg") : NULL;

	if (!u)
		return NULL;
	u->prog = obj ? bpf_object__find_program_by_name(obj, "handle_usdt") : NULL;
	if (!u->prog || !map) {
		cw_msg("the adapter class's BPF object lacks handle_usdt or usdt_str_arg");
		free(u);
		errno = ENOENT;
		return NULL;
	}
	u->str_fd = bpf_map__fd(map);
	u->on = on;
	u->o = o;
	if (uobj__watch(o, look, u)) {
		free(u);
		errno = ENOSPC;
		return NULL;
	}
	elf_version(EV_CURRENT);
	return u;
}

/* Queue the record of probe @id, attached now. */
static int queue_record(struct usdt *u, uint32_t id, const struct note_probe *p, uint8_t str_arg,
			const char *path)
{
	size_t pl = strlen(p->provider), nl = strlen(p->name), fl = strnlen(path, PATH_MAX_REC);
	size_t len = PAD8(sizeof(struct cw_usdt_probe) + pl + nl + fl);
	struct cw_usdt_probe *r;

	if (pl > 255 || nl > 255 || !(r = uobj__queue(u->o, len)))
		return -ENOMEM;
	r->hdr.type = CW_REC_META_USDT;
	r->hdr.size = (uint16_t)len;
	r->hdr.cpu = 0xffff;
	r->hdr.ts = clock__now();
	r->id = id;
	r->nargs = p->nargs;
	r->str_arg = str_arg;
	r->provider_len = (uint16_t)pl;
	r->name_len = (uint16_t)nl;
	r->path_len = (uint16_t)fl;
	memcpy((char *)(r + 1), p->provider, pl);
	memcpy((char *)(r + 1) + pl, p->name, nl);
	memcpy((char *)(r + 1) + pl + nl, path, fl);
	return 0;
}

/* Attach probe @p of the object at @open_path (named @path). */
static void attach_probe(struct usdt *u, const struct note_probe *p, const char *open_path,
			 const char *path)
{
	LIBBPF_OPTS(bpf_usdt_opts, opts);
	uint8_t str = string_arg(p->provider, p->name), one;
	struct bpf_link *link;
	uint32_t id;

	if (str != CW_USDT_NO_STR && str >= p->nargs)
		str = CW_USDT_NO_STR;
	if (u->next_id + 1 >= MAX_PROBES) {
		u->n.failed++;
		return;
	}
	id = ++u->next_id;
	one = str == CW_USDT_NO_STR ? 0 : str + 1;
	/* Before the attach: the first hit may come at once. */
	if (bpf_map_update_elem(u->str_fd, &id, &one, BPF_ANY)) {
		u->n.failed++;
		return;
	}
	opts.usdt_cookie = id;
	link = bpf_program__attach_usdt(u->prog, -1, open_path, p->provider, p->name, &opts);
	if (!link) {
		cw_notice("usdt: cannot attach %s:%s in %s: %s", p->provider, p->name, path,
			  strerror(errno));
		u->n.failed++;
		return;
	}
	if (uobj__keep(u->o, link)) {
		u->n.failed++;
		return;
	}
	u->n.attached++;
	if (queue_record(u, id, p, str, path))
		cw_notice("usdt: out of memory: no record of probe %s:%s in %s", p->provider,
			  p->name, path);
}

/* Add the sites of one stapsdt note to @probes, merged by name. */
static int add_note(struct note_probe **probes, size_t *n, size_t *cap, const char *desc,
		    size_t len, size_t addr_size)
{
	const char *prov, *name, *args, *end = desc + len;
	uint8_t nargs = 0;

	/* pc, base, semaphore; then three strings */
	if (len < 3 * addr_size + 3)
		return 0;
	prov = desc + 3 * addr_size;
	name = memchr(prov, 0, (size_t)(end - prov));
	args = name ? memchr(name + 1, 0, (size_t)(end - name - 1)) : NULL;
	if (!args || !memchr(args + 1, 0, (size_t)(end - args - 1)))
		return 0;
	name++;
	args++;
	for (const char *s = args; *s;) {
		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		nargs += nargs < 255;
		while (*s && !isspace((unsigned char)*s))
			s++;
	}
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*probes)[i].provider, prov) && !strcmp((*probes)[i].name, name)) {
			if (nargs > (*probes)[i].nargs)
				(*probes)[i].nargs = nargs;
			return 0;
		}
	if (cw_grow(probes, cap, *n + 1, sizeof(**probes)))
		return -ENOMEM;
	(*probes)[*n].provider = strdup(prov);
	(*probes)[*n].name = strdup(name);
	(*probes)[*n].nargs = nargs;
	if (!(*probes)[*n].provider || !(*probes)[*n].name) {
		free((*probes)[*n].provider);
		free((*probes)[*n].name);
		return -ENOMEM;
	}
	(*n)++;
	return 0;
}

/* The probes of the ELF object open at @fd. @return how many, or a
 * negative errno (-ENOEXEC: not ELF). */
static long read_probes(int fd, struct note_probe **probes)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t n = 0, cap = 0, shstrndx, addr_size;
	Elf_Scn *scn = NULL;
	int err = 0;

	*probes = NULL;
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx)) {
		elf_end(e);
		return -ENOEXEC;
	}
	addr_size = gelf_getclass(e) == ELFCLASS32 ? 4 : 8;
	while (!err && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *sname;
		size_t off = 0, name_off, desc_off, next;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		sname = elf_strptr(e, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, ".note.stapsdt"))
			continue;
		d = elf_getdata(scn, NULL);
		while (d && !err && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NOTE_STAPSDT && nh.n_namesz == 8 &&
			    !memcmp((char *)d->d_buf + name_off, "stapsdt", 8))
				err = add_note(probes, &n, &cap, (char *)d->d_buf + desc_off,
					       nh.n_descsz, addr_size);
			off = next;
		}
	}
	elf_end(e);
	return err ? err : (long)n;
}

static void free_probes(struct note_probe *probes, long n)
{
	for (long i = 0; i < n; i++) {
		free(probes[i].provider);
		free(probes[i].name);
	}
	free(probes);
}

/*
 * Object @path (opened as @open_path, a /proc/PID/map_files link when
 * the path itself is not the mapped file): parse its notes once and
 * attach the probes of known providers. @return 0 or a negative errno
 * (-ENOEXEC: not ELF).
 */
static int look(void *ctx, struct uobj *o, int fd, const char *path, const char *open_path)
{
	struct usdt *u = ctx;
	struct note_probe *probes;
	long n;

	(void)o;
	n = read_probes(fd, &probes);
	if (n < 0)
		return (int)n;
	u->n.objects += n > 0;
	for (long i = 0; i < n; i++)
		if (wanted(u, probes[i].provider, probes[i].name))
			attach_probe(u, &probes[i], open_path, path);
	free_probes(probes, n);
	return 0;
}

int usdt__add_file(struct usdt *u, const char *path, bool must)
{
	int err = uobj__add_file(u->o, path, path);

	if (err && must)
		cw_msg("--usdt %s: %s", path, err == -ENOEXEC ? "not an ELF object" : strerror(-err));
	return must ? err : 0;
}

void usdt__counts(const struct usdt *u, struct usdt_counts *c)
{
	*c = u ? u->n : (struct usdt_counts){ 0 };
}

/* Nothing found, nothing attached, nothing failed: nothing to say but
 * with -v. */
void usdt__notice(const struct usdt *u, const char *when)
{
	void (*say)(const char *, ...) = u->n.attached || u->n.objects || u->n.failed ||
						 u->n.skipped || u->n.deselected ?
						 cw_notice : cw_verbose;

	say("usdt %s: %llu probes attached in %llu objects with probes, %llu failed; "
		  "%llu probes of other providers not attached, %llu left out by --usdt-probes",
		  when, (unsigned long long)u->n.attached, (unsigned long long)u->n.objects,
		  (unsigned long long)u->n.failed, (unsigned long long)u->n.skipped,
		  (unsigned long long)u->n.deselected);
}

void usdt__free(struct usdt *u)
{
	free(u);
}
