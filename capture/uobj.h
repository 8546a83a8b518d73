/* SPDX-License-Identifier: MIT */
/*
 * The ELF objects the uprobe classes attach to (capture/usdt.c: USDT
 * probes; capture/golang.c: a Go runtime's functions), found as the
 * traced processes map them: at start from /proc/PID/maps, while
 * capturing from the mapping reports of capture/perfev.c. Each object is
 * looked at once (by device and inode) by every class that watches (a
 * Go binary may also have USDT notes), its probes are attached for every
 * process that maps it (the BPF programs keep the traced set's hits), and
 * the records that describe them are queued for the trace. One set serves
 * all the classes: one scan of /proc, one detach.
 *
 * Detaching takes a grace period per probe (about 0.1 s here), during
 * which the rings must still be drained: it runs in a thread of its own.
 */
#ifndef CAUSEWAY_CAPTURE_UOBJ_H
#define CAUSEWAY_CAPTURE_UOBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_link;
struct cw_writer;
struct uobj;

/*
 * Look at the object @path, open as @fd (@open_path: how to open it
 * again, a /proc/PID/map_files link when the path is not the mapped
 * file), seen for the first time. @return 0 or a negative errno, which
 * uobj__add_file returns (-ENOEXEC: not ELF).
 */
typedef int (*uobj_look_fn)(void *ctx, struct uobj *o, int fd, const char *path,
			    const char *open_path);

/* @self is the capture, whose own mappings are never looked at. NULL on
 * ENOMEM. */
struct uobj *uobj__new(pid_t self);

/* A class looks at every object from now on. -ENOSPC past
 * UOBJ_MAX_WATCHERS. */
#define UOBJ_MAX_WATCHERS 4
int uobj__watch(struct uobj *o, uobj_look_fn look, void *ctx);

/* The file at @path (@open_path), looked at unless seen. @return 0 or a
 * negative errno (open, or the first look's that failed). */
int uobj__add_file(struct uobj *o, const char *path, const char *open_path);

/* Every executable file process @pid maps. -ESRCH: it is gone. */
int uobj__add_pid(struct uobj *o, pid_t pid);

/* The file @argv0 names as execvp(3) would find it (PATH). */
int uobj__add_command(struct uobj *o, const char *argv0);

/* System-wide: the objects of every running process (/proc once). */
int uobj__add_system(struct uobj *o);

/* A mapping reported while capturing (perfev_maps_opts.mapped). */
void uobj__mapped(void *o, uint32_t pid, uint64_t start, uint64_t end, const char *path);

/* Keep @l, to be detached at the end. -ENOMEM: it was destroyed. */
int uobj__keep(struct uobj *o, struct bpf_link *l);

/* @len bytes (a multiple of 8) of zeroes queued for the trace, for a
 * record; NULL on ENOMEM. Valid until the next call. */
void *uobj__queue(struct uobj *o, size_t len);

/* Write the queued records. @return 0 or the writer's negative errno
 * (the records stay queued). */
int uobj__flush(struct uobj *o, struct cw_writer *w);

/* Detach in a thread of its own; mappings reported from now on are
 * ignored. NULL ok. */
void uobj__detach_begin(struct uobj *o);
/* Is that detach still going? false for NULL. */
bool uobj__detaching(struct uobj *o);
/* Wait for the detach (or detach now) and free. NULL ok. */
void uobj__free(struct uobj *o);

#endif /* CAUSEWAY_CAPTURE_UOBJ_H */
