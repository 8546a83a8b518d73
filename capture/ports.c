// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/ports.h"

/* At most this many socket inodes of one process are looked up; a
 * process with more has its first ones marked (a port missed makes
 * orphans, never a wrong join). */
#define MAX_SOCKETS 4096

static int cmp_ino(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The inodes of @pid's socket descriptors, sorted, into @ino. */
static size_t socket_inodes(pid_t pid, uint64_t *ino, size_t max)
{
	char path[64], link[64];
	struct dirent *d;
	size_t n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if (!(dir = opendir(path)))
		return 0;
	while (n < max && (d = readdir(dir))) {
		ssize_t len;

		if (d->d_name[0] == '.')
			continue;
		len = readlinkat(dirfd(dir), d->d_name, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (sscanf(link, "socket:[%" SCNu64 "]", &ino[n]) == 1)
			n++;
	}
	closedir(dir);
	qsort(ino, n, sizeof(*ino), cmp_ino);
	return n;
}

/* The lines of /proc/PID/net/@table whose inode is in @ino: their local
 * port's bit set. */
static void mark_table(pid_t pid, const char *table, const uint64_t *ino, size_t n, uint64_t *bits)
{
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)pid, table);
	if (!(f = fopen(path, "re")))
		return;
	/* "  sl  local_address rem_address   st tx_queue:rx_queue tr:tm->when
	 *  retrnsmt   uid  timeout inode": the local port is the hex after
	 * the colon of the second column, the inode the tenth. */
	while (fgets(line, sizeof(line), f)) {
		char local[64];
		unsigned port;
		uint64_t inode;
		const char *colon;

		if (sscanf(line, " %*s %63s %*s %*s %*s %*s %*s %*s %*s %" SCNu64, local, &inode) != 2)
			continue;
		colon = strrchr(local, ':');
		if (!colon || sscanf(colon + 1, "%x", &port) != 1 || port > 65535 ||
		    !bsearch(&inode, ino, n, sizeof(*ino), cmp_ino))
			continue;
		__atomic_fetch_or(&bits[port / 64], 1ull << (port % 64), __ATOMIC_SEQ_CST);
	}
	fclose(f);
}

int ports__mark(pid_t pid, uint64_t *bits)
{
	static const char *const tables[] = { "tcp", "tcp6", "udp", "udp6" };
	uint64_t *ino = malloc(MAX_SOCKETS * sizeof(*ino));
	size_t n;

	if (!ino)
		return 0;
	n = socket_inodes(pid, ino, MAX_SOCKETS);
	for (size_t i = 0; n && i < sizeof(tables) / sizeof(tables[0]); i++)
		mark_table(pid, tables[i], ino, n, bits);
	free(ino);
	return (int)n;
}
