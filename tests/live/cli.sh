#!/bin/bash
# live/cli: the command line of docs/model.md §2.
#  - bad arguments and unknown classes exit 2 with a message naming them;
#  - an existing output is refused without --force and replaced with it;
#    a symlink is refused even with --force (its target is untouched);
#    the file is created mode 0600;
#  - -e sched,usdt records sched and says what the adapter class attached;
#  - --edge-ring: a power of two between 4K and 1G, else exit 2; a
#    one-page edge ring under four ping-pong pairs loses edges, which are
#    counted and become 'edge' coverage breaks, the analysis succeeds,
#    every thread wake edge is a wake record the capture kept (same time,
#    waker and wakee), every kept wake of a ping-pong thread is an edge,
#    and none comes from another process; gap records report every lost
#    edge event, so the breaks are the runs of loss, not the accounting
#    windows; the default ring loses none of the same workload;
#  - --segment-size 4096: the metadata outgrows a segment and goes on in
#    META segments, all before the first EVENTS segment, and the analyzer
#    reads the file without an order warning;
#  - SIGTERM drains and closes cleanly (exit 0, final segment,
#    stop_reason signal); SIGKILL loses at most the in-flight segment;
#  - not privileged: exit 2 naming CAP_BPF / CAP_PERFMON.

. "$(dirname "$0")/../lib/live.bash" "$@"

expect_rc 2 "unknown event class 'bogus'" "-e bogus" -- "$CAP" -q -e bogus -o "$T/a.cwt" -d 1
expect_rc 2 "-d" "-d abc" -- "$CAP" -q -d abc -o "$T/a.cwt"
expect_rc 2 "segment-size" "--segment-size 1X" -- "$CAP" -q --segment-size 1X -o "$T/a.cwt"
expect_rc 2 "no process" "-p of a dead pid" -- "$CAP" -q -p 999999999 -o "$T/a.cwt"
[ -e "$T/a.cwt" ] && fail "a refused start left $T/a.cwt behind"

# Existing file, --force, symlink, mode.
echo keep >"$T/exists.cwt"
expect_rc 2 "exists" "existing output" -- "$CAP" -q -F 0 --no-offcpu -d 1 -o "$T/exists.cwt"
[ "$(cat "$T/exists.cwt")" = keep ] || fail "existing output was modified"
capture -q -F 0 --no-offcpu -d 1 --force -o "$T/exists.cwt"
[ "$(head -c 7 "$T/exists.cwt")" = CWTRACE ] || fail "--force did not replace the file"
[ "$(stat -c %a "$T/exists.cwt")" = 600 ] || fail "output mode is $(stat -c %a "$T/exists.cwt"), not 600"
echo target >"$T/target"
ln -s "$T/target" "$T/link.cwt"
expect_rc 2 "symbolic link" "symlink output with --force" -- "$CAP" -q -F 0 --no-offcpu -d 1 --force -o "$T/link.cwt"
[ "$(cat "$T/target")" = target ] || fail "symlink target was modified"

# A segment smaller than the start-up metadata (snapshots, kallsyms): its
# first part was sealed as EVENTS segments, ahead of the META ones.
capture -q --segment-size 4096 -d 1 -o "$T/seg.cwt"
"$AN" --dump "$T/seg.cwt" 2>"$T/seg.err" |
	sed -n 's/^# segment seq=[0-9]* type=\([a-z]*\) .*/\1/p' | uniq -c >"$T/seg.types"
order=$(awk '{ printf "%s%s", (NR > 1 ? " " : ""), $2 }' "$T/seg.types")
[ "$order" = "meta events final" ] ||
	fail "--segment-size 4096: segment types in the order '$order' (counts: $(tr -s ' \n' ' ' <"$T/seg.types"))"
[ "$(awk '$2 == "meta" { print $1 }' "$T/seg.types")" -ge 2 ] ||
	fail "--segment-size 4096: the metadata fits one segment; the test checks nothing"
! grep -q "META" "$T/seg.err" || fail "--segment-size 4096: the analyzer warns: $(grep META "$T/seg.err")"

# The adapter class says what it attached; sched is recorded beside it.
expect_rc 0 "usdt at start: [0-9]+ probes attached" "-e sched,usdt" -- \
	"$CAP" -v -F 0 --no-offcpu -e sched,usdt -d 1 -o "$T/e.cwt"
analyze "$T/e.cwt" "$T/e.db"
[ "$(meta events_total "$T/e.db")" -gt 0 ] || fail "-e sched,usdt recorded no events"
expect_rc 0 "recording CPU samples at 99 Hz" "default -F 99" -- "$CAP" -d 0.5 -o "$T/f.cwt"
# Sample options that can do nothing with the sample plane off.
for o in "--call-graph dwarf" "--sample-budget 100" "--sample-ring 65536"; do
	# shellcheck disable=SC2086
	expect_rc 2 "" "$o with -F 0 --no-offcpu" -- "$CAP" -F 0 --no-offcpu $o -d 0.1 -o "$T/n.cwt"
