// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <bpf/libbpf.h>

#include "capture/log.h"
#include "lib/esc.h"

static bool quiet, verbose;

void cw_log_quiet(bool q)
{
	quiet = q;
}

void cw_log_verbose(bool v)
{
	verbose = v;
}

/* Messages name paths the kernel reported and probes of traced
 * programs: bytes anyone may have chosen, escaped before they reach the
 * (root) user's terminal. */
static void vmsg(const char *fmt, va_list ap)
{
	cw_esc_vmsg(stderr, CW_PROG, fmt, ap);
}

void cw_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void cw_notice(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void cw_verbose(const char *fmt, ...)
{
	va_list ap;

	if (quiet || !verbose)
		return;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void cw_log_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
