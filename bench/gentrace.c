// SPDX-License-Identifier: MIT
/*
 * gentrace: writes a large synthetic scheduler trace with the real segment
 * writer, for bench/analyze.
 *
 *   gentrace OUT.cwt NEVENTS [LIVE_THREADS]
 *
 * The mix follows what a busy server shows: about 45% switches, 30%
 * wakings (90% from task context, the rest from hard and soft
 * interrupts), 20% wakeups, and thread churn (exit, final switch, fork)
 * that reuses tids from a bounded pool, so that the number of live
 * threads stays constant however long the trace is. Timestamps advance
 * about 1 us per event with jitter across 2 CPUs, and an accounting
 * record per CPU every simulated second. Deterministic.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "capture/segwriter.h"
#include "schema/events.h"
#include "schema/format.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static struct cw_writer *w;
static uint64_t now = 1000000000ull;

static void hdr(struct cw_hdr *h, uint16_t type, uint16_t size, uint16_t cpu, uint8_t ctx)
{
	h->type = type;
	h->size = size;
	h->cpu = cpu;
	h->ctx = ctx;
	h->flags = 0;
	/* Jitter of up to 20 us between CPUs: the analyzer must reorder. */
	h->ts = now + (cpu ? next_rand() % 20000 : 0);
}

static void put(const void *rec, size_t len)
{
	int err = cw_writer__append(w, rec, len);

	if (err) {
		fprintf(stderr, "gentrace: write: %s\n", strerror(-err));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	uint64_t nevents, written = 0, next_acct, pool = 32768;
	uint32_t nlive = 2000, *tids, pid = 1000, next_tid = 2000;
	uint64_t per_cpu[2] = { 0, 0 };
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: gentrace OUT.cwt NEVENTS [LIVE_THREADS]\n");
		return 2;
	}
	nevents = strtoull(argv[2], NULL, 10);
	if (argc > 3)
		nlive = (uint32_t)strtoul(argv[3], NULL, 10);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || !(w = cw_writer__new(fd, NULL)) || !(tids = calloc(nlive, 4))) {
		perror("gentrace");
		return 1;
	}
	/* Snapshot: one process with nlive threads alive at start. */
	for (uint32_t i = 0; i < nlive; i++) {
		struct cw_meta_task t = { 0 };

		tids[i] = i ? next_tid++ : pid;
		hdr(&t.hdr, CW_REC_META_TASK, sizeof(t), 0xffff, 0);
		t.task.tid = tids[i];
		t.task.pid = pid;
		t.ppid = 1;
		snprintf(t.comm, sizeof(t.comm), "worker-%u", i % 100000);
		put(&t, sizeof(t));
	}
	if (cw_writer__seal(w, CW_SEG_META))
		return 1;
	next_acct = now + 1000000000ull;
	while (written < nevents) {
		uint64_t r = next_rand() % 100;
		uint16_t cpu = (uint16_t)(next_rand() & 1);
		uint32_t a = (uint32_t)(next_rand() % nlive), b = (uint32_t)(next_rand() % nlive);

		now += 500 + next_rand() % 1000;
		if (r < 45) {
			struct cw_switch s = { 0 };

			hdr(&s.hdr, CW_REC_SWITCH, sizeof(s), cpu, 0);
			s.prev = (struct cw_task){ tids[a], pid };
			s.next = (struct cw_task){ tids[b], pid };
			s.prev_state = next_rand() & 1;
			s.prev_prio = s.next_prio = 120;
			put(&s, sizeof(s));
		} else if (r < 95) {
			struct cw_wake k = { 0 };
			uint64_t c = next_rand() % 20;

			hdr(&k.hdr, r < 75 ? CW_REC_WAKING : CW_REC_WAKEUP, sizeof(k), cpu,
			    c == 0 ? CW_CTX_HARDIRQ : c == 1 ? CW_CTX_SOFTIRQ : CW_CTX_TASK);
			k.waker = (struct cw_task){ tids[a], pid };
			k.wakee = (struct cw_task){ tids[b], pid };
			k.target_cpu = cpu;
			k.wakee_prio = 120;
			put(&k, sizeof(k));
		} else if (a != 0) {
			/* Churn: thread a exits, is switched out dead, and a
			 * new thread takes its slot with a tid from the pool. */
			struct cw_exit e = { 0 };
			struct cw_switch s = { 0 };
			struct cw_fork f = { 0 };

			hdr(&e.hdr, CW_REC_EXIT, sizeof(e), cpu, 0);
			e.task = (struct cw_task){ tids[a], pid };
			put(&e, sizeof(e));
			hdr(&s.hdr, CW_REC_SWITCH, sizeof(s), cpu, 0);
			s.prev = e.task;
			s.next = (struct cw_task){ tids[b], pid };
			s.prev_state = 0x80;
			put(&s, sizeof(s));
			hdr(&f.hdr, CW_REC_FORK, sizeof(f), cpu, 0);
			f.parent = (struct cw_task){ pid, pid };
			tids[a] = (uint32_t)(2000 + (next_tid++ - 2000) % pool);
			f.child = (struct cw_task){ tids[a], pid };
			f.fork_flags = CW_FORK_THREAD;
			memcpy(f.child_comm, "worker", 7);
			put(&f, sizeof(f));
			written += 2;
			per_cpu[cpu] += 2;
		}
		written++;
		per_cpu[cpu]++;
		if (now >= next_acct) {
			for (uint16_t c = 0; c < 2; c++) {
				struct cw_account acct = { 0 };

				hdr(&acct.hdr, CW_REC_ACCOUNT, sizeof(acct), c, 0);
				acct.hdr.ts = now;
				acct.window_ns = 1000000000ull;
				acct.written = per_cpu[c];
				acct.ring = CW_RING_EDGE;
				acct.class = CW_CLASS_SCHED;
				put(&acct, sizeof(acct));
				per_cpu[c] = 0;
			}
			next_acct += 1000000000ull;
		}
	}
	if (cw_writer__seal(w, CW_SEG_EVENTS) || cw_writer__seal(w, CW_SEG_FINAL))
		return 1;
	cw_writer__free(w);
	free(tids);
	return close(fd) ? 1 : 0;
}
