// SPDX-License-Identifier: MIT
/*
 * causeway-capture: load the CO-RE BPF programs, drain the edge and sample
 * rings into a segmented trace file (docs/model.md §2).
 *
 * Life of a capture, as main() reads:
 *   signal handlers first (a signal from then on stops the capture
 *   cleanly) -> options -> privilege and BTF (exit 2 naming what is
 *   missing) -> -p targets -> classes (exit 2 when none can be recorded)
 *   -> read /proc/kallsyms -> a temporary output file -> [COMMAND: fork
 *   it, blocked on a pipe] -> load the BPF objects -> fill the traced set
 *   -> attach (with samples: the cpu-clock events too, then the mapping
 *   events) -> snapshot /proc, seal the metadata segment (with the
 *   mapping and kallsyms snapshots) -> release COMMAND and learn
 *   whether its exec worked -> rename the file into place (from here on a
 *   failure is exit 1 and the trace is kept) -> the drain loop -> detach,
 *   drain what is left, stop COMMAND if it still runs, write the final
 *   segment -> the summary.
 *
 * Exit code: 2 when the capture could not start, 1 when it failed while
 * running (the file is closed and kept), else with COMMAND the command's
 * own status (128 + N when signal N killed it), else 0.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "trace/format.h"
#include "bpf/config.h"
#include "capture/account.h"
#include "capture/classes.h"
#include "capture/clock.h"
#include "capture/command.h"
#include "capture/drain.h"
#include "capture/flusher.h"
#include "capture/ksyms.h"
#include "capture/log.h"
#include "capture/loop.h"
#include "capture/meta.h"
#include "capture/options.h"
#include "capture/perfev.h"
#include "capture/probe.h"
#include "capture/procsnap.h"
#include "trace/writer.h"
#include "capture/signals.h"
#include "capture/status.h"
#include "capture/tracer.h"
#include "capture/usdt.h"
#include "lib/outfile.h"

#define TRACED_MAX 65536u

/* Privilege and BTF, before anything else is tried. @return 0 or -1
 * after a message. */
static int can_start(void)
{
	char why[256];

	if (probe__privileges(why, sizeof(why))) {
		cw_msg("cannot load BPF programs: %s", why);
		return -1;
	}
	if (probe__vmlinux_btf()) {
		cw_msg("cannot start: /sys/kernel/btf/vmlinux is missing (kernel built without "
		       "CONFIG_DEBUG_INFO_BTF); CO-RE programs need the kernel's BTF");
		return -1;
	}
	return 0;
}

/*
 * -p: every pid must be a live process. A thread id stands for its
 * process: the traced set holds processes, and a thread alone would
 * match nothing. Duplicates are merged. @return 0 or -1 after a message.
 */
static int resolve_pids(struct env *env)
{
	size_t n = 0;

	for (size_t i = 0; i < env->npids; i++) {
		pid_t tgid = proc_tgid(env->pids[i]);
		bool dup = false;

		if (tgid < 0) {
			cw_msg("-p: no process %d", env->pids[i]);
			return -1;
		}
		if (tgid != env->pids[i])
			cw_notice("-p %d is a thread of process %d: tracing that process", env->pids[i],
				  tgid);
		for (size_t j = 0; j < n; j++)
			dup |= env->pids[j] == tgid;
		if (!dup)
			env->pids[n++] = tgid;
	}
	env->npids = n;
	return 0;
}

/* perfev's filter in filtered mode. */
static bool is_traced(void *tracer, uint32_t pid)
{
	return tracer__is_traced(tracer, pid);
}

/* Put @set[from..to) in the traced set. @return 0 or -1 after a message. */
static int trace_pids(struct tracer *t, const pid_t *set, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		int err = tracer__trace(t, set[i]);

		if (err) {
			cw_msg("cannot add process %d to the traced set: %s", set[i], strerror(-err));
			return -1;
		}
	}
	return 0;
}

/*
 * The kallsyms snapshot, read before the programs attach so the rings do
 * not fill meanwhile; or NULL, with a notice and *@why. Under --max-size
 * it is kept only while its text is at most a quarter of the limit (its
 * raw size bounds its compressed one): the limit is for events.
 */
