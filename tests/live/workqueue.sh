#!/bin/bash
# live/workqueue: a wakeup done by a kworker is caused by the work item it
# runs, which the producer queued. The workload (tests/workloads/pty.c)
# writes one byte to a pty master N times; each write queues the slave
# port's flush_to_ldisc work, a kworker runs it and wakes the reader
# blocked on the slave. The workload waits until the reader is asleep
# before each write and for its acknowledgement after, so each write is
# one queueing and one wakeup, none optional:
#  - the work items named flush_to_ldisc that the writer queued are N
#    generations of one work_struct pointer (scope 'wq');
#  - each has exactly one observed queue edge from the writer, one
#    observed execute edge to a kworker thread, and one wake edge (reason
#    'work') to the reader;
#  - the reader is woken by nothing else, but for its creator's wakeup at
#    spawn and the flush barriers (work items named wq_barrier_func): a
#    read that finds no input first waits for the port's flush_to_ldisc
#    to finish (tty_buffer_flush_work), and when the previous byte's work
#    is still running, the barrier the kernel queues behind it wakes the
#    reader. The kernel does not trace a barrier's queueing, so those are
#    orphans (queue not in trace), named by the wake's cause.

. "$(dirname "$0")/../lib/live.bash" "$@"

WRITES=100
capture -q -F 0 --no-offcpu -o "$T/t.cwt" -- "$WL/pty" "$T/truth" $WRITES
need_class workqueue "$T/t.cwt"
DB=$T/t.db
analyze "$T/t.cwt" "$DB"
read -r _ N < <(grep '^writes ' "$T/truth") || fail "no writes line in ground truth"
W=$(thread_node writer "$T/truth") || exit 1
R=$(thread_node reader "$T/truth") || exit 1

sqlite3 -batch "$DB" "create view wi as
	select n.* from nodes n where n.type = 'work_item' and n.scope = 'wq' and n.name = 'flush_to_ldisc'
	   and exists (select 1 from edges e where e.dst = n.id and e.type = 'queue' and e.src = $W)" ||
	fail "cannot create a view"
keys=$(q "select count(distinct key) from wi")
[ "$keys" = 1 ] || fail "the writer queued flush_to_ldisc work items of $keys work_struct pointers, expected 1"
gens=$(q "select count(*) from wi")
[ "$gens" = "$N" ] || fail "$gens flush_to_ldisc generations queued by the writer for $N writes"
n=$(q "select count(distinct generation) from wi")
[ "$n" = "$N" ] || fail "$N generations numbered with $n distinct numbers"

bad=$(q "select w.generation || ':' ||
		(select count(*) from edges e where e.dst = w.id and e.type = 'queue') || 'q' ||
		(select count(*) from edges e join nodes k on k.id = e.dst
		  where e.src = w.id and e.type = 'execute' and e.confidence = 'observed'
		    and k.type = 'thread' and k.name like 'kworker/%') || 'x' ||
		(select count(*) from edges e where e.src = w.id and e.type = 'execute') || 'X' ||
		(select count(*) from edges e where e.src = w.id and e.type = 'wake' and e.dst = $R
		  and e.reason = 'work') || 'w'
	   from wi w
	  where (select count(*) from edges e where e.dst = w.id and e.type = 'queue'
		  and e.src = $W and e.confidence = 'observed') != 1
	     or (select count(*) from edges e where e.dst = w.id and e.type = 'queue') != 1
	     or (select count(*) from edges e join nodes k on k.id = e.dst
		  where e.src = w.id and e.type = 'execute' and e.confidence = 'observed'
		    and k.type = 'thread' and k.name like 'kworker/%') != 1
	     or (select count(*) from edges e where e.src = w.id and e.type = 'execute') != 1
	     or (select count(*) from edges e where e.src = w.id and e.type = 'wake' and e.dst = $R
		  and e.reason = 'work') != 1")
[ -z "$bad" ] || fail "generations without one observed queue from the writer, one observed execute" \
	"to a kworker and one work wake of the reader (gen:queues q, kworker executes x, executes X," \
	"wakes w): $(echo $bad)"

parent=$(q "select coalesce(max(src), -1) from edges where type = 'spawn' and dst = $R")
wakes=$(q "select count(*) from edges e join wi w on w.id = e.src where e.dst = $R and e.type = 'wake'")
other=$(q "select e.type || ' ' || e.confidence || ' ' || coalesce(e.reason, '') || ' from ' ||
		  coalesce(s.type || ' ' || coalesce(s.name, s.key), 'NULL')
	     from edges e left join nodes s on s.id = e.src
	    where e.dst = $R and e.type in ('wake', 'fire')
	      and e.src not in (select id from wi) and e.src is not $parent
	      and not (e.type = 'wake' and s.type = 'work_item' and s.name = 'wq_barrier_func')")
[ -z "$other" ] || fail "the reader woken otherwise: $(echo "$other" | sort | uniq -c | tr '\n' ';')"
n=$(q "select count(*) from edges where type = 'wake' and dst = $R and src = $parent")
[ "$n" -le 1 ] || fail "$n wakeups of the reader by its creator"
workers=$(q "select count(distinct e.dst) from edges e join wi w on w.id = e.src where e.type = 'execute'")
barriers=$(q "select count(*) from edges e join nodes s on s.id = e.src
	      where e.dst = $R and e.type = 'wake' and s.type = 'work_item' and s.name = 'wq_barrier_func'")
echo "live/$NAME: $gens/$N flush_to_ldisc generations of one work item, each queued by the writer," \
	"executed by a kworker ($workers distinct) and waking the reader ($wakes work wakes);" \
	"no other wakeup but $barriers by flush barriers"
