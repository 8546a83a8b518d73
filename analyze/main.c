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
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "breaks_scan.h"
#include "db.h"
#include "dump.h"
#include "join.h"
#include "order.h"
#include "trace/reader.h"
#include "../lib/outfile.h"
#include "trace/format.h"
#include "../schema/names.h"

#define PROG "causeway-analyze"
/* The same as causeway-capture's: one version for the pair. */

static struct env {
	const char *trace;
	const char *out;
	int force;
	int quiet;
	int dump;
	int no_symbols;
	size_t max_live;
	uint32_t classes; /* -e: bit per CW_CLASS_*; 0: all */
} env;

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
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
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
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		sigaddset(&set, stop_signals[i]);
	sigprocmask(SIG_BLOCK, &set, &old);
	sigpending(&pending);
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
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

/* -e LIST into env.classes: the edge classes of schema/classes.def, by
 * the names the capture's -e takes. @return 0 or -EINVAL after a message. */
static int parse_events(const char *list)
{
	char *copy = strdup(list), *tok, *save = NULL, known[128];
	int err = 0;

	if (!copy) {
		fprintf(stderr, PROG ": out of memory\n");
		return -ENOMEM;
	}
	cw_class_edge_list(known, sizeof(known));
	env.classes = 0;
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		int cls = cw_class_find_edge(tok, 0);
		/* a class -e cannot leave out, by its name */
		int kind = cw_class_kind((unsigned)cw_name_find(cw_class_names, CW_CLASS_MAX, tok));

		if (cls >= 0) {
			env.classes |= 1u << cls;
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
	if (!err && !env.classes) {
		fprintf(stderr, PROG ": -e: empty class list (known: %s)\n", known);
		err = -EINVAL;
	}
	free(copy);
	return err;
}

/* The edge classes joined, as -e names them, in @buf. */
static char *classes_string(char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < CW_ARRAY_SIZE(cw_class_table) && off < len; i++)
		if (cw_class_table[i].kind == CW_CK_EDGE &&
		    (!env.classes || env.classes >> cw_class_table[i].id & 1))
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "," : "",
						cw_class_table[i].ename);
	return buf;
}

