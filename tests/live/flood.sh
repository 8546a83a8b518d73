#!/bin/bash
# live/flood: a flood of samples never costs an edge. A pipe ping-pong
# blocks at every round, so with off-CPU stacks and CPU samples at 4999 Hz
# into a sample ring of one page, samples are lost by the thousand:
#  - the sample stream has coverage breaks with lost samples;
#  - the edge stream has none: no edge was lost;
#  - an observed wake edge in each direction for at least 90% of the
#    round trips, as live/wake requires without any samples.

. "$(dirname "$0")/../lib/live.bash" "$@"

ROUNDS=20000
command -v taskset >/dev/null || fail "taskset not installed"
capture -q -F 4999 --sample-ring 4096 -o "$T/t.cwt" -- taskset -c 0 "$WL/pingpong" "$T/truth" $ROUNDS
DB=$T/t.db
analyze "$T/t.cwt" "$DB"
read -r _ A B R < <(grep '^pingpong ' "$T/truth") || fail "no pingpong line in ground truth"

slost=$(q "select coalesce(sum(lost_events), 0) from coverage_breaks where stream = 'sample'")
elost=$(q "select count(*) || ' breaks, ' || coalesce(sum(lost_events), 0) || ' lost'
	   from coverage_breaks where stream in ('edge', 'map')")
kept=$(q "select count(*) from samples")
[ "$slost" -gt 0 ] || fail "no sample lost into a one-page sample ring ($kept kept): not a flood"
[ "$elost" = "0 breaks, 0 lost" ] || fail "the edge stream lost events under the sample flood: $elost"
wakes() {
	q "select count(*) from edges e join nodes s on s.id = e.src join nodes d on d.id = e.dst
	   where e.type = 'wake' and e.confidence = 'observed'
	     and s.type = 'thread' and s.key = $1 and d.type = 'thread' and d.key = $2"
}
ab=$(wakes "$A" "$B")
ba=$(wakes "$B" "$A")
need=$((R * 9 / 10))
[ "$ab" -ge $need ] && [ "$ba" -ge $need ] || fail "$ab and $ba observed wakes for $R round trips (need >= $need each)"
echo "live/$NAME: $slost samples lost, $kept kept; no edge lost; wakes $ab and $ba for $R round trips"
