#!/bin/bash
# live/block: waits on a real disk name the block requests that ended
# them. The workload (tests/workloads/blockio.c) runs in a directory under
# /var/tmp (a block device, never tmpfs): thread bio-sync does N O_DIRECT
# writes of one block, each followed by fdatasync (a cache flush, which the
# block layer issues from its requeue work); then thread bio-ring does N
# io_uring WRITEs, each linked to an FSYNC forced to an io-wq worker
# (IOSQE_ASYNC). Against what it did:
#  - bio-sync submitted at least N WRITE block requests (submit edges from
#    its thread), and the FLUSH requests that woke it were submitted by
#    blk_mq_requeue_work items it queued;
#  - at least 90% of its N flushes each ended a wait of it: that many
#    wakes of bio-sync come from FLUSH requests it caused (a flush goes
#    through a kworker, so the thread always sleeps first). A write may
#    complete before its thread sleeps, and then ended no wait: of
#    bio-sync's waits that have a wake, at least 95% are woken by a block
#    request it caused (WRITE or FLUSH);
#  - at most 5% of bio-sync's wakes, and of the io-wq worker's, have an
#    unknown cause (src NULL), and none is a block request another
#    context submitted;
#  - every FSYNC has one punt edge, to an io-wq worker (iou-wrk-*) of the
#    workload; the worker's waits are woken by FLUSH requests it caused
#    (submitted by requeue work it queued), at least 90% of N;
#  - block_requests has a row for every block_request node that was
#    issued in the trace, and no off-CPU stack starts with a frame of the
#    capture's own program (bpf_prog_*, bpf_trace_run*, __traceiter_*).

. "$(dirname "$0")/../lib/live.bash" "$@"

N=60
[ "$(stat -f -c %T /var/tmp)" != tmpfs ] || skip "/var/tmp is tmpfs here: no disk under it to wait on"
D=$(mktemp -d /var/tmp/causeway-block.XXXXXX)
trap 'rm -rf "$D"; cleanup' EXIT
capture -q --sample-budget 0 -o "$T/t.cwt" -- "$WL/blockio" "$D" "$T/truth" $N
need_class block "$T/t.cwt"
need_class workqueue "$T/t.cwt"
DB=$T/t.db
analyze "$T/t.cwt" "$DB"
read -r _ P < <(grep '^pid ' "$T/truth") || fail "no pid line in ground truth"
S=$(thread_node sync "$T/truth") || exit 1
R=$(thread_node ring "$T/truth") || exit 1

# by(x): the requests node x submitted, directly or through a work item
# it queued.
sqlite3 -batch "$DB" "
create view mine as
  select e.dst as req, e.src as by from edges e join nodes b on b.id = e.dst
   where e.type = 'submit' and b.type = 'block_request' and e.src is not null
     and (select type from nodes where id = e.src) = 'thread'
  union all
  select e.dst, q.src from edges e join nodes b on b.id = e.dst
    join nodes w on w.id = e.src and w.type = 'work_item'
    join edges q on q.dst = w.id and q.type = 'queue' and q.src is not null
   where e.type = 'submit' and b.type = 'block_request';
create view wakes as
  select e.dst as thread, e.src, s.type as src_type, s.name as src_name, e.reason
    from edges e left join nodes s on s.id = e.src where e.type = 'wake';" ||
	fail "cannot create the views"

