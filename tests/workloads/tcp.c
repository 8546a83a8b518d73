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
 *   tcp OUT N [GO]
 *
 * With GO the client runs in a process of its own, which waits for the
 * file GO to exist before its first send. It is forked twice, its parent
 * exiting at once, so that it is not a descendant of this one: a capture
 * -p of this process (which takes the descendants it has at start),
 * started once the server thread exists, has the server inside the
 * traced set and its client outside it.
 *
 * Ground truth goes to OUT, written after the work is done:
 *   pid PID
 *   server TID
 *   client TID
 *   client_pid PID                 the client's process (PID without GO)
 *   rounds N
 *   addr CLIENT_PORT SERVER_PORT   both on 127.0.0.1
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

static void xpipe_io(int fd, void *v, int wr)
{
	ssize_t n = wr ? write(fd, v, sizeof(pid_t)) : read(fd, v, sizeof(pid_t));

	if (n != (ssize_t)sizeof(pid_t))
		die(wr ? "pipe write" : "pipe read");
}

/* The client's process (GO): it tells the server its tid, learns the
 * server's, waits for @go, then runs its round trips. It ends with the
 * server's process, which is not its parent: the wait checks that the
 * process is there, and a recv sees its socket closed. */
static void client_process(const char *go, pid_t server_pid, int to_server, int from_server)
{
	pid_t t;
	struct stat st;

	close(server_fd);
	client_tid = gettid_();
	t = client_tid;
	xpipe_io(to_server, &t, 1);
	xpipe_io(from_server, &t, 0);
	server_tid = t;
	while (stat(go, &st)) {
		if (kill(server_pid, 0))
			die("the server's process is gone");
		usleep(1000);
	}
	client(NULL);
	exit(0);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa, ca;
	socklen_t len = sizeof(ca);
	pthread_t st, ct;
	int c2s[2], s2c[2], status;
	pid_t child = 0, t, self = getpid();
	FILE *out;

	if ((argc != 3 && argc != 4) || (rounds = atol(argv[2])) < 1) {
		fprintf(stderr, "usage: tcp OUT N [GO]\n");
		return 2;
	}
	tcp_loopback_pair(&client_fd, &server_fd, &sa);
	if (getsockname(client_fd, (struct sockaddr *)&ca, &len))
		die("getsockname");

	if (argc == 4) {
		if (pipe(c2s) || pipe(s2c))
			die("pipe");
		child = fork();
		if (child < 0)
			die("fork");
		if (!child) {
			child = fork();
			if (child < 0)
				die("fork");
			if (!child)
				client_process(argv[3], self, c2s[1], s2c[0]);
			exit(0);
		}
		if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			die("fork of the client");
		close(client_fd);
		xpipe_io(c2s[0], &t, 0);
		client_tid = child = t;
		if (pthread_create(&st, NULL, server, NULL))
			return 1;
		while (!server_tid)
			sched_yield();
		t = server_tid;
		xpipe_io(s2c[1], &t, 1);
		/* The client is not our child: its last round trip's
		 * response sent, it is done. */
		pthread_join(st, NULL);
	} else {
		if (pthread_create(&st, NULL, server, NULL) ||
		    pthread_create(&ct, NULL, client, NULL))
			return 1;
		pthread_join(st, NULL);
		pthread_join(ct, NULL);
	}

	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	fprintf(out, "pid %d\nserver %d\nclient %d\nclient_pid %d\nrounds %ld\naddr %d %d\n",
		(int)getpid(), (int)server_tid, (int)client_tid, (int)(child ? child : getpid()),
		rounds, ntohs(ca.sin_port), ntohs(sa.sin_port));
	return fclose(out) ? 1 : 0;
}
