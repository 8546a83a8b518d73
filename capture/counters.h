/* SPDX-License-Identifier: MIT */
/*
 * The capture's counters at its close: what it wrote, lost, refused and
 * attached, each line a counter's field, its key in the FINAL segment
 * (schema/format.md, "Metadata keys"), when the key is written and what
 * it counts (perf's tools/perf/util/events_stats.h is the model). The
 * struct and the loop that writes the keys (capture/meta.c) come from
 * these lines; the summary (capture/status.c) reads the struct. A key is
 * a published name: the analyzer copies it into the database as
 * capture.KEY, so renaming one breaks its readers.
 *
 *   X(field, "key", when, "what it counts")
 *
 * when: CW_CNT_ALWAYS; CW_CNT_NONZERO (only when not 0); CW_CNT_SAMPLING
 * (with the sample plane); CW_CNT_USDT (with the adapter class); CW_CNT_GO
 * (with the go class).
 */
#ifndef CAUSEWAY_CAPTURE_COUNTERS_H
#define CAUSEWAY_CAPTURE_COUNTERS_H

#include <stdint.h>

#define CW_CAPTURE_COUNTERS(X)                                                                     \
	X(events, "events_total", CW_CNT_ALWAYS, "records written")                                \
	X(lost, "events_lost", CW_CNT_ALWAYS, "events lost in the edge and sample rings")          \
	X(map_overflow, "map_overflow", CW_CNT_ALWAYS, "inserts refused by bounded BPF maps")      \
	X(rejected, "records_rejected", CW_CNT_NONZERO,                                            \
	  "records from the BPF programs that were malformed or of no recorded class, not written") \
	X(samples_lost, "samples_lost", CW_CNT_SAMPLING, "the sample ring's part of events_lost")   \
	X(samples_decimated, "samples_decimated", CW_CNT_SAMPLING,                                  \
	  "stacks --sample-budget did not take (not lost: every wait and each CPU sample kept "      \
	  "record their keep)")                                                                   \
	X(mmaps, "mmap_records", CW_CNT_SAMPLING, "mapping records written while capturing")       \
	X(net_receipts, "net_receipts", CW_CNT_NONZERO,                                            \
	  "packets received with a cause slot (written: those that woke a recorded context)")      \
	X(net_written, "net_records", CW_CNT_NONZERO, "records the net class wrote")               \
	X(timer_arms, "timer_arms", CW_CNT_NONZERO,                                                \
	  "timer starts held (written: each with the fire it led to)")                            \
	X(timer_written, "timer_records", CW_CNT_NONZERO, "records the timer class wrote")         \
	X(runs_missed, "bpf_runs_missed", CW_CNT_NONZERO,                                          \
	  "program runs the kernel skipped, the program already running on that CPU: what they "  \
	  "would have written is in no ring and not in events_lost")                              \
	X(usdt_objects, "usdt_objects", CW_CNT_USDT, "ELF objects with USDT notes looked at")      \
	X(usdt_attached, "usdt_probes_attached", CW_CNT_USDT, "probe records written")             \
	X(usdt_failed, "usdt_attach_failed", CW_CNT_USDT,                                          \
	  "probes of known providers that did not attach (each named in a notice)")                \
	X(usdt_skipped, "usdt_probes_skipped", CW_CNT_USDT, "probes of other providers, not attached") \
	X(usdt_deselected, "usdt_probes_deselected", CW_CNT_USDT,                                  \
	  "adapter probes found and left out by --usdt-probes (usdt_probes_off names them)") \
	X(go_binaries, "go_binaries", CW_CNT_GO, "Go binaries attached (each a go_binary record)")  \
	X(go_refused, "go_binaries_refused", CW_CNT_GO,                                            \
	  "Go binaries that cannot be traced as Go (stripped, no DWARF, an older ABI; each named " \
	  "in a notice): their threads are traced as threads")                                   \
	X(go_attached, "go_uprobes_attached", CW_CNT_GO, "uprobes attached in Go binaries")        \
	X(go_failed, "go_attach_failed", CW_CNT_GO, "uprobes in Go binaries that did not attach")

enum cw_cnt_when { CW_CNT_ALWAYS, CW_CNT_NONZERO, CW_CNT_SAMPLING, CW_CNT_USDT, CW_CNT_GO };

struct capture_counters {
#define CW_CAPTURE_COUNTER_FIELD(field, key, when, comment) uint64_t field;
	CW_CAPTURE_COUNTERS(CW_CAPTURE_COUNTER_FIELD)
#undef CW_CAPTURE_COUNTER_FIELD
};

/* How many there are. */
#define CW_CAPTURE_COUNTER_ONE(field, key, when, comment) +1
#define CW_CAPTURE_NCOUNTERS (0 CW_CAPTURE_COUNTERS(CW_CAPTURE_COUNTER_ONE))

#endif /* CAUSEWAY_CAPTURE_COUNTERS_H */
