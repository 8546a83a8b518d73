#!/bin/bash
# live/gotruth: bench/truth's Go pipeline, small (bench/truth/gotruth,
# FORMAT.md "The Go pipeline"): 200 requests through net/http, a channel
# to a worker goroutine, a spawn, a sync.Mutex, a time.Sleep and a channel
# back, captured with -e sched,go and CPU samples, scored by causeway-eval
# against the program's own truth. Fails unless every Go mechanism was
# exercised and scored with precision 1.000, no false join and recall at
# least 0.99 (no loss here: the edge ring is large), and unless causeway's
# CPU attribution error per request is below the per-thread baseline's.
# A build whose capture has no go class skips, and says so; go missing
# fails (tests/deps.sh installs golang-go).

. "$(dirname "$0")/../lib/live.bash" "$@"
top=$(cd "$(dirname "$0")/../.." && pwd)
EV=$BUILD/causeway-eval
[ -x "$EV" ] || fail "$EV is not built"
need_built_class go
command -v go >/dev/null || fail "go is not installed (Debian: golang-go, which tests/deps.sh installs)"
gocmd build -o "$T/gotruth" "$top/bench/truth/gotruth/main.go" || fail "go build of bench/truth/gotruth failed"
capture -q -F 4999 -e sched,go -o "$T/t.cwt" -- "$T/gotruth" -truth "$T/t.truth" -requests 200
need_class go "$T/t.cwt"
n=$(awk -F'\t' '$1 == "request"' "$T/t.truth" | wc -l)
[ "$n" = 200 ] || fail "the truth file has $n requests, not 200"
analyze "$T/t.cwt" "$T/t.db"
"$EV" --csv "$T/t.csv" --wrong "$T/wrong" "$T/t.truth" "$T/t.db" >"$T/eval.txt" 2>&1 || {
	cat "$T/eval.txt"
	fail "causeway-eval failed"
}
cat "$T/eval.txt"
fig() { # SYSTEM MECH METRIC
	awk -F, -v s="$1" -v m="$2" -v k="$3" '$2 == s && $3 == m && $4 == k { print $5 }' "$T/t.csv"
}
for m in go_http go_chan go_spawn go_mutex go_timer; do
	h=$(fig causeway $m hops)
	[ -n "$h" ] && [ "$h" -ge 200 ] || fail "$m: ${h:-no} hops scored, want at least 200"
	awk -v p="$(fig causeway $m precision)" -v f="$(fig causeway $m false_join_rate)" \
		-v r="$(fig causeway $m recall)" 'BEGIN { exit !(p == 1 && f == 0 && r >= 0.99) }' ||
		fail "$m: precision $(fig causeway $m precision), false-join rate $(fig causeway $m false_join_rate), recall $(fig causeway $m recall) (want 1, 0, >= 0.99):
  $(head -5 "$T/wrong")"
done
c=$(fig causeway attribution cpu_mae_pct) t=$(fig thread attribution cpu_mae_pct)
awk -v c="$c" -v t="$t" 'BEGIN { exit !(c < t) }' || fail "CPU attribution error $c% is not below the thread baseline's $t%"
echo "live/$NAME: 5 Go mechanisms at precision 1, recall $(fig causeway all recall); CPU attribution error $c% against $t% per thread"
