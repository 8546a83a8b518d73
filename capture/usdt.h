/* SPDX-License-Identifier: MIT */
/*
 * The adapter class's probes (-e usdt, docs/model.md §6): find USDT probes in
 * ELF objects (their .note.stapsdt notes), attach the adapter program
 * (bpf/usdt.bpf.c) to those of the providers the capture knows, and
 * describe each attached probe as a CW_REC_META_USDT record.
 *
 * A USDT probe is not a kernel hook: it is attached per object and per
 * probe, so objects are found as the traced processes map them (at start
 * from /proc/PID/maps, while capturing from the mapping reports of
 * capture/perfev.c) and each is parsed and attached once (by device and
 * inode). Probes are attached for every process that maps the object
 * (pid -1); the BPF program keeps only the traced set's hits.
 */
#ifndef CAUSEWAY_CAPTURE_USDT_H
#define CAUSEWAY_CAPTURE_USDT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_object;
struct cw_writer;
struct usdt;

/*
 * For the adapter class's loaded object @obj (tracer__object()). @self:
 * the capture, whose own mappings are never looked at. @on: which of
 * schema/adapters.h's probes to attach, by index (--usdt-probes; read
 * while attaching, so it must outlive the struct). @return NULL after
 * a message with errno set.
 */
struct usdt *usdt__new(struct bpf_object *obj, pid_t self, const bool *on);

/* Attach the probes of every executable file that process @pid maps.
 * @return 0, or -ESRCH when the process is gone (not an error to stop
 * for). */
int usdt__add_pid(struct usdt *u, pid_t pid);

/*
 * Attach the probes of the ELF file at @path. With @must, a file that is
 * not a readable ELF object is an error (a message, -errno): --usdt named
 * it. @return 0 or a negative errno.
 */
int usdt__add_file(struct usdt *u, const char *path, bool must);

/* The file @argv0 names as execvp(3) would find it (PATH), attached;
 * one not found is left to the exec to complain about. */
int usdt__add_command(struct usdt *u, const char *argv0);

/* System-wide: the objects of every running process (/proc once). */
int usdt__add_system(struct usdt *u);

/*
 * A mapping reported while capturing (perfev_maps_opts.mapped): process
 * @pid mapped [@start, @end) of @path executable.
 */
void usdt__mapped(void *u, uint32_t pid, uint64_t start, uint64_t end, const char *path);

/* Write the probe records of the attaches made since the last call.
 * @return 0 or the writer's negative errno (the records stay queued). */
int usdt__flush(struct usdt *u, struct cw_writer *w);

struct usdt_counts {
	uint64_t objects;  /* ELF objects with USDT notes, of any provider */
	uint64_t attached; /* probes attached */
	uint64_t failed;   /* probes of known providers that did not attach */
	uint64_t skipped;  /* probes of other providers, not attached */
	uint64_t deselected; /* adapter probes found that --usdt-probes leaves out */
};

void usdt__counts(const struct usdt *u, struct usdt_counts *c);

/* One notice with the counts so far ("at start"). */
void usdt__notice(const struct usdt *u, const char *when);

/*
 * The capture is stopping: detach every probe, in a thread of its own.
 * Each detach waits for the kernel's grace period (about 0.1 s a probe
 * here, seconds for PostgreSQL's 55), during which the rings must still
 * be drained. Mappings reported from now on are ignored. NULL ok.
 */
void usdt__detach_begin(struct usdt *u);

/* Is that detach still going? false for NULL. */
bool usdt__detaching(struct usdt *u);

/* Wait for the detach (or detach now, when it was never begun) and free.
 * NULL ok. */
void usdt__free(struct usdt *u);

#endif /* CAUSEWAY_CAPTURE_USDT_H */
