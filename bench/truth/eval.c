// SPDX-License-Identifier: MIT
/*
 * causeway-eval [OPTIONS] TRUTH DB: scores a causeway database against the
 * truth file a benchmark workload wrote (bench/truth/FORMAT.md): edge
 * precision and recall, false joins across reuse, orphans and labels per
 * mechanism; attribution error per request; the same for the baselines.
 * Exit 0 scored, 1 a file could not be read, 2 bad arguments, 3 a
 * --require threshold not met.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "eval.h"
#include "../../lib/outfile.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: causeway-eval [OPTIONS] TRUTH DB\n"
		"Scores the causeway database DB against TRUTH, the truth file of a benchmark\n"
		"workload (bench/truth/FORMAT.md).\n"
		"  --baseline-db SCHED_DB   also score this database (the same trace analyzed\n"
		"                           with -e sched) as the 'sched' baseline\n"
		"  --json FILE              write every figure as JSON ('-': stdout)\n"
		"  --csv FILE               write every figure as CSV, one row per (system,\n"
		"                           mechanism, metric) ('-': stdout)\n"
		"  --label TEXT             a label (e.g. the loss rate) copied into JSON/CSV rows\n"
		"  --require-precision P    exit 3 when causeway's overall precision < P\n"
		"  --require-recall R       exit 3 when causeway's overall recall < R\n"
		"  --wrong FILE             list causeway's wrong claims there, one a line: the\n"
		"                           hop, its mechanism, the edge or resource_waits row\n"
		"  --force                  replace existing output files (never an input,\n"
		"                           never through a symbolic link)\n"
		"  -q                       no table on stdout\n"
		"  -h, --help               this help\n"
		"Exit: 0 scored, 1 cannot read the truth or a database, 2 bad arguments,\n"
		"3 a --require threshold not met.\n");
}

/* @arg (from the command line) is escaped: it is printed back as given. */
static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "causeway-eval: ");
	fprintf(stderr, fmt, esc_msg(arg));
	fprintf(stderr, "\nTry 'causeway-eval --help'.\n");
	return 2;
}

static int parse_fraction(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return !*s || *end || errno || !isfinite(*v) || *v < 0 || *v > 1 ? -1 : 0;
}

/* --- figures ------------------------------------------------------------ */

static double ratio(long a, long b, double none)
{
	return b ? (double)a / (double)b : none;
}

struct rates {
	double precision, recall, fj, orphan, obs, rec, unk;
};

static struct rates rates_of(const struct mstat *m)
{
	struct rates r;
	long unknown = m->hops - m->observed - m->reconstructed;

	r.precision = ratio(m->correct, m->claims, 1);
	r.recall = ratio(m->recalled, m->hops, 1);
	r.fj = ratio(m->false_joins, m->claims, 0);
	r.orphan = ratio(m->orphans, m->hops, 0);
	r.obs = ratio(m->observed, m->hops, 0);
	r.rec = ratio(m->reconstructed, m->hops, 0);
	r.unk = ratio(unknown, m->hops, 0);
	return r;
}

/* A baseline beats causeway on attribution when its CPU MAE and its wall
 * MAE are both lower; *cpu and *wall say which is. */
static int beats(const struct attr_score *b, const struct attr_score *c, int *cpu, int *wall)
{
	*cpu = !isnan(b->cpu_mae) && (isnan(c->cpu_mae) || b->cpu_mae < c->cpu_mae);
	*wall = !isnan(b->wall_mae) && (isnan(c->wall_mae) || b->wall_mae < c->wall_mae);
	return *cpu && *wall;
}

/* --- the table ----------------------------------------------------------- */

