// SPDX-License-Identifier: MIT
/*
 * Attribution error (FORMAT.md, "Attribution error"): what causeway
 * charged to each request against what the workload measured, and the
 * same for the baselines: 'thread' (the CPU samples of the request's
 * origin thread between its begin and end, its wall the begin to the end)
 * and 'sched' (a database with no request nodes: nothing charged).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "eval.h"

/* Estimates per request and per cpu line, turned into the scores. */
struct est {
	double *req_cpu, *req_wall; /* per truth request */
	double *line_cpu, *line_wall; /* per truth cpu line */
	double obs, rec;            /* CPU charged to matched requests, by confidence */
};

static int est_alloc(const struct truth *t, struct est *e)
{
	size_t nr = t->nreqs ? t->nreqs : 1, nl = t->ncpus ? t->ncpus : 1;

	memset(e, 0, sizeof(*e));
	e->req_cpu = calloc(nr, sizeof(double));
	e->req_wall = calloc(nr, sizeof(double));
	e->line_cpu = calloc(nl, sizeof(double));
	e->line_wall = calloc(nl, sizeof(double));
	if (e->req_cpu && e->req_wall && e->line_cpu && e->line_wall)
		return 0;
	fprintf(stderr, "causeway-eval: out of memory\n");
	return -1;
}

static void est_free(struct est *e)
{
	free(e->req_cpu);
	free(e->req_wall);
	free(e->line_cpu);
	free(e->line_wall);
}

/* The mean relative error (%) over the truths > 0, and the aggregate
 * error (%): sum |est - truth| / sum truth. */
struct err_acc {
	double sum, num, den;
	long k;
};

static void err_add(struct err_acc *x, double est, double truth)
{
	double d = fabs(est - truth);

	x->num += d;
	x->den += truth;
	if (truth > 0) {
		x->sum += d / truth * 100;
		x->k++;
	}
}

static double err_mae(const struct err_acc *x)
{
	return x->k ? x->sum / (double)x->k : NAN;
}

static double err_agg(const struct err_acc *x)
{
	return x->den > 0 ? x->num / x->den * 100 : NAN;
}

static void finish(const struct truth *t, const struct est *e, struct attr_score *a)
{
	struct err_acc rc = { 0 }, rw = { 0 }, lc = { 0 }, lw = { 0 };

	a->requests = (long)t->nreqs;
	a->est_cpu = a->est_wall = a->truth_cpu = a->truth_wall = 0;
	for (size_t i = 0; i < t->nreqs; i++) {
		err_add(&rc, e->req_cpu[i], t->reqs[i].cpu_ns);
		err_add(&rw, e->req_wall[i], t->reqs[i].wall_ns);
		a->est_cpu += e->req_cpu[i];
		a->est_wall += e->req_wall[i];
		a->truth_cpu += t->reqs[i].cpu_ns;
		a->truth_wall += t->reqs[i].wall_ns;
	}
	for (size_t l = 0; l < t->ncpus; l++) {
		err_add(&lc, e->line_cpu[l], t->cpus[l].cpu_ns);
		err_add(&lw, e->line_wall[l], t->cpus[l].wall_ns);
	}
	a->cpu_mae = err_mae(&rc);
	a->wall_mae = err_mae(&rw);
	a->cpu_agg = err_agg(&rc);
	a->wall_agg = err_agg(&rw);
	a->cpu_scored = rc.k;
	a->wall_scored = rw.k;
	a->cpu_mae_thread = err_mae(&lc);
	a->wall_mae_thread = err_mae(&lw);
	a->thread_scored = lc.k;
	if (a->has_shares) {
		if (a->truth_cpu > 0) {
			a->share_observed = e->obs / a->truth_cpu;
			a->share_reconstructed = e->rec / a->truth_cpu;
			a->share_unknown = fmax(0, 1 - a->share_observed - a->share_reconstructed);
		} else {
			a->share_observed = a->share_reconstructed = a->share_unknown = NAN;
		}
	}
}

/* The truth's cpu lines by (request index, tid). */
static uint64_t line_key(size_t req, int64_t tid)
{
	return (uint64_t)req << 32 | (uint32_t)tid;
}

static int index_lines(const struct truth *t, struct u64map *lines)
{
	for (size_t i = 0; i < t->ncpus; i++)
		if (t->cpus[i].tid >= 0 && t->cpus[i].tid <= UINT32_MAX &&
		    u64map_put(lines, line_key(t->cpus[i].req, t->cpus[i].tid), i)) {
			fprintf(stderr, "causeway-eval: out of memory\n");
			return -1;
		}
	return 0;
}

/* Grows two parallel arrays of sums by one zeroed slot; -1: out of memory. */
static long sums_add(double **x, double **y, size_t *n, size_t *cap)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		double *p = realloc(*x, nc * sizeof(double)), *q;

		if (!p)
			return -1;
		*x = p;
		if (!(q = realloc(*y, nc * sizeof(double))))
			return -1;
		*y = q;
		*cap = nc;
	}
	(*x)[*n] = (*y)[*n] = 0;
	return (long)(*n)++;
}

