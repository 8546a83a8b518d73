// SPDX-License-Identifier: MIT
/*
 * The objects uprobes are attached to; see uobj.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <bpf/libbpf.h>

#include "lib/grow.h"
#include "schema/events.h"
#include "capture/log.h"
#include "trace/writer.h"
#include "capture/uobj.h"

/* Distinct objects remembered: past it new objects are not looked at
 * (bounds a system-wide capture's memory and /proc scan). */
#define MAX_OBJECTS 65536

struct obj_id {
	dev_t dev;
	ino_t ino;
};

struct uobj {
	pid_t self;
	struct {
		uobj_look_fn look;
		void *ctx;
	} watch[UOBJ_MAX_WATCHERS];
	unsigned nwatch;
	struct obj_id *objs;
	size_t nobjs, cap_objs;
	bool objs_full;
	bool stopped; /* detaching: mappings reported after that are ignored */
	pthread_t detacher;
	bool detacher_started;
	int detach_done; /* atomic: the detacher has finished */
	struct bpf_link **links;
	size_t nlinks, cap_links;
	uint8_t *pending; /* records not yet written */
	size_t npending, cap_pending;
};

struct uobj *uobj__new(pid_t self)
{
	struct uobj *o = calloc(1, sizeof(*o));

	if (o)
		o->self = self;
	return o;
}

int uobj__watch(struct uobj *o, uobj_look_fn look, void *ctx)
{
	if (o->nwatch == UOBJ_MAX_WATCHERS)
		return -ENOSPC;
	o->watch[o->nwatch].look = look;
	o->watch[o->nwatch++].ctx = ctx;
	return 0;
}

/* First sight of the object? Remembers it. */
static bool first_sight(struct uobj *o, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < o->nobjs; i++)
		if (o->objs[i].dev == dev && o->objs[i].ino == ino)
			return false;
	if (o->nobjs >= MAX_OBJECTS || cw_grow(&o->objs, &o->cap_objs, o->nobjs + 1, sizeof(*o->objs))) {
		if (!o->objs_full)
			cw_notice("uprobes: more than %d objects; later ones are not attached",
				  MAX_OBJECTS);
		o->objs_full = true;
		return false;
	}
	o->objs[o->nobjs++] = (struct obj_id){ dev, ino };
	return true;
}

int uobj__add_file(struct uobj *o, const char *path, const char *open_path)
{
	struct stat st;
	int fd, err = 0;

	if (o->stopped)
		return 0;
	fd = open(open_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* a FIFO or device named by a mapping is never read (docs/model.md §7) */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !first_sight(o, st.st_dev, st.st_ino)) {
		close(fd);
		return 0;
	}
	for (unsigned i = 0; i < o->nwatch; i++) {
		int e = o->watch[i].look(o->watch[i].ctx, o, fd, path, open_path);

		err = err ?: e;
	}
	close(fd);
	return err;
}

/* The path of [@start, @end) of @pid to open: @path when it is that file
 * (same device and inode as the mapping's link), else the link. */
