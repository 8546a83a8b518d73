#!/bin/bash
# live/spawn: every thread and process the spawn workload creates appears as
# an observed spawn edge parent thread -> child thread, and the workload's
# threads spawn nothing else. (COMMAND mode: the traced set follows fork.)

. "$(dirname "$0")/../lib/live.bash" "$@"

capture -q -F 0 --no-offcpu -o "$T/t.cwt" -- "$WL/spawn" "$T/truth"
DB=$T/t.db
analyze "$T/t.cwt" "$DB"

nspawn=0
while read -r kind a b; do
	[ "$kind" = spawn ] || continue
	nspawn=$((nspawn + 1))
	n=$(q "select count(*) from edges e join nodes s on s.id = e.src join nodes d on d.id = e.dst
	       where e.type = 'spawn' and e.confidence = 'observed'
	         and s.type = 'thread' and s.scope = 'host' and s.key = $a
	         and d.type = 'thread' and d.scope = 'host' and d.key = $b")
	[ "$n" -ge 1 ] || fail "no observed spawn edge $a -> $b"
done <"$T/truth"
[ "$nspawn" -ge 6 ] || fail "workload reported $nspawn spawns, expected 6"

# Nothing else was spawned by the workload's processes.
wpids=$(awk '$1 == "pid" { printf "%s%s", sep, $2; sep = "," }' "$T/truth")
n=$(q "select count(*) from edges e join nodes s on s.id = e.src
       where e.type = 'spawn' and s.pid in ($wpids)")
[ "$n" = "$nspawn" ] || fail "$n spawn edges from the workload's processes, expected $nspawn"
echo "live/$NAME: $nspawn spawn edges, all observed parent -> child"
