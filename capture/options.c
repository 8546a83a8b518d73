// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/format.h"
#include "schema/names.h"
#include "bpf/config.h"
#include "capture/classes.h"
#include "capture/log.h"
#include "capture/options.h"

static void usage(FILE *f)
{
	char classes[128];

	cw_class_edge_list(classes, sizeof(classes));
	fprintf(f,
		"usage: causeway-capture [OPTIONS] [-- COMMAND [ARG...]]\n"
		"  -o, --output FILE     trace file (default causeway.cwt); an existing file is\n"
		"                        refused unless --force; never follows a symlink; mode 0600\n"
		"  -p, --pid PID[,PID]   trace these processes and every descendant they fork;\n"
		"                        a thread id stands for its process; stops when all exited\n"
		"  -- COMMAND ...        start COMMAND, trace it and its descendants, stop when it\n"
		"                        exits, and exit with its status\n"
		"                        (neither -p nor COMMAND: system-wide)\n"
		"  -d, --duration SECS   stop after SECS (a COMMAND still running gets SIGTERM,\n"
		"                        then SIGKILL 2 s later)\n"
		"  -e, --events LIST     edge classes: %s\n"
		"                        (default: all that this build and kernel support)\n"
		"      --segment-size N  uncompressed bytes per segment (default 1M; K/M/G suffixes)\n"
		"      --max-size N      stop cleanly before the file passes N bytes (K/M/G suffixes)\n"
		"  -F, --freq HZ         CPU stack samples per second on each CPU (default 99;\n"
		"                        0 = off), from a cpu-clock event, traced tasks only\n"
		"      --no-offcpu       no off-CPU stacks (by default a task that blocks has its\n"
		"                        stacks recorded at switch-out)\n"
		"      --call-graph MODE fp (default): user stacks by frame pointers; dwarf[,SIZE]:\n"
		"                        the user registers and SIZE bytes of user stack (default\n"
		"                        8192, a multiple of 8, at most 48K), unwound offline\n"
		"      --sample-budget N[,CPU]  stacks taken per second at most: about N of\n"
		"                        off-CPU waits and CPU (default N) of CPU ticks (default:\n"
		"                        1000 of waits, CPU ticks as -F asks); past it CPU samples\n"
		"                        are kept at random and waits lose their stacks, with a\n"
		"                        recorded probability; every wait keeps its exact time\n"
		"                        (0: no cap; edges are never decimated)\n"
		"      --sample-ring SIZE  sample ring buffer bytes, a power of two (default 8M;\n"
		"                        K/M/G suffixes), apart from the edge ring\n"
		"      --edge-ring SIZE  edge ring buffer bytes, a power of two between 4K and 1G\n"
		"                        (default 8M, no loss at 1M events/s; K/M/G suffixes);\n"
		"                        events that find it full are lost and counted\n"
		"      --context-method M  how interrupt context is told apart: auto (default),\n"
		"                        ksym, runqueue, thread_info or none (wakes then have an\n"
		"                        unknown context)\n"
		"      --usdt PATH       system-wide: also attach the adapter probes (providers\n"
		"                        causeway and postgresql) of the ELF file PATH, in every\n"
		"                        process that maps it (repeatable; needs -e usdt)\n"
		"      --usdt-probes LIST  adapter probes to attach (needs -e usdt), items\n"
		"                        applied in order: default (all but postgresql's\n"
		"                        buffer__read__*, which fire on every buffer access),\n"
		"                        all, [PROVIDER:]PROBE with globs (postgresql:buffer*;\n"
		"                        '-' in a name reads '__', as in probes.d), -ITEM to\n"
		"                        leave out (first: from default). Default: default;\n"
		"                        those left out are named in metadata usdt_probes_off\n"
		"      --go-probes MODE  the go class's uprobes on a Go runtime: all (default):\n"
		"                        goroutines made, run, parked, readied and ended, and\n"
		"                        net/http requests; requests: goroutines made and\n"
		"                        ended, and requests, not the scheduler's handoffs\n"
		"                        (no wake or resume edges, samples stay on threads),\n"
		"                        for less cost; in metadata go_probes\n"
		"  -q, --quiet           no status line, no notices, no summary\n"
		"  -v, --verbose         also the notices that say nothing is lost: the context\n"
		"                        method, optional programs the kernel refused while\n"
		"                        their class recorded nothing that needed them\n"
		"      --force           replace an existing regular file\n"
		"  -h, --help            this text\n"
		"      --version         the version and the trace format it writes\n",
		classes);
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': mul = 1ull << 10; end++; break;
	case 'm': case 'M': mul = 1ull << 20; end++; break;
	case 'g': case 'G': mul = 1ull << 30; end++; break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end || (v && mul > UINT64_MAX / v))
		return -EINVAL;
	*out = v * mul;
	return 0;
}

