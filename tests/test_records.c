// SPDX-License-Identifier: MIT
/*
 * schema/records.def against what else describes the record types:
 *  - schema/format.md (embedded at build time) documents every type of
 *    the .def under its number and CW_REC_ name, with its size and, for
 *    a type that grew in a minor version, its older size (the .def's
 *    minimum), and documents no type the .def lacks;
 *  - the names are unique, the numbers are within their class's range
 *    of 16 and name a class of schema/classes.def;
 *  - schema/fields.def spells every struct the .def names, once, each in
 *    a table of its own rows that gives at least one of its members:
 *    a type without one could not be dumped or written in a fixture
 *    (analyze/text.c would not build, and this says which);
 *  - cw_sample_ok, the drain's and the analyzer's rule, takes what
 *    bpf/sample.bpf.c writes and refuses each way of not being that.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/check.h"
#include "schema/names.h"
#include "schema/records.h"
#include "format_md.h"

static const struct {
	const char *id; /* CW_REC_ suffix */
	unsigned type;
	const char *st;
} defs[] = {
#define CW_REC(id, type, name, st, writer) { #id, type, #st },
#include "schema/records.def"
};
#define NDEFS (sizeof(defs) / sizeof(defs[0]))

/* What format.md says of one type. */
struct doc {
	unsigned type;
	char id[48];
	unsigned size, older; /* older: 0 when none is given */
	int n;		      /* times documented */
};

static struct doc docs[64];
static size_t ndocs;

static struct doc *doc_of(unsigned type, const char *id)
{
	for (size_t i = 0; i < ndocs; i++)
		if (docs[i].type == type && !strcmp(docs[i].id, id))
			return &docs[i];
	if (ndocs == sizeof(docs) / sizeof(docs[0]))
		return NULL;
	docs[ndocs].type = type;
	snprintf(docs[ndocs].id, sizeof(docs[ndocs].id), "%s", id);
	return &docs[ndocs++];
}

/* Every "0xNN `CW_REC_X`" of @line (a heading or a table row), each with
 * @size and @older. @return 0, or -1 when the table is full. */
static int note(const char *line, unsigned size, unsigned older)
{
	for (const char *p = line; (p = strstr(p, "0x")); p += 2) {
		unsigned type;
		char id[48];

		if (sscanf(p, "0x%x `CW_REC_%47[A-Z0-9_]`", &type, id) != 2 &&
		    sscanf(p, "0x%x | `CW_REC_%47[A-Z0-9_]`", &type, id) != 2)
			continue;
		struct doc *d = doc_of(type, id);

		if (!d)
			return -1;
		d->size = size;
		d->older = older;
		d->n++;
	}
	return 0;
}

/*
 * The record headings ("#### 0x10 `CW_REC_SWITCH` — sched_switch (64; 48
 * in 1.0)", "(24 + key + value, padded)", "(32, format 1.5)") and the
 * rows of the record tables ("| 0x20 | `CW_REC_URING_CREATE` | 56 | ...").
 */
static int parse_format_md(void)
{
	const char *p = cw_format_md;

	while (*p) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char line[4096];
		unsigned size = 0, older = 0;

		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		p += len + !!end;
		if (!strncmp(line, "#### 0x", 7) && strstr(line, "`CW_REC_")) {
			char *paren = strrchr(line, '(');

			if (!paren || sscanf(paren, "(%u", &size) != 1)
				return fprintf(stderr, "format.md: no size in \"%s\"\n", line), -1;
			if (strchr(paren, ';'))
				sscanf(strchr(paren, ';'), "; %u", &older);
			*paren = '\0';
		} else if (!strncmp(line, "| 0x", 4) && strstr(line, "`CW_REC_")) {
			char *col = strchr(line + 1, '|');

			col = col ? strchr(col + 1, '|') : NULL;
			if (!col || sscanf(col, "| %u", &size) != 1)
				return fprintf(stderr, "format.md: no size in \"%s\"\n", line), -1;
			*col = '\0';
		} else {
			continue;
		}
		if (note(line, size, older))
			return -1;
	}
	return 0;
}

