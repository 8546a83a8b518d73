// SPDX-License-Identifier: MIT
/*
 * Dump: print segments in the record text form (text.h). cw_text_format
 * checks every line by parsing it back, so a dump never silently loses a
 * byte of a record.
 */
#include <errno.h>
#include <stdio.h>

#include "trace/format.h"
#include "dump.h"

static const char *seg_type_name(uint16_t t)
{
	switch (t) {
	case CW_SEG_META:
		return "meta";
	case CW_SEG_EVENTS:
		return "events";
	case CW_SEG_FINAL:
		return "final";
	}
	return "unknown";
}

int cw_dump_segment(FILE *out, struct cw_text *t, const struct cw_segment *seg)
{
	const struct cw_hdr *h;
	size_t pos = 0;

	fprintf(out, "# segment seq=%llu type=%s offset=%llu records=%u\n",
		(unsigned long long)seg->seq, seg_type_name(seg->seg_type),
		(unsigned long long)seg->offset, seg->nrec);
	while ((h = cw_segment__next_record(seg, &pos)) && !ferror(out))
		fprintf(out, "%s\n", cw_text_format(t, (const uint8_t *)h, h->size));
	fprintf(out, "!seal %s\n", seg_type_name(seg->seg_type));
	if (fflush(out) || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

int cw_dump_reader(FILE *out, struct cw_reader *r, int *write_err)
{
	struct cw_text *t = cw_text__new();
	struct cw_segment seg;
	int ret;

	*write_err = 0;
	if (!t)
		return -ENOMEM;
	while ((ret = cw_reader__next(r, &seg)) > 0)
		if (!*write_err)
			*write_err = cw_dump_segment(out, t, &seg);
	cw_text__free(t);
	return ret;
}
