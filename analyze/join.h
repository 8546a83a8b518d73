/* SPDX-License-Identifier: MIT */
/*
 * The join engine: turns time-ordered records into nodes and edges with
 * generations and confidence labels (docs/model.md §5). No I/O: what it
 * concludes goes to a struct cw_sink, and what it knows about loss comes
 * from a struct cw_breaks built before the join starts.
 */
#ifndef CAUSEWAY_JOIN_H
#define CAUSEWAY_JOIN_H

#include <stddef.h>
#include <stdint.h>
#include "../schema/events.h"
#include "breaks.h"
#include "model.h"
#include "counters.h"

#define CW_NAME_LEN 32

/* A finished node, as it goes into the nodes table. */
struct cw_node {
	uint64_t id;
	uint8_t type;	   /* cw_node_type */
	const char *scope; /* "host", ... */
	uint64_t key;
	uint32_t generation;
	int64_t pid, tid;  /* -1: unknown */
	char name[CW_NAME_LEN];
	/* The whole name when it does not fit name[] (which then holds its
	 * start): a packet's addresses, a long kernel function. NULL
	 * otherwise. Owned by the identity layer. */
	const char *long_name;
	int64_t start_ns, end_ns; /* -1: not observed */
	uint8_t start_seen;
	/* 1: the task belongs to the traced set (-p, COMMAND, or any task
	 * in a system-wide capture); 0: it only appears at the other end of
	 * an edge with a traced task; -1: not a task, or not known. */
	int8_t traced;
};

struct cw_edge {
	/* Given by the identity layer in creation order (1, 2, ...) and
	 * written as edges.id, so that a row written later (a sample's
	 * wake) can name the edge. */
	uint64_t id;
	uint8_t type;	  /* cw_edge_type */
	uint64_t src;	  /* node id; 0: unknown cause (NULL) */
	uint64_t dst;
	uint64_t ts;
	int32_t cpu;	  /* -1: unknown */
	uint8_t source;	  /* cw_source */
	uint8_t confidence;
	const char *reason; /* static string or NULL */
	/* An interrupt-context edge: the tid of the task the interrupt
	 * interrupted (context, never the cause); -1 when none. */
	int64_t interrupted;
	uint64_t addr; /* the futex word of a reason 'futex' edge; 0: none */
	/* The edge that carried the request this one hands on to its src
	 * (carry.h); 0: none, or the src was in the request itself. */
	uint64_t carried_by;
	/* The dst keeps the request it works for: the edge ends a wait on
	 * the dst's own object, which the src only ran (a goroutine's
	 * time.Sleep timer, run by the scheduler on some thread: docs/model.md
	 * §6.2), as a thread's own timer hands it back its own (arm > fire). */
	uint8_t keeps;
};

/* The context plane (docs/model.md §4): a frame, a stack (the sequence of
 * frame ids, leaf first) and a sample, each written once by the sample
 * class (cls_sample.c says when). */
struct cw_frame {
	uint64_t id;
	uint64_t address;
	uint8_t kernel;
	uint8_t inlined;
	int32_t line;	      /* 0: unknown */
	const char *module;   /* NULL: unknown */
	const char *build_id; /* hex, NULL: unknown */
	const char *function; /* NULL: not symbolized */
	const char *file;
};

enum cw_sample_kind { CW_SAMPLE_KIND_CPU, CW_SAMPLE_KIND_OFFCPU };

struct cw_sample_row {
	uint64_t node, thread; /* node ids */
	uint64_t ts;
	int32_t cpu;	       /* -1: unknown */
	uint8_t kind;	       /* cw_sample_kind */
	uint8_t weight_exact;  /* 0: weight is a lower bound (the wait's end was not seen) */
	uint64_t stack;	       /* 0: none (NULL) */
	uint64_t weight;       /* ns */
	double inclusion_probability; /* of the row */
	double stack_probability;     /* of its stack having been taken */
	uint64_t wake;	       /* edge id; 0: NULL */
	/* attribution (docs/model.md §6.1): the request and runtime task the
	 * sample worked for (node ids, 0: NULL), with the confidence of
	 * saying so and why */
	uint64_t request, task;
	uint64_t waker_request; /* off-CPU: the request the ending wake was a handoff of */
	uint64_t carry_edge;	/* reconstructed: the last handoff of the chain (carry.h) */
	uint8_t attr_confidence;
	const char *attr_reason; /* static string or NULL: then attr_chain, if not empty */
	char attr_chain[80];	 /* a reconstructed attribution's chain of handoffs */
};

/* A resource wait (docs/model.md §6, resource_waits; cls_adapter.c says how
 * each column is found). */
