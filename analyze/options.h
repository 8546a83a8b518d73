/* SPDX-License-Identifier: MIT */
/*
 * The analyzer's command line: one struct env, filled by options__parse(),
 * read by everything else.
 */
#ifndef CAUSEWAY_ANALYZE_OPTIONS_H
#define CAUSEWAY_ANALYZE_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#define PROG "causeway-analyze"

struct env {
	const char *trace;
	const char *out;  /* -o; NULL: TRACE with .db in place of .cwt */
	int force;
	int quiet;
	int dump;
	int no_symbols;
	size_t max_live;  /* 0: the join's default */
	uint32_t classes; /* -e: bit per CW_CLASS_*; 0: all */
};

/*
 * Parse @argv into @env (zeroed first). --help and --version print and
 * exit 0. @return 0, or -EINVAL after a message (exit 2).
 */
int options__parse(struct env *env, int argc, char **argv);

/* The edge classes joined, as -e names them, comma-separated, in @buf.
 * @return @buf. */
char *options__classes(const struct env *env, char *buf, size_t len);

#endif /* CAUSEWAY_ANALYZE_OPTIONS_H */
