#!/bin/bash
# live/spawn: every thread and process the spawn workload creates appears as
# an observed spawn edge parent thread -> child thread, and the workload's
# threads spawn nothing else. (COMMAND mode: the traced set follows fork.)

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

capture -q -F 0 --no-offcpu -o "$T/t.cwt" -- "$WL/spawn" "$T/truth"
DB=$T/t.db
analyze "$T/t.cwt" "$DB"

nspawn=0
while read -r kind a b; do
	[ "$kind" = spawn ] || continue
	nspawn=$((nspawn + 1))
	n=$(q "select count(*) from edges e join nodes s on s.id = e.src join nodes d on d.id = e.dst
	       where e.type = 'spawn' and e.confidence = 'observed'
	         and s.type = 'thread' and s.scope = 'host' and s.key = $a
	         and d.type = 'thread' and d.scope = 'host' and d.key = $b")
	[ "$n" -ge 1 ] || fail "no observed spawn edge $a -> $b"
done <"$T/truth"
[ "$nspawn" -ge 6 ] || fail "workload reported $nspawn spawns, expected 6"

# Nothing else was spawned by the workload's processes.
wpids=$(awk '$1 == "pid" { printf "%s%s", sep, $2; sep = "," }' "$T/truth")
n=$(q "select count(*) from edges e join nodes s on s.id = e.src
       where e.type = 'spawn' and s.pid in ($wpids)")
[ "$n" = "$nspawn" ] || fail "$n spawn edges from the workload's processes, expected $nspawn"
echo "live/$NAME: $nspawn spawn edges, all observed parent -> child"
