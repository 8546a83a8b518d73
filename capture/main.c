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
#include <inttypes.h>
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
#include "capture/namer.h"
#include "capture/options.h"
#include "capture/perfev.h"
#include "capture/probe.h"
#include "capture/procsnap.h"
#include "trace/writer.h"
#include "capture/signals.h"
#include "schema/names.h"
#include "capture/status.h"
#include "capture/tracer.h"
#include "capture/golang.h"
#include "capture/uobj.h"
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

static int write_uprobes(void *uobj, struct cw_writer *w);

/* What the sample plane records, in one line. */
static void notice_sampling(const struct env *env)
{
	char cpu[64] = "", graph[48] = "fp", budget[96] = "";

	if (env->freq)
		snprintf(cpu, sizeof(cpu), "CPU samples at %lu Hz (%s)%s", env->freq,
			 PERFEV_SAMPLE_EVENT, env->no_offcpu ? "" : ", ");
	if (env->dwarf_stack)
		snprintf(graph, sizeof(graph), "dwarf, %u bytes of user stack", env->dwarf_stack);
	if (env->sample_budget || env->sample_budget_cpu)
		snprintf(budget, sizeof(budget), ", stacks/s at most about %llu off-CPU, %llu CPU",
			 (unsigned long long)env->sample_budget,
			 (unsigned long long)env->sample_budget_cpu);
	cw_notice("recording %s%s, call graph %s%s", cpu, env->no_offcpu ? "" : "off-CPU stacks",
		  graph, budget);
}

/* Bytes the close needs under --max-size: the last accounting and the
 * final segment, at their worst. */
static uint64_t close_reserve(const struct account *acct)
{
	size_t bytes, records;

	account__flush_max(acct, &bytes, &records);
	return cw_writer__worst_case(bytes, records) + cw_writer__worst_case(meta__final_max(), META_FINAL_KEYS);
}

/* One capture: what main opens, in the order it opens it; capture__free
 * closes what was opened. */
struct capture {
	struct env *env;
	struct cw_class_sel sel;
	char recorded[256], missing[256]; /* the classes, for the metadata */
	unsigned features;		  /* CW_FEAT_* */
	bool sampling, adapter, gorun;	  /* the sample, adapter and go classes are recorded */
	struct cw_outfile *out;
	struct command *cmd;		  /* NULL without COMMAND */
	struct tracer *tracer;
	int ctx;			  /* CW_CTXM_* */
	pid_t *traced;			  /* the traced set at start */
	size_t ntraced;
	struct uobj *uobj; /* the uprobe classes' objects; NULL without them */
	struct usdt *usdt;
	struct golang *golang;
	struct ksyms_snap *ksyms;
	const char *ksyms_why;		  /* why there is no snapshot, or NULL */
	struct perfev_maps *maps;
	struct proc_snap *snap;
	struct cw_writer *w;
	struct drain *drain;
	struct namer *namer; /* -p, COMMAND: names for the untraced */
	struct account *acct;
	struct flusher *flusher;
	struct loop loop;
	struct meta_final mf;
	char runs_missed[256]; /* tracer__runs_missed()'s names */
	uint64_t runs_missed_n;
	/* The end of the recording (the loop stopped), and of the detach
	 * and drain that follow it */
	uint64_t stop_ns, detached_ns;
};

/* Privilege and BTF, -p, and the classes this kernel can record.
 * @return 0 or -1 after a message. */
