// SPDX-License-Identifier: MIT
/*
 * One BPF object per class, rather than one object for all: an object is
 * loaded whole or not at all, so a class whose tracepoints this kernel
 * lacks would otherwise need its programs switched off one by one, and
 * its CO-RE relocations could still fail the others. Each object defines
 * the shared maps (bpf/causeway.bpf.h); the first one loaded creates
 * them and the others reuse its file descriptors (bpf_map__reuse_fd), so
 * every class writes into one ring, one set of counters and one traced
 * set. Objects are handled through their ELF bytes, never their typed
 * skeletons: adding a class needs no code here.
 *
 * A class's programs are chosen by what the kernel offers (classes.h:
 * tp_btf tracepoints by their BTF, tracefs ones by tracefs, fentry and
 * fexit by a trial load). An optional program that cannot be loaded or
 * attached leaves its class recorded without it, and its record type in
 * tracer__records_missing().
 *
 * Interrupt context (docs/model.md §5.6) needs the preempt count; the methods
 * are described in bpf/causeway.bpf.h. In order of preference: ksym (no
 * assumptions about the scheduler's layout, but it needs the variable in
 * kallsyms), runqueue (needs CONFIG_FAIR_GROUP_SCHED), thread_info on
 * arm64, else none: wakes are then recorded with an unknown context,
 * never as task context.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "schema/names.h"
#include "bpf/config.h"
#include "capture/log.h"
#include "capture/options.h"
#include "capture/perfev.h"
#include "capture/ports.h"
#include "capture/probe.h"
#include "capture/tracer.h"
#include "context.skel.h"

#define NSHARED (sizeof(cw_shared_maps) / sizeof(cw_shared_maps[0]))
enum {
	SHARED_EDGES,
	SHARED_COUNTERS,
	SHARED_TRACED,
	SHARED_PC_ADDR,
	SHARED_SAMPLES = 6,
	SHARED_RING_CPU,
	SHARED_TRACED_BITS,
	SHARED_OBJS_COUNT,
	SHARED_PORTS,
	/* Only the objects that take stacks have these (bpf/wait.bpf.h). */
	SHARED_SCRATCH,
	SHARED_OFFERED,
};
_Static_assert(NSHARED == SHARED_OFFERED + 1, "cw_shared_maps and the SHARED_ indexes disagree");

/* The budget's window (bpf/sample.bpf.c): short enough to follow a
 * change of rate within a tenth of a second, long enough to hold a few
 * samples per CPU at the default 99 Hz. */
#define SAMPLE_WINDOW_NS 100000000ull

struct tracer {
	const struct env *env;
	struct tracer_opts opts;
	bool follows_alone; /* sched's fork and exits loaded without the class */
	uint32_t edge_ring_bytes, sample_ring_bytes; /* powers of two */
	uint64_t sample_period_ns;		      /* CW_FEAT_CPU_SAMPLES: the tick */
	struct bpf_object *objs[CW_CLASS_MAX + 1]; /* the classes, then context */
	const struct cw_class_desc *descs[CW_CLASS_MAX + 1]; /* of objs[i]; NULL: context */
	unsigned loading; /* bit per CW_CLASS_* selected to load */
	size_t nobjs;
	char records_missing[512]; /* "name:why,...": see tracer__records_missing */
	/* per class: the records it goes without ("uring_free, uring_work")
	 * and why the first of them is (see tracer__missing) */
	char missing[CW_CLASS_MAX][96];
	char missing_why[CW_CLASS_MAX][160];
	int shared[NSHARED]; /* ours (dup'd), -1 until the first load */
	struct bpf_link **links;
	size_t nlinks;
	/* Perf-event links (tracefs tracepoints, the tick), closed apart:
	 * see detach_slow() */
	struct bpf_link **slow;
	size_t nslow;
	pid_t closer; /* the process that closes them, or 0 */
	int ncpus;
	int ctx_method;
	char ctx_why[400];
	struct cw_bpf_config cfg;
	pid_t *keys; /* scratch for tracer__traced_count */
	/* The traced set's bitmap (bpf/causeway.bpf.h), mapped once the
	 * first object is loaded; a word per 64 tgids below pid_max. */
	uint64_t *traced_bits;
	size_t traced_words;
	/* The traced set's local ports (bpf/causeway.bpf.h `ports`),
	 * mapped with the traced set's bitmap. */
	uint64_t *ports;
};

#define PORTS_BYTES (65536 / 8)

/* The bytes a CPU writes to a ring of @ring_bytes before it wakes the
 * consumer (bpf/causeway.bpf.h cw_wakeup): an eighth of the ring shared
 * by the CPUs, so that with all of them writing the consumer is called
 * at an eighth full, as the ring's own query-based wakeup once did. */