static struct ksyms_snap *read_ksyms(const struct env *env, const char **why)
{
	static char buf[128];
	struct ksyms_snap *k = ksyms_snap__read("/proc/kallsyms");

	*why = NULL;
	if (!k) {
		snprintf(buf, sizeof(buf), "/proc/kallsyms: %s", strerror(errno));
		*why = buf;
	} else if (ksyms_snap__hidden(k)) {
		*why = "/proc/kallsyms hides the addresses (kernel.kptr_restrict)";
	} else if (env->max_size && ksyms_snap__bytes(k) > env->max_size / 4) {
		snprintf(buf, sizeof(buf), "its %zu bytes are more than a quarter of --max-size",
			 ksyms_snap__bytes(k));
		*why = buf;
	}
	if (!*why)
		return k;
	cw_notice("no kallsyms snapshot: %s", *why);
	ksyms_snap__free(k);
	return NULL;
}

/* The META segment's share of the adapter class: the probes attached
 * at start. */
static int write_usdt(void *u, struct cw_writer *w)
{
	return usdt__flush(u, w);
}

/*
 * The adapter class's probes at start: in COMMAND's executable (its
 * libraries come through the mapping reports once it runs), in what the
 * -p processes and their descendants map, or system-wide in what every
 * process maps and the --usdt files. @return 0, or -1 after a message
 * (a --usdt file that is no ELF object).
 */
static int attach_usdt(struct usdt *u, const struct env *env, const pid_t *traced, size_t ntraced)
{
	if (env->command) {
		usdt__add_command(u, env->command[0]);
	} else if (env->npids) {
		for (size_t i = 0; i < ntraced; i++)
			usdt__add_pid(u, traced[i]);
	} else {
		for (size_t i = 0; i < env->nusdt; i++)
			if (usdt__add_file(u, env->usdt_paths[i], true))
				return -1;
		usdt__add_system(u);
	}
	usdt__notice(u, "at start");
	return 0;
}

/* What the sample plane records, in one line. */
static void notice_sampling(const struct env *env)
{
	char cpu[64] = "", graph[48] = "fp", budget[64] = "";

	if (env->freq)
		snprintf(cpu, sizeof(cpu), "CPU samples at %lu Hz (%s)%s", env->freq,
			 PERFEV_SAMPLE_EVENT, env->no_offcpu ? "" : ", ");
	if (env->dwarf_stack)
		snprintf(graph, sizeof(graph), "dwarf, %u bytes of user stack", env->dwarf_stack);
	if (env->sample_budget)
		snprintf(budget, sizeof(budget), ", at most about %llu samples/s kept",
			 (unsigned long long)env->sample_budget);
	cw_notice("recording %s%s, call graph %s%s", cpu, env->no_offcpu ? "" : "off-CPU stacks",
		  graph, budget);
}

/* Bytes the close needs under --max-size: the last accounting and the
 * final segment, at their worst. */
static uint64_t close_reserve(const struct account *acct)
{
	size_t bytes, records;

	account__flush_max(acct, &bytes, &records);
	return cw_writer__worst_case(bytes, records) + cw_writer__worst_case(meta__final_max(), 13);
}

