# Shared by the live tests (tests/live/*.sh), sourced right after a test's
# header comment:  . "$(dirname "$0")/../lib/live.bash" "$@"
# Sets BUILD, NAME, CAP, AN, WL and a scratch directory T removed at exit;
# processes a test starts go into pids so that they are stopped by pid.
# Helpers: capture, expect_rc, analyze, q, meta, kv, wait_for,
# wait_nonempty, start_capture.
set -u
BUILD=${1:?usage: $0 BUILD}
NAME=$(basename "$0" .sh)
CAP=$BUILD/causeway-capture
AN=$BUILD/causeway-analyze
WL=$BUILD/workloads

# 77 only when BPF cannot be loaded here, and then say why, loudly.
skip() {
	echo "*** ${KIND:-live}/$NAME SKIPPED: $* ***" >&2
	exit 77
}
fail() {
	echo "${KIND:-live}/$NAME: FAIL: $*" >&2
	# Inside $(...) (q, a check function): end the test, not only the
	# subshell, which would leave the test going on with an empty value.
	[ "$BASHPID" = "$$" ] || kill -USR1 $$
	exit 1
}
trap 'exit 1' USR1
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

# Run a command, expecting exit code $1 and a message matching /$2/ on
# stderr (empty: any); its output is left in $T/out and $T/err.
expect_rc() { # rc pattern description -- command...
	local want=$1 pat=$2 what=$3 rc
	shift 4
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" = "$want" ] || { cat "$T/err" >&2; fail "$what: exit $rc, expected $want"; }
	[ -z "$pat" ] || grep -qE -e "$pat" "$T/err" || { cat "$T/err" >&2; fail "$what: message lacks /$pat/"; }
}

# A metadata key as the analyzer stored it in database $2.
meta() { DB=$2 q "select value from meta where key = '$1'"; }

# A metadata key straight from trace $2 (the last value written), without
# the analyzer's join: the capture's own word.
kv() { # key trace
	"$AN" --dump "$2" 2>/dev/null | sed -n "s/^kv .* key=$1 value=//p" | tail -1 | sed 's/^"\(.*\)"$/\1/'
}

wait_for() { # seconds condition...
	local i
	for ((i = 0; i < $1 * 20; i++)); do
		"${@:2}" && return 0
		sleep 0.05
	done
	return 1
}
nonempty() { [ -s "$1" ]; }
wait_nonempty() { wait_for 10 nonempty "$1"; }

# A capture in the background (its pid in CP), once it has started: the
# trace appears at its name only then. Extra arguments go to the capture.
# No CPU samples and, unless OFFCPU=1, no off-CPU waits (the critical
# path needs them: docs/model.md §9, "Whose waits are recorded").
# CAP_LAUNCH, words run before the capture's command (env -i ...).
start_capture() { # file [capture arguments...]
	local f=$1 off=(--no-offcpu)
	shift
	[ "${OFFCPU:-0}" = 1 ] && off=()
	# shellcheck disable=SC2086 # CAP_LAUNCH is a list of words
	${CAP_LAUNCH:-} "$CAP" -q -F 0 "${off[@]}" -o "$f" "$@" 2>"$T/capture.err" &
	CP=$!
	pids+=("$CP")
	wait_for 20 nonempty "$f" && return 0
	kill -0 "$CP" 2>/dev/null || { wait "$CP"; check_capture_rc $? "$T/capture.err"; }
	fail "capture did not start"
}

# Stop start_capture's capture with signal $1: it must exit 0.
stop_capture() { # signal what
	local rc
	kill -"$1" "$CP"
	wait "$CP"
	rc=$?
	pids=()
	[ "$rc" = 0 ] || { cat "$T/capture.err" >&2; fail "$2: exit $rc"; }
}

# The capture of trace $2 recorded class $1, or a test of that class can
# check nothing. A class whose tracepoints this kernel lacks cannot be
# loaded here: a skip, saying so. One this build lacks is a failure.
need_class() { # class trace
	local rec miss
	rec=$(kv classes "$2")
	case ",$rec," in *",$1,"*) return 0 ;; esac
	miss=$(kv classes_missing "$2")
	case ",$miss," in
	*",$1:kernel,"*) skip "this kernel cannot record the $1 class: $(grep -m1 "not recording $1" "$T/capture.err")" ;;
	esac
	fail "the capture did not record the $1 class (recorded: ${rec:-none}; missing: ${miss:-none})"
}

# A class this build's capture does not offer (its -e list in --help): a
# test of a class not merged yet can check nothing. A skip, saying so.
need_built_class() { # class
	local list
	list=$("$CAP" --help 2>&1 | sed -n 's/.*-e, --events LIST *edge classes: *\([^ ]*\).*/\1/p')
	case ",$list," in *",$1,"*) return 0 ;; esac
	skip "this build's causeway-capture has no $1 class (-e offers: ${list:-nothing})"
}

# go as root, offline: nothing of the user's, nothing fetched; goenv runs
# a command in that environment (a test binary that builds programs).
goenv() { # command...
	HOME=$T/home GOPATH=$T/gopath GOCACHE=$T/gocache GOENV=off GOPROXY=off GOFLAGS= GOTOOLCHAIN=local \
		GOTELEMETRY=off "$@"
}
gocmd() { goenv go "$@"; }

# Truth lines starting with $1, from file $2, as SQL rows "(a, b, ...)"
# for an INSERT: numbers as they are, anything else quoted.
truth_rows() { # kind file
	awk -v k="$1" '$1 == k {
		row = ""
		for (i = 2; i <= NF; i++) {
			v = $i ~ /^-?[0-9]+$/ ? $i : "'\''" $i "'\''"
			row = row (i > 2 ? ", " : "") v
		}
		printf "%s(%s)", n++ ? ",\n" : "", row
	}' "$2"
}

# A thread of the ground truth ("KIND TID ..." in $2): its node id in
# $DB, the live generation of that tid (the last), or fail.
thread_node() { # kind truthfile
	local tid id
	tid=$(awk -v k="$1" '$1 == k { print $2; exit }' "$2")
	[ -n "$tid" ] || fail "no '$1' line in the ground truth"
	id=$(q "select max(id) from nodes where type = 'thread' and scope = 'host' and key = $tid")
	[ -n "$id" ] || fail "no thread node for $1 $tid"
	echo "$id"
}
