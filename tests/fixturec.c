// SPDX-License-Identifier: MIT
/*
 * fixturec: compile a human-readable event script into a .cwt trace with
 * the real segment writer, so that fixture traces are written by the code
 * that writes real ones, and damaged traces are made by damaging real ones.
 *
 *   fixturec IN.events OUT.cwt
 *
 * One record or directive per line; '#' comments. Record lines use the
 * record text syntax of analyze/text.h (the output of
 * `causeway-analyze --dump` compiles back with this tool):
 *
 *   kv ts=0 key=kernel_release value="6.18.0"
 *   task ts=0 tid=1 pid=1 ppid=0 comm=init exe=/sbin/init
 *   switch ts=1000 cpu=0 prev=100/100 next=0/0 prev_state=1 [preempt=1] prev_prio=120 next_prio=120
 *   waking|wakeup|wakeup_new ts= cpu= ctx=task|softirq|hardirq|nmi|unknown waker=T wakee=T target_cpu= prio=
 *   fork ts= cpu= parent=T child=T thread=0|1 clone_flags=0x11 comm=worker [fork_flags=]
 *   exec ts= cpu= task=T old_tid= comm= filename=
 *   exit ts= cpu= task=T group_dead=0|1 code= [exit_flags=]
 *   rename ts= cpu= task=T old= new=
 *   account ts= cpu= window= ring=edge|sample|map class=meta|sched|... written= lost=
 *   mmap ts= cpu= task=T start= len= pgoff= [prot= mflags= build_id=HEX] path=
 *   sample_cpu|sample_offcpu ts= cpu= task=T [start=] period= keep=0x100000000
 *            [kernel=A,A,...] [user=A,...] [regs=R x17] [stack=HEX]
 *   raw type=0x7f size=24 ts= cpu= [body=HEX]   (any type, zero body by default)
 *
 * Every record also takes ctx= and flags= (the cw_hdr fields); the sched
 * records take their witnesses (prev_start=, waker_start=, start=, ...).
 *
 * Directives:
 *   !seal meta|events|final   seal the pending records as that segment type
 *                             (at end of input, pending records are sealed as
 *                             events; no final segment is added by itself;
 *                             records past the segment size are sealed as
 *                             meta before the first !seal, as events after)
 *   !segment-size N           writer segment size; before any record
 *   !corrupt header [at=N]    flip all bits of byte N (default 20, in seq) of
 *                             the last written segment's header; any byte of
 *                             0..63 leaves the header checksum wrong
 *   !corrupt payload [at=N]   same for byte N of its stored payload (default:
 *                             the middle of the payload)
 *   !set-major N              set the last segment's major version and fix
 *                             its header checksum
 *   !truncate N               cut N bytes off the end of the file so far
 *   !garbage N [seed=S]       append N pseudo-random bytes (xorshift64*,
 *                             seed default 1); sequence numbers go on
 *   !empty                    discard everything so far (an empty file unless
 *                             more lines follow)
 *
 * Errors: "IN.events:LINE: message" on stderr, exit 2, no output file left
 * behind. I/O errors exit 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schema/events.h"
#include "trace/format.h"
#include "trace/writer.h"
#include "analyze/text.h"

struct env {
	const char *in, *out;
	int fd;
	struct cw_writer *w;
	struct cw_writer_opts wo;
	int used;	/* records or segments written since the last reset */
	int have_last;
	uint64_t last_off, last_end; /* the last written segment */
	unsigned int line;
};

static struct env env = { .fd = -1 };

static void fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