static void open_path_of(pid_t pid, uint64_t start, uint64_t end, const char *path, char *buf,
			 size_t len)
{
	struct stat a, b;

	snprintf(buf, len, "/proc/%d/map_files/%llx-%llx", pid, (unsigned long long)start,
		 (unsigned long long)end);
	if (!stat(buf, &a) && !stat(path, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		snprintf(buf, len, "%s", path);
}

int uobj__add_pid(struct uobj *o, pid_t pid)
{
	char buf[PATH_MAX + 256], file[64], open_path[PATH_MAX + 64];
	FILE *f;

	if (pid == o->self)
		return 0;
	snprintf(file, sizeof(file), "/proc/%d/maps", pid);
	f = fopen(file, "re");
	if (!f)
		return -ESRCH;
	while (fgets(buf, sizeof(buf), f)) {
		unsigned long long start, end, ino;
		char perms[8];
		int at = 0;

		buf[strcspn(buf, "\n")] = 0;
		if (sscanf(buf, "%llx-%llx %7s %*x %*x:%*x %llu %n", &start, &end, perms, &ino, &at) < 4 ||
		    !at || perms[2] != 'x' || !ino || buf[at] != '/')
			continue;
		open_path_of(pid, start, end, buf + at, open_path, sizeof(open_path));
		uobj__add_file(o, buf + at, open_path);
	}
	fclose(f);
	return 0;
}

int uobj__add_command(struct uobj *o, const char *argv0)
{
	char buf[PATH_MAX], *path, *save = NULL;
	const char *env = getenv("PATH");
	char *copy;

	if (strchr(argv0, '/'))
		return uobj__add_file(o, argv0, argv0) == -ENOMEM ? -ENOMEM : 0;
	/* execvp's search: PATH, or the system's default path. */
	if (!env) {
		size_t n = confstr(_CS_PATH, NULL, 0);

		copy = n ? malloc(n) : NULL;
		if (copy)
			confstr(_CS_PATH, copy, n);
	} else {
		copy = strdup(env);
	}
	if (!copy)
		return -ENOMEM;
	for (path = strtok_r(copy, ":", &save); path; path = strtok_r(NULL, ":", &save)) {
		struct stat st;

		snprintf(buf, sizeof(buf), "%s/%s", *path ? path : ".", argv0);
		if (!stat(buf, &st) && S_ISREG(st.st_mode) && !access(buf, X_OK)) {
			uobj__add_file(o, buf, buf);
			break;
		}
	}
	free(copy);
	return 0;
}

int uobj__add_system(struct uobj *o)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d)) && !o->objs_full) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (!*end && pid > 0)
			uobj__add_pid(o, (pid_t)pid);
	}
	closedir(d);
	return 0;
}

void uobj__mapped(void *ctx, uint32_t pid, uint64_t start, uint64_t end, const char *path)
{
	struct uobj *o = ctx;
	char open_path[PATH_MAX + 64];

	if (path[0] != '/' || (pid_t)pid == o->self)
		return;
	open_path_of((pid_t)pid, start, end, path, open_path, sizeof(open_path));
	uobj__add_file(o, path, open_path);
}

int uobj__keep(struct uobj *o, struct bpf_link *l)
{
	if (cw_grow(&o->links, &o->cap_links, o->nlinks + 1, sizeof(*o->links))) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	o->links[o->nlinks++] = l;
	return 0;
}

void *uobj__queue(struct uobj *o, size_t len)
{
	void *p;

	if (cw_grow(&o->pending, &o->cap_pending, o->npending + len, 1))
		return NULL;
	p = o->pending + o->npending;
	memset(p, 0, len);
	o->npending += len;
	return p;
}

int uobj__flush(struct uobj *o, struct cw_writer *w)
{
	size_t off = 0;
	int err = 0;

	if (!o || !o->npending) /* pending is NULL before the first record */
		return 0;
	while (off < o->npending) {
		const struct cw_hdr *h = (const void *)(o->pending + off);

		err = cw_writer__append(w, h, h->size);
		if (err)
			break;
		off += h->size;
	}
	memmove(o->pending, o->pending + off, o->npending - off);
	o->npending -= off;
	return err;
}

/* Only the detacher touches the links (and libbpf's USDT state) once it
 * runs: the capture's thread no longer attaches (stopped). */
static void *detach_all(void *arg)
{
	struct uobj *o = arg;

	while (o->nlinks)
		bpf_link__destroy(o->links[--o->nlinks]);
	__atomic_store_n(&o->detach_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

void uobj__detach_begin(struct uobj *o)
{
	if (!o || o->stopped)
		return;
	o->stopped = true;
	o->detacher_started = !pthread_create(&o->detacher, NULL, detach_all, o);
	if (!o->detacher_started)
		detach_all(o);
}

bool uobj__detaching(struct uobj *o)
{
	return o && o->detacher_started && !__atomic_load_n(&o->detach_done, __ATOMIC_ACQUIRE);
}

void uobj__free(struct uobj *o)
{
	if (!o)
		return;
	if (o->detacher_started)
		pthread_join(o->detacher, NULL);
	o->stopped = true;
	detach_all(o);
	free(o->links);
	free(o->objs);
	free(o->pending);
	free(o);
}
