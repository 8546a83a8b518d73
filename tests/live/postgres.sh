#!/bin/bash
# live/postgres: a stock Debian PostgreSQL 15, traced through its own USDT
# probes with no change to it (the built-in adapter). A throwaway cluster
# (tests/lib/pg.bash) runs pgbench's TPC-B-like script, CLIENTS clients x
# TXNS transactions each, simple protocol, at scale 1: every transaction
# updates the one pgbench_branches row, so transactions wait for each
# other's row locks. Checks:
#  - one request per executed statement of the script (7 per transaction),
#    named by its text, on the backends (children of the postmaster);
#  - lock waits (resource_waits on heavyweight locks) exist, and at least
#    80% of them name the query the waking backend was running when it
#    woke the waiter (its request), with the waker another backend;
#  - nested waits (docs/model.md §6): no lock wait's wake is one that
#    ended (or came in) an LWLock wait begun in it by the same waiter (the
#    backend, granted the lock, waits for the lock manager's LWLock its
#    granter still holds, and that release wakes it: the LWLock wait's
#    wake, not the lock wait's, which is the grant before it); the summary
#    counts the lock waits that held such an LWLock wait;
#  - the critical path through a lock (docs/model.md §9, critical_waits;
#    the waits recorded, OFFCPU=1): of the queries that waited for a
#    heavyweight lock another backend's query released, at least 90% have
#    such a wait of their own on their critical path, or an LWLock wait
#    begun in it, whose wake takes the path into the granting backend
#    before the grant (not all need to: a later wait of the query's, on
#    another LWLock, can take the path into another backend before it
#    reaches the lock), at least 10 of them; each of those rows is the
#    runnable segment of the query's own backend, its edge the wait's
#    wake, and the segment before it runs in the waking backend (the path
#    follows the wake into it); and the path of each such query tiles its
#    wall time (segments within 5% of it, from its begin to its end);
#    request_critical says 'lock' for that runnable segment ('lwlock' for
#    an LWLock wait begun in the lock wait); the Perfetto export names at
#    least one blocked slice per such query 'lock ... released by ...'
#    and holds to the database (tests/export/perfetto.py), and the DOT
#    graph of one such query with 'lock' runnable time labels its heavy
#    wake 'lock ... released by ...';
#  - by default the buffer probes are not attached, and the database says
#    so: no buffer hit (no buffer resource, no quiet wait), meta
#    usdt_probes_off naming both, capture.usdt_probes_deselected 2 (the
#    postgres binary's two); with --usdt-probes all, TXNS more
#    transactions make buffer hits (every page a statement touches is
#    read through the pool) and usdt_probes_off is empty;
#  - the WAL flush on the critical path: the cluster restarted with fsync
#    and synchronous_commit on, TXNS transactions captured with
#    -e sched,usdt,block,workqueue: at least 90% of the END; queries (each
#    commits, and waits for its WAL record to be flushed, by its own
#    backend or, grouped, by another's) have a handoff on a block request
#    on their critical path, and each path tiles the query's wall time
#    within 5%. Where the disk has a volatile cache (its queue's
#    write_cache says "write back", or the capture holds FLUSH requests),
#    at least 90% of them have the cache flush on it as
#    the block layer issues it: a handoff on the FLUSH, before it a
#    handoff on the work item that submitted it (blk_mq_requeue_work,
#    queued by the fdatasync), before that a postgres backend. The
#    workqueue class is needed for that: under -p the block class records
#    the requests of the traced set and of the work items it queued, and
#    it knows the requeue work the backend queued only from the workqueue
#    class; without it the FLUSH's completion still wakes the backend, but
#    as a block request whose issue is not in the trace, and the path
#    stops there ('birth not in trace', docs/model.md §2.2).

. "$(dirname "$0")/../lib/live.bash" "$@"
. "$(dirname "$0")/../lib/pg.bash"

