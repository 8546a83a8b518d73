#!/bin/bash
# live/export_perfetto: the Perfetto export (docs/model.md §8.3) of a real
# capture. tests/workloads/pipeline sends 30 requests through a pipe, a
# futex, a timer, an io_uring read punted to io-wq and a pty whose
# flush_to_ldisc a kworker runs; its database, exported, must read back
# with protoc and hold to it as tests/export/perfetto.py checks the
# fixtures' (a track per thread and process, a blocked slice per off-CPU
# sample named by what ended it, a running slice between waits, a flow per
# edge), and the waits of the pipeline's threads must be named by each of
# those handoffs: the condition variable's futex, the timer, the io-wq
# worker, the work item.

. "$(dirname "$0")/../lib/live.bash" "$@"

top=$(cd "$(dirname "$0")/../.." && pwd)
for tool in protoc python3; do
	command -v "$tool" >/dev/null || fail "$tool is not installed (tests/deps.sh installs it)"
done
capture -q -F 999 -o "$T/t.cwt" -- "$WL/pipeline" "$T/truth" 30
DB=$T/t.db
analyze "$T/t.cwt" "$DB"
"$BUILD/causeway-export" perfetto "$DB" -q -o "$T/t.perfetto-trace" || fail "causeway-export failed"
protoc --decode_raw <"$T/t.perfetto-trace" >/dev/null || fail "protoc --decode_raw cannot read it"
protoc --decode=perfetto.protos.Trace -I "$top/tests/export" "$top/tests/export/perfetto_trace.proto" \
	<"$T/t.perfetto-trace" >"$T/dec.txt" || fail "protoc cannot decode it as a perfetto Trace"
python3 "$top/tests/export/perfetto.py" "$DB" "$T/dec.txt" >"$T/check.out" ||
	fail "the trace and its database differ (see above)"

# Each handoff of the pipeline ended some wait of the threads it woke, and
# the blocked slices say so (the checker above holds each one's name to
# its wake edge).
for want in 'futex from acceptor' 'timer hrtimer_wakeup' 'wake from iou-wrk-' 'work flush_to_ldisc'; do
	grep -qP "^blocked\t\d+\t\Q$want" "$T/check.out" || {
		cat "$T/check.out" >&2
		fail "no wait named $want"
	}
done
n=$(q "select count(*) from samples where kind = 'offcpu'")
[ "$n" -ge 90 ] || fail "only $n off-CPU samples for 30 requests of 3 waits each at least"
head -1 "$T/check.out"
