// SPDX-License-Identifier: MIT
/*
 * What capture/gobin.c finds in a Go binary, one fact a line, for
 * tests/go/gobin.sh to hold against go, objdump and gdb.
 *
 *   gobindump BINARY             every fact of gobin_open ("spawnsite OFF
 *                                vaddr VADDR reg R at call|return-site|ret":
 *                                where spawns are read, gobin.h)
 *   gobindump --bounds FUNC BINARY
 *                                the decoder's instruction starts in FUNC
 *                                ("insn VADDR"), then "end ok" or "end
 *                                refused at +0xOFF"
 *   gobindump --check-all BINARY every function of .symtab of a size
 *                                decoded: "insn VADDR" lines, a "func
 *                                START END ok|refused NAME" line each, and
 *                                a summary "functions N exact M empty E"
 *                                (E: symbols of size 0, not decoded)
 * Addresses in --bounds and --check-all are 16 hex digits, no 0x, so that
 * awk compares them as strings.
 *   gobindump --name 0xPC BINARY gobin_func_name(PC)
 *
 * Exit 0 when gobin_open returned 0, 1 when it refused the binary (a
 * "refused ERRNO: why" line), 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/gobin.h"
#include "lib/esc.h"

static const char *errname(int err)
{
	switch (err) {
	case -ENOENT: return "ENOENT";
	case -ENODATA: return "ENODATA";
	case -ENOTSUP: return "ENOTSUP";
	case -ENOEXEC: return "ENOEXEC";
	case -EINVAL: return "EINVAL";
	default: return "other";
	}
}

static void dump(const struct gobin *b)
{
	printf("version %s\nmajor %d\nminor %d\nregabi %d\n", b->version, b->major, b->minor,
	       b->regabi);
	for (int f = 0; f < GOFN_N; f++) {
		const struct gobin_fn_info *fi = &b->fn[f];
		const char *n = gobin_fn_name(f);

		printf("fn %s found %d addr 0x%llx size 0x%llx off 0x%llx\n", n, fi->found,
		       (unsigned long long)fi->addr, (unsigned long long)fi->size,
		       (unsigned long long)fi->off);
		if (!fi->found)
			continue;
		printf("probe %s 0x%llx vaddr 0x%llx\n", n, (unsigned long long)fi->probe_off,
		       (unsigned long long)(fi->probe_off - fi->off + fi->addr));
		printf("ret %s ok %d n %u\n", n, fi->ret_ok, fi->nret);
		for (uint32_t i = 0; i < fi->nret; i++)
			printf("retoff %s 0x%llx vaddr 0x%llx\n", n, (unsigned long long)fi->ret_off[i],
			       (unsigned long long)(fi->ret_off[i] - fi->off + fi->addr));
		printf("nargs %s %u\n", n, fi->nargs);
		for (uint32_t i = 0; i < fi->nargs && i < GOBIN_MAX_ARGS; i++) {
			printf("arg %s %u ", n, i);
			cw_esc_fput(stdout, fi->arg_name[i][0] ? fi->arg_name[i] : "-");
			printf(" reg %d dwarf %d abi %d\n", fi->arg_reg[i], fi->arg_dwarf[i], fi->arg_abi[i]);
		}
	}
	printf("field runtime.g.goid %d\nfield runtime.g.m %d\nfield runtime.g.startpc %d\nfield runtime.m.curg %d\n"
	       "field runtime.m.procid %d\nfield runtime.funcval.fn %d\n"
	       "field runtime.pollDesc.rg %d\nfield runtime.pollDesc.wg %d\n"
	       "field net/http.Request.Method %d\nfield net/http.Request.URL %d\n"
	       "field net/url.URL.Path %d\n",
	       b->g_goid, b->g_m, b->g_startpc, b->m_curg, b->m_procid, b->funcval_fn, b->pd_rg, b->pd_wg,
	       b->req_method, b->req_url, b->url_path);
	printf("spawn n %u\n", b->nspawn);
	for (uint32_t i = 0; i < b->nspawn; i++) {
		static const char *const kinds[] = { "ret", "return-site", "call" };
		const struct gobin_site *s = &b->spawn[i];

		printf("spawnsite 0x%llx vaddr 0x%llx reg %d at %s\n", (unsigned long long)s->off,
		       (unsigned long long)s->vaddr, s->reg, s->kind < 3 ? kinds[s->kind] : "?");
	}
	printf("nreasons %u\n", b->nreasons);
	for (uint32_t i = 0; i < b->nreasons; i++) {
		printf("reason %u ", i);
		if (b->reasons[i]) {
			putchar('"');
			cw_esc_fput(stdout, b->reasons[i]);
			puts("\"");
		} else {
			puts("unreadable");
		}
	}
	printf("nfuncs %u\n", b->nfuncs);
}

/* Decode [addr, addr+size), printing each start with @print. @return
 * -1 when it decodes to the end, else the offset it stopped at. */
