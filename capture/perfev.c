// SPDX-License-Identifier: MIT
/*
 * perf events for the sample plane; see perfev.h.
 *
 * CPU samples: cpu-clock, a software event, on every CPU. A hardware
 * event (PERF_COUNT_HW_REF_CPU_CYCLES: constant rate, counts only while
 * the CPU is not halted) would avoid ticking idle CPUs, but a sample's
 * period must be ns of CPU time, exactly: ref-cycles tick at the TSC rate
 * on Intel only (AMD has no such event), and the conversion needs the
 * TSC-to-ns factors of the perf mmap page, valid only while the TSC is
 * the clocksource. cpu-clock's period is ns by definition, everywhere.
 *
 * Mappings: a dummy software event per CPU never overflows; it exists
 * for its side-band records. mmap2 with build_id gives each executable
 * mapping with the object's build-id, read by the kernel from the page
 * cache as the mapping is made, so a library opened with dlopen() and
 * closed, or a process that lives 1 ms, is still symbolized by build-id.
 * Its time is on CLOCK_MONOTONIC, the BPF ktime clock. Each CPU's ring is
 * small (the records are few) and read by the capture loop every cycle.
 *
 * With -p or COMMAND only the traced set's mappings are kept, but the
 * traced set in BPF forgets a process once its last thread is gone, which
 * for a short-lived one (a `true` run by a traced shell) is long before
 * the loop reads its mappings. So the same events also report forks
 * (attr.task), and every cycle first follows them, all CPUs' in time
 * order, into a set of its own (a process forked by a traced or followed
 * one is followed); then decides each mapping; then forgets the processes
 * that exited.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "schema/events.h"
#include "capture/account.h"
#include "capture/log.h"
#include "lib/hash.h"
#include "lib/htab.h"
#include "capture/perfev.h"
#include "trace/writer.h"

#define PAD8(n) (((n) + 7u) & ~(size_t)7u)
#define MAX_CPUS 4096
#define RING_PAGES 16 /* a power of two; 64 KiB per CPU */
#define PATH_MAX_REC 4096

static int perf_open(struct perf_event_attr *attr, int cpu)
{
	int fd = (int)syscall(SYS_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int perfev__online_cpus(int *cpus, int max)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	char buf[4096], *tok, *save = NULL;
	int n = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	for (tok = strtok_r(buf, ",\n", &save); tok; tok = strtok_r(NULL, ",\n", &save)) {
		int lo, hi;

		if (sscanf(tok, "%d-%d", &lo, &hi) != 2)
			hi = lo = atoi(tok);
		for (int c = lo; c <= hi && n < max; c++)
			cpus[n++] = c;
	}
	return n ? n : -EIO;
}

int perfev__open_clock(int cpu, uint64_t period_ns)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = period_ns,
	};

	return perf_open(&attr, cpu);
}

struct ring {
	int fd;
	int cpu;
	struct perf_event_mmap_page *page;
	uint8_t *data;
	uint64_t size;
	uint64_t head; /* this cycle's end */
	bool told;     /* the record at the tail went to opts.mapped */
};

/* A PERF_RECORD_FORK or _EXIT of a process (not a thread). */
struct task_ev {
	uint64_t time;
	uint32_t pid, ppid;
};

/* Processes followed through their forks: a set of pids (pid 0 is never
 * added: it is no process that maps anything). */
struct pidset {
	struct cw_htab t; /* of struct pident */
};

struct perfev_maps {
	struct perfev_maps_opts opts;
	struct ring *rings;
	int nrings;
	uint64_t count;
	struct pidset followed;
	struct task_ev *forks, *exits;
	size_t nforks, nexits, cap_forks, cap_exits;
	uint8_t rec[sizeof(struct perf_event_header) + 65536]; /* a record, unwrapped */
	uint8_t out[sizeof(struct cw_mmap) + PATH_MAX_REC + 8];
};

