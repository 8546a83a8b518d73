/* SPDX-License-Identifier: MIT */
/*
 * The go class's probes (-e go, docs/model.md §6.2): find Go binaries among
 * the objects the traced processes map (capture/uobj.h), inspect each
 * (capture/gobin.h: its runtime functions, their argument registers and
 * return instructions, the struct offsets, from its own symbols and
 * DWARF), hand bpf/go.bpf.c what it reads them with, attach its programs
 * and describe each binary as a CW_REC_META_GO record. A Go binary that
 * cannot be traced (stripped, no DWARF, the stack ABI) is named in a
 * notice and counted: its threads are traced as threads.
 */
#ifndef CAUSEWAY_CAPTURE_GOLANG_H
#define CAUSEWAY_CAPTURE_GOLANG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_object;
struct cw_hdr;
struct cw_writer;
struct golang;

/* For the go class's loaded object @obj; @self: the capture. NULL after
 * a message, errno set. */
struct golang *golang__new(struct bpf_object *obj, pid_t self);

/* As uobj.h's: the objects of a process, COMMAND's executable, every
 * process, a mapping reported while capturing. */
int golang__add_pid(struct golang *g, pid_t pid);
int golang__add_command(struct golang *g, const char *argv0);
int golang__add_system(struct golang *g);
void golang__mapped(void *g, uint32_t pid, uint64_t start, uint64_t end, const char *path);

/* Write the binary records of the attaches made since the last call. */
int golang__flush(struct golang *g, struct cw_writer *w);

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

/* As usdt.h's: detach in a thread of its own, wait for it, free. NULL ok. */
void golang__detach_begin(struct golang *g);
bool golang__detaching(struct golang *g);
void golang__free(struct golang *g);

#endif /* CAUSEWAY_CAPTURE_GOLANG_H */