static int choose(struct capture *c)
{
	struct env *env = c->env;

	c->features = (env->freq ? CW_FEAT_CPU_SAMPLES : 0) | (env->no_offcpu ? 0 : CW_FEAT_OFFCPU);
	if (can_start() || resolve_pids(env) ||
	    classes__choose(&c->sel, env->events, c->features, c->recorded, c->missing,
			    sizeof(c->recorded)))
		return -1;
	/* A sample plane the kernel cannot give was named by a notice; the
	 * edges are recorded all the same. */
	c->sampling = c->sel.c[CW_CLASS_SAMPLE].status == CW_CLS_OK;
	c->adapter = c->sel.c[CW_CLASS_ADAPTER].status == CW_CLS_OK;
	c->gorun = c->sel.c[CW_CLASS_GO].status == CW_CLS_OK;
	if (env->nusdt && !c->adapter) {
		cw_msg("--usdt does nothing: the usdt class cannot be recorded here");
		return -1;
	}
	if (!c->sampling) {
		env->freq = 0;
		env->no_offcpu = true;
	}
	return 0;
}

/* The temporary output file, and COMMAND forked, blocked until
 * command__release. @return 0 or -1 after a message. */
static int open_output(struct capture *c)
{
	const struct cw_outfile_opts oo = { .prog = CW_PROG, .force = c->env->force,
					    .quiet = c->env->quiet };

	c->out = cw_outfile__create(c->env->output, &oo);
	if (!c->out)
		return -1;
	if (c->env->command && !(c->cmd = command__start(c->env->command)))
		return -1;
	return 0;
}

/* The traced set's capacity: TRACED_MAX, or less with
 * CAUSEWAY_TRACED_MAX=N, the live tests' way to fill it with a few
 * processes (tests/live/filter_pid.sh). */
static uint32_t traced_max(void)
{
	const char *s = getenv("CAUSEWAY_TRACED_MAX");
	char *end;
	unsigned long n = s ? strtoul(s, &end, 10) : 0;

	return s && *s && !*end && n >= 1 && n < TRACED_MAX ? (uint32_t)n : TRACED_MAX;
}

/* Open and load the BPF objects, and say how interrupt context is told
 * apart and what the sample plane records. @return 0 or -1. */
static int load(struct capture *c)
{
	const struct tracer_opts to = { .self = getpid(),
					.filter = c->env->npids || c->cmd,
					.traced_max = traced_max(),
					.features = c->features,
					.sampling = c->sampling };
	const char *why;

	c->tracer = tracer__load(c->env, &to, &c->sel);
	if (!c->tracer)
		return -1;
	c->ctx = tracer__ctx_method(c->tracer, &why);
	if (c->ctx == CW_CTXM_NONE)
		cw_notice("interrupt context cannot be told apart (%s): every wakeup is recorded "
			  "with context unknown, and its cause stays unknown", why);
	else
		cw_verbose("interrupt context from the preempt count: %s method (%s)",
			   cw_ctx_method_names[c->ctx], why);
	if (c->sampling)
		notice_sampling(c->env);
	return 0;
}

/* Does the capture record only the traced set? */
static bool filtered(const struct capture *c)
{
	return c->env->npids || c->cmd;
}

/* Mapping changes: perf rings that report them, for the sample plane and
 * for the uprobe classes (adapter, go), which attach the objects mapped
 * later.
 * @return 0 or -1 after a message. */
static int open_maps(struct capture *c)
{
	const struct perfev_maps_opts mo = {
		.self = getpid(),
		.traced = filtered(c) ? is_traced : NULL,
		.ctx = c->tracer,
		.mapped = c->uobj ? uobj__mapped : NULL,
		.mapped_ctx = c->uobj,
		.no_records = !c->sampling,
	};

	c->maps = perfev_maps__open(&mo);
	if (!c->maps)
		return -1;
	for (size_t i = 0; i < c->ntraced; i++)
		if (perfev_maps__follow(c->maps, (uint32_t)c->traced[i])) {
			cw_msg("out of memory");
			return -1;
		}
	return 0;
}

/*
 * The records each class goes without because the kernel refused or
 * lacks an optional program: one line for all of them at the start, and
 * only with -v, since nothing is lost unless the class records something
 * (io_uring's refused trampolines, in a capture of a program that uses no
 * io_uring, lose nothing). At the close (@t: the totals), a line for each
 * class that did write records without them, which is a loss to say.
 */
