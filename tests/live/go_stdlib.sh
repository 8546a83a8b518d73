#!/bin/bash
# live/go_stdlib: a Go program traced by the go class neither crashes nor
# changes behaviour (issue 21, "cost and safety"): the Go standard
# library's own tests of runtime, sync and net/http, compiled here (go test
# -c, before any capture), run untraced and then under a default capture
# (every class this build offers, the go class among them, CPU and
# off-CPU stacks), each in its package's directory as go test runs it:
#  - the traced run exits as the untraced one did, with the same tests
#    (and subtests) passed, failed and skipped, and no crash the untraced
#    run lacks (a panic, a fatal error, "unexpected return pc", a signal);
#  - the go class attached to the test binary: the database has at least
#    one runtime_task node in the binary's pid scope per test it ran
#    (testing runs each test and subtest in a goroutine of its own), and
#    the trace's go_binary record names the binary.
# The selections keep the test to a few minutes on 2 CPUs: runtime, -short,
# the tests of channels, select, goroutines and the scheduler,
# preemption, timers, semaphores, GC, finalizers and stacks (untraced,
# 9 s on this 2-CPU VM); sync, all of it (2 s); net/http, -short, all but
# TestCmdGoNoHTTPServer, which runs go tool nm on the go command and fails
# wherever that is stripped, as Debian's is (13 s). The runtime tests
# that build and run helper programs (testprog: TestGoexitDeadlock,
# TestTracebackAncestors...) run them traced too: a Go binary exec'd
# during the capture. Each selection gave the same results untraced,
# twice, with two CPU hogs beside the second run.
# A build whose capture has no go class (issue 21 not merged) skips, and
# says so.

. "$(dirname "$0")/../lib/live.bash" "$@"


RUNTIME_TESTS='^(TestChan|TestNonblockRecvRace|TestNonblockSelectRace2?|TestSelfSelect|TestSelectStress|'\
'TestSelectFairness|TestChanSendInterface|TestPseudoRandomSend|TestMultiConsumer|'\
'TestShrinkStackDuringBlockedSend|TestNoShrinkStackWhileParking|TestSelectDuplicateChannel|'\
'TestSelectStackAdjust|TestChanSend(Select)?Barrier|TestGoroutineParallelism2?|TestBlockLocked|'\
'TestTimerFairness2?|TestPreemption(GC|AfterSyscall)?|TestAsyncPreempt|TestGCFairness2?|'\
'TestNumGoroutine|TestPingPongHog|TestPreemptSplitBig|TestSchedLocalQueue.*|TestStealOrder|'\
'TestLockOSThread(Nesting|Exit)|TestNetpollBreak|TestYield(Locked)?Progress|TestYieldLocked|'\
'TestStopTheWorldDeadlock|TestGoroutineProfile(Trivial)?|TestSemaHandoff[12]?|'\
'TestSpuriousWakeupsNeverHangSemasleep|TestParallelRWMutexReaders|TestRWMutex|'\
'TestGc(Sys|DeepNesting|MapIndirection|ArraySlice|Rescan|LastTime)|TestPeriodicGC|'\
'TestGCTestMoveStack(OnNextCall|Repeatedly)|TestUserForcedGC|TestReadMemStats|TestIterGrowWithGC|'\
'TestFinalizer.*|TestDeferKeepAlive|TestStackGrowth(Callback)?|TestStackMem|TestStackCache|'\
'TestDeferPtrs.*|TestGoexitDeadlock|TestGoNil|TestMainGoroutineID|TestNetpollDeadlock|'\
'TestPanicDeadlockGosched|TestTracebackAncestors|TestGcZombieReporting|TestTimePprof|TestMemPprof)$'
HTTP_LEFT_OUT=TestCmdGoNoHTTPServer

need_built_class go
command -v go >/dev/null || fail "go is not installed (Debian: golang-go, which tests/deps.sh installs)"
GOSRC=$(gocmd env GOROOT)/src
[ -d "$GOSRC/runtime" ] || fail "no Go sources in $GOSRC (Debian: golang-go brings them)"
for p in runtime sync net/http; do
	gocmd test -c -o "$T/${p##*/}.test" "$p" 2>"$T/build.err" ||
		fail "go test -c $p: $(head -5 "$T/build.err")"
