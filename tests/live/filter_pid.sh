#!/bin/bash
# live/filter_pid: a -p capture holds the target and every descendant it
# forks, and nothing of an unrelated process running the same workload at
# the same time: no edge between tasks with neither end in the traced set,
# no edge naming a thread of the unrelated process, none of the
# unrelated process's forks and thread creations (its tasks may still
# appear as nodes at the other end of a switch with a traced task).

. "$(dirname "$0")/../lib/live.bash" "$@"

has_pid_line() { grep -q '^pid ' "$1" 2>/dev/null; }

"$WL/spawn" "$T/truth" "$T/go" 300 &
TP=$!
pids+=("$TP")
"$WL/spawn" "$T/other" "$T/go" 300 &
UP=$!
pids+=("$UP")
wait_for 10 has_pid_line "$T/truth" || fail "traced workload did not start"
wait_for 10 has_pid_line "$T/other" || fail "unrelated workload did not start"

# The trace appears at its name once the programs are attached and the
# traced set is filled: from then on the capture sees everything.
start_capture "$T/t.cwt" -p "$TP"
touch "$T/go"
wait "$TP" || fail "traced workload failed"
wait "$UP" || fail "unrelated workload failed"
# It stops by itself once the traced processes are gone (live/pid).
wait "$CP"
check_capture_rc $? "$T/capture.err"
pids=()

DB=$T/t.db
analyze "$T/t.cwt" "$DB"

traced=$(awk '$1 == "pid" { printf "%s%s", sep, $2; sep = "," }' "$T/truth")
# The unrelated process's tasks born during the capture: its children and
# threads (its main thread predates the capture and is in the snapshot).
unrel=$(awk '$1 == "spawn" { printf "%s%s", sep, $3; sep = "," }' "$T/other")
[ -n "$unrel" ] || fail "unrelated workload reported no spawns"