static void print_system(const struct truth *t, const struct system_score *s, const char *title)
{
	printf("\n%s: ", title);
	cw_esc_fput(stdout, s->db_path);
	printf(" (scored in %.2f s)\n", s->seconds);
	printf("%-20s %7s %6s %7s %9s %7s %10s %7s %8s %8s %7s\n", "mechanism", "hops", "cancel",
	       "claims", "precision", "recall", "false-join", "orphan", "observed", "reconstr",
	       "unknown");
	for (size_t k = 0; k <= t->nmechs; k++) {
		const struct mstat *m = &s->m[k];
		struct rates r = rates_of(m);

		/* MECH names are [a-z0-9_] (eval_truth.c), so the column's
		 * width holds. */
		printf("%-20s %7ld %6ld %7ld %9.4f %7.4f %10.4f %7.4f %8.4f %8.4f %7.4f\n",
		       k < t->nmechs ? t->mechs[k] : "all", m->hops, m->cancelled, m->claims,
		       r.precision, r.recall, r.fj, r.orphan, r.obs, r.rec, r.unk);
	}
}

static void pct(double v, int width)
{
	if (isnan(v))
		printf(" %*s", width, "-");
	else
		printf(" %*.2f", width, v);
}

static void print_attr_row(const char *name, const struct attr_score *a)
{
	char matched[48];

	if (a->has_matched)
		snprintf(matched, sizeof(matched), "%ld/%ld", a->matched, a->requests);
	else
		snprintf(matched, sizeof(matched), "-");
	printf("%-18s %13s", name, matched);
	pct(a->cpu_mae, 9);
	pct(a->wall_mae, 10);
	pct(a->cpu_agg, 9);
	pct(a->wall_agg, 10);
	if (a->has_shares) {
		pct(isnan(a->share_observed) ? NAN : a->share_observed * 100, 8);
		pct(isnan(a->share_reconstructed) ? NAN : a->share_reconstructed * 100, 8);
		pct(isnan(a->share_unknown) ? NAN : a->share_unknown * 100, 8);
	} else {
		printf(" %8s %8s %8s", "-", "-", "-");
	}
	printf("\n");
}

static void print_beats(const char *name, const struct attr_score *b, const struct attr_score *c)
{
	int cpu, wall, yes = beats(b, c, &cpu, &wall);

	printf("%s beats causeway on attribution: %s (CPU MAE ", name, yes ? "yes" : "no");
	isnan(b->cpu_mae) ? printf("-") : printf("%.2f%%", b->cpu_mae);
	printf(" vs ");
	isnan(c->cpu_mae) ? printf("-") : printf("%.2f%%", c->cpu_mae);
	printf(", wall MAE ");
	isnan(b->wall_mae) ? printf("-") : printf("%.2f%%", b->wall_mae);
	printf(" vs ");
	isnan(c->wall_mae) ? printf("-") : printf("%.2f%%", c->wall_mae);
	printf("%s)\n", yes ? "" : cpu ? "; better on CPU only" : wall ? "; better on wall only" : "");
}

static void print_attr(const struct attr_score *cw, const struct attr_score *th,
		       const struct attr_score *sc)
{
	printf("\nattribution: %ld requests (%ld with CPU > 0, %ld with wall > 0); errors in %%, "
	       "CPU shares in %% of the truth's CPU\n",
	       cw->requests, cw->cpu_scored, cw->wall_scored);
	printf("%-18s %13s %9s %10s %9s %10s %8s %8s %8s\n", "system", "matched", "cpu MAE",
	       "wall MAE", "cpu agg", "wall agg", "observed", "reconstr", "unknown");
	print_attr_row("causeway", cw);
	print_attr_row("thread baseline", th);
	print_attr_row(sc->measured ? "sched baseline" : "sched baseline*", sc);
	if (!sc->measured)
		printf("(*) no --baseline-db: the sched baseline has no request nodes, so it "
		       "attributes nothing by construction\n");
	print_beats("thread baseline", th, cw);
	print_beats("sched baseline", sc, cw);
}

static double share(double part, double whole)
{
	return whole > 0 ? part / whole : NAN;
}

