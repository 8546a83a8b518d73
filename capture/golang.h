/* SPDX-License-Identifier: MIT */
/*
 * The go class's probes (-e go, docs/model.md §6.2): find Go binaries among
 * the objects the traced processes map (capture/uobj.h), inspect each
 * (capture/gobin.h: its runtime functions, their argument registers,
 * return instructions and spawn sites, the struct offsets, from its own
 * symbols, code and DWARF), hand bpf/go.bpf.c what it reads them with, attach its programs
 * and describe each binary as a CW_REC_META_GO record. A Go binary that
 * cannot be traced (stripped, no DWARF, the stack ABI) is named in a
 * notice and in the summary, and counted: its threads are traced as
 * threads.
 */
#ifndef CAUSEWAY_CAPTURE_GOLANG_H
#define CAUSEWAY_CAPTURE_GOLANG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_object;
struct cw_hdr;
struct golang;

struct uobj;

/* For the go class's loaded object @obj: it watches the objects of @o
 * (capture/uobj.h), which attaches, queues the records and detaches for
 * it; @requests_only: --go-probes requests (golang.c says which probes).
 * NULL after a message, errno set. */
struct golang *golang__new(struct bpf_object *obj, struct uobj *o, bool requests_only);

/*
 * The drain's record filler (drain__set_filler): a CW_REC_GO_SPAWN gets
 * its start function's name from the binary's symbols, in a copy at @buf
 * (@cap bytes), which is returned; any other record is returned as is.
 */
const struct cw_hdr *golang__fill(void *g, const struct cw_hdr *h, void *buf, size_t cap);

struct golang_counts {
	uint64_t binaries; /* Go binaries attached */
	uint64_t refused;  /* Go binaries that cannot be traced */
	uint64_t attached; /* uprobes attached */
	uint64_t failed;   /* uprobes that did not attach */
};
void golang__counts(const struct golang *g, struct golang_counts *c);

/* One notice with the counts so far ("at start"). */
void golang__notice(const struct golang *g, const char *when);

/* For the summary: the binaries traced as threads, the first few by name
 * and reason; nothing when there is none. */
void golang__summary(const struct golang *g);

/* NULL ok; the probes are the uobj set's to detach. */
void golang__free(struct golang *g);

#endif /* CAUSEWAY_CAPTURE_GOLANG_H */
