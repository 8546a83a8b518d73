// SPDX-License-Identifier: MIT
/*
 * The namer; see namer.h.
 *
 * Which records: a receipt's sender (net_recv), a task-level waker, and
 * both ends of a switch. Those are where an untraced task meets the
 * traced set as the other end of an edge; a sample's interrupted task is
 * context, and named there too when a switch or wake names it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/namer.h"
#include "lib/hash.h"
#include "trace/writer.h"

/* Open addressing over tids; past half full nothing more is named. */
#define NAMER_SLOTS 65536u

struct namer {
	uint32_t *tid; /* 0: free */
	size_t n;
	uint64_t dropped;
};

struct namer *namer__new(void)
{
	struct namer *n = calloc(1, sizeof(*n));

	if (n && !(n->tid = calloc(NAMER_SLOTS, sizeof(*n->tid)))) {
		free(n);
		n = NULL;
	}
	return n;
}

void namer__free(struct namer *n)
{
	if (!n)
		return;
	free(n->tid);
	free(n);
}

/* Is @tid new? Then it is added, if the bound allows. */
static int first_sight(struct namer *n, uint32_t tid)
{
	uint32_t i = (uint32_t)cw_mix64(tid) & (NAMER_SLOTS - 1);

	for (;; i = (i + 1) & (NAMER_SLOTS - 1)) {
		if (n->tid[i] == tid)
			return 0;
		if (!n->tid[i])
			break;
	}
	if (n->n >= NAMER_SLOTS / 2) {
		n->dropped++;
		return 0;
	}
	n->tid[i] = tid;
	n->n++;
	return 1;
}

/* Task @t's comm, as /proc has it now; 0 when it is gone. */
static int read_comm(const struct cw_task *t, char comm[CW_COMM_LEN])
{
	char path[64];
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", t->pid, t->tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	memset(comm, 0, CW_COMM_LEN);
	len = read(fd, comm, CW_COMM_LEN - 1);
	close(fd);
	if (len <= 0)
		return 0;
	if (comm[len - 1] == '\n')
		comm[len - 1] = 0;
	return 1;
}

static int name(struct namer *n, struct cw_writer *w, const struct cw_task *t, uint64_t ts)
{
	struct cw_meta_task m;

	if (!t->tid || !first_sight(n, t->tid))
		return 0;
	memset(&m, 0, sizeof(m));
	if (!read_comm(t, m.comm))
		return 0;
	m.hdr.type = CW_REC_META_TASK;
	m.hdr.size = sizeof(m);
	m.hdr.cpu = 0xffff;
	m.hdr.flags = CW_META_TASK_LATE;
	m.hdr.ts = ts;
	m.task = *t;
	return cw_writer__append(w, &m, sizeof(m));
}

int namer__see(struct namer *n, struct cw_writer *w, const struct cw_hdr *h)
{
	switch (h->type) {
	case CW_REC_NET_RECV:
		return name(n, w, &((const struct cw_net_recv *)h)->p.task, h->ts);
	case CW_REC_WAKING:
	case CW_REC_WAKING_CAUSED:
		return h->ctx == CW_CTX_TASK ? name(n, w, &((const struct cw_wake *)h)->waker, h->ts) : 0;
	case CW_REC_SWITCH: {
		const struct cw_switch *s = (const void *)h;
		int err = name(n, w, &s->prev, h->ts);

		return err ?: name(n, w, &s->next, h->ts);
	}
	}
	return 0;
}

uint64_t namer__named(const struct namer *n)
{
	return n->n;
}

uint64_t namer__dropped(const struct namer *n)
{
	return n->dropped;
}