static void print_crit(const struct truth *t, const struct crit_score *c)
{
	if (!c->measured) {
		printf("\ncritical path: not in the database (an analyzer before it)\n");
		return;
	}
	printf("\ncritical path: %ld of %ld requests matched, %ld walked, %ld back to their begin;"
	       " %% of their wall time\n", c->matched, c->requests, c->walked, c->whole);
	const struct {
		const char *label;
		double v;
	} parts[] = {
		{ "  running", share(c->kind_ns[0], c->wall_ns) },
		{ ", runnable", share(c->kind_ns[1], c->wall_ns) },
		{ ", handoff", share(c->kind_ns[2], c->wall_ns) },
		{ ", blocked (unknown)", share(c->kind_ns[3], c->wall_ns) },
		{ "; observed", share(c->conf_ns[0], c->wall_ns) },
		{ ", reconstructed", share(c->conf_ns[1], c->wall_ns) },
		{ ", unknown", share(c->conf_ns[2], c->wall_ns) },
		{ NULL, 0 },
		{ ": naming a hop of their request", ratio(c->waits_own, c->waits, NAN) },
		{ "%, only another request's", ratio(c->waits_other, c->waits, NAN) },
		{ "%, none", ratio(c->waits_none, c->waits, NAN) },
	};

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		if (!parts[i].label) {
			printf("\n  waits on the paths %ld", c->waits);
			continue;
		}
		printf("%s", parts[i].label);
		pct(100 * parts[i].v, 0);
	}
	printf("%%\n");
	printf("  hops on their request's path:");
	for (size_t k = 0; k <= t->nmechs; k++)
		printf("%s %s %ld", k ? "," : "", k < t->nmechs ? t->mechs[k] : "all",
		       c->hops_on_path[k]);
	printf("\n");
}

/* --- JSON and CSV --------------------------------------------------------- */

/*
 * A JSON string is exact for text that is valid UTF-8: controls (C0, DEL
 * and C1) as \u00XX, the rest as it is. A byte that is not UTF-8 has no
 * JSON spelling (a JSON text is Unicode): it is written as the table
 * writes it, the four characters \xNN, so the report stays valid JSON.
 */
static void json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0;

	fputc('"', f);
	while (i < n) {
		size_t k = cw_esc_plain_len(p + i, n - i);

		if (p[i] == '"' || p[i] == '\\')
			fprintf(f, "\\%c", p[i]);
		else if (p[i] == '\n')
			fputs("\\n", f);
		else if (p[i] == '\t')
			fputs("\\t", f);
		else if (k)
			fwrite(p + i, 1, k, f);
		else if (p[i] < 0x80)
			fprintf(f, "\\u%04x", p[i]);
		else if (p[i] == 0xc2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)
			fprintf(f, "\\u%04x", p[++i]); /* C1: U+0080..U+009F */
		else
			fprintf(f, "\\\\x%02x", p[i]);
		i += k ? k : 1;
	}
	fputc('"', f);
}

/*
 * A figure of the machine-readable reports: JSON and CSV write the same
 * list, so they cannot drift apart. NAN: not defined (null, an empty
 * field).
 */
struct fig {
	const char *name;
	double v;
	int is_bool;
};

#define MSTAT_FIGS 17
#define ATTR_FIGS 22
#define CRIT_FIGS 18

static size_t mstat_figs(const struct mstat *m, struct fig *out)
{
	struct rates r = rates_of(m);
	const struct fig figs[MSTAT_FIGS] = {
		{ "hops", (double)m->hops, 0 },
		{ "cancelled", (double)m->cancelled, 0 },
		{ "claims", (double)m->claims, 0 },
		{ "correct", (double)m->correct, 0 },
		{ "false_joins", (double)m->false_joins, 0 },
		{ "recalled", (double)m->recalled, 0 },
		{ "orphans", (double)m->orphans, 0 },
		{ "observed", (double)m->observed, 0 },
		{ "reconstructed", (double)m->reconstructed, 0 },
		{ "unknown", (double)(m->hops - m->observed - m->reconstructed), 0 },
		{ "precision", r.precision, 0 },
		{ "recall", r.recall, 0 },
		{ "false_join_rate", r.fj, 0 },
		{ "orphan_rate", r.orphan, 0 },
		{ "observed_share", r.obs, 0 },
		{ "reconstructed_share", r.rec, 0 },
		{ "unknown_share", r.unk, 0 },
	};

	memcpy(out, figs, sizeof(figs));
	return MSTAT_FIGS;
}