static uint64_t ring_wakeup(uint32_t ring_bytes, int ncpus)
{
	uint64_t b = ring_bytes / 8 / (uint64_t)(ncpus > 0 ? ncpus : 1);

	return b ? b : 1;
}

/* Words of the traced set's bitmap: the kernel's pid_max, which no tgid
 * reaches, from /proc, else the largest there is (PID_MAX_LIMIT, 2^22:
 * 512 KiB). */
static size_t traced_words(void)
{
	unsigned long pid_max = 0;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "re");

	if (f) {
		if (fscanf(f, "%lu", &pid_max) != 1)
			pid_max = 0;
		fclose(f);
	}
	if (!pid_max || pid_max > (1ul << 22))
		pid_max = 1ul << 22;
	return (pid_max + 63) / 64;
}

static int shared_index(const char *name)
{
	for (size_t i = 0; i < NSHARED; i++)
		if (!strcmp(name, cw_shared_maps[i]))
			return (int)i;
	return -1;
}

/* Write the settings into @obj's .rodata variable cw_config. */
static int set_config(struct bpf_object *obj, const struct cw_bpf_config *cfg)
{
	struct bpf_map *map;
	long long off;
	size_t size, var_size = 0;
	const void *cur;
	char *data;
	int err;

	bpf_object__for_each_map(map, obj) {
		const char *name = bpf_map__name(map);
		size_t n = strlen(name);

		if (bpf_map__is_internal(map) && n >= 7 && !strcmp(name + n - 7, ".rodata"))
			break;
	}
	off = map ? probe__datasec_offset(bpf_object__btf(obj), ".rodata", "cw_config", NULL,
					  &var_size)
		  : -1;
	cur = map ? bpf_map__initial_value(map, &size) : NULL;
	/* Both sides compile bpf/config.h; a size mismatch means a stale
	 * object, never something to write into. */
	if (off < 0 || !cur || var_size != sizeof(*cfg) || (size_t)off + sizeof(*cfg) > size)
		return -ENOENT;
	data = malloc(size);
	if (!data)
		return -ENOMEM;
	memcpy(data, cur, size);
	memcpy(data + off, cfg, sizeof(*cfg));
	err = bpf_map__set_initial_value(map, data, size);
	free(data);
	return err;
}

/* Size @map, or have it reuse the shared map of its name once one exists. */
static int setup_map(struct tracer *t, struct bpf_map *map)
{
	int i = shared_index(bpf_map__name(map));

	if (i < 0)
		return 0;
	if (t->shared[i] >= 0)
		return bpf_map__reuse_fd(map, t->shared[i]);
	switch (i) {
	case SHARED_EDGES:
		return bpf_map__set_max_entries(map, t->edge_ring_bytes);
	case SHARED_SAMPLES:
		return bpf_map__set_max_entries(map, t->sample_ring_bytes);
	case SHARED_TRACED:
		return bpf_map__set_max_entries(map, t->opts.traced_max);
	case SHARED_PC_ADDR:
		return bpf_map__set_max_entries(map, (uint32_t)t->ncpus);
	case SHARED_TRACED_BITS:
		return bpf_map__set_max_entries(map, (uint32_t)t->traced_words);
	case SHARED_SCRATCH:
		/* Record scratch (bpf/wait.bpf.h): a slot per CPU and
		 * program kind. */
		return bpf_map__set_max_entries(map, 2 * (uint32_t)t->ncpus);
	}
	return 0;
}

/*
 * Open @elf as @name: settings written, shared maps sized or reused.
 * @return the object, or NULL after a message with errno set.
 */
static struct bpf_object *open_object(struct tracer *t, const char *name, const void *elf,
				      size_t size)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = name);
	struct bpf_object *obj;
	struct bpf_map *map;
	int err;

	obj = bpf_object__open_mem(elf, size, &oo);
	if (!obj) {
		err = -errno;
		cw_msg("cannot open the BPF object of %s: %s", name, strerror(-err));
		errno = -err;
		return NULL;
	}
	err = set_config(obj, &t->cfg);
	if (err) {
		cw_msg("BPF object %s has no cw_config settings (bpf/causeway.bpf.h not included?)", name);
		goto fail;
	}
	bpf_object__for_each_map(map, obj) {
		err = setup_map(t, map);
		if (err) {
			cw_msg("BPF object %s: cannot set up map %s: %s", name, bpf_map__name(map),
			       strerror(-err));
			goto fail;
		}
	}
	return obj;
fail:
	bpf_object__close(obj);
	errno = -err;
	return NULL;
}

