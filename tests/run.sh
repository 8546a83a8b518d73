#!/bin/bash
# Runs causeway's tests against one build directory.
#   tests/run.sh BUILD [--no-live] [--only KIND[,KIND...]] [--live NAME[,NAME...]]
# --only runs those kinds (default: all but fuzz); --no-live runs no test
# that loads BPF: not the live kind, nor the faults tests of FAULTS_LIVE
# (make check: no BPF toolchain, no root).
# unit:     every BUILD/tests/test_* program
# fixtures: every fixtures/*.events, compiled, analyzed and compared with
#           fixtures/*.expect (UPDATE=1 rewrites the .expect files)
# cli:      tests/analyze_cli.sh, the analyzer's command line,
#           tests/docs.sh, the docs against --help and their citations,
#           and tests/deps_check.sh, no circle of files in analyze/ or
#           capture/ (no BPF)
# eval:     tests/eval.sh, causeway-eval against hand-made truth files and
#           databases whose scores are known by construction (no BPF)
# export:   every tests/export/*.sh, causeway-export's formats checked by
#           the tools their users open them with (go tool pprof, protoc,
#           graphviz, speedscope in headless Chromium), on databases made
#           from fixtures (no BPF); a test whose tool is missing skips
#           (77) and says so (make test installs them)
# live:     every tests/live/*.sh, real BPF captures (exit 77 = skipped,
#           allowed only where BPF cannot be loaded; the test says why);
#           by name, then the edge-class tests of LIVE_CLASSES in their
#           order; --live NAMES runs only those (e.g. --live wake)
# faults:   every tests/faults/*.sh: killed captures, interrupted and
#           racing analyzers, outputs pointed at inputs and symlinks, a
#           full disk, hostile mapping paths (docs/model.md §7; root for the
#           captures, which skip with 77 only where BPF cannot load);
#           those of FAULTS_LIVE run captures, the others need no BPF
# go:       every tests/go/*.sh: Go binaries built in the test, read by
#           capture/gobin.c through BUILD/gobindump and held to go, objdump
#           and gdb (no BPF); without go it says so and skips (77)
# browser:  tests/browser/speedscope.sh, the folded export in speedscope in
#           headless Chromium on 127.0.0.1 (npm ci once per lock file:
#           network; 77 without Chromium, node or the registry)
# fuzz:     tests/fuzz.sh, the reader's libFuzzer target for FUZZ_SECONDS
#           (60) on the fixture corpus, under ASan and UBSan
# hostile:  tests/hostile.sh, peak RSS under small hostile traces (4M new
#           tids, 4M lossy accounting records) with --max-live 1000;
#           skipped (77) for a sanitizer build, whose RSS is its own
set -u
BUILD=${1:?usage: tests/run.sh BUILD [--no-live] [--only KINDS] [--live NAMES]}
shift
KINDS="unit fixtures cli eval export go live faults browser fuzz hostile"
DEFAULT_KINDS="unit fixtures cli eval export go live faults browser hostile"
# The faults tests that run causeway-capture (BPF programs, root): live
# tests in all but their kind, so --no-live leaves them out too.
FAULTS_LIVE="kill diskfull"
# The live tests of the async edge classes run last, simplest first: each
# leans on the sched class (live/spawn, live/wake) and on the capture's
# lifetime tests, whose failures explain theirs. The context plane's
# follow: their samples are charged to what those classes join.
LIVE_CLASSES="timer futex workqueue net net_pid uring samples dwarf sample_work flood"
live=1 only="" live_names=""
while [ $# -gt 0 ]; do
	case "$1" in
	--no-live) live=0 ;;
	--only) only=${2:?--only needs a kind}; shift ;;
	--live) live_names=${2:?--live needs test names}; shift ;;
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
for k in ${only//,/ }; do
	case " $KINDS " in *" $k "*) ;; *) echo "run.sh: unknown kind $k (kinds: $KINDS)" >&2; exit 2 ;; esac
done
BUILD=$(cd "$BUILD" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
passed=0 failed=0 skipped=0 failures=()

result() { # name rc
	case $2 in
	0) passed=$((passed + 1)); echo "PASS $1" ;;
	77) skipped=$((skipped + 1)); echo "SKIP $1" ;;
	*) failed=$((failed + 1)); failures+=("$1"); echo "FAIL $1" ;;
	esac
}

