#!/bin/bash
# live/usdt: the adapter class (-e usdt) records every hit of the probes
# of include/causeway.h with its exact arguments and strings.
# tests/workloads/usdt_basic.c fires each of the 11 probes ROUNDS times
# in its own executable (attached before COMMAND runs), then in a library
# it dlopen()s midway (attached from the mapping report while capturing;
# the workload waits for the library's semaphores, so no hit of it comes
# before the attach). Checked from the dump of the trace, against the
# workload's ground truth:
#  - the set of hits (thread, probe, non-string arguments, string) is
#    exactly the truth's, and nothing was lost;
#  - every hit comes after the record of its probe (hdr.ts: when the
#    attach completed), the library's included;
#  - with -p, the probes of a program already running and of one a
#    traced shell execs are attached, as are its library's;
#  - system-wide, --usdt FILE attaches FILE's probes, and the library the
#    program opens later is attached too;
#  - by default usdt_probes_off names PostgreSQL's buffer probes (and
#    nothing here is left out); --usdt-probes -causeway:task_* attaches
#    the program's six other probes, names the five task probes in
#    usdt_probes_off and counts them in usdt_probes_deselected (the
#    program is ended waiting for all eleven semaphores);
#  - --usdt that can do nothing exits 2: with -p, with COMMAND, without
#    the usdt class, on a file that is no ELF object; so does
#    --usdt-probes naming no mapped probe, leaving none, or without the
#    usdt class.

. "$(dirname "$0")/../lib/live.bash" "$@"

ROUNDS=50
LIB=$WL/libusdt_dl.so
[ -r "$LIB" ] || fail "$LIB is not built"

# The hits of trace $1 as truth lines, "hit TID PROBE ARG0 ARG1 STR" of
# the process $2, with the probe records' ids resolved; and a line
# "early ID" for any hit before its probe's record.
hits() { # trace pid
	"$AN" --dump "$1" | awk -v pid="$2" '
	function val(k,    i, v) {
		for (i = 2; i <= NF; i++)
			if (index($i, k "=") == 1) {
				v = substr($i, length(k) + 2)
				gsub(/^"|"$/, "", v)
				return v
			}
		return ""
	}
	$1 == "usdt_probe" {
		id = val("id"); name[id] = val("name"); str[id] = val("str_arg")
		nargs[id] = val("nargs"); ts[id] = val("ts")
	}
	($1 == "usdt" || $1 == "usdt_str") {
		split(val("task"), t, "/")
		if (t[2] != pid)
			next
		id = val("probe")
		if (!(id in name) || val("ts") + 0 < ts[id] + 0)
			print "early " id
		n = split(val("args"), a, ",")
		for (i = n + 1; i <= 2; i++)
			a[i] = 0
		if (str[id] != 255)
			a[str[id] + 1] = "-"
		s = $1 == "usdt_str" ? val("str") : "-"
		if (val("str_err") != "")
			s = "ERR" val("str_err")
		print "hit " t[1] " " name[id] " " a[1] " " a[2] " " s
	}'
}

check_hits() { # trace truth what
	local pid
	pid=$(awk '$1 == "pid" { print $2 }' "$2")
	grep -q '^main_attached 1' "$2" || fail "$3: the program's probes were not attached within 10 s"
	grep -q '^dl_attached 1' "$2" || fail "$3: the library's probes were not attached within 10 s"
	hits "$1" "$pid" | sort >"$T/got"
	grep '^hit ' "$2" | sort >"$T/want"
	! grep -q '^early' "$T/got" || fail "$3: hits before their probe's record: $(grep -c early "$T/got")"
	diff "$T/want" "$T/got" >"$T/diff" ||
		fail "$3: hits differ from the ground truth ($(grep -c '^<' "$T/diff") missing," \
			"$(grep -c '^>' "$T/diff") extra), e.g. $(head -3 "$T/diff" | tr '\n' ';')"
	wc -l <"$T/want"
}

