#!/bin/bash
# live/wake: wakeups are attributed to the right cause.
#  - pipe ping-pong between two threads on one CPU: an observed wake edge
#    in each direction for at least 90% of the round trips;
#  - a thread sleeping in clock_nanosleep N times: none of its wakeups is
#    blamed on a thread (the timer fires in interrupt context, whatever
#    task it interrupted), and at least 90% of N of them are timer wakes:
#    fire edges from a timer node when the capture recorded the timer
#    class (the default where the kernel has it; live/timer checks them
#    in detail), else src NULL with reason hardirq/softirq.

. "$(dirname "$0")/../lib/live.bash" "$@"

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
case ",$(kv classes "$T/t.cwt")," in
*,timer,*)
	how="fire edges from timer nodes"
	tw=$(q "select count(*) from edges e join nodes d on d.id = e.dst join nodes t on t.id = e.src
	        where e.type = 'fire' and d.type = 'thread' and d.key = $S and t.type = 'timer'") ;;
*)
	how="interrupt-context wakes"
	tw=$(q "select count(*) from edges e join nodes d on d.id = e.dst
	        where e.type = 'wake' and d.type = 'thread' and d.key = $S
	          and e.src is null and e.reason in ('hardirq', 'softirq')") ;;
esac
need=$((N * 9 / 10))
[ "$tw" -ge $need ] || fail "$tw $how to the sleeper for $N sleeps (need >= $need)"
echo "live/$NAME: ping-pong $ab/$ba of $R round trips; sleeper $tw of $N timer wakes ($how), none blamed on a thread"