static long long decode(int fd, const struct gobin *b, uint64_t addr, uint64_t size, int print)
{
	uint64_t off, pos = 0;
	uint8_t *code;

	if (!size || size > (64u << 20) || gobin_vaddr_off(b, addr, size, &off))
		return 0;
	code = malloc(size);
	if (!code || pread(fd, code, size, (off_t)off) != (ssize_t)size) {
		free(code);
		return 0;
	}
	while (pos < size) {
		int ret, n = gobin_insn_len(code + pos, size - pos, &ret);

		if (!n)
			break;
		if (print)
			printf("insn %016llx\n", (unsigned long long)(addr + pos));
		pos += (uint64_t)n;
	}
	free(code);
	return pos == size ? -1 : (long long)pos;
}

int main(int argc, char **argv)
{
	const char *mode = NULL, *arg = NULL, *path;
	struct gobin *b;
	char why[512];
	int err, fd, rc = 0;

	if (argc == 4 && (!strcmp(argv[1], "--bounds") || !strcmp(argv[1], "--name"))) {
		mode = argv[1];
		arg = argv[2];
	} else if (argc == 3 && !strcmp(argv[1], "--check-all")) {
		mode = argv[1];
	} else if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: gobindump [--bounds FUNC | --check-all | --name 0xPC] BINARY\n");
		return 2;
	}
	path = argv[argc - 1];
	err = gobin_open(path, &b, why, sizeof(why));
	if (err) {
		printf("refused %s: ", errname(err));
		cw_esc_fput(stdout, why);
		putchar('\n');
		return 1;
	}
	if (why[0]) {
		printf("warning ");
		cw_esc_fput(stdout, why);
		putchar('\n');
	}
	if (!mode) {
		dump(b);
		gobin_free(b);
		return 0;
	}
	if (!strcmp(mode, "--name")) {
		const char *n = gobin_func_name(b, strtoull(arg, NULL, 0));

		if (n)
			cw_esc_fput(stdout, n);
		else
			printf("(none)");
		putchar('\n');
		gobin_free(b);
		return 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(path);
		gobin_free(b);
		return 1;
	}
	if (!strcmp(mode, "--bounds")) {
		int found = 0;

		for (uint32_t i = 0; i < b->nfuncs && !found; i++) {
			long long at;

			if (strcmp(b->names + b->funcs[i].name, arg))
				continue;
			found = 1;
			at = decode(fd, b, b->funcs[i].addr, b->funcs[i].size, 1);
			if (at < 0)
				printf("end ok\n");
			else
				printf("end refused at +0x%llx\n", at);
		}
		if (!found) {
			printf("no function %s\n", arg);
			rc = 1;
		}
	} else {
		uint32_t exact = 0, empty = 0;

		for (uint32_t i = 0; i < b->nfuncs; i++) {
			const struct gobin_func *f = &b->funcs[i];
			/* the starts of a function decoded whole only: a refused
			 * one's are not boundaries anyone relies on */
			long long at = decode(fd, b, f->addr, f->size, 0);

			if (at < 0)
				decode(fd, b, f->addr, f->size, 1);
			exact += f->size && at < 0;
			if (!f->size) {
				empty++;
				continue;
			}
			printf("func %016llx %016llx %s ", (unsigned long long)f->addr,
			       (unsigned long long)(f->addr + f->size), at < 0 ? "ok" : "refused");
			cw_esc_fput(stdout, b->names + f->name);
			putchar('\n');
		}
		printf("functions %u exact %u empty %u\n", b->nfuncs - empty, exact, empty);
	}
	close(fd);
	gobin_free(b);
	return rc;
}