# -- COMMAND
capture -q -F 0 --no-offcpu -e sched,usdt -o "$T/c.cwt" -- "$WL/usdt_basic" "$T/truth" "$LIB" $ROUNDS
need_class usdt "$T/c.cwt"
n=$(check_hits "$T/c.cwt" "$T/truth" COMMAND) || exit 1
[ "$n" = $((2 * 11 * ROUNDS)) ] || fail "ground truth has $n hits, expected $((2 * 11 * ROUNDS))"
lost=$(kv events_lost "$T/c.cwt")
[ "$lost" = 0 ] || fail "$lost events lost"
att=$(kv usdt_probes_attached "$T/c.cwt")
[ "$att" = 22 ] || fail "usdt_probes_attached $att, expected 22 (11 in the program, 11 in the library)"
[ "$(kv usdt_attach_failed "$T/c.cwt")" = 0 ] || fail "usdt_attach_failed $(kv usdt_attach_failed "$T/c.cwt")"
dlp=$("$AN" --dump "$T/c.cwt" | grep -c "^usdt_probe .*path=$LIB")
[ "$dlp" = 11 ] || fail "$dlp probe records of the library, expected 11"
echo "live/$NAME: COMMAND: $n/$n probe hits with their exact arguments and strings" \
	"(half in a library attached mid-run), 0 lost, $att probes attached"

# -p: a program already running (its objects from /proc/PID/maps), and a
# shell that execs it once traced (from the exec's mapping report).
"$WL/usdt_basic" "$T/truth3" "$LIB" 5 &
pids+=($!)
capture -q -F 0 --no-offcpu -e usdt -o "$T/p.cwt" -p $!
n=$(check_hits "$T/p.cwt" "$T/truth3" "-p, running") || exit 1
sh -c 'sleep 0.5; exec "$0" "$@"' "$WL/usdt_basic" "$T/truth4" "$LIB" 5 &
pids+=($!)
capture -q -F 0 --no-offcpu -e usdt -o "$T/e.cwt" -p $!
m=$(check_hits "$T/e.cwt" "$T/truth4" "-p, exec") || exit 1
echo "live/$NAME: -p: $n/$n probe hits of a running program, $m/$m of one exec'd under -p"

# -d stops the recording: a busy program's probes keep firing while they
# are detached (about 0.1 s each), and none of that is kept. The trace
# ends within the poll period of -d, and nothing in it is later than its
# end.
"$WL/usdt_basic" "$T/truth5" "$LIB" 100000000 &
pids+=($!)
capture -F 0 --no-offcpu -e usdt -o "$T/d.cwt" -d 1 -p $!
kill "${pids[-1]}" 2>/dev/null
analyze "$T/d.cwt" "$T/d.db"
span=$(meta capture_end_ns "$T/d.db")
span=$((span - $(meta capture_start_ns "$T/d.db")))
[ "$span" -ge 1000000000 ] && [ "$span" -lt 1150000000 ] ||
	fail "-d 1: the trace spans $span ns"
late=$(DB=$T/d.db q "select (select count(*) from edges where ts > $(meta capture_end_ns "$T/d.db"))")
[ "$late" = 0 ] || fail "-d 1: $late edges after the capture's end"
grep -qE "^causeway-capture: d.cwt: 1\.[01]s," "$T/capture.err" || grep -qE "d.cwt: 1\.[01]s," "$T/capture.err" ||
	fail "-d 1: the summary's duration: $(grep 'd.cwt:' "$T/capture.err")"
echo "live/$NAME: -d 1 on a busy program: the trace spans $span ns, $(grep -o 'detaching and draining took [0-9.]*s' "$T/capture.err" || echo 'a short detach')"

# System-wide with --usdt: the program's probes from the option, the
# library's from its mapping report.
start_capture "$T/s.cwt" -e usdt --usdt "$WL/usdt_basic"
"$WL/usdt_basic" "$T/truth2" "$LIB" 5 || fail "usdt_basic failed"
kill -INT "$CP"
wait "$CP" || fail "system-wide capture exited $?"
n=$(check_hits "$T/s.cwt" "$T/truth2" system-wide) || exit 1
echo "live/$NAME: system-wide --usdt: $n/$n probe hits"

