// SPDX-License-Identifier: MIT
#include <errno.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "capture/probe.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static int cap_has(const struct __user_cap_data_struct *d, int cap)
{
	return !!(d[cap / 32].effective & (1u << (cap % 32)));
}

int probe__privileges(char *why, size_t len)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };

	if (geteuid() == 0)
		return 0;
	if (syscall(SYS_capget, &h, d)) {
		snprintf(why, len, "not root, and capabilities cannot be read");
		return -EPERM;
	}
	if (cap_has(d, CAP_SYS_ADMIN))
		return 0;
	if (cap_has(d, CAP_BPF) && cap_has(d, CAP_PERFMON))
		return 0;
	snprintf(why, len, "needs root, or CAP_BPF and CAP_PERFMON (missing:%s%s)",
		 cap_has(d, CAP_BPF) ? "" : " CAP_BPF", cap_has(d, CAP_PERFMON) ? "" : " CAP_PERFMON");
	return -EPERM;
}

int probe__vmlinux_btf(void)
{
	return access("/sys/kernel/btf/vmlinux", R_OK) ? -errno : 0;
}

static struct btf *vmlinux_btf;

static int load_btf(void)
{
	if (!vmlinux_btf) {
		vmlinux_btf = btf__load_vmlinux_btf();
		if (!vmlinux_btf)
			return -errno;
	}
	return 0;
}

/* CAUSEWAY_HIDE_TRACEPOINTS=tp1,tp2: the live tests' stand-in for a
 * kernel that lacks them. */