/* Load @obj; the first object loaded provides the shared maps. */
static int load_object(struct tracer *t, struct bpf_object *obj, const char *name)
{
	int err = bpf_object__load(obj);

	if (err) {
		cw_msg("cannot load the BPF programs of %s: %s%s", name, strerror(-err),
		       err == -EPERM ? " (bpf() denied: needs root or CAP_BPF and CAP_PERFMON)" : "");
		return err;
	}
	for (size_t i = 0; i < NSHARED; i++) {
		struct bpf_map *map;

		if (t->shared[i] >= 0)
			continue;
		map = bpf_object__find_map_by_name(obj, cw_shared_maps[i]);
		if (!map && i >= SHARED_SCRATCH)
			continue; /* the next object that has it creates it */
		if (!map) {
			cw_msg("BPF object %s lacks the shared map %s", name, cw_shared_maps[i]);
			return -ENOENT;
		}
		t->shared[i] = fcntl(bpf_map__fd(map), F_DUPFD_CLOEXEC, 0);
		if (t->shared[i] < 0)
			return -errno;
	}
	if (!t->traced_bits) {
		void *m = mmap(NULL, t->traced_words * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			       MAP_SHARED, t->shared[SHARED_TRACED_BITS], 0);

		if (m == MAP_FAILED)
			return -errno;
		t->traced_bits = m;
	}
	if (!t->ports) {
		void *m = mmap(NULL, PORTS_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
			       t->shared[SHARED_PORTS], 0);

		if (m == MAP_FAILED)
			return -errno;
		t->ports = m;
	}
	return 0;
}

/* The descriptor of program @prog of class @c, or NULL. */
static const struct cw_prog_desc *prog_desc(const struct cw_class_desc *c,
					    const struct bpf_program *prog)
{
	const struct cw_prog_desc *p = c->progs;

	while (p->name && strcmp(p->name, bpf_program__name(prog)))
		p++;
	return p->name ? p : NULL;
}

/*
 * Optional program @p of class @c will not run: note it for the capture
 * to say once (tracer__missing), and name the
 * record only it writes in records_missing, "kernel" when the kernel
 * lacks its hook, "denied" when the kernel refused it (@err). A variant
 * of the same hook that runs instead makes it no loss.
 */
static void optional_missing(struct tracer *t, const struct cw_class_desc *c,
			     const struct cw_prog_desc *p, int err, const char *why)
{
	const char *rec = p->rec ? cw_rec_name(p->rec) : NULL;
	bool absent = err == -ENOENT || err == -EINVAL || err == -ENODEV;
	size_t off = strlen(t->records_missing);

	for (const struct cw_prog_desc *q = c->progs; q->name; q++)
		if (q != p && q->kind == p->kind && !strcmp(q->tp, p->tp) && classes__prog_fits(q))
			return;
	if (c->id < CW_CLASS_MAX) {
		char *m = t->missing[c->id];
		size_t n = strlen(m);

		snprintf(m + n, sizeof(t->missing[0]) - n, "%s%s", n ? ", " : "", rec ? rec : p->name);
		if (!t->missing_why[c->id][0])
			snprintf(t->missing_why[c->id], sizeof(t->missing_why[0]), "%s", why);
	}
	if (rec && off < sizeof(t->records_missing))
		snprintf(t->records_missing + off, sizeof(t->records_missing) - off, "%s%s:%s",
			 off ? "," : "", rec, absent ? "kernel" : "denied");
}

/*
 * Autoload the programs of @c that fit this kernel, and with
 * @no_optional none of its optional ones; a program the descriptor does
 * not list is a mistake in the table, said loudly. @return how many
 * optional programs are to be loaded, or a negative errno.
 */
static int choose_programs(struct tracer *t, struct bpf_object *obj, const struct cw_class_desc *c,
			   bool no_optional)
{
	struct bpf_program *prog;
	int optional = 0;

	bpf_object__for_each_program(prog, obj) {
		const struct cw_prog_desc *p = prog_desc(c, prog), *q;
		char why[200];
		int err;

		if (!p) {
			cw_msg("program %s of class %s is not in its descriptor (capture/classes.c)",
			       bpf_program__name(prog), cw_class_names[c->id]);
			return -EINVAL;
		}
		if ((p->optional && no_optional) || (p->feature && !(p->feature & t->opts.features)) ||
		    (p->done_by && (t->loading & 1u << p->done_by)) ||
		    (t->cfg.follow_only && !p->follows)) {
			bpf_program__set_autoload(prog, false);
			continue;
		}
		err = classes__prog_probe(p);
		/* What it needs says why it does not run, in its turn. */
		q = classes__prog_needs(c, p);
		if (!err && q && !classes__prog_fits(q)) {
			bpf_program__set_autoload(prog, false);
			continue;
		}
		bpf_program__set_autoload(prog, !err);
		if (!err) {
			optional += p->optional;
		} else if (p->optional) {
			classes__prog_why(p, err, why, sizeof(why));
			optional_missing(t, c, p, err, why);
		}
	}
	return optional;
}