static int parse_pids(struct env *env, const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long v;

		errno = 0;
		v = strtol(tok, &end, 10);
		if (errno || *end || v <= 0 || v > 0x3fffffff) {
			cw_msg("-p: '%s' is not a process id", tok);
			err = -EINVAL;
			break;
		}
		if (env->npids == MAX_PIDS) {
			cw_msg("-p: more than %d processes", MAX_PIDS);
			err = -EINVAL;
			break;
		}
		env->pids[env->npids++] = (pid_t)v;
	}
	free(copy);
	return err;
}

static int parse_events(struct env *env, const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL, known[128];
	int err = 0, n = 0;

	if (!copy)
		return -ENOMEM;
	memset(env->events, 0, sizeof(env->events));
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const struct cw_class_desc *c = classes__find(tok);

		if (!c) {
			cw_class_edge_list(known, sizeof(known));
			cw_msg("-e: unknown event class '%s' (known: %s)", tok, known);
			err = -EINVAL;
			break;
		}
		env->events[c->id] = true;
		n++;
	}
	free(copy);
	if (!err && !n) {
		cw_msg("-e: empty class list");
		err = -EINVAL;
	}
	return err;
}

/* Past it, the budget's quota per window x 2^32 would not fit 64 bits. */
#define SAMPLE_BUDGET_MAX 1000000000ull

/* N (both kinds) | N,CPU (waits, CPU ticks) */
static int parse_budget(struct env *env, const char *s)
{
	char *end;
	unsigned long long v[2];

	for (int i = 0; i < 2; i++) {
		errno = 0;
		v[i] = strtoull(s, &end, 10);
		if (errno || end == s || *s == '-' || v[i] > SAMPLE_BUDGET_MAX)
			return -1;
		if (!*end) {
			env->sample_budget = v[0];
			env->sample_budget_cpu = v[i];
			return 0;
		}
		if (i || *end != ',')
			return -1;
		s = end + 1;
	}
	return -1;
}

/* fp | dwarf | dwarf,SIZE */
static int parse_call_graph(struct env *env, const char *s)
{
	uint64_t v = DWARF_STACK_DEFAULT;

	if (!strcmp(s, "fp")) {
		env->dwarf_stack = 0;
		return 0;
	}
	if (strncmp(s, "dwarf", 5) || (s[5] && s[5] != ',')) {
		cw_msg("--call-graph: '%s' is not fp, dwarf or dwarf,SIZE", s);
		return -EINVAL;
	}
#if !defined(__x86_64__)
	cw_msg("--call-graph dwarf: this build copies the user registers of x86_64 only");
	return -ENOTSUP;
#endif
	if (s[5] && (parse_size(s + 6, &v) || v < 8 || v > CW_SAMPLE_MAX_STACK || v % 8)) {
		cw_msg("--call-graph dwarf,SIZE: '%s' is not a multiple of 8 between 8 and %u", s + 6,
		       CW_SAMPLE_MAX_STACK);
		return -EINVAL;
	}
	env->dwarf_stack = (uint32_t)v;
	return 0;
}

/* Set or clear, in @on, the adapter probes item @item names. @return
 * how many it names. */
