#!/bin/bash
# live/flood: a flood of samples never costs an edge. A pipe ping-pong
# blocks at every round, so with off-CPU stacks at every wait (no budget:
# the default one takes about 1000 a second, which a page keeps up with)
# and CPU samples at 4999 Hz into a sample ring of one page, samples are
# lost by the hundred:
#  - the sample stream has coverage breaks with lost samples;
#  - the edge stream has none: no edge was lost;
#  - every time a ping-pong thread blocked (a switch-out neither preempted
#    nor final, in the trace), a wake or fire edge into it was recorded
#    before it ran again: as many edges into it as blocking switch-outs,
#    or more (a wakeup that comes before the thread got to sleep has no
#    switch-out). Which round trips need a wakeup at all varies with
#    scheduling, so the count of blocks, not of rounds, is the truth.

. "$(dirname "$0")/../lib/live.bash" "$@"

ROUNDS=20000
command -v taskset >/dev/null || fail "taskset not installed"
capture -q -F 4999 --sample-budget 0 --sample-ring 4096 -o "$T/t.cwt" -- taskset -c 0 "$WL/pingpong" "$T/truth" $ROUNDS
DB=$T/t.db
analyze "$T/t.cwt" "$DB"
read -r _ A B R < <(grep '^pingpong ' "$T/truth") || fail "no pingpong line in ground truth"

slost=$(q "select coalesce(sum(lost_events), 0) from coverage_breaks where stream = 'sample'")
elost=$(q "select count(*) || ' breaks, ' || coalesce(sum(lost_events), 0) || ' lost'
	   from coverage_breaks where stream in ('edge', 'map')")
kept=$(q "select count(*) from samples")
[ "$slost" -gt 0 ] || fail "no sample lost into a one-page sample ring ($kept kept): not a flood"
[ "$elost" = "0 breaks, 0 lost" ] || fail "the edge stream lost events under the sample flood: $elost"
"$AN" --dump "$T/t.cwt" >"$T/dump" 2>/dev/null || fail "cannot dump the trace"
blocks() { # tid: blocking switch-outs
	awk -v t="$1" '$1 == "switch" && $0 ~ " prev=" t "/" && $0 !~ / preempt/ {
		for (i = 2; i <= NF; i++) if ($i ~ /^prev_state=/) s = substr($i, 12)
		if (s != 0 && s != 128) n++
	} END { print n + 0 }' "$T/dump"
}
edges_into() { # tid: wake and fire edges into its thread
	q "select count(*) from edges e join nodes d on d.id = e.dst
	   where e.type in ('wake', 'fire') and d.type = 'thread' and d.key = $1"
}
ba=$(blocks "$A") bb=$(blocks "$B") ea=$(edges_into "$A") eb=$(edges_into "$B")
[ "$ba" -ge $((R / 10)) ] && [ "$bb" -ge $((R / 10)) ] || fail "only $ba and $bb blocking switch-outs for $R round trips"
[ "$ea" -ge "$ba" ] && [ "$eb" -ge "$bb" ] ||
	fail "blocked $ba and $bb times, but only $ea and $eb wake edges into the threads were recorded"
echo "live/$NAME: $slost samples lost, $kept kept; no edge lost; $ba and $bb blocking switch-outs, $ea and $eb wake edges"
