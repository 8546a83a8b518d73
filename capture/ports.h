/* SPDX-License-Identifier: MIT */
/*
 * The local ports of a process's sockets at start, for the net class's
 * filter (bpf/net.bpf.c: a packet to a port no traced socket has is not
 * remembered). Read from /proc: the process's descriptors that are
 * sockets, matched by inode in the TCP and UDP tables of its network
 * namespace. Knows nothing of BPF.
 */
#ifndef CAUSEWAY_CAPTURE_PORTS_H
#define CAUSEWAY_CAPTURE_PORTS_H

#include <stdint.h>
#include <sys/types.h>

/*
 * Set the bit of each local port of @pid's TCP and UDP sockets (IPv4 and
 * IPv6) in @bits (65536 bits), atomically: the programs set others
 * meanwhile. A process gone, or a table it cannot read, marks nothing.
 * @return how many sockets were found.
 */
int ports__mark(pid_t pid, uint64_t *bits);

#endif /* CAUSEWAY_CAPTURE_PORTS_H */
