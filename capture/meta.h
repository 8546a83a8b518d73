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

struct cw_writer;
struct ksyms_snap;
struct proc_snap;

/* Append one cw_meta_kv record. @return 0 or a negative errno. */
int meta__put_kv(struct cw_writer *w, uint64_t ts, const char *key, const char *val);
int meta__put_kv_u64(struct cw_writer *w, uint64_t ts, const char *key, uint64_t val);

/* What the META segment says besides what meta.c finds itself. */
struct meta_start {
	int argc;
	char **argv;
	const char *options;	     /* the effective options */
	const char *version;
	const char *classes;	     /* recorded: "sched,..." */
	const char *classes_missing; /* requested, not recorded: "name:why,..." */
	const char *records_missing; /* of recorded classes, not given: "name:why,..." */
	const char *context_method;  /* cw_ctx_method_names */
	bool filtered;		     /* -p or COMMAND: traced_pids is written */
	const pid_t *traced;	     /* the initial traced set (tgids) */
	size_t ntraced;
	int ncpus;
	uint64_t start_ns;
	uint64_t ring_edge_bytes;
	size_t segment_size;		 /* raw bytes per segment; 0: the default */
	const struct ksyms_snap *ksyms;	 /* the kallsyms snapshot, or NULL */
	const char *ksyms_omitted;	 /* why there is none, or NULL */
	/* The sample plane: sample_freq and offcpu are always written, the
	 * other keys and the mappings only when one of them is on. */
	uint64_t sample_freq;	   /* 0: no CPU samples */
	bool offcpu;
	const char *sample_event;  /* what CPU samples tick on */
	uint32_t dwarf_stack_size; /* 0: --call-graph fp */
	uint64_t sample_budget;
	uint64_t sample_ring_bytes;
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
	uint64_t events;       /* records written */
	uint64_t lost;	       /* edge + sample ring loss */
	uint64_t map_overflow; /* bounded BPF maps */
	uint64_t rejected;     /* records from BPF that were not passed on */
	const char *stop_reason;
	bool sampling;	       /* the sample plane was on: the sample keys follow */
	uint64_t samples_lost;
	uint64_t samples_decimated;
	uint64_t mmaps;	       /* mapping records written while capturing */
	bool usdt;	       /* the adapter class was recorded: the usdt keys follow */
	uint64_t usdt_objects, usdt_attached, usdt_failed, usdt_skipped;
};

/* The keys, sealed as the FINAL segment. @return 0 or a negative errno. */
int meta__write_final(struct cw_writer *w, const struct meta_final *f);

/* Record bytes meta__write_final() appends at most. */
size_t meta__final_max(void);

#endif /* CAUSEWAY_CAPTURE_META_H */
