# Shared by the live tests (tests/live/*.sh), sourced right after a test's
# header comment:  . "$(dirname "$0")/../lib/live.bash" "$@"
# Sets BUILD, NAME, CAP, AN, WL and a scratch directory T removed at exit;
# processes a test starts go into pids so that they are stopped by pid.
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
