#!/bin/bash
# faults/kill: a capture SIGKILLed at any moment loses at most its
# in-flight segment (docs/model.md §3 and 7). ROUNDS (20) kills, each of a
# capture running a busy COMMAND (pipe ping-pong, CPU and off-CPU samples
# at 999 Hz), at a random moment of one of three phases in turn:
#  - start-up (0 to 2 s: loading and attaching the programs, reading
#    kallsyms and /proc, before and after the trace is renamed into place);
#  - steady state (1.5 to 3 s after the start);
#  - the final drain (SIGTERM, then SIGKILL 0 to 150 ms later).
# After each: where the trace reached its name, the analyzer reads it
# (exit 0), it was not closed cleanly (clean_close 0, unless the drain
# finished first), at most one segment is damaged (the in-flight one), and
# every segment that reached the file whole is read; the COMMAND is gone (it dies with the capture); and after the next
# capture to the same name no temporary file is left.

KIND=faults . "$(dirname "$0")/../lib/live.bash" "$@"

ROUNDS=${ROUNDS:-20}
PP=$WL/pingpong
[ -x "$PP" ] || fail "$PP is not built"
mkdir "$T/o"
OUT=$T/o/k.cwt

# A random fraction of a second, in [lo, hi) ms, as seconds.
rand_s() { # lo_ms hi_ms
	local ms=$(($1 + RANDOM % ($2 - $1)))
	printf '%d.%03d' $((ms / 1000)) $((ms % 1000))
}

gone() { ! kill -0 "$1" 2>/dev/null; }

# The segments that lie whole in FILE, walked by their headers alone
# (schema/format.md): what the reader must read back.
whole_segments() { # file
	python3 - "$1" <<'PY'
import struct, sys
f = open(sys.argv[1], 'rb').read()
off = n = 0
while off + 64 <= len(f) and f[off:off + 8] == b'CWTRACE\x1a':
    stored, = struct.unpack_from('<I', f, off + 48)
    hdr_len, = struct.unpack_from('<H', f, off + 56)
    if off + hdr_len + stored > len(f):
        break
    n += 1
    off += hdr_len + stored
print(n)
PY
}

for ((i = 0; i < ROUNDS; i++)); do
	phase=$((i % 3))
	rm -f "$T/cmd.pid"
	# The COMMAND says its pid before it becomes the workload.
	"$CAP" -q -F 999 -o "$OUT" -- sh -c "echo \$\$ > '$T/cmd.pid'; exec '$PP' - 2000000 0 1" \
		2>"$T/capture.err" &
	cp=$!
	pids+=("$cp")
	case $phase in
	0) sleep "$(rand_s 0 2000)" ;;
	1)
		sleep 1.5
		sleep "$(rand_s 0 1500)"
		;;
	2)
		sleep 1.5
		kill -TERM "$cp" 2>/dev/null
		sleep "$(rand_s 0 150)"
		;;
	esac
	kill -KILL "$cp" 2>/dev/null
	wait "$cp" 2>/dev/null
	if grep -qE "needs root|bpf\(\) denied|CAP_BPF" "$T/capture.err"; then
		cat "$T/capture.err" >&2
		skip "bpf() denied"
	fi
	what="round $i (phase $phase)"
	if [ -s "$T/cmd.pid" ]; then
		cmd=$(cat "$T/cmd.pid")
		wait_for 5 gone "$cmd" || {
			kill -KILL "$cmd" 2>/dev/null
			fail "$what: COMMAND $cmd outlived the killed capture"
		}
	fi
	if [ -e "$OUT" ]; then
		rm -f "$T/k.db"
		"$AN" -q -o "$T/k.db" "$OUT" 2>"$T/analyze.err" || {
			cat "$T/analyze.err" >&2
			fail "$what: the analyzer cannot read the killed capture's trace"
		}
		DB=$T/k.db
		damaged=$(meta segments_damaged "$DB")
		[ "$damaged" -le 1 ] || fail "$what: $damaged damaged segments (only the in-flight one may be)"
		# Every segment that reached the file whole was read.
		total=$(meta segments_total "$DB")
		whole=$(whole_segments "$OUT")
		[ $((total - damaged)) -ge "$whole" ] ||
			fail "$what: $whole whole segments in the file, $((total - damaged)) read"
		[ "$(meta clean_close "$DB")" = 0 ] || [ "$phase" = 2 ] ||
			fail "$what: a killed capture's trace says it was closed cleanly"
		echo "faults/kill: $what: trace of $total segments, $damaged damaged, $(meta events_total "$DB") events"
	else
		echo "faults/kill: $what: killed before the trace had its name"
	fi
	# The next capture to the name removes what the killed one left.
	"$CAP" -q -F 0 --no-offcpu --force -d 0.2 -o "$OUT" 2>"$T/capture.err" ||
		{ cat "$T/capture.err" >&2; fail "$what: the next capture failed"; }
	left=$(ls -A "$T/o" | grep -v '^k\.cwt$')
	[ -z "$left" ] || fail "$what: left behind after the next capture: $left"
	rm -f "$OUT"
done
echo "faults/kill: $ROUNDS kills, every trace readable, no COMMAND or temporary left"
