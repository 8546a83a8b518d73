#!/bin/bash
# live/wake: wakeups are attributed to the right cause.
#  - pipe ping-pong between two threads on one CPU: an observed wake edge
#    in each direction for at least 90% of the round trips;
#  - a thread sleeping in clock_nanosleep N times: none of its wakeups is
#    blamed on a thread (src NULL, reason hardirq/softirq: the timer fires
#    in interrupt context, whatever task it interrupted), and there are at
#    least 90% of N of them.

set -u
BUILD=${1:?usage: $0 BUILD}
NAME=$(basename "$0" .sh)
CAP=$BUILD/causeway-capture
AN=$BUILD/causeway-analyze
WL=$BUILD/workloads

# 77 only when BPF cannot be loaded here, and then say why, loudly.
skip() {
	echo "*** live/$NAME SKIPPED: $* ***" >&2
	exit 77
}
fail() {
	echo "live/$NAME: FAIL: $*" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || skip "not root: BPF programs cannot be loaded"
[ -r /sys/kernel/btf/vmlinux ] || skip "no /sys/kernel/btf/vmlinux: kernel built without BTF"
command -v sqlite3 >/dev/null || fail "sqlite3 CLI not installed"
for f in "$CAP" "$AN"; do
	[ -x "$f" ] || fail "$f is not built"
done

T=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT

# A capture that cannot load its programs because bpf() is denied is a
# skip; any other failure (a verifier rejection included) is a bug.
check_capture_rc() { # rc errfile
	if [ "$1" = 2 ] && grep -qE "needs root|bpf\(\) denied|CAP_BPF" "$2"; then
		cat "$2" >&2
		skip "bpf() denied"
	fi
	if [ "$1" != 0 ]; then
		cat "$2" >&2
		fail "causeway-capture exited $1"
	fi
}

capture() { # causeway-capture arguments...
	"$CAP" "$@" 2>"$T/capture.err"
	check_capture_rc $? "$T/capture.err"
}

analyze() { # trace db
	"$AN" -q -o "$2" "$1" 2>"$T/analyze.err" || {
		cat "$T/analyze.err" >&2
		fail "causeway-analyze failed on $1"
	}
}

q() { # SQL against $DB: one value per line
	sqlite3 -batch -noheader "$DB" "$1" || fail "query failed: $1"
}

ROUNDS=2000 SLEEPS=200
command -v taskset >/dev/null || fail "taskset not installed"
capture -q -F 0 --no-offcpu -o "$T/t.cwt" -- taskset -c 0 "$WL/pingpong" "$T/truth" $ROUNDS $SLEEPS
DB=$T/t.db
analyze "$T/t.cwt" "$DB"
read -r _ A B R < <(grep '^pingpong ' "$T/truth") || fail "no pingpong line in ground truth"
read -r _ S N < <(grep '^sleeper ' "$T/truth") || fail "no sleeper line in ground truth"

wakes() { # src_tid dst_tid: observed wake edges
	q "select count(*) from edges e join nodes s on s.id = e.src join nodes d on d.id = e.dst
	   where e.type = 'wake' and e.confidence = 'observed'
	     and s.type = 'thread' and s.key = $1 and d.type = 'thread' and d.key = $2"
}
ab=$(wakes "$A" "$B")
ba=$(wakes "$B" "$A")
need=$((R * 9 / 10))
[ "$ab" -ge $need ] || fail "$ab observed wakes $A -> $B for $R round trips (need >= $need)"
[ "$ba" -ge $need ] || fail "$ba observed wakes $B -> $A for $R round trips (need >= $need)"

# The sleeper's spawn parent may be recorded as waking it once, at its
# creation (sched_wakeup_new); any other waker thread is a misattribution.
parent=$(q "select coalesce(max(e.src), -1) from edges e join nodes d on d.id = e.dst
            where e.type = 'spawn' and d.type = 'thread' and d.key = $S")
blamed=$(q "select count(*) from edges e join nodes d on d.id = e.dst
            where e.type = 'wake' and d.type = 'thread' and d.key = $S
              and e.src is not null and e.src != $parent")
bparent=$(q "select count(*) from edges e join nodes d on d.id = e.dst
             where e.type = 'wake' and d.type = 'thread' and d.key = $S and e.src = $parent")
[ "$blamed" = 0 ] || fail "$blamed wakeups of the sleeper $S blamed on a thread"
[ "$bparent" -le 1 ] || fail "$bparent wakeups of the sleeper $S blamed on its creator"
irq=$(q "select count(*) from edges e join nodes d on d.id = e.dst
         where e.type = 'wake' and d.type = 'thread' and d.key = $S
           and e.src is null and e.reason in ('hardirq', 'softirq')")
need=$((N * 9 / 10))
[ "$irq" -ge $need ] || fail "$irq interrupt-context wakeups of the sleeper for $N sleeps (need >= $need)"
echo "live/$NAME: ping-pong $ab/$ba of $R round trips; sleeper $irq of $N timer wakes, none blamed on a thread"
