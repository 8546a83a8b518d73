// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#include "capture/command.h"
#include "capture/log.h"
#include "capture/signals.h"

#define STOP_GRACE_MS 2000

struct command {
	pid_t pid;
	int release_fd; /* write end: one byte lets the child exec */
	int exec_fd;	/* read end: the exec's errno, or EOF when it succeeded */
	char *name;
	bool released, reaped;
	int status;
};

static ssize_t read_full(int fd, void *buf, size_t len)
{
	ssize_t n;

	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

/* What the child reports on the exec pipe when it cannot run COMMAND. */
enum child_stage { CHILD_CAPS, CHILD_EXEC };

/*
 * COMMAND is the workload, not part of the capture: the capabilities that
 * let the capture load BPF programs must not pass to it. Across an exec
 * by a user other than root, capabilities survive only through the
 * ambient set (kept as they are, by COMMAND and by everything it runs)
 * and the inheritable set (granted where an executable's file
 * capabilities name them, and what would let COMMAND raise ambient ones
 * again): both are emptied. A kernel without ambient capabilities (before
 * 4.3) answers EINVAL, and has none to pass. Permitted and effective are
 * left to the exec, which recomputes them: a capture run as root still
 * runs its command as root, with root's capabilities, whatever is dropped
 * here (running it as someone else is the caller's: sudo -u, setpriv).
 * Raw capget/capset: async-signal-safe, and no libcap.
 * @return 0 or -errno.
 */
static int drop_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -errno;
	if (syscall(SYS_capget, &h, d))
		return -errno;
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		d[i].inheritable = 0;
	if (syscall(SYS_capset, &h, d))
		return -errno;
	return 0;
}

/* In the child: only async-signal-safe calls until exec. */
static void child(char **argv, pid_t parent, int release_fd, int exec_fd)
{
	int fail[2];
	char c;

	/* The parent may have died before the prctl: then the death signal
	 * never comes, so check it after. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(127);
	if (read_full(release_fd, &c, 1) != 1)
		_exit(127); /* the capture did not start */
	signals__default();
	fail[0] = CHILD_CAPS;
	fail[1] = -drop_caps();
	if (!fail[1]) {
		execvp(argv[0], argv);
		fail[0] = CHILD_EXEC;
		fail[1] = errno;
	}
	if (write(exec_fd, fail, sizeof(fail)) < 0)
		_exit(127);
	_exit(127);
}

struct command *command__start(char **argv)
{
	struct command *c = calloc(1, sizeof(*c));
	int rel[2] = { -1, -1 }, ex[2] = { -1, -1 };
	pid_t parent = getpid();

	if (!c || !(c->name = strdup(argv[0]))) {
		cw_msg("out of memory");
		goto fail;
	}
	if (pipe2(rel, O_CLOEXEC) || pipe2(ex, O_CLOEXEC)) {
		cw_msg("pipe: %s", strerror(errno));
		goto fail;
	}
	c->pid = fork();
	if (c->pid < 0) {
		cw_msg("fork: %s", strerror(errno));
		goto fail;
	}
	if (c->pid == 0) {
		close(rel[1]);
		close(ex[0]);
		child(argv, parent, rel[0], ex[1]);
	}
	close(rel[0]);
	close(ex[1]);
	c->release_fd = rel[1];
	c->exec_fd = ex[0];
	return c;
fail:
	for (int i = 0; i < 2; i++) {
		if (rel[i] >= 0)
			close(rel[i]);
		if (ex[i] >= 0)
			close(ex[i]);
	}
	if (c)
		free(c->name);
	free(c);
	return NULL;
}

pid_t command__pid(const struct command *c)
{
	return c->pid;
}

int command__release(struct command *c)
{
	int fail[2];
	ssize_t n;

	if (write(c->release_fd, "g", 1) != 1) {
		int err = errno;

		cw_msg("cannot start %s: %s", c->name, strerror(err));
		return -err;
	}
	close(c->release_fd);
	c->release_fd = -1;
	c->released = true;
	/* EOF: the exec closed the pipe, the command runs. */
	n = read_full(c->exec_fd, fail, sizeof(fail));
	close(c->exec_fd);
	c->exec_fd = -1;
	if (n != (ssize_t)sizeof(fail))
		return 0;
	if (fail[0] == CHILD_CAPS)
		cw_msg("cannot run %s without the capture's capabilities: %s", c->name,
		       strerror(fail[1]));
	else
		cw_msg("cannot run %s: %s", c->name, strerror(fail[1]));
	return -fail[1];
}

bool command__exited(struct command *c)
{
	if (!c->reaped && waitpid(c->pid, &c->status, WNOHANG) == c->pid)
		c->reaped = true;
	return c->reaped;
}

void command__stop(struct command *c)
{
	if (command__exited(c))
		return;
	kill(c->pid, SIGTERM);
	for (int ms = 0; ms < STOP_GRACE_MS; ms += 10) {
		usleep(10000);
		if (command__exited(c))
			return;
	}
	kill(c->pid, SIGKILL);
	if (waitpid(c->pid, &c->status, 0) == c->pid)
		c->reaped = true;
}

int command__exit_code(const struct command *c)
{
	if (!c->reaped || !c->released)
		return -1;
	if (WIFEXITED(c->status))
		return WEXITSTATUS(c->status);
	if (WIFSIGNALED(c->status))
		return 128 + WTERMSIG(c->status);
	return -1;
}

const char *command__describe(const struct command *c, char *buf, size_t len)
{
	if (!c->reaped || !c->released)
		snprintf(buf, len, "did not run");
	else if (WIFEXITED(c->status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(c->status));
	else if (WIFSIGNALED(c->status))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(c->status),
			 strsignal(WTERMSIG(c->status)));
	else
		snprintf(buf, len, "status 0x%x", c->status);
	return buf;
}

void command__free(struct command *c)
{
	if (!c)
		return;
	if (c->release_fd >= 0)
		close(c->release_fd); /* an unreleased command exits 127 */
	if (c->exec_fd >= 0)
		close(c->exec_fd);
	if (c->released)
		command__stop(c);
	else if (!c->reaped && waitpid(c->pid, &c->status, 0) == c->pid)
		c->reaped = true;
	free(c->name);
	free(c);
}
