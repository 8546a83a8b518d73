/* SPDX-License-Identifier: MIT */
/*
 * What the TCP ping-pong workloads (tests/workloads/tcp.c and
 * bench/tcp_pingpong.c) share: one loopback connection, and sending and
 * receiving one whole message or dying, so that every round trip is
 * exactly one packet each way.
 *
 * The includer defines die(WHAT): it knows its program's name.
 */
#ifndef CAUSEWAY_WORKLOADS_SOCKIO_H
#define CAUSEWAY_WORKLOADS_SOCKIO_H

#include <errno.h>
#include <stddef.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/types.h>

static void die(const char *what);

/*
 * Connects *client to *server over 127.0.0.1, before any thread runs, so
 * that the threads' only wakeups are their round trips. TCP_NODELAY on
 * both ends: every send leaves at once as its own packet. @sa gets the
 * server's address.
 */
static inline void tcp_loopback_pair(int *client, int *server, struct sockaddr_in *sa)
{
	socklen_t len = sizeof(*sa);
	int lfd, one = 1;

	*sa = (struct sockaddr_in){ .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)sa, sizeof(*sa)) || listen(lfd, 1) ||
	    getsockname(lfd, (struct sockaddr *)sa, &len))
		die("listen");
	*client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*client < 0 || connect(*client, (struct sockaddr *)sa, sizeof(*sa)))
		die("connect");
	*server = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (*server < 0)
		die("accept");
	if (setsockopt(*client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    setsockopt(*server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		die("TCP_NODELAY");
	close(lfd);
}

static inline void xsend(int fd, const void *buf, size_t len)
{
	if (send(fd, buf, len, 0) != (ssize_t)len)
		die("send");
}

/* A stream socket may hand a message over in pieces: all @len bytes. */
static inline void xrecv(int fd, void *buf, size_t len)
{
	for (size_t got = 0; got < len;) {
		ssize_t n = recv(fd, (char *)buf + got, len - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("recv");
		got += (size_t)n;
	}
}

#endif