/*
 * The ksym method: load bpf/context.bpf.c and run its program once per
 * CPU to store that CPU's preempt count address in pc_addr.
 * @return 0, or a negative errno with @why said.
 */
static int locate_with_ksym(struct tracer *t, char *why, size_t len)
{
	size_t size;
	const void *elf = context_bpf__elf_bytes(&size);
	struct bpf_object *obj = open_object(t, "cw_context", elf, size);
	struct bpf_program *prog;
	int err, fd;

	if (!obj)
		return -errno;
	t->objs[t->nobjs++] = obj;
	err = load_object(t, obj, "the ksym context method");
	if (err) {
		snprintf(why, len, "its program did not load: %s", strerror(-err));
		return err;
	}
	prog = bpf_object__next_program(obj, NULL);
	fd = prog ? bpf_program__fd(prog) : -1;
	for (int cpu = 0; cpu < t->ncpus; cpu++) {
		__u64 args[1] = { (__u64)cpu };
		LIBBPF_OPTS(bpf_test_run_opts, ro, .ctx_in = args, .ctx_size_in = sizeof(args));

		err = fd < 0 ? -ENOENT : bpf_prog_test_run_opts(fd, &ro);
		if (!err && ro.retval)
			err = -ENOENT;
		if (err) {
			snprintf(why, len, "no address for CPU %d: %s", cpu, strerror(-err));
			return err;
		}
	}
	return 0;
}

static void forget_addresses(struct tracer *t)
{
	__u64 zero = 0;

	for (__u32 cpu = 0; cpu < (__u32)t->ncpus; cpu++)
		bpf_map_update_elem(t->shared[SHARED_PC_ADDR], &cpu, &zero, BPF_ANY);
}

/*
 * Which methods could work here: bit per CW_CTXM_*, and for those that
 * cannot, why, in @why[method].
 */
static unsigned ctx_candidates(struct cw_bpf_config *cfg, char why[][160])
{
	unsigned ok = 1u << CW_CTXM_NONE;
#if defined(__x86_64__)
	static const char *const syms[] = { "__preempt_count", "pcpu_hot" };
	long long delta;

	if (probe__kallsyms(syms, 2) >= 0)
		ok |= 1u << CW_CTXM_KSYM;
	else
		snprintf(why[CW_CTXM_KSYM], 160,
			 "/proc/kallsyms lists neither __preempt_count nor pcpu_hot "
			 "(kernel without CONFIG_KALLSYMS_ALL)");
	if (probe__preempt_count_delta(&delta))
		snprintf(why[CW_CTXM_RUNQUEUE], 160,
			 "the kernel's BTF does not place the preempt count and runqueues "
			 "in .data..percpu");
	else if (probe__runqueue_reachable())
		snprintf(why[CW_CTXM_RUNQUEUE], 160,
			 "struct cfs_rq has no rq member (kernel without CONFIG_FAIR_GROUP_SCHED)");
	else {
		ok |= 1u << CW_CTXM_RUNQUEUE;
		cfg->pc_delta = delta;
	}
	snprintf(why[CW_CTXM_THREAD_INFO], 160, "only arm64 keeps the preempt count in the task");
#elif defined(__aarch64__)
	ok |= 1u << CW_CTXM_THREAD_INFO;
	snprintf(why[CW_CTXM_KSYM], 160, "x86 only");
	snprintf(why[CW_CTXM_RUNQUEUE], 160, "x86 only");
#else
	for (int m = 1; m < CW_CTXM_MAX; m++)
		snprintf(why[m], 160, "not known how to read the preempt count on this architecture");
#endif
	return ok;
}

