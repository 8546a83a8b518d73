#!/bin/bash
# live/self: a system-wide capture never records its own threads (no node
# with pid = the capture's pid), records other processes (a ping-pong
# workload's wakes are there) and closes cleanly at the end of -d.

. "$(dirname "$0")/../lib/live.bash" "$@"

"$CAP" -q -F 0 --no-offcpu -d 3 -o "$T/t.cwt" 2>"$T/capture.err" &
CP=$!
pids+=("$CP")
for ((i = 0; i < 200; i++)); do
	[ -s "$T/t.cwt" ] && break
	kill -0 "$CP" 2>/dev/null || break
	sleep 0.05
done
if kill -0 "$CP" 2>/dev/null; then
	taskset -c 0 "$WL/pingpong" "$T/truth" 500 0 || fail "workload failed"
fi
wait "$CP"
check_capture_rc $? "$T/capture.err"
pids=()
DB=$T/t.db
analyze "$T/t.cwt" "$DB"

[ "$(q "select value from meta where key = 'clean_close'")" = 1 ] || fail "trace not closed cleanly"
n=$(q "select count(*) from nodes where pid = $CP or (type = 'thread' and key = $CP)")
[ "$n" = 0 ] || fail "$n nodes of the capture itself (pid $CP)"
n=$(q "select count(*) from edges e left join nodes s on s.id = e.src join nodes d on d.id = e.dst
       where s.pid = $CP or d.pid = $CP")
[ "$n" = 0 ] || fail "$n edges touching the capture itself"
read -r _ A B R < <(grep '^pingpong ' "$T/truth") || fail "no pingpong ground truth"
n=$(q "select count(*) from edges e join nodes s on s.id = e.src join nodes d on d.id = e.dst
       where e.type = 'wake' and s.type = 'thread' and s.key = $A and d.type = 'thread' and d.key = $B")
[ "$n" -gt 0 ] || fail "system-wide capture missed the workload's wakes"
echo "live/$NAME: capture pid $CP absent; workload recorded ($n wakes $A -> $B)"