static int parse_args(int argc, char **argv)
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

	while ((c = getopt_long(argc, argv, "o:e:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': env.out = optarg; break;
		case 'f': env.force = 1; break;
		case 'q': env.quiet = 1; break;
		case 'S': env.no_symbols = 1; break;
		case 'D': env.dump = 1; break;
		case 'e':
			if (parse_events(optarg))
				return -EINVAL;
			break;
		case 'M': {
			char *end;
			unsigned long long v = strtoull(optarg, &end, 10);

			if (*end || !v || v > (1ull << 32)) {
				fprintf(stderr, PROG ": --max-live wants a number from 1 to 2^32\n");
				return -EINVAL;
			}
			env.max_live = v;
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
	env.trace = argv[optind];
	/* --dump prints the records as read: an option that shapes the
	 * database would do nothing, and says so. */
	if (env.dump && (env.out || env.force || env.no_symbols || env.max_live || env.classes)) {
		fprintf(stderr, PROG ": --dump prints the records and writes no database: %s does nothing with it\n",
			env.out ? "-o" : env.force ? "--force" : env.no_symbols ? "--no-symbols"
			: env.max_live ? "--max-live" : "-e");
		return -EINVAL;
	}
	return 0;
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

static int do_dump(void)
{
	struct diag_log log = { 0 };
	struct cw_reader_opts ropts = { .diag = diag_cb, .diag_ctx = &log };
	struct cw_reader *r = cw_reader__open(env.trace, &ropts);
	char msg[128];
	int ret, werr;

	if (!r) {
		fprintf(stderr, PROG ": %s: %s\n", env.trace, strerror(errno));
		return 1;
	}
	ret = cw_dump_reader(stdout, r, &werr);
	if (ret < 0 && ret != -EPROTO && ret != -EINVAL)
		fprintf(stderr, PROG ": %s: %s\n", env.trace, strerror(-ret));
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
	char *start_ns, *end_ns;
	int have_release, have_hostname;
	int err;
};

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
	if (!strcmp(key + 8, "capture_start_ns")) {
		free(m->start_ns);
		m->start_ns = strdup(val);
	}
	if (!strcmp(key + 8, "capture_end_ns")) {
		free(m->end_ns);
		m->end_ns = strdup(val);
	}
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

static void print_summary(const struct cw_join_stats *js, const struct cw_scan *scan,
			  uint64_t late, const char *out)
{
	int first;

	printf("%s: %" PRIu64 " segments (%" PRIu64 " damaged), %" PRIu64 " events, %s\n",
	       env.trace, scan->rs.segments_ok + scan->rs.segments_damaged,
	       scan->rs.segments_damaged, scan->events, scan->rs.clean_close ? "closed cleanly" :
	       "NOT closed cleanly");
	if (env.classes) {
		char classes[128];

		printf("  classes joined (-e): %s; %" PRIu64 " records of the others skipped\n",
		       classes_string(classes, sizeof(classes)), js->records_skipped);
	}
	printf("  nodes:");
	first = 1;
	for (int t = 0; t < CW_NODE_NTYPES; t++) {
		uint64_t traced = js->nodes[t] - js->nodes_untraced[t];

		if (!traced)
			continue;
		printf("%s %s %" PRIu64, first ? "" : ",", cw_node_type_names[t], traced);
		first = 0;
	}
	printf("%s\n", first ? " none" : "");
	/* Tasks outside the traced set only appear at the other end of an
	 * edge with a traced one: context, kept apart so that they are not
	 * read as missed spawns. */
	first = 1;
	for (int t = 0; t < CW_NODE_NTYPES; t++) {
		if (!js->nodes_untraced[t])
			continue;
		printf("%s %s %" PRIu64, first ? "  outside the traced set:" : ",",
		       cw_node_type_names[t], js->nodes_untraced[t]);
		first = 0;
	}
	if (!first)
		printf("\n");
	printf("  edges:\n");
	first = 1;
	for (int t = 0; t < CW_EDGE_NTYPES; t++) {
		uint64_t sum = 0;

		for (int c = 0; c < CW_CONF_N; c++)
			sum += js->edges[t][c];
		if (!sum)
			continue;
		first = 0;
		printf("    %-8s %10" PRIu64 " observed %10" PRIu64 " reconstructed %10" PRIu64 " unknown\n",
		       cw_edge_type_names[t], js->edges[t][CW_CONF_OBSERVED],
		       js->edges[t][CW_CONF_RECONSTRUCTED], js->edges[t][CW_CONF_UNKNOWN]);
	}
	if (first)
		printf("    none\n");
	printf("  orphans %" PRIu64 ", coverage breaks %zu, lost events %" PRIu64
	       ", damaged segments %" PRIu64 ", evicted %" PRIu64 ", late %" PRIu64
	       ", unknown records %" PRIu64 "\n",
	       js->orphans, cw_breaks__count(scan->breaks), js->events_lost,
	       scan->rs.segments_damaged, js->evicted, late, js->unknown_records);
	if (js->samples[CW_SAMPLE_KIND_CPU] || js->samples[CW_SAMPLE_KIND_OFFCPU] || js->samples_bad) {
		printf("  samples: cpu %" PRIu64 ", offcpu %" PRIu64 " (%" PRIu64
		       " without a seen switch-in, %" PRIu64 " pushed out), malformed %" PRIu64 "\n",
		       js->samples[CW_SAMPLE_KIND_CPU], js->samples[CW_SAMPLE_KIND_OFFCPU],
		       js->offcpu_unresolved, js->offcpu_pushed, js->samples_bad);
		printf("  stacks %" PRIu64 ", frames %" PRIu64 " (%" PRIu64 " with a function)",
		       js->stacks, js->frames, js->frames_symbolized);
		if (env.no_symbols)
			printf(", symbols: none (--no-symbols)\n");
		else
			printf(", objects opened %" PRIu64 ", refused %" PRIu64 "\n", js->sym_opened,
			       js->sym_refused);
	}
	printf("wrote %s\n", out);
}

static int write_meta(struct cw_db *db, const struct cw_join_stats *js, const struct cw_scan *scan,
		      const struct meta_ctx *m, const struct cw_order_stats *os)
{
	char ver[16], classes[128];
	int err = 0;

	snprintf(ver, sizeof(ver), "%d.%u", CW_FORMAT_MAJOR, scan->minor);
	err = err ?: cw_db__meta_u64(db, "schema_version", CW_SCHEMA_VERSION);
	err = err ?: cw_db__meta(db, "format_version", ver);
	/* Keys the contract promises are there even when the trace does not
	 * say (a damaged metadata segment): NULL, unknown. */
	if (!m->have_release)
		err = err ?: cw_db__meta(db, "kernel_release", NULL);
	if (!m->have_hostname)
		err = err ?: cw_db__meta(db, "hostname", NULL);
	if (m->start_ns)
		err = err ?: cw_db__meta(db, "capture_start_ns", m->start_ns);
	else
		err = err ?: cw_db__meta_u64(db, "capture_start_ns", js->first_ts);
	if (m->end_ns)
		err = err ?: cw_db__meta(db, "capture_end_ns", m->end_ns);
	else
		err = err ?: cw_db__meta_u64(db, "capture_end_ns", js->last_ts);
	err = err ?: cw_db__meta_u64(db, "clean_close", scan->rs.clean_close);
	err = err ?: cw_db__meta_u64(db, "events_total", scan->events);
	err = err ?: cw_db__meta_u64(db, "events_lost", js->events_lost);
	err = err ?: cw_db__meta_u64(db, "segments_total",
				     scan->rs.segments_ok + scan->rs.segments_damaged);
	err = err ?: cw_db__meta_u64(db, "segments_damaged", scan->rs.segments_damaged);
	err = err ?: cw_db__meta_u64(db, "evicted_total", js->evicted);
	err = err ?: cw_db__meta_u64(db, "orphans_total", js->orphans);
	err = err ?: cw_db__meta_u64(db, "bytes_skipped", scan->rs.bytes_skipped);
	err = err ?: cw_db__meta_u64(db, "truncated_tail", scan->rs.truncated_tail);
	err = err ?: cw_db__meta_u64(db, "records_unknown", js->unknown_records);
	err = err ?: cw_db__meta_u64(db, "records_malformed", js->bad_records);
	/* -e: the edge classes joined, and the records of the others */
	err = err ?: cw_db__meta(db, "classes", classes_string(classes, sizeof(classes)));
	err = err ?: cw_db__meta_u64(db, "records_skipped", js->records_skipped);
	err = err ?: cw_db__meta_u64(db, "events_late", os->late);
	err = err ?: cw_db__meta_u64(db, "reorder_window_ns", CW_ORDER_WINDOW_NS);
	err = err ?: cw_db__meta_u64(db, "reorder_window_events", CW_ORDER_MAX_EVENTS);
	err = err ?: cw_db__meta_u64(db, "reorder_window_bytes", CW_ORDER_MAX_BYTES);
	/* Released before their 10 ms because a bound was reached: where
	 * late events come from, when there are any. */
	err = err ?: cw_db__meta_u64(db, "events_released_early", os->forced);
	err = err ?: cw_db__meta_u64(db, "tid_reuse_unseen_exit", js->tid_reuse_unseen_exit);
	err = err ?: cw_db__meta_u64(db, "identity_mismatch", js->identity_mismatch);
	err = err ?: cw_db__meta_u64(db, "hints_dropped", js->hints_dropped);
	err = err ?: cw_db__meta_u64(db, "breaks_coarsened", cw_breaks__coarsened(scan->breaks));
	/* the context plane */
	err = err ?: cw_db__meta(db, "symbols", env.no_symbols ? "none" : "libdw");
	err = err ?: cw_db__meta_u64(db, "samples_malformed", js->samples_bad);
	/* read after newer records: their node is the thread (cls_sample.c) */
	err = err ?: cw_db__meta_u64(db, "samples_late", js->samples_late);
	err = err ?: cw_db__meta_u64(db, "offcpu_unresolved", js->offcpu_unresolved);
	err = err ?: cw_db__meta_u64(db, "offcpu_pushed_out", js->offcpu_pushed);
	err = err ?: cw_db__meta_u64(db, "frames_symbolized", js->frames_symbolized);
	err = err ?: cw_db__meta_u64(db, "frame_table_resets", js->frame_resets);
	err = err ?: cw_db__meta_u64(db, "stack_table_resets", js->stack_resets);
	err = err ?: cw_db__meta_u64(db, "address_spaces_dropped", js->maps_dropped);
	err = err ?: cw_db__meta_u64(db, "symbol_objects_opened", js->sym_opened);
	err = err ?: cw_db__meta_u64(db, "symbol_objects_refused", js->sym_refused);
	/* 1: the mapping records were too many to put in time order in
	 * pass 1 and were joined in file order */
	err = err ?: cw_db__meta_u64(db, "mappings_in_file_order", scan->maps_overflow);
	/* the adapter plane (cls_adapter.c) */
	err = err ?: cw_db__meta_u64(db, "usdt_probes", js->usdt_probes);
	err = err ?: cw_db__meta_u64(db, "usdt_probes_dropped", js->usdt_probes_dropped);
	err = err ?: cw_db__meta_u64(db, "usdt_hits", js->usdt_hits);
	err = err ?: cw_db__meta_u64(db, "usdt_hits_unknown_probe", js->usdt_unknown_probe);
	err = err ?: cw_db__meta_u64(db, "usdt_hits_unmapped", js->usdt_unmapped);
	err = err ?: cw_db__meta_u64(db, "usdt_malformed", js->usdt_malformed);
	err = err ?: cw_db__meta_u64(db, "usdt_unpaired_ends", js->usdt_unpaired);
	err = err ?: cw_db__meta_u64(db, "adapter_state_dropped", js->adapter_dropped);
	err = err ?: cw_db__meta_u64(db, "resource_waits", js->waits);
	err = err ?: cw_db__meta_u64(db, "resource_waits_quiet", js->waits_quiet);
	return err;
}

int main(int argc, char **argv)
{
	struct diag_log log = { 0 }, symlog = { 0 };
	struct cw_scan scan = { 0 };
	struct meta_ctx meta = { 0 };
	struct cw_join_stats js;
	struct cw_order_stats ost;
	struct cw_reader *r = NULL;
	struct cw_order *ord = NULL;
	struct cw_join *join = NULL;
	struct feed feed = { 0 };
	struct cw_db *db = NULL;
	struct cw_sink sink;
	struct cw_segment seg;
	struct cw_reader_opts ropts = { .diag = diag_cb, .diag_ctx = &log };
	struct cw_outfile *of = NULL;
	char *out = NULL, errbuf[512], diagmsg[128];
	int err, ret = 1, show_progress;
	uint64_t done = 0;

	/* A closed pipe on stdout (| head) makes writes fail with EPIPE, which
	 * the dump and the summary ignore; it must not kill the analyzer and
	 * change its exit code. */
	signal(SIGPIPE, SIG_IGN);
	if (parse_args(argc, argv))
		return 2;
	if (env.dump)
		return do_dump();
	out = env.out ? strdup(env.out) : default_out(env.trace);
	if (!out)
		goto oom;
	on_stop_signals(on_signal);
	{
		const char *inputs[] = { env.trace };
		const struct cw_outfile_opts oo = { .prog = PROG, .force = env.force,
						    .quiet = env.quiet, .inputs = inputs, .ninputs = 1 };

		of = cw_outfile__create(out, &oo);
	}
	if (!of) {
		free(out);
		return errno == EEXIST || errno == EINVAL ? 2 : 1;
	}
	sig_tmp = cw_outfile__tmp(of);
	show_progress = !env.quiet && isatty(STDERR_FILENO);

	/* Pass 1: where is evidence missing? */
	err = cw_scan__run(env.trace, &ropts, &scan);
	if (diag_log__summary(&log, diagmsg, sizeof(diagmsg)))
		fprintf(stderr, PROG ": warning: %s\n", diagmsg);
	if (err) {
		if (err != -EPROTO && err != -EINVAL)
			fprintf(stderr, PROG ": %s: %s\n", env.trace, strerror(-err));
		fprintf(stderr, PROG ": no database written\n");
		goto cleanup;
	}

	db = cw_db__create(cw_outfile__tmp(of), errbuf, sizeof(errbuf));
	if (!db) {
		fprintf(stderr, PROG ": %s\n", errbuf);
		goto cleanup;
	}
	meta.db = db;
	cw_db__sink(db, &sink);
	{
		struct cw_join_opts jo = { .breaks = scan.breaks, .ksyms = scan.ksyms,
					   .max_live = env.max_live, .no_symbols = env.no_symbols,
					   .classes = env.classes, .notice = sym_notice_cb,
					   .notice_ctx = &symlog };

		join = cw_join__new(&sink, &jo);
	}
	feed.join = join;
	feed.scan = &scan;
	ord = join ? cw_order__new(to_join, &feed, NULL) : NULL;
	if (!ord)
		goto oom;

	/* Pass 2: order, join, write. The reader already spoke in pass 1. */
	log.silent = 1;
	r = cw_reader__open(env.trace, &ropts);
	if (!r) {
		fprintf(stderr, PROG ": %s: %s\n", env.trace, strerror(errno));
		goto cleanup;
	}
	while ((err = cw_reader__next(r, &seg)) > 0) {
		const struct cw_hdr *h;
		size_t pos = 0;

		while ((h = cw_segment__next_record(&seg, &pos))) {
			/*
			 * Metadata is not ordered by time: the snapshot of tasks
			 * alive at start is read after the programs were
			 * attached, so events can be older than it, and it must
			 * be known before the first of them is joined. So must
			 * a USDT probe: its record is stamped when its attach
			 * completed, and its first hits can come just before
			 * that.
			 */
			if (h->type == CW_REC_META_KV)
				err = on_meta_kv(&meta, h) ?: cw_join__record(join, h);
			else if (h->type == CW_REC_META_MMAP && maps_kept(&scan))
				continue; /* pass 1 holds it, in time order */
			else if (h->type == CW_REC_META_TASK || h->type == CW_REC_META_USDT ||
				 (h->type == CW_REC_META_MMAP && (h->flags & CW_MMAP_SNAPSHOT)))
				err = cw_join__record(join, h);
			else
				err = cw_order__push(ord, h);
			if (err)
				goto failed;
		}
		done = seg.offset;
		if (show_progress)
			progress(done, scan.rs.file_size, 0);
	}
	if (err < 0)
		goto failed;
	err = cw_order__drain(ord);
	err = err ?: maps_until(&feed, UINT64_MAX);
	err = err ?: cw_join__finish(join);
	if (err)
		goto failed;
	cw_join__stats(join, &js);
	for (size_t i = 0; i < cw_breaks__count(scan.breaks) && !err; i++)
		err = cw_db__break(db, cw_breaks__get(scan.breaks, i));
	for (size_t i = 0; i < log.n && !err; i++)
		err = cw_db__diag(db, level_names[log.level[i]], log.msg[i]);
	if (!err && diag_log__summary(&log, diagmsg, sizeof(diagmsg)))
		err = cw_db__diag(db, level_names[CW_DIAG_WARN], diagmsg);
	for (size_t i = 0; i < symlog.n && !err; i++)
		err = cw_db__diag(db, level_names[symlog.level[i]], symlog.msg[i]);
	err = err ?: cw_db__meta_u64(db, "diagnostics_suppressed", log.suppressed);
	cw_order__stats(ord, &ost);
	err = err ?: write_meta(db, &js, &scan, &meta, &ost);
	if (err)
		goto failed;
	err = cw_db__finish(db, errbuf, sizeof(errbuf));
	db = NULL;
	if (err) {
		fprintf(stderr, PROG ": %s\n", errbuf);
		goto cleanup;
	}
	if ((ret = commit_db(of))) {
		fprintf(stderr, PROG ": no database written\n");
		goto cleanup;
	}
	if (show_progress)
		progress(1, 1, 1);
	if (!env.quiet)
		print_summary(&js, &scan, cw_order__late(ord), out);
	ret = 0;
	goto cleanup;

failed:
	fprintf(stderr, PROG ": %s; no database written\n", strerror(-err));
	goto cleanup;
oom:
	fprintf(stderr, PROG ": out of memory\n");
cleanup:
	cw_reader__free(r);
	cw_order__free(ord);
	cw_join__free(join);
	cw_db__abort(db);
	/* The handler forgets the temporary before it is freed: a signal
	 * between the two leaves it for the next run to remove. */
	sig_tmp = NULL;
	cw_outfile__free(of);
	free(out);
	free(meta.start_ns);
	free(meta.end_ns);
	cw_scan__free(&scan);
	diag_log__free(&log);
	diag_log__free(&symlog);
	return ret;
}