struct perfev_maps *perfev_maps__open(const struct perfev_maps_opts *opts)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.mmap = 1,
		.mmap2 = 1,
		.task = 1,
		.build_id = 1,
		.sample_id_all = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
	};
	long pgsz = sysconf(_SC_PAGESIZE);
	struct perfev_maps *m = calloc(1, sizeof(*m));
	int cpus[MAX_CPUS], n, err;

	if (!m)
		return NULL;
	m->opts = *opts;
	n = perfev__online_cpus(cpus, MAX_CPUS);
	m->rings = n > 0 ? calloc((size_t)n, sizeof(*m->rings)) : NULL;
	if (!m->rings) {
		err = n < 0 ? n : -ENOMEM;
		cw_msg("cannot list the online CPUs: %s", strerror(-err));
		goto fail;
	}
	for (int i = 0; i < n; i++) {
		struct ring *r = &m->rings[m->nrings];
		void *p;

		r->cpu = cpus[i];
		r->fd = perf_open(&attr, cpus[i]);
		/* Before 5.12 mmap2 has no build-ids: the mappings are
		 * still worth their paths. */
		if (r->fd == -EINVAL && attr.build_id) {
			cw_notice("mapping records without build-ids (the kernel cannot give them "
				  "before Linux 5.12)");
			attr.build_id = 0;
			r->fd = perf_open(&attr, cpus[i]);
		}
		if (r->fd < 0) {
			err = r->fd;
			cw_msg("cannot open the mapping event on CPU %d: %s", cpus[i], strerror(-err));
			goto fail;
		}
		p = mmap(NULL, (size_t)pgsz * (RING_PAGES + 1), PROT_READ | PROT_WRITE, MAP_SHARED,
			 r->fd, 0);
		if (p == MAP_FAILED) {
			err = -errno;
			close(r->fd);
			cw_msg("cannot map the mapping event's ring on CPU %d: %s", cpus[i],
			       strerror(-err));
			goto fail;
		}
		r->page = p;
		r->data = (uint8_t *)p + pgsz;
		r->size = (uint64_t)pgsz * RING_PAGES;
		m->nrings++;
	}
	return m;
fail:
	perfev_maps__free(m);
	errno = -err;
	return NULL;
}

/* Copy @len bytes at ring offset @off (which may wrap) to @dst. */
static void ring_copy(const struct ring *r, uint64_t off, void *dst, size_t len)
{
	size_t at = (size_t)(off & (r->size - 1)), first = r->size - at < len ? r->size - at : len;

	memcpy(dst, r->data + at, first);
	memcpy((uint8_t *)dst + first, r->data, len - first);
}

static bool followed(struct perfev_maps *m, uint32_t pid);

/*
 * PERF_RECORD_MMAP2 with sample_id (TID, TIME), of @len bytes at @rec,
 * as a cw_mmap into m->out. @return the record's length, or 0 when it is
 * not one to write.
 */
static size_t to_mmap(struct perfev_maps *m, const uint8_t *rec, size_t len, int cpu)
{
	/* header, pid tid, addr len pgoff, 24 bytes of build-id or device,
	 * prot flags, filename..., then pid tid time of sample_id */
	const size_t fixed = 8 + 8 + 24 + 24 + 8, tail = 16;
	const struct perf_event_header *h = (const void *)rec;
	struct cw_mmap *o = (struct cw_mmap *)m->out;
	uint32_t pid, prot, flags;
	size_t plen, olen;
	const char *path;

	if (len < fixed + tail)
		return 0;
	memcpy(&pid, rec + 8, 4);
	memcpy(&prot, rec + 64, 4);
	memcpy(&flags, rec + 68, 4);
	if (!(prot & PROT_EXEC) || (pid_t)pid == m->opts.self ||
	    (m->opts.traced && !followed(m, pid)))
		return 0;
	path = (const char *)rec + fixed;
	plen = strnlen(path, len - fixed - tail);
	if (plen > PATH_MAX_REC)
		plen = PATH_MAX_REC;
	olen = PAD8(sizeof(*o) + plen);
	memset(m->out, 0, olen);
	o->hdr.type = CW_REC_META_MMAP;
	o->hdr.size = (uint16_t)olen;
	o->hdr.cpu = (uint16_t)cpu;
	memcpy(&o->hdr.ts, rec + len - 8, 8);
	memcpy(&o->task.pid, rec + len - 16, 4);
	memcpy(&o->task.tid, rec + len - 12, 4);
	memcpy(&o->start, rec + 16, 8);
	memcpy(&o->len, rec + 24, 8);
	memcpy(&o->pgoff, rec + 32, 8);
	o->prot = prot;
	o->mflags = flags;
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		uint8_t n = rec[40];

		o->build_id_len = n <= sizeof(o->build_id) ? n : sizeof(o->build_id);
		memcpy(o->build_id, rec + 44, o->build_id_len);
		o->hdr.flags = CW_MMAP_BUILD_ID;
	}
	o->path_len = (uint16_t)plen;
	memcpy(o + 1, path, plen);
	return olen;
}

