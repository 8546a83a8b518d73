// SPDX-License-Identifier: MIT
/* The analyzer's command line (analyze/options.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "options.h"
#include "../schema/events.h"
#include "../schema/names.h"
#include "trace/format.h"

static void usage(FILE *f)
{
	char classes[128];

	fprintf(f,
		"usage: " PROG " TRACE [-o OUT.db] [--force] [-e LIST] [--no-symbols] [-q]\n"
		"       " PROG " --dump TRACE      print the records as fixture text\n"
		"       " PROG " --version\n"
		"\n"
		"Reads a causeway trace (.cwt), joins its events into a causal graph and\n"
		"writes it to SQLite (default: TRACE with .db in place of .cwt).\n"
		"  -o, --output FILE   database to write\n"
		"      --force         replace an existing database (a regular file, and\n"
		"                      never TRACE itself)\n"
		"      --no-symbols    do not symbolize user stacks (libdw is not used):\n"
		"                      frames keep their address as sampled, module and\n"
		"                      build-id; a --call-graph dwarf sample's user stack\n"
		"                      is then its leaf only (unwinding needs the CFI).\n"
		"                      Kernel frames are still named from the trace's\n"
		"                      kallsyms snapshot\n"
		"  -e, --events LIST   join only these edge classes, a comma list of\n"
		"                      %s\n"
		"                      (default: all); the records of the others are skipped\n"
		"                      as if the capture had not recorded them, and the\n"
		"                      causes they would name stay unknown. Metadata and\n"
		"                      samples are always joined\n"
		"  -q, --quiet         no progress bar and no summary\n"
		"      --max-live N    bound on live join state (default 1048576)\n"
		"Exit: 0 database written (also from a damaged trace), 1 none could be,\n"
		"2 bad arguments or a refused output, 128+N ended by signal N (no database).\n",
		cw_class_edge_list(classes, sizeof(classes)));
}

/* -e LIST into @env->classes: the edge classes of schema/classes.def, by
 * the names the capture's -e takes. @return 0 or -EINVAL after a message. */
static int parse_events(struct env *env, const char *list)
{
	char *copy = strdup(list), *tok, *save = NULL, known[128];
	int err = 0;

	if (!copy) {
		fprintf(stderr, PROG ": out of memory\n");
		return -ENOMEM;
	}
	cw_class_edge_list(known, sizeof(known));
	env->classes = 0;
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		int cls = cw_class_find_edge(tok, 0);
		/* a class -e cannot leave out, by its name */
		int kind = cw_class_kind((unsigned)cw_name_find(cw_class_names, CW_CLASS_MAX, tok));

		if (cls >= 0) {
			env->classes |= 1u << cls;
		} else if (kind == CW_CK_CONTEXT || kind == CW_CK_META) {
			fprintf(stderr, PROG ": -e: '%s' is not an edge class and cannot be left out: "
				"%s always joined\n", tok,
				kind == CW_CK_CONTEXT ? "samples are" : "the metadata is");
			err = -EINVAL;
		} else {
			fprintf(stderr, PROG ": -e: unknown edge class '%s' (known: %s)\n", tok, known);
			err = -EINVAL;
		}
	}
	if (!err && !env->classes) {
		fprintf(stderr, PROG ": -e: empty class list (known: %s)\n", known);
		err = -EINVAL;
	}
	free(copy);
	return err;
}

/* The edge classes joined, as -e names them, in @buf. */
char *options__classes(const struct env *env, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < CW_ARRAY_SIZE(cw_class_table) && off < len; i++)
		if (cw_class_table[i].kind == CW_CK_EDGE &&
		    (!env->classes || env->classes >> cw_class_table[i].id & 1))
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "," : "",
						cw_class_table[i].ename);
	return buf;
}

int options__parse(struct env *env, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "no-symbols", no_argument, NULL, 'S' },
		{ "dump", no_argument, NULL, 'D' },
		{ "max-live", required_argument, NULL, 'M' },
		{ "events", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	int c;

	*env = (struct env){ 0 };
	while ((c = getopt_long(argc, argv, "o:e:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': env->out = optarg; break;
		case 'f': env->force = 1; break;
		case 'q': env->quiet = 1; break;
		case 'S': env->no_symbols = 1; break;
		case 'D': env->dump = 1; break;
		case 'e':
			if (parse_events(env, optarg))
				return -EINVAL;
			break;
		case 'M': {
			char *end;
			unsigned long long v = strtoull(optarg, &end, 10);

			if (*end || !v || v > (1ull << 32)) {
				fprintf(stderr, PROG ": --max-live wants a number from 1 to 2^32\n");
				return -EINVAL;
			}
			env->max_live = v;
			break;
		}
		case 'h': usage(stdout); exit(0);
		case 'V':
			printf(PROG " %s (trace format %d.%d and older, database schema %d)\n",
			       CW_VERSION, CW_FORMAT_MAJOR, CW_FORMAT_MINOR, CW_SCHEMA_VERSION);
			exit(0);
		default: usage(stderr); return -EINVAL;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, PROG ": %s\n", optind >= argc ? "no trace file given" : "more than one trace file given");
		usage(stderr);
		return -EINVAL;
	}
	env->trace = argv[optind];
	/* --dump prints the records as read: an option that shapes the
	 * database would do nothing, and says so. */
	if (env->dump && (env->out || env->force || env->no_symbols || env->max_live || env->classes)) {
		fprintf(stderr, PROG ": --dump prints the records and writes no database: %s does nothing with it\n",
			env->out ? "-o" : env->force ? "--force" : env->no_symbols ? "--no-symbols"
			: env->max_live ? "--max-live" : "-e");
		return -EINVAL;
	}
	return 0;
}
