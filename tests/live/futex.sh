#!/bin/bash
# live/futex: a condition-variable handoff is a futex wake from the
# signalling thread to the waiting one. The workload
# (tests/workloads/condvar.c) makes sure that the waiter is asleep in the
# kernel before every signal, so each of its N rounds takes exactly one
# futex wake, none optional:
#  - exactly N observed wake edges signaller -> waiter with reason 'futex'
#    whose addr lies inside the pthread_cond_t;
#  - no other wakeup of the waiter (its creator's at spawn aside): none of
#    unknown cause, none futex-less from the signaller, none through
#    another address.

. "$(dirname "$0")/../lib/live.bash" "$@"

ROUNDS=500
capture -q -F 0 --no-offcpu -o "$T/t.cwt" -- "$WL/condvar" "$T/truth" $ROUNDS
need_class futex "$T/t.cwt"
DB=$T/t.db
analyze "$T/t.cwt" "$DB"
read -r _ N < <(grep '^rounds ' "$T/truth") || fail "no rounds line in ground truth"
read -r _ CA CS < <(grep '^cond ' "$T/truth") || fail "no cond line in ground truth"
S=$(thread_node signaller "$T/truth") || exit 1
W=$(thread_node waiter "$T/truth") || exit 1

n=$(q "select count(*) from edges where type = 'wake' and src = $S and dst = $W
       and confidence = 'observed' and reason = 'futex' and addr >= $CA and addr < $CA + $CS")
[ "$n" = "$N" ] || fail "$n observed futex wakes signaller -> waiter on the condition variable for $N rounds"

parent=$(q "select coalesce(max(src), -1) from edges where type = 'spawn' and dst = $W")
other=$(q "select e.type || ' ' || e.confidence || ' ' || coalesce(e.reason, '') || ' addr ' ||
		  coalesce(printf('%#x', e.addr), '-') || ' from ' || coalesce(s.type || ' ' || s.key, 'NULL')
	     from edges e left join nodes s on s.id = e.src
	    where e.dst = $W and e.type in ('wake', 'fire')
	      and not (e.src = $S and e.reason = 'futex' and e.addr >= $CA and e.addr < $CA + $CS)
	      and not (e.src = $parent and e.reason is not 'futex')")
[ -z "$other" ] || fail "the waiter woken otherwise: $(echo "$other" | sort | uniq -c | tr '\n' ';')"
n0=$(q "select count(*) from edges where type = 'wake' and dst = $W and src = $parent
	and reason is not 'futex'")
[ "$n0" -le 1 ] || fail "$n0 wakeups of the waiter by its creator without a futex"
nf=$(q "select count(*) from edges where type = 'wake' and reason = 'futex'")
echo "live/$NAME: $n/$N futex wakes signaller -> waiter through the condition variable, observed;" \
	"no other wakeup of the waiter ($nf futex wakes in all)"
