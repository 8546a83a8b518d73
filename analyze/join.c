// SPDX-License-Identifier: MIT
/*
 * The join engine: dispatches time-ordered records to the class handlers
 * (cls_*.c), which name objects through the identity layer (ident.c).
 * This file knows no class: it checks each record's size against its
 * type's minimum (schema/records.def), keeps the trace's time range, hands metadata
 * key/values to every class, and enforces the live-state bound between
 * records. The rules of docs/model.md §5 are in ident.h (identity,
 * generations, orphans, bound) and in each class file (what its events
 * mean).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../schema/records.h"
#include "classes.h"
#include "carry.h"

/*
 * Every analyzer class, one per row of schema/classes.def, placed by its
 * join column: the order every loop below runs the classes' hooks in,
 * which is not -e's (classes.def says why it matters).
 */
static const struct cw_aclass *const aclasses[] = {
#define CW_CLASS(id, n, name, ename, kind, aclass, join) [join] = &cw_aclass_##aclass,
#include "../schema/classes.def"
};
#define NACLASSES (sizeof(aclasses) / sizeof(aclasses[0]))
/* A place given twice overrides an initializer (-Woverride-init, in
 * -Wextra); one out of 0..N-1 leaves a NULL hole and makes the list
 * longer than classes.def. */
enum {
#define CW_CLASS(id, n, name, ename, kind, aclass, join) JOIN_ROW_##id,
#include "../schema/classes.def"
	NROWS
};
_Static_assert(NACLASSES == NROWS, "classes.def: the join places are not 0 to the rows less one");
_Static_assert(NACLASSES <= CW_ACLASS_MAX, "raise CW_ACLASS_MAX");

/* Record types are class << 4 | n with 16 classes at most. */
#define NTYPES CW_REC_NTYPES

/* Classes that watch one record type besides its owner: the sample class
 * watches four sched records; a few more may come. */
#define MAX_WATCHERS 4

struct route {
	const struct cw_handler *h;
	uint16_t min_size; /* schema/records.def's: a shorter record is malformed */
	uint8_t cls;
	uint8_t nwatch;
	struct {
		const struct cw_handler *h;
		uint8_t cls;
	} watch[MAX_WATCHERS];
};

struct cw_join {
	struct cw_ident *id;
	struct cw_cls cls[NACLASSES];
	uint8_t edge_hooks[NACLASSES]; /* the classes with an edge hook, in order */
	uint8_t nedge_hooks;
	struct route routes[NTYPES];
	struct cw_cls_set set; /* what the cw_cls__ services read (classes.c) */
	struct cw_tasks *tasks;
	struct cw_join_opts opts;
	uint32_t classes; /* bit per CW_CLASS_* of the records joined */
	const struct cw_ksyms *ksyms;
	int have_event_ts;
	struct cw_join_stats st;
};

/* Keep the set's running hooks ordered by rank, highest first; equal
 * ranks keep the order of aclasses[]. */
static void add_running(struct cw_join *j, uint8_t c, uint8_t rank)
{
	struct cw_cls_set *s = &j->set;
	size_t i = s->nrunning++;

	for (; i && s->running[i - 1].rank < rank; i--)
		s->running[i] = s->running[i - 1];
	s->running[i].cls = c;
	s->running[i].rank = rank;
}

/* The capture class (CW_CLASS_*) of each analyzer class, by its place:
 * the row that names it says (the class -e turns on and off). */
static const uint8_t capture_class[] = {
#define CW_CLASS(id, n, name, ename, kind, aclass, join) [join] = CW_CLASS_##id,
#include "../schema/classes.def"
};

/* Every edge: what its dst works for, from its src (carry.h: one rule for
 * every class's edges, so it lives here, not in one), then what each
 * class that asked learns of it. */
static void on_edge(void *ctx, struct cw_edge *e, const struct cw_obj *src, struct cw_obj *dst,
		    const struct cw_hdr *h)
{
	struct cw_join *j = ctx;

	cw_carry__edge(&j->cls[0], e, src, dst, h);
	for (unsigned i = 0; i < j->nedge_hooks; i++)
		aclasses[j->edge_hooks[i]]->edge(&j->cls[j->edge_hooks[i]], e->type, src, dst, h);
}

struct cw_join *cw_join__new(const struct cw_sink *sink, const struct cw_join_opts *opts)
{
	struct cw_join *j = calloc(1, sizeof(*j));
	struct cw_ident_opts io = { .sink = sink };
	int err = 0;