/* @cw: causeway's score, when @a is a baseline's (it says who wins). */
static size_t attr_figs(const struct attr_score *a, const struct attr_score *cw, struct fig *out)
{
	const struct fig figs[] = {
		{ "measured", a->measured, 1 },
		{ "requests", (double)a->requests, 0 },
		{ "matched", a->has_matched ? (double)a->matched : NAN, 0 },
		{ "cpu_scored", (double)a->cpu_scored, 0 },
		{ "wall_scored", (double)a->wall_scored, 0 },
		{ "thread_lines_scored", (double)a->thread_scored, 0 },
		{ "cpu_mae_pct", a->cpu_mae, 0 },
		{ "wall_mae_pct", a->wall_mae, 0 },
		{ "cpu_agg_pct", a->cpu_agg, 0 },
		{ "wall_agg_pct", a->wall_agg, 0 },
		{ "cpu_mae_thread_pct", a->cpu_mae_thread, 0 },
		{ "wall_mae_thread_pct", a->wall_mae_thread, 0 },
		{ "est_cpu_ns", a->est_cpu, 0 },
		{ "est_wall_ns", a->est_wall, 0 },
		{ "truth_cpu_ns", a->truth_cpu, 0 },
		{ "truth_wall_ns", a->truth_wall, 0 },
	};
	size_t n = sizeof(figs) / sizeof(figs[0]);

	memcpy(out, figs, sizeof(figs));
	if (a->has_shares) {
		out[n++] = (struct fig){ "share_observed", a->share_observed, 0 };
		out[n++] = (struct fig){ "share_reconstructed", a->share_reconstructed, 0 };
		out[n++] = (struct fig){ "share_unknown", a->share_unknown, 0 };
	}
	if (cw) {
		int cpu, wall, yes = beats(a, cw, &cpu, &wall);

		out[n++] = (struct fig){ "beats_causeway", yes, 1 };
		out[n++] = (struct fig){ "better_cpu_mae", cpu, 1 };
		out[n++] = (struct fig){ "better_wall_mae", wall, 1 };
	}
	return n;
}

static size_t crit_figs(const struct crit_score *c, struct fig *out)
{
	const struct fig figs[CRIT_FIGS] = {
		{ "measured", c->measured, 1 },
		{ "requests", (double)c->requests, 0 },
		{ "matched", (double)c->matched, 0 },
		{ "walked", (double)c->walked, 0 },
		{ "whole", (double)c->whole, 0 },
		{ "waits", (double)c->waits, 0 },
		{ "waits_own_hop", (double)c->waits_own, 0 },
		{ "waits_other_hop", (double)c->waits_other, 0 },
		{ "waits_no_hop", (double)c->waits_none, 0 },
		{ "own_hop_share", ratio(c->waits_own, c->waits, NAN), 0 },
		{ "wall_ns", c->wall_ns, 0 },
		{ "running_share", share(c->kind_ns[0], c->wall_ns), 0 },
		{ "runnable_share", share(c->kind_ns[1], c->wall_ns), 0 },
		{ "handoff_share", share(c->kind_ns[2], c->wall_ns), 0 },
		{ "blocked_share", share(c->kind_ns[3], c->wall_ns), 0 },
		{ "observed_share", share(c->conf_ns[0], c->wall_ns), 0 },
		{ "reconstructed_share", share(c->conf_ns[1], c->wall_ns), 0 },
		{ "unknown_share", share(c->conf_ns[2], c->wall_ns), 0 },
	};

	memcpy(out, figs, sizeof(figs));
	return CRIT_FIGS;
}

/* Whole numbers whole (a count or nanoseconds past 10 digits would
 * otherwise turn into an exponent), the rest to 10 digits. */
