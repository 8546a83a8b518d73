#!/bin/bash
# live/drain: the drain loop is not starved. With producers that keep up
# with the consumer (16 unpinned ping-pong pairs, 4 KiB segments: a seal
# every ~70 records), libbpf 1.1's ring_buffer__poll() never returned and
# the loop never saw -d nor its once-a-second accounting. Bounded batches
# let it: the capture stops within a second of -d 3 (by its own clock,
# capture_end_ns - capture_start_ns; the disk's fdatasync is not the
# loop's time) and writes accounting for each second it ran.

. "$(dirname "$0")/../lib/live.bash" "$@"

# On tmpfs: the file is large, and its writeback is not what is measured.
S=$(mktemp -d /dev/shm/cw-drain.XXXXXX) || fail "no /dev/shm"
trap 'cleanup; rm -rf "$S"' EXIT

"$WL/pingpong" - 1000000000 0 16 &
pids+=($!)
sleep 0.5
capture -q -F 0 --no-offcpu -d 3 --segment-size 4K -o "$S/t.cwt"
kill "${pids[@]}"
wait "${pids[@]}" 2>/dev/null
pids=()
"$AN" --dump "$S/t.cwt" 2>/dev/null | grep -E '^(kv .* key=capture_(start|end)_ns|account .* ring=edge)' >"$T/d.txt"
start=$(sed -n 's/.* key=capture_start_ns value=//p' "$T/d.txt")
end=$(sed -n 's/.* key=capture_end_ns value=//p' "$T/d.txt")
ms=$(((end - start) / 1000000))
# Account records of one flush share their timestamp.
ticks=$(awk '$1 == "account" { print $2 }' "$T/d.txt" | sort -u | wc -l)
[ "$ms" -lt 4000 ] || fail "-d 3 under load ran ${ms} ms"
[ "$ticks" -ge 3 ] || fail "-d 3 under load: accounting written $ticks times, want >= 3 (every second and at the close)"
echo "live/$NAME: -d 3 under load stopped after $ms ms with $ticks accounting flushes"