static void test_format_md(void)
{
	CHECK(!parse_format_md(), "format.md's record tables could not be read");
	for (size_t i = 0; i < NDEFS; i++) {
		const struct cw_rec_info *ri = cw_rec_info(defs[i].type);
		struct doc *d = NULL;

		for (size_t k = 0; k < ndocs && !d; k++)
			if (docs[k].type == defs[i].type)
				d = &docs[k];
		CHECK(ri, "0x%02x: no cw_rec_info", defs[i].type);
		CHECK(d, "format.md does not document 0x%02x CW_REC_%s", defs[i].type, defs[i].id);
		CHECK(!strcmp(d->id, defs[i].id), "format.md calls 0x%02x CW_REC_%s, records.def %s",
		      defs[i].type, d->id, defs[i].id);
		CHECK(d->n == 1, "format.md documents 0x%02x %d times", defs[i].type, d->n);
		CHECK(d->size == ri->size, "format.md: 0x%02x CW_REC_%s is %u bytes, events.h %u",
		      defs[i].type, defs[i].id, d->size, ri->size);
		CHECK(d->older == (ri->min_size == ri->size ? 0u : ri->min_size),
		      "format.md: 0x%02x CW_REC_%s's older layout is %u bytes, records.def's "
		      "minimum %u (the same as its size: none)",
		      defs[i].type, defs[i].id, d->older, ri->min_size);
	}
	for (size_t k = 0; k < ndocs; k++) {
		size_t i = 0;

		while (i < NDEFS && defs[i].type != docs[k].type)
			i++;
		CHECK(i < NDEFS, "format.md documents 0x%02x CW_REC_%s, which records.def lacks",
		      docs[k].type, docs[k].id);
	}
	CHECK(ndocs == NDEFS, "format.md documents %zu types, records.def has %zu", ndocs,
	      (size_t)NDEFS);
	printf("ok format_md (%zu types)\n", ndocs);
}

static void test_table(void)
{
	for (size_t i = 0; i < NDEFS; i++) {
		const struct cw_rec_info *ri = cw_rec_info(defs[i].type);

		CHECK(defs[i].type && defs[i].type < CW_REC_NTYPES, "0x%02x out of range",
		      defs[i].type);
		CHECK(cw_class_kind(CW_CLASS_OF(defs[i].type)) >= 0,
		      "0x%02x: class %u is not in classes.def", defs[i].type,
		      CW_CLASS_OF(defs[i].type));
		CHECK(ri->min_size >= sizeof(struct cw_hdr) && ri->min_size <= ri->size &&
			      ri->size % 8 == 0,
		      "0x%02x: size %u, minimum %u", defs[i].type, ri->size, ri->min_size);
		for (size_t k = 0; k < i; k++)
			CHECK(defs[k].type != defs[i].type && strcmp(ri->name, cw_rec_info(defs[k].type)->name),
			      "0x%02x and 0x%02x: one number or one name", defs[k].type, defs[i].type);
		CHECK(cw_rec_name(defs[i].type) == ri->name, "0x%02x: two names", defs[i].type);
	}
	CHECK(!cw_rec_info(0) && !cw_rec_info(0x0f) && !cw_rec_info(CW_REC_NTYPES),
	      "an unknown type is known");
	printf("ok table\n");
}

/* fields.def's rows in order, each with the struct it names: 'b' a table
 * begins, 'f' a member of the struct, 'h' of its header, 'e' it ends. */
static const struct {
	char row;
	const char *st;
} field_rows[] = {
#define CW_FIELDS(st) { 'b', #st },
#define CW_FIELD(st, key, kind, member, arg, opt) { 'f', #st },
#define CW_HFIELD(st, key, kind, member, arg, opt) { 'h', #st },
#define CW_FIELDS_END(st) { 'e', #st },
#include "schema/fields.def"
};

/* The row of fields.def where @st's table begins, or -1. */
static long table_of(const char *st)
{
	for (size_t r = 0; r < CW_ARRAY_SIZE(field_rows); r++)
		if (field_rows[r].row == 'b' && !strcmp(field_rows[r].st, st))
			return (long)r;
	return -1;
}

