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
#include "sockio.h"

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

static void *server(void *arg)
{
	char buf[MSG];

	(void)arg;
	server_tid = gettid_();
	for (long i = 0; i < rounds; i++) {
		xrecv(server_fd, buf, sizeof(buf));
		buf[0] = 'R';
		wait_asleep(&client_tid);
		xsend(server_fd, buf, sizeof(buf));
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
		xsend(client_fd, buf, sizeof(buf));
		xrecv(client_fd, buf, sizeof(buf));
		if (buf[0] != 'R')
			die("bad response");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa, ca;
	socklen_t len = sizeof(ca);
	pthread_t st, ct;
	FILE *out;

	if (argc != 3 || (rounds = atol(argv[2])) < 1) {
		fprintf(stderr, "usage: tcp OUT N\n");
		return 2;
	}
	tcp_loopback_pair(&client_fd, &server_fd, &sa);
	if (getsockname(client_fd, (struct sockaddr *)&ca, &len))
		die("getsockname");

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
