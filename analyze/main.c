// SPDX-License-Identifier: MIT
/*
 * causeway-analyze: trace file in, SQLite causal graph out.
 *
 *   pass 1  read every segment once to learn where evidence is missing:
 *           damaged stretches of the file and ring-buffer losses
 *           (accounting records). Loss is reported after the events it
 *           affects, so the join needs the whole list up front.
 *   pass 2  read again, put records back in timestamp order (order.c),
 *           join them (join.c), write the database (db.c).
 *
 * The database is written to a temporary file beside OUT and renamed at
 * the end: an interrupted run leaves no half database at OUT.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "breaks_scan.h"
#include "critical.h"
#include "db.h"
#include "dump.h"
#include "join.h"
#include "options.h"
#include "order.h"
#include "report.h"
#include "trace/reader.h"
#include "../lib/outfile.h"
#include "trace/format.h"
#include "../schema/names.h"

/*
 * A signal ends the run at once, wherever it is: the join and the index
 * build after the last read run for seconds without a point to look at a
 * flag, and a run told to stop must not write a database after all. So
 * the handler removes the temporary database itself and exits (unlink,
 * write and _exit are async-signal-safe); across the rename into place the
 * signals are blocked, and once the database is there a signal is
 * ignored: the run is complete, and exit 0 means a database was written.
 */
static const char *volatile sig_tmp;

static void on_signal(int sig)
{
	static const char msg[] = PROG ": interrupted; no database written\n";

	if (sig_tmp)
		unlink(sig_tmp);
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* nothing more can be said */
	}
	_exit(128 + sig);
}

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };

static void on_stop_signals(void (*fn)(int))
{
	for (size_t i = 0; i < CW_ARRAY_SIZE(stop_signals); i++)
		signal(stop_signals[i], fn);
}

/* Rename the database into place with the stop signals held, so that a
 * run ends either before it (no database) or after it (the database,
 * exit 0). @return 0, or 2 when another run's file took the name
 * meanwhile, or 1. */
