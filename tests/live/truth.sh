#!/bin/bash
# live/truth: the ground-truth benchmark's small configuration (bench/truth,
# issue 10). bench/truthload runs its request pipeline through every
# mechanism (futex handoffs, io_uring reads with user_data reuse, a
# multishot receive and a linked pair, pty writes, nanosleep and timerfd,
# a work-stealing task runtime with nested spawns and cancellation, a
# contended cache), captured with every class and CPU samples; the
# database is scored by causeway-eval against the workload's own truth.
# Fails when causeway's edge precision is below 1.000 or its recall below
# the zero-loss figure docs/truth.md states ("zero-loss recall floor"), or
# when its attribution is no better than per-thread CPU on this pipeline.
# The same run analyzed with -e sched (the thread-level baseline) must
# find the futex handoffs and none of the others.

. "$(dirname "$0")/../lib/live.bash" "$@"
EV=$BUILD/causeway-eval
TL=$BUILD/bench/truthload
for f in "$EV" "$TL"; do
	[ -x "$f" ] || fail "$f is not built"
done
top=$(cd "$(dirname "$0")/../.." && pwd)
floor=$(sed -n 's/.*zero-loss recall floor: \*\*\([0-9.]*\)\*\*.*/\1/p' "$top/docs/truth.md" | head -1)
[ -n "$floor" ] || fail "docs/truth.md states no zero-loss recall floor"

capture -q -F 4999 -o "$T/t.cwt" -- "$TL" --requests 60 --work-us 3000 --truth "$T/t.truth"
need=$(awk -F'\t' '$1 == "request"' "$T/t.truth" | wc -l)
[ "$need" = 60 ] || fail "the truth file has $need requests, not 60"
analyze "$T/t.cwt" "$T/t.db"
"$AN" -q -e sched -o "$T/s.db" "$T/t.cwt" 2>"$T/analyze.err" || fail "causeway-analyze -e sched failed"
"$EV" --baseline-db "$T/s.db" --csv "$T/t.csv" --require-precision 1 --require-recall "$floor" \
	"$T/t.truth" "$T/t.db" >"$T/eval.txt" 2>&1
rc=$?
cat "$T/eval.txt"
[ $rc = 0 ] || fail "causeway-eval: exit $rc (precision below 1 or recall below docs/truth.md's $floor)"

fig() { # SYSTEM MECH METRIC
	awk -F, -v s="$1" -v m="$2" -v k="$3" '$2 == s && $3 == m && $4 == k { print $5 }' "$T/t.csv"
}
# Every mechanism of the chain was exercised and scored.
for m in futex io_uring io_uring_multishot io_uring_link workqueue timer timerfd task resource_wait; do
	h=$(fig causeway "$m" hops)
	[ -n "$h" ] && [ "$h" -gt 0 ] || fail "no $m hops scored"
done
# The thread-level baseline sees the direct handoffs (a futex wake names
# its waker) and none carried by an object.
[ "$(fig sched futex recall)" = 1 ] || fail "sched baseline futex recall $(fig sched futex recall), want 1"
for m in io_uring workqueue timer task; do
	[ "$(fig sched "$m" recall)" = 0 ] || fail "sched baseline recalls $(fig sched "$m" recall) of $m"
done
# Attribution: causeway's CPU error per request is below per-thread CPU's.
awk -v c="$(fig causeway attribution cpu_mae_pct)" -v t="$(fig thread attribution cpu_mae_pct)" \
	'BEGIN { exit !(c < t) }' || fail "CPU attribution error $(fig causeway attribution cpu_mae_pct)% is not below the thread baseline's $(fig thread attribution cpu_mae_pct)%"
echo "live/$NAME: precision $(fig causeway all precision), recall $(fig causeway all recall) (floor $floor)," \
	"CPU attribution error $(fig causeway attribution cpu_mae_pct)% against $(fig thread attribution cpu_mae_pct)% per thread"