struct pident {
	struct cw_hnode hn;
	uint32_t pid;
};

static struct pident *pidset_find(const struct pidset *ps, uint32_t pid)
{
	struct pident *e;

	cw_htab_for_each_possible(&ps->t, e, hn, cw_mix64(pid))
		if (e->pid == pid)
			return e;
	return NULL;
}

static bool pidset_has(const struct pidset *ps, uint32_t pid)
{
	return pidset_find(ps, pid) != NULL;
}

static uint64_t pident_rehash(const struct cw_hnode *n)
{
	return cw_mix64(cw_hentry(n, struct pident, hn)->pid);
}

static int pidset_add(struct pidset *ps, uint32_t pid)
{
	struct pident *e;
	int err;

	if (!pid || pidset_has(ps, pid))
		return 0;
	if (ps->t.n >= ps->t.cap && (err = cw_htab__grow(&ps->t, 64, pident_rehash, 0)))
		return err;
	if (!(e = calloc(1, sizeof(*e))))
		return -ENOMEM;
	e->pid = pid;
	cw_htab__add(&ps->t, &e->hn, cw_mix64(pid));
	return 0;
}

static void pidset_del(struct pidset *ps, uint32_t pid)
{
	struct pident *e = pidset_find(ps, pid);

	if (!e)
		return;
	cw_htab__del(&ps->t, &e->hn, cw_mix64(pid));
	free(e);
}

static void pidset_free(struct pidset *ps)
{
	cw_htab__free_entries(&ps->t, offsetof(struct pident, hn));
	cw_htab__free(&ps->t);
}

static bool followed(struct perfev_maps *m, uint32_t pid)
{
	return pidset_has(&m->followed, pid) || m->opts.traced(m->opts.ctx, pid);
}

static int push_task_ev(struct task_ev **v, size_t *n, size_t *cap, const uint8_t *rec)
{
	struct task_ev *e;

	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;

		e = realloc(*v, c * sizeof(*e));
		if (!e)
			return -ENOMEM;
		*v = e;
		*cap = c;
	}
	e = &(*v)[(*n)++];
	/* header, pid ppid, tid ptid, time */
	memcpy(&e->pid, rec + 8, 4);
	memcpy(&e->ppid, rec + 12, 4);
	memcpy(&e->time, rec + 24, 8);
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct task_ev *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

/*
 * Walk ring @r from its tail to this cycle's head; call @fn on each
 * record; stop at the first that @fn fails. @return the offset reached
 * and *@err.
 */
static uint64_t walk_ring(struct perfev_maps *m, struct ring *r,
			  int (*fn)(struct perfev_maps *, struct ring *, size_t, void *), void *arg,
			  int *err)
{
	uint64_t tail = r->page->data_tail;

	*err = 0;
	while (tail < r->head) {
		struct perf_event_header h;

		ring_copy(r, tail, &h, sizeof(h));
		/* The kernel wrote it; a size that cannot be is the end of
		 * what can be trusted in this ring. */
		if (h.size < sizeof(h) || h.size > r->head - tail)
			return r->head;
		ring_copy(r, tail, m->rec, h.size);
		*err = fn(m, r, h.size, arg);
		if (*err)
			break;
		tail += h.size;
	}
	return tail;
}

/* Pass 1: the forks and exits of processes (a thread's pid is its
 * process's, which is already known). */
