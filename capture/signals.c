// SPDX-License-Identifier: MIT
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "capture/signals.h"

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };

static volatile sig_atomic_t first_sig, nsig;
static sigset_t inherited_mask;

static void on_stop(int sig)
{
	if (!first_sig)
		first_sig = sig;
	nsig++;
}

int signals__install(void)
{
	struct sigaction sa;
	sigset_t set;

	if (sigprocmask(SIG_SETMASK, NULL, &inherited_mask))
		return -errno;
	memset(&sa, 0, sizeof(sa));
	/* No SA_RESTART: a blocking call returns EINTR and the loop looks. */
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++) {
		struct sigaction old;

		/* nohup: whoever ignored the hangup wants the capture (and
		 * its COMMAND, which inherits the disposition) to survive
		 * it. An ignored SIGINT is only what a shell does to a
		 * background job, and `kill -INT` must still stop it. */
		if (stop_signals[i] == SIGHUP && !sigaction(SIGHUP, NULL, &old) &&
		    old.sa_handler == SIG_IGN)
			continue;
		if (sigaction(stop_signals[i], &sa, NULL))
			return -errno;
		sigaddset(&set, stop_signals[i]);
	}
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL))
		return -errno;
	sigaddset(&set, SIGPIPE);
	return sigprocmask(SIG_UNBLOCK, &set, NULL) ? -errno : 0;
}

int signals__stop(void)
{
	return first_sig;
}

int signals__count(void)
{
	return nsig;
}

void signals__default(void)
{
	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_SETMASK, &inherited_mask, NULL);
}