static void say_missing(const struct capture *c, const struct account_totals *t)
{
	char line[512];
	size_t n = 0;
	const char *why = NULL;

	line[0] = 0;
	for (unsigned k = 0; k < CW_CLASS_MAX; k++) {
		const char *w, *m = tracer__missing(c->tracer, k, &w);

		if (!m)
			continue;
		if (t && t->edge_written[k]) {
			cw_notice("%s: %" PRIu64 " records written without %s: %s", cw_class_names[k],
				  t->edge_written[k], m, w);
			continue;
		}
		if (!why)
			why = w;
		if (n < sizeof(line))
			n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s %s", n ? "; " : "",
					      cw_class_names[k], m);
	}
	if (!t && n)
		cw_verbose("not recording (%s): %s", why, line);
}

/*
 * The uprobe classes' objects at start (adapter, go): COMMAND's
 * executable (its libraries come through the mapping reports once it
 * runs), what the -p processes and their descendants map, or system-wide
 * what every process maps and the --usdt files. @return 0, or -1 after a
 * message (a --usdt file that is no ELF object).
 */
static int attach_uprobes(struct capture *c)
{
	const struct env *env = c->env;

	if (env->command) {
		uobj__add_command(c->uobj, env->command[0]);
	} else if (env->npids) {
		for (size_t i = 0; i < c->ntraced; i++)
			uobj__add_pid(c->uobj, c->traced[i]);
	} else {
		for (size_t i = 0; c->usdt && i < env->nusdt; i++)
			if (usdt__add_file(c->usdt, env->usdt_paths[i], true))
				return -1;
		uobj__add_system(c->uobj);
	}
	if (c->usdt)
		usdt__notice(c->usdt, "at start");
	if (c->golang)
		golang__notice(c->golang, "at start");
	return 0;
}

/*
 * The traced set at start (COMMAND, or the -p processes and the
 * descendants they already have: traced_pids in the metadata), the
 * programs attached, the kallsyms and /proc snapshots and the adapter
 * class's probes. @return 0 or -1 after a message.
 */
static int attach(struct capture *c)
{
	c->traced = calloc(TRACED_MAX, sizeof(*c->traced));
	if (!c->traced) {
		cw_msg("out of memory");
		return -1;
	}
	if (c->cmd)
		c->traced[c->ntraced++] = command__pid(c->cmd);
	for (size_t i = 0; i < c->env->npids; i++)
		c->traced[c->ntraced++] = c->env->pids[i];
	if (trace_pids(c->tracer, c->traced, 0, c->ntraced) || tracer__attach(c->tracer))
		return -1;
	say_missing(c, NULL);
	if ((c->adapter || c->gorun) && !(c->uobj = uobj__new(getpid()))) {
		cw_msg("out of memory");
		return -1;
	}
	if (c->adapter && !(c->usdt = usdt__new(tracer__object(c->tracer, CW_CLASS_ADAPTER),
						 c->uobj, c->env->usdt_probe_on)))
		return -1;
	if (c->gorun && !(c->golang = golang__new(tracer__object(c->tracer, CW_CLASS_GO), c->uobj,
							  c->env->go_requests_only)))
		return -1;
	/* After loading: the snapshot then names the capture's own BPF
	 * programs ([bpf]), where samples of the cost of tracing land; read
	 * before, their addresses would take the name of whatever [bpf]
	 * symbol preceded them. */
	c->ksyms = read_ksyms(c->env, &c->ksyms_why);
	/* Before the mapping snapshot, so that no mapping falls between
	 * the two (one in both is harmless: a mapping replaces what it
	 * overlaps), and before COMMAND's exec. */
	if ((c->sampling || c->uobj) && open_maps(c))
		return -1;
	c->loop.start_ns = clock__now();
	/* Snapshot after attaching: a task forked meanwhile is either in
	 * the snapshot or seen forking, never neither. */
	c->snap = proc_snap__new(getpid());
	if (!c->snap) {
		cw_msg("cannot read /proc: %s", strerror(errno));
		return -1;
	}
	if (c->env->npids) {
		size_t n = proc_snap__descendants(c->snap, c->env->pids, c->env->npids,
						  c->traced + c->ntraced, TRACED_MAX - c->ntraced);

		if (trace_pids(c->tracer, c->traced, c->ntraced, c->ntraced + n))
			return -1;
		c->ntraced += n;
	}
	return c->uobj ? attach_uprobes(c) : 0;
}

