#!/bin/bash
# The analyzer's command line, as a careful user meets it (no BPF needed):
#  - --force replaces only a regular file: a device node (as /dev/full),
#    a FIFO, a directory and a symlink are refused with exit 2 and left as
#    they were;
#  - OUT may never be the input trace: same path, another path, a hard
#    link or a symlink to it, with or without --force;
#  - stale OUT.tmp.PID files of analyzers that are gone are removed, and
#    nothing else is (live pid, other names, directories);
#  - a closed pipe on stdout does not change the exit code (summary and
#    --dump), and the dump still says what the reader found;
#  - --version;
#  - a trace with thousands of damaged segments: the messages printed and
#    kept are capped, and the rest are counted.
#   tests/analyze_cli.sh BUILD
set -u
BUILD=$(cd "${1:?usage: tests/analyze_cli.sh BUILD}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
AN=$BUILD/causeway-analyze
FC=$BUILD/tests/fixturec
T=$(mktemp -d)
trap 'exec 4>&- 2>/dev/null; rm -rf "$T"' EXIT
failed=0

fail() {
	echo "analyze_cli: FAIL: $*" >&2
	failed=1
}
EXPECT_PROG=$AN
. "$top/tests/lib/expect.bash"

"$FC" "$top/fixtures/pingpong.events" "$T/t.cwt" || { echo "analyze_cli: fixturec failed" >&2; exit 1; }
sum=$(md5sum <"$T/t.cwt")
cd "$T" || exit 1

# --- --force and what OUT may be
# A device node of our own (/dev/full's numbers): an analyzer that gets
# this wrong must not destroy the real one.
if mknod full c 1 7 2>/dev/null; then
	expect 2 "is not a regular file (a device)" -- -q --force -o full t.cwt
	[ -c full ] || fail "the device node was replaced"
else
	echo "analyze_cli: not root: cannot make a device node; the device case is not checked" >&2
fi
mkfifo fifo.db
expect 2 "is not a regular file (a FIFO)" -- -q --force -o fifo.db t.cwt
[ -p fifo.db ] || fail "the FIFO was replaced"
mkdir dir.db
expect 2 "is not a regular file (a directory)" -- -q --force -o dir.db t.cwt
echo keep >target
ln -s target link.db
expect 2 "is not a regular file (a symbolic link)" -- -q --force -o link.db t.cwt
[ -L link.db ] && [ "$(cat target)" = keep ] || fail "the symlink or its target changed"
echo old >exists.db
expect 2 "exists (use --force" -- -q -o exists.db t.cwt
[ "$(cat exists.db)" = old ] || fail "exists.db replaced without --force"
expect 0 "" -- -q --force -o exists.db t.cwt
[ "$(sqlite3 exists.db 'select count(*) from nodes')" -gt 0 ] || fail "--force did not write the database"

mkdir sub
ln t.cwt hard.db
ln -s t.cwt self.db
for o in t.cwt ./t.cwt "$T/t.cwt" sub/../t.cwt hard.db self.db; do
	expect 2 "is the input t.cwt" -- -q --force -o "$o" t.cwt
	expect 2 "is the input t.cwt" -- -q -o "$o" t.cwt
done
[ "$(md5sum <t.cwt)" = "$sum" ] || fail "the input trace changed"

# --- stale temporary files
dead=$(sh -c 'echo $$')
while kill -0 "$dead" 2>/dev/null; do dead=$(sh -c 'echo $$'); done
touch "s.db.tmp.$dead" "s.db.tmp.$$" "s.db.tmp.${dead}x" "s.db.tmp.0$dead" "other.db.tmp.$dead" \
	"s.db.tmp.$dead.db"
mkdir "s.db.tmp.1$dead"
kill -0 "1$dead" 2>/dev/null && rmdir "s.db.tmp.1$dead" # not dead after all: no check
expect 0 "removed .*s.db.tmp.$dead, left by a run (pid $dead) that is gone" -- -q -o s.db t.cwt
[ ! -e "s.db.tmp.$dead" ] || fail "stale s.db.tmp.$dead not removed"
for keep in "s.db.tmp.$$" "s.db.tmp.${dead}x" "s.db.tmp.0$dead" "other.db.tmp.$dead" "s.db.tmp.$dead.db"; do
	[ -e "$keep" ] || fail "$keep removed"
done
[ ! -e "s.db.tmp.1$dead" ] || [ -d "s.db.tmp.1$dead" ] || fail "a directory was removed"
[ "$(grep -c removed "$T/err")" = 1 ] || fail "removed more than one file: $(cat "$T/err")"

# --- a closed pipe on stdout: a FIFO whose only reader is gone
mkfifo pipe
exec 3<>pipe 4>pipe 3<&-
"$AN" -o p.db t.cwt >&4 2>"$T/err"
rc=$?
[ $rc = 0 ] || fail "summary to a closed pipe: exit $rc, want 0 ($(cat "$T/err"))"
[ -f p.db ] || fail "summary to a closed pipe: no database"
"$BUILD/bench/gentrace" big.cwt 200000 >/dev/null || fail "gentrace"
"$AN" --dump big.cwt >&4 2>"$T/err"
rc=$?
[ $rc = 0 ] || fail "--dump to a closed pipe: exit $rc, want 0 ($(cat "$T/err"))"
[ ! -s "$T/err" ] || fail "--dump to a closed pipe said: $(cat "$T/err")"
head -c $(($(stat -c %s big.cwt) / 2)) big.cwt >cut.cwt
"$AN" --dump cut.cwt >&4 2>"$T/err"
rc=$?
[ $rc = 0 ] && grep -q "truncated" "$T/err" || fail "--dump of a cut trace to a closed pipe: exit $rc: $(cat "$T/err")"
printf 'not a trace' >junk.cwt
"$AN" --dump junk.cwt >&4 2>/dev/null
rc=$?
[ $rc = 1 ] || fail "--dump of junk to a closed pipe: exit $rc, want 1 as without a pipe"
exec 4>&-
"$AN" -q --force -o p.db big.cwt | head -c1 >/dev/null
[ "${PIPESTATUS[0]}" = 0 ] || fail "| head -c1: exit ${PIPESTATUS[0]}"
# Options that shape the database do nothing with --dump: exit 2.
for o in "-o x.db" --force --no-symbols "--max-live 10" "-e sched"; do
	# shellcheck disable=SC2086
	"$AN" --dump $o big.cwt >/dev/null 2>"$T/err"
	rc=$?
	[ $rc = 2 ] && grep -q "does nothing" "$T/err" || fail "--dump $o: exit $rc, want 2: $(cat "$T/err")"
done
"$AN" --dump big.cwt | head -1 >/dev/null
[ "${PIPESTATUS[0]}" = 0 ] || fail "--dump | head -1: exit ${PIPESTATUS[0]}"

# --- --version
expect 0 "" -- --version
grep -q "^causeway-analyze [0-9]" "$T/out" || fail "--version printed: $(cat "$T/out")"

# --- thousands of damaged segments: messages capped, the rest counted
{
	echo "!segment-size 64"
	for i in $(seq 3000); do
		echo "waking ts=$((1000 + i)) cpu=0 waker=1/1 wakee=2/2 target_cpu=0 prio=120"
		echo "!seal events"
		echo "!corrupt payload"
	done
	echo "waking ts=9000 cpu=0 waker=1/1 wakee=2/2 target_cpu=0 prio=120"
} >damaged.events
"$FC" damaged.events damaged.cwt || fail "fixturec damaged.events"
expect 0 "more reader messages not shown (only the first 1000 are)" -- -q -o damaged.db damaged.cwt
n=$(grep -c "" "$T/err")
[ "$n" -le 1002 ] || fail "$n lines of messages for 3000 damaged segments"
[ "$(sqlite3 damaged.db "select count(*) from diagnostics")" = 1001 ] ||
	fail "diagnostics rows: $(sqlite3 damaged.db "select count(*) from diagnostics")"
sup=$(sqlite3 damaged.db "select value from meta where key = 'diagnostics_suppressed'")
[ "$sup" -ge 2000 ] || fail "meta.diagnostics_suppressed = $sup"
[ "$(sqlite3 damaged.db "select value from meta where key = 'segments_damaged'")" = 3000 ] ||
	fail "segments_damaged: $(sqlite3 damaged.db "select value from meta where key = 'segments_damaged'")"
"$AN" --dump damaged.cwt >/dev/null 2>"$T/err"
[ "$(grep -c "" "$T/err")" -le 1002 ] && grep -q "more reader messages not shown" "$T/err" ||
	fail "--dump printed $(grep -c "" "$T/err") lines of messages"

# --- -e LIST: only these edge classes are joined (the benchmark's
# thread-level baseline). On fixtures with timer and io_uring records,
# -e sched has no node of another class, the same process and thread
# nodes, the same thread -> thread wakes, and every wake the timer or
# io_uring class explained (a fire edge, a wake from an io_request)
# still there at the same time and wakee, with its cause unknown.
# Naming every class a trace holds changes nothing.
for f in timer_wakeups uring_wake_cause uring_punt; do
	"$FC" "$top/fixtures/$f.events" "$f.cwt" || { fail "fixturec $f"; continue; }
	expect 0 "" -- -q -o "$f.all.db" "$f.cwt"
	expect 0 "" -- -e sched -o "$f.sched.db" "$f.cwt"
	skipped=$(sqlite3 "$f.sched.db" "select value from meta where key = 'records_skipped'")
	grep -q "classes joined (-e): sched; $skipped records of the others skipped" "$T/out" ||
		fail "$f -e sched: summary: $(head -3 "$T/out")"
	q() { sqlite3 "$f.sched.db" "attach '$f.all.db' as a; $1"; }
	[ "$(q "select count(*) from a.nodes where type not in ('process', 'thread')")" -gt 0 ] ||
		fail "$f: the full join has no async nodes: nothing to leave out"
	n=$(q "select group_concat(type) from nodes where type not in ('process', 'thread')")
	[ -z "$n" ] || fail "$f -e sched: nodes of other classes: $n"
	n=$(q "select group_concat(distinct type) from edges where type not in ('spawn', 'wake')")
	[ -z "$n" ] || fail "$f -e sched: edges of other classes: $n"
	cols="type, scope, key, generation, pid, tid, name, start_ns, end_ns, start_seen, traced"
	n=$(q "select count(*) from (select $cols from nodes except select $cols from a.nodes
				     union all
				     select $cols from a.nodes where type in ('process', 'thread')
				     except select $cols from nodes)")
	[ "$n" = 0 ] || fail "$f -e sched: $n process or thread nodes differ"
	# Edges as (type, src, dst, ts, cpu, confidence, reason), nodes by
	# their identity; src '?' when it is not a thread (or unknown).
	ev="select e.type, coalesce(s.type = 'thread' and s.key || '#' || s.generation, '?') as src,
		   d.key || '#' || d.generation as dst, e.ts, e.cpu, e.confidence, e.reason
	      from %s.edges e left join %s.nodes s on s.id = e.src join %s.nodes d on d.id = e.dst"
	# shellcheck disable=SC2059
	{ all=$(printf "$ev" a a a); sch=$(printf "$ev" main main main); }
	n=$(q "select count(*) from ($all where e.type = 'wake' and s.type = 'thread')")
	[ "$f" != uring_punt ] || [ "$n" -gt 0 ] || fail "$f: no thread -> thread wake to compare"
	n=$(q "select count(*) from (select * from ($all) where type = 'wake' and src != '?'
				     except select * from ($sch) where type = 'wake'
				     union all
				     select * from ($sch) where type = 'wake' and src != '?'
				     except select * from ($all) where type = 'wake')")
	[ "$n" = 0 ] || fail "$f -e sched: $n thread -> thread wakes differ"
	# Every wake or fire whose cause was the class left out: one wake,
	# same ts and wakee, src NULL (unknown), never another object.
	n=$(q "select count(*) from ($all) o where o.type in ('wake', 'fire') and o.src = '?' and
	       (select count(*) from ($sch) s where s.type = 'wake' and s.ts = o.ts and
	        s.dst = o.dst and s.src = '?') != 1")
	m=$(q "select count(*) from a.edges e join a.nodes s on s.id = e.src
	       where e.type in ('wake', 'fire') and s.type not in ('thread', 'process')")
	[ "$n" = 0 ] || fail "$f -e sched: $n caused wakes not kept as wakes of unknown cause"
	[ "$f" = uring_punt ] || [ "$m" -gt 0 ] || fail "$f: no wake caused by a timer or request"
	n=$(q "select count(*) from edges e left join nodes s on s.id = e.src
	       where e.type = 'wake' and e.src is not null and s.type != 'thread'")
	[ "$n" = 0 ] || fail "$f -e sched: $n wakes from something else than a thread"
	[ "$(q "select count(*) from edges where type = 'wake'")" = \
	  "$(q "select count(*) from a.edges where type in ('wake', 'fire') and
	        dst in (select id from a.nodes where type = 'thread')")" ] ||
		fail "$f -e sched: wake count differs from the full join's wakes and fires"
	[ "$(q "select value from meta where key = 'classes'")" = sched ] ||
		fail "$f -e sched: meta.classes = $(q "select value from meta where key = 'classes'")"
	[ "$(q "select value from a.meta where key = 'classes'")" = \
	  sched,io_uring,workqueue,timer,futex,net,usdt,block,go ] ||
		fail "$f: meta.classes without -e = $(q "select value from a.meta where key = 'classes'")"
	[ "$skipped" -gt 0 ] || fail "$f -e sched: records_skipped = $skipped"
	n=$(q "select group_concat(key || '=' || value) from meta
	       where key in ('records_unknown', 'records_malformed') and value != '0'")
	[ -z "$n" ] || fail "$f -e sched: skipped records counted as $n"
done
"$FC" "$top/fixtures/timer_wakeups.events" tw.cwt || fail "fixturec timer_wakeups"
expect 0 "" -- -q --events timer,sched -o tw.st.db tw.cwt
[ "$(sqlite3 tw.st.db <"$top/fixtures/queries.sql" | md5sum)" = \
  "$(sqlite3 timer_wakeups.all.db <"$top/fixtures/queries.sql" | md5sum)" ] ||
	fail "--events timer,sched on a trace of only those classes: not the full join"
[ "$(sqlite3 tw.st.db "select value from meta where key = 'classes'")" = sched,timer ] ||
	fail "--events timer,sched: meta.classes = $(sqlite3 tw.st.db "select value from meta where key = 'classes'")"
expect 0 "" -- -q -e io_uring -o u.io.db uring_wake_cause.cwt
[ "$(sqlite3 u.io.db "select count(*) from nodes where type = 'io_request'")" = 3 ] &&
[ "$(sqlite3 u.io.db "select count(*) from edges where type = 'wake'")" = 0 ] ||
	fail "-e io_uring: $(sqlite3 u.io.db "select type, count(*) from edges group by 1")"
for bad in bogus "" , sched,bogus sample meta adapter; do
	rm -f bad.db
	case $bad in
	sample | meta) msg="'$bad' is not an edge class and cannot be left out" ;;
	"" | ,) msg="-e: empty class list" ;;
	*) msg="-e: unknown edge class '${bad#sched,}'" ;;
	esac
	expect 2 "$msg" -- -q -e "$bad" -o bad.db tw.cwt
	[ ! -e bad.db ] || fail "-e '$bad' wrote a database"
done
expect 2 "unknown edge class 'nope'" -- -q --events nope -o bad.db tw.cwt

# --- quiet timers past quiet_objects' bound (QUIET_MAX, analyze/ident.c):
# 5000 timers that fire and cause nothing, each armed by a process of its
# own, so 5000 (type, name, pid) keys: the first 4096 get rows of their
# own, the rest one row of every name and pid (name and pid NULL), and
# the count stays whole. Then two more of the first process, whose row
# goes on counting them past the bound, and one of a process new then,
# which joins the overflow row.
{
	echo 'ksyms ts=0 cpu=0 lines="ffffffff81000100 T hrtimer_wakeup\x0a"'
	echo "!seal meta"
	for i in $(seq 5003); do
		p=$((10000 + i))
		[ $i -le 5000 ] || p=$((i == 5003 ? 20000 : 10001))
		printf 'timer_fire ts=%d cpu=0 ctx=hardirq task=0/0 timer=0x%x kind=1 function=0xffffffff81000100 now=%d arm_ts=%d arm_cpu=1 arm_task=%d/%d arm_start=500 expires=%d\n' \
			$((1000 * i + 500)) $((0xffff888100000000 + 256 * i)) $((1000 * i + 500)) $((1000 * i)) $p $p $((1000 * i + 500))
	done
} >quiet.events
"$FC" quiet.events quiet.cwt || fail "fixturec quiet.events"
expect 0 "" -- -q -o quiet.db quiet.cwt
got=$(sqlite3 quiet.db "select count(*), sum(objects), sum(name is null and pid is null),
	sum(case when pid is null then objects end), sum(case when pid = 10001 then objects end),
	(select value from meta where key = 'objects_quiet'), (select count(*) from nodes where type = 'timer')
	from quiet_objects")
[ "$got" = "4097|5003|1|905|3|5003|0" ] ||
	fail "5003 quiet timers: rows|objects|overflow rows|overflow objects|pid 10001's|meta|timer nodes = $got"

[ $failed = 0 ] && echo "analyze_cli: ok"
exit $failed