done
expect_rc 2 "" "--call-graph dwarf,12" -- "$CAP" --call-graph dwarf,12 -d 0.1 -o "$T/n.cwt"

# --edge-ring: loss forced by a small ring is counted and stays loss.
for s in 3000 0 2G x 6K; do
	expect_rc 2 "--edge-ring: '$s' is not a power of two between 4K and 1G" "--edge-ring $s" -- \
		"$CAP" -q -F 0 --no-offcpu --edge-ring "$s" -d 0.1 -o "$T/r.cwt"
done
[ -e "$T/r.cwt" ] && fail "a refused --edge-ring left $T/r.cwt behind"
ring_run() { # name [capture arguments...]: four pairs, 50000 round trips each
	local n=$1
	shift
	capture -q -F 0 --no-offcpu "$@" -o "$T/$n.cwt" -- "$WL/pingpong" "$T/$n.truth" 50000 0 4
	analyze "$T/$n.cwt" "$T/$n.db"
}
edge_lost() { DB=$T/$1.db q "select count(*) || ' breaks, ' || coalesce(sum(lost_events), 0) || ' lost'
			     from coverage_breaks where stream = 'edge'"; }
# What the joins made of the wakes, and what the trace holds: the wake
# records the capture kept in task context (an interrupt's wake has no
# thread for its cause), as "ts|waker|wakee" (tids). Loss may drop
# records; it must never make an edge that no record says, nor leave a
# kept wake of a ping-pong thread unjoined. Sibling threads do wake each
# other at start (glibc's and the sanitizers' locks), so a wake from a
# thread other than the partner is no error; one from another process is.
wake_records() { # name
	"$AN" --dump "$T/$1.cwt" 2>/dev/null | awk '($1 == "waking" || $1 == "waking_caused") && / ctx=task / {
		ts = waker = wakee = ""
		for (i = 2; i <= NF; i++) {
			if ($i ~ /^ts=/) ts = substr($i, 4)
			if ($i ~ /^waker=/) { split(substr($i, 7), w, "/"); waker = w[1] }
			if ($i ~ /^wakee=/) { split(substr($i, 7), w, "/"); wakee = w[1] }
		}
		print ts "|" waker "|" wakee
	}' | sort -u
}
wake_edges() { # name
	DB=$T/$1.db q "select e.ts || '|' || s.key || '|' || d.key from edges e
		       join nodes s on s.id = e.src join nodes d on d.id = e.dst
		       where e.type = 'wake' and s.type = 'thread' and d.type = 'thread'" | sort -u
}
check_wakes() { # name
	local pp pid n
	pp=$(awk '$1 == "pingpong" { printf "%s%s,%s", n++ ? "," : "", $2, $3 }' "$T/$1.truth")
	pid=$(awk '$1 == "pid" { print $2 }' "$T/$1.truth")
	[ -n "$pp" ] && [ -n "$pid" ] || fail "$1: no ground truth"
	wake_records "$1" >"$T/$1.rec"
	wake_edges "$1" >"$T/$1.edg"
	[ -s "$T/$1.edg" ] || fail "$1 edge ring: no wake edge to check"
	n=$(comm -23 "$T/$1.edg" "$T/$1.rec" | wc -l)
	[ "$n" = 0 ] || fail "$1 edge ring: $n wake edges no record says: $(comm -23 "$T/$1.edg" "$T/$1.rec" | head -3)"
	n=$(awk -F'|' -v pp=",$pp," 'index(pp, "," $3 ",")' "$T/$1.rec" | comm -23 - "$T/$1.edg" | wc -l)
	[ "$n" = 0 ] || fail "$1 edge ring: $n kept wakes of ping-pong threads without their edge"
	n=$(DB=$T/$1.db q "select count(*) from edges e join nodes d on d.id = e.dst
			   join nodes s on s.id = e.src where e.type in ('wake', 'fire')
			   and d.type = 'thread' and d.key in ($pp) and s.type = 'thread' and s.pid != $pid")
	[ "$n" = 0 ] || fail "$1 edge ring: $n wakes of ping-pong threads from another process"
}
ring_run small --edge-ring 4K
ring_run default
[ "$(kv ring_edge_bytes "$T/small.cwt")" = 4096 ] ||
	fail "--edge-ring 4K: ring_edge_bytes $(kv ring_edge_bytes "$T/small.cwt")"
kv options "$T/small.cwt" | grep -q " edge_ring=4096 " || fail "--edge-ring 4K: options $(kv options "$T/small.cwt")"
[ "$(kv ring_edge_bytes "$T/default.cwt")" = $((8 << 20)) ] ||
	fail "default edge ring: ring_edge_bytes $(kv ring_edge_bytes "$T/default.cwt")"
small=$(edge_lost small) dflt=$(edge_lost default)
case $small in "0 breaks, 0 lost" | *" 0 lost") fail "a one-page edge ring lost nothing: $small" ;; esac
[ "$(meta events_lost "$T/small.db")" -gt 0 ] || fail "--edge-ring 4K: meta events_lost 0 ($small)"
[ "$dflt" = "0 breaks, 0 lost" ] || fail "the default edge ring lost events: $dflt"
check_wakes small
check_wakes default
# Where the loss was (format 1.5): every edge event lost is in a gap
# record, so no accounting window is a break, and the breaks together
# span less than the capture (runs of failures, not seconds).
gaps=$("$AN" --dump "$T/small.cwt" 2>/dev/null | awk '$1 == "gap" {
	for (i = 2; i <= NF; i++) if ($i ~ /^lost=/) n += substr($i, 6) } END { print n + 0 }')
