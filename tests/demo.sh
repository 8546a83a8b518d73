#!/bin/bash
# make demo: capture the bundled request pipeline (client -> acceptor ->
# worker pool -> 1 ms timer "backend" -> reply), analyze it, and show what
# the causal graph says with a few SQL queries.
#   tests/demo.sh BUILD
set -eu
BUILD=${1:?usage: tests/demo.sh BUILD}
CAP=$BUILD/causeway-capture
AN=$BUILD/causeway-analyze
[ "$(id -u)" = 0 ] || { echo "demo: causeway-capture needs root (BPF); run: sudo make demo" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

echo "== capture: causeway-capture -o demo.cwt -F 0 --no-offcpu -- $BUILD/workloads/pipeline TRUTH 50"
"$CAP" -o "$T/demo.cwt" -F 0 --no-offcpu -- "$BUILD/workloads/pipeline" "$T/truth" 50 2>&1
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
"select coalesce(s.name || ' (' || s.tid || ')', '<' || e.reason || '>') as waker,
        d.name || ' (' || d.tid || ')' as wakee, e.confidence, count(*) as n
   from edges e left join nodes s on s.id = e.src join nodes d on d.id = e.dst
  where e.type = 'wake' and d.pid = $P
  group by 1, 2, 3 order by n desc;"
show "one request, in order: the first wakes after the client's 10th request" \
"with t as (select min(e.ts) as t0 from edges e join nodes s on s.id = e.src join nodes d on d.id = e.dst
             where e.type = 'wake' and s.name = 'client' and d.name = 'acceptor'
               and e.ts > (select min(ts) from edges where type = 'wake') + 10000000)
 select (e.ts - t.t0) / 1000 as us, coalesce(s.name, '<' || e.reason || '>') as waker,
        d.name as wakee, e.cpu
   from edges e cross join t left join nodes s on s.id = e.src join nodes d on d.id = e.dst
  where e.type = 'wake' and d.pid = $P and e.ts >= t.t0 order by e.ts limit 6;"