static size_t usdt_select(bool *on, const char *item, bool set)
{
	char pat[128], *name, *d = pat;
	const char *s = item;
	size_t n = 0;

	if (!strcmp(item, "all") || !strcmp(item, "default")) {
		for (size_t i = 0; i < CW_ADAPTER_NPROBES; i++)
			if (item[0] == 'a' || !cw_adapter_probes[i].on_request) {
				on[i] = set;
				n++;
			}
		return n;
	}
	/* probes.d spells a probe buffer-read-start, its ELF note (and perf
	 * and bpftrace) buffer__read__start; no note name has a '-'. */
	for (; *s && d < pat + sizeof(pat) - 2; s++) {
		if (*s == '-') {
			*d++ = '_';
			*d++ = '_';
		} else {
			*d++ = *s;
		}
	}
	if (*s) /* longer than any name: cut, it could match another */
		return 0;
	*d = 0;
	name = strchr(pat, ':');
	if (name)
		*name++ = 0;
	for (size_t i = 0; i < CW_ADAPTER_NPROBES; i++) {
		const struct cw_adapter_probe *p = &cw_adapter_probes[i];

		if ((!name || !fnmatch(pat, p->provider, 0)) &&
		    !fnmatch(name ? name : pat, p->name, 0)) {
			on[i] = set;
			n++;
		}
	}
	return n;
}

/* --usdt-probes LIST (the help says how it reads). */
static int parse_usdt_probes(struct env *env, const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;
	bool any = false;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	memset(env->usdt_probe_on, 0, sizeof(env->usdt_probe_on));
	if (*s == '-')
		usdt_select(env->usdt_probe_on, "default", true);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		bool set = *tok != '-';

		if (!usdt_select(env->usdt_probe_on, tok + !set, set)) {
			cw_msg("--usdt-probes: '%s' names none of the probes the adapters map "
			       "(schema/adapters.h: causeway:task_spawn, ..., "
			       "postgresql:query__start, ...; or default, all)", tok + !set);
			err = -EINVAL;
			break;
		}
	}
	for (size_t i = 0; i < CW_ADAPTER_NPROBES; i++)
		any |= env->usdt_probe_on[i];
	if (!err && !any) {
		cw_msg("--usdt-probes: '%s' leaves no probe attached (-e without usdt does that)", s);
		err = -EINVAL;
	}
	free(copy);
	return err;
}

static void version(void)
{
	printf("causeway-capture %s (writes trace format %d.%d)\n", CW_VERSION, CW_FORMAT_MAJOR,
	       CW_FORMAT_MINOR);
}