acct=$("$AN" --dump "$T/small.cwt" 2>/dev/null | awk '$1 == "account" && / ring=edge / {
	for (i = 2; i <= NF; i++) if ($i ~ /^lost=/) n += substr($i, 6) } END { print n + 0 }')
[ "$gaps" -gt 0 ] && [ "$gaps" = "$acct" ] ||
	fail "--edge-ring 4K: gap records report $gaps lost edge events, the accounting $acct"
span=$(DB=$T/small.db q "select (select sum(end_ns - start_ns) from coverage_breaks where stream = 'edge') <
	(select max(cast(value as integer)) - min(cast(value as integer)) from meta
	  where key in ('capture_start_ns', 'capture_end_ns'))")
[ "$span" = 1 ] || fail "--edge-ring 4K: the edge breaks span the whole capture"
DB=$T/small.db q "select count(*) from coverage_breaks where stream = 'edge' and reason like 'ring full: %'" |
	grep -qx 0 || fail "--edge-ring 4K: an accounting window became a break though gap records reported it all"
[ "$(grep -c '^pingpong ' "$T/small.truth")" = 4 ] || fail "no ground truth for four pairs"

# SIGTERM: drain, final segment, exit 0.
start_capture "$T/s.cwt"
sleep 1
stop_capture TERM SIGTERM
analyze "$T/s.cwt" "$T/s.db"
[ "$(meta clean_close "$T/s.db")" = 1 ] || fail "SIGTERM: no final segment"
[ "$(meta capture.stop_reason "$T/s.db")" = signal ] || fail "SIGTERM: stop_reason $(meta capture.stop_reason "$T/s.db")"

# SIGKILL: the capture gets no chance to close. Segments are sealed every
# second, so a capture killed after 3.5 s keeps at least its first 2 s of
# events (1.5 s of slack for polling and a loaded machine); the file reads
# with exit 0 and says it was not closed cleanly.
"$WL/pingpong" - 100000000 0 2 &
WP=$!
pids+=("$WP")
start_capture "$T/k.cwt"
# Forks, execs and renames once the ring has wrapped many times: their
# strings must be NUL-padded, not followed by stale bytes of old records
# (the dump then shows them as raw records).
sleep 2
for ((i = 0; i < 20; i++)); do /bin/true; done
sleep 1.5
kill -KILL "$CP"
wait "$CP" 2>/dev/null
kill "$WP"
wait "$WP" 2>/dev/null
pids=()
analyze "$T/k.cwt" "$T/k.db"
[ "$(meta clean_close "$T/k.db")" = 0 ] || fail "SIGKILL: file claims a clean close"
"$AN" --dump "$T/k.cwt" >"$T/k.txt" 2>/dev/null
n=$(grep -c '^exec ' "$T/k.txt")
[ "$n" -ge 20 ] || fail "only $n exec records after the ring wrapped (want >= 20)"
n=$(grep -c '^raw ' "$T/k.txt")
[ "$n" = 0 ] || fail "$n records with stale bytes after their strings: $(grep -m1 '^raw ' "$T/k.txt")"
span=$(DB=$T/k.db q "select (max(ts) - min(ts)) / 1000000 from edges where reason is null or reason not like 'orphan%'")
[ "${span:-0}" -ge 2000 ] || fail "SIGKILL after 3.5 s kept only ${span:-0} ms of edges (want >= 2000)"

# Without privilege: exit 2, naming what is missing.
if command -v setpriv >/dev/null; then
	expect_rc 2 "CAP_BPF" "unprivileged" -- setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$CAP" -q -o /nonexistent/x.cwt -d 1
fi
echo "live/$NAME: exit codes, output safety, classes, --edge-ring ($small with 4K, $dflt by default), SIGTERM and SIGKILL behave"
