#!/bin/bash
# causeway-export perfetto (docs/model.md §8.3) against the databases of
# fixtures: each fixture is compiled and analyzed as tests/fixture.sh does,
# exported, read back by `protoc --decode_raw` (protobuf wire format, every
# packet there), decoded with perfetto's field numbers
# (tests/export/perfetto_trace.proto) and checked against its database by
# tests/export/perfetto.py: a track per thread, process, request and task,
# a blocked slice per off-CPU sample named by what ended it (in a wait on
# a resource: the resource and what let it go, with the wait's
# arguments), a flow per edge, an instant per unknown cause; whole, in
# windows (--since,
# --until) and for one request (--request, by id and by name).
# Skipped (77), loudly, where protoc (protobuf-compiler) or python3 is
# missing. trace_processor itself is not packaged for Debian: it is not
# run here (docs/model.md §8.3 says how to open a file with it).
set -u
BUILD=${1:?usage: tests/export/perfetto.sh BUILD}
BUILD=$(cd "$BUILD" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
for tool in protoc python3 sqlite3; do
	if ! command -v "$tool" >/dev/null; then
		echo "*** export/perfetto: $tool is missing (tests/deps.sh installs it): SKIPPED ***" >&2
		exit 77
	fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

fail() {
	echo "export/perfetto: $*" >&2
	failed=$((failed + 1))
}

# db NAME: fixture NAME's database, made as tests/fixture.sh makes it.
db() {
	local args=()

	[ -f "$tmp/$1.db" ] && return 0
	[ -f "$top/fixtures/$1.args" ] && read -r -a args <"$top/fixtures/$1.args"
	"$BUILD/tests/fixturec" "$top/fixtures/$1.events" "$tmp/$1.cwt" &&
		(cd "$tmp" && "$BUILD/causeway-analyze" -q "${args[@]}" "$1.cwt" 2>/dev/null)
	[ -f "$tmp/$1.db" ] || fail "$1: no database"
}

# check NAME [OPTION...]: export NAME's database with the options and
# check the file against it; --request NAME is given to the checker as ids.
check() {
	local name=$1 out=$tmp/out.perfetto-trace ids=() a
	shift
	db "$name" || return
	local want=("$@")
	for ((a = 0; a < ${#want[@]}; a++)); do
		if [ "${want[a]}" = --request ] && ! [[ ${want[a + 1]} =~ ^[0-9]+$ ]]; then
			ids=$(sqlite3 "$tmp/$name.db" "SELECT group_concat(id, ' ') FROM nodes
				WHERE type = 'request' AND name = '${want[a + 1]}'")
			[ -n "$ids" ] || { fail "$name: no request named ${want[a + 1]}"; return; }
			want=("${want[@]:0:a}" $(printf -- '--request %s ' $ids) "${want[@]:a+2}")
		fi
	done
	rm -f "$out"
	if ! "$BUILD/causeway-export" perfetto "$tmp/$name.db" -q -o "$out" "$@"; then
		fail "$name $*: causeway-export failed"
		return
	fi
	if ! protoc --decode_raw <"$out" >"$tmp/raw.txt"; then
		fail "$name $*: protoc --decode_raw cannot read it"
		return
	fi
	if ! protoc --decode=perfetto.protos.Trace -I "$top/tests/export" "$top/tests/export/perfetto_trace.proto" \
		<"$out" >"$tmp/dec.txt"; then
		fail "$name $*: protoc cannot decode it as a perfetto Trace"
		return
	fi
	# the raw and the typed reading see the same packets
	if [ "$(grep -c '^1 {' "$tmp/raw.txt")" != "$(grep -c '^packet {' "$tmp/dec.txt")" ]; then
		fail "$name $*: protoc --decode_raw and --decode count different packets"
	fi
	python3 "$top/tests/export/perfetto.py" "$tmp/$name.db" "$tmp/dec.txt" "${want[@]}" >/dev/null ||
		fail "$name $*: see above"
}

# Whole databases: threads, waits and their wakes (sample_*), requests and
# tasks (adapter_*, attribution_chain), and objects of every class on
# lanes: io_uring, block, workqueue, timers (a reused tid in timer_fire),
# packets; interrupt wakes with no cause (irq_wakeups), one of them the
# wake that ended a wait (sample_irq_wake); waits on resources, named by
# the resource and what let it go, with the wait's arguments
# (critical_lock; critical_lock_nested, lock waits with LWLock waits
# begun in them; request_summary).
for f in attribution_chain adapter_requests adapter_tasks uring_punt uring_wake_cause \
	block_requests sample_wake sample_wait wq_wake timer_fire net_loopback irq_wakeups \
	sample_irq_wake critical_lock critical_lock_nested request_summary; do
	check "$f"
done
# names NAME SLICE...: the blocked slices of fixture NAME's whole export
# have the names SLICE... (perfetto.py held every slice to the database
# above); its summary line is left in $tmp/NAME.out.
names() {
	local name=$1
	shift
	"$BUILD/causeway-export" perfetto "$tmp/$name.db" -q --force -o "$tmp/n.perfetto-trace" &&
		protoc --decode=perfetto.protos.Trace -I "$top/tests/export" "$top/tests/export/perfetto_trace.proto" \
			<"$tmp/n.perfetto-trace" >"$tmp/n.txt" &&
		python3 "$top/tests/export/perfetto.py" "$tmp/$name.db" "$tmp/n.txt" >"$tmp/$name.out" ||
		{ fail "$name: the export or its check failed"; return; }
	printf '%s\n' "$@" | sort >"$tmp/want.txt"
	awk -F'\t' '$1 == "blocked" { print $3 }' "$tmp/$name.out" | sort >"$tmp/got.txt"
	cmp -s "$tmp/want.txt" "$tmp/got.txt" ||
		fail "$name: blocked slices $(tr '\n' '|' <"$tmp/got.txt"), want $(tr '\n' '|' <"$tmp/want.txt")"
}
# The names fixtures/critical_lock.events says: the release by the query
# that let the lock go, an unknown waker, a timer that ended a wait, and
# a sleep in a wait that the postmaster's wake ended.
names critical_lock 'lock 735/0/0/0/4 released by END;' 'lwlock BufferMapping (waker unknown)' \
	'lock 735/0/0/0/5 ended by timer hrtimer_wakeup' 'wake from postgres, in lock 735/0/0/0/5'
grep -q ', 4 in resource waits$' "$tmp/critical_lock.out" || fail "critical_lock: $(head -1 "$tmp/critical_lock.out")"
# fixtures/critical_lock_nested.events: the sleep the grant ended is the
# lock's own ("released by END;", not "wake from postgres, in lock ..."),
# the sleeps in the LWLock waits begun in the lock waits the LWLock's.
names critical_lock_nested 'lock 735/0/0/0/4 released by END;' 'lwlock LockManager released by END;'
# Windows: a wait, an object or a task cut by an end of the window.
check attribution_chain --since 1200 --until 2100
check attribution_chain --since 1500
check sample_wake --since 1500
check timer_fire --until 3000
check attribution_chain --until 1250
check sample_wait --since 1000000000
# One request: its contexts, what they handed work to, in its span.
check attribution_chain --request 3
check attribution_chain --request 9
check adapter_requests --request 'GET /a'
check adapter_requests --request 3 --request 12
check critical_lock --request 'UPDATE t SET v = 3 WHERE id = 2'

# A database made by hand, with what no analyzer writes: a negative weight,
# a wait inside another, a weight that overflows ts, a wake and a thread
# that are not there, edges to and from nodes that are not there, a
# negative timestamp, node ids 0 and negative, a node type with no name,
# a thread with no pid. The export writes a trace protoc reads, leaves the
# two impossible waits out and says so.
db attribution_chain
cp "$tmp/attribution_chain.db" "$tmp/hand.db"
sqlite3 "$tmp/hand.db" "
UPDATE sample_rows SET weight = -5 WHERE id = 5;
INSERT INTO samples(id, thread, ts, kind, weight, weight_exact, inclusion_probability, wake)
  VALUES (100, 5, 1250, 'offcpu', 30, 1, 1.0, 6),
         (101, 5, 1700, 'offcpu', 9223372036854775000, 0, 1.0, 77777),
         (102, 4242, 1700, 'offcpu', 10, 1, 1.0, NULL);
INSERT INTO node_rows(id, type, key, scope, generation, start_seen, start_ns, name)
  VALUES (0, 42, 7, 1, 0, 1, -100, NULL), (-7, 1, 55, 1, 0, 0, NULL, NULL);
INSERT INTO edges(id, type, src, dst, ts, source, confidence)
  VALUES (1000, 'wake', 99999, 2, 1500, 'kernel', 'observed'),
         (1001, 'wake', 2, 99999, 1500, 'kernel', 'observed'),
         (1002, 'wake', 2, 5, -40, 'kernel', 'observed'),
         (-3, 'wake', 2, 5, 1600, 'kernel', 'observed'),
         (1003, 'fire', 0, -7, 1800, 'kernel', 'observed'),
         (1004, 'wake', -7, 0, 1900, 'kernel', 'observed');" || fail "hand.db: cannot be made"
if ! "$BUILD/causeway-export" perfetto "$tmp/hand.db" -o "$tmp/hand.perfetto-trace" 2>"$tmp/hand.err"; then
	cat "$tmp/hand.err" >&2
	fail "hand.db: causeway-export failed"
elif ! protoc --decode=perfetto.protos.Trace -I "$top/tests/export" "$top/tests/export/perfetto_trace.proto" \
	<"$tmp/hand.perfetto-trace" >"$tmp/dec.txt"; then
	fail "hand.db: protoc cannot decode the file"
fi
grep -q '^causeway-export: 2 waits overlap' "$tmp/hand.err" || fail "hand.db: the waits left out are not said"

# Waits that nest, made by hand on critical_lock's database: a sample is
# in the latest begun of the waits that hold it, found past a nested wait
# that ended before it (the outer one ended, or its end was not seen),
# with equal starts told by id, and in none between them. export/waits.c
# finds them by seeks, not by reading every earlier wait; perfetto.py
# holds each slice to the plain query's answer, and the names are these.
db critical_lock
cp "$tmp/critical_lock.db" "$tmp/nest.db"
sqlite3 "$tmp/nest.db" "
INSERT INTO resource_waits(id, resource, waiter, start_ns, end_ns, wake_edge, waker, confidence, reason)
  VALUES (101, 14, 6, 10000, 15000, NULL, 4, 'reconstructed',
          'let in by the last release in the wait, no wake from it'),
         (102, 12, 6, 10500, 11000, NULL, NULL, 'unknown', 'waker unknown'),
         (103, 9, 6, 16000, NULL, NULL, NULL, 'unknown', 'wait end not in trace'),
         (104, 12, 6, 16100, 16200, NULL, 4, 'reconstructed', NULL),
         (105, 9, 6, 17000, 17500, NULL, NULL, 'unknown', 'no wake in wait'),
         (106, 14, 6, 17000, 17100, NULL, NULL, 'unknown', 'waker unknown');
INSERT INTO samples(id, thread, ts, kind, weight, weight_exact, inclusion_probability, wake)
  VALUES (201, 6, 10600, 'offcpu', 10, 1, 1.0, NULL), (202, 6, 12000, 'offcpu', 10, 1, 1.0, NULL),
         (203, 6, 15500, 'offcpu', 10, 1, 1.0, NULL), (204, 6, 16150, 'offcpu', 10, 1, 1.0, NULL),
         (205, 6, 16300, 'offcpu', 10, 1, 1.0, NULL), (206, 6, 17050, 'offcpu', 10, 1, 1.0, NULL),
         (207, 6, 17200, 'offcpu', 10, 1, 1.0, NULL), (208, 6, 17600, 'offcpu', 10, 1, 1.0, NULL);" ||
	fail "nest.db: cannot be made"
if "$BUILD/causeway-export" perfetto "$tmp/nest.db" -q -o "$tmp/nest.perfetto-trace" &&
	protoc --decode=perfetto.protos.Trace -I "$top/tests/export" "$top/tests/export/perfetto_trace.proto" \
		<"$tmp/nest.perfetto-trace" >"$tmp/nest.txt" &&
	python3 "$top/tests/export/perfetto.py" "$tmp/nest.db" "$tmp/nest.txt" >"$tmp/nest.out"; then
	printf '%s\n' 'lock 735/0/0/0/4 released by END;' 'lwlock BufferMapping (waker unknown)' \
		'lock 735/0/0/0/5 ended by timer hrtimer_wakeup' 'wake from postgres, in lock 735/0/0/0/5' \
		'lwlock BufferMapping (waker unknown)' 'unknown (the wake was not seen), in lock 735/0/0/0/5' \
		'unknown (the wake was not seen)' 'unknown (the wake was not seen), in lwlock BufferMapping' \
		'lock 735/0/0/0/4 (wait end not in trace)' 'lock 735/0/0/0/5 (waker unknown)' \
		'lock 735/0/0/0/4 (no wake in wait)' 'lock 735/0/0/0/4 (wait end not in trace)' | sort >"$tmp/want.txt"
	awk -F'\t' '$1 == "blocked" { for (i = 0; i < $2; i++) print $3 }' "$tmp/nest.out" | sort >"$tmp/got.txt"
	cmp -s "$tmp/want.txt" "$tmp/got.txt" ||
		fail "nest.db: blocked slices differ from the waits that hold them: $(diff "$tmp/want.txt" "$tmp/got.txt" | tr '\n' '|')"
else
	fail "nest.db: the export or its check failed"
fi

# The default output is the database's name with .perfetto-trace, and an
# existing file is kept without --force.
db sample_wake
(cd "$tmp" && "$BUILD/causeway-export" perfetto -q sample_wake.db) || fail "default output: export failed"
[ -s "$tmp/sample_wake.perfetto-trace" ] || fail "default output: no sample_wake.perfetto-trace"
(cd "$tmp" && "$BUILD/causeway-export" perfetto -q sample_wake.db 2>/dev/null)
[ $? = 2 ] || fail "an existing output was not refused (exit 2)"

if [ $failed != 0 ]; then
	echo "export/perfetto: $failed failed" >&2
	exit 1
fi
echo "export/perfetto: all passed"
