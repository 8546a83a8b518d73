/* SPDX-License-Identifier: MIT */
/*
 * The initial snapshot of processes and threads, read from /proc, and
 * written as cw_meta_task records. Knows nothing of BPF.
 */
#ifndef CAUSEWAY_CAPTURE_PROCSNAP_H
#define CAUSEWAY_CAPTURE_PROCSNAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cw_writer;

/* Processes and threads alive when it was taken. */
struct proc_snap;

/*
 * Read every thread of every process under /proc, except those of
 * @skip_pid (the capture itself). Tasks that vanish while being read are
 * skipped. @return a snapshot, or NULL with errno set.
 */
struct proc_snap *proc_snap__new(pid_t skip_pid);

/* One cw_meta_task record per thread. @return 0 or a negative errno. */
int proc_snap__write(const struct proc_snap *s, struct cw_writer *w);

/*
 * Processes (tgids) in the snapshot that descend from one of @roots,
 * roots excluded, by the ppid chain. @return how many were stored in
 * @out (at most @cap).
 */
size_t proc_snap__descendants(const struct proc_snap *s, const pid_t *roots, size_t nroots,
			      pid_t *out, size_t cap);

size_t proc_snap__count(const struct proc_snap *s);

void proc_snap__free(struct proc_snap *s);

/* The process (thread group) of thread @tid, or -ESRCH when there is no
 * such thread, or another negative errno. */
pid_t proc_tgid(pid_t tid);

#endif /* CAUSEWAY_CAPTURE_PROCSNAP_H */