done
http_run="^($("$T/http.test" -test.list '.*' | grep -vxF "$HTTP_LEFT_OUT" | paste -sd '|'))\$"
[ ${#http_run} -gt 1000 ] || fail "go test's list of net/http tests is short: $http_run"

# The results of a run: one line per test and subtest, and its crashes.
results() { sed -nE 's/^ *--- (PASS|FAIL|SKIP): ([^ ]+) .*/\1 \2/p' "$1" | sort; }
CRASH='^(panic: |fatal error: |SIG[A-Z]+: |\[signal )|unexpected return pc'
crashes() { grep -cE "$CRASH" "$1"; }

check() { # name package arguments...
	local n=$1 pkg=$2 rc0 rc1 pid tests tasks bins
	shift 2
	(cd "$GOSRC/$pkg" && goenv "$T/$n.test" -test.v -test.timeout 5m "$@" >"$T/$n.plain" 2>&1)
	rc0=$?
	[ "$rc0" = 0 ] || echo "*** live/$NAME: $pkg fails untraced (exit $rc0): $(results "$T/$n.plain" |
		grep '^FAIL' | head -5 | tr '\n' ' ')***" >&2
	# The test binary is the shell's pid, exec'd: its output apart from
	# the capture's messages.
	(cd "$GOSRC/$pkg" && goenv "$CAP" -q -o "$T/$n.cwt" -- sh -c \
		'echo $$ >"$0"; out=$1; shift; exec "$@" >"$out" 2>&1' \
		"$T/$n.pid" "$T/$n.traced" "$T/$n.test" -test.v -test.timeout 5m "$@" 2>"$T/capture.err")
	rc1=$?
	if [ "$rc1" != "$rc0" ]; then
		[ "$rc1" = 2 ] && [ -s "$T/capture.err" ] && { cat "$T/capture.err" >&2; check_capture_rc 2 "$T/capture.err"; }
		fail "$pkg: exit $rc1 traced, $rc0 untraced:
  $(diff <(results "$T/$n.plain") <(results "$T/$n.traced") | grep '^[<>]' | head -5 | tr '\n' ';')
  $(tail -5 "$T/$n.traced")"
	fi
	[ -s "$T/$n.traced" ] || fail "$pkg: the traced run wrote nothing"
	diff <(results "$T/$n.plain") <(results "$T/$n.traced") >"$T/$n.diff" ||
		fail "$pkg: not the same tests passed, failed and skipped traced as untraced:
  $(grep '^[<>]' "$T/$n.diff" | head -10 | tr '\n' ';')"
	[ "$(crashes "$T/$n.traced")" -le "$(crashes "$T/$n.plain")" ] ||
		fail "$pkg: the traced run crashed: $(grep -m3 -A3 -E "$CRASH" "$T/$n.traced")"
	need_class go "$T/$n.cwt"
	pid=$(cat "$T/$n.pid")
	DB=$T/$n.db
	analyze "$T/$n.cwt" "$DB"
	tests=$(results "$T/$n.traced" | wc -l)
	tasks=$(q "select count(*) from nodes where type = 'runtime_task' and scope = 'pid:$pid'")
	[ "$tasks" -ge "$tests" ] || fail "$pkg: $tasks runtime_task nodes in pid:$pid for $tests tests and subtests run"
	# the capture attached the test binary: its go_binary record names it
	bins=$("$AN" --dump "$T/$n.cwt" 2>/dev/null | grep '^go_binary ')
	case $bins in *"$n.test"*) ;; *) fail "$pkg: no go_binary record names $T/$n.test: '$bins'" ;; esac
	[ "$(meta capture.go_binaries "$DB")" -ge 1 ] || fail "$pkg: capture.go_binaries is not at least 1"
	echo "live/$NAME: $pkg: $tests tests and subtests, the same results traced (exit $rc1), $tasks goroutines of $n.test"
}

check runtime runtime -test.short -test.run "$RUNTIME_TESTS"
check sync sync
check http net/http -test.short -test.run "$http_run"
