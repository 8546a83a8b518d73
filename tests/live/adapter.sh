#!/bin/bash
# live/adapter: runtime tasks, requests and resources declared through
# include/causeway.h (tests/workloads/taskpool.c), against the program's
# own ground truth:
#  - every task id lives twice (two rounds): two runtime_task generations
#    in scope pid:PID, each spawned by the main thread;
#  - every poll is a resume edge from that generation of the task to the
#    worker thread that polled it, and tasks moved between workers;
#  - every request is a request node with a begin edge from its thread and
#    an end edge back to it;
#  - every cache wait the program saw is a resource_waits row of the
#    waiting request whose waker is the request that released the entry
#    (observed through its wake; reconstructed from the release where no
#    wake came from it: the waiter had not slept yet, or a pthread mutex,
#    not handed off, was taken by the releaser after the wake), or is
#    unknown with 'no release in wait' where the releaser's release came
#    before the wait began (the entry was free by the wait's begin); at
#    least 75% are joined, and no row names another request as the
#    waker;
#  - samples (CPU at 999 Hz and off-CPU) are attributed: every sample taken
#    between a request's begin and end on its thread names that request,
#    observed (at least 90%), or is unknown because it was read past the
#    reorder window; no observed attribution names a request outside its
#    interval or thread, and a reconstructed one always spells its chain;
#    samples whose node is a task name that task, observed, unless the
#    task carries a request from its spawn (a lock's wake can hand a
#    client's request to the spawning thread: docs/model.md §6.1), and
#    then reconstructed, with its chain.

. "$(dirname "$0")/../lib/live.bash" "$@"

capture -q -F 999 -e sched,usdt -o "$T/t.cwt" -- "$WL/taskpool" "$T/truth"
need_class usdt "$T/t.cwt"
DB=$T/t.db
analyze "$T/t.cwt" "$DB"
P=$(awk '$1 == "pid" { print $2 }' "$T/truth")
q "create table tpoll(round, task, step, tid);
   insert into tpoll values $(truth_rows poll "$T/truth");
   create table treq(id, tid);
   insert into treq values $(truth_rows request "$T/truth");" >/dev/null
if grep -q '^wait ' "$T/truth"; then
	q "create table twait(waiter, entry, releaser);
	   insert into twait values $(truth_rows wait "$T/truth");" >/dev/null
else
	fail "the workload saw no cache wait: no contention to check"
fi

