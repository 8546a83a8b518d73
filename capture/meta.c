// SPDX-License-Identifier: MIT
/*
 * Metadata records: key/value pairs, and the sets of keys that open and
 * close a trace (schema/format.md, "Metadata keys").
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>

#include "schema/events.h"
#include "trace/format.h"
#include "trace/writer.h"
#include "capture/clock.h"
#include "capture/ksyms.h"
#include "capture/mapsnap.h"
#include "capture/procsnap.h"
#include "capture/meta.h"
#include "capture/options.h"

#define PAD8(n) (((n) + 7u) & ~(size_t)7u)
/* The largest record cw_hdr.size allows, a multiple of 8. */
#define KV_MAX 65528u
#define KEY_MAX 64u
#define VAL_MAX (KV_MAX - sizeof(struct cw_meta_kv) - KEY_MAX)

int meta__put_kv(struct cw_writer *w, uint64_t ts, const char *key, const char *val)
{
	size_t klen = strlen(key), vlen = strlen(val), len;
	struct cw_meta_kv *kv;
	int err;

	/* A value longer than a record can hold (an enormous command line)
	 * is cut rather than failing the capture. */
	if (klen > KEY_MAX)
		return -EINVAL;
	if (vlen > VAL_MAX)
		vlen = VAL_MAX;
	len = PAD8(sizeof(*kv) + klen + vlen);
	kv = calloc(1, len);
	if (!kv)
		return -ENOMEM;
	kv->hdr.type = CW_REC_META_KV;
	kv->hdr.size = (uint16_t)len;
	kv->hdr.cpu = 0xffff;
	kv->hdr.ts = ts;
	kv->key_len = (uint16_t)klen;
	kv->val_len = (uint16_t)vlen;
	memcpy(kv + 1, key, klen);
	memcpy((char *)(kv + 1) + klen, val, vlen);
	err = cw_writer__append(w, kv, len);
	free(kv);
	return err;
}

int meta__put_kv_u64(struct cw_writer *w, uint64_t ts, const char *key, uint64_t val)
{
	char s[32];

	snprintf(s, sizeof(s), "%" PRIu64, val);
	return meta__put_kv(w, ts, key, s);
}


static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/*
 * traced_pids: as many pids as one record holds, and how many did not
 * fit in traced_pids_omitted, so a reader never takes a cut list for the
 * whole set.
 */
static int put_traced(struct cw_writer *w, uint64_t ts, const pid_t *pids, size_t n)
{
	char *buf = malloc(VAL_MAX + 16);
	size_t off = 0, i;
	int err;

	if (!buf)
		return -ENOMEM;
	buf[0] = 0;
	for (i = 0; i < n; i++) {
		char one[16];
		int k = snprintf(one, sizeof(one), "%s%d", i ? "," : "", pids[i]);

		if (off + (size_t)k > VAL_MAX)
			break;
		memcpy(buf + off, one, (size_t)k + 1);
		off += (size_t)k;
	}
	err = meta__put_kv(w, ts, "traced_pids", buf);
	free(buf);
	if (!err && i < n)
		err = meta__put_kv_u64(w, ts, "traced_pids_omitted", n - i);
	return err;
}

/* The sample plane's settings (schema/format.md, "Metadata keys"). */
static int put_sampling(struct cw_writer *w, uint64_t ts, const struct meta_start *m)
{
	const struct env *env = m->env;
	int err = 0;

	err = err ?: meta__put_kv_u64(w, ts, "sample_freq", env->freq);
	err = err ?: meta__put_kv_u64(w, ts, "offcpu", !env->no_offcpu);
	if (!ENV_SAMPLING(env))
		return err;
	if (env->freq)
		err = err ?: meta__put_kv(w, ts, "sample_event", m->sample_event);
	err = err ?: meta__put_kv(w, ts, "call_graph", env->dwarf_stack ? "dwarf" : "fp");
	if (env->dwarf_stack)
		err = err ?: meta__put_kv_u64(w, ts, "dwarf_stack_size", env->dwarf_stack);
	err = err ?: meta__put_kv_u64(w, ts, "sample_budget", env->sample_budget);
	err = err ?: meta__put_kv_u64(w, ts, "sample_budget_cpu", env->sample_budget_cpu);
	err = err ?: meta__put_kv_u64(w, ts, "sample_ring_bytes", env->sample_ring_bytes);
	return err;
}

