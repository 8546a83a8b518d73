// SPDX-License-Identifier: MIT
/*
 * How the exports name nodes and handoffs (docs/model.md §8): one
 * spelling for every format, so that a frame of the flamegraph, a slice of
 * the timeline and a box of the DAG read the same.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "names.h"
#include "../lib/esc.h"

static const struct {
	const char *type, *word;
} kind_words[] = {
	{ "io_request", "io_uring" }, { "block_request", "block" }, { "work_item", "work" },
	{ "timer", "timer" },	      { "packet", "packet" },	    { "runtime_task", "task" },
	{ "request", "request" },     { "resource", "resource" },   { "thread", "thread" },
	{ "process", "process" },
};

const char *cw_x__kind_word(const char *type)
{
	if (!type)
		return "unknown";
	for (size_t i = 0; i < sizeof(kind_words) / sizeof(kind_words[0]); i++)
		if (!strcmp(kind_words[i].type, type))
			return kind_words[i].word;
	return type;
}

bool cw_x__is_context(const char *type)
{
	return type && (!strcmp(type, "thread") || !strcmp(type, "process"));
}

void cw_x__node_text(char *buf, size_t cap, const struct cw_xnode *n)
{
	char name[96];

	if (!n->type) {
		snprintf(buf, cap, "unknown");
		return;
	}
	if (n->name && *n->name)
		cw_esc_snprint(name, sizeof(name), n->name);
	else if (cw_x__is_context(n->type))
		snprintf(name, sizeof(name), "%s %" PRId64, strcmp(n->type, "thread") ? "pid" : "tid",
			 n->key);
	else
		snprintf(name, sizeof(name), "0x%" PRIx64, (uint64_t)n->key);
	if (cw_x__is_context(n->type))
		snprintf(buf, cap, "%s", name);
	else if (!strcmp(n->type, "runtime_task") && n->name && *n->name)
		/* the go class names its tasks by their start function, the
		 * adapter's are unnamed (docs/model.md §8.1) */
		snprintf(buf, cap, "goroutine %s", name);
	else
		snprintf(buf, cap, "%s %s", cw_x__kind_word(n->type), name);
}

const char *cw_x__conf_suffix(const char *confidence)
{
	if (!confidence || !strcmp(confidence, "observed"))
		return "";
	return !strcmp(confidence, "reconstructed") ? " (reconstructed)" : " (unknown)";
}

void cw_x__hop_text(char *buf, size_t cap, const struct cw_xhop *h)
{
	char src[128], dst[128];
	const char *conf = cw_x__conf_suffix(h->confidence);
	int n;

	cw_x__node_text(dst, sizeof(dst), &h->dst);
	if (!h->src.type) {
		char why[64];

		cw_esc_snprint(why, sizeof(why), h->reason ? h->reason : "no cause");
		n = snprintf(buf, cap, "%s from unknown: %s", h->type, why);
	} else if (h->src_from && *h->src_from) {
		/* a packet: who sent it says more than its addresses */
		char from[64];

		cw_esc_snprint(from, sizeof(from), h->src_from);
		n = snprintf(buf, cap, "%s from %s", cw_x__kind_word(h->src.type), from);
		if (strcmp(h->type, "wake") && n > 0 && (size_t)n < cap)
			n += snprintf(buf + n, cap - (size_t)n, " -> %s", h->type);
	} else if (cw_x__is_context(h->src.type)) {
		cw_x__node_text(src, sizeof(src), &h->src);
		if (cw_x__is_context(h->dst.type) || !strcmp(h->dst.type ? h->dst.type : "", "request"))
			n = snprintf(buf, cap, "%s%s from %s",
				     h->reason && !strcmp(h->reason, "futex") ? "futex " : "", h->type,
				     src);
		else
			n = snprintf(buf, cap, "%s %s", dst, h->type);
	} else {
		cw_x__node_text(src, sizeof(src), &h->src);
		n = snprintf(buf, cap, "%s -> %s", src, h->type);
	}
	if (n > 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n, "%s", conf);
}

void cw_x__cause_text(char *buf, size_t cap, const struct cw_xhop *h)
{
	char what[160];

	if (!h->src.type) {
		cw_esc_snprint(what, sizeof(what), h->reason ? h->reason : "no cause");
		snprintf(buf, cap, "unknown (%s)", what);
	} else if (cw_x__is_context(h->src.type)) {
		cw_x__node_text(what, sizeof(what), &h->src);
		snprintf(buf, cap, "%s from %s",
			 h->reason && !strcmp(h->reason, "futex") ? "futex" : "wake", what);
	} else if (h->src_from && *h->src_from) {
		cw_esc_snprint(what, sizeof(what), h->src_from);
		snprintf(buf, cap, "packet from %s", what);
	} else {
		cw_x__node_text(buf, cap, &h->src);
	}
}
