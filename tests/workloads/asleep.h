/* SPDX-License-Identifier: MIT */
/*
 * What the workloads that count handoffs share: acting only once the peer
 * thread is asleep in the kernel, so that every wake they count must
 * happen (a peer still running would take the data without a wake).
 */
#ifndef CAUSEWAY_WORKLOADS_ASLEEP_H
#define CAUSEWAY_WORKLOADS_ASLEEP_H

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* State letter of thread @tid, of this process or another, '?' when
 * unreadable. */
static inline char thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = 0;
	p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
	return p && p[1] == ' ' ? p[2] : '?';
}

/* Until thread @tid sleeps (state S: blocked in the kernel). */
static inline void wait_sleeping(pid_t tid)
{
	while (thread_state(tid) != 'S')
		sched_yield();
}

#endif