/* Settle t->ctx_method and t->cfg.ctx_method before the classes load. */
static int choose_ctx_method(struct tracer *t)
{
	char why[CW_CTXM_MAX][160] = { { 0 } };
	unsigned ok = ctx_candidates(&t->cfg, why);
	int forced = t->env->ctx_method, m;

	if (forced >= 0 && !(ok & (1u << forced))) {
		cw_msg("cannot start: context method %s is not available: %s",
		       cw_ctx_method_names[forced], why[forced]);
		return -ENOTSUP;
	}
	if ((forced < 0 && (ok & 1u << CW_CTXM_KSYM)) || forced == CW_CTXM_KSYM) {
		int err = locate_with_ksym(t, why[CW_CTXM_KSYM], sizeof(why[0]));

		if (!err) {
			t->ctx_method = CW_CTXM_KSYM;
			snprintf(t->ctx_why, sizeof(t->ctx_why), "per-CPU addresses from kallsyms");
			goto done;
		}
		if (forced == CW_CTXM_KSYM) {
			cw_msg("cannot start: context method ksym failed: %s", why[CW_CTXM_KSYM]);
			return err;
		}
		if (t->shared[SHARED_PC_ADDR] >= 0)
			forget_addresses(t);
		ok &= ~(1u << CW_CTXM_KSYM);
	}
	for (m = forced >= 0 ? forced : CW_CTXM_MAX - 1; m > CW_CTXM_NONE; m--)
		if (ok & (1u << m))
			break;
	t->ctx_method = m;
	if (m == CW_CTXM_RUNQUEUE)
		snprintf(t->ctx_why, sizeof(t->ctx_why), "this CPU's runqueue and a BTF offset%s%s",
			 forced < 0 ? "; ksym: " : "", forced < 0 ? why[CW_CTXM_KSYM] : "");
	else if (m == CW_CTXM_THREAD_INFO)
		snprintf(t->ctx_why, sizeof(t->ctx_why), "the task's thread_info");
	else if (forced == CW_CTXM_NONE)
		snprintf(t->ctx_why, sizeof(t->ctx_why), "as asked (--context-method none)");
	else
		snprintf(t->ctx_why, sizeof(t->ctx_why), "%s",
			 why[CW_CTXM_RUNQUEUE][0] ? why[CW_CTXM_RUNQUEUE] : why[CW_CTXM_THREAD_INFO]);
done:
	t->cfg.ctx_method = (__u8)t->ctx_method;
	return 0;
}

/*
 * Open, choose and load the object of class @c. The probes cannot see
 * everything (a verifier that refuses what a trial program passed): when
 * the object does not load with its optional programs, it is loaded again
 * without them, and each is named as missing.
 */
static int load_class(struct tracer *t, const struct cw_class_desc *c)
{
	const char *name = cw_class_names[c->id];
	char oname[32];
	size_t size;
	const void *elf = c->elf_bytes(&size);
	struct bpf_object *obj;
	struct bpf_program *prog;
	int err, optional;

	snprintf(oname, sizeof(oname), "cw_%s", name);
	obj = open_object(t, oname, elf, size);
	if (!obj)
		return -errno;
	t->descs[t->nobjs] = c;
	t->objs[t->nobjs++] = obj;
	optional = choose_programs(t, obj, c, false);
	if (optional < 0)
		return optional;
	err = load_object(t, obj, name);
	if (!err || !optional)
		return err;

	cw_notice("%s: loading it again without its optional programs", name);
	bpf_object__for_each_program(prog, obj) {
		const struct cw_prog_desc *p = prog_desc(c, prog);

		if (p && p->optional && bpf_program__autoload(prog))
			optional_missing(t, c, p, -EPERM,
					 "the class's object did not load with it");
	}
	bpf_object__close(obj);
	t->objs[--t->nobjs] = NULL;
	obj = open_object(t, oname, elf, size);
	if (!obj)
		return -errno;
	t->descs[t->nobjs] = c;
	t->objs[t->nobjs++] = obj;
	err = choose_programs(t, obj, c, true);
	return err < 0 ? err : load_object(t, obj, name);
}

struct tracer *tracer__load(const struct env *env, const struct tracer_opts *opts,
			    const struct cw_class_sel *sel)
{
	struct tracer *t = calloc(1, sizeof(*t));
	int err = 0;

	if (!t)
		return NULL;
	t->env = env;
	t->opts = *opts;
	t->edge_ring_bytes = (uint32_t)env->edge_ring_bytes;
	/* The ring exists in every object (bpf/causeway.bpf.h): one page
	 * when nothing writes to it. */
	t->sample_ring_bytes = opts->sampling ? (uint32_t)env->sample_ring_bytes : 4096;
	t->sample_period_ns = env->freq ? 1000000000ull / env->freq : 0;
	for (size_t i = 0; i < NSHARED; i++)
		t->shared[i] = -1;
	t->traced_words = traced_words();
	t->ncpus = libbpf_num_possible_cpus();
	t->cfg.self_tgid = (__u32)opts->self;
	t->cfg.filter_enabled = opts->filter;
	t->cfg.ncpus = (__u64)(t->ncpus > 0 ? t->ncpus : 1);
	t->cfg.wakeup_bytes = ring_wakeup(t->edge_ring_bytes, t->ncpus);
	t->cfg.sample_wakeup_bytes = ring_wakeup(t->sample_ring_bytes, t->ncpus);
	t->cfg.sample_period_ns = t->sample_period_ns;
	t->cfg.sample_stack_bytes = env->dwarf_stack;
	t->cfg.sample_window_ns = SAMPLE_WINDOW_NS;
	/* Per window, x 2^32; options.c bounds the budget below 2^32. The
	 * default budget is the off-CPU waits' alone: CPU ticks have one
	 * already, -F times the CPUs, which the user chose. */
	t->cfg.offcpu_quota = (env->sample_budget << 32) / (1000000000ull / SAMPLE_WINDOW_NS);
	t->cfg.sample_quota = (env->sample_budget_cpu << 32) / (1000000000ull / SAMPLE_WINDOW_NS);
	t->keys = calloc(opts->traced_max, sizeof(*t->keys));
	if (t->ncpus <= 0 || !t->keys) {
		err = t->ncpus <= 0 ? t->ncpus : -ENOMEM;
		cw_msg("cannot start: %s", strerror(-err));
		goto fail;
	}
	err = choose_ctx_method(t);
	for (size_t i = 0; i < cw_nclasses; i++)
		if (sel->c[cw_classes[i].id].status == CW_CLS_OK)
			t->loading |= 1u << cw_classes[i].id;
	/* The objects are opened with this setting from here on (the
	 * context method's is not one that reads it). */
	t->cfg.switch_waits = (t->loading & 1u << CW_CLASS_SCHED) &&
			      (t->loading & 1u << CW_CLASS_SAMPLE) &&
			      (t->opts.features & CW_FEAT_OFFCPU);
	for (size_t i = 0; i < cw_nclasses && !err; i++)
		if (sel->c[cw_classes[i].id].status == CW_CLS_OK)
			err = load_class(t, &cw_classes[i]);
	/* -p follows forks whatever -e says (bpf/sched.bpf.c): without the
	 * sched class, its fork and exits alone keep the traced set. */
	if (!err && opts->filter && !(t->loading & 1u << CW_CLASS_SCHED)) {
		t->cfg.follow_only = 1;
		err = load_class(t, classes__find("sched"));
		t->cfg.follow_only = 0;
		t->follows_alone = !err;
	}
	if (err)
		goto fail;
	probe__cleanup();
	return t;
fail:
	probe__cleanup();
	tracer__free(t);
	errno = -err;
	return NULL;
}

