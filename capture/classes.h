/* SPDX-License-Identifier: MIT */
/*
 * Edge classes: the unit of -e, of loading and of loss accounting. The
 * table in classes.c is the only place the capture lists them; -e, the
 * notice of missing classes, the metadata and the accounting all iterate
 * it.
 *
 * Adding a class (capture side):
 *  1. schema/: its row in classes.def (number, names, kind, and the
 *     analyzer's class, which the capture does not read), its
 *     record types in records.def, their layouts in events.h,
 *     documented in format.md.
 *  2. bpf/CLASS.bpf.c: its programs, including bpf/causeway.bpf.h (the
 *     shared maps, cw_reserve/cw_submit, cw_context). The Makefile turns
 *     it into CLASS.skel.h by itself.
 *  3. One entry in cw_classes[] (classes.c): the CLASS_bpf__elf_bytes of
 *     that skeleton, every program with the hook it attaches to and its
 *     kind (the probe for kernel support), and the rings it counts on.
 *     The records it may write are those of records.def in its range
 *     that BPF writes (the drain passes on no other).
 * Nothing else in the capture names a class.
 */
#ifndef CAUSEWAY_CAPTURE_CLASSES_H
#define CAUSEWAY_CAPTURE_CLASSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schema/events.h"

/*
 * What a program attaches to, and so how the capture asks the kernel
 * whether it can (probe.h). The kind must match the program's SEC().
 * Prefer tp_btf: a tracefs tracepoint is attached through a perf event,
 * and closing one waits for an RCU tasks-trace grace period, which under
 * load takes seconds per event while the ring fills (bpf/futex.bpf.c).
 */
enum cw_prog_kind {
	CW_PROG_TP_BTF = 0, /* tp: a BTF-enabled tracepoint, "sched_switch" */
	CW_PROG_TRACEPOINT, /* tp: a tracefs tracepoint, "syscalls/sys_enter_futex" */
	CW_PROG_FENTRY,	    /* tp: a kernel function, entered */
	CW_PROG_FEXIT,	    /* tp: a kernel function, returning */
	/* tp: a perf event (PERFEV_SAMPLE_EVENT); the tracer opens one per
	 * online CPU and attaches the program to each */
	CW_PROG_PERF_EVENT,
	/* tp: unused; a uprobe program, attached per probe and per object
	 * by capture/usdt.c (USDT) or capture/golang.c (a Go runtime's
	 * functions), never by the tracer; the probe is for uprobe support */
	CW_PROG_USDT,
};

/* What a program records that a capture may not want: it is loaded only
 * when tracer_opts.features asks for it. */
enum {
	CW_FEAT_CPU_SAMPLES = 0x1, /* -F HZ > 0 */
	CW_FEAT_OFFCPU = 0x2,	   /* not --no-offcpu */
};

/*
 * One BPF program of a class. A tp_btf program is loaded when the
 * kernel's BTF has its tracepoint with between min_args and max_args
 * arguments (0, 0: any), which is how variants for different kernels are
 * told apart; a tracefs tracepoint when tracefs lists it; an fentry or
 * fexit program when the kernel accepts a trial program on its function
 * (some kernels describe the function and still refuse). A class is
 * supported when each hook it does not mark optional has a program that
 * fits.
 *
 * An optional program that cannot be loaded or attached leaves its class
 * recorded without it: rec, when set, is the record type only it writes,
 * which the metadata key records_missing then names (with a notice), so
 * the analyzer knows an absence means "not captured", not "not
 * happened".
 */
struct cw_prog_desc {
	const char *name; /* the program, as named in the BPF object */
	const char *tp;	  /* what it attaches to (see kind), without the btf_trace_ prefix */
	int min_args, max_args;
	bool optional;
	enum cw_prog_kind kind;
	uint16_t rec; /* optional programs: the record type only this one writes, or 0 */
	unsigned feature; /* CW_FEAT_*, or 0: always wanted */
	/* Optional programs: the program of the class, listed (and so
	 * attached) before this one, without which this one does not run,
	 * because what it leaves is that one's to clear (a syscall's enter
	 * and exit, bpf/futex.bpf.c); NULL: none. */
	const char *needs;
	/* A class (CW_CLASS_*; 0: none) whose program on the same hook does
	 * all this one does: not loaded when that class is, so the hook
	 * costs one program run, not two. */
	int done_by;
	/* It keeps the traced set (fork, exit): loaded, writing nothing,
	 * when the capture filters and its class is not recorded, so that
	 * -p follows what the processes fork whatever -e says. */
	bool follows;
};

