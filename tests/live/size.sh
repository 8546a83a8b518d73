#!/bin/bash
# live/size: --max-size N stops a busy capture cleanly near N and never
# past it: the file ends between 80% and 100% of the limit, closed cleanly
# with stop_reason max-size. (It used to compare raw pending bytes with a
# compressed limit: 1M stopped after 56 KiB.)

. "$(dirname "$0")/../lib/live.bash" "$@"

"$WL/pingpong" - 100000000 0 2 &
pids+=($!)

check_size() { # limit-bytes label [capture arguments...]
	local limit=$1 label=$2 size
	shift 2
	capture -q -F 0 --no-offcpu -d 60 --max-size "$label" "$@" -o "$T/m.cwt"
	size=$(stat -c %s "$T/m.cwt")
	[ "$size" -le "$limit" ] || fail "--max-size $label $*: file is $size bytes, past the limit"
	[ "$size" -ge $((limit * 8 / 10)) ] ||
		fail "--max-size $label $*: file is $size bytes, below 80% of the limit"
	[ "$(kv stop_reason "$T/m.cwt")" = max-size ] ||
		fail "--max-size $label $*: stop_reason $(kv stop_reason "$T/m.cwt")"
	analyze "$T/m.cwt" "$T/m.db"
	[ "$(meta clean_close "$T/m.db")" = 1 ] || fail "--max-size $label $*: not closed cleanly"
	echo "live/$NAME: --max-size $label $*: $size bytes ($((size * 100 / limit))%)"
	rm -f "$T/m.cwt" "$T/m.db"
}

check_size $((1 << 20)) 1M
check_size $((256 << 10)) 256K
check_size $((256 << 10)) 256K --segment-size 16K
echo "live/$NAME: --max-size stops between 80% and 100% of the limit"