nspawn=0
while read -r kind a b; do
	[ "$kind" = spawn ] || continue
	nspawn=$((nspawn + 1))
	n=$(q "select count(*) from edges e join nodes s on s.id = e.src join nodes d on d.id = e.dst
	       where e.type = 'spawn' and s.type = 'thread' and s.key = $a
	         and d.type = 'thread' and d.key = $b")
	[ "$n" -ge 1 ] || fail "traced spawn $a -> $b missing"
done <"$T/truth"

# Unrelated tasks may appear as nodes at the other end of a switch with a
# traced task (an orphan, "birth not in trace"), but their own births, the
# unrelated process's forks and thread creations, must not be recorded.
n=$(q "select count(*) from edges e left join nodes s on s.id = e.src join nodes d on d.id = e.dst
       where e.type = 'spawn' and coalesce(e.reason, '') not like 'orphan%'
         and (d.key in ($unrel) or s.key in ($unrel))")
[ "$n" = 0 ] || fail "$n recorded spawns of tasks of the unrelated process ($unrel)"
n=$(q "select count(*) from edges e join nodes s on s.id = e.src
       where e.type = 'spawn' and e.confidence = 'observed' and s.pid = $UP")
[ "$n" = 0 ] || fail "$n spawn edges from the unrelated process $UP"

# Between tasks, an edge is recorded only when one end is traced. Orphan
# edges made from the /proc snapshot are metadata, not records.
n=$(q "select count(*) from edges e left join nodes s on s.id = e.src join nodes d on d.id = e.dst
       where coalesce(e.reason, '') not like 'orphan%'
         and d.type in ('thread', 'process') and (s.id is null or s.type in ('thread', 'process'))
         and coalesce(d.pid, -1) not in ($traced)
         and (s.id is null or coalesce(s.pid, -1) not in ($traced))")
if [ "$n" != 0 ]; then
	q "select e.type, s.type, s.name, s.pid, d.type, d.name, d.pid, e.reason
	     from edges e left join nodes s on s.id = e.src join nodes d on d.id = e.dst
	    where coalesce(e.reason, '') not like 'orphan%' and d.type in ('thread', 'process')
	      and (s.id is null or s.type in ('thread', 'process'))
	      and coalesce(d.pid, -1) not in ($traced)
	      and (s.id is null or coalesce(s.pid, -1) not in ($traced)) limit 20" >&2
	fail "$n edges between tasks with neither end in the traced set ($traced)"
fi
# Objects (timers, work items) are followed from the traced set into
# kworkers and interrupts, never into the unrelated process: no edge names
# one of its threads (the orphans of its snapshot aside).
n=$(q "select count(*) from edges e left join nodes s on s.id = e.src join nodes d on d.id = e.dst
       where coalesce(e.reason, '') not like 'orphan%' and (s.pid = $UP or d.pid = $UP)")
if [ "$n" != 0 ]; then
	q "select e.type, s.type, s.name, s.pid, d.type, d.name, d.pid, e.reason
	     from edges e left join nodes s on s.id = e.src join nodes d on d.id = e.dst
	    where coalesce(e.reason, '') not like 'orphan%' and (s.pid = $UP or d.pid = $UP)
	    limit 20" >&2
	fail "$n edges name a thread of the unrelated process $UP"
fi
n=$(q "select count(*) from edges e join nodes d on d.id = e.dst where d.pid in ($traced)
       and coalesce(e.reason, '') not like 'orphan%'")
[ "$n" -gt 0 ] || fail "no edges for the traced processes"
nedges=$n

# -p follows forks whatever -e says: with the futex class alone (no
# sched), the forked child process c1's join of its thread is recorded.
"$WL/spawn" "$T/truth2" "$T/go2" 300 &
TP=$!
pids+=("$TP")
wait_for 10 has_pid_line "$T/truth2" || fail "second workload did not start"
start_capture "$T/f.cwt" -e futex -p "$TP"
touch "$T/go2"
wait "$TP" || fail "second workload failed"
wait "$CP"
check_capture_rc $? "$T/capture.err"
pids=()
children=$(awk -v tp="$TP" '$1 == "pid" && $2 != tp { printf "%s%s", sep, $2; sep = "|" }' "$T/truth2")
[ -n "$children" ] || fail "second workload reported no child process"
"$AN" --dump "$T/f.cwt" >"$T/f.dump" 2>"$T/analyze.err" || fail "cannot dump $T/f.cwt"
nfutex=$(grep -cE "^futex .* task=[0-9]+/($children) " "$T/f.dump")
[ "$nfutex" -ge 1 ] || fail "-e futex -p $TP recorded no futex call of its forked children ($children)"
n=$(grep -cE '^(fork|switch|waking) ' "$T/f.dump")
[ "$n" = 0 ] || fail "-e futex recorded $n sched records"

# A fork the full traced set refuses is a process the trace lacks, with
# or without the sched class: a coverage break says so. The set is made
# to hold two processes (CAUSEWAY_TRACED_MAX, capture/main.c): spawn's
# main and c1 fill it, and c1's fork of g1 is refused.
for ev in "" "-e futex"; do
	"$WL/spawn" "$T/truth3" "$T/go3" 300 &
	TP=$!
	pids+=("$TP")
	wait_for 10 has_pid_line "$T/truth3" || fail "third workload did not start"
	export CAUSEWAY_TRACED_MAX=2
	# shellcheck disable=SC2086 # no -e, or -e and its list
	start_capture "$T/full.cwt" $ev -p "$TP"
	unset CAUSEWAY_TRACED_MAX
	touch "$T/go3"
	wait "$TP" || fail "third workload failed"
	wait "$CP"
	check_capture_rc $? "$T/capture.err"
	pids=()
	np=$(grep -c '^pid ' "$T/truth3")
	[ "$np" -ge 3 ] || fail "spawn reported $np processes, not its three"
	DB=$T/full.db
	analyze "$T/full.cwt" "$DB"
	# The sched class's map stream is the traced set (docs/model.md §2.2).
	n=$(q "select coalesce(sum(lost_events), 0) from coverage_breaks
	       where stream = 'map' and class = 'sched' and reason like 'traced set full%'")
	[ "$n" -ge 1 ] || {
		q "select * from coverage_breaks" >&2
		fail "${ev:-default classes}: a traced set of 2 refused spawn's third process, and no coverage break says so"
	}
	rm -f "$T/full.cwt" "$T/full.db" "$T/truth3" "$T/go3"
done
echo "live/$NAME: $nspawn traced spawns present, $nedges edges touch the traced set, unrelated process absent; -e futex: $nfutex futex calls of forked children; a full traced set is a coverage break with and without sched"
