// SPDX-License-Identifier: MIT
/*
 * tcp: a loopback TCP client thread and server thread, N request/response
 * round trips of 64 bytes (TCP_NODELAY). Before every send the sender
 * waits until its peer is asleep (/proc/self/task/TID/stat state S; the
 * peer's only sleep is then its recv), so every request wakes the server
 * and every response wakes the client: on loopback the receive runs in
 * softirq on the sender's CPU, and the wakeup's cause is the packet.
 *
 * The connection is set up before either thread starts: the main thread
 * connects and accepts, then hands one end to each thread, so the threads'
 * only wakeups are the round trips (and their creation).
 *
 *   tcp OUT N
 *
 * Ground truth goes to OUT, written after the work is done:
 *   pid PID
 *   server TID
 *   client TID
 *   rounds N
 *   addr CLIENT_PORT SERVER_PORT   both on 127.0.0.1
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include "asleep.h"

#define MSG 64

static long rounds;
static int server_fd, client_fd;
static _Atomic pid_t server_tid, client_tid;

static void die(const char *what)
{
	fprintf(stderr, "tcp: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void wait_asleep(_Atomic pid_t *tid)
{
	while (!*tid)
		sched_yield();
	wait_sleeping(*tid);
}

static void xsend(int fd, const char *buf)
{
	if (send(fd, buf, MSG, 0) != MSG)
		die("send");
}

static void xrecv(int fd, char *buf)
{
	for (size_t got = 0; got < MSG;) {
		ssize_t n = recv(fd, buf + got, MSG - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("recv");
		got += (size_t)n;
	}
}

static void *server(void *arg)
{
	char buf[MSG];

	(void)arg;
	server_tid = gettid_();
	for (long i = 0; i < rounds; i++) {
		xrecv(server_fd, buf);
		buf[0] = 'R';
		wait_asleep(&client_tid);
		xsend(server_fd, buf);
	}
	return NULL;
}

static void *client(void *arg)
{
	char buf[MSG];

	(void)arg;
	client_tid = gettid_();
	for (long i = 0; i < rounds; i++) {
		memset(buf, 'a' + (int)(i % 26), sizeof(buf));
		wait_asleep(&server_tid);
		xsend(client_fd, buf);
		xrecv(client_fd, buf);
		if (buf[0] != 'R')
			die("bad response");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in ca;
	socklen_t len = sizeof(sa);
	pthread_t st, ct;
	int lfd, one = 1;
	FILE *out;

	if (argc != 3 || (rounds = atol(argv[2])) < 1) {
		fprintf(stderr, "usage: tcp OUT N\n");
		return 2;
	}
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len))
		die("listen");
	client_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (client_fd < 0 || connect(client_fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("connect");
	server_fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (server_fd < 0)
		die("accept");
	len = sizeof(ca);
	if (getsockname(client_fd, (struct sockaddr *)&ca, &len) ||
	    setsockopt(client_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    setsockopt(server_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		die("socket options");
	close(lfd);

	if (pthread_create(&st, NULL, server, NULL) || pthread_create(&ct, NULL, client, NULL))
		return 1;
	pthread_join(st, NULL);
	pthread_join(ct, NULL);

	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	fprintf(out, "pid %d\nserver %d\nclient %d\nrounds %ld\naddr %d %d\n", (int)getpid(),
		(int)server_tid, (int)client_tid, rounds, ntohs(ca.sin_port), ntohs(sa.sin_port));
	return fclose(out) ? 1 : 0;
}