int options__parse(struct env *env, int argc, char **argv)
{
	enum {
		OPT_FORCE = 256,
		OPT_NO_OFFCPU,
		OPT_SEGMENT_SIZE,
		OPT_MAX_SIZE,
		OPT_CONTEXT,
		OPT_CALL_GRAPH,
		OPT_SAMPLE_BUDGET,
		OPT_SAMPLE_RING,
		OPT_EDGE_RING,
		OPT_USDT,
		OPT_USDT_PROBES,
		OPT_GO_PROBES,
		OPT_VERSION
	};
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "freq", required_argument, NULL, 'F' },
		{ "no-offcpu", no_argument, NULL, OPT_NO_OFFCPU },
		{ "events", required_argument, NULL, 'e' },
		{ "segment-size", required_argument, NULL, OPT_SEGMENT_SIZE },
		{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
		{ "context-method", required_argument, NULL, OPT_CONTEXT },
		{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
		{ "sample-budget", required_argument, NULL, OPT_SAMPLE_BUDGET },
		{ "sample-ring", required_argument, NULL, OPT_SAMPLE_RING },
		{ "edge-ring", required_argument, NULL, OPT_EDGE_RING },
		{ "usdt", required_argument, NULL, OPT_USDT },
		{ "usdt-probes", required_argument, NULL, OPT_USDT_PROBES },
		{ "go-probes", required_argument, NULL, OPT_GO_PROBES },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ 0 },
	};
	uint64_t v;
	char *end;
	double secs;
	int c;

	memset(env, 0, sizeof(*env));
	env->output = "causeway.cwt";
	env->freq = 99;
	env->segment_size = CW_SEG_DEFAULT_RAW;
	env->ctx_method = -1;
	env->sample_ring_bytes = SAMPLE_RING_DEFAULT;
	env->sample_budget = SAMPLE_BUDGET_DEFAULT;
	env->edge_ring_bytes = EDGE_RING_DEFAULT;
	env->argc = argc;
	env->argv = argv;
	usdt_select(env->usdt_probe_on, "default", true);

	/* '+': the first non-option starts COMMAND, so its own options are
	 * never taken for ours. */
	while ((c = getopt_long(argc, argv, "+o:p:d:F:e:qvh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg) {
				cw_msg("-o: empty file name");
				return 2;
			}
			env->output = optarg;
			break;
		case OPT_FORCE:
			env->force = true;
			break;
		case 'p':
			if (parse_pids(env, optarg))
				return 2;
			break;
		case 'd':
			errno = 0;
			secs = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(secs > 0) || secs > 1e9) {
				cw_msg("-d: '%s' is not a positive number of seconds", optarg);
				return 2;
			}
			env->duration_ns = (uint64_t)(secs * 1e9);
			break;
		case 'F':
			errno = 0;
			env->freq = strtoul(optarg, &end, 10);
			/* The kernel ticks cpu-clock every 10 us at the most. */
			if (errno || *end || end == optarg || *optarg == '-' || env->freq > 100000) {
				cw_msg("-F: '%s' is not a frequency in Hz between 0 and 100000", optarg);
				return 2;
			}
			break;
		case OPT_NO_OFFCPU:
			env->no_offcpu = true;
			break;
		case 'e':
			if (parse_events(env, optarg))
				return 2;
			env->events_given = true;
			break;
		case OPT_SEGMENT_SIZE:
			if (parse_size(optarg, &v) || v < 4096 || v > CW_SEG_MAX_RAW) {
				cw_msg("--segment-size: '%s' is not a size between 4K and %uM", optarg,
				       CW_SEG_MAX_RAW >> 20);
				return 2;
			}
			env->segment_size = (size_t)v;
			break;
		case OPT_MAX_SIZE:
			if (parse_size(optarg, &v) || v < 64 * 1024) {
				cw_msg("--max-size: '%s' is not a size of at least 64K", optarg);
				return 2;
			}
			env->max_size = v;
			break;
		case OPT_CONTEXT:
			env->ctx_method = strcmp(optarg, "auto") ?
				cw_name_find(cw_ctx_method_names, CW_CTXM_MAX, optarg) : -1;
			if (env->ctx_method < 0 && strcmp(optarg, "auto")) {
				cw_msg("--context-method: '%s' is not auto, ksym, runqueue, thread_info "
				       "or none", optarg);
				return 2;
			}
			break;
		case OPT_CALL_GRAPH:
			if (parse_call_graph(env, optarg))
				return 2;
			env->call_graph_given = true;
			break;
		case OPT_SAMPLE_BUDGET:
			if (parse_budget(env, optarg)) {
				cw_msg("--sample-budget: '%s' is not N[,CPU], numbers of stacks per "
				       "second (0 to %llu)", optarg, SAMPLE_BUDGET_MAX);
				return 2;
			}
			env->sample_budget_given = true;
			break;
		case OPT_SAMPLE_RING:
			if (parse_size(optarg, &v) || v < 4096 || v > (1u << 30) || (v & (v - 1))) {
				cw_msg("--sample-ring: '%s' is not a power of two between 4K and 1G",
				       optarg);
				return 2;
			}
			env->sample_ring_bytes = v;
			env->sample_ring_given = true;
			break;
		case OPT_EDGE_RING:
			/* A BPF ring buffer is a power of two of pages. */
			if (parse_size(optarg, &v) || v < 4096 || v > (1u << 30) || (v & (v - 1))) {
				cw_msg("--edge-ring: '%s' is not a power of two between 4K and 1G",
				       optarg);
				return 2;
			}
			env->edge_ring_bytes = v;
			break;
		case OPT_USDT:
			if (!*optarg || env->nusdt == MAX_USDT_PATHS) {
				cw_msg("--usdt: %s", *optarg ? "too many files" : "empty file name");
				return 2;
			}
			env->usdt_paths[env->nusdt++] = optarg;
			break;
		case OPT_USDT_PROBES:
			if (parse_usdt_probes(env, optarg))
				return 2;
			env->usdt_probes = optarg;
			break;
		case OPT_GO_PROBES:
			if (strcmp(optarg, "all") && strcmp(optarg, "requests")) {
				cw_msg("--go-probes: '%s' is not all or requests (-e without go "
				       "attaches none)", optarg);
				return 2;
			}
			env->go_requests_only = optarg[0] == 'r';
			env->go_probes_given = true;
			break;
		case 'q':
			env->quiet = true;
			break;
		case 'v':
			env->verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION:
			version();
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		env->command = &argv[optind];
	if (env->command && env->npids) {
		cw_msg("-p and COMMAND are exclusive");
		return 2;
	}
	if (!env->events_given)
		for (size_t i = 0; i < CW_CLASS_MAX; i++)
			env->events[i] = true;
	/* -p and COMMAND attach the probes of what their processes map. */
	if (env->nusdt && (env->npids || env->command)) {
		cw_msg("--usdt does nothing with %s: the probes of every object the traced "
		       "processes map are attached already", env->npids ? "-p" : "COMMAND");
		return 2;
	}
	if ((env->nusdt || env->usdt_probes) && !env->events[CW_CLASS_ADAPTER]) {
		cw_msg("%s does nothing without the usdt class (-e ...,usdt)",
		       env->nusdt ? "--usdt" : "--usdt-probes");
		return 2;
	}
	if (env->go_probes_given && !env->events[CW_CLASS_GO]) {
		cw_msg("--go-probes does nothing without the go class (-e ...,go)");
		return 2;
	}
	/* Not an -e class: the sample plane is on by -F and --no-offcpu. */
	env->events[CW_CLASS_SAMPLE] = ENV_SAMPLING(env);
	if (!ENV_SAMPLING(env) &&
	    (env->call_graph_given || env->sample_budget_given || env->sample_ring_given)) {
		cw_msg("%s does nothing with -F 0 --no-offcpu: no samples are recorded",
		       env->call_graph_given ? "--call-graph" :
		       env->sample_budget_given ? "--sample-budget" : "--sample-ring");
		return 2;
	}
	return OPTIONS_GO;
}