writes=$(q "select count(*) from mine m join nodes b on b.id = m.req where m.by = $S and b.name like 'WRITE %'")
[ "$writes" -ge $N ] || fail "bio-sync submitted $writes WRITE requests for $N direct writes"
own() { # thread op: its wakes by requests of op it caused
	q "select count(*) from wakes w where w.thread = $1 and w.src_type = 'block_request'
	     and w.src_name like '$2 %' and exists (select 1 from mine m where m.req = w.src and m.by = $1)"
}
need=$((N * 9 / 10))
n=$(own "$S" FLUSH)
[ "$n" -ge $need ] || fail "bio-sync has $n wakes by FLUSH requests it caused, for $N fdatasyncs (at least $need expected)"
read -r waits byown < <(q "select count(*) || ' ' || coalesce(sum(exists(select 1 from mine m where m.req = e.src and m.by = $S)), 0)
	from samples s join edges e on e.id = s.wake where s.thread = $S and s.kind = 'offcpu'")
[ "$waits" -gt 0 ] && [ $((byown * 100)) -ge $((waits * 95)) ] ||
	fail "bio-sync: $byown of its $waits waits with a wake were ended by a block request it caused (at least 95% expected)"

for t in "$S:bio-sync" "$(q "select n.id from nodes n where n.type = 'thread' and n.pid = $P and n.name like 'iou-wrk-%' order by n.id limit 1"):io-wq worker"; do
	id=${t%%:*}
	[ -n "$id" ] || fail "no io-wq worker thread of the workload"
	read -r all unk < <(q "select count(*) || ' ' || sum(src is null) from wakes where thread = $id")
	[ "$all" -gt 0 ] || fail "${t#*:} has no wakes"
	[ $((unk * 100)) -le $((all * 5)) ] ||
		fail "${t#*:}: $unk of $all wakes have an unknown cause (at most 5% expected)"
	stranger=$(q "select count(*) from wakes w where w.thread = $id and w.src_type = 'block_request'
	                and exists (select 1 from mine m where m.req = w.src)
	                and not exists (select 1 from mine m where m.req = w.src and m.by = $id)")
	[ "$stranger" = 0 ] || fail "${t#*:} is woken $stranger times by block requests others submitted"
done

# The FSYNCs: punted each, to a worker of the workload, which the flushes
# it caused wake.
fsyncs=$(q "select count(*) from nodes where type = 'io_request' and name = 'FSYNC' and pid = $P")
[ "$fsyncs" = $N ] || fail "$fsyncs FSYNC io_requests for $N submitted"
bad=$(q "select count(*) from nodes r where r.type = 'io_request' and r.name = 'FSYNC' and r.pid = $P
          and (select count(*) from edges e join nodes w on w.id = e.dst
                where e.src = r.id and e.type = 'punt' and w.pid = $P and w.name like 'iou-wrk-%') != 1")
[ "$bad" = 0 ] || fail "$bad of $N FSYNCs do not have exactly one punt edge to an io-wq worker of the workload"
wk=$(q "select sum(n) from (select (select count(*) from wakes w where w.thread = t.id and w.src_type = 'block_request'
                 and w.src_name like 'FLUSH %' and exists (select 1 from mine m where m.req = w.src and m.by = t.id)) as n
          from nodes t where t.type = 'thread' and t.pid = $P and t.name like 'iou-wrk-%')")
[ "${wk:-0}" -ge $need ] || fail "the io-wq workers have ${wk:-0} wakes by FLUSH requests they caused, for $N FSYNCs"

missing=$(q "select count(*) from nodes n where n.type = 'block_request' and n.start_seen = 1
              and not exists (select 1 from block_requests b where b.node = n.id)")
[ "$missing" = 0 ] || fail "$missing issued block requests have no block_requests row"
prof=$(q "select count(*) from samples s join stack_frames f on f.stack = s.stack and f.position = 0
            join frames fr on fr.id = f.frame
           where s.kind = 'offcpu' and (fr.function like 'bpf\_prog\_%' escape '\'
              or fr.function like 'bpf\_trace\_run%' escape '\' or fr.function like '\_\_traceiter\_%' escape '\'
              or fr.function like '\_\_bpf\_trace\_%' escape '\')")
offcpu=$(q "select count(*) from samples where kind = 'offcpu' and stack is not null")
[ "$offcpu" -gt 0 ] || fail "no off-CPU stacks to check"
[ "$prof" = 0 ] || fail "$prof of $offcpu off-CPU stacks start with a frame of the capture's program"
echo "live/block: $writes writes, wakes by own WRITE/FLUSH $(own "$S" WRITE)/$(own "$S" FLUSH), $byown of $waits waits with a wake by its own requests, worker flush wakes $wk, $offcpu off-CPU stacks"
