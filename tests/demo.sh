#!/bin/bash
# make demo: capture the bundled request pipeline (client -> acceptor ->
# worker pool -> 1 ms timer "backend" -> io_uring read on an io-wq worker
# -> reply through a pty's work item -> client; the client names each
# request through include/causeway.h) with CPU samples at 999 Hz and
# off-CPU stacks, analyze it, and show what the causal graph says with a
# few SQL queries: one request hop by hop, which threads worked for the
# requests, and where the client's blocked time went; then its exports
# and pictures in BUILD/demo/ (flame graphs, a request's graph).
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
# The client names each request (include/causeway.h): its begin and end
# edges bound it, and every hop in between is a handoff between threads.
show "one request, hop by hop: the client's req-10, from its begin to its end" \
"with r as (select b.ts as t0, e.ts as t1 from nodes n
             join edges b on b.dst = n.id and b.type = 'begin'
             join edges e on e.src = n.id and e.type = 'end'
            where n.type = 'request' and n.pid = $P and n.key = 10)
 select (e.ts - r.t0) / 1000 as us, e.type,
        coalesce(s.type || ' ' || s.name, '<' || e.reason || '>') as src,
        d.type || ' ' || d.name as dst, e.confidence, coalesce(e.reason, '') as reason
   from edges e cross join r
   left join nodes s on s.id = e.src join nodes d on d.id = e.dst
  where e.ts between r.t0 and r.t1 and (s.pid = $P or d.pid = $P or s.type = 'work_item')
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
show "the requests across threads: samples charged to a request (attribution view), by thread; the client named them, the other threads carry them over handoffs (chain: the commonest)" \
"select t.name as thread, a.confidence, count(distinct a.request) as requests,
        round(sum(case s.kind when 'cpu' then s.weight / s.inclusion_probability else 0 end) / 1e6, 1) as cpu_ms,
        round(sum(case s.kind when 'offcpu' then s.weight / s.inclusion_probability else 0 end) / 1e6, 1)
          as blocked_ms,
        (select coalesce(b.reason, '') from attribution b join samples x on x.id = b.sample
          where x.thread = s.thread and b.request is not null and b.confidence = a.confidence
          group by b.reason order by count(*) desc, b.reason limit 1) as chain
   from attribution a join samples s on s.id = a.sample join nodes t on t.id = s.thread
  where a.request is not null and t.pid = $P
  group by s.thread, a.confidence order by cpu_ms + blocked_ms desc;"
show "the slowest requests: wall time, and the CPU and blocked time charged to each in all its threads (request_summary view)" \
"select request_name, wall_ns / 1000 as wall_us, cast(cpu_ns / 1000 as integer) as cpu_us,
        cast(blocked_ns / 1000 as integer) as blocked_us, round(reconstructed_share, 2) as reconstructed
   from request_summary order by wall_ns desc limit 5;"
show "where the workers block: the innermost user function of their off-CPU stacks (sample_frames view)" \
"select f.function, f.module, count(*) as waits, sum(s.weight) / 1000 as blocked_us
   from samples s join nodes t on t.id = s.thread
   join sample_frames f on f.sample = s.id
  where s.kind = 'offcpu' and t.pid = $P and t.name like 'worker-%' and f.kernel = 0
    and f.position = (select min(position) from sample_frames g where g.sample = s.id and g.kernel = 0)
  group by 1, 2 order by blocked_us desc limit 6;"

# The exports, kept in BUILD/demo/ with the database (docs/model.md §8):
# the causal profile for pprof, the folded stacks and their flame graphs
# (tests/tools/flamegraph.py: requests, handoffs and what ended each wait
# at the root, then the stacks), the Perfetto timeline and, where the
# workload names its requests, the slowest one's causal graph and
# critical path.
D=$BUILD/demo
mkdir -p "$D"
cp "$T/demo.db" "$D/demo.db.tmp" && mv -f "$D/demo.db.tmp" "$D/demo.db"
echo
echo "== exports: causeway-export pprof | folded | perfetto | dot, in $D"
"$EX" -q pprof "$D/demo.db" --force -o "$D/demo.pb.gz"
echo "wrote $D/demo.pb.gz        go tool pprof -traces $D/demo.pb.gz   (or -http=127.0.0.1:8080;"
echo "                           -sample_index=offcpu -tagroot=mechanism for blocked time by what ended it)"
for kind in cpu offcpu; do
	opt=()
	[ $kind = cpu ] || opt=(--offcpu)
	"$EX" -q folded "${opt[@]}" "$D/demo.db" --force -o "$D/$kind.folded"
	python3 "$(dirname "$0")/tools/flamegraph.py" "$D/$kind.folded" --force \
		-o "$D/flame-$kind.svg" --title "pipeline: $kind time by request, handoff and stack"
	echo "wrote $D/$kind.folded, $D/flame-$kind.svg   (open the SVG in a browser; the folded file in speedscope.app or flamegraph.pl)"
done
"$EX" -q perfetto "$D/demo.db" --force -o "$D/demo.perfetto-trace"
echo "wrote $D/demo.perfetto-trace   (open it at ui.perfetto.dev: Open trace file; it stays in the browser)"
R=$(sqlite3 "$D/demo.db" "select id from nodes where type = 'request' and end_ns is not null
                            order by end_ns - start_ns desc, id limit 1")
if [ -n "$R" ]; then
	"$EX" -q dot "$D/demo.db" --request "$R" --force -o "$D/request.dot"
	echo "wrote $D/request.dot          (request $R, the slowest: dot -Tsvg $D/request.dot > request.svg)"
	if command -v dot >/dev/null; then
		dot -Tsvg "$D/request.dot" -o "$D/request.svg"
		echo "wrote $D/request.svg"
	fi
	show "the slowest request's critical path, by kind (request_critical view)" \
"select kind, mechanism, segments, ns / 1000 as us, round(share, 3) as share
   from request_critical where request = $R order by ns desc;"
else
	echo "(the workload named no request: no request graph)"
fi