CLIENTS=4 TXNS=100
pg "$PGBIN/pgbench" -h "$PGDIR" -U postgres -i -s 1 -q postgres >"$T/init.log" 2>&1 ||
	{ cat "$T/init.log" >&2; fail "pgbench -i failed"; }
# pgbench under a capture of trace $1 of the classes $2 with capture
# options $3...
traced_bench() { # trace classes [capture arguments...]
	local c
	start_capture "$1" -e "$2" -p "$PGPID" "${@:3}"
	pg "$PGBIN/pgbench" -h "$PGDIR" -U postgres -n -M simple -c $CLIENTS -t $TXNS postgres >"$T/bench.log" 2>&1 ||
		{ cat "$T/bench.log" >&2; fail "pgbench failed"; }
	kill -INT "$CP"
	wait "$CP" || fail "the capture exited $?"
	for c in ${2//,/ }; do
		need_class "$c" "$1"
	done
	analyze "$1" "${1%.cwt}.db"
}
# traced_bench with the waits recorded, for the critical path, which a
# coverage break stops (docs/model.md §9: a lost record could be a wait,
# and a sample record lost in a short capture makes a break of the whole
# capture). A capture that lost events cannot show the path: once more,
# saying so, and a failure if that one lost events too.
walked_bench() { # trace classes [capture arguments...]
	local try lost
	for try in 1 2; do
		OFFCPU=1 traced_bench "$@"
		lost=$(DB=${1%.cwt}.db q "select count(*) || ' breaks, ' || coalesce(sum(lost_events), 0) || ' events lost ('
			|| coalesce(group_concat(distinct stream), '') || ')' from coverage_breaks")
		case $lost in 0\ *) return 0 ;; esac
		echo "live/$NAME: the capture of $(basename "$1") lost events: $lost; try $try of 2" >&2
		rm -f "$1" "${1%.cwt}.db"
	done
	fail "$(basename "$1"): both captures lost events, the critical path cannot be walked: $lost"
}
# The requests of database $DB whose critical path does not tile their
# wall time (segments summing to within 5% of it, from begin to end),
# among the request ids the query $1 selects.
untiled() { # sql
	q "select count(*) from nodes r
		join (select request, sum(end_ns - start_ns) as ns, min(start_ns) as s, max(end_ns) as e
			from critical_path group by request) c on c.request = r.id
		where r.id in ($1) and (c.ns < 0.95 * (r.end_ns - r.start_ns) or c.ns > 1.05 * (r.end_ns - r.start_ns)
			or c.s != r.start_ns or c.e != r.end_ns)
	  + (select count(*) from ($1) x where not exists (select 1 from critical_path c where c.request = x.id))"
}
# Buffer-probe hits in database $DB: a page found in the pool is a quiet
# wait (only the buffer probes have one), a page read a buffer wait.
buffer_hits() {
	q "select (select value from meta where key = 'resource_waits_quiet')
		+ (select count(*) from resource_waits rw join nodes r on r.id = rw.resource
		   where r.scope like 'pid:%/buffer%')
		+ (select count(*) from nodes where type = 'resource' and scope like 'pid:%/buffer%')"
}
walked_bench "$T/t.cwt" sched,usdt
DB=$T/t.db
done_tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$T/bench.log")
[ "$done_tx" = $((CLIENTS * TXNS)) ] || fail "pgbench processed $done_tx transactions"

n=$(q "select count(*) from nodes where type = 'request' and scope = 'pid:' || pid
	and (name like 'UPDATE pgbench_accounts%' or name like 'SELECT abalance%'
	  or name like 'UPDATE pgbench_tellers%' or name like 'UPDATE pgbench_branches%'
	  or name like 'INSERT INTO pgbench_history%' or name = 'BEGIN;' or name = 'END;')")
[ "$n" = $((done_tx * 7)) ] || fail "$n requests named by the script's statements for $done_tx transactions x 7:
  $(q "select name, count(*) from nodes where type = 'request' group by 1 order by 2 desc limit 9" | tr '\n' ';')"
read -r nw named < <(q "select count(*), sum(k.type = 'request' and k.pid != w.pid)
	from resource_waits rw join nodes r on r.id = rw.resource join nodes w on w.id = rw.waiter
	left join nodes k on k.id = rw.waker where r.name like 'lock%'" | tr '|' ' ')
[ "$nw" -ge 10 ] || fail "$nw lock waits under $CLIENTS clients updating one row"
[ $((named * 100)) -ge $((nw * 80)) ] || fail "$named of $nw lock waits name the releasing backend's query:
  $(q "select coalesce(k.type || ' ' || k.name, 'NULL') || ' ' || rw.confidence || ' ' || coalesce(rw.reason, '')
	from resource_waits rw left join nodes k on k.id = rw.waker limit 5" | tr '\n' ';')"

# Nested waits (docs/model.md §6): a backend granted a lock takes the
# lock manager's partition LWLock before its lock wait ends, and waits
# for it when the granting backend still holds it; that LWLock's release
# wakes it again. The wake that ended the LWLock wait is the LWLock
# wait's, never the lock wait's, whose wake is the grant before it (NULL
# when the backend had not slept before it). Each LWLock wait begun in a
# lock wait of the same waiter and ended in it:
inner="select o.id as lock_wait, i.id as lwlock_wait from resource_waits o
	join nodes ro on ro.id = o.resource join resource_waits i on i.waiter = o.waiter
	join nodes ri on ri.id = i.resource
	where ro.name like 'lock %' and ri.name like 'lwlock %'
	  and i.start_ns > o.start_ns and i.end_ns <= o.end_ns"
nestbad=$(q "select count(distinct o.id) from ($inner) n join resource_waits o on o.id = n.lock_wait
	join resource_waits i on i.id = n.lwlock_wait join edges e on e.id = o.wake_edge
	where o.wake_edge = i.wake_edge or (e.ts > i.start_ns and e.ts <= i.end_ns)")
[ "$nestbad" = 0 ] || fail "$nestbad lock waits take as their wake one that ended an LWLock wait begun in them:
  $(q "select o.id, o.start_ns, o.end_ns, e.ts, o.reason from ($inner) n join resource_waits o on o.id = n.lock_wait
	join resource_waits i on i.id = n.lwlock_wait join edges e on e.id = o.wake_edge
	where o.wake_edge = i.wake_edge or (e.ts > i.start_ns and e.ts <= i.end_ns) limit 5" | tr '\n' ';')"
# The lock waits that hold an LWLock wait a wake ended (whose last wake a
# join that took the last wake of the lock wait would have taken): with
# the grant as their wake, and with none of their own.
read -r nestn nestg < <(q "select count(*), sum(o.wake_edge is not null) from resource_waits o
	where o.id in (select n.lock_wait from ($inner) n join resource_waits i on i.id = n.lwlock_wait
		       where i.wake_edge is not null)" | tr '|' ' ')

# The lock waits on the critical paths (critical_waits): of the queries
# that waited for a lock another backend's query released, those with
# such a wait of their own on their path, or an LWLock wait begun in
# such a lock wait: when the LWLock wait blocked, its release's wake
# takes the path out of the query's backend first, and the grant lies in
# what the other backend ran before it (fixture critical_lock_nested).
lockq="select distinct w.waiter as id from resource_waits w join nodes r on r.id = w.resource
	join nodes wt on wt.id = w.waiter join nodes k on k.id = w.waker
	where r.name like 'lock %' and wt.type = 'request' and k.type = 'request' and k.pid != wt.pid"
lockrows="select cw.* from critical_waits cw join nodes wt on wt.id = cw.waiter join nodes k on k.id = cw.waker
	where cw.waiter = cw.request and k.type = 'request' and k.pid != wt.pid
	  and (cw.resource_name like 'lock %'
	       or cw.wait in (select n.lwlock_wait from ($inner) n join resource_waits o on o.id = n.lock_wait
			      join nodes ok on ok.id = o.waker
			      where ok.type = 'request' and ok.pid != wt.pid))"
onpath="select distinct request as id from ($lockrows)"
lq=$(q "select count(*) from ($lockq)")
lp=$(q "select count(*) from ($onpath)")
[ "$lp" -ge 10 ] && [ $((lp * 100)) -ge $((lq * 90)) ] ||
	fail "$lp of $lq queries that waited for a lock another backend's query released have that wait, or an LWLock wait begun in it, on their critical path"
# Each such row: the runnable segment of the query's own backend, ended
# by the wait's wake, and before it the backend that woke it.
bad=$(q "select count(*) from ($lockrows) cw join nodes wt on wt.id = cw.waiter join nodes k on k.id = cw.waker
	join resource_waits w on w.id = cw.wait
	join critical_path c on c.request = cw.request and c.seq = cw.seq
	left join critical_path b on b.request = cw.request and b.seq = cw.seq + 1
	join nodes cn on cn.id = c.node left join nodes bn on bn.id = b.node
	where not (c.kind = 'runnable' and c.edge = w.wake_edge and cn.type = 'thread' and cn.key = wt.tid
		   and bn.type = 'thread' and bn.pid = k.pid)")
[ "$bad" = 0 ] || fail "$bad lock waits on critical paths are not the query's runnable segment after the waking backend:
  $(q "select cw.request, cw.seq, cw.kind, cw.waker_label from critical_waits cw limit 5" | tr '\n' ';')"
nt=$(untiled "$onpath")
[ "$nt" = 0 ] || fail "$nt of the $lp queries with a lock wait on their critical path have a path that does not tile their wall time"
lock_ms=$(q "select printf('%.1f', sum(blocked_ns) / 1e6) from critical_waits where resource_name like 'lock %'")
lock_by=$(q "select waking_request || ' ' || count(*) from critical_waits where resource_name like 'lock %'
	group by waking_request order by count(*) desc limit 2" | tr '\n' ',')
# request_critical names the wait's kind: each of those rows has its
# runnable segment under the mechanism 'lock', or 'lwlock' for an LWLock
# wait begun in the lock wait (a wake ends one wait: §6).
nolock=$(q "select count(*) from ($lockrows) cw where not exists (select 1 from request_critical rc
	where rc.request = cw.request and rc.kind = 'runnable'
	  and rc.mechanism = case when cw.resource_name like 'lock %' then 'lock' else 'lwlock' end)")
[ "$nolock" = 0 ] || fail "$nolock lock waits (or LWLock waits begun in them) on critical paths have no runnable time under mechanism 'lock' ('lwlock'):
  $(q "select kind, mechanism, count(*) from request_critical where request in ($onpath) group by 1, 2" | tr '\n' ';')"
nested=$(q "select count(*) from ($onpath) o where not exists (select 1 from ($lockrows) cw
	where cw.request = o.id and cw.resource_name like 'lock %')")
# The exports name the waits by the lock and the query that released it:
# the Perfetto trace holds to the database (tests/export/perfetto.py: each
# blocked slice in a resource wait named and argued as resource_waits
# says), and the DOT graph of a query with a lock wait on its path labels
# the heavy wake from the releasing backend.
top=$(cd "$(dirname "$0")/../.." && pwd)
t0=$(date +%s%N)
"$BUILD/causeway-export" perfetto "$DB" -q -o "$T/t.perfetto-trace" || fail "causeway-export perfetto failed"
pf_ms=$((($(date +%s%N) - t0) / 1000000))
if command -v protoc >/dev/null && command -v python3 >/dev/null; then
	protoc --decode=perfetto.protos.Trace -I "$top/tests/export" "$top/tests/export/perfetto_trace.proto" \
		<"$T/t.perfetto-trace" >"$T/dec.txt" || fail "protoc cannot decode the Perfetto trace"
	python3 "$top/tests/export/perfetto.py" "$DB" "$T/dec.txt" >"$T/pf.out" ||
		fail "the Perfetto trace and its database differ (see above)"
	pf_rel=$(awk -F'\t' '$1 == "blocked" && $3 ~ /^lock .* released by / { n += $2 } END { print n + 0 }' "$T/pf.out")
	[ "$pf_rel" -ge "$lp" ] || fail "$pf_rel blocked slices named 'lock ... released by ...', for $lp queries whose lock wait another's query released"
	pf="$pf_rel blocked slices 'lock ... released by ...' in the Perfetto trace ($pf_ms ms)"
else
	pf="the Perfetto trace not read back (no protoc or python3: tests/deps.sh)"
fi
r1=$(q "select o.id from ($onpath) o where exists (select 1 from request_critical rc
	where rc.request = o.id and rc.kind = 'runnable' and rc.mechanism = 'lock') limit 1")
[ -n "$r1" ] || fail "none of the $lp queries has runnable time under mechanism 'lock'"
"$BUILD/causeway-export" dot "$DB" --request "$r1" -q -o "$T/r.dot" || fail "causeway-export dot failed"
grep -q 'label="wake\\nlock [0-9/]* released by [^"]*", tooltip="edge [0-9]*, [a-z]*", style=[a-z]*, penwidth=3' "$T/r.dot" ||
	fail "request $r1: no heavy wake labelled 'lock ... released by ...' in its DOT graph"

off=postgresql:buffer__read__start,postgresql:buffer__read__done
[ "$(meta usdt_probes_off "$DB")" = $off ] || fail "default: meta usdt_probes_off '$(meta usdt_probes_off "$DB")', expected $off"
[ "$(meta capture.usdt_probes_deselected "$DB")" = 2 ] ||
	fail "default: capture.usdt_probes_deselected $(meta capture.usdt_probes_deselected "$DB"), expected 2 (the postgres binary's buffer probes)"
b=$(buffer_hits)
[ "$b" = 0 ] || fail "default: $b buffer-probe hits in the database, expected none"
hits=$(meta usdt_hits "$DB")

traced_bench "$T/all.cwt" sched,usdt --usdt-probes all
DB=$T/all.db
[ "$(meta usdt_probes_off "$DB")" = "" ] || fail "--usdt-probes all: meta usdt_probes_off '$(meta usdt_probes_off "$DB")'"
[ "$(meta capture.usdt_probes_deselected "$DB")" = 0 ] || fail "--usdt-probes all: capture.usdt_probes_deselected $(meta capture.usdt_probes_deselected "$DB")"
ball=$(buffer_hits)
# Each of the 5 statements that touch a table reads at least one page.
[ "$ball" -ge $((CLIENTS * TXNS * 5)) ] || fail "--usdt-probes all: $ball buffer-probe hits for $((CLIENTS * TXNS)) transactions"
hall=$(meta usdt_hits "$DB")
[ "$hall" -gt "$hits" ] || fail "--usdt-probes all: $hall probe hits, no more than the default's $hits"

# The WAL flush: fsync and synchronous_commit on.
pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -w -l "$PGDIR/log" \
	-o "-c listen_addresses='' -c unix_socket_directories='$PGDIR' -c fsync=on -c synchronous_commit=on" \
	restart >/dev/null || { cat "$PGDIR/log" >&2; fail "the cluster did not restart with fsync on"; }
PGPID=$(head -1 "$PGDIR/data/postmaster.pid")
[ "$(pg "$PGBIN/psql" -h "$PGDIR" -U postgres -Atc 'show fsync' postgres)" = on ] || fail "fsync is not on"
walked_bench "$T/sync.cwt" sched,usdt,block,workqueue
DB=$T/sync.db
ends="select id from nodes where type = 'request' and name = 'END;'"
ne=$(q "select count(*) from ($ends)")
[ "$ne" = $((CLIENTS * TXNS)) ] || fail "fsync on: $ne END; queries for $((CLIENTS * TXNS)) transactions"
eblock="select distinct c.request as id from critical_path c join nodes n on n.id = c.node
	where c.kind = 'handoff' and n.type = 'block_request' and c.request in ($ends)"
nb=$(q "select count(*) from ($eblock)")
[ $((nb * 100)) -ge $((ne * 90)) ] ||
	fail "fsync on: $nb of $ne END; queries have a block request on their critical path:
  $(q "select kind, mechanism, count(*) from request_critical where request in ($ends) group by 1, 2" | tr '\n' ';')"
nt=$(untiled "$ends")
[ "$nt" = 0 ] || fail "fsync on: $nt of $ne END; queries have a critical path that does not tile their wall time"
# The cache flush as the block layer issues it: FLUSH <- requeue work <- a backend.
nflush=$(q "select count(*) from block_requests where op = 'FLUSH'")
# The disk under the cluster (a partition's is its parent's), and its cache.
sysdev=$(readlink -f "/sys/dev/block/$(stat -c '%Hd:%Ld' "$PGDIR/data")")
[ -e "$sysdev/partition" ] && sysdev=${sysdev%/*}
wcache=$(cat "$sysdev/queue/write_cache" 2>/dev/null)
eflush="select distinct c.request as id from critical_path c join block_requests f on f.node = c.node
	join critical_path w on w.request = c.request and w.seq = c.seq + 1 join nodes wn on wn.id = w.node
	join critical_path t on t.request = c.request and t.seq = c.seq + 2 join nodes tn on tn.id = t.node
	where c.kind = 'handoff' and f.op = 'FLUSH' and w.kind = 'handoff' and wn.type = 'work_item'
	  and wn.name = 'blk_mq_requeue_work' and tn.type = 'thread' and tn.name = 'postgres'
	  and c.request in ($ends)"
nf=$(q "select count(*) from ($eflush)")
if [ "$wcache" = "write back" ] || [ "$nflush" -gt 0 ]; then
	[ $((nf * 100)) -ge $((ne * 90)) ] ||
		fail "fsync on: $nf of $ne END; queries have FLUSH <- blk_mq_requeue_work <- postgres on their critical path ($nflush FLUSH requests; the disk's cache: ${wcache:-unknown})"
	flush="; on $nf of them the cache flush ($(q "select printf('%.0f us FLUSH, %.0f us requeue work', avg(c.end_ns - c.start_ns) / 1e3,
		avg(w.end_ns - w.start_ns) / 1e3) from critical_path c join block_requests f on f.node = c.node
		join critical_path w on w.request = c.request and w.seq = c.seq + 1
		where c.kind = 'handoff' and f.op = 'FLUSH' and c.request in ($ends)"))"
else
	flush="; no FLUSH request, the disk's cache: ${wcache:-unknown}"
fi
bshare=$(q "select printf('%.0f%%', 100.0 * sum(ns) / (select sum(end_ns - start_ns) from nodes where id in ($ends)))
	from request_critical where request in ($ends) and mechanism = 'block'")
echo "live/$NAME: $n statement requests for $done_tx transactions; $named of $nw lock waits name the releasing query;" \
	"$lp of $lq queries that waited for another backend's lock have it on their critical path ($lock_ms ms; released by ${lock_by%,}), mechanism 'lock' in request_critical (for $nested the LWLock wait begun in it, 'lwlock');" \
	"$nestn lock waits held an LWLock wait a wake ended: $nestg have the grant before it as their wake, $((nestn - nestg)) none of their own, none the LWLock's; $pf;" \
	"probe hits $hits by default (no buffer probe), $hall with --usdt-probes all ($ball buffer hits);" \
	"fsync on: $nb of $ne END; queries have block I/O on their critical path ($bshare of their wall time)$flush"
