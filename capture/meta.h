/* SPDX-License-Identifier: MIT */
/*
 * Metadata records for the capture: key/value pairs, the keys that open
 * a trace (the META segment) and those that close it (the FINAL
 * segment). Writes through the segment writer only; knows nothing of BPF.
 */
#ifndef CAUSEWAY_CAPTURE_META_H
#define CAUSEWAY_CAPTURE_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture/counters.h"

struct cw_writer;
struct env;
struct ksyms_snap;
struct proc_snap;

/* Append one cw_meta_kv record. @return 0 or a negative errno. */
int meta__put_kv(struct cw_writer *w, uint64_t ts, const char *key, const char *val);
int meta__put_kv_u64(struct cw_writer *w, uint64_t ts, const char *key, uint64_t val);

/* What the META segment says besides the command line (struct env)
 * and what meta.c finds itself. */
struct meta_start {
	const struct env *env;	     /* the options, the sample plane's settings */
	const char *classes;	     /* recorded: "sched,..." */
	const char *classes_missing; /* requested, not recorded: "name:why,..." */
	const char *records_missing; /* of recorded classes, not given: "name:why,..." */
	const char *usdt_probes_off; /* with the adapter class: "provider:probe,...", else NULL */
	const char *go_probes;	     /* with the go class: --go-probes' mode, else NULL */
	const char *context_method;  /* cw_ctx_method_names */
	bool filtered;		     /* -p or COMMAND: traced_pids is written */
	const pid_t *traced;	     /* the initial traced set (tgids) */
	size_t ntraced;
	int ncpus;
	uint64_t start_ns;
	const struct ksyms_snap *ksyms;	 /* the kallsyms snapshot, or NULL */
	const char *ksyms_omitted;	 /* why there is none, or NULL */
	const char *sample_event;	 /* what CPU samples tick on */
	/* The mapping snapshot: of map_pids[0..nmap_pids), or with
	 * map_pids NULL of every process but the capture. */
	const pid_t *map_pids;
	size_t nmap_pids;
	/* Records of its own a module adds to the META segment, after the
	 * keys (the adapter class's probes attached at start), or NULL. */
	int (*write_more)(void *ctx, struct cw_writer *w);
	void *more_ctx;
};

/* The keys, then @snap, then the kallsyms snapshot, sealed as the META
 * segment (as several when the snapshot takes it past the segment size).
 * @return 0 or a negative errno. */
int meta__write_start(struct cw_writer *w, const struct meta_start *m, const struct proc_snap *snap);

struct meta_final {
	uint64_t end_ns;
	const char *stop_reason;
	bool sampling;		    /* the sample plane was on: its counters are written */
	bool usdt;		    /* the adapter class was recorded: its counters are written */
	bool go;		    /* the go class was, likewise */
	struct capture_counters c; /* capture/counters.h */
};

/* The keys, sealed as the FINAL segment. @return 0 or a negative errno. */
int meta__write_final(struct cw_writer *w, const struct meta_final *f);

/* The keys meta__write_final() appends at most: capture_end_ns,
 * stop_reason and the counters. */
#define META_FINAL_KEYS (2 + CW_CAPTURE_NCOUNTERS)

/* Record bytes meta__write_final() appends at most. */
size_t meta__final_max(void);

#endif /* CAUSEWAY_CAPTURE_META_H */