	if (!j)
		return NULL;
	if (opts)
		j->opts = *opts;
	io.breaks = opts ? opts->breaks : NULL;
	io.max_live = opts ? opts->max_live : 0;
	io.st = &j->st;
	j->ksyms = opts ? opts->ksyms : NULL;
	/* Metadata and samples are no edge class: a baseline without the
	 * async classes still has the snapshot, the loss accounting and
	 * the stacks. */
	j->classes = j->opts.classes ? j->opts.classes | 1u << CW_CLASS_META | 1u << CW_CLASS_SAMPLE
				     : UINT32_MAX;
	j->id = cw_ident__new(&io);
	if (!j->id)
		goto fail;
	j->tasks = cw_tasks__new(j->id, &j->st);
	if (!j->tasks)
		goto fail;
	j->set.aclasses = aclasses;
	j->set.cls = j->cls;
	j->set.opts = &j->opts;
	j->set.ksyms = j->ksyms;
	for (size_t c = 0; c < NACLASSES; c++) {
		const struct cw_aclass *ac = aclasses[c];
		/* A class not joined owns no cause and runs nothing: its
		 * hooks would make orphans of what the skipped records would
		 * have named (a wake's timer), which is exactly what a
		 * baseline without the class must not show. Its records stay
		 * routed, so that they are skipped, not counted unknown. */
		int on = j->classes >> capture_class[c] & 1;

		j->cls[c].id = j->id;
		j->cls[c].st = &j->st;
		j->cls[c].tasks = j->tasks;
		j->cls[c].set = &j->set;
		for (unsigned k = 0; k < CW_CAUSE_MAX; k++) {
			if (!(ac->cause_kinds >> k & 1) || !on)
				continue;
			if (j->set.cause_owner[k] || !ac->cause)
				abort(); /* two owners, or no hook: a build error */
			j->set.cause_owner[k] = (uint8_t)(c + 1);
		}
		if (ac->init && !(j->cls[c].state = ac->init(j->id, &err)))
			goto fail;
		if (!ac->init && ac->state_size && !(j->cls[c].state = calloc(1, ac->state_size))) {
			err = -ENOMEM;
			goto fail;
		}
		for (const struct cw_handler *h = ac->handlers; h && h->type; h++) {
			const struct cw_rec_info *ri = cw_rec_info(h->type);

			/* a type records.def does not list, or two classes
			 * claiming one: a build error */
			if (!ri || j->routes[h->type].h)
				abort();
			j->routes[h->type].h = h;
			j->routes[h->type].min_size = ri->min_size;
			j->routes[h->type].cls = (uint8_t)c;
		}
		for (uint8_t rank = 1; on && ac->running && rank < CW_RUN_MAX; rank++)
			if (ac->running_ranks >> rank & 1)
				add_running(j, (uint8_t)c, rank);
		if (on && ac->edge)
			j->edge_hooks[j->nedge_hooks++] = (uint8_t)c;
	}
	cw_ident__set_edge_hook(j->id, on_edge, j);
	/* Watches after every owner is known: a watch of a type nobody owns
	 * would never run, which is a build error too. */
	for (size_t c = 0; c < NACLASSES; c++) {
		if (!(j->classes >> capture_class[c] & 1))
			continue;
		for (const struct cw_handler *h = aclasses[c]->watches; h && h->type; h++) {
			struct route *r = h->type < NTYPES ? &j->routes[h->type] : NULL;

			if (!r || !r->h || r->cls == c || r->nwatch == MAX_WATCHERS)
				abort();
			r->watch[r->nwatch].h = h;
			r->watch[r->nwatch++].cls = (uint8_t)c;
		}
	}
	return j;
fail:
	cw_join__free(j);
	errno = err ? -err : ENOMEM;
	return NULL;
}

int cw_meta_kv__split(const struct cw_hdr *h, char *key, char **val)
{
	const struct cw_meta_kv *kv = (const void *)h;

	if (h->size < sizeof(*kv) || sizeof(*kv) + kv->key_len + kv->val_len > h->size ||
	    !kv->key_len || kv->key_len >= CW_META_KEY_MAX)
		return 1;
	memcpy(key, kv + 1, kv->key_len);
	key[kv->key_len] = '\0';
	*val = strndup((const char *)(kv + 1) + kv->key_len, kv->val_len);
	return *val ? 0 : -ENOMEM;
}

