// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "bpf/config.h"
#include "capture/account.h"
#include "schema/events.h"
#include "trace/writer.h"

struct counter {
	uint64_t written, lost;
};

/* One (ring, class) the counters map has a slot for: key = ring *
 * CW_CLASS_MAX + class, as in bpf/causeway.bpf.h. */
struct slot {
	uint32_t key;
	uint16_t ring, class;
	bool always;
	struct counter *prev;  /* [cpu]: values at the last flush */
	uint64_t *extra_lost;  /* [cpu]: account__add_lost() since the last flush */
	uint64_t *written;     /* [cpu]: records drained (account__wrote) */
};

struct account {
	int fd;
	int ncpus;
	uint64_t last_ns;
	struct slot slots[CW_RING_MAX * CW_CLASS_MAX];
	size_t nslots;
	/* (ring, class) -> 1 + its index in slots; 0: none */
	uint8_t slot_of[CW_RING_MAX][CW_CLASS_MAX];
	struct counter *cur; /* [cpu] */
	bool sampling;	     /* the sample plane is recorded: read CW_COUNTER_DECIMATED */
	uint64_t waits_unstacked; /* off-CPU waits the budget left without stacks */
	uint64_t ticks_decimated; /* the CPU ticks BPF dropped, as last read */
	struct account_totals tot;
};

/* A slot for what @class writes to or loses on @ring. */
static int add_slot(struct account *a, uint16_t ring, uint16_t class)
{
	struct slot *s = &a->slots[a->nslots];

	s->key = (uint32_t)ring * CW_CLASS_MAX + class;
	s->ring = ring;
	s->class = class;
	/* The rings are streams the analyzer covers: a window without loss
	 * is evidence too. */
	s->always = ring != CW_RING_MAP;
	s->prev = calloc((size_t)a->ncpus, sizeof(*s->prev));
	s->extra_lost = calloc((size_t)a->ncpus, sizeof(*s->extra_lost));
	s->written = calloc((size_t)a->ncpus, sizeof(*s->written));
	a->slot_of[ring][class] = (uint8_t)++a->nslots; /* freed by account__free() either way */
	return s->prev && s->extra_lost && s->written ? 0 : -ENOMEM;
}

struct account *account__new(int counters_fd, int ncpus, uint64_t start_ns,
			     const struct cw_class_sel *sel, bool follows_alone)
{
	struct account *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->fd = counters_fd;
	a->ncpus = ncpus;
	a->last_ns = start_ns;
	a->cur = calloc((size_t)ncpus, sizeof(*a->cur));
	if (!a->cur)
		goto nomem;
	for (size_t i = 0; i < cw_nclasses; i++) {
		const struct cw_class_desc *c = &cw_classes[i];

		if (sel->c[c->id].status != CW_CLS_OK)
			continue;
		a->sampling |= classes__context_plane(c);
		for (uint16_t ring = 0; ring < CW_RING_MAX; ring++)
			if ((c->rings & (1u << ring)) && add_slot(a, ring, (uint16_t)c->id))
				goto nomem;
	}
	/* A fork the full traced set refused (bpf/sched.bpf.c) is a
	 * process the trace lacks, whatever the classes recorded: the
	 * analyzer's coverage break says so. */
	if (follows_alone && !a->slot_of[CW_RING_MAP][CW_CLASS_SCHED] &&
	    add_slot(a, CW_RING_MAP, CW_CLASS_SCHED))
		goto nomem;
	return a;
nomem:
	account__free(a);
	errno = ENOMEM;
	return NULL;
}

/* *@total: counter slot @key over the CPUs (bpf/config.h), unchanged
 * when it cannot be read. */
static void slot_total(struct account *a, uint32_t key, uint64_t *total)
{
	if (bpf_map_lookup_elem(a->fd, &key, a->cur))
		return;
	*total = 0;
	for (int cpu = 0; cpu < a->ncpus; cpu++)
		*total += a->cur[cpu].written;
}

void account__wrote(struct account *a, uint16_t ring, const struct cw_hdr *h)
{
	unsigned class = CW_CLASS_OF(h->type);
	struct slot *s;

	/* The waits whose stacks the budget did not take: BPF counts only
	 * the ticks it drops (bpf/wait.bpf.h), since a wait is written
	 * whether or not its stacks are, by its switch (format 1.9) or as a
	 * stackless sample. A stack the sample ring lost is counted lost. */
	if (h->type == CW_REC_SWITCH &&
	    (h->flags & (CW_SWITCH_WAIT | CW_SWITCH_STACKS)) == CW_SWITCH_WAIT)
		a->waits_unstacked++;
	else if (h->type == CW_REC_SAMPLE_OFFCPU && (h->flags & CW_SAMPLE_NOSTACK))
		a->waits_unstacked++;
	if (ring >= CW_RING_MAX || class >= CW_CLASS_MAX || !a->slot_of[ring][class] ||
	    h->cpu >= a->ncpus)
		return;
	s = &a->slots[a->slot_of[ring][class] - 1];
	s->written[h->cpu]++;
}