struct cw_wait_row {
	uint64_t resource, waiter; /* node ids */
	uint64_t start_ns;
	int64_t end_ns;		   /* -1: the end was not seen */
	uint64_t wake_edge, waker; /* edge and node ids; 0: NULL */
	uint8_t confidence;
	const char *reason;	   /* static string or NULL */
};

/* A block request's row (block_requests, cls_block.c). */
struct cw_block_row {
	uint64_t node; /* its node id */
	uint64_t sector;
	uint64_t issue_ns;
	int64_t start_ns; /* its node's start_ns, -1 when not seen */
	uint32_t bytes;
	const char *op;	/* "WRITE", "FLUSH", ... */
	char dev[24];	/* "major:minor" */
	char flags[40]; /* "PREFLUSH,FUA,SYNC,META", those set; "" for none */
};

/* Objects of one type, name and process that were born and caused
 * nothing (quiet_objects, ident.h's cw_ident__edge_held): counted, not
 * written one row each. */
struct cw_quiet_row {
	uint8_t type;	  /* cw_node_type */
	const char *name; /* NULL: past the bound, every name */
	int64_t pid;	  /* -1: unknown, or past the bound */
	uint64_t count;
};

/* Where the join's conclusions go (the database writer, or a test). The
 * context-plane callbacks, wait, block and quiet may be NULL: those rows are
 * then not written. */
struct cw_sink {
	void *ctx;
	int (*node)(void *ctx, const struct cw_node *n);
	int (*edge)(void *ctx, const struct cw_edge *e);
	int (*exec)(void *ctx, uint64_t node, uint64_t ts, const char *comm, const char *filename);
	int (*frame)(void *ctx, const struct cw_frame *f);
	int (*stack)(void *ctx, uint64_t id, const uint64_t *frames, uint32_t depth);
	int (*sample)(void *ctx, const struct cw_sample_row *s);
	int (*wait)(void *ctx, const struct cw_wait_row *w);
	int (*block)(void *ctx, const struct cw_block_row *b);
	int (*quiet)(void *ctx, const struct cw_quiet_row *q);
};

struct cw_ksyms;

struct cw_join_opts {
	const struct cw_breaks *breaks; /* may be NULL */
	const struct cw_ksyms *ksyms;	/* may be NULL: kernel functions stay addresses */
	size_t max_live;		/* join-state bound; 0: default */
	/* Samples: no libdw at all (frames keep address and module); the
	 * directory of separate debug info (NULL: /usr/lib/debug). */
	int no_symbols;
	const char *debug_dir;
	/* A mapping's path the symbolizer refused to open (once per path:
	 * cw_sym_opts.notice); NULL: only counted (sym_refused). */
	void (*notice)(void *ctx, const char *msg);
	void *notice_ctx;
	/* The edge classes joined: a bit per CW_CLASS_*, 0 for all (the
	 * analyzer's -e). The records of the others are skipped as if the
	 * capture had not recorded them, and their classes name no cause
	 * and no running node. Metadata and samples are always joined. */
	uint32_t classes;
};

/* What the join counted (analyze/counters.h has each counter and its
 * meta key); the rest is for the summary. */
struct cw_join_stats {
	uint64_t records;
	uint64_t nodes[CW_NODE_NTYPES];		/* written, all */
	uint64_t nodes_untraced[CW_NODE_NTYPES]; /* of which outside the traced set */
	uint64_t edges[CW_EDGE_NTYPES][CW_CONF_N];
	uint64_t first_ts, last_ts;
	CW_JOIN_COUNTERS(CW_COUNTER_FIELD)
	/* the classes' own counters, in the order of the classes */
	size_t nclass_counters;
	struct cw_counter_value class_counters[CW_CLASS_COUNTERS_MAX];
};

/* The class counter @key in @st; a key no class keeps aborts. */
uint64_t cw_join_stats__get(const struct cw_join_stats *st, const char *key);

/*
 * Split a metadata key/value record: its key, NUL-terminated, into @key
 * (CW_META_KEY_MAX bytes), and a malloc'd NUL-terminated copy of its value
 * into *val. @return 0, 1 when the record is malformed (nothing read past
 * it, nothing allocated), or -ENOMEM.
 */
#define CW_META_KEY_MAX 256
int cw_meta_kv__split(const struct cw_hdr *h, char *key, char **val);

struct cw_join;
struct cw_join *cw_join__new(const struct cw_sink *sink, const struct cw_join_opts *opts);
/* Feed one record (in timestamp order). @return 0 or a negative errno from
 * the sink. Malformed records are counted, never fatal. */
int cw_join__record(struct cw_join *j, const struct cw_hdr *rec);
/* End of trace: emit every node still live. */
int cw_join__finish(struct cw_join *j);
void cw_join__stats(const struct cw_join *j, struct cw_join_stats *st);
void cw_join__free(struct cw_join *j);

#endif /* CAUSEWAY_JOIN_H */
