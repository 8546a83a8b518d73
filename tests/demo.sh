#!/bin/bash
# make demo: capture the bundled request pipeline (client -> acceptor ->
# worker pool -> 1 ms timer "backend" -> io_uring read on an io-wq worker
# -> reply through a pty's work item -> client) with CPU samples at 999 Hz
# and off-CPU stacks, analyze it, and show what the causal graph says with
# a few SQL queries, and where the client's blocked time went; then its
# pictures in BUILD/demo/ (flame graphs, a request's graph).
#   tests/demo.sh BUILD
set -eu
BUILD=${1:?usage: tests/demo.sh BUILD}
CAP=$BUILD/causeway-capture
AN=$BUILD/causeway-analyze
EX=$BUILD/causeway-export
[ "$(id -u)" = 0 ] || { echo "demo: causeway-capture needs root (BPF); run: sudo make demo" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

echo "== capture: causeway-capture -o demo.cwt -F 999 -- $BUILD/workloads/pipeline TRUTH 50"
"$CAP" -o "$T/demo.cwt" -F 999 -- "$BUILD/workloads/pipeline" "$T/truth" 50 2>&1
P=$(awk '$1 == "pid" { print $2 }' "$T/truth")
echo
echo "== analyze: causeway-analyze demo.cwt"
"$AN" -o "$T/demo.db" "$T/demo.cwt"

show() { # title sql
	echo
	echo "== $1"
	echo "sqlite> $2"
	sqlite3 -column -header "$T/demo.db" "$2"
}
show "edges by type and confidence" \
"select type, confidence, coalesce(reason, '') as reason, count(*) as n
   from edges group by 1, 2, 3 order by n desc;"
show "who wakes whom inside the pipeline (pid $P): the handoff chain" \
"select coalesce(s.label, '<' || e.reason || '>') as waker, w.label as wakee,
        e.confidence, count(*) as n
   from edges e left join node_labels s on s.node = e.src join node_labels w on w.node = e.dst
   join nodes d on d.id = e.dst
  where e.type = 'wake' and d.pid = $P
  group by 1, 2, 3 order by n desc;"
# The reply is the first work item to wake the client after a worker
# queued one (a flush barrier of the previous reply may wake it earlier).
show "one request, hop by hop: from the client's 10th request to its reply" \
"with t0 as (select ts from edges e join nodes s on s.id = e.src join nodes d on d.id = e.dst
              where e.type = 'wake' and s.name = 'client' and d.name = 'acceptor'
              order by e.ts limit 1 offset 9),
      tq as (select min(q.ts) as ts from edges q join nodes w on w.id = q.src, t0
              where q.type = 'queue' and w.name like 'worker-%' and q.ts > t0.ts),
      t1 as (select min(e.ts) as ts from edges e join nodes s on s.id = e.src
               join nodes d on d.id = e.dst, tq
              where e.type = 'wake' and s.type = 'work_item' and d.name = 'client' and e.ts > tq.ts)
 select (e.ts - t0.ts) / 1000 as us, e.type,
        coalesce(s.type || ' ' || s.name, '<' || e.reason || '>') as src,
        d.type || ' ' || d.name as dst, e.confidence, coalesce(e.reason, '') as reason
   from edges e cross join t0 cross join t1
   left join nodes s on s.id = e.src join nodes d on d.id = e.dst
  where e.ts between t0.ts and t1.ts and (s.pid = $P or d.pid = $P or s.type = 'work_item')
    and not (e.type = 'arm' and s.name like 'iou-wrk%')
  order by e.ts, e.id;"
show "io_uring requests: submit to completion to the reaping wake (io_request_lifetime view)" \
"select count(*) as requests, avg(complete_ns - submit_ns) / 1000 as avg_submit_to_complete_us,
        sum(complete_confidence = 'observed') as observed_completions
   from io_request_lifetime;"
show "where the client's blocked time went: its off-CPU samples by what ended each wait (samples.wake)" \
"select coalesce(w.type || ' ' || w.name, '<unknown>') as woken_by, count(*) as waits,
        sum(s.weight) / 1000 as blocked_us, round(avg(s.weight) / 1000.0, 1) as avg_us
   from samples s join nodes t on t.id = s.thread
   left join edges e on e.id = s.wake left join nodes w on w.id = e.src
  where s.kind = 'offcpu' and t.name = 'client' and t.pid = $P
  group by 1 order by blocked_us desc;"
show "where the workers block: the innermost user function of their off-CPU stacks (sample_frames view)" \
"select f.function, f.module, count(*) as waits, sum(s.weight) / 1000 as blocked_us
   from samples s join nodes t on t.id = s.thread
   join sample_frames f on f.sample = s.id
  where s.kind = 'offcpu' and t.pid = $P and t.name like 'worker-%' and f.kernel = 0
    and f.position = (select min(position) from sample_frames g where g.sample = s.id and g.kernel = 0)
  group by 1, 2 order by blocked_us desc limit 6;"

# Pictures, kept in BUILD/demo/: the causal flame graphs of the CPU and
# the off-CPU time (causeway-export folded, tests/tools/flamegraph.py:
# requests, handoffs and what ended each wait at the root, then the
# stacks) and, where the workload names its requests, the slowest one's
# causal graph (causeway-export dot, rendered where graphviz is).
mkdir -p "$BUILD/demo"
echo
echo "== pictures: causeway-export folded | tests/tools/flamegraph.py; causeway-export dot"
for kind in cpu offcpu; do
	opt=()
	[ $kind = cpu ] || opt=(--offcpu)
	"$EX" -q folded "${opt[@]}" "$T/demo.db" -o "$T/$kind.folded"
	python3 "$(dirname "$0")/tools/flamegraph.py" "$T/$kind.folded" --force \
		-o "$BUILD/demo/flame-$kind.svg" --title "pipeline: $kind time by request, handoff and stack"
	echo "wrote $BUILD/demo/flame-$kind.svg"
done
R=$(sqlite3 "$T/demo.db" "select id from nodes where type = 'request' and end_ns is not null
                            order by end_ns - start_ns desc, id limit 1")
if [ -n "$R" ]; then
	"$EX" -q dot "$T/demo.db" --request "$R" --force -o "$BUILD/demo/request.dot"
	echo "wrote $BUILD/demo/request.dot"
	if command -v dot >/dev/null; then
		dot -Tsvg "$BUILD/demo/request.dot" -o "$BUILD/demo/request.svg"
		echo "wrote $BUILD/demo/request.svg"
	fi
else
	echo "(the workload named no request: no request graph)"
fi