/* The META segment's share of the uprobe classes: the probes attached
 * at start. */
static int write_uprobes(void *uobj, struct cw_writer *w)
{
	return uobj__flush(uobj, w);
}

/* The writer, the drain and the accounting, and the META segment.
 * @return 0 or -1 after a message. */
static int write_start(struct capture *c)
{
	const struct cw_writer_opts wo = { .segment_size = c->env->segment_size };
	struct meta_start ms;
	char off[1024];
	int err;

	c->w = cw_writer__new(cw_outfile__fd(c->out), &wo);
	c->acct = c->w ? account__new(tracer__counters_fd(c->tracer), libbpf_num_possible_cpus(),
				      c->loop.start_ns, &c->sel, tracer__follows_alone(c->tracer))
		       : NULL;
	c->drain = c->acct ? drain__new(tracer__ring_fd(c->tracer),
					c->sampling ? tracer__sample_ring_fd(c->tracer) : -1, c->w,
					c->acct, &c->sel)
			   : NULL;
	if (c->drain && (c->env->npids || c->env->command) && !(c->namer = namer__new()))
		drain__free(c->drain), c->drain = NULL;
	if (!c->drain) {
		cw_msg("cannot start the writer: %s", strerror(errno));
		return -1;
	}
	drain__set_namer(c->drain, c->namer);
	if (c->golang)
		drain__set_filler(c->drain, golang__fill, c->golang);
	ms = (struct meta_start){
		.env = c->env,
		.classes = c->recorded,
		.classes_missing = c->missing,
		.records_missing = tracer__records_missing(c->tracer),
		.usdt_probes_off = c->adapter ? options__usdt_off(c->env, off, sizeof(off)) : NULL,
		.go_probes = c->gorun ? options__go_probes(c->env) : NULL,
		.context_method = cw_ctx_method_names[c->ctx],
		.filtered = filtered(c),
		.traced = c->traced,
		.ntraced = c->ntraced,
		.ncpus = libbpf_num_possible_cpus(),
		.start_ns = c->loop.start_ns,
		.ksyms = c->ksyms,
		.ksyms_omitted = c->ksyms_why,
		.sample_event = PERFEV_SAMPLE_EVENT,
		/* COMMAND has not run its exec yet: its mappings are the
		 * capture's, and its own come through the perf rings. */
		.map_pids = filtered(c) ? c->traced + (c->cmd ? 1 : 0) : NULL,
		.nmap_pids = filtered(c) ? c->ntraced - (c->cmd ? 1 : 0) : 0,
		.write_more = c->uobj ? write_uprobes : NULL,
		.more_ctx = c->uobj,
	};
	err = meta__write_start(c->w, &ms, c->snap);
	if (err) {
		cw_msg("writing %s: %s", c->env->output, strerror(-err));
		return -1;
	}
	proc_snap__free(c->snap);
	c->snap = NULL;
	ksyms_snap__free(c->ksyms);
	c->ksyms = NULL;
	if (c->env->max_size && cw_writer__set_limit(c->w, c->env->max_size - close_reserve(c->acct))) {
		cw_msg("--max-size %llu is too small: the metadata alone takes more",
		       (unsigned long long)c->env->max_size);
		return -1;
	}
	return 0;
}