int main(int argc, char **argv)
{
	struct env env;
	struct cw_class_sel sel;
	struct cw_outfile *out = NULL;
	struct command *cmd = NULL;
	struct tracer *tracer = NULL;
	struct proc_snap *snap = NULL;
	struct ksyms_snap *ksyms = NULL;
	struct cw_writer *w = NULL;
	struct drain *drain = NULL;
	struct account *acct = NULL;
	struct flusher *flusher = NULL;
	struct perfev_maps *maps = NULL;
	struct perfev_maps_opts mopts = { 0 };
	struct usdt *usdt = NULL;
	struct usdt_counts uc;
	struct account_totals lost;
	struct loop loop = { 0 };
	struct tracer_opts topts = { 0 };
	struct cw_writer_opts wopts = { 0 };
	struct meta_start ms = { 0 };
	struct meta_final mf = { 0 };
	struct summary sum = { 0 };
	enum stop_reason stop;
	char recorded[256], missing[256], options[1024], cmd_status[96], stop_detail[64];
	const char *ctx_why, *ksyms_why;
	pid_t *traced = NULL;
	size_t ntraced = 0;
	int exit_code = 2, err, ctx;
	unsigned features;
	bool sampling, adapter;

	/* Before anything that can take time (loading BPF does). */
	err = signals__install();
	if (err) {
		cw_msg("cannot install signal handlers: %s", strerror(-err));
		goto cleanup;
	}
	exit_code = options__parse(&env, argc, argv);
	if (exit_code != OPTIONS_GO)
		goto cleanup;
	exit_code = 2;
	cw_log_quiet(env.quiet);
	cw_log_libbpf();
	features = (env.freq ? CW_FEAT_CPU_SAMPLES : 0) | (env.no_offcpu ? 0 : CW_FEAT_OFFCPU);
	if (can_start() || resolve_pids(&env) ||
	    classes__choose(&sel, env.events, features, recorded, missing, sizeof(recorded)))
		goto cleanup;
	/* A sample plane the kernel cannot give was named by a notice; the
	 * edges are recorded all the same. */
	sampling = sel.c[CW_CLASS_SAMPLE].status == CW_CLS_OK;
	adapter = sel.c[CW_CLASS_ADAPTER].status == CW_CLS_OK;
	if (env.nusdt && !adapter) {
		cw_msg("--usdt does nothing: the usdt class cannot be recorded here");
		goto cleanup;
	}
	if (!sampling) {
		env.freq = 0;
		env.no_offcpu = true;
	}

	{
		const struct cw_outfile_opts oo = { .prog = CW_PROG, .force = env.force,
						    .quiet = env.quiet };

		out = cw_outfile__create(env.output, &oo);
	}
	if (!out)
		goto cleanup;
	if (env.command) {
		cmd = command__start(env.command);
		if (!cmd)
			goto cleanup;
	}

	topts.self = getpid();
	topts.filter = env.npids || cmd;
	topts.edge_ring_bytes = (uint32_t)env.edge_ring_bytes;
	topts.traced_max = TRACED_MAX;
	topts.ctx_method = env.ctx_method;
	topts.features = features;
	/* The ring exists in every object (bpf/causeway.bpf.h): one page
	 * when nothing writes to it. */
	topts.sample_ring_bytes = sampling ? (uint32_t)env.sample_ring_bytes : 4096;
	topts.sample_period_ns = env.freq ? 1000000000ull / env.freq : 0;
	topts.sample_stack_bytes = env.dwarf_stack;
	topts.sample_budget = env.sample_budget;
	tracer = tracer__load(&topts, &sel);
	if (!tracer)
		goto cleanup;
	ctx = tracer__ctx_method(tracer, &ctx_why);
	if (ctx == CW_CTXM_NONE)
		cw_notice("interrupt context cannot be told apart (%s): every wakeup is recorded "
			  "with context unknown, and its cause stays unknown", ctx_why);
	else
		cw_notice("interrupt context from the preempt count: %s method (%s)",
			  cw_ctx_method_names[ctx], ctx_why);
	if (sampling)
		notice_sampling(&env);

	/* The traced set at start: COMMAND, or the -p processes and the
	 * descendants they already have (traced_pids in the metadata). */
	traced = calloc(TRACED_MAX, sizeof(*traced));
	if (!traced) {
		cw_msg("out of memory");
		goto cleanup;
	}
	if (cmd)
		traced[ntraced++] = command__pid(cmd);
	for (size_t i = 0; i < env.npids; i++)
		traced[ntraced++] = env.pids[i];
	if (trace_pids(tracer, traced, 0, ntraced) || tracer__attach(tracer))
		goto cleanup;
	if (adapter) {
		usdt = usdt__new(tracer__object(tracer, CW_CLASS_ADAPTER), getpid());
		if (!usdt)
			goto cleanup;
	}
	/* After loading: the snapshot then names the capture's own BPF
	 * programs ([bpf]), where samples of the cost of tracing land; read
	 * before, their addresses would take the name of whatever [bpf]
	 * symbol preceded them. */
	ksyms = read_ksyms(&env, &ksyms_why);
	/* Before the mapping snapshot, so that no mapping falls between
	 * the two (one in both is harmless: a mapping replaces what it
	 * overlaps), and before COMMAND's exec. */
	if (sampling || adapter) {
		mopts.self = getpid();
		mopts.traced = topts.filter ? is_traced : NULL;
		mopts.ctx = tracer;
		/* The adapter class attaches the objects mapped later. */
		mopts.mapped = usdt ? usdt__mapped : NULL;
		mopts.mapped_ctx = usdt;
		mopts.no_records = !sampling;
		maps = perfev_maps__open(&mopts);
		if (!maps)
			goto cleanup;
		for (size_t i = 0; i < ntraced; i++)
			if (perfev_maps__follow(maps, (uint32_t)traced[i])) {
				cw_msg("out of memory");
				goto cleanup;
			}
	}
	loop.start_ns = clock__now();
	/* Snapshot after attaching: a task forked meanwhile is either in
	 * the snapshot or seen forking, never neither. */
	snap = proc_snap__new(getpid());
	if (!snap) {
		cw_msg("cannot read /proc: %s", strerror(errno));
		goto cleanup;
	}
	if (env.npids) {
		size_t n = proc_snap__descendants(snap, env.pids, env.npids, traced + ntraced,
						  TRACED_MAX - ntraced);

		if (trace_pids(tracer, traced, ntraced, ntraced + n))
			goto cleanup;
		ntraced += n;
	}
	if (usdt && attach_usdt(usdt, &env, traced, ntraced))
		goto cleanup;

	wopts.segment_size = env.segment_size;
	w = cw_writer__new(cw_outfile__fd(out), &wopts);
	drain = w ? drain__new(tracer__ring_fd(tracer), sampling ? tracer__sample_ring_fd(tracer) : -1,
			       w, &sel)
		  : NULL;
	acct = drain ? account__new(tracer__counters_fd(tracer), libbpf_num_possible_cpus(),
				    loop.start_ns, &sel)
		     : NULL;
	if (!acct) {
		cw_msg("cannot start the writer: %s", strerror(errno));
		goto cleanup;
	}
	options__string(&env, recorded, options, sizeof(options));
	ms = (struct meta_start){
		.argc = argc,
		.argv = argv,
		.options = options,
		.version = CW_VERSION,
		.classes = recorded,
		.classes_missing = missing,
		.records_missing = tracer__records_missing(tracer),
		.context_method = cw_ctx_method_names[ctx],
		.filtered = topts.filter,
		.traced = traced,
		.ntraced = ntraced,
		.ncpus = libbpf_num_possible_cpus(),
		.start_ns = loop.start_ns,
		.ring_edge_bytes = env.edge_ring_bytes,
		.segment_size = env.segment_size,
		.ksyms = ksyms,
		.ksyms_omitted = ksyms_why,
		.sample_freq = env.freq,
		.offcpu = !env.no_offcpu,
		.sample_event = PERFEV_SAMPLE_EVENT,
		.dwarf_stack_size = env.dwarf_stack,
		.sample_budget = env.sample_budget,
		.sample_ring_bytes = env.sample_ring_bytes,
		/* COMMAND has not run its exec yet: its mappings are the
		 * capture's, and its own come through the perf rings. */
		.map_pids = topts.filter ? traced + (cmd ? 1 : 0) : NULL,
		.nmap_pids = topts.filter ? ntraced - (cmd ? 1 : 0) : 0,
		.write_more = usdt ? write_usdt : NULL,
		.more_ctx = usdt,
	};
	err = meta__write_start(w, &ms, snap);
	if (err) {
		cw_msg("writing %s: %s", env.output, strerror(-err));
		goto cleanup;
	}
	proc_snap__free(snap);
	snap = NULL;
	ksyms_snap__free(ksyms);
	ksyms = NULL;
	if (env.max_size && cw_writer__set_limit(w, env.max_size - close_reserve(acct))) {
		cw_msg("--max-size %llu is too small: the metadata alone takes more",
		       (unsigned long long)env.max_size);
		goto cleanup;
	}
	if (cmd && command__release(cmd))
		goto cleanup;
	flusher = flusher__start(cw_outfile__fd(out));
	if (!flusher) {
		cw_msg("cannot start the flusher thread: %s", strerror(errno));
		goto cleanup;
	}
	if (cw_outfile__commit(out))
		goto cleanup;

	/* The capture has started: from here on a failure is a runtime
	 * failure, and the file is kept. */
	exit_code = 1;
	loop = (struct loop){
		.drain = drain,
		.w = w,
		.acct = acct,
		.flusher = flusher,
		.tracer = tracer,
		.cmd = cmd,
		.maps = maps,
		.usdt = usdt,
		.watch_targets = env.npids > 0,
		.start_ns = loop.start_ns,
		.duration_ns = env.duration_ns,
		.tty = isatty(STDERR_FILENO) && !env.quiet,
		.output = env.output,
	};
	stop = loop__run(&loop);
	usdt__detach_begin(usdt);
	tracer__detach(tracer);
	stop = loop__drain_rest(&loop, stop);
	if (cmd)
		command__stop(cmd);

	/* The close has its reserve under --max-size. */
	mf.end_ns = clock__now();
	cw_writer__set_limit(w, env.max_size);
	err = account__flush_gaps(acct, w, tracer__gaps_fd(tracer));
	err = err ?: account__flush(acct, w, mf.end_ns);
	err = err ?: cw_writer__seal(w, CW_SEG_EVENTS);
	account__totals(acct, &lost);
	mf.events = drain__events(drain);
	mf.lost = lost.lost_edge + lost.lost_sample;
	mf.map_overflow = lost.lost_map;
	mf.rejected = drain__rejected(drain);
	mf.stop_reason = stop_names[stop];
	mf.sampling = sampling;
	mf.samples_lost = lost.lost_sample;
	mf.samples_decimated = lost.decimated;
	mf.mmaps = perfev_maps__count(maps);
	usdt__counts(usdt, &uc);
	mf.usdt = adapter;
	mf.usdt_objects = uc.objects;
	mf.usdt_attached = uc.attached;
	mf.usdt_failed = uc.failed;
	mf.usdt_skipped = uc.skipped;
	err = err ?: meta__write_final(w, &mf);
	flusher__stop(flusher);
	flusher = NULL;
	if (!err && fdatasync(cw_outfile__fd(out)))
		err = -errno;
	if (err && stop != STOP_ERROR) {
		cw_msg("writing %s: %s", env.output, strerror(-err));
		stop = STOP_ERROR;
	}
	exit_code = stop == STOP_ERROR ? 1 : 0;
	if (exit_code == 0 && cmd && command__exit_code(cmd) >= 0)
		exit_code = command__exit_code(cmd);

	if (loop.status_shown)
		status__end_line();
	sum.output = env.output;
	sum.elapsed_ns = mf.end_ns - loop.start_ns;
	sum.events = mf.events;
	sum.rejected = mf.rejected;
	sum.lost = lost;
	sum.stop_reason = mf.stop_reason;
	if (stop == STOP_SIGNAL)
		snprintf(stop_detail, sizeof(stop_detail), "%s", strsignal(signals__stop()));
	else if (stop == STOP_TARGETS)
		snprintf(stop_detail, sizeof(stop_detail), "every traced process exited");
	sum.stop_detail = stop == STOP_SIGNAL || stop == STOP_TARGETS ? stop_detail : NULL;
	sum.command = cmd ? command__describe(cmd, cmd_status, sizeof(cmd_status)) : NULL;
	status__summary(w, &sum);

cleanup:
	flusher__stop(flusher);
	command__free(cmd);
	drain__free(drain);
	perfev_maps__free(maps);
	usdt__free(usdt);
	account__free(acct);
	tracer__free(tracer);
	cw_writer__free(w);
	proc_snap__free(snap);
	ksyms_snap__free(ksyms);
	free(traced);
	cw_outfile__free(out);
	return exit_code;
}
