/* SPDX-License-Identifier: MIT */
/*
 * The command line (docs/model.md §2): one struct env, filled by
 * options__parse(), read by everything else.
 */
#ifndef CAUSEWAY_CAPTURE_OPTIONS_H
#define CAUSEWAY_CAPTURE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "schema/adapters.h"
#include "schema/events.h"

#define MAX_PIDS 1024
#define MAX_USDT_PATHS 256

struct env {
	const char *output;
	bool force;
	pid_t pids[MAX_PIDS]; /* -p, as given; main resolves threads */
	size_t npids;
	char **command;
	uint64_t duration_ns;
	unsigned long freq;	    /* -F: CPU samples per second per CPU; 0: none */
	bool no_offcpu;
	uint32_t dwarf_stack;	    /* --call-graph dwarf,SIZE; 0: fp */
	bool call_graph_given;
	uint64_t sample_budget;	    /* off-CPU waits' stacks/s taken at most; 0: no cap */
	uint64_t sample_budget_cpu; /* CPU ticks' (0 unless --sample-budget) */
	bool sample_budget_given;
	uint64_t sample_ring_bytes; /* a power of two */
	bool sample_ring_given;
	uint64_t edge_ring_bytes;   /* a power of two */
	bool events[CW_CLASS_MAX]; /* -e, by CW_CLASS_* */
	bool events_given;
	size_t segment_size;
	uint64_t max_size;
	int ctx_method; /* CW_CTXM_*, or -1: auto */
	const char *usdt_paths[MAX_USDT_PATHS]; /* --usdt, system-wide */
	size_t nusdt;
	/* --usdt-probes: which of schema/adapters.h's probes to attach, by
	 * its index; usdt_probes the list as given, NULL for the default. */
	bool usdt_probe_on[CW_ADAPTER_NPROBES];
	const char *usdt_probes;
	/* --go-probes requests: of the go class's probes only spawns, ends
	 * and net/http requests (capture/golang.c says which) */
	bool go_requests_only;
	bool go_probes_given;
	bool quiet;
	bool verbose;
	int argc;
	char **argv;
};

/* --sample-ring default: at 999 Hz on 8 CPUs, a second of dwarf samples
 * of the default 8 KiB is 64 MiB, drained every 100 ms at the latest and
 * earlier at 1/8 fill. */
#define SAMPLE_RING_DEFAULT (8u << 20)
/* --sample-budget's default, per second and per kind: the knee of
 * bench/truth/budget's curve (docs/truth.md, "The budget curve"). The
 * help text says it too. */
#define SAMPLE_BUDGET_DEFAULT 1000
/* --edge-ring default: at 1M events/s of about 64 bytes, 64 MiB/s, the
 * consumer is woken at 1/8 fill (1 MiB, about 16 ms of events), which
 * leaves it the other 7/8 to drain before a reserve fails. Smaller rings
 * are for measuring loss: it becomes coverage breaks, never a join. */
#define EDGE_RING_DEFAULT (8u << 20)
#define DWARF_STACK_DEFAULT 8192u

/* The sample plane is on: CPU samples or off-CPU stacks. */
#define ENV_SAMPLING(env) ((env)->freq || !(env)->no_offcpu)

/* What options__parse() leaves for main(): go on, or exit. */
#define OPTIONS_GO (-1)

/*
 * Parse @argv into @env (defaults first). --help and --version print and
 * @return 0 (exit 0); bad arguments @return 2 after a message; otherwise
 * OPTIONS_GO.
 */
int options__parse(struct env *env, int argc, char **argv);

/* The effective options as "key=value ..." for the metadata; @classes is
 * the list of classes recorded. */
void options__string(const struct env *env, const char *classes, char *buf, size_t len);

/* The adapter probes --usdt-probes leaves out, "provider:probe,..." for
 * the metadata key usdt_probes_off; "" when none. @return @buf. */
const char *options__usdt_off(const struct env *env, char *buf, size_t len);

/* --go-probes' mode, "all" or "requests", for the metadata key go_probes. */
const char *options__go_probes(const struct env *env);

#endif /* CAUSEWAY_CAPTURE_OPTIONS_H */
