#!/bin/bash
# live/context: how interrupt context is told apart (docs/model.md §5.6).
#  - the capture says which method it uses, at start and in the metadata
#    (context_method), and on this machine it has one;
#  - --context-method none (what a kernel without any method gets): every
#    wakeup is recorded with context unknown, never as task context, so
#    none is blamed on a thread; the capture still starts;
#  - a method this kernel cannot offer is refused, naming why;
#  - each method that is offered tells the timer wakeups of a sleeping
#    thread apart from the ping-pong's task wakeups (in the waking records,
#    and the waking_caused ones that also name a cause, such as the timer).

. "$(dirname "$0")/../lib/live.bash" "$@"

expect_rc 0 "interrupt context from the preempt count: [a-z_]+ method" "default" -- \
	"$CAP" -v -F 0 --no-offcpu -d 0.3 -o "$T/d.cwt"
method=$(kv context_method "$T/d.cwt")
case $method in
ksym | runqueue | thread_info) ;;
*) fail "context_method '$method' on a kernel that has a method" ;;
esac
expect_rc 2 "is not auto, ksym" "--context-method bogus" -- "$CAP" -q --context-method bogus -d 1 -o "$T/b.cwt"

# Which methods this machine can offer, by the capture's own test.
offered=()
for m in ksym runqueue thread_info; do
	"$CAP" -q -F 0 --no-offcpu --context-method $m -d 0.2 -o "$T/m-$m.cwt" 2>"$T/m-$m.err"
	rc=$?
	if [ $rc = 0 ]; then
		offered+=("$m")
	elif [ $rc = 2 ] && grep -q "context method $m is not available: ." "$T/m-$m.err"; then
		[ -e "$T/m-$m.cwt" ] && fail "refused --context-method $m left a trace"
	else
		cat "$T/m-$m.err" >&2
		fail "--context-method $m: exit $rc"
	fi
done
[ ${#offered[@]} -gt 0 ] || fail "no context method offered"

# Ping-pong wakes (task context) and a sleeper's timer wakes (interrupt).
wakes() { # trace method
	capture -q -F 0 --no-offcpu --context-method "$2" -o "$1" -- \
		taskset -c 0 "$WL/pingpong" "$T/truth-$2" 500 100
	[ "$(kv context_method "$1")" = "$2" ] || fail "$2: context_method $(kv context_method "$1")"
	"$AN" --dump "$1" 2>/dev/null | grep -E '^waking(_caused)? ' >"$1.txt"
	read -r _ S _ < <(grep '^sleeper ' "$T/truth-$2")
	read -r _ A B _ < <(grep '^pingpong ' "$T/truth-$2")
}
for m in "${offered[@]}"; do
	wakes "$T/w-$m.cwt" "$m"
	n=$(grep -cE " ctx=task waker=$A/[0-9]+ wakee=$B/" "$T/w-$m.cwt.txt")
	[ "$n" -ge 450 ] || fail "$m: $n task-context wakes $A -> $B for 500 round trips"
	n=$(grep -E "wakee=$S/" "$T/w-$m.cwt.txt" | grep -cE " ctx=(softirq|hardirq)")
	[ "$n" -ge 90 ] || fail "$m: $n interrupt-context wakes of the sleeper for 100 sleeps"
done

expect_rc 0 "interrupt context cannot be told apart" "--context-method none" -- \
	"$CAP" -F 0 --no-offcpu --context-method none -d 0.2 -o "$T/n0.cwt"
wakes "$T/n.cwt" none
n=$(grep -c ' ctx=unknown ' "$T/n.cwt.txt")
other=$(grep -vc ' ctx=unknown ' "$T/n.cwt.txt")
[ "$n" -ge 1000 ] || fail "none: only $n wakes with context unknown"
[ "$other" = 0 ] || fail "none: $other wakes with a context: $(grep -v ' ctx=unknown ' "$T/n.cwt.txt" | head -1)"
analyze "$T/n.cwt" "$T/n.db"
blamed=$(DB=$T/n.db q "select count(*) from edges where type = 'wake' and src is not null")
[ "$blamed" = 0 ] || fail "none: $blamed wakes blamed on a thread"
echo "live/$NAME: default $method; offered: ${offered[*]}; none records every wake as unknown ($n)"
