#!/bin/bash
# live/self: a system-wide capture never records its own threads (no node
# with pid = the capture's pid), records other processes (a ping-pong
# workload's wakes are there) and closes cleanly at the end of -d.

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

"$CAP" -q -F 0 --no-offcpu -d 3 -o "$T/t.cwt" 2>"$T/capture.err" &
CP=$!
pids+=("$CP")
for ((i = 0; i < 200; i++)); do
	[ -s "$T/t.cwt" ] && break
	kill -0 "$CP" 2>/dev/null || break
	sleep 0.05
done
if kill -0 "$CP" 2>/dev/null; then
	taskset -c 0 "$WL/pingpong" "$T/truth" 500 0 || fail "workload failed"
fi
wait "$CP"
check_capture_rc $? "$T/capture.err"
pids=()
DB=$T/t.db
analyze "$T/t.cwt" "$DB"

[ "$(q "select value from meta where key = 'clean_close'")" = 1 ] || fail "trace not closed cleanly"
n=$(q "select count(*) from nodes where pid = $CP or (type = 'thread' and key = $CP)")
[ "$n" = 0 ] || fail "$n nodes of the capture itself (pid $CP)"
n=$(q "select count(*) from edges e left join nodes s on s.id = e.src join nodes d on d.id = e.dst
       where s.pid = $CP or d.pid = $CP")
[ "$n" = 0 ] || fail "$n edges touching the capture itself"
read -r _ A B R < <(grep '^pingpong ' "$T/truth") || fail "no pingpong ground truth"
n=$(q "select count(*) from edges e join nodes s on s.id = e.src join nodes d on d.id = e.dst
       where e.type = 'wake' and s.type = 'thread' and s.key = $A and d.type = 'thread' and d.key = $B")
[ "$n" -gt 0 ] || fail "system-wide capture missed the workload's wakes"
echo "live/$NAME: capture pid $CP absent; workload recorded ($n wakes $A -> $B)"
