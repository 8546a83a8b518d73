/* SPDX-License-Identifier: MIT */
/*
 * A pty pair whose slave is raw (no echo, no line discipline processing),
 * so nothing written to the master ever comes back to it: every write
 * to the master is one queueing of the slave port's flush_to_ldisc work.
 */
#ifndef CAUSEWAY_WORKLOADS_PTYRAW_H
#define CAUSEWAY_WORKLOADS_PTYRAW_H

#include <fcntl.h>
#include <stdlib.h>
#include <termios.h>

/* @return 0 with *master and *slave open, or the step that failed. */
static inline const char *open_raw_pty(int *master, int *slave)
{
	struct termios tio;

	*master = posix_openpt(O_RDWR | O_NOCTTY);
	if (*master < 0 || grantpt(*master) || unlockpt(*master))
		return "posix_openpt";
	*slave = open(ptsname(*master), O_RDWR | O_NOCTTY);
	if (*slave < 0)
		return "open slave";
	if (tcgetattr(*slave, &tio))
		return "tcgetattr";
	cfmakeraw(&tio);
	tio.c_cc[VMIN] = 1;
	tio.c_cc[VTIME] = 0;
	if (tcsetattr(*slave, TCSANOW, &tio))
		return "tcsetattr";
	return NULL;
}

#endif
