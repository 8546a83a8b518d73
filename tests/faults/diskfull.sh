#!/bin/bash
# faults/diskfull: a full disk stops the capture with a clear message and a
# readable file (docs/model.md §7). The capture writes a busy workload's trace
# into a 3 MiB tmpfs that the test mounts and unmounts itself: it must
# exit 1 saying the disk is full, well before its -d, leave its COMMAND
# stopped, and its trace must read back with every whole segment and at
# most the last one damaged.

KIND=faults . "$(dirname "$0")/../lib/live.bash" "$@"

PP=$WL/pingpong
[ -x "$PP" ] || fail "$PP is not built"
mnt=$T/full
mkdir "$mnt"
mount -t tmpfs -o size=3m,mode=0700 cw-faults-full "$mnt" || fail "cannot mount a tmpfs at $mnt"
unmount() { mountpoint -q "$mnt" && umount "$mnt"; }
trap 'unmount; cleanup' EXIT

start=$(date +%s)
"$CAP" -q -F 999 -d 60 -o "$mnt/t.cwt" -- sh -c "echo \$\$ > '$T/cmd.pid'; exec '$PP' - 50000000 0 1" \
	2>"$T/capture.err"
rc=$?
cmd=$(cat "$T/cmd.pid" 2>/dev/null)
gone() { ! kill -0 "$1" 2>/dev/null; }
[ -n "$cmd" ] || fail "the COMMAND did not start"
wait_for 5 gone "$cmd" || { kill -KILL "$cmd"; fail "the COMMAND outlived the capture"; }
took=$(($(date +%s) - start))
if grep -qE "needs root|bpf\(\) denied|CAP_BPF" "$T/capture.err"; then
	cat "$T/capture.err" >&2
	skip "bpf() denied"
fi
[ $rc = 1 ] || { cat "$T/capture.err" >&2; fail "a capture onto a full disk: exit $rc, want 1"; }
grep -qiE "no space left|disk.*full" "$T/capture.err" ||
	{ cat "$T/capture.err" >&2; fail "the capture did not say the disk is full"; }
[ "$took" -lt 50 ] || fail "the capture ran on for $took s on a full disk"
[ -f "$mnt/t.cwt" ] || fail "no trace at its name"
echo "faults/diskfull: the capture stopped after $took s: $(grep -iE 'no space|full' "$T/capture.err" | head -1)"

cp "$mnt/t.cwt" "$T/t.cwt"
unmount
analyze "$T/t.cwt" "$T/t.db"
DB=$T/t.db
damaged=$(meta segments_damaged "$DB")
[ "$damaged" -le 1 ] || fail "$damaged damaged segments in the trace of a full disk"
[ "$(meta segments_total "$DB")" -ge 2 ] || fail "the trace of a full disk holds no events segment"
[ "$(q "select count(*) from edges")" -gt 0 ] || fail "the trace of a full disk holds no edge"
echo "faults/diskfull: the trace reads back: $(meta segments_total "$DB") segments, $damaged damaged, $(meta events_total "$DB") events"