# Tasks: generations, spawns, resume edges.
read -r ntasks ngen < <(q "select count(distinct key), count(*) from nodes
	where type = 'runtime_task' and scope = 'pid:$P'" | tr '|' ' ')
want=$(q "select count(distinct task) from tpoll")
[ "$ntasks" = "$want" ] && [ "$ngen" = $((2 * want)) ] ||
	fail "$ntasks task ids in $ngen generations, for $want ids polled in 2 rounds"
MAIN=$(q "select max(id) from nodes where type = 'thread' and key = $P")
sp=$(q "select count(*) from edges e join nodes t on t.id = e.dst
	where e.type = 'spawn' and t.type = 'runtime_task' and t.scope = 'pid:$P' and e.src = $MAIN")
[ "$sp" = "$ngen" ] || fail "$sp task spawn edges from the main thread for $ngen task generations"
# generation g of task k is round g + 1: the poll's resume edge goes from
# it to the polling thread's node
q "create table tres as
     select p.round, p.task, p.tid, count(*) as n from tpoll p group by 1, 2, 3" >/dev/null
miss=$(q "select count(*) from tres r where r.n != (select count(*) from edges e
	join nodes k on k.id = e.src join nodes t on t.id = e.dst
	where e.type = 'resume' and k.type = 'runtime_task' and k.scope = 'pid:$P' and k.key = r.task
	  and k.generation = r.round - 1 and t.type = 'thread' and t.key = r.tid)")
[ "$miss" = 0 ] || fail "$miss (task, generation, thread) triples whose resume edges differ from the polls:
  $(q "select r.round || ' ' || r.task || ' ' || r.tid || ' polls ' || r.n from tres r limit 5" | tr '\n' ';')"
extra=$(q "select count(*) from edges e join nodes k on k.id = e.src
	where e.type = 'resume' and k.type = 'runtime_task' and k.scope = 'pid:$P'")
npolls=$(q "select count(*) from tpoll")
[ "$extra" = "$npolls" ] || fail "$extra resume edges for $npolls polls"
moved=$(q "select count(*) from (select round, task from tpoll group by 1, 2 having count(distinct tid) > 1)")

# Requests.
bad=$(q "select count(*) from treq r where
	(select count(*) from edges e join nodes t on t.id = e.src join nodes n on n.id = e.dst
	  where e.type = 'begin' and n.type = 'request' and n.scope = 'pid:$P' and n.key = r.id
	    and t.type = 'thread' and t.key = r.tid) != 1
	or (select count(*) from edges e join nodes n on n.id = e.src join nodes t on t.id = e.dst
	  where e.type = 'end' and n.type = 'request' and n.scope = 'pid:$P' and n.key = r.id
	    and t.type = 'thread' and t.key = r.tid) != 1")
[ "$bad" = 0 ] || fail "$bad requests without exactly one begin edge from and one end edge to their thread"

# Waits: joined to the releasing request, never to another.
nw=$(q "select count(*) from twait")
ok=$(q "select count(*) from twait w where exists (select 1 from resource_waits rw
	join nodes wr on wr.id = rw.waiter join nodes res on res.id = rw.resource
	join nodes kr on kr.id = rw.waker
	where wr.type = 'request' and wr.key = w.waiter and kr.type = 'request' and kr.key = w.releaser
	  and res.type = 'resource' and res.name like '%cache_entry%')")
wrong=$(q "select count(*) from resource_waits rw join nodes wr on wr.id = rw.waiter
	join nodes kr on kr.id = rw.waker join twait w on w.waiter = wr.key
	where wr.type = 'request' and kr.type = 'request' and kr.key != w.releaser")
[ "$wrong" = 0 ] || fail "$wrong waits joined to a request that did not release the entry"
# 'no release in wait': the releaser's release edge lies before the
# wait, none in it.
early=$(q "select count(*) from twait w join resource_waits rw join nodes wr on wr.id = rw.waiter
	join nodes res on res.id = rw.resource
	where wr.type = 'request' and wr.key = w.waiter and res.key = w.entry
	  and rw.waker is null and rw.reason = 'no release in wait'
	  and exists (select 1 from edges a join nodes kr on kr.id = a.src
	    where a.type = 'release' and a.dst = rw.resource and kr.type = 'request'
	      and kr.key = w.releaser and a.ts <= rw.start_ns)
	  and not exists (select 1 from edges a where a.type = 'release' and a.dst = rw.resource
	    and a.ts > rw.start_ns and a.ts <= rw.end_ns)")
recon=$(q "select count(*) from resource_waits where confidence = 'reconstructed'
	and reason = 'let in by the last release in the wait, no wake from it'")
{ [ $((ok + early)) = "$nw" ] && [ $((ok * 4)) -ge $((nw * 3)) ]; } ||
	fail "$ok of $nw cache waits joined to the releasing request, $early unknown with its release before the wait:
  $(q "select coalesce(wr.name, '?') || ' waker ' || coalesce(kr.type || ' ' || kr.name, 'NULL') || ' ' || rw.confidence || ' ' || coalesce(rw.reason, '')
	from resource_waits rw left join nodes wr on wr.id = rw.waiter left join nodes kr on kr.id = rw.waker
	where rw.waker is null or kr.type != 'request' limit 6" | tr '\n' ';')"
# Attribution: the request intervals from the begin and end edges.
q "create table rint as select n.id as req, b.src as thread, b.ts as t0, e.ts as t1
     from nodes n join edges b on b.dst = n.id and b.type = 'begin'
     join edges e on e.src = n.id and e.type = 'end' where n.type = 'request' and n.scope = 'pid:$P'" >/dev/null
inside=$(q "select count(*) from samples s join rint r on r.thread = s.thread and s.ts > r.t0 and s.ts < r.t1")
named=$(q "select count(*) from samples s join rint r on r.thread = s.thread and s.ts > r.t0 and s.ts < r.t1
	join attribution a on a.sample = s.id where a.request = r.req and a.confidence = 'observed'")
# A sample the analyzer read past its reorder window (a loaded machine
# drains the sample ring late) is unknown, and says so; nothing else may
# miss its request.
late=$(q "select count(*) from samples s join rint r on r.thread = s.thread and s.ts > r.t0 and s.ts < r.t1
	join attribution a on a.sample = s.id where a.request is null and a.confidence = 'unknown'
	  and a.reason = 'sample read past the reorder window'")
[ "$inside" -ge 10 ] || fail "only $inside samples inside requests"
[ $((named + late)) = "$inside" ] && [ $((named * 10)) -ge $((inside * 9)) ] ||
	fail "$named of $inside samples inside a request are attributed to it, observed ($late read late)"
stray=$(q "select count(*) from attribution a join samples s on s.id = a.sample where a.request is not null
	and a.confidence = 'observed'
	and not exists (select 1 from rint r where r.req = a.request and r.thread = s.thread and s.ts > r.t0 and s.ts < r.t1)")
[ "$stray" = 0 ] || fail "$stray samples attributed to a request outside its interval or thread, observed"
# Outside an interval a request is only ever reconstructed, over a chain
# of handoffs that the reason spells (bench/truth scores how right).
nochain=$(q "select count(*) from attribution where confidence = 'reconstructed'
	and (request is null or reason is null or (reason not like 'request > %' and reason not like 'task in request > %'))")
[ "$nochain" = 0 ] || fail "$nochain reconstructed attributions without a request or a chain"
tk=$(q "select count(*) from samples s join nodes n on n.id = s.node and n.type = 'runtime_task'")
tok=$(q "select count(*) from samples s join nodes n on n.id = s.node and n.type = 'runtime_task'
	join attribution a on a.sample = s.id where a.task = n.id and a.confidence = 'observed'")
tcarried=$(q "select count(*) from samples s join nodes n on n.id = s.node and n.type = 'runtime_task'
	join attribution a on a.sample = s.id where a.task = n.id and a.confidence = 'reconstructed'
	  and a.request is not null and a.reason like 'request > %'")
[ $((tok + tcarried)) = "$tk" ] ||
	fail "$tok of $tk samples in task polls attributed to their task, observed ($tcarried with a request carried from the spawn)"
echo "live/$NAME: $named/$inside samples inside requests ($late read late) and $tok/$tk inside task polls attributed ($tcarried of those with a request carried from the spawn), observed; none outside"
echo "live/$NAME: $ntasks tasks in $ngen generations, $npolls polls as resume edges ($moved task lives moved" \
	"between workers); $(wc -l <<<"$(q "select id from treq")") requests begun and ended; $ok/$nw cache waits" \
	"joined to the releasing request ($recon from the release, without its wake), $early released before the wait; none to another"