static int collect_task(struct perfev_maps *m, struct ring *r, size_t len, void *arg)
{
	const struct perf_event_header *h = (const void *)m->rec;
	uint32_t pid, tid;

	(void)r;
	(void)arg;
	if ((h->type != PERF_RECORD_FORK && h->type != PERF_RECORD_EXIT) || len < 32)
		return 0;
	memcpy(&pid, m->rec + 8, 4);
	memcpy(&tid, m->rec + 16, 4);
	if (pid != tid)
		return 0;
	if (h->type == PERF_RECORD_FORK)
		return push_task_ev(&m->forks, &m->nforks, &m->cap_forks, m->rec);
	return push_task_ev(&m->exits, &m->nexits, &m->cap_exits, m->rec);
}

static void tell_mapped(struct perfev_maps *m, const struct cw_mmap *o)
{
	char path[PATH_MAX_REC + 1];

	memcpy(path, o + 1, o->path_len);
	path[o->path_len] = 0;
	m->opts.mapped(m->opts.mapped_ctx, o->task.pid, o->start, o->start + o->len, path);
}

/* Pass 2: the mappings, and what the kernel could not report. */
static int write_record(struct perfev_maps *m, struct ring *r, size_t len, void *arg)
{
	const struct perf_event_header *h = (const void *)m->rec;
	struct cw_writer *w = ((void **)arg)[0];
	struct account *acct = ((void **)arg)[1];
	size_t olen;
	int err;

	if (h->type == PERF_RECORD_MMAP2) {
		olen = to_mmap(m, m->rec, len, r->cpu);
		if (!olen)
			return 0;
		if (m->opts.mapped && !r->told)
			tell_mapped(m, (const struct cw_mmap *)m->out);
		if (m->opts.no_records)
			return 0;
		err = cw_writer__append(w, m->out, olen);
		/* A record the writer refuses is read again next call: told
		 * once all the same. */
		r->told = err != 0;
		m->count += !err;
		return err; /* on error the record stays for the next call */
	}
	if (h->type == PERF_RECORD_LOST && len >= 24) {
		uint64_t lost;

		memcpy(&lost, m->rec + 16, 8);
		/* The analyzer breaks the sample stream's coverage on it:
		 * samples in a mapping the trace lacks may follow. */
		account__add_lost(acct, r->cpu, CW_RING_SAMPLE, CW_CLASS_SAMPLE, lost);
	}
	return 0;
}

int perfev_maps__read(struct perfev_maps *m, struct cw_writer *w, struct account *acct)
{
	void *arg[2] = { w, acct };
	int err = 0;

	if (!m)
		return 0;
	m->nforks = m->nexits = 0;
	for (int i = 0; i < m->nrings; i++)
		m->rings[i].head = __atomic_load_n(&m->rings[i].page->data_head, __ATOMIC_ACQUIRE);
	if (m->opts.traced) {
		for (int i = 0; i < m->nrings && !err; i++)
			walk_ring(m, &m->rings[i], collect_task, NULL, &err);
		if (err)
			return err;
		if (m->nforks) /* no array yet before the first fork */
			qsort(m->forks, m->nforks, sizeof(*m->forks), by_time);
		for (size_t i = 0; i < m->nforks && !err; i++)
			if (followed(m, m->forks[i].ppid))
				err = pidset_add(&m->followed, m->forks[i].pid);
		if (err)
			return err;
	}
	for (int i = 0; i < m->nrings && !err; i++) {
		struct ring *r = &m->rings[i];

		__atomic_store_n(&r->page->data_tail, walk_ring(m, r, write_record, arg, &err),
				 __ATOMIC_RELEASE);
	}
	/* Only once their mappings of this cycle are decided. */
	for (size_t i = 0; i < m->nexits; i++)
		pidset_del(&m->followed, m->exits[i].pid);
	return err;
}

int perfev_maps__follow(struct perfev_maps *m, uint32_t pid)
{
	return m && m->opts.traced ? pidset_add(&m->followed, pid) : 0;
}

uint64_t perfev_maps__count(const struct perfev_maps *m)
{
	return m ? m->count : 0;
}

void perfev_maps__free(struct perfev_maps *m)
{
	long pgsz = sysconf(_SC_PAGESIZE);

	if (!m)
		return;
	for (int i = 0; i < m->nrings; i++) {
		munmap(m->rings[i].page, (size_t)pgsz * (RING_PAGES + 1));
		close(m->rings[i].fd);
	}
	free(m->rings);
	pidset_free(&m->followed);
	free(m->forks);
	free(m->exits);
	free(m);
}