/* Let COMMAND run its exec, start syncing, and rename the file into
 * place. @return 0 or -1 after a message. */
static int go(struct capture *c)
{
	if (c->cmd && command__release(c->cmd))
		return -1;
	c->flusher = flusher__start(cw_outfile__fd(c->out));
	if (!c->flusher) {
		cw_msg("cannot start the flusher thread: %s", strerror(errno));
		return -1;
	}
	return cw_outfile__commit(c->out) ? -1 : 0;
}

/* The drain loop, then detach and drain what is left; COMMAND is
 * stopped if it still runs. @return why the capture stopped. */
static enum stop_reason run(struct capture *c)
{
	enum stop_reason stop;

	c->loop = (struct loop){
		.drain = c->drain,
		.w = c->w,
		.acct = c->acct,
		.flusher = c->flusher,
		.tracer = c->tracer,
		.cmd = c->cmd,
		.maps = c->maps,
		.uobj = c->uobj,
		.env = c->env,
		.start_ns = c->loop.start_ns,
	};
	stop = loop__run(&c->loop);
	/* The recording ends now (-d, the signal, the command's exit);
	 * what the programs write while they are detached is not kept. */
	c->stop_ns = clock__now();
	drain__cutoff(c->drain, c->stop_ns);
	uobj__detach_begin(c->uobj);
	tracer__detach(c->tracer);
	c->runs_missed_n = tracer__runs_missed(c->tracer, c->runs_missed, sizeof(c->runs_missed));
	stop = loop__drain_rest(&c->loop, stop);
	c->detached_ns = clock__now();
	if (c->cmd)
		command__stop(c->cmd);
	return stop;
}

/* The counters at the close (capture/counters.h). */
static void count(const struct capture *c, struct capture_counters *n)
{
	struct account_totals lost;
	struct usdt_counts uc;
	struct golang_counts gc;

	account__totals(c->acct, &lost);
	usdt__counts(c->usdt, &uc);
	golang__counts(c->golang, &gc);
	*n = (struct capture_counters){
		.events = drain__events(c->drain),
		.lost = lost.lost_edge + lost.lost_sample,
		.map_overflow = lost.lost_map,
		.rejected = drain__rejected(c->drain),
		.samples_lost = lost.lost_sample,
		.samples_decimated = lost.decimated,
		.net_receipts = lost.net_receipts,
		.net_written = lost.net_written,
		.timer_arms = lost.timer_arms,
		.timer_written = lost.timer_written,
		.runs_missed = c->runs_missed_n,
		.mmaps = perfev_maps__count(c->maps),
		.usdt_objects = uc.objects,
		.usdt_attached = uc.attached,
		.usdt_failed = uc.failed,
		.usdt_skipped = uc.skipped,
		.usdt_deselected = uc.deselected,
		.go_binaries = gc.binaries,
		.go_refused = gc.refused,
		.go_attached = gc.attached,
		.go_failed = gc.failed,
	};
}

/* The last accounting, the FINAL segment and the sync. @return the
 * stop reason, STOP_ERROR when the close failed (after a message). */
static enum stop_reason close_trace(struct capture *c, enum stop_reason stop)
{
	int err;

	/* The close has its reserve under --max-size. */
	c->mf.end_ns = c->stop_ns ? c->stop_ns : clock__now();
	cw_writer__set_limit(c->w, c->env->max_size);
	err = account__flush_gaps(c->acct, c->w, tracer__ring_cpu_fd(c->tracer));
	err = err ?: account__flush(c->acct, c->w, c->mf.end_ns);
	err = err ?: cw_writer__seal(c->w, CW_SEG_EVENTS);
	count(c, &c->mf.c);
	c->mf.stop_reason = stop_names[stop];
	c->mf.sampling = c->sampling;
	c->mf.usdt = c->adapter;
	c->mf.go = c->gorun;
	err = err ?: meta__write_final(c->w, &c->mf);
	flusher__stop(c->flusher);
	c->flusher = NULL;
	if (!err && fdatasync(cw_outfile__fd(c->out)))
		err = -errno;
	if (err && stop != STOP_ERROR) {
		cw_msg("writing %s: %s", c->env->output, strerror(-err));
		stop = STOP_ERROR;
	}
	return stop;
}

