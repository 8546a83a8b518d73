// SPDX-License-Identifier: MIT
/*
 * causeway-export: a causeway database in, one file out (export.h).
 *
 * The database is opened read-only and never written: an export is a
 * reader of the documented tables and views, as any user's query is. The
 * output goes through lib/outfile.h (0600, a temporary renamed into place,
 * never through a symlink, never onto the database, no replace without
 * --force).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "export.h"
#include "../lib/esc.h"
#include "../lib/outfile.h"

static const struct format {
	const char *name, *ext;
	int (*write)(struct cw_x *x);
} formats[] = {
	{ "pprof", ".pb.gz", cw_x__pprof },
	{ "folded", ".folded", cw_x__folded },
	{ "perfetto", ".perfetto-trace", cw_x__perfetto },
	{ "dot", ".dot", cw_x__dot },
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " FORMAT DB [-o OUT] [--request ID|NAME]... [--since NS]\n"
		"                       [--until NS] [--force] [-q]\n"
		"\n"
		"Writes what a causeway database says in a format other tools open\n"
		"(default OUT: DB with the format's extension in place of .db).\n"
		"  pprof     gzip'd profile.proto: CPU and off-CPU samples, each stack with\n"
		"            its causal frames at the root (request, task, each handoff),\n"
		"            labels request, task, confidence, mechanism, thread (go\n"
		"            tool pprof: CPU time by default, off-CPU time with\n"
		"            -sample_index=offcpu, -tagroot=mechanism roots it by what\n"
		"            ended each wait)\n"
		"  folded    root;...;leaf weight lines with the same causal frames\n"
		"            (flamegraph.pl, inferno, speedscope): CPU time, or off-CPU\n"
		"            time with --offcpu, in microseconds (estimated, as pprof's)\n"
		"  perfetto  a Perfetto trace: a track per thread (running and blocked\n"
		"            slices), per request and per runtime task, every edge a flow\n"
		"            (ui.perfetto.dev, trace_processor)\n"
		"  dot       one request's causal DAG for graphviz (needs --request)\n"
		"  -o, --output FILE   file to write\n"
		"      --request R     only request R: a node id, or a request's name\n"
		"                      (every request of that name); may be repeated\n"
		"      --since NS      only what happened at or after NS (capture clock)\n"
		"      --until NS      only what happened at or before NS\n"
		"      --offcpu        folded: off-CPU time instead of CPU samples\n"
		"      --force         replace an existing file (a regular file, never DB)\n"
		"  -q, --quiet         no progress line and no summary\n"
		"Exit: 0 written, 1 the database could not be read or the file written,\n"
		"2 bad arguments or a refused output.\n");
}

void cw_x__err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cw_esc_vmsg(stderr, PROG, fmt, ap);
	va_end(ap);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void cw_x__progress(struct cw_x *x, const char *what, uint64_t done, uint64_t total)
{
	uint64_t t;

	if (!x->progress)
		return;
	t = now_ns();
	if (t - x->progress_last_ns < 200000000u)
		return;
	x->progress_last_ns = t;
	if (total)
		fprintf(stderr, "\r" PROG ": %s %" PRIu64 " of %" PRIu64 " (%" PRIu64 "%%)  ", what,
			done, total, done * 100 / total);
	else
		fprintf(stderr, "\r" PROG ": %s %" PRIu64 "  ", what, done);
	x->progress_drawn = true;
}

void cw_x__progress_done(struct cw_x *x)
{
	if (x->progress_drawn)
		fprintf(stderr, "\r\033[K");
	x->progress_drawn = false;
}

bool cw_x__wants_request(const struct cw_x *x, int64_t id)
{
	if (!x->nrequests)
		return true;
	for (size_t i = 0; i < x->nrequests; i++)
		if (x->requests[i] == id)
			return true;
	return false;
}

sqlite3_stmt *cw_x__prepare(struct cw_x *x, const char *sql)
{
	sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(x->db, sql, -1, &s, NULL) != SQLITE_OK) {
		cw_x__err("the database cannot be read: %s", sqlite3_errmsg(x->db));
		sqlite3_finalize(s);
		return NULL;
	}
	return s;
}

/* Parse a decimal ns value for @opt. @return 0 or -EINVAL after a message. */
static int parse_ns(const char *opt, const char *arg, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || v < 0) {
		cw_x__err("%s: '%s' is not a time in ns", opt, arg);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/*
 * --request's words into node ids: a number is a request node's id; any
 * other word names every request of that name. @return 0, 1 after a
 * message when the database cannot be read, 2 when a word names no
 * request.
 */
static int resolve_requests(struct cw_x *x, char **words, size_t n, int64_t **out, size_t *nout)
{
	sqlite3_stmt *by_id = cw_x__prepare(x, "SELECT id FROM nodes WHERE id = ?1 AND type = 'request'");
	sqlite3_stmt *by_name = cw_x__prepare(
		x, "SELECT id FROM nodes WHERE type = 'request' AND name = ?1 ORDER BY start_ns, id");
	int64_t *ids = NULL;
	size_t nids = 0, cap = 0;
	int ret = 0;

	if (!by_id || !by_name)
		ret = 1;
	for (size_t i = 0; i < n && !ret; i++) {
		char *end;
		long long v = strtoll(words[i], &end, 10);
		sqlite3_stmt *s = *words[i] && !*end ? by_id : by_name;
		size_t before = nids;
		int rc;

		sqlite3_reset(s);
		if (s == by_id)
			sqlite3_bind_int64(s, 1, v);
		else
			sqlite3_bind_text(s, 1, words[i], -1, SQLITE_STATIC);
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			if (nids == cap) {
				int64_t *m = realloc(ids, (cap = cap ? cap * 2 : 8) * sizeof(*ids));

				if (!m) {
					cw_x__err("out of memory");
					ret = 1;
					break;
				}
				ids = m;
			}
			ids[nids++] = sqlite3_column_int64(s, 0);
		}
		if (!ret && rc != SQLITE_DONE) {
			cw_x__err("the database cannot be read: %s", sqlite3_errmsg(x->db));
			ret = 1;
		} else if (!ret && nids == before) {
			cw_x__err("--request: no request %s '%s' in the database",
				  s == by_id ? "with id" : "named", words[i]);
			ret = 2;
		}
	}
	sqlite3_finalize(by_id);
	sqlite3_finalize(by_name);
	*out = ids;
	*nout = nids;
	return ret;
}

