#!/bin/bash
# live/traced: in filtered mode the capture records an edge when either
# end is traced, so tasks that merely ran beside the traced ones appear
# at the other end. They must be nodes with traced = 0 and no orphan
# spawn edge, kept apart in the summary, so that nobody reads them as
# missed spawns; every task of the traced command is traced = 1.
# (COMMAND mode.) Such a task born after the capture started, which the
# /proc snapshot could not name, is named all the same while it lives
# (capture/namer.h): the writer, a program named cw-late-writer started
# after the capture and alive a while after its write, is a node of that
# name.

. "$(dirname "$0")/../lib/live.bash" "$@"

# The traced command runs the spawn workload, then reads a FIFO that an
# unrelated shell (not traced) writes: that writer wakes a traced task, so
# it must appear as a node outside the traced set.
mkfifo "$T/fifo"
cp "$(command -v tee)" "$T/cw-late-writer"
(sleep 1; { echo hello; sleep 2; } | "$T/cw-late-writer" "$T/fifo" >/dev/null) &
WP=$!
pids+=("$WP")
capture -F 0 --no-offcpu -o "$T/t.cwt" -- \
	bash -c '"$1" "$2" "$3" 300 && read -r x <"$4" && [ "$x" = hello ]' traced \
	"$WL/spawn" "$T/truth" "$T" "$T/fifo"
wait "$WP"
pids=()
DB=$T/t.db
"$AN" -o "$DB" "$T/t.cwt" >"$T/summary" 2>"$T/analyze.err" || {
	cat "$T/analyze.err" >&2
	fail "causeway-analyze failed"
}

[ -n "$(q "select value from meta where key = 'capture.traced_pids'")" ] ||
	fail "the capture wrote no traced_pids metadata"
wpids=$(awk '$1 == "pid" { printf "%s%s", sep, $2; sep = "," }' "$T/truth")
n=$(q "select count(*) from nodes where type = 'thread' and pid in ($wpids) and coalesce(traced, -1) != 1")
[ "$n" = 0 ] || fail "$n threads of the traced command are not marked traced"
n=$(q "select count(*) from nodes where type = 'thread' and pid in ($wpids)")
[ "$n" -ge 7 ] || fail "only $n threads of the traced command"
n=$(q "select count(*) from edges e join nodes d on d.id = e.dst where e.type = 'spawn' and d.traced = 0")
[ "$n" = 0 ] || fail "$n spawn edges into tasks outside the traced set"
n=$(q "select count(*) from edges e join nodes d on d.id = e.dst
       where e.type = 'spawn' and e.src is null and coalesce(d.traced, -1) != 1")
[ "$n" = 0 ] || fail "$n orphan spawn edges for tasks not known to be traced"
untraced=$(q "select count(*) from nodes where type = 'thread' and traced = 0")
[ "$untraced" -ge 1 ] || fail "the untraced FIFO writer is not a node outside the traced set"
grep -q "outside the traced set: .*thread $untraced" "$T/summary" ||
	{ cat "$T/summary" >&2; fail "the summary does not list the $untraced untraced threads apart"; }
n=$(q "select count(*) from nodes where type = 'thread' and traced = 0 and pid in ($wpids)")
[ "$n" = 0 ] || fail "$n threads of the traced command marked untraced"
late=$(q "select count(*) || ' ' || coalesce(min(traced), 'none') from nodes where type = 'thread' and name = 'cw-late-writer'")
[ "$late" = "1 0" ] || fail "the untraced writer born after the start: '$late' thread nodes named cw-late-writer (count, traced), expected '1 0'"
echo "live/$NAME: traced command's threads traced, $untraced untraced neighbours without orphan edges, the late writer named"