/* The summary, on stderr. */
static void summarize(const struct capture *c, enum stop_reason stop)
{
	char cmd_status[96], stop_detail[64];
	struct summary sum = {
		.output = c->env->output,
		.elapsed_ns = c->mf.end_ns - c->loop.start_ns,
		.c = &c->mf.c,
		.stop_reason = c->mf.stop_reason,
		.runs_missed = c->runs_missed,
	};

	if (c->loop.status_shown)
		status__end_line();
	if (stop == STOP_SIGNAL)
		snprintf(stop_detail, sizeof(stop_detail), "%s", strsignal(signals__stop()));
	else if (stop == STOP_TARGETS)
		snprintf(stop_detail, sizeof(stop_detail), "every traced process exited");
	sum.stop_detail = stop == STOP_SIGNAL || stop == STOP_TARGETS ? stop_detail : NULL;
	sum.command = c->cmd ? command__describe(c->cmd, cmd_status, sizeof(cmd_status)) : NULL;
	status__summary(c->w, &sum);
	if (c->golang)
		golang__summary(c->golang);
	/* Detaching uprobes takes the kernel's grace period each (about
	 * 0.1 s a probe): say where the wall time went. */
	if (c->detached_ns > c->stop_ns + NS_PER_SEC / 2)
		cw_notice("stopped recording at %.1fs; detaching and draining took %.1fs more (%" PRIu64
			  " records written meanwhile, after the stop, not kept)",
			  (double)(c->stop_ns - c->loop.start_ns) / 1e9,
			  (double)(c->detached_ns - c->stop_ns) / 1e9, drain__after_stop(c->drain));
	if (c->acct) {
		struct account_totals t;

		account__totals(c->acct, &t);
		say_missing(c, &t);
	}
}

static void capture__free(struct capture *c)
{
	flusher__stop(c->flusher);
	command__free(c->cmd);
	drain__free(c->drain);
	namer__free(c->namer);
	perfev_maps__free(c->maps);
	uobj__free(c->uobj);
	usdt__free(c->usdt);
	golang__free(c->golang);
	account__free(c->acct);
	tracer__free(c->tracer);
	cw_writer__free(c->w);
	proc_snap__free(c->snap);
	ksyms_snap__free(c->ksyms);
	free(c->traced);
	cw_outfile__free(c->out);
}

int main(int argc, char **argv)
{
	struct env env;
	struct capture c = { .env = &env };
	enum stop_reason stop;
	int exit_code, err;

	/* Before anything that can take time (loading BPF does). */
	err = signals__install();
	if (err) {
		cw_msg("cannot install signal handlers: %s", strerror(-err));
		return 2;
	}
	exit_code = options__parse(&env, argc, argv);
	if (exit_code != OPTIONS_GO)
		return exit_code;
	cw_log_quiet(env.quiet);
	cw_log_verbose(env.verbose);
	cw_log_libbpf();
	exit_code = 2;
	if (choose(&c) || open_output(&c) || load(&c) || attach(&c) || write_start(&c) || go(&c))
		goto cleanup;

	/* The capture has started: from here on a failure is a runtime
	 * failure, and the file is kept. */
	stop = close_trace(&c, run(&c));
	exit_code = stop == STOP_ERROR ? 1 : 0;
	if (exit_code == 0 && c.cmd && command__exit_code(c.cmd) >= 0)
		exit_code = command__exit_code(c.cmd);
	summarize(&c, stop);

cleanup:
	capture__free(&c);
	return exit_code;
}