/* Is @tid (a node of @ttype) one of the truth's threads? With no thread
 * lines, every thread is. */
static int truth_thread(const struct truth *t, const char *ttype, int64_t tid)
{
	if (!t->nthreads)
		return 1;
	if (!ttype || strcmp(ttype, "thread"))
		return 0;
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == tid)
			return 1;
	return 0;
}

int match_requests(struct edb *db, const struct truth *t, int64_t *node)
{
	sqlite3_stmt *find = NULL;
	char *msg = NULL;
	int step;

	if (sqlite3_exec(db->h,
			 "CREATE TEMP TABLE IF NOT EXISTS cw_req AS"
			 " SELECT id, key, scope, start_ns FROM nodes WHERE type = 'request';"
			 "CREATE INDEX IF NOT EXISTS temp.cw_req_k ON cw_req(key, start_ns);",
			 NULL, NULL, &msg) != SQLITE_OK) {
		edb_say(db->path, "query", msg ? msg : "error");
		sqlite3_free(msg);
		return -1;
	}
	if (edb_prepare(db, "SELECT id FROM cw_req WHERE key = ?1 AND start_ns BETWEEN ?2 AND ?3"
			    " AND (?4 IS NULL OR scope = ?4) ORDER BY start_ns, id LIMIT 1", &find))
		return -1;
	for (size_t i = 0; i < t->nreqs; i++) {
		const struct request *q = &t->reqs[i];

		sqlite3_bind_int64(find, 1, q->app_id);
		sqlite3_bind_int64(find, 2, q->b0);
		sqlite3_bind_int64(find, 3, q->b1);
		if (t->has_pid)
			sqlite3_bind_text(find, 4, t->pid_scope, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(find, 4);
		step = sqlite3_step(find);
		node[i] = step == SQLITE_ROW ? sqlite3_column_int64(find, 0) : 0;
		sqlite3_reset(find);
		if (step != SQLITE_ROW && step != SQLITE_DONE) {
			sqlite3_finalize(find);
			return edb_fail(db, "query");
		}
	}
	sqlite3_finalize(find);
	return 0;
}

int score_attribution(struct edb *db, const struct truth *t, struct attr_score *a)
{
	struct u64map nodes = { 0 }; /* request node -> slot */
	struct u64map per = { 0 };   /* (slot, tid) -> per-thread sum */
	sqlite3_stmt *agg = NULL;
	size_t *slot = NULL; /* per truth request: its node's slot + 1, 0 unmatched */
	int64_t *node = NULL; /* per truth request: its node, 0 none */
	double *cpu = NULL, *wall = NULL, *pcpu = NULL, *pwall = NULL;
	size_t nslots = 0, capslots = 0, nper = 0, capper = 0;
	struct est e;
	int rc = -1, step;

	memset(a, 0, sizeof(*a));
	a->measured = a->has_shares = a->has_matched = 1;
	if (est_alloc(t, &e))
		return -1;
	if (!(slot = calloc(t->nreqs ? t->nreqs : 1, sizeof(*slot))) ||
	    !(node = calloc(t->nreqs ? t->nreqs : 1, sizeof(*node))))
		goto oom;
	if (match_requests(db, t, node) ||
	    edb_prepare(db, "SELECT a.request, s.kind, a.confidence, t.type, t.key,"
			    " sum(s.weight * 1.0 / s.inclusion_probability)"
			    " FROM attribution a JOIN samples s ON s.id = a.sample"
			    " JOIN nodes t ON t.id = s.thread"
			    " WHERE a.request IS NOT NULL AND s.inclusion_probability > 0"
			    " GROUP BY a.request, s.kind, a.confidence, t.type, t.key", &agg))
		goto out;

	/* Two truth requests on one node (windows that overlap) share it. */
	for (size_t i = 0; i < t->nreqs; i++) {
		uint64_t k;

		if (!node[i])
			continue;
		a->matched++;
		if (!u64map_get(&nodes, (uint64_t)node[i], &k)) {
			long n = sums_add(&cpu, &wall, &nslots, &capslots);

			if (n < 0 || u64map_put(&nodes, (uint64_t)node[i], (uint64_t)n))
				goto oom;
			k = (uint64_t)n;
		}
		slot[i] = k + 1;
	}

	/* The estimates: sum(weight / inclusion_probability) per request node
	 * (cpu, and cpu + offcpu for the wall), per thread, per confidence. */
	while ((step = sqlite3_step(agg)) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(agg, 1);
		const char *conf = (const char *)sqlite3_column_text(agg, 2);
		const char *ttype = (const char *)sqlite3_column_text(agg, 3);
		int64_t tid = sqlite3_column_int64(agg, 4);
		double w = sqlite3_column_double(agg, 5);
		int is_cpu = kind && !strcmp(kind, "cpu");
		uint64_t k, p;

		if (!u64map_get(&nodes, (uint64_t)sqlite3_column_int64(agg, 0), &k))
			continue;
		if (!is_cpu && !(kind && !strcmp(kind, "offcpu")))
			continue;
		/* Only what the truth can measure: the workload's own threads
		 * (its thread lines), not the kernel's (an io-wq worker
		 * blocked in a punted read is the request's, but no clock of
		 * the workload's sees it). */
		if (!truth_thread(t, ttype, tid))
			continue;
		if (is_cpu) {
			cpu[k] += w;
			if (conf && !strcmp(conf, "observed"))
				e.obs += w;
			else if (conf && !strcmp(conf, "reconstructed"))
				e.rec += w;
		}
		wall[k] += w;
		if (!ttype || strcmp(ttype, "thread") || tid < 0 || tid > UINT32_MAX)
			continue;
		if (!u64map_get(&per, line_key(k, tid), &p)) {
			long n = sums_add(&pcpu, &pwall, &nper, &capper);

			if (n < 0 || u64map_put(&per, line_key(k, tid), (uint64_t)n)) {
				sqlite3_reset(agg);
				goto oom;
			}
			p = (uint64_t)n;
		}
		if (is_cpu)
			pcpu[p] += w;
		pwall[p] += w;
	}
	sqlite3_reset(agg);
	if (step != SQLITE_DONE) {
		edb_fail(db, "query");
		goto out;
	}
	for (size_t i = 0; i < t->nreqs; i++)
		if (slot[i]) {
			e.req_cpu[i] = cpu[slot[i] - 1];
			e.req_wall[i] = wall[slot[i] - 1];
		}
	for (size_t l = 0; l < t->ncpus; l++) {
		size_t i = t->cpus[l].req;
		int64_t tid = t->cpus[l].tid;
		uint64_t p;

		if (slot[i] && tid >= 0 && tid <= UINT32_MAX &&
		    u64map_get(&per, line_key(slot[i] - 1, tid), &p)) {
			e.line_cpu[l] = pcpu[p];
			e.line_wall[l] = pwall[p];
		}
	}
	finish(t, &e, a);
	rc = 0;
	goto out;
oom:
	fprintf(stderr, "causeway-eval: out of memory\n");
out:
	sqlite3_finalize(agg);
	free(slot);
	free(node);
	free(cpu);
	free(wall);
	free(pcpu);
	free(pwall);
	u64map_free(&nodes);
	u64map_free(&per);
	est_free(&e);
	return rc;
}

int score_thread_baseline(struct edb *db, const struct truth *t, struct attr_score *a)
{
	struct u64map lines = { 0 };
	sqlite3_stmt *st = NULL;
	struct est e;
	int rc = -1, step;

	memset(a, 0, sizeof(*a));
	a->measured = 1;
	if (est_alloc(t, &e))
		return -1;
	if (index_lines(t, &lines) ||
	    edb_prepare(db, "SELECT sum(s.weight * 1.0 / s.inclusion_probability)"
			    " FROM nodes n JOIN samples s ON s.thread = n.id"
			    " WHERE n.type = 'thread' AND n.key = ?1 AND s.ts BETWEEN ?2 AND ?3"
			    " AND s.kind = 'cpu' AND s.inclusion_probability > 0", &st))
		goto out;
	for (size_t i = 0; i < t->nreqs; i++) {
		const struct request *q = &t->reqs[i];
		uint64_t l;

		sqlite3_bind_int64(st, 1, q->origin_tid);
		sqlite3_bind_int64(st, 2, q->b0);
		sqlite3_bind_int64(st, 3, q->e1);
		step = sqlite3_step(st);
		if (step != SQLITE_ROW) {
			sqlite3_reset(st);
			edb_fail(db, "query");
			goto out;
		}
		e.req_cpu[i] = sqlite3_column_double(st, 0); /* NULL (no sample) reads 0 */
		e.req_wall[i] = (double)(q->e1 - q->b0);
		sqlite3_reset(st);
		if (q->origin_tid >= 0 && q->origin_tid <= UINT32_MAX &&
		    u64map_get(&lines, line_key(i, q->origin_tid), &l)) {
			e.line_cpu[l] = e.req_cpu[i];
			e.line_wall[l] = e.req_wall[i];
		}
	}
	finish(t, &e, a);
	rc = 0;
out:
	sqlite3_finalize(st);
	u64map_free(&lines);
	est_free(&e);
	return rc;
}

void score_attribution_none(const struct truth *t, struct attr_score *a)
{
	struct est e;

	memset(a, 0, sizeof(*a));
	a->has_matched = 1;
	if (est_alloc(t, &e)) {
		a->cpu_mae = a->wall_mae = a->cpu_agg = a->wall_agg = NAN;
		a->cpu_mae_thread = a->wall_mae_thread = NAN;
		est_free(&e);
		return;
	}
	finish(t, &e, a);
	est_free(&e);
}
