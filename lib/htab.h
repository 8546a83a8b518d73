/* SPDX-License-Identifier: MIT */
/*
 * The one hash table: intrusive and chained, as Linux's
 * tools/include/linux/hashtable.h, but grown by its owner. An entry embeds
 * a struct cw_hnode (or, where it must leave its chain in O(1), a struct
 * cw_hlnode: see below); the table holds only the buckets, 2^k pointers,
 * and never allocates an entry. The caller gives the hash (cw_mix64() of
 * lib/hash.h over the key, or one it keeps in the entry) and does the
 * compare, in the body of a cw_htab_for_each_possible() walk:
 *
 *	struct thing { struct cw_hnode hn; uint64_t key; ... };
 *
 *	cw_htab_for_each_possible(&t, e, hn, cw_mix64(key))
 *		if (e->key == key)
 *			return e;
 *
 * The bucket of hash h is h & (cap - 1): the caller's hash must spread
 * over the low bits. An entry goes in at the head of its bucket;
 * cw_htab__grow() doubles the buckets by taking the old ones in order and
 * each chain from its head, so the order in which a walk meets entries
 * of one hash is a function of the inserts and grows alone (the database
 * writes no table order, but cls_io_uring.c's candidates take the first
 * of equal keys).
 *
 * When to grow is the owner's choice (most grow at one entry per bucket,
 * ident.c's objects stop at the live bound): cw_htab__add() never grows,
 * and needs a table that has buckets (cw_htab__grow() once first).
 *
 * Deleting. cw_htab__del() walks the entry's bucket to its link: chains
 * are about one long at one entry per bucket, and an entry is one pointer
 * larger. An entry many others may share a hash with (cls_io_uring.c's
 * requests by user_data, 0 for all of them, say) embeds a struct cw_hlnode
 * instead, in a table made with back links (cw_htab__grow(t, cap, hash, 1)
 * the first time): it also keeps the address of what points to it, as
 * Linux's hlist_node, and cw_htab__unlink() takes it out without a walk.
 * A table is one kind or the other, never both.
 */
#ifndef CAUSEWAY_HTAB_H
#define CAUSEWAY_HTAB_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

struct cw_hnode {
	struct cw_hnode *next;
};

/* An entry of a table with back links; its node first, so that a
 * struct cw_hnode * of that table is one of these. */
struct cw_hlnode {
	struct cw_hnode n;
	struct cw_hnode **pprev; /* what points to this entry */
};

struct cw_htab {
	struct cw_hnode **b;
	size_t cap;	/* buckets: 0, then a power of two */
	size_t n;	/* entries */
	uint8_t back;	/* entries are struct cw_hlnode */
};

/* How many buckets ahead cw_htab__grow() fetches an entry. */
#define CW_HTAB_AHEAD 8

/* The hash of an entry that is in the table, for cw_htab__grow(). */
typedef uint64_t cw_htab_hash_fn(const struct cw_hnode *n);

#define cw_hentry(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

/* @ptr's entry, or NULL for NULL. */
#define cw_hentry_safe(ptr, type, member)                                      \
	({                                                                     \
		__typeof__(ptr) cw__p = (ptr);                                 \
		cw__p ? cw_hentry(cw__p, type, member) : NULL;                 \
	})

/* The head of hash @h's bucket; a table with no buckets has none. */
static inline struct cw_hnode *cw_htab__first(const struct cw_htab *t, uint64_t h)
{
	return t->cap ? t->b[h & (t->cap - 1)] : NULL;
}

/*
 * Walk @obj (a pointer to the entry type, whose struct cw_hnode is
 * @member) over the entries of hash @h's bucket: the caller compares.
 * The body may not take @obj out; the _safe form allows it, as it has
 * read the next entry before (@tmp, a struct cw_hnode *).
 */
#define cw_htab_for_each_possible(t, obj, member, h)                                          \
	for ((obj) = cw_hentry_safe(cw_htab__first(t, h), __typeof__(*(obj)), member); (obj); \
	     (obj) = cw_hentry_safe((obj)->member.next, __typeof__(*(obj)), member))

#define cw_htab_for_each_possible_safe(t, obj, tmp, member, h)                                \
	for ((obj) = cw_hentry_safe(cw_htab__first(t, h), __typeof__(*(obj)), member);         \
	     (obj) && ((tmp) = (obj)->member.next, 1);                                       \
	     (obj) = cw_hentry_safe(tmp, __typeof__(*(obj)), member))