void options__string(const struct env *env, const char *classes, char *buf, size_t len)
{
	size_t off = 0;

	off += snprintf(buf + off, len - off, "mode=%s",
			env->command ? "command" : env->npids ? "pid" : "system");
	if (env->npids) {
		off += snprintf(buf + off, len - off, " pids=");
		for (size_t i = 0; i < env->npids && off < len; i++)
			off += snprintf(buf + off, len - off, "%s%d", i ? "," : "", env->pids[i]);
	}
	if (off < len)
		off += snprintf(buf + off, len - off,
				" events=%s freq=%lu offcpu=%d duration_ns=%" PRIu64
				" segment_size=%zu max_size=%" PRIu64 " edge_ring=%" PRIu64
				" context_method=%s",
				classes, env->freq, !env->no_offcpu, env->duration_ns,
				env->segment_size, env->max_size, env->edge_ring_bytes,
				env->ctx_method < 0 ? "auto" : cw_ctx_method_names[env->ctx_method]);
	for (size_t i = 0; i < env->nusdt && off < len; i++)
		off += snprintf(buf + off, len - off, " usdt=%s", env->usdt_paths[i]);
	if (off < len && env->events[CW_CLASS_ADAPTER])
		off += snprintf(buf + off, len - off, " usdt_probes=%s",
				env->usdt_probes ? env->usdt_probes : "default");
	if (off < len && env->events[CW_CLASS_GO])
		off += snprintf(buf + off, len - off, " go_probes=%s", options__go_probes(env));
	if (off < len && ENV_SAMPLING(env))
		snprintf(buf + off, len - off,
			 " call_graph=%s dwarf_stack_size=%" PRIu32 " sample_budget=%" PRIu64
			 " sample_budget_cpu=%" PRIu64 " sample_ring=%" PRIu64,
			 env->dwarf_stack ? "dwarf" : "fp", env->dwarf_stack, env->sample_budget,
			 env->sample_budget_cpu, env->sample_ring_bytes);
}

const char *options__usdt_off(const struct env *env, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (size_t i = 0; i < CW_ADAPTER_NPROBES && off < len; i++)
		if (!env->usdt_probe_on[i])
			off += snprintf(buf + off, len - off, "%s%s:%s", off ? "," : "",
					cw_adapter_probes[i].provider, cw_adapter_probes[i].name);
	return buf;
}

const char *options__go_probes(const struct env *env)
{
	return env->go_requests_only ? "requests" : "all";
}
