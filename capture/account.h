/* SPDX-License-Identifier: MIT */
/*
 * Capture accounting (docs/model.md §2.1): the events written (the records
 * drained) and lost (the BPF counters), per ring, per class and per CPU,
 * turned into cw_account records of deltas, periodically and at the close.
 */
#ifndef CAUSEWAY_CAPTURE_ACCOUNT_H
#define CAUSEWAY_CAPTURE_ACCOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "capture/classes.h"

struct cw_writer;
struct account;

struct account_totals {
	uint64_t lost_edge, lost_sample, lost_map;
	uint64_t decimated; /* samples the budget did not keep: not lost */
	/* what the net and timer classes took in, written or not
	 * (bpf/config.h CW_COUNTER_NET_RECEIPTS, CW_COUNTER_TIMER_ARMS) */
	uint64_t net_receipts, timer_arms;
	uint64_t net_written, timer_written; /* records those classes wrote */
	uint64_t edge_written[CW_CLASS_MAX]; /* edge-ring records, per class */
};

/*
 * Account for the classes @sel records on the rings their descriptors
 * name, from the per-CPU counters map @counters_fd, starting at
 * @start_ns; with @follows_alone, also for the forks the traced set
 * refused (the sched class's map slot) when sched's fork program keeps
 * the set without the class recorded. @return NULL with errno set on
 * failure.
 */
struct account *account__new(int counters_fd, int ncpus, uint64_t start_ns,
			     const struct cw_class_sel *sel, bool follows_alone);

/*
 * Append one cw_account record per (ring, class, CPU) with the deltas
 * since the last flush. Edge-ring records of the recorded classes are
 * written even when zero: a window with nothing lost is evidence too.
 * A delta that could not be appended is kept for the next flush.
 * @return 0 or the writer's negative errno.
 */
/* One record @h that BPF wrote on @ring, drained: what the account says
 * was written, counted here rather than by the programs (bpf/causeway.bpf.h
 * cw_count_lost), by the CPU its header names. */
struct cw_hdr;
void account__wrote(struct account *a, uint16_t ring, const struct cw_hdr *h);

int account__flush(struct account *a, struct cw_writer *w, uint64_t now);

/*
 * At the close, with the programs detached: write the runs of edge
 * reservation failures that no successful reservation reported since
 * (bpf/causeway.bpf.h, cw_gap), from the per-CPU map @ring_cpu_fd.
 */
int account__flush_gaps(struct account *a, struct cw_writer *w, int ring_cpu_fd);

/*
 * Count @n events of (@ring, @class) lost on @cpu outside the BPF
 * counters (the perf rings of the mapping events); the next flush writes
 * them with the BPF ones. Ignored for a (ring, class) not accounted.
 */
void account__add_lost(struct account *a, int cpu, uint16_t ring, uint16_t class, uint64_t n);

/* Record bytes and records the close's flushes write at most. */
void account__flush_max(const struct account *a, size_t *bytes, size_t *records);

/* Loss flushed so far. */
void account__totals(const struct account *a, struct account_totals *t);

void account__free(struct account *a);

#endif /* CAUSEWAY_CAPTURE_ACCOUNT_H */
