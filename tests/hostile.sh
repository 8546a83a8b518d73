#!/bin/bash
# Small hostile traces must not make the analyzer's memory grow with their
# length (docs/model.md §5.8): with --max-live 1000, peak RSS stays under 100 MB
# for
#  - 4M wakes, each of a new thread that never ends (a ~600 KB file):
#    join state, generation counters and node ids are bounded by the
#    bound, not by the number of keys ever seen;
#  - 4M accounting records that each report lost events (a ~700 KB
#    file): coverage breaks on the same stream merge;
#  - 300K gap records (format 1.5; NG=... overrides) over every CPU number
#    with whole, inverted and unbounded spans, and accounting records whose
#    losses no gap record reports: per-CPU tallies and breaks are bounded;
#  - 30K off-CPU samples (NS=... overrides), each of a new thread that
#    never runs again, each with 64 kernel frames never seen before (2M
#    distinct frames): the waiting samples, the frame and stack dedup
#    tables are bounded (pushed out, emptied and counted), not the trace;
#  - 20K USDT probe records (past the probe table's 16,384) and 300K
#    threads (NA=... overrides) that each begin a resource wait, a request
#    and a task poll and never end them: the probe table, the threads with
#    something open and their waits are bounded and counted.
# The analyzer must also finish with exit 0 and account for what it
# evicted. Peak RSS is read with /usr/bin/time (package time).
#  - 400 requests on 400 threads, each woken at the end by one of two
#    threads that woke each other 100K times before (NC=... overrides):
#    each request's critical path would walk the same 200K segments back
#    (docs/model.md §9); the walks' bounds must cut them (a walk's bound
#    and the budget of all walks both reached, the rows read within the
#    budget) and every request still tile its wall time.
#   tests/hostile.sh BUILD     (N=... overrides the 4M)
set -u
BUILD=$(cd "${1:?usage: tests/hostile.sh BUILD}" && pwd)
N=${N:-4000000}
LIMIT_KB=$((100 * 1024))
AN=$BUILD/causeway-analyze
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
failed=0

[ -x /usr/bin/time ] || { echo "hostile: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
# Under AddressSanitizer the RSS is the sanitizer's (shadow memory,
# quarantine), not the analyzer's: nothing to measure.
if ldd "$AN" 2>/dev/null | grep -q libasan; then
	echo "*** hostile SKIPPED: $AN is built with AddressSanitizer; peak RSS would be its own ***" >&2
	exit 77
fi

run() { # name gentrace-mode meta-check-sql
	local name=$1 mode=$2 check=$3 rc kb
	if [ "$mode" = --samples ]; then
		gen_samples "$T/$name.cwt" || { echo "hostile: the sample trace failed" >&2; failed=1; return; }
	elif [ "$mode" = --gaps ]; then
		"$BUILD/bench/gentrace" --gaps "$T/$name.cwt" "${NG:-300000}" ||
			{ echo "hostile: gentrace --gaps failed" >&2; failed=1; return; }
	elif [ "$mode" = --adapter ]; then
		gen_adapter "$T/$name.cwt" || { echo "hostile: the adapter trace failed" >&2; failed=1; return; }
	elif [ "$mode" = --critical ]; then
		gen_critical "$T/$name.cwt" || { echo "hostile: the critical trace failed" >&2; failed=1; return; }
	else
		"$BUILD/bench/gentrace" "$mode" "$T/$name.cwt" "$N" || { echo "hostile: gentrace $mode failed" >&2; failed=1; return; }
	fi
	/usr/bin/time -f '%M %e' -o "$T/$name.time" \
		"$AN" -q --max-live 1000 -o "$T/$name.db" "$T/$name.cwt" 2>"$T/$name.err"
	rc=$?
	read -r kb secs <"$T/$name.time"
	if [ $rc != 0 ]; then
		echo "hostile: FAIL: $name: exit $rc: $(tail -3 "$T/$name.err")" >&2
		failed=1
		return
	fi
	if [ "$kb" -ge $LIMIT_KB ]; then
		echo "hostile: FAIL: $name: peak RSS $((kb / 1024)) MB, limit $((LIMIT_KB / 1024)) MB" >&2
		failed=1
	fi
	if [ "$(sqlite3 "$T/$name.db" "$check")" != 1 ]; then
		echo "hostile: FAIL: $name: $check is not true" >&2
		failed=1
	fi
	echo "hostile: $name: $(stat -c %s "$T/$name.cwt") bytes, peak RSS $((kb / 1024)) MB, $secs s"
	rm -f "$T/$name.db" "$T/$name.cwt"
}

# The sample trace is compiled from text by the fixture compiler: no
# generator needs to know the sample layout.
gen_samples() { # out.cwt
	awk -v n="${NS:-30000}" 'BEGIN {
		print "!seal meta"
		for (i = 0; i < n; i++) {
			line = sprintf("sample_offcpu ts=%d cpu=%d task=%d/%d start=%d keep=0x100000000 kernel=",
				       1000 + i, i % 8, 1000 + i, 1000 + i, 1 + i)
			for (k = 0; k < 64; k++)
				line = line sprintf("%s0xffffffff%08x", k ? "," : "", i * 64 + k)
			print line
		}
		print "!seal final"
	}' >"$T/samples.events" && "$BUILD/tests/fixturec" "$T/samples.events" "$1"
}