static int commit_db(struct cw_outfile *of)
{
	sigset_t set, old, pending;
	int err;

	sigemptyset(&set);
	for (size_t i = 0; i < CW_ARRAY_SIZE(stop_signals); i++)
		sigaddset(&set, stop_signals[i]);
	sigprocmask(SIG_BLOCK, &set, &old);
	sigpending(&pending);
	for (size_t i = 0; i < CW_ARRAY_SIZE(stop_signals); i++)
		if (sigismember(&pending, stop_signals[i]))
			on_signal(stop_signals[i]);
	err = cw_outfile__commit(of);
	if (!err) {
		sig_tmp = NULL;
		on_stop_signals(SIG_IGN); /* discards what is pending */
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return !err ? 0 : err == -EEXIST || err == -EINVAL ? 2 : 1;
}

static char *default_out(const char *trace)
{
	size_t n = strlen(trace);
	char *out = malloc(n + 4);

	if (!out)
		return NULL;
	memcpy(out, trace, n + 1);
	if (n > 4 && !strcmp(trace + n - 4, ".cwt"))
		out[n - 4] = '\0';
	strcat(out, ".db");
	return out;
}

/*
 * Reader messages: printed once (pass 1) and kept for the database. A
 * hostile file can hold millions of damaged segments, so only the first
 * DIAG_KEEP are printed and kept; the rest are counted, and the count is
 * said at the end, in the diagnostics table and in meta.
 */
#define DIAG_KEEP 1000

struct diag_log {
	char **msg;
	uint8_t *level;
	size_t n, cap;
	uint64_t suppressed;
	int silent;
};

static const char *const level_names[] = { "info", "warning", "error" };

static void diag_cb(void *ctx, enum cw_diag_level level, const char *msg)
{
	struct diag_log *log = ctx;

	if (log->silent)
		return;
	if (log->n + log->suppressed >= DIAG_KEEP) {
		log->suppressed++;
		return;
	}
	fprintf(stderr, PROG ": %s: %s\n", level_names[level], msg);
	if (log->n == log->cap) {
		size_t cap = log->cap ? log->cap * 2 : 16;
		char **m = realloc(log->msg, cap * sizeof(*m));
		uint8_t *l = m ? realloc(log->level, cap) : NULL;

		if (m)
			log->msg = m;
		if (!l)
			return; /* printed; only the database copy is lost */
		log->level = l;
		log->cap = cap;
	}
	log->msg[log->n] = strdup(msg);
	if (log->msg[log->n])
		log->level[log->n++] = (uint8_t)level;
}

/* The symbolizer's notices (a mapping's path refused), printed and kept
 * like the reader's, in a log of their own: pass 2 silences the reader's,
 * and these come from pass 2. */
static void sym_notice_cb(void *ctx, const char *msg)
{
	diag_cb(ctx, CW_DIAG_WARN, msg);
}

/* Say how many messages were not shown; @msg gets the sentence. */
static int diag_log__summary(const struct diag_log *log, char *msg, size_t len)
{
	if (!log->suppressed)
		return 0;
	snprintf(msg, len, "%" PRIu64 " more reader messages not shown (only the first %d are)",
		 log->suppressed, DIAG_KEEP);
	return 1;
}

static void diag_log__free(struct diag_log *log)
{
	for (size_t i = 0; i < log->n; i++)
		free(log->msg[i]);
	free(log->msg);
	free(log->level);
}

static int do_dump(const struct env *env)
{
	struct diag_log log = { 0 };
	struct cw_reader_opts ropts = { .diag = diag_cb, .diag_ctx = &log };
	struct cw_reader *r = cw_reader__open(env->trace, &ropts);
	char msg[128];
	int ret, werr;

	if (!r) {
		fprintf(stderr, PROG ": %s: %s\n", env->trace, strerror(errno));
		return 1;
	}
	ret = cw_dump_reader(stdout, r, &werr);
	if (ret < 0 && ret != -EPROTO && ret != -EINVAL)
		fprintf(stderr, PROG ": %s: %s\n", env->trace, strerror(-ret));
	/* A reader that stopped reading (| head) is no error of the dump. */
	if (werr && werr != -EPIPE) {
		fprintf(stderr, PROG ": writing the dump: %s\n", strerror(-werr));
		ret = werr;
	}
	if (diag_log__summary(&log, msg, sizeof(msg)))
		fprintf(stderr, PROG ": warning: %s\n", msg);
	cw_reader__free(r);
	diag_log__free(&log);
	return ret < 0 ? 1 : 0;
}

/* The capture's own metadata, as it was written. */
struct meta_ctx {
	struct cw_db *db;
	char *start_ns, *end_ns, *usdt_probes_off, *offcpu;
	int have_release, have_hostname;
	int err;
};

/* A key may come again (metadata learned while capturing): the last
 * value wins. */
static void keep_value(char **dst, const char *key, const char *want, const char *val)
{
	if (strcmp(key, want))
		return;
	free(*dst);
	*dst = strdup(val);
}

static int on_meta_kv(struct meta_ctx *m, const struct cw_hdr *h)
{
	char key[8 + CW_META_KEY_MAX], *val;
	int err = cw_meta_kv__split(h, key + 8, &val);

	if (err)
		return err > 0 ? 0 : err; /* malformed: skipped (the join counts it) */
	memcpy(key, "capture.", 8);
	if (!strcmp(key + 8, "kernel_release") || !strcmp(key + 8, "hostname")) {
		m->err = m->err ?: cw_db__meta(m->db, key + 8, val);
		*(key[8] == 'k' ? &m->have_release : &m->have_hostname) = 1;
	}
	keep_value(&m->start_ns, key + 8, "capture_start_ns", val);
	keep_value(&m->end_ns, key + 8, "capture_end_ns", val);
	keep_value(&m->usdt_probes_off, key + 8, "usdt_probes_off", val);
	keep_value(&m->offcpu, key + 8, "offcpu", val);
	m->err = m->err ?: cw_db__meta(m->db, key, val);
	free(val);
	return m->err;
}

/* Pass 2's input to the join: the ordered records, with the mapping
 * records pass 1 kept handed over in their own time order
 * (breaks_scan.h says why). */
struct feed {
	struct cw_join *join;
	const struct cw_scan *scan;
	size_t next_map;
};

static int maps_until(struct feed *f, uint64_t ts)
{
	int err = 0;

	while (!err && f->next_map < f->scan->nmaps) {
		const struct cw_hdr *m =
			(const void *)(f->scan->maps + f->scan->maps_off[f->next_map]);

		if (cw_scan__map_ts(m) > ts)
			break;
		f->next_map++;
		err = cw_join__record(f->join, m);
	}
	return err;
}

/* Does pass 1 hold the mapping records (so the file's copies are not
 * joined)? */
static int maps_kept(const struct cw_scan *scan)
{
	return !scan->maps_overflow;
}

static int to_join(void *ctx, const struct cw_hdr *rec)
{
	struct feed *f = ctx;

	return maps_until(f, rec->ts) ?: cw_join__record(f->join, rec);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void progress(uint64_t done, uint64_t total, int final)
{
	static double last;
	double t = now_s();
	int width = 40, fill;

	if (!final && t - last < 0.1)
		return;
	last = t;
	fill = total ? (int)(width * (double)done / (double)total) : width;
	if (fill > width)
		fill = width;
	fprintf(stderr, "\r  [%.*s%*s] %3d%%", fill, "########################################",
		width - fill, "", total ? (int)(100.0 * done / total) : 100);
	if (final)
		fprintf(stderr, "\r%*s\r", width + 12, "");
}


/* One run: what main opens, in the order it opens it; run__free closes
 * what was opened. */
struct run {
	const struct env *env;
	char *out;
	struct cw_outfile *of;
	int show_progress;
	struct diag_log log, symlog;
	struct cw_reader_opts ropts;
	struct cw_scan scan;
	struct cw_db *db;
	struct cw_sink sink;
	struct meta_ctx meta;
	struct cw_join *join;
	struct feed feed;
	struct cw_order *ord;
	struct cw_reader *r;
	struct cw_join_stats js;
	struct cw_order_stats os;
	struct cw_critical_stats crit;
	struct report rep;
};

/* A failure once the database is being written. @return -1. */
static int failed(int err)
{
	fprintf(stderr, PROG ": %s; no database written\n", strerror(-err));
	return -1;
}

static int out_of_memory(void)
{
	fprintf(stderr, PROG ": out of memory\n");
	return -1;
}

/* The database's temporary beside OUT, and the signals that remove it.
 * @return 0, or the exit code after a message. */
static int open_output(struct run *r)
{
	const char *inputs[] = { r->env->trace };
	const struct cw_outfile_opts oo = { .prog = PROG, .force = r->env->force,
					    .quiet = r->env->quiet, .inputs = inputs, .ninputs = 1 };

	r->out = r->env->out ? strdup(r->env->out) : default_out(r->env->trace);
	if (!r->out)
		return out_of_memory(), 1;
	on_stop_signals(on_signal);
	r->of = cw_outfile__create(r->out, &oo);
	if (!r->of)
		return errno == EEXIST || errno == EINVAL ? 2 : 1;
	sig_tmp = cw_outfile__tmp(r->of);
	r->show_progress = !r->env->quiet && isatty(STDERR_FILENO);
	return 0;
}

/* Pass 1: where is evidence missing? @return 0 or -1 after a message. */
static int scan_trace(struct run *r)
{
	char msg[128];
	int err;

	r->ropts = (struct cw_reader_opts){ .diag = diag_cb, .diag_ctx = &r->log };
	err = cw_scan__run(r->env->trace, &r->ropts, &r->scan);
	if (diag_log__summary(&r->log, msg, sizeof(msg)))
		fprintf(stderr, PROG ": warning: %s\n", msg);
	if (!err)
		return 0;
	if (err != -EPROTO && err != -EINVAL)
		fprintf(stderr, PROG ": %s: %s\n", r->env->trace, strerror(-err));
	fprintf(stderr, PROG ": no database written\n");
	return -1;
}

/* The database, the join that writes into it and the window that
 * orders its records. @return 0 or -1 after a message. */
static int open_join(struct run *r)
{
	const struct cw_join_opts jo = { .breaks = r->scan.breaks, .ksyms = r->scan.ksyms,
					 .max_live = r->env->max_live,
					 .no_symbols = r->env->no_symbols,
					 .classes = r->env->classes, .notice = sym_notice_cb,
					 .notice_ctx = &r->symlog };
	char errbuf[512];

	r->db = cw_db__create(cw_outfile__tmp(r->of), errbuf, sizeof(errbuf));
	if (!r->db) {
		fprintf(stderr, PROG ": %s\n", errbuf);
		return -1;
	}
	r->meta.db = r->db;
	cw_db__sink(r->db, &r->sink);
	r->join = cw_join__new(&r->sink, &jo);
	r->feed = (struct feed){ .join = r->join, .scan = &r->scan };
	r->ord = r->join ? cw_order__new(to_join, &r->feed, NULL) : NULL;
	return r->ord ? 0 : out_of_memory();
}

/*
 * Metadata is not ordered by time: the snapshot of tasks alive at start
 * is read after the programs were attached, so events can be older than
 * it, and it must be known before the first of them is joined. So must a
 * USDT probe: its record is stamped when its attach completed, and its
 * first hits can come just before that. @return 0 or a negative errno.
 */
static int on_record(struct run *r, const struct cw_hdr *h)
{
	if (h->type == CW_REC_META_KV)
		return on_meta_kv(&r->meta, h) ?: cw_join__record(r->join, h);
	if (h->type == CW_REC_META_MMAP && maps_kept(&r->scan))
		return 0; /* pass 1 holds it, in time order */
	if (h->type == CW_REC_META_TASK || h->type == CW_REC_META_USDT ||
	    (h->type == CW_REC_META_MMAP && (h->flags & CW_MMAP_SNAPSHOT)))
		return cw_join__record(r->join, h);
	return cw_order__push(r->ord, h);
}

/* Pass 2: order, join, write. The reader already spoke in pass 1.
 * @return 0 or -1 after a message. */
static int join_trace(struct run *r)
{
	struct cw_segment seg;
	int err;

	r->log.silent = 1;
	r->r = cw_reader__open(r->env->trace, &r->ropts);
	if (!r->r) {
		fprintf(stderr, PROG ": %s: %s\n", r->env->trace, strerror(errno));
		return -1;
	}
	while ((err = cw_reader__next(r->r, &seg)) > 0) {
		const struct cw_hdr *h;
		size_t pos = 0;

		while ((h = cw_segment__next_record(&seg, &pos)))
			if ((err = on_record(r, h)))
				return failed(err);
		if (r->show_progress)
			progress(seg.offset, r->scan.rs.file_size, 0);
	}
	if (err < 0)
		return failed(err);
	err = cw_order__drain(r->ord);
	err = err ?: maps_until(&r->feed, UINT64_MAX);
	err = err ?: cw_join__finish(r->join);
	return err ? failed(err) : 0;
}

/* The messages kept, into the diagnostics table. */
static int put_diags(struct cw_db *db, const struct diag_log *log)
{
	int err = 0;

	for (size_t i = 0; i < log->n && !err; i++)
		err = cw_db__diag(db, level_names[log->level[i]], log->msg[i]);
	return err;
}

/* The critical path of every request (docs/model.md §9), from the
 * indexed database. @return 0 or a negative errno. */
static int critical_paths(struct run *r)
{
	const struct cw_critical_opts o = {
		.breaks = r->scan.breaks,
		.waits_recorded = cw_critical__waits_recorded(
			r->meta.offcpu, r->scan.minor,
			!r->env->classes || (r->env->classes >> CW_CLASS_SCHED & 1)),
		.waits_in_samples = r->scan.minor < 9,
	};

	return cw_critical__run(r->db, &o, &r->crit);
}

/* The breaks, the messages and the meta table, then the indexes and what
 * is derived from them. @return 0 or -1 after a message. */
static int write_db(struct run *r)
{
	char errbuf[512], msg[128];
	int err = 0;

	cw_join__stats(r->join, &r->js);
	cw_order__stats(r->ord, &r->os);
	for (size_t i = 0; i < cw_breaks__count(r->scan.breaks) && !err; i++)
		err = cw_db__break(r->db, cw_breaks__get(r->scan.breaks, i));
	err = err ?: put_diags(r->db, &r->log);
	if (!err && diag_log__summary(&r->log, msg, sizeof(msg)))
		err = cw_db__diag(r->db, level_names[CW_DIAG_WARN], msg);
	err = err ?: put_diags(r->db, &r->symlog);
	r->rep = (struct report){
		.env = r->env,
		.js = &r->js,
		.scan = &r->scan,
		.os = &r->os,
		.diagnostics_suppressed = r->log.suppressed,
		.start_ns = r->meta.start_ns,
		.end_ns = r->meta.end_ns,
		.usdt_probes_off = r->meta.usdt_probes_off,
		.have_release = r->meta.have_release,
		.have_hostname = r->meta.have_hostname,
		.crit = &r->crit,
		.out = r->out,
	};
	err = err ?: report__meta(r->db, &r->rep);
	if (err)
		return failed(err);
	if (cw_db__index(r->db, errbuf, sizeof(errbuf))) {
		fprintf(stderr, PROG ": %s\n", errbuf);
		return -1;
	}
	err = critical_paths(r);
	err = err ?: report__meta_critical(r->db, &r->crit);
	if (err)
		return failed(err);
	err = cw_db__finish(r->db, errbuf, sizeof(errbuf));
	r->db = NULL;
	if (err) {
		fprintf(stderr, PROG ": %s\n", errbuf);
		return -1;
	}
	return 0;
}

static void run__free(struct run *r)
{
	cw_reader__free(r->r);
	cw_order__free(r->ord);
	cw_join__free(r->join);
	cw_db__abort(r->db);
	/* The handler forgets the temporary before it is freed: a signal
	 * between the two leaves it for the next run to remove. */
	sig_tmp = NULL;
	cw_outfile__free(r->of);
	free(r->out);
	free(r->meta.start_ns);
	free(r->meta.end_ns);
	free(r->meta.usdt_probes_off);
	free(r->meta.offcpu);
	cw_scan__free(&r->scan);
	diag_log__free(&r->log);
	diag_log__free(&r->symlog);
}

int main(int argc, char **argv)
{
	struct env env;
	struct run r = { .env = &env };
	int ret;

	/* A closed pipe on stdout (| head) makes writes fail with EPIPE, which
	 * the dump and the summary ignore; it must not kill the analyzer and
	 * change its exit code. */
	signal(SIGPIPE, SIG_IGN);
	if (options__parse(&env, argc, argv))
		return 2;
	if (env.dump)
		return do_dump(&env);
	ret = open_output(&r);
	if (ret)
		goto cleanup;
	ret = 1;
	if (scan_trace(&r) || open_join(&r) || join_trace(&r) || write_db(&r))
		goto cleanup;
	ret = commit_db(r.of);
	if (ret) {
		fprintf(stderr, PROG ": no database written\n");
		goto cleanup;
	}
	if (r.show_progress)
		progress(1, 1, 1);
	if (!env.quiet)
		report__summary(&r.rep);

cleanup:
	run__free(&r);
	return ret;
}
