#!/bin/bash
# live/command: -- COMMAND.
#  - a command that cannot be executed: exit 2 naming the exec error, and
#    no trace (nor temporary file) is left;
#  - the capture exits with the command's status (128 + N for signal N);
#  - -d ends a command still running with SIGTERM (status 143);
#  - a SIGKILLed capture does not leave its command running;
#  - the command's final switch-out (TASK_DEAD) is recorded, which the
#    traced set used to lose at the group exit; traced_pids names it;
#  - a capture given CAP_BPF and CAP_PERFMON as ambient capabilities
#    (setpriv, systemd's AmbientCapabilities=) does not pass them to the
#    command: its ambient and inheritable sets are empty (they were the
#    capture's, 000000c000000000).

. "$(dirname "$0")/../lib/live.bash" "$@"

run() { "$CAP" -q -F 0 --no-offcpu "$@"; }

expect_rc 2 "cannot run /nonexistent/cmd: No such file" "exec failure" -- run -o "$T/x.cwt" -- /nonexistent/cmd
[ -z "$(ls -A "$T" | grep -v '^out$\|^err$')" ] || fail "exec failure left $(ls -A "$T")"

expect_rc 3 "" "command exiting 3" -- run -o "$T/s3.cwt" -- sh -c 'exit 3'
[ "$(kv stop_reason "$T/s3.cwt")" = command-exit ] || fail "exit 3: stop_reason $(kv stop_reason "$T/s3.cwt")"
expect_rc 0 "" "command exiting 0" -- run -o "$T/s0.cwt" -- true
expect_rc 138 "" "command killed by SIGUSR1" -- run -o "$T/s138.cwt" -- sh -c 'kill -USR1 $$'
expect_rc 143 "" "-d ends the command" -- run -d 1 -o "$T/d.cwt" -- sleep 30
[ "$(kv stop_reason "$T/d.cwt")" = duration ] || fail "-d: stop_reason $(kv stop_reason "$T/d.cwt")"
expect_rc 0 "command exited with status 0" "summary names the status" -- \
	"$CAP" -F 0 --no-offcpu -o "$T/sum.cwt" -- true

# SIGKILL: the command dies with the capture (parent-death signal).
start_capture "$T/k.cwt" -- sleep 60
child=$(cat "/proc/$CP/task/$CP/children")
[ -n "$child" ] || fail "no command child under capture $CP"
kill -KILL "$CP"
wait "$CP" 2>/dev/null
pids=()
wait_for 5 eval "! kill -0 $child 2>/dev/null" || { kill "$child"; fail "command $child outlived its SIGKILLed capture"; }

# The final switch of every process of the workload, and traced_pids.
capture -q -F 0 --no-offcpu -o "$T/t.cwt" -- "$WL/spawn" "$T/truth"
"$AN" --dump "$T/t.cwt" >"$T/t.txt" 2>/dev/null
first=$(awk '$1 == "pid" { print $2; exit }' "$T/truth")
[ "$(kv traced_pids "$T/t.cwt")" = "$first" ] || fail "traced_pids '$(kv traced_pids "$T/t.cwt")', expected the command $first"
n=0
for p in $(awk '$1 == "pid" { print $2 }' "$T/truth"); do
	grep -E "^switch .* prev=[0-9]+/$p " "$T/t.txt" |
		awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^prev_state=/) { split($i, a, "="); if (int(a[2] / 128) % 2) f = 1 } } END { exit !f }' ||
		fail "process $p: no final switch-out in TASK_DEAD"
	n=$((n + 1))
done

# Ambient capabilities stay with the capture. Without the capture in
# between, the same setpriv gives them to grep: the test can fail.
command -v setpriv >/dev/null || fail "setpriv (util-linux) not installed"
amb=(setpriv --inh-caps +bpf,+perfmon --ambient-caps +bpf,+perfmon)
"${amb[@]}" grep -q '^CapAmb:[[:space:]]*000000c000000000$' /proc/self/status ||
	fail "setpriv does not raise ambient CAP_BPF and CAP_PERFMON here"
"${amb[@]}" "$CAP" -q -F 0 --no-offcpu -o "$T/caps.cwt" -- grep -E '^Cap(Amb|Inh):' /proc/self/status \
	>"$T/caps" 2>"$T/capture.err"
check_capture_rc $? "$T/capture.err"
for set in CapAmb CapInh; do
	v=$(awk -v s="$set:" '$1 == s { print $2 }' "$T/caps")
	[ "$v" = 0000000000000000 ] || fail "the command's $set is '$v', not 0: it holds the capture's capabilities"
done
echo "live/$NAME: exec failure, exit statuses, -d, SIGKILL, the final switches of $n processes and the command's capabilities behave"