static void put_num(FILE *f, double v)
{
	if (fabs(v) < 9007199254740992.0 && v == floor(v))
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.10g", v);
}

static void json_num(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs("null", f);
	else
		put_num(f, v);
}

struct out_ctx {
	const struct truth *t;
	const char *db, *baseline_db, *label;
	const struct system_score *cw, *sched; /* sched NULL: no baseline db */
	const struct attr_score *acw, *ath, *asc;
	const struct crit_score *crit;
	double req_p, req_r;
	int has_req_p, has_req_r, met;
};

static void json_figs(FILE *f, const struct fig *figs, size_t n)
{
	fputc('{', f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s\"%s\": ", i ? ", " : "", figs[i].name);
		if (figs[i].is_bool)
			fputs(figs[i].v ? "true" : "false", f);
		else
			json_num(f, figs[i].v);
	}
	fputc('}', f);
}

static void json_system(FILE *f, const struct out_ctx *o, const struct system_score *s)
{
	struct fig figs[MSTAT_FIGS];

	fputs("{\"db\": ", f);
	json_str(f, s->db_path);
	fprintf(f, ", \"seconds\": %.3f, \"mechanisms\": {", s->seconds);
	for (size_t k = 0; k <= o->t->nmechs; k++) {
		fputs(k ? ",\n      " : "\n      ", f);
		json_str(f, k < o->t->nmechs ? o->t->mechs[k] : "all");
		fputs(": ", f);
		json_figs(f, figs, mstat_figs(&s->m[k], figs));
	}
	fputs("}}", f);
}

static void json_attr(FILE *f, const struct attr_score *a, const struct attr_score *cw)
{
	struct fig figs[ATTR_FIGS];

	json_figs(f, figs, attr_figs(a, cw, figs));
}

static void write_json(FILE *f, const struct out_ctx *o)
{
	const struct truth *t = o->t;
	long cancelled = o->cw->m[t->nmechs].cancelled;

	fputs("{\n  \"truth\": ", f);
	json_str(f, t->path);
	fputs(",\n  \"db\": ", f);
	json_str(f, o->db);
	fputs(",\n  \"baseline_db\": ", f);
	o->baseline_db ? json_str(f, o->baseline_db) : (void)fputs("null", f);
	fputs(",\n  \"label\": ", f);
	o->label ? json_str(f, o->label) : (void)fputs("null", f);
	fputs(",\n  \"pid\": ", f);
	t->has_pid ? (void)fprintf(f, "%lld", (long long)t->pid) : (void)fputs("null", f);
	fputs(",\n  \"config\": {", f);
	for (size_t i = 0; i < t->nconfig; i++) {
		fputs(i ? ", " : "", f);
		json_str(f, t->config[i].key);
		fputs(": ", f);
		json_str(f, t->config[i].value);
	}
	fprintf(f, "},\n  \"counts\": {\"requests\": %zu, \"hops\": %zu, \"cancelled\": %ld, "
		   "\"threads\": %zu, \"cpu_lines\": %zu},\n",
		t->nreqs, t->nhops, cancelled, t->nthreads, t->ncpus);
	fputs("  \"systems\": {\n    \"causeway\": ", f);
	json_system(f, o, o->cw);
	if (o->sched) {
		fputs(",\n    \"sched\": ", f);
		json_system(f, o, o->sched);
	}
	fputs("\n  },\n  \"attribution\": {\n    \"causeway\": ", f);
	json_attr(f, o->acw, NULL);
	fputs(",\n    \"thread\": ", f);
	json_attr(f, o->ath, o->acw);
	fputs(",\n    \"sched\": ", f);
	json_attr(f, o->asc, o->acw);
	fputs("\n  },\n  \"critical_path\": ", f);
	{
		struct fig figs[CRIT_FIGS];

		json_figs(f, figs, crit_figs(o->crit, figs));
	}
	fputs(",\n  \"hops_on_critical_path\": {", f);
	for (size_t k = 0; k <= t->nmechs; k++) {
		fputs(k ? ", " : "", f);
		json_str(f, k < t->nmechs ? t->mechs[k] : "all");
		fprintf(f, ": %ld", o->crit->hops_on_path[k]);
	}
	fputs("},\n  \"require\": {\"precision\": ", f);
	json_num(f, o->has_req_p ? o->req_p : NAN);
	fputs(", \"recall\": ", f);
	json_num(f, o->has_req_r ? o->req_r : NAN);
	fprintf(f, ", \"met\": %s}\n}\n", o->met ? "true" : "false");
}

