#!/bin/bash
# live/go: the go class (issue 21) on a Go program built here
# (tests/workloads/gowork/main.go, standard library only), captured with
# -e sched,go at 999 Hz, against the program's own truth (its header says
# why each count is a fact):
#  - every goroutine of the program's own go statements is one
#    runtime_task node (scope pid:P, key its goid) named by its start
#    function as the runtime names it (main.pinger, main.spawner.func1);
#  - spawns: one spawn edge (source runtime) into each of the 2K children,
#    from the spawner's node: exactly K into nodes named main.spawned and
#    K into the closure's, none else from the spawner;
#  - ping-pong: exactly N wakes pinger -> ponger and N ponger -> pinger,
#    all 'chan receive' (source runtime), inside the phase, and no other
#    wake between the two;
#  - sleeps: exactly S wakes into the sleeper, each 'sleep', from a thread
#    of the process (the scheduler runs timers on g0), one inside each
#    sleep;
#  - mutex: exactly M wakes holder -> waiter with the Lock's reason
#    ('semacquire' before Go 1.20, 'sync.Mutex.Lock' after), round I's
#    between the holder's Unlock and the waiter's return from Lock;
#  - requests: exactly R request nodes in pid:P, named 'GET /item/I', each
#    with one begin edge from the serving goroutine's node and one end
#    edge back to it, inside the client's call; each job's handoff is the
#    last wake into its worker before main.burn, from the serving
#    goroutine, 'chan receive', inside the request;
#  - every CPU sample with main.burn in its stack lies in one request's
#    burn (the program's own times), has the serving worker's goroutine as
#    its node, and is attributed to that request, reconstructed, through
#    'request > wake', or is unknown because it was read past its reorder
#    window (docs/model.md §6.1, as live/hops allows); at least 90% carry
#    the request, none a wrong one, and no sample is charged to a request
#    outside its begin and end.
# Then --go-probes requests (docs/model.md §6.2), on the program again,
# against its new truth:
#  - the trace and the database say the mode (go_probes requests, the
#    binary's record counted in go_binaries_requests);
#  - the same 2K spawn edges from the spawner, and every one of those
#    goroutines ended (goexit0 is probed);
#  - the same R requests named GET /item/I, each one begin from and one
#    end to its serving goroutine, inside the client's call;
#  - no resume or wake edge into or out of a goroutine (the scheduler was
#    not probed: none is invented, not even with an unknown cause), no
#    sample whose node is a goroutine or a request, none attributed to a
#    request;
#  - --go-probes with a bad mode, or without the go class: exit 2.
# Then the program stripped (-ldflags='-s -w': no symbol table, no DWARF),
# which the go class refuses (docs/model.md §6.2):
#  - the capture's summary names it, with why, under the count of Go
#    binaries traced as threads; the trace counts it in
#    go_binaries_refused and attaches none;
#  - the database has no goroutine and no request of it, and its threads
#    are there with their sched edges: traced as threads.
# A build whose capture has no go class (issue 21 not merged) skips, and
# says so.

. "$(dirname "$0")/../lib/live.bash" "$@"
top=$(cd "$(dirname "$0")/../.." && pwd)

N=2000 K=20 S=5 M=5 R=40 W=3
need_built_class go
command -v go >/dev/null || fail "go is not installed (Debian: golang-go, which tests/deps.sh installs)"
gocmd build -o "$T/gowork" "$top/tests/workloads/gowork/main.go" || fail "go build of tests/workloads/gowork failed"
capture -q -F 999 -e sched,go -o "$T/t.cwt" -- "$T/gowork" -truth "$T/truth" \
	-n $N -k $K -s $S -m $M -r $R -w $W -burn 20ms