int tracer__ctx_method(const struct tracer *t, const char **why)
{
	if (why)
		*why = t->ctx_why;
	return t->ctx_method;
}

int tracer__trace(struct tracer *t, pid_t tgid)
{
	struct cw_traced live = { .state = CW_TRACED_LIVE };
	__u32 key = (__u32)tgid;

	if (bpf_map_update_elem(t->shared[SHARED_TRACED], &key, &live, BPF_ANY))
		return -errno;
	/* The programs set and clear other bits of the word meanwhile. */
	if (key / 64 < t->traced_words)
		__atomic_fetch_or(&t->traced_bits[key / 64], 1ull << (key % 64), __ATOMIC_SEQ_CST);
	/* The ports its sockets already have: a server's listening one
	 * above all, so that its first clients' packets are remembered
	 * (bpf/net.bpf.c). */
	if (t->ports && (t->loading & 1u << CW_CLASS_NET))
		ports__mark(tgid, t->ports);
	return 0;
}

long tracer__traced_count(struct tracer *t)
{
	int fd = t->shared[SHARED_TRACED];
	size_t n = 0, live = 0;
	__u32 key, *prev = NULL;

	/* Collect first: deleting while walking could restart the walk. */
	while (n < t->opts.traced_max && !bpf_map_get_next_key(fd, prev, &key)) {
		t->keys[n++] = (pid_t)key;
		prev = &key;
	}
	for (size_t i = 0; i < n; i++) {
		if (kill(t->keys[i], 0) && errno == ESRCH) {
			key = (__u32)t->keys[i];
			bpf_map_delete_elem(fd, &key);
		} else {
			live++;
		}
	}
	return (long)live;
}

const char *tracer__missing(const struct tracer *t, unsigned class, const char **why)
{
	if (class >= CW_CLASS_MAX || !t->missing[class][0])
		return NULL;
	*why = t->missing_why[class];
	return t->missing[class];
}

const char *tracer__records_missing(const struct tracer *t)
{
	return t->records_missing;
}

/* Keep @link, a perf-event one when @slow. */
static int keep_link(struct tracer *t, struct bpf_link *link, bool slow)
{
	struct bpf_link ***v = slow ? &t->slow : &t->links;
	size_t *n = slow ? &t->nslow : &t->nlinks;
	struct bpf_link **links = realloc(*v, (*n + 1) * sizeof(*links));

	if (!links) {
		bpf_link__destroy(link);
		cw_msg("out of memory");
		return -ENOMEM;
	}
	*v = links;
	links[(*n)++] = link;
	return 0;
}

/*
 * A perf_event program runs on events, not on a hook: open the tick on
 * every online CPU and attach @prog to each. The link owns the event, so
 * detaching closes it.
 */
