// SPDX-License-Identifier: MIT
/*
 * uprobe_cost: the targets of bench/uprobe-cost, which measures what one
 * uprobe hit costs on this machine, apart from any BPF program's work
 * (the go class's cost, docs/model.md §6.2).
 *
 * Five empty functions, called N times each in a loop, timed REPS
 * times, the fastest kept (the least disturbed run). They differ only in
 * the instruction a uprobe at their entry replaces, for x86-64's uprobes
 * treat them differently:
 *
 *   uc_cmp  begins with Go's stack check (cmp rsp, [r14+16]): the kernel
 *           runs the displaced instruction out of line under single-step,
 *           a second trap (#DB) after the int3; a Go function's entry;
 *   uc_ret  is a ret, also single-stepped: the go class's return probes;
 *   uc_jcc  begins with a conditional jump (after a cmp, at uc_jcc_at),
 *           which the kernel emulates: the int3 alone; where the go class
 *           puts its entry probes (capture/gobin.h, probe_off);
 *   uc_nop  begins with a one-byte nop, a USDT probe's site (sys/sdt.h):
 *           what each of PostgreSQL's probes costs its backend;
 *   uc_call begins with a relative call (of an empty leaf), which the
 *           kernel emulates too (it pushes the return address itself):
 *           where the go class reads a spawn (capture/gobin.h, struct
 *           gobin_site).
 *
 *   uprobe_cost cmp|ret|jcc|nop|call [N [REPS]]   prints "NAME: X.XX ns per call"
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void uc_cmp(void);
void uc_ret(void);
void uc_jcc(void);
void uc_nop(void);
void uc_call(void);

/* r14 is Go's g register; here it points at a word the compare reads.
 * uc_jcc's jump goes where it falls through: no branch taken either way. */
__asm__(".text\n"
	".globl uc_cmp\n.type uc_cmp,@function\n"
	"uc_cmp:\n\tcmp 16(%r14), %rsp\n\tret\n"
	".size uc_cmp, .-uc_cmp\n"
	".globl uc_ret\n.type uc_ret,@function\n"
	"uc_ret:\n\tret\n"
	".size uc_ret, .-uc_ret\n"
	".globl uc_jcc\n.type uc_jcc,@function\n"
	"uc_jcc:\n\tcmp 16(%r14), %rsp\n"
	".globl uc_jcc_at\nuc_jcc_at:\n\tjbe 1f\n1:\tret\n"
	".size uc_jcc, .-uc_jcc\n"
	".globl uc_nop\n.type uc_nop,@function\n"
	"uc_nop:\n\tnop\n\tret\n"
	".size uc_nop, .-uc_nop\n"
	".globl uc_call\n.type uc_call,@function\n"
	"uc_call:\n\tcall uc_leaf\n\tret\n"
	".size uc_call, .-uc_call\n"
	"uc_leaf:\n\tret\n");

static uint64_t gword[4];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void loop(void (*fn)(void), uint64_t n)
{
	register uint64_t *g __asm__("r14") = gword;

	for (uint64_t i = 0; i < n; i++)
		__asm__ volatile("call *%0" : : "r"(fn), "r"(g) : "memory", "cc");
}

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "";
	uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000ull;
	int reps = argc > 3 ? atoi(argv[3]) : 5;
	void (*fn)(void) = !strcmp(which, "cmp") ? uc_cmp :
			   !strcmp(which, "ret") ? uc_ret :
			   !strcmp(which, "jcc") ? uc_jcc :
			   !strcmp(which, "nop") ? uc_nop :
			   !strcmp(which, "call") ? uc_call : NULL;
	double min = 1e300;

	if (!fn || !n || reps <= 0) {
		fprintf(stderr, "usage: uprobe_cost cmp|ret|jcc|nop|call [N [REPS]]\n");
		return 2;
	}
	loop(fn, n / 10); /* warm up */
	for (int r = 0; r < reps; r++) {
		uint64_t t0 = now_ns();

		loop(fn, n);
		if ((double)(now_ns() - t0) < min)
			min = (double)(now_ns() - t0);
	}
	printf("%s: %.2f ns per call (%llu calls, best of %d)\n", which, min / (double)n,
	       (unsigned long long)n, reps);
	return 0;
}
