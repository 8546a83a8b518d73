// SPDX-License-Identifier: MIT
/*
 * libusdt_dl.so: the adapter probes in a shared library that
 * tests/workloads/usdt_basic.c opens with dlopen() midway, so that the
 * capture must attach them while capturing, from the mapping report. Its
 * semaphores are its own, so usdt_dl_attached() tells when that attach
 * is complete.
 */
#include <stdint.h>
#include "../../../include/causeway.h"
#include "../usdt_round.h"

int usdt_dl_attached(void)
{
	return usdt_all_on();
}

void usdt_dl_fire(uint64_t base, int i)
{
	usdt_round(base, i, "dl");
}
