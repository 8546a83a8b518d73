// SPDX-License-Identifier: MIT
/*
 * The kallsyms snapshot (ksyms.h): the kept lines of /proc/kallsyms in
 * one buffer, cut into records at line ends.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/events.h"
#include "trace/format.h"
#include "trace/writer.h"
#include "capture/ksyms.h"

#define PAD8(n) (((n) + 7u) & ~(size_t)7u)
/* Text per record: whole lines, well under the 64 KiB a record's 16-bit
 * size allows. */
#define KSYMS_CHUNK (60u << 10)

struct ksyms_snap {
	char *text; /* kept lines, each ending in '\n' */
	size_t len, cap;
	size_t count;
	int hidden;
};

static int keep(const char *line, size_t n)
{
	const char *sp = memchr(line, ' ', n), *name;

	/* "ADDR TYPE NAME[\t[MODULE]]" */
	if (!sp || (size_t)(sp - line) + 3 > n || sp[2] != ' ')
		return 0;
	if (!strchr("tTwW", sp[1]))
		return 0;
	name = sp + 3;
	return strncmp(name, "__pfx_", 6) != 0;
}

static int append(struct ksyms_snap *s, const char *line, size_t n)
{
	if (s->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1u << 20;
		char *t;

		while (cap < s->len + n + 1)
			cap *= 2;
		t = realloc(s->text, cap);
		if (!t)
			return -ENOMEM;
		s->text = t;
		s->cap = cap;
	}
	memcpy(s->text + s->len, line, n);
	s->text[s->len + n] = '\n';
	s->len += n + 1;
	s->count++;
	return 0;
}

struct ksyms_snap *ksyms_snap__read(const char *path)
{
	struct ksyms_snap *s = calloc(1, sizeof(*s));
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int nonzero = 0, err = 0;
	FILE *f;

	if (!s)
		return NULL;
	f = fopen(path, "re");
	if (!f) {
		err = errno;
		free(s);
		errno = err;
		return NULL;
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			n--;
		if (!keep(line, (size_t)n))
			continue;
		/* kptr_restrict shows every address as zeros */
		if (!nonzero)
			nonzero = strspn(line, "0") < strcspn(line, " ");
		if (append(s, line, (size_t)n)) {
			err = ENOMEM;
			break;
		}
	}
	if (!err && ferror(f))
		err = EIO;
	free(line);
	fclose(f);
	if (err) {
		ksyms_snap__free(s);
		errno = err;
		return NULL;
	}
	if (!nonzero && s->count) {
		s->hidden = 1;
		s->len = s->count = 0;
	}
	return s;
}

size_t ksyms_snap__count(const struct ksyms_snap *s)
{
	return s ? s->count : 0;
}

size_t ksyms_snap__bytes(const struct ksyms_snap *s)
{
	return s ? s->len : 0;
}

int ksyms_snap__hidden(const struct ksyms_snap *s)
{
	return s ? s->hidden : 0;
}

/*
 * The segment writer groups a segment's records by their first 8 bytes
 * (type and size among them) and stores each group column by column: the
 * text of two records of one size would be interleaved byte by byte,
 * leaving LZ4 nothing to match (1.2x instead of 2.9x on 6.18). So no two
 * snapshot records of one segment have the same size: a record that
 * would repeat one gives up its last lines to the next.
 */
#define SIZES_MAX 64

static int size_used(const uint16_t *used, int n, size_t len)
{
	for (int i = 0; i < n; i++)
		if (used[i] == len)
			return 1;
	return 0;
}

int ksyms_snap__write(const struct ksyms_snap *s, struct cw_writer *w, uint64_t ts,
		      size_t seg_size)
{
	uint16_t used[SIZES_MAX];
	struct cw_meta_blob *b;
	size_t off = 0, chunk;
	int nused = 0, err = 0;

	if (!s || !s->len)
		return 0;
	if (!seg_size)
		seg_size = CW_SEG_DEFAULT_RAW;
	/* Small segments get several records each rather than one too big. */
	chunk = seg_size / 2 < KSYMS_CHUNK ? seg_size / 2 : KSYMS_CHUNK;
	if (chunk < 4096)
		chunk = 4096;
	b = malloc(PAD8(sizeof(*b) + chunk));
	if (!b)
		return -ENOMEM;
	while (off < s->len && !err) {
		size_t n = s->len - off, len;

		if (n > chunk)
			n = chunk;
		for (;;) {
			/* whole lines: back to the end of one */
			while (n && s->text[off + n - 1] != '\n')
				n--;
			len = PAD8(sizeof(*b) + n);
			if (!n || !size_used(used, nused, len))
				break;
			n--;
		}
		if (!n) { /* a line longer than a record: not kallsyms */
			err = -EINVAL;
			break;
		}
		if (nused == SIZES_MAX ||
		    (cw_writer__pending(w) && cw_writer__pending(w) + len > seg_size)) {
			err = cw_writer__split(w);
			if (err)
				break;
			nused = 0;
		}
		memset(b, 0, len);
		b->hdr.type = CW_REC_META_KSYMS;
		b->hdr.size = (uint16_t)len;
		b->hdr.cpu = 0xffff;
		b->hdr.ts = ts;
		b->len = (uint32_t)n;
		memcpy(b + 1, s->text + off, n);
		err = cw_writer__append(w, b, len);
		used[nused++] = (uint16_t)len;
		off += n;
	}
	free(b);
	return err;
}

void ksyms_snap__free(struct ksyms_snap *s)
{
	if (!s)
		return;
	free(s->text);
	free(s);
}