need_class go "$T/t.cwt"
DB=$T/t.db
analyze "$T/t.cwt" "$DB"
P=$(awk '$1 == "pid" { print $2 }' "$T/truth")
[ -n "$P" ] || fail "no pid in the ground truth"
# request I METHOD PATH T0 T1 HANDLER WORKER B0 B1 RETRIES: the name is
# METHOD PATH, as the request node's
q "create table tphase(name, t0, t1);
   insert into tphase values $(truth_rows phase "$T/truth");
   create table ttask(role, goid, fn);
   insert into ttask values $(truth_rows task "$T/truth");
   create table tspawn(parent, role, goid, fn);
   insert into tspawn values $(truth_rows spawn "$T/truth");
   create table tsleep(i, t0, t1);
   insert into tsleep values $(truth_rows sleep "$T/truth");
   create table tmutex(i, tu, tl);
   insert into tmutex values $(truth_rows mutex "$T/truth");
   create table treq(i, method, path, t0, t1, handler, worker, b0, b1, retries);
   insert into treq values $(truth_rows request "$T/truth");" >/dev/null
phase() { q "select t0 || ' ' || t1 from tphase where name = '$1'"; }

# The truth's own premises: all of it there, its times in order.
n=$(q "select (select count(*) from tphase) || ' ' || (select count(*) from tspawn where role = 'spawned') || ' ' ||
	(select count(*) from tspawn where role = 'closure') || ' ' || (select count(*) from tsleep) || ' ' ||
	(select count(*) from tmutex) || ' ' || (select count(*) from treq) || ' ' ||
	(select count(*) from ttask where role = 'worker')")
[ "$n" = "5 $K $K $S $M $R $W" ] || fail "the truth holds (phases spawned closures sleeps rounds requests workers) $n, not 5 $K $K $S $M $R $W"
[ "$(awk '$1 == "pingpong" { print $2 }' "$T/truth")" = $N ] || fail "the truth's ping-pong is not $N messages"
bad=$(q "select count(*) from tphase a join tphase b on a.rowid + 1 = b.rowid where not (a.t0 < a.t1 and a.t1 < b.t0)")
[ "$bad" = 0 ] || fail "the truth's phases overlap"
bad=$(q "select count(*) from treq r left join treq n on n.i = r.i + 1 where not (r.t0 < r.b0 and r.b0 < r.b1
	and r.b1 < r.t1 and r.b1 - r.b0 >= 20000000 and (n.i is null or r.t1 < n.t0)) or r.method || ' ' || r.path
	is not 'GET /item/' || r.i")
[ "$bad" = 0 ] || fail "$bad requests of the truth whose times are not t0 < b0 < b1 < t1 < the next t0, or not GET /item/I"

# Goroutines: one node each, named by its start function.
q "create table gn as select t.role, t.goid, t.fn, (select max(n.id) from nodes n where n.type = 'runtime_task'
	and n.scope = 'pid:$P' and n.key = t.goid) as node, (select count(*) from nodes n where
	n.type = 'runtime_task' and n.scope = 'pid:$P' and n.key = t.goid) as nodes,
	(select n.name from nodes n where n.type = 'runtime_task' and n.scope = 'pid:$P' and n.key = t.goid) as name
   from (select role, goid, fn from ttask union all select role, goid, fn from tspawn) t" >/dev/null