static bool hidden(const char *tp)
{
	const char *list = getenv("CAUSEWAY_HIDE_TRACEPOINTS");
	size_t n = strlen(tp);

	for (const char *p = list; p && *p; p += strcspn(p, ","), p += *p == ',')
		if (!strncmp(p, tp, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

int probe__tp_nargs(const char *tp)
{
	char name[128];
	const struct btf_type *t;
	int id;

	if (hidden(tp))
		return -ENOENT;
	if ((id = load_btf()))
		return id;
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(vmlinux_btf, name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return id;
	/* typedef -> pointer -> func_proto(void *__data, args...) */
	t = btf__type_by_id(vmlinux_btf, id);
	t = t ? btf__type_by_id(vmlinux_btf, t->type) : NULL;
	if (!t || !btf_is_ptr(t))
		return -ENOENT;
	t = btf__type_by_id(vmlinux_btf, t->type);
	if (!t || !btf_is_func_proto(t) || btf_vlen(t) < 1)
		return -ENOENT;
	return btf_vlen(t) - 1;
}

int probe__tracepoint(const char *tp)
{
	/* libbpf reads the tracepoint's id under debugfs when it is there,
	 * else under tracefs: either will do. */
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	const char *slash = strchr(tp, '/');
	bool mounted = false;
	char path[256];

	if (!slash || hidden(tp) || hidden(slash + 1))
		return -ENOENT;
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(path, sizeof(path), "%s/events", roots[i]);
		if (access(path, F_OK))
			continue;
		mounted = true;
		snprintf(path, sizeof(path), "%s/events/%s/id", roots[i], tp);
		if (!access(path, R_OK))
			return 0;
	}
	return mounted ? -ENOENT : -ENODEV;
}

int probe__function(const char *func, bool fexit)
{
	/* r0 = 0; exit */
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = fexit ? BPF_TRACE_FEXIT : BPF_TRACE_FENTRY);
	int id, fd;

	if (hidden(func))
		return -ENOENT;
	if ((id = load_btf()))
		return id;
	id = btf__find_by_name_kind(vmlinux_btf, func, BTF_KIND_FUNC);
	if (id < 0)
		return -ENOENT;
	opts.attach_btf_id = (__u32)id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns, 2, &opts);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int probe__uprobe(void)
{
	if (hidden("uprobe"))
		return -ENOENT;
	return access("/sys/bus/event_source/devices/uprobe/type", R_OK) ? -ENOENT : 0;
}

long long probe__datasec_offset(const struct btf *btf, const char *sec, const char *name,
				const struct btf_type **vt, size_t *size)
{
	const struct btf_type *t;
	const struct btf_var_secinfo *vs;
	int id = btf__find_by_name_kind(btf, sec, BTF_KIND_DATASEC);

	if (id < 0)
		return -1;
	t = btf__type_by_id(btf, id);
	vs = btf_var_secinfos(t);
	for (int i = 0; i < btf_vlen(t); i++, vs++) {
		const struct btf_type *v = btf__type_by_id(btf, vs->type);

		if (v && btf_is_var(v) && !strcmp(btf__name_by_offset(btf, v->name_off), name)) {
			if (vt)
				*vt = btf__type_by_id(btf, v->type);
			if (size)
				*size = vs->size;
			return vs->offset;
		}
	}
	return -1;
}

/* Byte offset of member @name in composite @t, looking through anonymous
 * members; -1 when absent. */
static long long member_offset(const struct btf_type *t, const char *name)
{
	const struct btf_member *m;

	while (t && (btf_is_typedef(t) || btf_is_mod(t)))
		t = btf__type_by_id(vmlinux_btf, t->type);
	if (!t || !btf_is_composite(t))
		return -1;
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		long long off = btf_member_bit_offset(t, i) / 8, sub;

		if (m->name_off) {
			if (!strcmp(btf__name_by_offset(vmlinux_btf, m->name_off), name))
				return off;
			continue;
		}
		sub = member_offset(btf__type_by_id(vmlinux_btf, m->type), name);
		if (sub >= 0)
			return off + sub;
	}
	return -1;
}

int probe__preempt_count_delta(long long *delta)
{
	const struct btf_type *hot = NULL;
	long long rq, pc;
	int err;

	if ((err = load_btf()))
		return err;
	rq = probe__datasec_offset(vmlinux_btf, ".data..percpu", "runqueues", NULL, NULL);
	pc = probe__datasec_offset(vmlinux_btf, ".data..percpu", "__preempt_count", NULL, NULL);
	if (pc < 0) {
		pc = probe__datasec_offset(vmlinux_btf, ".data..percpu", "pcpu_hot", &hot, NULL);
		if (pc >= 0) {
			/* 6.2..6.14: struct pcpu_hot, preempt_count inside an
			 * anonymous union/struct */
			long long moff = hot ? member_offset(hot, "preempt_count") : -1;

			pc = moff < 0 ? -1 : pc + moff;
		}
	}
	if (rq < 0 || pc < 0)
		return -ENOENT;
	*delta = pc - rq;
	return 0;
}

int probe__runqueue_reachable(void)
{
	int id, err;

	if ((err = load_btf()))
		return err;
	id = btf__find_by_name_kind(vmlinux_btf, "cfs_rq", BTF_KIND_STRUCT);
	if (id < 0)
		return id;
	return member_offset(btf__type_by_id(vmlinux_btf, id), "rq") < 0 ? -ENOENT : 0;
}

int probe__kallsyms(const char *const *names, size_t n)
{
	char line[512];
	int found = -ENOENT;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		return -errno;
	/* "ADDRESS TYPE NAME [MODULE]" */
	while (found < 0 && fgets(line, sizeof(line), f)) {
		char *name = strchr(line, ' ');

		name = name ? strchr(name + 1, ' ') : NULL;
		if (!name++)
			continue;
		name[strcspn(name, " \t\n")] = 0;
		for (size_t i = 0; i < n; i++)
			if (!strcmp(name, names[i]))
				found = (int)i;
	}
	fclose(f);
	return found;
}

void probe__cleanup(void)
{
	btf__free(vmlinux_btf);
	vmlinux_btf = NULL;
}

int probe__cpu_clock(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.disabled = 1,
	};
	int cpu = sched_getcpu();
	int fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu < 0 ? 0 : cpu, -1,
			      PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}