/* Escaped as the table is (no CR or LF is left to quote, nor a control
 * for a terminal that shows the file), then quoted (RFC 4180) when it
 * holds a comma or a quote. */
static void csv_field(FILE *f, const char *s)
{
	const char *q;

	if (!strpbrk(s, ",\"")) {
		cw_esc_fput(f, s);
		return;
	}
	fputc('"', f);
	for (; (q = strchr(s, '"')); s = q + 1) {
		cw_esc_write(f, s, (size_t)(q - s));
		fputs("\"\"", f);
	}
	cw_esc_fput(f, s);
	fputc('"', f);
}

static void csv_figs(FILE *f, const struct out_ctx *o, const char *sys, const char *mech,
		     const struct fig *figs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		csv_field(f, o->label ? o->label : "");
		fputc(',', f);
		csv_field(f, sys);
		fputc(',', f);
		csv_field(f, mech);
		fputc(',', f);
		csv_field(f, figs[i].name);
		fputc(',', f);
		if (!isnan(figs[i].v) && !isinf(figs[i].v))
			put_num(f, figs[i].v);
		fputc('\n', f);
	}
}

static void csv_system(FILE *f, const struct out_ctx *o, const char *sys,
		       const struct system_score *s)
{
	struct fig figs[MSTAT_FIGS];

	for (size_t k = 0; k <= o->t->nmechs; k++)
		csv_figs(f, o, sys, k < o->t->nmechs ? o->t->mechs[k] : "all", figs,
			 mstat_figs(&s->m[k], figs));
}

static void csv_attr(FILE *f, const struct out_ctx *o, const char *sys,
		     const struct attr_score *a, const struct attr_score *cw)
{
	struct fig figs[ATTR_FIGS];

	csv_figs(f, o, sys, "attribution", figs, attr_figs(a, cw, figs));
}

static void write_csv(FILE *f, const struct out_ctx *o)
{
	fputs("label,system,mechanism,metric,value\n", f);
	csv_system(f, o, "causeway", o->cw);
	if (o->sched)
		csv_system(f, o, "sched", o->sched);
	csv_attr(f, o, "causeway", o->acw, NULL);
	csv_attr(f, o, "thread", o->ath, o->acw);
	csv_attr(f, o, "sched", o->asc, o->acw);
	{
		struct fig figs[CRIT_FIGS];

		csv_figs(f, o, "causeway", "critical_path", figs, crit_figs(o->crit, figs));
	}
	for (size_t k = 0; k <= o->t->nmechs; k++) {
		const struct fig fig = { "hops_on_critical_path", (double)o->crit->hops_on_path[k], 0 };

		csv_figs(f, o, "causeway", k < o->t->nmechs ? o->t->mechs[k] : "all", &fig, 1);
	}
}

/*
 * An output file: stdout for '-', else written under the rules every
 * causeway output follows (lib/outfile.h): never onto an input or through
 * a symbolic link, 0600, and put in place whole at the end, replacing an
 * existing file only with --force.
 */
struct out {
	const char *path;
	struct cw_outfile *of;
	FILE *f;
};