want() {
	if [ -n "$only" ]; then
		case ",$only," in *",$1,"*) return 0 ;; esac
		return 1
	else
		case " $DEFAULT_KINDS " in *" $1 "*) return 0 ;; esac
		return 1
	fi
}

if want unit; then
	for t in "$BUILD"/tests/test_*; do
		[ -x "$t" ] || continue
		"$t" >"$BUILD/$(basename "$t").log" 2>&1
		rc=$?
		[ $rc = 0 ] || tail -20 "$BUILD/$(basename "$t").log"
		result "unit/$(basename "$t")" $rc
	done
fi

if want fixtures; then
	for f in "$top"/fixtures/*.events; do
		"$top"/tests/fixture.sh "$BUILD" "$f"
		rc=$?
		result "fixture/$(basename "$f" .events)" $rc
	done
fi

if want cli; then
	bash "$top/tests/analyze_cli.sh" "$BUILD"
	result cli/analyze $?
	bash "$top/tests/docs.sh" "$BUILD"
	result cli/docs $?
	bash "$top/tests/deps_check.sh" "$BUILD"
	result cli/deps $?
fi

if want eval; then
	bash "$top/tests/eval.sh" "$BUILD"
	result eval $?
fi

if want export; then
	for t in "$top"/tests/export/*.sh; do
		bash "$t" "$BUILD"
		result "export/$(basename "$t" .sh)" $?
	done
fi

if want go; then
	for t in "$top"/tests/go/*.sh; do
		bash "$t" "$BUILD"
		result "go/$(basename "$t" .sh)" $?
	done
fi

if want live && [ $live = 1 ]; then
	# The futex class hooks tracefs events: mount tracefs where it is
	# not, as perf does, rather than skip a class the kernel has.
	if [ "$(id -u)" = 0 ] && [ -d /sys/kernel/tracing ] && [ ! -e /sys/kernel/tracing/events ]; then
		mount -t tracefs nodev /sys/kernel/tracing ||
			echo "*** tests/run.sh: cannot mount tracefs: the futex class will be skipped ***"
	fi
	tests=()
	for t in "$top"/tests/live/*.sh; do
		case " $LIVE_CLASSES " in *" $(basename "$t" .sh) "*) continue ;; esac
		tests+=("$t")
	done
	for n in $LIVE_CLASSES; do
		[ -e "$top/tests/live/$n.sh" ] || [ -n "$live_names" ] ||
			result "live/$n (listed in LIVE_CLASSES, no such test)" 1
		tests+=("$top/tests/live/$n.sh")
	done
	for t in "${tests[@]}"; do
		[ -e "$t" ] || continue
		if [ -n "$live_names" ]; then
			case ",$live_names," in *",$(basename "$t" .sh),"*) ;; *) continue ;; esac
		fi
		bash "$t" "$BUILD"
		rc=$?
		result "live/$(basename "$t" .sh)" $rc
	done
	# A name that matches no test must not pass as "nothing failed".
	for n in ${live_names//,/ }; do
		[ -e "$top/tests/live/$n.sh" ] || result "live/$n (no such test)" 1
	done
fi

if want faults; then
	for n in $FAULTS_LIVE; do
		[ -e "$top/tests/faults/$n.sh" ] ||
			result "faults/$n (listed in FAULTS_LIVE, no such test)" 1
	done
	left=()
	for t in "$top"/tests/faults/*.sh; do
		[ -e "$t" ] || continue
		if [ $live = 0 ]; then
			case " $FAULTS_LIVE " in *" $(basename "$t" .sh) "*)
				left+=("faults/$(basename "$t" .sh)"); continue ;;
			esac
		fi
		KIND=faults bash "$t" "$BUILD"
		result "faults/$(basename "$t" .sh)" $?
	done
	[ ${#left[@]} = 0 ] || echo "not run (--no-live, they load BPF): ${left[*]}"
fi

if want browser; then
	bash "$top/tests/browser/speedscope.sh" "$BUILD"
	result browser/export_browser $?
fi

if want fuzz; then
	bash "$top/tests/fuzz.sh" "$BUILD"
	result fuzz $?
fi

if want hostile; then
	bash "$top/tests/hostile.sh" "$BUILD"
	result hostile $?
fi

echo
[ ${#failures[@]} = 0 ] || printf 'failed: %s\n' "${failures[@]}"
echo "$(basename "$BUILD"): $passed passed, $failed failed, $skipped skipped"
[ $failed = 0 ]
