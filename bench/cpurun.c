// SPDX-License-Identifier: MIT
/*
 * cpurun: runs a command and writes the CPU time it used, for
 * bench/capture.
 *
 *   cpurun OUT COMMAND [ARG...]
 *
 * OUT gets one line, "cpu_ns NS": user + system time of COMMAND and the
 * children it waited for, from wait4() (the kernel's precise runtime,
 * microseconds here; /usr/bin/time prints hundredths). Exits with
 * COMMAND's status.
 *
 * Why CPU time: a BPF program runs in the context of the task that hits
 * its tracepoint, so what a recorder costs the workload is in the
 * workload's own CPU time, and on a shared machine that is much less
 * disturbed by other tasks than its wall time.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	FILE *f;
	pid_t pid;
	int status;

	if (argc < 3) {
		fprintf(stderr, "usage: cpurun OUT COMMAND [ARG...]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("cpurun: fork");
		return 1;
	}
	if (!pid) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "cpurun: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR) {
			perror("cpurun: wait4");
			return 1;
		}
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "cpu_ns %llu\n",
			  (unsigned long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
				  (unsigned long long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull) < 0 ||
	    fclose(f)) {
		perror("cpurun");
		return 1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