static void fail(int code, const char *fmt, ...)
{
	va_list ap;

	if (code == 2)
		fprintf(stderr, "%s:%u: ", env.in, env.line);
	else
		fprintf(stderr, "fixturec: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cw_writer__free(env.w);
	if (env.fd >= 0) {
		close(env.fd);
		unlink(env.out);
	}
	exit(code);
}

static uint64_t cur_off(void)
{
	off_t o = lseek(env.fd, 0, SEEK_CUR);

	if (o < 0)
		fail(1, "%s: lseek: %s", env.out, strerror(errno));
	return (uint64_t)o;
}

/* Run one writer operation and remember where a segment it wrote lies:
 * an append seals at most one segment, at the offset before the call. */
static void writer_op(const uint8_t *rec, size_t len, int seg_type)
{
	struct cw_writer_stats a, b;
	uint64_t off = cur_off();
	int err;

	cw_writer__stats(env.w, &a);
	err = rec ? cw_writer__append(env.w, rec, len) : cw_writer__seal(env.w, (uint16_t)seg_type);
	if (err == -EINVAL)
		fail(2, "record rejected by the segment writer");
	if (err)
		fail(1, "%s: %s", env.out, strerror(-err));
	cw_writer__stats(env.w, &b);
	if (b.segments != a.segments) {
		env.have_last = 1;
		env.last_off = off;
		env.last_end = cur_off();
	}
	env.used = 1;
}

static void new_writer(void)
{
	cw_writer__free(env.w);
	env.w = cw_writer__new(env.fd, &env.wo);
	if (!env.w)
		fail(env.wo.segment_size ? 2 : 1, "cannot start the segment writer: %s",
		     strerror(errno));
	env.used = 0;
	env.have_last = 0;
}

static uint64_t num_arg(const struct cw_tok *t, const char *what, uint64_t max)
{
	struct cw_tok tt = *t;
	uint64_t v;

	if (!tt.val) {
		tt.val = (char *)t->key;
		tt.vlen = strlen(t->key);
	}
	if (cw_text_num(&tt, &v, NULL) || v > max)
		fail(2, "%s: bad number '%s'", what, tt.val);
	return v;
}

static void rw_byte(uint64_t off, int flip, const uint8_t *data, size_t len)
{
	uint8_t b;

	if (flip) {
		if (pread(env.fd, &b, 1, (off_t)off) != 1)
			fail(2, "byte %llu is past the end of the file", (unsigned long long)off);
		b ^= 0xff;
		data = &b;
		len = 1;
	}
	if (pwrite(env.fd, data, len, (off_t)off) != (ssize_t)len)
		fail(1, "%s: write: %s", env.out, strerror(errno));
}

static void directive(struct cw_tok *tok, int n)
{
	const char *d = tok[0].key;
	uint64_t at, v;
	int k;

	if (!strcmp(d, "!seal")) {
		static const char *const names[] = { "meta", "events", "final" };

		if (n != 2 || tok[1].val)
			fail(2, "usage: !seal meta|events|final");
		for (k = 0; k < 3 && strcmp(tok[1].key, names[k]); k++)
			;
		if (k == 3)
			fail(2, "unknown segment type '%s' (meta, events or final)", tok[1].key);
		writer_op(NULL, 0, CW_SEG_META + k);
	} else if (!strcmp(d, "!segment-size")) {
		if (n != 2 || tok[1].val)
			fail(2, "usage: !segment-size N");
		if (env.used || cw_writer__pending(env.w))
			fail(2, "!segment-size must come before any record");
		env.wo.segment_size = num_arg(&tok[1], "segment size", CW_SEG_MAX_RAW);
		if (!env.wo.segment_size)
			fail(2, "segment size must be at least 1");
		new_writer();
	} else if (!strcmp(d, "!corrupt")) {
		int header;
		uint64_t stored;

		if (n < 2 || n > 3 || tok[1].val || (n == 3 && strcmp(tok[2].key, "at")))
			fail(2, "usage: !corrupt header|payload [at=N]");
		if (!strcmp(tok[1].key, "header"))
			header = 1;
		else if (!strcmp(tok[1].key, "payload"))
			header = 0;
		else
			fail(2, "!corrupt: expected header or payload, got '%s'", tok[1].key);
		if (!env.have_last)
			fail(2, "!corrupt: no segment written yet");
		stored = env.last_end - env.last_off - CW_SEG_HDR_LEN;
		if (header) {
			at = n == 3 ? num_arg(&tok[2], "at", CW_SEG_HDR_LEN - 1) : 20;
		} else {
			if (!stored)
				fail(2, "!corrupt payload: the last segment has no payload");
			at = n == 3 ? num_arg(&tok[2], "at", stored - 1) : stored / 2;
			at += CW_SEG_HDR_LEN;
		}
		rw_byte(env.last_off + at, 1, NULL, 0);
	} else if (!strcmp(d, "!set-major")) {
		uint8_t hb[CW_SEG_HDR_LEN];

		if (n != 2 || tok[1].val)
			fail(2, "usage: !set-major N");
		v = num_arg(&tok[1], "major", 0xffff);
		if (!env.have_last)
			fail(2, "!set-major: no segment written yet");
		if (pread(env.fd, hb, sizeof(hb), (off_t)env.last_off) != (ssize_t)sizeof(hb))
			fail(2, "!set-major: the last segment header is not in the file");
		cw_put16(hb + 8, (uint16_t)v);
		cw_seg_hdr__reseal(hb);
		rw_byte(env.last_off, 0, hb, sizeof(hb));
	} else if (!strcmp(d, "!truncate")) {
		off_t end = lseek(env.fd, 0, SEEK_END);

		if (n != 2 || tok[1].val)
			fail(2, "usage: !truncate N");
		v = num_arg(&tok[1], "truncate", (uint64_t)end);
		if (ftruncate(env.fd, end - (off_t)v) || lseek(env.fd, 0, SEEK_END) < 0)
			fail(1, "%s: truncate: %s", env.out, strerror(errno));
	} else if (!strcmp(d, "!garbage")) {
		uint64_t seed = 1, x;
		uint8_t buf[4096];

		if (n < 2 || n > 3 || tok[1].val || (n == 3 && strcmp(tok[2].key, "seed")))
			fail(2, "usage: !garbage N [seed=S]");
		v = num_arg(&tok[1], "garbage", 1ull << 32);
		if (n == 3)
			seed = num_arg(&tok[2], "seed", UINT64_MAX);
		x = seed ? seed : 0x9e3779b97f4a7c15ull;
		while (v) {
			size_t len = v < sizeof(buf) ? (size_t)v : sizeof(buf);

			for (size_t i = 0; i < len; i++) {
				/* xorshift64*: deterministic on every platform */
				x ^= x >> 12;
				x ^= x << 25;
				x ^= x >> 27;
				buf[i] = (uint8_t)((x * 0x2545f4914f6cdd1dull) >> 56);
			}
			if (write(env.fd, buf, len) != (ssize_t)len)
				fail(1, "%s: write: %s", env.out, strerror(errno));
			v -= len;
		}
	} else if (!strcmp(d, "!empty")) {
		if (n != 1)
			fail(2, "usage: !empty");
		if (ftruncate(env.fd, 0) || lseek(env.fd, 0, SEEK_SET) < 0)
			fail(1, "%s: truncate: %s", env.out, strerror(errno));
		new_writer();
	} else {
		fail(2, "unknown directive '%s'", d);
	}
}

int main(int argc, char **argv)
{
	static uint8_t rec[CW_TEXT_REC_MAX];
	struct cw_tok tok[CW_TEXT_MAXTOK];
	char *line = NULL, msg[256];
	size_t cap = 0;
	FILE *in;
	int n;

	if (argc != 3) {
		fprintf(stderr, "usage: fixturec IN.events OUT.cwt\n");
		return 2;
	}
	env.in = argv[1];
	env.out = argv[2];
	in = fopen(env.in, "r");
	if (!in) {
		fprintf(stderr, "fixturec: %s: %s\n", env.in, strerror(errno));
		return 2;
	}
	env.fd = open(env.out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (env.fd < 0) {
		fprintf(stderr, "fixturec: %s: %s\n", env.out, strerror(errno));
		return 1;
	}
	new_writer();

	for (;;) {
		ssize_t got = getline(&line, &cap, in);
		const char *err;

		if (got <= 0)
			break;
		env.line++;
		if ((size_t)got != strlen(line))
			fail(2, "NUL byte in line");
		n = cw_text_tokenize(line, tok, CW_TEXT_MAXTOK, &err);
		if (n < 0)
			fail(2, "%s", err);
		if (!n)
			continue;
		if (tok[0].key[0] == '!') {
			directive(tok, n);
			continue;
		}
		n = cw_text_build(tok, n, rec, msg, sizeof(msg));
		if (n < 0)
			fail(2, "%s", msg);
		writer_op(rec, (size_t)n, 0);
	}
	if (ferror(in))
		fail(1, "%s: read error", env.in);
	env.line++;
	writer_op(NULL, 0, CW_SEG_EVENTS);
	free(line);
	fclose(in);
	cw_writer__free(env.w);
	env.w = NULL;
	if (close(env.fd)) {
		env.fd = -1;
		unlink(env.out);
		fprintf(stderr, "fixturec: %s: %s\n", env.out, strerror(errno));
		return 1;
	}
	return 0;
}