static int attach_ticks(struct tracer *t, struct bpf_program *prog)
{
	int *cpus = calloc((size_t)t->ncpus, sizeof(*cpus));
	int n = cpus ? perfev__online_cpus(cpus, t->ncpus) : -ENOMEM, err = n < 0 ? n : 0;

	for (int i = 0; i < n && !err; i++) {
		int fd = perfev__open_clock(cpus[i], t->sample_period_ns);
		struct bpf_link *link;

		if (fd < 0) {
			err = fd;
			cw_msg("cannot open the %s event on CPU %d: %s", PERFEV_SAMPLE_EVENT, cpus[i],
			       strerror(-err));
			break;
		}
		link = bpf_program__attach_perf_event(prog, fd);
		if (!link) {
			err = -errno;
			close(fd);
			cw_msg("cannot attach BPF program %s on CPU %d: %s", bpf_program__name(prog),
			       cpus[i], strerror(-err));
			break;
		}
		err = keep_link(t, link, true);
	}
	if (n < 0)
		cw_msg("cannot list the online CPUs: %s", strerror(-n));
	free(cpus);
	return err;
}

/* Did optional program @p fail to attach (one of @n in @failed)? */
static bool attach_failed(const struct cw_prog_desc *const *failed, size_t n,
			  const struct cw_prog_desc *p)
{
	while (p && n--)
		if (failed[n] == p)
			return true;
	return false;
}