bad=$(q "select count(*) from gn where nodes != 1 or name is not fn")
[ "$bad" = 0 ] || fail "$bad of the program's goroutines are not one runtime_task node named by their start function:
  $(q "select role || ' ' || goid || ' (' || fn || '): ' || nodes || ' nodes, named ' || coalesce(name, 'NULL')
	from gn where nodes != 1 or name is not fn limit 5" | tr '\n' ';')"
node() { q "select node from gn where role = '$1'"; }
PINGER=$(node pinger) PONGER=$(node ponger) SPAWNER=$(node spawner) SLEEPER=$(node sleeper)
HOLDER=$(node holder) WAITER=$(node waiter)

# Spawns: each child's one spawn edge, from the spawner.
bad=$(q "select count(*) from gn g where g.role in ('spawned', 'closure') and
	((select count(*) from edges e where e.type = 'spawn' and e.dst = g.node) != 1 or not exists
	(select 1 from edges e where e.type = 'spawn' and e.dst = g.node and e.src = $SPAWNER and e.source = 'runtime'))")
[ "$bad" = 0 ] || fail "$bad of the $((2 * K)) spawned goroutines lack their one spawn edge (runtime) from the spawner"
got=$(q "select (select count(*) from edges e join nodes d on d.id = e.dst where e.type = 'spawn' and e.src = $SPAWNER
	and d.name = 'main.spawned') || ' ' || (select count(*) from edges e join nodes d on d.id = e.dst
	where e.type = 'spawn' and e.src = $SPAWNER and d.name = (select fn from tspawn where role = 'closure' limit 1))
	|| ' ' || (select count(*) from edges where type = 'spawn' and src = $SPAWNER)")
[ "$got" = "$K $K $((2 * K))" ] || fail "spawn edges from the spawner into main.spawned, the closure, all: $got, not $K $K $((2 * K))"

# Ping-pong: N wakes each way, each a send into a parked receive.
read -r t0 t1 < <(phase pingpong)
PP="from edges where type = 'wake' and (src = $PINGER and dst = $PONGER or src = $PONGER and dst = $PINGER)"
got=$(q "select coalesce(sum(src = $PINGER), 0) || ' ' || coalesce(sum(src = $PONGER), 0) || ' ' ||
	coalesce(sum(reason is 'chan receive' and source = 'runtime' and ts > $t0 and ts < $t1), 0) $PP")
[ "$got" = "$N $N $((2 * N))" ] || fail "ping-pong: wakes pinger->ponger, ponger->pinger, of them 'chan receive' from the runtime inside the phase: $got, not $N $N $((2 * N)):
  $(q "select coalesce(reason, 'NULL') || ' ' || source || ' ' || count(*) $PP group by reason, source" | tr '\n' ';')"

# Sleeps: each ended by its timer, run by the scheduler on a thread.
IN_SLEEPER="from edges e left join nodes s on s.id = e.src where e.type = 'wake' and e.dst = $SLEEPER"
got=$(q "select count(*) || ' ' || coalesce(sum(e.reason is 'sleep' and s.type = 'thread' and s.pid = $P), 0)
	$IN_SLEEPER")
[ "$got" = "$S $S" ] || fail "sleeper: wakes, of them 'sleep' from a thread of $P: $got, not $S $S:
  $(q "select e.ts || ' ' || coalesce(e.reason, 'NULL') || ' from ' || coalesce(s.type || ' ' || s.name, 'NULL')
	$IN_SLEEPER limit 5" | tr '\n' ';')"
bad=$(q "select count(*) from tsleep w where (select count(*) from edges e where e.type = 'wake'
	and e.dst = $SLEEPER and e.ts > w.t0 and e.ts < w.t1) != 1")
[ "$bad" = 0 ] || fail "$bad of $S sleeps without one wake inside"

# Mutex: each round's Unlock readies the parked waiter.
LOCKW="from edges e where e.type = 'wake' and e.src = $HOLDER and e.dst = $WAITER
	and e.reason in ('semacquire', 'sync.Mutex.Lock')"
n=$(q "select count(*) $LOCKW")
[ "$n" = $M ] || fail "$n wakes holder -> waiter with a Lock's reason for $M rounds"
bad=$(q "select count(*) from tmutex m where (select count(*) $LOCKW and e.ts > m.tu and e.ts < m.tl) != 1")
[ "$bad" = 0 ] || fail "$bad of $M rounds without their Lock's wake between the Unlock and the Lock's return"

# Requests: named METHOD PATH, begun and ended on the serving goroutine.
q "create table rq as select r.i, r.t0, r.t1, r.b0, r.b1, n.id as node, n.name,
	(select node from gn where role = 'worker' and goid = r.worker) as worker,
	(select max(h.id) from nodes h where h.type = 'runtime_task' and h.scope = 'pid:$P' and h.key = r.handler) as handler,
	r.method || ' ' || r.path as want
   from treq r left join nodes n on n.type = 'request' and n.scope = 'pid:$P' and n.name = r.method || ' ' || r.path" >/dev/null
q "alter table rq add column nbegin; alter table rq add column nend; alter table rq add column b;
   alter table rq add column e; alter table rq add column nnodes;
   update rq set nnodes = (select count(*) from nodes n where n.type = 'request' and n.scope = 'pid:$P' and n.name = want),
	nbegin = (select count(*) from edges x where x.type = 'begin' and x.dst = node and x.src = handler),
	nend = (select count(*) from edges x where x.type = 'end' and x.src = node and x.dst = handler),
	b = (select min(x.ts) from edges x where x.type = 'begin' and x.dst = node),
	e = (select min(x.ts) from edges x where x.type = 'end' and x.src = node)" >/dev/null
RQ_BAD="node is null or nnodes != 1 or worker is null or handler is null or nbegin != 1 or nend != 1
	or b < t0 or e > t1 or b >= e"
bad=$(q "select count(*) from rq where $RQ_BAD")
[ "$bad" = 0 ] || fail "$bad of $R requests without their node, one begin from and one end to the serving goroutine inside the client's call:
  $(q "select want || ': ' || nnodes || ' nodes, handler ' || coalesce(handler, 'none') || ' begins ' || nbegin ||
	' ends ' || nend || ' b-t0 ' || coalesce(b - t0, 'NULL') || ' t1-e ' || coalesce(t1 - e, 'NULL')
	from rq where $RQ_BAD limit 5" | tr '\n' ';')"
n=$(q "select count(*) from nodes where type = 'request' and scope = 'pid:$P'")
[ "$n" = $R ] || fail "$n request nodes for $R requests"
# The job's handoff: the last wake into the worker before its burn.
bad=$(q "select count(*) from rq r left join edges x on x.id = (select e.id from edges e where e.type = 'wake'
	and e.dst = r.worker and e.ts <= r.b0 order by e.ts desc, e.id desc limit 1)
	where x.id is null or x.src is not r.handler or x.reason is not 'chan receive' or x.ts < r.b")
[ "$bad" = 0 ] || fail "$bad of $R jobs not handed to their worker by the serving goroutine's wake inside the request"

# CPU samples in main.burn: the request whose burn they lie in.
q "create table bs as select s.id, s.ts, s.node, r.i, r.node as want, r.worker, a.request, a.confidence, a.reason
   from samples s left join rq r on s.ts > r.b0 and s.ts < r.b1 left join attribution a on a.sample = s.id
   where s.kind = 'cpu' and exists (select 1 from sample_frames f where f.sample = s.id and f.function = 'main.burn')" >/dev/null
read -r inside outside named late wrong onworker < <(q "select count(i), count(*) - count(i),
	coalesce(sum(request = want and confidence = 'reconstructed' and reason = 'request > wake'), 0),
	coalesce(sum(request is null and confidence = 'unknown' and reason = 'sample read past the reorder window'), 0),
	coalesce(sum(request is not null and request is not want), 0), coalesce(sum(node = worker), 0)
	from bs" | tr '|' ' ')
[ "$inside" -ge "$R" ] || fail "$inside CPU samples in main.burn for $R requests of 20 ms at 999 Hz"
[ "$outside" = 0 ] || fail "$outside CPU samples in main.burn outside every request's burn (the program's own times)"
[ "$wrong" = 0 ] || fail "$wrong CPU samples in main.burn attributed to a request they were not working for:
  $(q "select id || ' in ' || i || ': ' || request || ' (want ' || want || ')' from bs
	where request is not null and request is not want limit 5" | tr '\n' ';')"
[ "$onworker" = "$inside" ] || fail "$onworker of $inside CPU samples in main.burn have the serving worker's goroutine as their node"
if [ $((named + late)) != "$inside" ] || [ $((named * 10)) -lt $((inside * 9)) ]; then
	fail "$named of $inside CPU samples in main.burn carry their request through 'request > wake' ($late read late):
  $(q "select id || ': ' || coalesce(request, 'NULL') || ' (want ' || want || ') ' || coalesce(confidence, '') ||
	' ' || coalesce(reason, '') from bs where not (request is want and confidence = 'reconstructed'
	and reason = 'request > wake') limit 5" | tr '\n' ';')"
fi
stray=$(q "select count(*) from attribution a join samples s on s.id = a.sample join rq r on r.node = a.request
	where s.ts < r.b or s.ts > r.e")
[ "$stray" = 0 ] || fail "$stray samples attributed to a request outside its begin and end"

# The folded export (docs/model.md §8.1): each main.burn stack is rooted at
# its request, then the worker's goroutine, then the handoff.
"$BUILD/causeway-export" folded -q "$DB" -o "$T/t.folded" || fail "folded export failed"
folded=$(grep -c '^GET /item/[0-9]*;goroutine main\.worker;goroutine [^;]* -> wake;.*;main\.burn' "$T/t.folded")
burned=$(grep -c ';main\.burn' "$T/t.folded")
# (a sample read past the reorder window is rooted at its unknown cause)
[ "$burned" -gt 0 ] && { [ "$folded" = "$burned" ] || { [ "$late" -gt 0 ] && [ "$folded" -gt 0 ]; }; } || fail "folded: $folded of $burned stacks through main.burn are rooted 'GET /item/N;goroutine main.worker;goroutine ... -> wake':
  $(grep ';main\.burn' "$T/t.folded" | grep -v '^GET /item/[0-9]*;goroutine main\.worker;' | head -3)"

echo "live/$NAME: $((2 * K)) spawns from main.spawner, $((2 * N)) ping-pong wakes, $S sleeps, $M Lock handoffs," \
	"$R requests (GET /item/0..$((R - 1))) handed to their workers; $named/$inside CPU samples in main.burn" \
	"carry their request ($late read late), none a wrong one"

# --go-probes requests: goroutines made and ended, and requests; nothing
# of the scheduler.
capture -q -F 999 -e sched,go --go-probes requests -o "$T/r.cwt" -- "$T/gowork" -truth "$T/rtruth" \
	-n $N -k $K -s $S -m $M -r $R -w $W -burn 20ms
DB=$T/r.db
analyze "$T/r.cwt" "$DB"
P=$(awk '$1 == "pid" { print $2 }' "$T/rtruth")
got="$(kv go_probes "$T/r.cwt") $(meta go_probes "$DB") $(meta go_binaries_requests "$DB")"
[ "$got" = "requests requests 1" ] || fail "--go-probes requests: go_probes in the trace, in meta, go_binaries_requests: $got"
q "create table tspawn(parent, role, goid, fn);
   insert into tspawn values $(truth_rows spawn "$T/rtruth");
   create table treq(i, method, path, t0, t1, handler, worker, b0, b1, retries);
   insert into treq values $(truth_rows request "$T/rtruth");
   create table ttask(role, goid, fn);
   insert into ttask values $(truth_rows task "$T/rtruth");" >/dev/null
G="from nodes n where n.type = 'runtime_task' and n.scope = 'pid:$P'"
SPAWNER=$(q "select max(n.id) $G and n.key = (select goid from ttask where role = 'spawner')")
[ -n "$SPAWNER" ] || fail "--go-probes requests: no node for main.spawner"
bad=$(q "select count(*) from tspawn t where (select count(*) $G and n.key = t.goid and n.name = t.fn
	and n.end_ns is not null and (select count(*) from edges e where e.type = 'spawn' and e.dst = n.id) = 1
	and exists (select 1 from edges e where e.type = 'spawn' and e.dst = n.id and e.src = $SPAWNER)) != 1")
[ "$bad" = 0 ] || fail "--go-probes requests: $bad of $((2 * K)) spawned goroutines not one node named by its function, spawned by main.spawner, ended"
q "alter table treq add column hnode; update treq set hnode = (select max(n.id) $G and n.key = handler)" >/dev/null
bad=$(q "select count(*) from treq r where (select count(*) from nodes n where n.type = 'request' and n.scope = 'pid:$P'
	and n.name = r.method || ' ' || r.path and (select count(*) from edges e where e.dst = n.id and e.type = 'begin'
	and e.ts > r.t0 and e.src = r.hnode) = 1 and (select count(*) from edges e
	where e.src = n.id and e.type = 'end' and e.ts < r.t1 and e.dst = r.hnode) = 1) != 1")
n=$(q "select count(*) from nodes where type = 'request' and scope = 'pid:$P'")
[ "$bad" = 0 ] && [ "$n" = $R ] || fail "--go-probes requests: $n request nodes, $bad of $R requests without their node, one begin from and one end to the serving goroutine inside the client's call"
got=$(q "select (select count(*) from edges e where e.type in ('wake', 'resume') and (e.src in (select id from nodes
	where type = 'runtime_task') or e.dst in (select id from nodes where type = 'runtime_task'))) || ' ' ||
	(select count(*) from samples s join nodes n on n.id = s.node where n.type in ('runtime_task', 'request')) || ' ' ||
	(select count(*) from attribution where request is not null) || ' ' || (select count(*) from samples)")
read -r handoffs ongo attributed nsamples <<<"$got"
[ "$handoffs $ongo $attributed" = "0 0 0" ] && [ "$nsamples" -gt 0 ] || fail "--go-probes requests: wake or resume edges of goroutines, samples on a goroutine or request, samples attributed to a request, samples: $got, expected 0 0 0 and some samples"
expect_rc 2 "'handoffs' is not all or requests" "--go-probes, a bad mode" -- \
	"$CAP" -o "$T/x.cwt" -e sched,go --go-probes handoffs -- true
expect_rc 2 "--go-probes does nothing without the go class" "--go-probes without -e go" -- \
	"$CAP" -o "$T/x.cwt" -e sched --go-probes requests -- true
[ ! -e "$T/x.cwt" ] || fail "a refused --go-probes capture left $T/x.cwt"
echo "live/$NAME: --go-probes requests: $((2 * K)) spawns from main.spawner, each goroutine ended, $R requests" \
	"with their begin and end; no wake or resume edge of a goroutine, $nsamples samples left on threads;" \
	"a bad mode and no go class: exit 2"

# A stripped Go binary: refused by name, traced as threads.
gocmd build -ldflags='-s -w' -o "$T/gostrip" "$top/tests/workloads/gowork/main.go" || fail "go build -ldflags='-s -w' failed"
"$CAP" -F 999 -e sched,go -o "$T/s.cwt" -- "$T/gostrip" -truth "$T/struth" -n 200 -k 2 -s 1 -m 1 -r 4 -w 2 \
	>/dev/null 2>"$T/s.err"
check_capture_rc $? "$T/s.err"
grep -q "^causeway-capture: go: 1 Go binaries traced as threads" "$T/s.err" &&
	grep -qF "  $T/gostrip (" "$T/s.err" || fail "the summary does not name the stripped binary:
  $(tail -5 "$T/s.err")"
got="$(kv go_binaries_refused "$T/s.cwt") $(kv go_binaries "$T/s.cwt")"
[ "$got" = "1 0" ] || fail "stripped: go_binaries_refused and go_binaries in the trace: $got, not 1 0"
DB=$T/s.db
analyze "$T/s.cwt" "$DB"
P=$(awk '$1 == "pid" { print $2 }' "$T/struth")
got=$(q "select (select count(*) from nodes where type in ('runtime_task', 'request') and scope = 'pid:$P') || ' ' ||
	(select count(*) from nodes where type = 'thread' and pid = $P) || ' ' ||
	(select count(*) from edges e join nodes d on d.id = e.dst where d.type = 'thread' and d.pid = $P
	and e.type in ('wake', 'resume'))")
read -r gos threads sched <<<"$got"
[ "$gos" = 0 ] && [ "$threads" -ge 2 ] && [ "$sched" -gt 0 ] || fail "stripped: goroutine and request nodes, threads of $P, their wake and resume edges: $got, expected 0, at least 2, some"
echo "live/$NAME: stripped: named in the summary ($(grep -F "  $T/gostrip (" "$T/s.err" | sed "s|.*$T/gostrip ||")), go_binaries_refused 1, no goroutine, $threads threads with $sched wakes and resumes"
