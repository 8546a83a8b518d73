// SPDX-License-Identifier: MIT
/*
 * tcp_pingpong: bench/capture's net workload. A client thread and a
 * server thread bounce 64 bytes over one loopback TCP connection
 * (TCP_NODELAY) ROUNDS times: every round trip is two packets, each
 * received in softirq right in its sender's send() (loopback feeds the
 * backlog, and the softirq runs when the sender re-enables bottom
 * halves), and about two wakeups.
 *
 *   tcp_pingpong OUT ROUNDS
 *
 * OUT ("-": stdout) gets "elapsed_ns NS", the wall time of the round
 * trips, the connection set up before it starts.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include "tests/workloads/sockio.h"

#define MSG 64

static long rounds;
static int server_fd, client_fd;

static void die(const char *what)
{
	fprintf(stderr, "tcp_pingpong: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *server(void *arg)
{
	char buf[MSG];

	(void)arg;
	for (long i = 0; i < rounds; i++) {
		xrecv(server_fd, buf, sizeof(buf));
		xsend(server_fd, buf, sizeof(buf));
	}
	return NULL;
}

static void *client(void *arg)
{
	char buf[MSG];

	(void)arg;
	memset(buf, 'c', sizeof(buf));
	for (long i = 0; i < rounds; i++) {
		xsend(client_fd, buf, sizeof(buf));
		xrecv(client_fd, buf, sizeof(buf));
	}
	return NULL;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa;
	pthread_t st, ct;
	long long t0, t1;
	FILE *out;

	if (argc != 3 || (rounds = atol(argv[2])) < 1) {
		fprintf(stderr, "usage: tcp_pingpong OUT ROUNDS\n");
		return 2;
	}
	tcp_loopback_pair(&client_fd, &server_fd, &sa);

	t0 = now_ns();
	if (pthread_create(&st, NULL, server, NULL) || pthread_create(&ct, NULL, client, NULL))
		return 1;
	pthread_join(st, NULL);
	pthread_join(ct, NULL);
	t1 = now_ns();

	out = strcmp(argv[1], "-") ? fopen(argv[1], "w") : stdout;
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	fprintf(out, "elapsed_ns %lld\n", t1 - t0);
	return out != stdout && fclose(out) ? 1 : 0;
}