int account__flush(struct account *a, struct cw_writer *w, uint64_t now)
{
	for (size_t i = 0; i < a->nslots; i++) {
		struct slot *s = &a->slots[i];

		if (bpf_map_lookup_elem(a->fd, &s->key, a->cur))
			continue;
		for (int cpu = 0; cpu < a->ncpus; cpu++) {
			uint64_t dw = s->written[cpu] - s->prev[cpu].written;
			uint64_t dl = a->cur[cpu].lost - s->prev[cpu].lost + s->extra_lost[cpu];
			struct cw_account r = { 0 };
			int err;

			if (!dw && !dl && !s->always)
				continue;
			r.hdr.type = CW_REC_ACCOUNT;
			r.hdr.size = sizeof(r);
			r.hdr.cpu = (uint16_t)cpu;
			r.hdr.ts = now;
			r.window_ns = now - a->last_ns;
			r.written = dw;
			r.lost = dl;
			/* BPF reports where its edge losses happened (cw_gap);
			 * what it does not is the window's as a whole. */
			r.lost_unmarked = s->ring == CW_RING_EDGE ? s->extra_lost[cpu] : dl;
			r.ring = s->ring;
			r.class = s->class;
			err = cw_writer__append(w, &r, sizeof(r));
			if (err)
				return err;
			s->prev[cpu].written = s->written[cpu];
			s->prev[cpu].lost = a->cur[cpu].lost;
			s->extra_lost[cpu] = 0;
			if (s->ring == CW_RING_EDGE && s->class == CW_CLASS_NET)
				a->tot.net_written += dw;
			else if (s->ring == CW_RING_EDGE && s->class == CW_CLASS_TIMER)
				a->tot.timer_written += dw;
			if (s->ring == CW_RING_EDGE)
				a->tot.edge_written[s->class] += dw;
			if (s->ring == CW_RING_EDGE)
				a->tot.lost_edge += dl;
			else if (s->ring == CW_RING_SAMPLE)
				a->tot.lost_sample += dl;
			else
				a->tot.lost_map += dl;
		}
	}
	a->last_ns = now;
	if (a->sampling) {
		slot_total(a, CW_COUNTER_DECIMATED, &a->ticks_decimated);
		a->tot.decimated = a->ticks_decimated + a->waits_unstacked;
	}
	slot_total(a, CW_COUNTER_NET_RECEIPTS, &a->tot.net_receipts);
	slot_total(a, CW_COUNTER_TIMER_ARMS, &a->tot.timer_arms);
	return 0;
}

int account__flush_gaps(struct account *a, struct cw_writer *w, int ring_cpu_fd)
{
	struct cw_ring_cpu *runs = calloc((size_t)a->ncpus, sizeof(*runs));
	uint32_t key = 0;
	int err = 0;

	if (!runs)
		return -ENOMEM;
	if (ring_cpu_fd < 0 || bpf_map_lookup_elem(ring_cpu_fd, &key, runs)) {
		free(runs);
		return 0; /* no runs to read: the accounting windows stand */
	}
	for (int cpu = 0; cpu < a->ncpus && !err; cpu++) {
		struct cw_gap r = { 0 };

		if (!runs[cpu].lost)
			continue;
		r.hdr.type = CW_REC_GAP;
		r.hdr.size = sizeof(r);
		r.hdr.cpu = (uint16_t)cpu;
		r.hdr.ts = runs[cpu].last;
		r.first_ns = runs[cpu].first;
		r.lost = runs[cpu].lost;
		err = cw_writer__append(w, &r, sizeof(r));
	}
	free(runs);
	return err;
}

void account__add_lost(struct account *a, int cpu, uint16_t ring, uint16_t class, uint64_t n)
{
	for (size_t i = 0; a && i < a->nslots; i++)
		if (a->slots[i].ring == ring && a->slots[i].class == class && cpu >= 0 &&
		    cpu < a->ncpus)
			a->slots[i].extra_lost[cpu] += n;
}

void account__flush_max(const struct account *a, size_t *bytes, size_t *records)
{
	/* and a gap record per CPU (account__flush_gaps) */
	*records = (a->nslots + 1) * (size_t)a->ncpus;
	*bytes = a->nslots * (size_t)a->ncpus * sizeof(struct cw_account) +
		 (size_t)a->ncpus * sizeof(struct cw_gap);
}

void account__totals(const struct account *a, struct account_totals *t)
{
	*t = a->tot;
}

void account__free(struct account *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nslots; i++) {
		free(a->slots[i].prev);
		free(a->slots[i].extra_lost);
		free(a->slots[i].written);
	}
	free(a->cur);
	free(a);
}