/* An analyzer's database of a schema this export reads? @return 0, or 1
 * after a message. */
static int check_schema(struct cw_x *x)
{
	sqlite3_stmt *s = NULL;
	int ok;

	ok = sqlite3_prepare_v2(x->db, "SELECT value FROM meta WHERE key = 'schema_version'", -1,
				&s, NULL) == SQLITE_OK &&
	     sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int64(s, 0) == 1;
	sqlite3_finalize(s);
	if (!ok)
		cw_x__err("not a causeway database of schema version 1 (meta.schema_version): %s",
			  sqlite3_errmsg(x->db));
	return ok ? 0 : 1;
}

/* DB with @ext in place of a trailing .db (else after it). */
static char *default_out(const char *db, const char *ext)
{
	size_t n = strlen(db);
	char *out;

	if (n > 3 && !strcmp(db + n - 3, ".db"))
		n -= 3;
	if (!(out = malloc(n + strlen(ext) + 1)))
		return NULL;
	memcpy(out, db, n);
	strcpy(out + n, ext);
	return out;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "request", required_argument, NULL, 'r' },
		{ "since", required_argument, NULL, 's' },
		{ "until", required_argument, NULL, 'u' },
		{ "offcpu", no_argument, NULL, 'O' },
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cw_x x = { .since = INT64_MIN, .until = INT64_MAX };
	struct cw_outfile_opts oo = { .prog = PROG };
	const struct format *fmt = NULL;
	struct cw_outfile *of = NULL;
	char **words = NULL, *out_path = NULL;
	const char *out = NULL, *db;
	int64_t *ids = NULL;
	size_t nwords = 0, nids = 0;
	int opt, ret = 1, fd;

	while ((opt = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 'r': {
			char **m = realloc(words, (nwords + 1) * sizeof(*words));

			if (!m) {
				cw_x__err("out of memory");
				goto done;
			}
			words = m;
			words[nwords++] = optarg;
			break;
		}
		case 's':
			if (parse_ns("--since", optarg, &x.since))
				goto bad;
			break;
		case 'u':
			if (parse_ns("--until", optarg, &x.until))
				goto bad;
			break;
		case 'O': x.offcpu = true; break;
		case 'f': oo.force = true; break;
		case 'q': x.quiet = oo.quiet = true; break;
		case 'h': usage(stdout); ret = 0; goto done;
		default: usage(stderr); goto bad;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		goto bad;
	}
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(formats[i].name, argv[optind]))
			fmt = &formats[i];
	if (!fmt) {
		cw_x__err("unknown format '%s' (known: pprof, folded, perfetto, dot)", argv[optind]);
		goto bad;
	}
	if (fmt->write == cw_x__dot && nwords != 1) {
		cw_x__err("dot draws one request: give it --request ID|NAME once");
		goto bad;
	}
	if (x.since > x.until) {
		cw_x__err("--since is after --until");
		goto bad;
	}
	db = argv[optind + 1];
	if (!out && !(out = out_path = default_out(db, fmt->ext))) {
		cw_x__err("out of memory");
		goto done;
	}
	oo.inputs = &db;
	oo.ninputs = 1;
	/* A bad output name is refused before the database is read. */
	if (cw_outfile__check(out, &oo))
		goto bad;
	if (access(db, R_OK)) {
		cw_x__err("%s: %s", db, strerror(errno));
		goto done;
	}
	if (sqlite3_open_v2(db, &x.db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		cw_x__err("%s: %s", db, x.db ? sqlite3_errmsg(x.db) : "cannot open");
		goto done;
	}
	if (check_schema(&x))
		goto done;
	if (nwords && (ret = resolve_requests(&x, words, nwords, &ids, &nids)))
		goto done;
	ret = 1;
	if (fmt->write == cw_x__dot && nids != 1) {
		cw_x__err("--request '%s' names %zu requests; dot draws one: give its id", words[0],
			  nids);
		ret = 2;
		goto done;
	}
	x.requests = ids;
	x.nrequests = nids;
	x.progress = !x.quiet && isatty(STDERR_FILENO);
	if (!(of = cw_outfile__create(out, &oo))) {
		ret = errno == EEXIST || errno == EINVAL ? 2 : 1;
		goto done;
	}
	fd = dup(cw_outfile__fd(of));
	if (fd < 0 || !(x.out = fdopen(fd, "w"))) {
		cw_x__err("%s: %s", out, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto done;
	}
	if (fmt->write(&x)) {
		cw_x__progress_done(&x);
		goto done;
	}
	cw_x__progress_done(&x);
	if (fflush(x.out) || ferror(x.out)) {
		cw_x__err("%s: %s", out, strerror(errno));
		goto done;
	}
	fclose(x.out);
	x.out = NULL;
	if (cw_outfile__commit(of))
		goto done;
	if (!x.quiet)
		fprintf(stderr, PROG ": wrote %s\n", out);
	ret = 0;
	goto done;
bad:
	ret = 2;
done:
	if (x.out)
		fclose(x.out);
	cw_outfile__free(of);
	sqlite3_close(x.db);
	free(ids);
	free(words);
	free(out_path);
	return ret;
}