[ "$(kv usdt_probes_off "$T/c.cwt")" = postgresql:buffer__read__start,postgresql:buffer__read__done ] ||
	fail "default usdt_probes_off '$(kv usdt_probes_off "$T/c.cwt")'"
[ "$(kv usdt_probes_deselected "$T/c.cwt")" = 0 ] || fail "default usdt_probes_deselected $(kv usdt_probes_deselected "$T/c.cwt")"
# COMMAND, whose probes are attached before it runs, not system-wide: a
# system-wide capture raises the semaphores of every program on the
# machine, other tests' included. The program waits for all eleven
# semaphores and is ended by -d (143), or exits at once (0) when another
# capture on the machine has raised them.
"$CAP" -q -F 0 --no-offcpu -e usdt --usdt-probes '-causeway:task_*' -o "$T/n.cwt" -d 0.5 -- \
	"$WL/usdt_basic" "$T/truth6" "$LIB" 1 2>"$T/capture.err"
rc=$?
[ $rc = 143 ] || check_capture_rc $rc "$T/capture.err"
off=causeway:task_spawn,causeway:task_wake,causeway:task_poll_begin,causeway:task_poll_end,causeway:task_exit
[ "$(kv usdt_probes_off "$T/n.cwt")" = "$off,postgresql:buffer__read__start,postgresql:buffer__read__done" ] ||
	fail "--usdt-probes -causeway:task_*: usdt_probes_off '$(kv usdt_probes_off "$T/n.cwt")'"
n=$("$AN" --dump "$T/n.cwt" | grep "^usdt_probe .*path=$WL/usdt_basic" | grep -c .)
[ "$n" = 6 ] || fail "--usdt-probes -causeway:task_*: $n probe records of the program, expected 6"
! "$AN" --dump "$T/n.cwt" | grep "^usdt_probe .*path=$WL/usdt_basic" | grep -q ' name=task_' ||
	fail "--usdt-probes -causeway:task_*: a task probe was attached"
# At least: another test's system-wide capture can raise them all, and
# the library is then opened and attached too.
[ "$(kv usdt_probes_deselected "$T/n.cwt")" -ge 5 ] ||
	fail "--usdt-probes -causeway:task_*: usdt_probes_deselected $(kv usdt_probes_deselected "$T/n.cwt"), expected at least the program's 5"
echo "live/$NAME: --usdt-probes -causeway:task_*: 6 of the program's 11 probes attached, the 5 task probes named and counted"

expect_rc 2 "--usdt does nothing with -p" "--usdt with -p" -- \
	"$CAP" -o "$T/x.cwt" -e usdt --usdt "$WL/usdt_basic" -p $$
expect_rc 2 "--usdt does nothing with COMMAND" "--usdt with COMMAND" -- \
	"$CAP" -o "$T/x.cwt" -e usdt --usdt "$WL/usdt_basic" -- true
expect_rc 2 "--usdt does nothing without the usdt class" "--usdt without -e usdt" -- \
	"$CAP" -o "$T/x.cwt" -e sched --usdt "$WL/usdt_basic"
expect_rc 2 "--usdt .*not an ELF object" "--usdt on a text file" -- \
	"$CAP" -o "$T/x.cwt" -e usdt --usdt "$T/truth"
expect_rc 2 "'causeway:task-spawned' names none of the probes" "--usdt-probes, a typo" -- \
	"$CAP" -o "$T/x.cwt" -e usdt --usdt-probes default,causeway:task-spawned -- true
expect_rc 2 "leaves no probe attached" "--usdt-probes leaving none" -- \
	"$CAP" -o "$T/x.cwt" -e usdt --usdt-probes all,-causeway:*,-postgresql:* -- true
expect_rc 2 "--usdt-probes does nothing without the usdt class" "--usdt-probes without -e usdt" -- \
	"$CAP" -o "$T/x.cwt" -e sched --usdt-probes all -- true
[ ! -e "$T/x.cwt" ] || fail "a refused --usdt capture left $T/x.cwt"
echo "live/$NAME: --usdt with -p, with COMMAND, without -e usdt, on a non-ELF file, and --usdt-probes" \
	"naming nothing, leaving nothing, without -e usdt: exit 2"