int meta__write_start(struct cw_writer *w, const struct meta_start *m, const struct proc_snap *snap)
{
	char buf[4096];
	struct utsname u;
	uint64_t mono, real, ts = m->start_ns;
	size_t off = 0;
	int err = 0;

	uname(&u);
	/* Back to back, so the analyzer can map capture time to wall time. */
	mono = clock__now();
	real = clock__ns(CLOCK_REALTIME);

	err = err ?: meta__put_kv(w, ts, "kernel_release", u.release);
	err = err ?: meta__put_kv(w, ts, "hostname", u.nodename);
	if (read_line("/proc/sys/kernel/random/boot_id", buf, sizeof(buf)))
		strcpy(buf, "unknown");
	err = err ?: meta__put_kv(w, ts, "boot_id", buf);
	buf[0] = 0;
	for (int i = 0; i < m->env->argc && off < sizeof(buf); i++)
		off += snprintf(buf + off, sizeof(buf) - off, "%s%s", i ? " " : "", m->env->argv[i]);
	err = err ?: meta__put_kv(w, ts, "cmdline", buf);
	/* The effective options, cut at 1 KiB as they always were. */
	options__string(m->env, m->classes, buf, 1024);
	err = err ?: meta__put_kv(w, ts, "options", buf);
	err = err ?: meta__put_kv_u64(w, ts, "ncpus", (uint64_t)m->ncpus);
	err = err ?: meta__put_kv(w, ts, "clock", "monotonic");
	err = err ?: meta__put_kv_u64(w, ts, "anchor_monotonic_ns", mono);
	err = err ?: meta__put_kv_u64(w, ts, "anchor_realtime_ns", real);
	err = err ?: meta__put_kv_u64(w, ts, "capture_start_ns", ts);
	err = err ?: meta__put_kv(w, ts, "version", CW_VERSION);
	err = err ?: meta__put_kv_u64(w, ts, "capture_pid", (uint64_t)getpid());
	err = err ?: meta__put_kv_u64(w, ts, "ring_edge_bytes", m->env->edge_ring_bytes);
	err = err ?: meta__put_kv(w, ts, "classes", m->classes);
	err = err ?: meta__put_kv(w, ts, "classes_missing", m->classes_missing);
	err = err ?: meta__put_kv(w, ts, "records_missing", m->records_missing ? m->records_missing : "");
	if (m->usdt_probes_off)
		err = err ?: meta__put_kv(w, ts, "usdt_probes_off", m->usdt_probes_off);
	if (m->go_probes)
		err = err ?: meta__put_kv(w, ts, "go_probes", m->go_probes);
	err = err ?: meta__put_kv(w, ts, "context_method", m->context_method);
	if (m->filtered)
		err = err ?: put_traced(w, ts, m->traced, m->ntraced);
	err = err ?: meta__put_kv_u64(w, ts, "ksyms_symbols", ksyms_snap__count(m->ksyms));
	if (m->ksyms_omitted)
		err = err ?: meta__put_kv(w, ts, "ksyms_omitted", m->ksyms_omitted);
	err = err ?: put_sampling(w, ts, m);
	err = err ?: proc_snap__write(snap, w);
	if (!err && ENV_SAMPLING(m->env)) {
		uint64_t n;

		err = mapsnap__write(w, m->map_pids, m->nmap_pids, getpid(), ts, &n);
		err = err ?: meta__put_kv_u64(w, ts, "mmap_snapshot", n);
	}
	if (!err && m->write_more)
		err = m->write_more(m->more_ctx, w);
	err = err ?: ksyms_snap__write(m->ksyms, w, ts, m->env->segment_size);
	err = err ?: cw_writer__seal(w, CW_SEG_META);
	return err;
}

static const struct {
	const char *key;
	enum cw_cnt_when when;
	size_t off;
} final_counters[] = {
#define FINAL_ENTRY(field, key, when, comment) { key, when, offsetof(struct capture_counters, field) },
	CW_CAPTURE_COUNTERS(FINAL_ENTRY)
#undef FINAL_ENTRY
};

int meta__write_final(struct cw_writer *w, const struct meta_final *f)
{
	uint64_t ts = f->end_ns;
	int err = 0;

	err = err ?: meta__put_kv_u64(w, ts, "capture_end_ns", ts);
	err = err ?: meta__put_kv(w, ts, "stop_reason", f->stop_reason);
	for (size_t i = 0; i < sizeof(final_counters) / sizeof(final_counters[0]) && !err; i++) {
		uint64_t v = *(const uint64_t *)((const char *)&f->c + final_counters[i].off);
		enum cw_cnt_when when = final_counters[i].when;

		if ((when == CW_CNT_NONZERO && !v) || (when == CW_CNT_SAMPLING && !f->sampling) ||
		    (when == CW_CNT_USDT && !f->usdt) || (when == CW_CNT_GO && !f->go))
			continue;
		err = meta__put_kv_u64(w, ts, final_counters[i].key, v);
	}
	err = err ?: cw_writer__seal(w, CW_SEG_FINAL);
	return err;
}

size_t meta__final_max(void)
{
	/* Keys of at most 20 characters, numbers of at most 20 digits or
	 * the longest stop reason. */
	return META_FINAL_KEYS * PAD8(sizeof(struct cw_meta_kv) + 20 + 20);
}
