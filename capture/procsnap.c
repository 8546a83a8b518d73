// SPDX-License-Identifier: MIT
/*
 * The /proc snapshot of tasks alive at capture start. It gives the
 * analyzer names and parents for tasks whose birth predates the trace
 * (start_seen = 0), and gives -p the descendants that already exist.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "schema/events.h"
#include "trace/writer.h"
#include "capture/clock.h"
#include "capture/procsnap.h"

#define PAD8(n) (((n) + 7u) & ~(size_t)7u)

struct snap_task {
	uint32_t tid, pid, ppid;
	char comm[CW_COMM_LEN];
	char *exe; /* shared by the threads of one process; owned by the leader */
	uint64_t ts;
};

struct proc_snap {
	struct snap_task *t;
	size_t n, cap;
};

/* "tid (comm) S ppid ...": comm may hold spaces and ')', so split at the
 * last ')'. */
static int read_stat(const char *path, char comm[CW_COMM_LEN], uint32_t *ppid)
{
	char buf[1024], *open_p, *close_p;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	open_p = strchr(buf, '(');
	close_p = strrchr(buf, ')');
	if (!open_p || !close_p || close_p < open_p)
		return -EIO;
	memset(comm, 0, CW_COMM_LEN);
	memcpy(comm, open_p + 1,
	       (size_t)(close_p - open_p - 1) < CW_COMM_LEN - 1 ? (size_t)(close_p - open_p - 1)
								  : CW_COMM_LEN - 1);
	if (sscanf(close_p + 1, " %*c %" SCNu32, ppid) != 1)
		return -EIO;
	return 0;
}

static int snap_push(struct proc_snap *s, const struct snap_task *t)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		struct snap_task *nt = realloc(s->t, cap * sizeof(*nt));

		if (!nt)
			return -ENOMEM;
		s->t = nt;
		s->cap = cap;
	}
	s->t[s->n++] = *t;
	return 0;
}

static void snap_process(struct proc_snap *s, uint32_t pid)
{
	char path[64], exe[4096];
	struct dirent *de;
	ssize_t n;
	DIR *d;
	char *exe_copy = NULL;
	int first = 1;

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		exe_copy = strdup(exe);
	}
	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d) {
		free(exe_copy);
		return;
	}
	while ((de = readdir(d))) {
		struct snap_task t = { 0 };
		char *end;
		unsigned long tid = strtoul(de->d_name, &end, 10);

		if (!tid || *end)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%lu/stat", pid, tid);
		if (read_stat(path, t.comm, &t.ppid))
			continue; /* exited meanwhile */
		t.tid = (uint32_t)tid;
		t.pid = pid;
		t.ts = clock__now();
		/* the first pushed thread owns the exe string */
		t.exe = first ? exe_copy : NULL;
		if (snap_push(s, &t))
			break;
		first = 0;
	}
	closedir(d);
	if (first)
		free(exe_copy);
}

struct proc_snap *proc_snap__new(pid_t skip_pid)
{
	struct proc_snap *s = calloc(1, sizeof(*s));
	struct dirent *de;
	DIR *d;

	if (!s)
		return NULL;
	d = opendir("/proc");
	if (!d) {
		int err = errno;

		free(s);
		errno = err;
		return NULL;
	}
	while ((de = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (!pid || *end || (pid_t)pid == skip_pid)
			continue;
		snap_process(s, (uint32_t)pid);
	}
	closedir(d);
	return s;
}

int proc_snap__write(const struct proc_snap *s, struct cw_writer *w)
{
	const char *exe = NULL;
	uint32_t exe_pid = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct snap_task *t = &s->t[i];
		uint8_t buf[sizeof(struct cw_meta_task) + 4096 + 8];
		struct cw_meta_task *m = (struct cw_meta_task *)buf;
		size_t elen, len;
		int err;

		if (t->pid != exe_pid) {
			exe_pid = t->pid;
			exe = t->exe;
		}
		elen = exe ? strlen(exe) : 0;
		len = PAD8(sizeof(*m) + elen);
		memset(buf, 0, len);
		m->hdr.type = CW_REC_META_TASK;
		m->hdr.size = (uint16_t)len;
		m->hdr.cpu = 0xffff;
		m->hdr.ts = t->ts;
		m->task.tid = t->tid;
		m->task.pid = t->pid;
		m->ppid = t->ppid;
		m->exe_len = (uint16_t)elen;
		memcpy(m->comm, t->comm, CW_COMM_LEN);
		if (elen)
			memcpy(buf + sizeof(*m), exe, elen);
		err = cw_writer__append(w, buf, len);
		if (err)
			return err;
	}
	return 0;
}

static int in_set(const pid_t *set, size_t n, pid_t p)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == p)
			return 1;
	return 0;
}

size_t proc_snap__descendants(const struct proc_snap *s, const pid_t *roots, size_t nroots,
			      pid_t *out, size_t cap)
{
	size_t n = 0;
	int grew = 1;

	/* Fixed point over process leaders: simple, and the snapshot is
	 * small enough that quadratic time does not matter here. */
	while (grew) {
		grew = 0;
		for (size_t i = 0; i < s->n && n < cap; i++) {
			const struct snap_task *t = &s->t[i];
			pid_t pid = (pid_t)t->pid, ppid = (pid_t)t->ppid;

			if (t->tid != t->pid || in_set(roots, nroots, pid) || in_set(out, n, pid))
				continue;
			if (in_set(roots, nroots, ppid) || in_set(out, n, ppid)) {
				out[n++] = pid;
				grew = 1;
			}
		}
	}
	return n;
}

size_t proc_snap__count(const struct proc_snap *s)
{
	return s ? s->n : 0;
}

void proc_snap__free(struct proc_snap *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->t[i].exe);
	free(s->t);
	free(s);
}

pid_t proc_tgid(pid_t tid)
{
	char path[64], line[256];
	FILE *f;
	long tgid = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %ld", &tgid) == 1)
			break;
	fclose(f);
	return tgid > 0 ? (pid_t)tgid : -ESRCH;
}
