// SPDX-License-Identifier: MIT
/* The kallsyms snapshot: names by exact address and by offset, aliases
 * named the same way whatever the sort does, lines that do not parse
 * skipped, and the bounds holding against a snapshot built to exceed
 * them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/check.h"
#include "analyze/ksyms.h"

static const char SNAP[] = "ffffffff81000100 T flush_to_ldisc\n"
			   "ffffffff81000000 T _stext\n"
			   "ffffffff81000200 t hrtimer_wakeup\n"
			   "ffffffff81000200 t hrtimer_wakeup_alias\n"
			   "ffffffffc0001000 t mod_fn\t[somemod]\n"
			   "not a line\n"
			   "0000000000000000 T zero_is_hidden\n"
			   "ffffffff81000300 T";

static void test_lookup(void)
{
	struct cw_ksyms *k = cw_ksyms__new();
	char buf[64];

	CHECK(k && !cw_ksyms__add(k, SNAP, strlen(SNAP)), "add");
	cw_ksyms__finish(k);
	CHECK(cw_ksyms__count(k) == 5, "5 symbols, got %zu", cw_ksyms__count(k));
	CHECK(!strcmp(cw_ksyms__name(k, 0xffffffff81000100ull, buf, sizeof(buf)), "flush_to_ldisc"),
	      "exact: %s", buf);
	CHECK(!strcmp(cw_ksyms__name(k, 0xffffffff81000110ull, buf, sizeof(buf)),
		      "flush_to_ldisc+0x10"), "offset: %s", buf);
	CHECK(!strcmp(cw_ksyms__name(k, 0xffffffff81000200ull, buf, sizeof(buf)), "hrtimer_wakeup"),
	      "first alias: %s", buf);
	CHECK(!strcmp(cw_ksyms__name(k, 0xffffffffc0001000ull, buf, sizeof(buf)), "mod_fn"),
	      "module symbol: %s", buf);
	CHECK(!strcmp(cw_ksyms__name(k, 0x1000, buf, sizeof(buf)), "0x1000"), "below all: %s", buf);
	CHECK(!strcmp(cw_ksyms__name(NULL, 0xffffffff81000100ull, buf, sizeof(buf)),
		      "0xffffffff81000100"), "no snapshot: %s", buf);
	cw_ksyms__free(k);
	passes++;
	printf("ok lookup\n");
}

/* A hostile snapshot: more symbols and longer names than the bounds. */
static void test_bounds(void)
{
	struct cw_ksyms *k = cw_ksyms__new_bounded(1000, 64 << 10);
	size_t len = 0, cap = 4 << 20;
	char *text = malloc(cap), *name = malloc(5000);
	uint64_t dropped;

	CHECK(k && text && name, "alloc");
	for (unsigned i = 0; i < 3000; i++)
		len += (size_t)snprintf(text + len, cap - len, "%016x T s%u\n", 0x1000 + i, i);
	CHECK(!cw_ksyms__add(k, text, len), "add many");
	CHECK(cw_ksyms__count(k) == 1000, "count bounded: %zu", cw_ksyms__count(k));
	CHECK(cw_ksyms__dropped(k) == 2000, "dropped %llu", (unsigned long long)cw_ksyms__dropped(k));
	cw_ksyms__free(k);

	k = cw_ksyms__new_bounded(0, 64 << 10);
	memset(name, 'x', 4999);
	name[4999] = '\0';
	len = 0;
	for (unsigned i = 0; i < 100; i++)
		len += (size_t)snprintf(text + len, cap - len, "%016x T %s\n", 0x1000 + i, name);
	CHECK(!cw_ksyms__add(k, text, len), "add long");
	dropped = cw_ksyms__dropped(k);
	CHECK(cw_ksyms__count(k) == 13 && dropped == 87, "bytes bounded: %zu kept, %llu dropped",
	      cw_ksyms__count(k), (unsigned long long)dropped);
	cw_ksyms__free(k);
	free(text);
	free(name);
	passes++;
	printf("ok bounds\n");
}

int main(void)
{
	test_lookup();
	test_bounds();
	printf("test_ksyms: %d passed, %d failed\n", passes, failures);
	return failures != 0;
}
