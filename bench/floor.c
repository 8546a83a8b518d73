// SPDX-License-Identifier: MIT
/*
 * floor: the least any BPF recorder could cost on causeway's hooks, for
 * bench/capture. For the chosen classes it attaches one empty program
 * (return 0) to every hook causeway-capture would attach to on this
 * kernel, and leaves them running until SIGINT or SIGTERM: what is left
 * of a traced workload's slowdown is the kernel's cost of running a BPF
 * program at each event, which no recorder avoids. causeway's cost above
 * it is what its programs do (filter, reserve, fill, submit) and its
 * consumer.
 *
 *   floor [-e CLASS,...]     (default: sched)
 *
 * Which hooks: the capture's own decision. The floor links the class
 * table and the kernel probes of the capture (capture/classes.c,
 * capture/probe.c) and enables, for each program of a chosen class that
 * classes__prog_fits() on this kernel, the empty program on the same hook
 * (one per hook: the variants of a tracepoint share it). The empty
 * programs come from bench/floor-gen.sh, which reads them off the same
 * table at build time. A class the capture cannot record here is an
 * error, named with why.
 *
 * Once everything is attached it prints one line on stdout:
 *   floor: attached N programs: HOOK,...
 * which is the signal that the workload may start.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "capture/classes.h"
#include "capture/probe.h"
#include "schema/names.h"
#include "floor.skel.h"

struct env {
	bool requested[CW_CLASS_MAX];
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int parse_classes(struct env *env, const char *list)
{
	char *copy = strdup(list), *save = NULL;
	int n = 0, err = 0;

	if (!copy)
		return -ENOMEM;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const struct cw_class_desc *c = classes__find(tok);

		if (!c) {
			fprintf(stderr, "floor: -e: unknown class '%s'\n", tok);
			err = -EINVAL;
			break;
		}
		env->requested[c->id] = true;
		n++;
	}
	free(copy);
	return err ? err : n ? 0 : -EINVAL;
}

/* The section a program of @p's kind on @p's hook lives in. */
static void section_of(const struct cw_prog_desc *p, char *buf, size_t len)
{
	static const char *const prefix[] = {
		[CW_PROG_TP_BTF] = "tp_btf/",
		[CW_PROG_TRACEPOINT] = "tracepoint/",
		[CW_PROG_FENTRY] = "fentry/",
		[CW_PROG_FEXIT] = "fexit/",
	};

	snprintf(buf, len, "%s%s", prefix[p->kind], p->tp);
}

static struct bpf_program *floor_prog(struct bpf_object *obj, const char *sec)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
		if (!strcmp(bpf_program__section_name(prog), sec))
			return prog;
	return NULL;
}

int main(int argc, char **argv)
{
	struct env env = { 0 };
	struct cw_class_sel sel;
	struct floor_bpf *skel = NULL;
	struct bpf_link **links = NULL;
	struct bpf_program *prog;
	char attached[4096] = "", skipped[1024] = "", sec[256];
	size_t aoff = 0, soff = 0;
	sigset_t block, old;
	int nprogs = 0, nlinks = 0, opt, err = 0;

	while ((opt = getopt(argc, argv, "e:h")) != -1) {
		if (opt == 'e' && !parse_classes(&env, optarg))
			continue;
		fprintf(stderr, "usage: floor [-e CLASS,...]\n");
		return 2;
	}
	if (optind != argc) {
		fprintf(stderr, "usage: floor [-e CLASS,...]\n");
		return 2;
	}
	if (!memchr(env.requested, true, sizeof(env.requested)))
		env.requested[CW_CLASS_SCHED] = true;
	libbpf_set_print(libbpf_print);
	/* Blocked until sigsuspend(): a signal between the test of stop and
	 * the wait would otherwise be missed. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	classes__select(&sel, env.requested, 0);
	for (size_t i = 0; i < cw_nclasses; i++) {
		const struct cw_class_state *s = &sel.c[cw_classes[i].id];
		const char *name = cw_name_of(cw_class_names, CW_CLASS_MAX, (unsigned)cw_classes[i].id);

		if (s->status == CW_CLS_OFF || s->status == CW_CLS_OK)
			continue;
		err = -ENOENT;
		fprintf(stderr, "floor: the capture cannot record class %s: %s\n", name,
			s->status == CW_CLS_NO_BUILD ? "not in this build" : s->why);
		goto cleanup;
	}

	skel = floor_bpf__open();
	if (!skel) {
		err = -errno;
		fprintf(stderr, "floor: open: %s\n", strerror(-err));
		goto cleanup;
	}
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, false);
	for (size_t i = 0; i < cw_nclasses; i++) {
		if (sel.c[cw_classes[i].id].status != CW_CLS_OK)
			continue;
		for (const struct cw_prog_desc *p = cw_classes[i].progs; p->name; p++) {
			section_of(p, sec, sizeof(sec));
			if (!classes__prog_fits(p)) {
				/* An optional hook the capture would leave out too;
				 * a variant of a hook another variant fits is no
				 * news. */
				if (p->optional && soff < sizeof(skipped))
					soff += snprintf(skipped + soff, sizeof(skipped) - soff, "%s%s",
							 soff ? "," : "", sec);
				continue;
			}
			prog = floor_prog(skel->obj, sec);
			if (!prog) {
				err = -ENOENT;
				fprintf(stderr, "floor: no empty program on %s: the floor was built from an older capture/classes.c\n",
					sec);
				goto cleanup;
			}
			if (!bpf_program__autoload(prog))
				nprogs++;
			bpf_program__set_autoload(prog, true);
		}
	}
	if (*skipped)
		fprintf(stderr, "floor: optional, not on this kernel, skipped as the capture would: %s\n",
			skipped);
	err = floor_bpf__load(skel);
	if (err) {
		fprintf(stderr, "floor: load: %s\n", strerror(-err));
		goto cleanup;
	}
	links = calloc((size_t)nprogs + 1, sizeof(*links));
	if (!links) {
		err = -ENOMEM;
		fprintf(stderr, "floor: %s\n", strerror(-err));
		goto cleanup;
	}
	bpf_object__for_each_program(prog, skel->obj) {
		if (!bpf_program__autoload(prog))
			continue;
		links[nlinks] = bpf_program__attach(prog);
		if (!links[nlinks]) {
			err = -errno;
			fprintf(stderr, "floor: attach %s: %s\n", bpf_program__section_name(prog),
				strerror(-err));
			goto cleanup;
		}
		nlinks++;
		if (aoff < sizeof(attached))
			aoff += snprintf(attached + aoff, sizeof(attached) - aoff, "%s%s",
					 aoff ? "," : "", bpf_program__section_name(prog));
	}
	printf("floor: attached %d programs: %s\n", nlinks, attached);
	fflush(stdout);
	while (!stop)
		sigsuspend(&old);

cleanup:
	for (int i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	free(links);
	floor_bpf__destroy(skel);
	probe__cleanup();
	return err ? 1 : 0;
}