/* A metadata key/value goes to every class that asked for metadata. */
static int on_meta_kv(struct cw_join *j, const struct cw_hdr *h)
{
	char key[CW_META_KEY_MAX], *val;
	int err = cw_meta_kv__split(h, key, &val);

	if (err > 0) {
		j->st.bad_records++;
		return 0;
	}
	if (err)
		return err;
	/* The traced set is the identity layer's (task.h), not a class's. */
	err = cw_tasks__meta(j->tasks, key, val);
	for (size_t c = 0; c < NACLASSES && !err; c++)
		if (aclasses[c]->meta)
			err = aclasses[c]->meta(&j->cls[c], key, val);
	free(val);
	return err;
}

int cw_join__record(struct cw_join *j, const struct cw_hdr *h)
{
	const struct route *r = h->type < NTYPES ? &j->routes[h->type] : NULL;
	int err;

	if (CW_CLASS_OF(h->type) < CW_CLASS_MAX && !(j->classes >> CW_CLASS_OF(h->type) & 1)) {
		j->st.records_skipped++;
		return 0;
	}
	j->st.records++;
	if (h->type == CW_REC_META_KV)
		return on_meta_kv(j, h);
	if (!r || !r->h) {
		j->st.unknown_records++;
		return 0;
	}
	if (h->size < r->min_size) {
		j->st.bad_records++;
		return 0;
	}
	/* The snapshot is stamped when /proc was read, after the first
	 * events, and a probe's record when it was attached: neither says
	 * anything about the trace's time range. */
	if (h->type != CW_REC_META_TASK && h->type != CW_REC_META_KSYMS &&
	    h->type != CW_REC_META_USDT &&
	    !(h->type == CW_REC_META_MMAP && (h->flags & CW_MMAP_SNAPSHOT))) {
		if (!j->have_event_ts || h->ts < j->st.first_ts)
			j->st.first_ts = h->ts;
		if (!j->have_event_ts || h->ts > j->st.last_ts)
			j->st.last_ts = h->ts;
		j->have_event_ts = 1;
	}
	err = r->h->fn(&j->cls[r->cls], h);
	for (unsigned w = 0; w < r->nwatch && !err; w++)
		err = r->watch[w].h->fn(&j->cls[r->watch[w].cls], h);
	/*
	 * Enforce the bound between records, never inside one: the objects
	 * a record names were just touched, so they are the last to go, and
	 * no handler ever holds a pointer to an object released under it.
	 */
	return err ?: cw_ident__enforce(j->id);
}

int cw_join__finish(struct cw_join *j)
{
	int err = 0;

	for (size_t c = 0; c < NACLASSES && !err; c++)
		if (aclasses[c]->finish)
			err = aclasses[c]->finish(&j->cls[c]);
	return err ?: cw_ident__finish(j->id);
}

void cw_join__stats(const struct cw_join *j, struct cw_join_stats *st)
{
	*st = j->st;
	st->nclass_counters = 0;
	for (size_t c = 0; c < NACLASSES; c++) {
		const char *base = j->cls[c].state;

		for (const struct cw_counter *k = aclasses[c]->counters; k && k->key; k++) {
			/* more counters than the table: a build error */
			if (st->nclass_counters == CW_CLASS_COUNTERS_MAX || !base)
				abort();
			st->class_counters[st->nclass_counters++] = (struct cw_counter_value){
				.key = k->key,
				.value = *(const uint64_t *)(base + k->off),
				.meta = k->meta,
			};
		}
	}
}

uint64_t cw_join_stats__get(const struct cw_join_stats *st, const char *key)
{
	for (size_t i = 0; i < st->nclass_counters; i++)
		if (!strcmp(st->class_counters[i].key, key))
			return st->class_counters[i].value;
	/* A key no class keeps is a misspelt one: read as 0 it would pass
	 * a test and print a summary that is wrong. */
	abort();
}

void cw_join__free(struct cw_join *j)
{
	if (!j)
		return;
	for (size_t c = 0; c < NACLASSES; c++) {
		if (aclasses[c]->fini && j->cls[c].state)
			aclasses[c]->fini(j->cls[c].state);
		if (!aclasses[c]->init && aclasses[c]->state_size)
			free(j->cls[c].state);
	}
	cw_tasks__free(j->tasks);
	cw_ident__free(j->id);
	free(j);
}