gen_adapter() { # out.cwt
	awk -v n="${NA:-300000}" 'BEGIN {
		print "usdt_probe ts=1 id=30001 nargs=2 str_arg=1 provider=causeway name=request_begin path=/app"
		print "usdt_probe ts=1 id=30002 nargs=1 str_arg=255 provider=causeway name=task_poll_begin path=/app"
		for (i = 1; i <= 20000; i++)
			printf "usdt_probe ts=1 id=%d nargs=2 str_arg=0 provider=causeway name=resource_wait_begin path=/app%d\n", i, i
		print "!seal meta"
		for (i = 0; i < n; i++) {
			t = 1000 + i
			printf "usdt_str ts=%d cpu=0 task=%d/%d start=%d probe=%d nargs=2 args=0,%d str=k%d\n", 1000 + 3 * i, t, t, t, 1 + i % 16382, i, i
			printf "usdt_str ts=%d cpu=0 task=%d/%d start=%d probe=30001 nargs=2 args=%d,0 str=r%d\n", 1001 + 3 * i, t, t, t, i, i
			printf "usdt ts=%d cpu=0 task=%d/%d start=%d probe=30002 nargs=1 args=%d\n", 1002 + 3 * i, t, t, t, i
		}
		print "!seal final"
	}' >"$T/adapter.events" && "$BUILD/tests/fixturec" "$T/adapter.events" "$1"
}

gen_critical() { # out.cwt
	awk -v k="${NC:-100000}" -v m=400 'BEGIN {
		print "kv ts=0 key=offcpu value=1"
		print "usdt_probe ts=1 id=1 nargs=2 str_arg=1 provider=causeway name=request_begin path=/app"
		print "usdt_probe ts=1 id=2 nargs=2 str_arg=255 provider=causeway name=request_end path=/app"
		print "!seal meta"
		for (i = 0; i < m; i++) {
			r = 2000 + i
			printf "usdt_str ts=%d cpu=1 task=%d/100 probe=1 nargs=2 args=%d,0 str=r%d\n", 1000 + 2 * i, r, i, i
			printf "switch ts=%d cpu=1 prev=%d/100 next=0/0 prev_state=1 wait=1 keep=0x100000000\n", 1001 + 2 * i, r
		}
		t = 10000
		for (j = 0; j < k; j++) {
			me = j % 2 ? 101 : 100; other = j % 2 ? 100 : 101
			printf "switch ts=%d cpu=0 prev=%d/100 next=0/0 prev_state=1 wait=1 keep=0x100000000\n", t, me
			printf "waking ts=%d cpu=1 ctx=task waker=%d/100 wakee=%d/100 target_cpu=0 prio=120\n", t + 50, other, me
			printf "switch ts=%d cpu=0 prev=0/0 next=%d/100 prev_state=0\n", t + 60, me
			t += 100
		}
		for (i = 0; i < m; i++) {
			r = 2000 + i
			printf "waking ts=%d cpu=0 ctx=task waker=%d/100 wakee=%d/100 target_cpu=1 prio=120\n", t, me, r
			printf "switch ts=%d cpu=1 prev=0/0 next=%d/100 prev_state=0\n", t + 1, r
			printf "usdt ts=%d cpu=1 task=%d/100 probe=2 nargs=2 args=%d,0\n", t + 2, r, i
			t += 3
		}
		print "!seal final"
	}' >"$T/critical.events" && "$BUILD/tests/fixturec" "$T/critical.events" "$1"
}

run new_tids --new-tids \
	"select (select value from meta where key = 'evicted_total') >= $N - 1000"
run lossy --lossy \
	"select (select value from meta where key = 'events_lost') > $N"
run gaps --gaps \
	"select (select count(*) from coverage_breaks where stream = 'edge') > 0
	    and (select value from meta where key = 'events_lost') > 0"
run samples --samples \
	"select (select value from meta where key = 'offcpu_pushed_out') >= ${NS:-30000} - 1000
	    and (select value from meta where key = 'frame_table_resets') > 0
	    and (select count(*) from samples) = ${NS:-30000}"
run adapter --adapter \
	"select (select value from meta where key = 'usdt_probes_dropped') = 20002 - 16384
	    and (select value from meta where key = 'usdt_hits_unknown_probe') = 0
	    and (select value from meta where key = 'adapter_state_dropped') >= ${NA:-300000} - 1000
	    and (select count(*) from resource_waits) <= 1000"
run critical --critical \
	"select (select value from meta where key = 'critical_requests') = 400
	    and (select value from meta where key = 'critical_bounded') > 0
	    and (select value from meta where key = 'critical_budget_spent') > 0
	    and (select value from meta where key = 'critical_rows_read') <=
	        16 * ((select count(*) from nodes) + (select count(*) from edges)
	              + (select count(*) from samples)) + 1048576 + 8 * 400
	    and not exists (select 1 from nodes r where r.type = 'request'
	        and r.end_ns - r.start_ns != (select sum(end_ns - start_ns) from critical_path c
	                                       where c.request = r.id))"
exit $failed