struct cw_class_desc {
	/* CW_CLASS_*: its names, its kind and its record types are
	 * schema/classes.def's and records.def's */
	int id;
	/* The class's BPF object (a bpftool skeleton's *_bpf__elf_bytes);
	 * NULL: not in this build yet. */
	const void *(*elf_bytes)(size_t *sz);
	const struct cw_prog_desc *progs; /* ends with a NULL name */
	unsigned rings; /* bit per CW_RING_* it counts written/lost on */
};

extern const struct cw_class_desc cw_classes[];
extern const size_t cw_nclasses;

/* What became of a class in this capture. */
enum cw_class_status {
	CW_CLS_OFF = 0,	 /* not requested */
	CW_CLS_OK,	 /* requested, will be recorded */
	CW_CLS_NO_BUILD, /* requested, not in this build */
	CW_CLS_NO_KERNEL /* requested, the kernel lacks what it needs */
};

struct cw_class_state {
	enum cw_class_status status;
	char why[128]; /* NO_KERNEL: what is missing */
};

/* Indexed by CW_CLASS_*. */
struct cw_class_sel {
	struct cw_class_state c[CW_CLASS_MAX];
};

/* The class -e calls @name (cw_class_find_edge: its -e name or its
 * name), or NULL. */
const struct cw_class_desc *classes__find(const char *name);

/*
 * Is @c the sample plane (docs/model.md §2.1's context plane)? It is a class
 * for loading, draining and accounting, not an edge class: -e neither
 * lists nor accepts it, and the classes metadata key does not name it.
 * The capture requests it by -F and --no-offcpu (main.c), and its
 * programs by feature.
 */
bool classes__context_plane(const struct cw_class_desc *c);

/*
 * Mark @sel's requested classes (all when @requested is NULL) OK, or why
 * they cannot be recorded, from the build and the kernel's BTF. Programs
 * of a feature (CW_FEAT_*) not in @features are not required.
 */
void classes__select(struct cw_class_sel *sel, const bool *requested, unsigned features);

/*
 * The requested edge classes of @sel that will be recorded ("sched,..."),
 * or with @missing the requested classes that will not, each with why: "name:build" (not in
 * this build) or "name:kernel" (the kernel lacks what it needs).
 * @return how many there were.
 */
int classes__list(const struct cw_class_sel *sel, bool missing, char *buf, size_t len);

/*
 * classes__select(), then say which requested classes will not be
 * recorded and why (notices), and fill @recorded and @missing as
 * classes__list() does. @return 0, or -1 when none can be recorded,
 * after a message naming them and why (printed even under -q).
 */
int classes__choose(struct cw_class_sel *sel, const bool *requested, unsigned features,
		    char *recorded, char *missing, size_t len);

/*
 * Can program @p be loaded on this kernel? @return 0; -ENOENT when its
 * hook is absent; -EINVAL when a tp_btf tracepoint has an argument count
 * outside [min_args, max_args]; another negative errno when the kernel
 * refuses a program of that kind there (fentry/fexit).
 */
int classes__prog_probe(const struct cw_prog_desc *p);

/* The program of class @c that @p needs (cw_prog_desc.needs), or NULL. */
const struct cw_prog_desc *classes__prog_needs(const struct cw_class_desc *c,
					       const struct cw_prog_desc *p);

/* classes__prog_probe(@p) == 0. */
bool classes__prog_fits(const struct cw_prog_desc *p);

/* In words, why @p cannot be loaded, given @err from classes__prog_probe(). */
void classes__prog_why(const struct cw_prog_desc *p, int err, char *buf, size_t len);

#endif /* CAUSEWAY_CAPTURE_CLASSES_H */