static void test_fields(void)
{
	const char *open = NULL;
	size_t tables = 0, own = 0;

	for (size_t r = 0; r < CW_ARRAY_SIZE(field_rows); r++) {
		const char *st = field_rows[r].st;
		size_t i = 0;

		if (field_rows[r].row == 'b') {
			CHECK(!open, "fields.def: %s's table begins inside %s's", st, open);
			CHECK(table_of(st) == (long)r, "fields.def: two tables of %s", st);
			while (i < NDEFS && strcmp(defs[i].st, st))
				i++;
			CHECK(i < NDEFS, "fields.def: a table of %s, which no type of records.def is",
			      st);
			open = st;
			own = 0;
			tables++;
			continue;
		}
		CHECK(open, "fields.def: a row of %s outside any table", st);
		CHECK(!strcmp(open, st), "fields.def: a row of %s in %s's table", st, open);
		own += field_rows[r].row == 'f';
		if (field_rows[r].row == 'e') {
			CHECK(own, "fields.def: %s's table gives none of its members", st);
			open = NULL;
		}
	}
	CHECK(!open, "fields.def: %s's table does not end", open);
	for (size_t i = 0; i < NDEFS; i++)
		CHECK(table_of(defs[i].st) >= 0,
		      "records.def: CW_REC_%s is a %s, which fields.def has no table of", defs[i].id,
		      defs[i].st);
	printf("ok fields (%zu tables)\n", tables);
}

/* A CPU sample as bpf/sample.bpf.c writes it: @nk kernel frames, @nu user
 * frames, @nr registers, @len stack bytes. */
static size_t make_sample(void *buf, int nk, int nu, int nr, int len)
{
	struct cw_sample *s = buf;
	size_t size = sizeof(*s) + 8u * (nk + nu + nr) + ((len + 7u) & ~7u);

	memset(buf, 0, size);
	s->hdr.type = CW_REC_SAMPLE_CPU;
	s->hdr.size = (uint16_t)size;
	s->period = 10101010;
	s->keep = CW_KEEP_ALL;
	s->nkernel = (uint16_t)nk;
	s->nuser = (uint16_t)nu;
	s->nregs = (uint16_t)nr;
	s->stack_len = (uint16_t)len;
	return size;
}

static void test_sample_ok(void)
{
	static uint64_t buf[8192];
	struct cw_sample *s = (void *)buf;
	size_t n;

	n = make_sample(buf, 3, 5, 0, 0);
	CHECK(cw_sample_ok(s, n), "frame-pointer sample refused");
	CHECK(!cw_sample_ok(s, n - 8) && !cw_sample_ok(s, n + 8), "a size off by 8 taken");
	n = make_sample(buf, 3, 0, CW_SAMPLE_NREGS_X86_64, 1001);
	CHECK(cw_sample_ok(s, n), "dwarf sample refused");
	n = make_sample(buf, 0, 0, 0, 0);
	s->hdr.type = CW_REC_SAMPLE_OFFCPU;
	s->period = 0;
	CHECK(cw_sample_ok(s, n), "off-CPU sample without period refused");
	s->hdr.type = CW_REC_SAMPLE_CPU;
	CHECK(!cw_sample_ok(s, n), "CPU sample without period taken");
	n = make_sample(buf, 0, 0, 3, 0);
	CHECK(!cw_sample_ok(s, n), "3 registers taken (the drain's copy took them)");
	n = make_sample(buf, 0, 2, CW_SAMPLE_NREGS_X86_64, 8);
	CHECK(!cw_sample_ok(s, n), "user frames with registers taken");
	n = make_sample(buf, 0, 0, 0, 8);
	CHECK(!cw_sample_ok(s, n), "a stack copy without registers taken");
	n = make_sample(buf, CW_SAMPLE_MAX_FRAMES + 1, 0, 0, 0);
	CHECK(!cw_sample_ok(s, n), "too many kernel frames taken");
	n = make_sample(buf, 1, 1, 0, 0);
	s->keep = 0;
	CHECK(!cw_sample_ok(s, n), "keep 0 taken");
	s->keep = CW_KEEP_ALL + 1;
	CHECK(!cw_sample_ok(s, n), "keep above 2^32 taken");
	CHECK(!cw_sample_ok(s, sizeof(*s) - 8), "a short buffer taken");
	printf("ok sample_ok\n");
}

int main(void)
{
	(void)passes;
	test_table();
	test_format_md();
	test_fields();
	test_sample_ok();
	if (failures)
		fprintf(stderr, "%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
