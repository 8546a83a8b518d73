/* SPDX-License-Identifier: MIT */
/*
 * The text form of records: one line per record, "NAME key=value ...",
 * printed by the dump (causeway-analyze --dump) and compiled back into a
 * trace by the fixture compiler (tests/fixturec). Both sides use the field
 * tables of text.c (schema/fields.def), so the two can never disagree, and cw_text_format()
 * checks every line it makes by parsing it back: a record the typed form
 * cannot reproduce byte for byte (non-zero padding, a string with bytes
 * after its terminator, a malformed length) comes out as "raw" with its
 * body in hex instead, which always round-trips.
 *
 * Syntax: '#' at the start of a token starts a comment; integers are
 * decimal (signed fields may be negative) or 0x-hex; strings are bare (no
 * blanks, quotes, backslashes or '#') or double-quoted with \" \\ and \xHH
 * escapes; a task is "tid/pid"; missing keys are 0. The header fields ts,
 * cpu, ctx (task|softirq|hardirq|nmi|unknown) and flags are accepted on
 * every record. Record names are those of schema/names.h, plus "raw"
 * (any type: type=0xNN size=N [body=HEX]).
 *
 *   kv       key= value=
 *   task     tid= pid= ppid= comm= exe=
 *   switch   prev=T next=T prev_state= prev_prio= next_prio= [preempt=1]
 *            [prev_start= next_start=]
 *   waking | wakeup | wakeup_new
 *            waker=T wakee=T target_cpu= prio= [waker_start= wakee_start=]
 *   fork     parent=T child=T thread=0|1 clone_flags= comm= [fork_flags=]
 *            [parent_start= child_start=]
 *   exec     task=T old_tid= comm= filename= [start=]
 *   exit     task=T group_dead=0|1 code= [exit_flags=] [start=]
 *   rename   task=T old= new= [start=]
 *   account  window= ring=edge|sample|map class=sched|... written= lost=
 *   mmap     task=T start= len= pgoff= [prot= mflags=] [build_id=HEX] path=
 *            (build_id: its bytes, at most 20; their number is build_id_len)
 *   sample_cpu | sample_offcpu
 *            task=T [start=] [period=] keep= [kerr= uerr=]
 *            [kernel=A,A,...] [user=A,...] [regs=R,...] [stack=HEX]
 *            (the arrays in record order; their lengths are nkernel,
 *            nuser, nregs, stack_len. keep is the keep probability x 2^32:
 *            0x100000000 for a sample kept for sure. A record whose counts
 *            do not match its size prints as raw.)
 *   usdt_probe id= pid= nargs= str_arg= provider= name= path=
 *            (str_arg 255: no string argument)
 *   usdt     task=T [start=] probe= nargs= [args=N,N,...]
 *   usdt_str task=T [start=] probe= nargs= [args=N,...] [str_err=] str=
 *            (args: signed decimal, args[0] first; those after the
 *            last one given are 0)
 *
 * A flag with a name of its own (preempt, thread, group_dead) is also
 * part of the whole-field key (flags, fork_flags, exit_flags), which is
 * printed only when it holds bits that have no name.
 *
 * Links nothing but libc: the fixture compiler uses it without the
 * analyzer.
 */
#ifndef CAUSEWAY_TEXT_H
#define CAUSEWAY_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* A line never needs more: the longest typed record is a 64 KiB string of
 * \xHH escapes. */
#define CW_TEXT_LINE_MAX (4 * 65536 + 1024)
/* Room cw_text_build() may write into. */
#define CW_TEXT_REC_MAX 65536
#define CW_TEXT_MAXTOK 32

/* One "key=value" (or bare word) of a line; val is decoded and
 * NUL-terminated, vlen excludes the NUL, val NULL for a bare word. */
struct cw_tok {
	const char *key;
	char *val;
	size_t vlen;
};

/*
 * Split @line (modified in place) into tokens. @return the number of
 * tokens (0 for a blank or comment line) or -1 with *err set to a static
 * English message.
 */
int cw_text_tokenize(char *line, struct cw_tok *tok, int max, const char **err);

/* The value of @t as an integer: decimal or 0x-hex, and negative (*neg
 * set) only when @neg is not NULL. @return 0, or -1 when it is not one. */
int cw_text_num(const struct cw_tok *t, uint64_t *v, int *neg);

/*
 * Build the record described by tokens @tok[0..n) (tok[0] is the record
 * name) into @buf (at least CW_TEXT_REC_MAX bytes). @return the record
 * size, or -1 with an English message in @err.
 */
int cw_text_build(const struct cw_tok *tok, int n, uint8_t *buf, char *err, size_t errlen);

struct cw_text;

/* Scratch space for cw_text_format (about 600 KiB). NULL + errno. */
struct cw_text *cw_text__new(void);
void cw_text__free(struct cw_text *t);

/*
 * The line for record @rec of @len bytes (its cw_hdr.size), without a
 * newline: the typed form when it parses back into exactly these bytes,
 * else the raw form. The string lives in @t until the next call.
 */
const char *cw_text_format(struct cw_text *t, const uint8_t *rec, size_t len);

#endif /* CAUSEWAY_TEXT_H */