int tracer__attach(struct tracer *t)
{
	for (size_t i = 0; i < t->nobjs; i++) {
		const struct cw_prog_desc *failed[16];
		struct bpf_program *prog;
		size_t nfailed = 0;

		bpf_object__for_each_program(prog, t->objs[i]) {
			const struct cw_prog_desc *p = t->descs[i] ? prog_desc(t->descs[i], prog) : NULL;
			const struct cw_prog_desc *needs;
			struct bpf_link *link;
			int err;

			/* What it needs, attached before it, said why. */
			needs = p ? classes__prog_needs(t->descs[i], p) : NULL;
			if (attach_failed(failed, nfailed, needs))
				continue;

			/* context.bpf.c's program is run, not attached; a USDT
			 * program is attached per probe (capture/usdt.c). */
			if (!bpf_program__autoload(prog) ||
			    bpf_program__type(prog) == BPF_PROG_TYPE_RAW_TRACEPOINT ||
			    (p && p->kind == CW_PROG_USDT))
				continue;
			if (bpf_program__type(prog) == BPF_PROG_TYPE_PERF_EVENT) {
				err = attach_ticks(t, prog);
				if (err)
					return err;
				continue;
			}
			link = bpf_program__attach(prog);
			if (!link && p && p->optional) {
				char why[200];

				err = -errno;
				snprintf(why, sizeof(why), "cannot attach to %s: %s", p->tp, strerror(-err));
				/* not -ENOENT: the probe found the hook */
				optional_missing(t, t->descs[i], p, err == -ENOENT ? -EPERM : err, why);
				if (nfailed < sizeof(failed) / sizeof(failed[0]))
					failed[nfailed++] = p;
				continue;
			}
			if (!link) {
				err = -errno;
				cw_msg("cannot attach BPF program %s: %s", bpf_program__name(prog),
				       strerror(-err));
				return err;
			}
			err = keep_link(t, link, p && p->kind == CW_PROG_TRACEPOINT);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Close every descriptor from @lo up to, not including, @hi. */
static void close_from(int lo, int hi)
{
	if (lo < hi && syscall(SYS_close_range, lo, hi - 1, 0))
		for (int fd = lo; fd < hi; fd++)
			close(fd);
}

static int cmp_fd(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/*
 * The closer: keep only the @n descriptors @keep (sorted), @wait's read
 * end among them, and exit once the capture has closed its own copies
 * (EOF on @wait), so that the exit drops the last references.
 * Async-signal-safe calls only: this is a fork of a process with threads.
 */
static void closer_main(const int *keep, size_t n, int wait, int max_fd)
{
	int lo = 0;
	char c;

	for (size_t i = 0; i < n; i++) {
		close_from(lo, keep[i]);
		lo = keep[i] + 1;
	}
	/* every descriptor above, however high the limit lets them go */
	if (syscall(SYS_close_range, lo, ~0U, 0))
		close_from(lo, max_fd);
	while (read(wait, &c, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

/*
 * Close the perf-event links without waiting for them. Detaching a BPF
 * program from a perf event, and closing a tracefs tracepoint's event,
 * each wait for an RCU tasks-trace grace period
 * (perf_event_detach_bpf_prog(), perf_trace_event_unreg()), in the
 * thread that drops the last reference. While syscall events are
 * attached every syscall of every task is such a reader, and under 16
 * ping-pong pairs on 2 CPUs one grace period took from 2 s to over a
 * minute: the ring filled meanwhile, or the capture took minutes to exit
 * after its -d. So a child process takes copies of them, the capture
 * closes its own at once, and the child's exit drops the last
 * references and waits in the capture's stead. Their programs run until
 * then, into a ring nobody reads: what they write after the capture's
 * last drain is after its end. Without a child they are closed here,
 * and waited for.
 */
static void detach_slow(struct tracer *t)
{
	int *keep = t->nslow ? calloc(t->nslow + 1, sizeof(*keep)) : NULL;
	int wait[2] = { -1, -1 };
	struct rlimit lim;
	int max_fd = 65536;

	if (keep && !pipe2(wait, O_CLOEXEC)) {
		for (size_t i = 0; i < t->nslow; i++)
			keep[i] = bpf_link__fd(t->slow[i]);
		keep[t->nslow] = wait[0];
		qsort(keep, t->nslow + 1, sizeof(*keep), cmp_fd);
		if (!getrlimit(RLIMIT_NOFILE, &lim) && lim.rlim_cur < (rlim_t)max_fd)
			max_fd = (int)lim.rlim_cur;
		t->closer = fork();
		if (!t->closer)
			closer_main(keep, t->nslow + 1, wait[0], max_fd);
		if (t->closer < 0) {
			cw_notice("cannot start a process to close the perf events (%s): "
				  "waiting for the kernel to close them",
				  strerror(errno));
			t->closer = 0;
		}
	}
	while (t->nslow)
		bpf_link__destroy(t->slow[--t->nslow]);
	if (wait[0] >= 0) {
		close(wait[0]);
		close(wait[1]);
	}
	free(keep);
}

/*
 * Last attached, first detached. Where two classes attach to one
 * tracepoint (sched_waking, softirq_exit), the kernel keeps its probes in
 * attach order, and removing the first of two makes it wait for an RCU
 * grace period before it returns (tracepoint_remove_func(): the probe
 * left has other data), which under load takes seconds, each, while the
 * ring fills. Removing the last one leaves the first in place: no wait.
 * The slow links go after all the others, so that nothing reads the
 * cause slots their programs still set.
 */
void tracer__detach(struct tracer *t)
{
	if (!t)
		return;
	while (t->nlinks)
		bpf_link__destroy(t->links[--t->nlinks]);
	detach_slow(t);
}

uint64_t tracer__runs_missed(const struct tracer *t, char *names, size_t size)
{
	uint64_t total = 0;
	size_t len = 0;

	if (size)
		names[0] = '\0';
	for (size_t i = 0; t && i < t->nobjs; i++) {
		struct bpf_program *prog;

		bpf_object__for_each_program(prog, t->objs[i]) {
			struct bpf_prog_info info = { 0 };
			__u32 ilen = sizeof(info);
			int fd = bpf_program__fd(prog), n;

			if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &ilen) ||
			    !info.recursion_misses)
				continue;
			total += info.recursion_misses;
			if (len >= size)
				continue;
			n = snprintf(names + len, size - len, "%s%s %llu", len ? "," : "",
				     bpf_program__name(prog), (unsigned long long)info.recursion_misses);
			len = n < 0 ? size : len + (size_t)n;
		}
	}
	return total;
}

int tracer__ring_fd(const struct tracer *t)
{
	return t->shared[SHARED_EDGES];
}

int tracer__sample_ring_fd(const struct tracer *t)
{
	return t->shared[SHARED_SAMPLES];
}

bool tracer__is_traced(const struct tracer *t, uint32_t tgid)
{
	struct cw_traced v;

	return !bpf_map_lookup_elem(t->shared[SHARED_TRACED], &tgid, &v);
}

struct bpf_object *tracer__object(const struct tracer *t, int class_id)
{
	for (size_t i = 0; i < t->nobjs; i++)
		if (t->descs[i] && t->descs[i]->id == class_id)
			return t->objs[i];
	return NULL;
}

int tracer__counters_fd(const struct tracer *t)
{
	return t->shared[SHARED_COUNTERS];
}

bool tracer__follows_alone(const struct tracer *t)
{
	return t->follows_alone;
}

int tracer__ring_cpu_fd(const struct tracer *t)
{
	return t->shared[SHARED_RING_CPU];
}

void tracer__free(struct tracer *t)
{
	if (!t)
		return;
	tracer__detach(t);
	/* Reaped if done; else its parent's end hands it to init. */
	if (t->closer > 0)
		waitpid(t->closer, NULL, WNOHANG);
	free(t->links);
	free(t->slow);
	for (size_t i = 0; i < t->nobjs; i++)
		bpf_object__close(t->objs[i]);
	if (t->traced_bits)
		munmap(t->traced_bits, t->traced_words * sizeof(uint64_t));
	if (t->ports)
		munmap(t->ports, PORTS_BYTES);
	for (size_t i = 0; i < NSHARED; i++)
		if (t->shared[i] >= 0)
			close(t->shared[i]);
	free(t->keys);
	free(t);
}