/* @return 0, 2 (the name is refused) or 1. */
static int out_open(struct out *o, const char *path, const struct cw_outfile_opts *oo)
{
	int fd;

	o->path = path;
	if (!path)
		return 0;
	if (!strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	if (!(o->of = cw_outfile__create(path, oo)))
		return errno == EEXIST || errno == EINVAL ? 2 : 1;
	fd = dup(cw_outfile__fd(o->of));
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		fputs("causeway-eval: ", stderr);
		cw_esc_fput(stderr, path);
		fprintf(stderr, ": %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	return 0;
}

/* Close @o, and put it in place if @commit. @return 0 or -1 after a
 * message. */
static int out_close(struct out *o, int commit)
{
	int err = 0;

	if (o->f == stdout) {
		err = fflush(stdout) != 0;
	} else if (o->f) {
		err = ferror(o->f);
		err |= fclose(o->f) != 0;
	}
	if (o->f && err) {
		fputs("causeway-eval: ", stderr);
		cw_esc_fput(stderr, o->path);
		fputs(": write error\n", stderr);
	}
	o->f = NULL;
	if (!err && commit && o->of && cw_outfile__commit(o->of))
		err = 1;
	cw_outfile__free(o->of);
	o->of = NULL;
	return err ? -1 : 0;
}

static int write_out(struct out *f, const struct out_ctx *o,
		     void (*fn)(FILE *, const struct out_ctx *))
{
	if (!f->f)
		return 0;
	fn(f->f, o);
	return out_close(f, 1);
}

int main(int argc, char **argv)
{
	enum { O_BASELINE = 256, O_JSON, O_CSV, O_LABEL, O_REQ_P, O_REQ_R, O_WRONG, O_FORCE };
	static const struct option opts[] = {
		{ "baseline-db", required_argument, NULL, O_BASELINE },
		{ "json", required_argument, NULL, O_JSON },
		{ "csv", required_argument, NULL, O_CSV },
		{ "label", required_argument, NULL, O_LABEL },
		{ "require-precision", required_argument, NULL, O_REQ_P },
		{ "require-recall", required_argument, NULL, O_REQ_R },
		{ "wrong", required_argument, NULL, O_WRONG },
		{ "force", no_argument, NULL, O_FORCE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *baseline = NULL, *json = NULL, *csv = NULL, *label = NULL, *wrong = NULL;
	struct system_score cw = { 0 }, sched = { 0 };
	struct attr_score acw, ath, asc;
	struct crit_score crit = { 0 };
	struct edb db = { 0 }, bdb = { 0 };
	struct out_ctx o = { 0 };
	struct out json_out = { 0 }, csv_out = { 0 }, wrong_out = { 0 };
	struct truth t = { 0 };
	int quiet = 0, force = 0, opt, rc = 1;
	double req_p = 0, req_r = 0;
	int has_req_p = 0, has_req_r = 0;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
		switch (opt) {
		case O_BASELINE:
			baseline = optarg;
			break;
		case O_JSON:
			json = optarg;
			break;
		case O_CSV:
			csv = optarg;
			break;
		case O_LABEL:
			label = optarg;
			break;
		case O_WRONG:
			wrong = optarg;
			break;
		case O_FORCE:
			force = 1;
			break;
		case O_REQ_P:
			if (parse_fraction(optarg, &req_p))
				return usage_error("--require-precision: '%s' is not a number in "
						   "[0, 1]", optarg);
			has_req_p = 1;
			break;
		case O_REQ_R:
			if (parse_fraction(optarg, &req_r))
				return usage_error("--require-recall: '%s' is not a number in [0, 1]",
						   optarg);
			has_req_r = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			return usage_error("%s needs an argument", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return usage_error("%s", argc - optind < 2 ? "want TRUTH and DB"
							   : "too many arguments: want TRUTH and DB");
	{
		/* Every output is checked before any input is read: a refused
		 * name costs nothing and destroys nothing. */
		const char *inputs[] = { argv[optind], argv[optind + 1], baseline };
		const struct cw_outfile_opts oo = { .prog = "causeway-eval", .force = force,
						    .inputs = inputs, .ninputs = 3 };
		const char *names[] = { json, csv, wrong };

		for (int i = 0; i < 3; i++)
			for (int j = i + 1; j < 3; j++)
				if (names[i] && names[j] && strcmp(names[i], "-") &&
				    !strcmp(names[i], names[j]))
					return usage_error("'%s' is named as two outputs", names[i]);
		if ((rc = out_open(&json_out, json, &oo)) || (rc = out_open(&csv_out, csv, &oo)) ||
		    (rc = out_open(&wrong_out, wrong, &oo)))
			goto out;
		rc = 1;
	}
	if (truth_read(argv[optind], &t))
		goto out;
	cw.name = "causeway";
	cw.db_path = argv[optind + 1];
	eval_wrong_out = wrong_out.f;
	if (edb_open(cw.db_path, &t, &db) || score_edges(&db, &t, &cw) ||
	    score_attribution(&db, &t, &acw) || score_thread_baseline(&db, &t, &ath) ||
	    score_critical(&db, &t, &cw, &crit))
		goto out;
	if (baseline) {
		sched.name = "sched";
		sched.db_path = baseline;
		/* The list is causeway's wrong claims, not the baseline's. */
		eval_wrong_out = NULL;
		if (edb_open(baseline, &t, &bdb) || score_edges(&bdb, &t, &sched) ||
		    score_attribution(&bdb, &t, &asc))
			goto out;
		asc.has_shares = 0;
	} else {
		score_attribution_none(&t, &asc);
	}

	o.t = &t;
	o.db = cw.db_path;
	o.baseline_db = baseline;
	o.label = label;
	o.cw = &cw;
	o.sched = baseline ? &sched : NULL;
	o.acw = &acw;
	o.ath = &ath;
	o.asc = &asc;
	o.crit = &crit;
	o.req_p = req_p;
	o.req_r = req_r;
	o.has_req_p = has_req_p;
	o.has_req_r = has_req_r;
	{
		struct rates r = rates_of(&cw.m[t.nmechs]);

		o.met = !(has_req_p && r.precision < req_p) && !(has_req_r && r.recall < req_r);
		if (!quiet) {
			long cancelled = cw.m[t.nmechs].cancelled;

			printf("causeway-eval: ");
			cw_esc_fput(stdout, t.path);
			printf(": %zu requests, %zu hops (%ld cancelled), %zu threads", t.nreqs,
			       t.nhops, cancelled, t.nthreads);
			if (t.has_pid)
				printf(", pid %lld", (long long)t.pid);
			printf("\n");
			/* Free text of the truth file, escaped (lib/esc.h): a
			 * value of several fields shows its tabs as \x09. */
			for (size_t i = 0; i < t.nconfig; i++) {
				printf("  config ");
				cw_esc_fput(stdout, t.config[i].key);
				printf(" = ");
				cw_esc_fput(stdout, t.config[i].value);
				printf("\n");
			}
			if (label) {
				printf("  label ");
				cw_esc_fput(stdout, label);
				printf("\n");
			}
			print_system(&t, &cw, "causeway");
			if (baseline)
				print_system(&t, &sched, "sched baseline");
			print_attr(&acw, &ath, &asc);
			print_crit(&t, &crit);
			fflush(stdout);
		}
		if (write_out(&json_out, &o, write_json) || write_out(&csv_out, &o, write_csv) ||
		    out_close(&wrong_out, 1))
			goto out;
		rc = 0;
		if (has_req_p && r.precision < req_p) {
			fprintf(stderr, "causeway-eval: precision %.4f is below the required %g\n",
				r.precision, req_p);
			rc = 3;
		}
		if (has_req_r && r.recall < req_r) {
			fprintf(stderr, "causeway-eval: recall %.4f is below the required %g\n",
				r.recall, req_r);
			rc = 3;
		}
	}
out:
	/* What was not put in place is removed: no half report. */
	out_close(&json_out, 0);
	out_close(&csv_out, 0);
	out_close(&wrong_out, 0);
	edb_close(&db);
	edb_close(&bdb);
	free(cw.m);
	free(sched.m);
	free(cw.names);
	free(sched.names);
	free(crit.hops_on_path);
	truth_free(&t);
	return rc;
}
