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
#include "capture/perfev.h"
#include "capture/segwriter.h"

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
};

struct perfev_maps {
	struct perfev_maps_opts opts;
	struct ring *rings;
	int nrings;
	uint64_t count;
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
		if (r->fd < 0) {
			err = r->fd;
			cw_msg("cannot open the mapping event on CPU %d: %s%s", cpus[i], strerror(-err),
			       err == -EINVAL ? " (mmap2 build-ids need Linux 5.12)" : "");
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
	    (m->opts.traced && !m->opts.traced(m->opts.ctx, pid)))
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

static int read_ring(struct perfev_maps *m, struct ring *r, struct cw_writer *w,
		     struct account *acct)
{
	uint64_t head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->page->data_tail;
	int err = 0;

	while (tail < head && !err) {
		struct perf_event_header h;
		size_t olen;

		ring_copy(r, tail, &h, sizeof(h));
		/* The kernel wrote it; a size that cannot be is the end of
		 * what can be trusted in this ring. */
		if (h.size < sizeof(h) || h.size > head - tail) {
			tail = head;
			break;
		}
		ring_copy(r, tail, m->rec, h.size);
		if (h.type == PERF_RECORD_MMAP2) {
			olen = to_mmap(m, m->rec, h.size, r->cpu);
			if (olen) {
				err = cw_writer__append(w, m->out, olen);
				if (err)
					break; /* kept for the next call */
				m->count++;
			}
		} else if (h.type == PERF_RECORD_LOST && h.size >= 24) {
			uint64_t lost;

			memcpy(&lost, m->rec + 16, 8);
			/* The analyzer breaks the sample stream's coverage
			 * on it: samples of an unknown mapping may follow. */
			account__add_lost(acct, r->cpu, CW_RING_SAMPLE, CW_CLASS_SAMPLE, lost);
		}
		tail += h.size;
	}
	__atomic_store_n(&r->page->data_tail, tail, __ATOMIC_RELEASE);
	return err;
}

int perfev_maps__read(struct perfev_maps *m, struct cw_writer *w, struct account *acct)
{
	int err = 0;

	for (int i = 0; m && i < m->nrings && !err; i++)
		err = read_ring(m, &m->rings[i], w, acct);
	return err;
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
	free(m);
}
