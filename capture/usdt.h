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

struct uobj;

/*
 * For the adapter class's loaded object @obj (tracer__object()): it
 * watches the objects of @o (capture/uobj.h), which attaches, queues the
 * records and detaches for it. @on: which of schema/adapters.h's probes
 * to attach, by index (--usdt-probes; read while attaching, so it must
 * outlive the struct). @return NULL after a message with errno set.
 */
struct usdt *usdt__new(struct bpf_object *obj, struct uobj *o, const bool *on);

/*
 * Attach the probes of the ELF file at @path. With @must, a file that is
 * not a readable ELF object is an error (a message, -errno): --usdt named
 * it. @return 0 or a negative errno.
 */
int usdt__add_file(struct usdt *u, const char *path, bool must);


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

/* NULL ok; the probes are the uobj set's to detach. */
void usdt__free(struct usdt *u);

#endif /* CAUSEWAY_CAPTURE_USDT_H */