/* Walk every entry, bucket by bucket (the order is the hash's, not the
 * inserts': sort what a walk writes). @tmp as above; @i a size_t. */
#define cw_htab_for_each_safe(t, i, obj, tmp, member)                                         \
	for ((i) = 0; (i) < (t)->cap; (i)++)                                                  \
		for ((obj) = cw_hentry_safe((t)->b[i], __typeof__(*(obj)), member);           \
		     (obj) && ((tmp) = (obj)->member.next, 1);                               \
		     (obj) = cw_hentry_safe(tmp, __typeof__(*(obj)), member))

static inline void cw_htab__push(struct cw_htab *t, struct cw_hnode **head, struct cw_hnode *n)
{
	n->next = *head;
	if (t->back) {
		if (*head)
			((struct cw_hlnode *)*head)->pprev = &n->next;
		((struct cw_hlnode *)n)->pprev = head;
	}
	*head = n;
}

/* Put @n, of hash @h, at the head of its bucket. The table has buckets. */
static inline void cw_htab__add(struct cw_htab *t, struct cw_hnode *n, uint64_t h)
{
	cw_htab__push(t, &t->b[h & (t->cap - 1)], n);
	t->n++;
}

/* Take @n out of a table with back links, without a walk. */
static inline void cw_htab__unlink(struct cw_htab *t, struct cw_hlnode *n)
{
	*n->pprev = n->n.next;
	if (n->n.next)
		((struct cw_hlnode *)n->n.next)->pprev = n->pprev;
	n->n.next = NULL;
	n->pprev = NULL;
	t->n--;
}

/* Take @n, of hash @h, out of its bucket: 1, or 0 when it is not there. */
static inline int cw_htab__del(struct cw_htab *t, struct cw_hnode *n, uint64_t h)
{
	struct cw_hnode **p;

	if (t->back) {
		cw_htab__unlink(t, (struct cw_hlnode *)n);
		return 1;
	}
	if (!t->cap)
		return 0;
	for (p = &t->b[h & (t->cap - 1)]; *p; p = &(*p)->next) {
		if (*p == n) {
			*p = n->next;
			n->next = NULL;
			t->n--;
			return 1;
		}
	}
	return 0;
}

/*
 * Double the buckets, or make the first @first (a power of two) of a
 * table that has none; @back, only then: the entries will be struct
 * cw_hlnode. Entries move by @hash. 0, or -ENOMEM with the table as it
 * was.
 */
static inline int cw_htab__grow(struct cw_htab *t, size_t first, cw_htab_hash_fn *hash, int back)
{
	size_t ncap = t->cap ? t->cap * 2 : first;
	struct cw_hnode **nb = calloc(ncap, sizeof(*nb));

	if (!nb)
		return -ENOMEM;
	if (!t->cap)
		t->back = !!back;
	for (size_t i = 0; i < t->cap; i++) {
		struct cw_hnode *e = t->b[i], *next;

		/* Every entry is a cache miss (@hash reads it), and one after
		 * another they are slow: a table of a million live io_uring
		 * requests took a second to grow. Asked for some buckets
		 * ahead, they come in parallel. */
		if (i + CW_HTAB_AHEAD < t->cap && t->b[i + CW_HTAB_AHEAD])
			__builtin_prefetch(t->b[i + CW_HTAB_AHEAD]);
		for (; e; e = next) {
			next = e->next;
			cw_htab__push(t, &nb[hash(e) & (ncap - 1)], e);
		}
	}
	free(t->b);
	t->b = nb;
	t->cap = ncap;
	return 0;
}

/* free() every entry (its node @off bytes into it, an offsetof), and
 * forget them; the buckets are kept. */
static inline void cw_htab__free_entries(struct cw_htab *t, size_t off)
{
	for (size_t i = 0; i < t->cap; i++) {
		struct cw_hnode *e = t->b[i], *next;

		for (; e; e = next) {
			next = e->next;
			free((char *)e - off);
		}
		t->b[i] = NULL;
	}
	t->n = 0;
}

/* Free the buckets (not the entries: walk them out first). */
static inline void cw_htab__free(struct cw_htab *t)
{
	free(t->b);
	t->b = NULL;
	t->cap = t->n = 0;
}

#endif /* CAUSEWAY_HTAB_H */
