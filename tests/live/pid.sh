#!/bin/bash
# live/pid: -p.
#  - the capture stops by itself once every traced process has exited
#    (stop_reason targets-exited, said in the summary), as perf record -p;
#  - the final switch-out (TASK_DEAD) of each traced process is recorded:
#    the group exit no longer drops the process from the traced set
#    before it;
#  - traced_pids names the -p processes and the descendants they had at
#    start;
#  - -p of a thread that is not its process's leader traces that process
#    and says so.

. "$(dirname "$0")/../lib/live.bash" "$@"

has_pid_line() { grep -q '^pid ' "$1" 2>/dev/null; }
has_children() { [ -n "$(cat "/proc/$1/task/$1/children" 2>/dev/null)" ]; }

# A process with two children before the capture starts, then the spawn
# workload's tree; all gone a moment after the go file appears.
mkfifo "$T/fifo"
sh -c 'sleep 60 & a=$!; sleep 60 & b=$!; read -r _ <"$1"; kill $a $b; wait' sh "$T/fifo" &
SP=$!
pids+=("$SP")
wait_for 10 has_children "$SP" || fail "the shell's children did not start"
kids=$(cat "/proc/$SP/task/$SP/children")
"$WL/spawn" "$T/truth" "$T/go" 200 &
TP=$!
pids+=("$TP")
wait_for 10 has_pid_line "$T/truth" || fail "spawn workload did not start"

start_capture "$T/t.cwt" -p "$SP,$TP"
started=$(date +%s)
touch "$T/go"
wait "$TP" || fail "spawn workload failed"
echo go >"$T/fifo"
wait "$SP"
wait_for 10 eval "! kill -0 $CP 2>/dev/null" || fail "capture still running 10 s after its targets exited"
wait "$CP"
check_capture_rc $? "$T/capture.err"
pids=()
[ "$(kv stop_reason "$T/t.cwt")" = targets-exited ] || fail "stop_reason $(kv stop_reason "$T/t.cwt")"

sorted() { tr -s ' ,' '\n\n' | grep . | sort -n | tr '\n' ,; }
want=$(echo "$SP $TP $kids" | sorted)
got=$(kv traced_pids "$T/t.cwt" | sorted)
[ "$got" = "$want" ] || fail "traced_pids $got, expected $want"

"$AN" --dump "$T/t.cwt" >"$T/t.txt" 2>/dev/null
final_switch() { # pid
	grep -E "^switch .* prev=[0-9]+/$1 " "$T/t.txt" |
		awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^prev_state=/) { split($i, a, "="); if (int(a[2] / 128) % 2) f = 1 } } END { exit !f }'
}
n=0
for p in $(awk '$1 == "pid" { print $2 }' "$T/truth") $SP $kids; do
	final_switch "$p" || fail "process $p: no final switch-out in TASK_DEAD"
	n=$((n + 1))
done

# -p of a thread: its process is traced.
"$WL/pingpong" - 100000000 0 1 &
WP=$!
pids+=("$WP")
for ((i = 0; i < 100; i++)); do
	tid=$(ls "/proc/$WP/task" | grep -vx "$WP" | head -1)
	[ -n "$tid" ] && break
	sleep 0.05
done
[ -n "$tid" ] || fail "pingpong started no thread"
"$CAP" -F 0 --no-offcpu -o "$T/thr.cwt" -p "$tid" -d 1 2>"$T/thr.err"
check_capture_rc $? "$T/thr.err"
grep -q "thread of process $WP" "$T/thr.err" || { cat "$T/thr.err" >&2; fail "-p $tid: no word that it is a thread of $WP"; }
[ "$(kv traced_pids "$T/thr.cwt")" = "$WP" ] || fail "-p $tid: traced_pids $(kv traced_pids "$T/thr.cwt"), expected $WP"
n_wake=$("$AN" --dump "$T/thr.cwt" 2>/dev/null | grep -cE "^waking .* wakee=[0-9]+/$WP ")
[ "$n_wake" -gt 100 ] || fail "-p $tid: only $n_wake wakes of process $WP recorded"
kill "$WP"
wait "$WP" 2>/dev/null
pids=()

# And the summary of a -p capture whose target exits.
sleep 1 &
SL=$!
"$CAP" -F 0 --no-offcpu -o "$T/s.cwt" -p "$SL" 2>"$T/s.err"
check_capture_rc $? "$T/s.err"
grep -q "stop: targets-exited (every traced process exited)" "$T/s.err" || { cat "$T/s.err" >&2; fail "summary does not say the targets exited"; }
echo "live/$NAME: stops when its $n targets exit, each final switch recorded; -p TID traces the process ($n_wake wakes)"
