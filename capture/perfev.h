/* SPDX-License-Identifier: MIT */
/*
 * The perf events of the sample plane: the per-CPU cpu-clock events the
 * CPU sample program runs on, and the per-CPU dummy events whose rings
 * report the executable mappings made while capturing (perf's mmap2
 * records, with build-ids), turned into CW_REC_META_MMAP records.
 * Knows nothing of BPF but file descriptors.
 */
#ifndef CAUSEWAY_CAPTURE_PERFEV_H
#define CAUSEWAY_CAPTURE_PERFEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct account;
struct cw_writer;

/* The event CPU samples are taken on; the metadata key sample_event. */
#define PERFEV_SAMPLE_EVENT "cpu-clock"

/*
 * The online CPUs, from /sys/devices/system/cpu/online, into @cpus (at
 * most @max). @return how many, or a negative errno.
 */
int perfev__online_cpus(int *cpus, int max);

/*
 * Open a cpu-clock event on @cpu that overflows every @period_ns ns of
 * that CPU's time (a fixed period, not a frequency the kernel adjusts).
 * @return its file descriptor, or a negative errno.
 */
int perfev__open_clock(int cpu, uint64_t period_ns);

/* Mapping changes while capturing. */
struct perfev_maps;

struct perfev_maps_opts {
	pid_t self; /* the capture: its mappings are never recorded */
	/* Is process @pid traced? NULL: every process is. */
	bool (*traced)(void *ctx, uint32_t pid);
	void *ctx;
	/* Each executable mapping kept, also told to @mapped (NULL: none)
	 * with @mapped_ctx, before its record is written: the adapter class
	 * attaches the probes of objects mapped while capturing. */
	void (*mapped)(void *ctx, uint32_t pid, uint64_t start, uint64_t end, const char *path);
	void *mapped_ctx;
	/* Report mappings to @mapped only, writing no CW_REC_META_MMAP
	 * records (the sample plane is off: nothing needs them). */
	bool no_records;
};

/*
 * Open a dummy event with a small ring on every online CPU, reporting
 * executable mappings with build-ids on the capture clock. @return the
 * set, or NULL after a message with errno set.
 */
struct perfev_maps *perfev_maps__open(const struct perfev_maps_opts *opts);

/*
 * Write the executable mappings of traced processes reported since the
 * last call as CW_REC_META_MMAP records into @w; records the kernel
 * could not put in a ring (PERF_RECORD_LOST) are counted as sample-stream
 * loss in @acct. @return 0, or the writer's negative errno.
 */
int perfev_maps__read(struct perfev_maps *m, struct cw_writer *w, struct account *acct);

/* Follow process @pid (a traced process at start: COMMAND, a -p one)
 * in the set forks are followed into, so that its mappings are kept even
 * when it has exited, and the BPF traced set forgotten it, by the time
 * the reports are read (a short COMMAND). @return 0 or -ENOMEM. */
int perfev_maps__follow(struct perfev_maps *m, uint32_t pid);

/* Mappings written so far. */
uint64_t perfev_maps__count(const struct perfev_maps *m);

void perfev_maps__free(struct perfev_maps *m);

#endif /* CAUSEWAY_CAPTURE_PERFEV_H */
