#!/bin/bash
# live/classes: -e and the class table.
#  - -e naming only classes the kernel lacks: exit 2 naming them and why,
#    also under -q, and no trace left;
#  - -e sched,usdt records sched and usdt (one name, in -e and in the
#    metadata); with uprobes hidden, sched only, and the metadata keys
#    classes and classes_missing say so;
#  - -e sched,io_uring,futex records all three where the kernel has them;
#  - a class whose tracepoint the kernel lacks is left out with a notice,
#    or, when nothing else is left, refused (CAUSEWAY_HIDE_TRACEPOINTS
#    stands in for such a kernel); an optional tracepoint or function only
#    drops its records, and the metadata key records_missing names them;
#  - --version names the trace format; --help says sampling is not
#    implemented yet.

. "$(dirname "$0")/../lib/live.bash" "$@"

# Does the kernel's BTF describe tracepoint $1?
kernel_has() { grep -qa "btf_trace_$1" /sys/kernel/btf/vmlinux; }
# Does tracefs list event $1 (syscalls/sys_enter_futex)?
tracefs_has() {
	[ -e "/sys/kernel/tracing/events/$1/id" ] || [ -e "/sys/kernel/debug/tracing/events/$1/id" ]
}

# CAUSEWAY_HIDE_TRACEPOINTS=uprobe stands in for a kernel without uprobe
# perf events, which the adapter class (usdt) needs.
expect_rc 2 "none of the requested classes can be recorded \(usdt: the kernel has no uprobe" \
	"-e usdt, uprobes hidden" -- \
	env CAUSEWAY_HIDE_TRACEPOINTS=uprobe "$CAP" -F 0 --no-offcpu -e usdt -d 1 -o "$T/a.cwt"
expect_rc 2 "io_uring: the kernel's BTF has no tracepoint io_uring_submit_req; usdt: the kernel has no uprobe" \
	"-q -e io_uring,usdt, io_uring_submit_req and uprobes hidden" -- \
	env CAUSEWAY_HIDE_TRACEPOINTS=io_uring_submit_req,uprobe \
	"$CAP" -q -F 0 --no-offcpu -e io_uring,usdt -d 1 -o "$T/a.cwt"
[ -e "$T/a.cwt" ] && fail "a refused start left a trace"

expect_rc 0 "usdt at start" "-e sched,usdt (one name, in -e and the metadata)" -- \
	"$CAP" -v -F 0 --no-offcpu -e sched,usdt -d 0.5 -o "$T/u.cwt"
[ "$(kv classes "$T/u.cwt")" = sched,usdt ] || fail "classes: $(kv classes "$T/u.cwt")"
[ -z "$(kv classes_missing "$T/u.cwt")" ] || fail "-e usdt: classes_missing $(kv classes_missing "$T/u.cwt")"
expect_rc 0 "not recording usdt: the kernel has no uprobe" "-e sched,usdt, uprobes hidden" -- \
	env CAUSEWAY_HIDE_TRACEPOINTS=uprobe "$CAP" -F 0 --no-offcpu -e sched,usdt -d 0.5 -o "$T/u2.cwt"
[ "$(kv classes "$T/u2.cwt")" = sched ] || fail "classes: $(kv classes "$T/u2.cwt")"
[ "$(kv classes_missing "$T/u2.cwt")" = usdt:kernel ] || fail "uprobes hidden: classes_missing $(kv classes_missing "$T/u2.cwt")"

# io_uring and futex, where the kernel has them; their trampolines
# (fentry/fexit) are optional, and a kernel may refuse them.
if kernel_has io_uring_submit_req && tracefs_has syscalls/sys_enter_futex; then
	expect_rc 0 "" "-e sched,io_uring,futex" -- \
		"$CAP" -v -F 0 --no-offcpu -e sched,io_uring,futex -d 0.5 -o "$T/e.cwt"
	[ "$(kv classes "$T/e.cwt")" = sched,io_uring,futex ] || fail "classes: $(kv classes "$T/e.cwt")"
	[ -z "$(kv classes_missing "$T/e.cwt")" ] || fail "classes_missing: $(kv classes_missing "$T/e.cwt")"
	rm=$(kv records_missing "$T/e.cwt")
	echo ",$rm," | grep -qE '^,((uring_(free|work):(kernel|denied))(,|$))*,?$' ||
		fail "records_missing: '$rm'"
	# Said once, in one line, and only under -v: nothing used io_uring,
	# so nothing was lost by it.
	for r in ${rm//,/ }; do
		grep -qE "not recording \(.*\): .*io_uring [a-z_, ]*${r%%:*}" "$T/err" ||
			fail "no notice for records_missing $r"
	done
	[ "$(grep -c 'not recording' "$T/err")" -le 1 ] || fail "more than one line for what is not recorded: $(cat "$T/err")"
	if [ -n "$rm" ]; then
		"$CAP" -F 0 --no-offcpu -e sched,io_uring -d 0.5 -o "$T/e2.cwt" 2>"$T/err2" ||
			fail "capture without -v failed"
		! grep -q "io_uring" "$T/err2" || fail "without -v, and no io_uring used, still: $(grep io_uring "$T/err2")"
		"$CAP" -F 0 --no-offcpu -e sched,io_uring -o "$T/e3.cwt" -- "$WL/uring" "$T/ut" 2 2>"$T/err3" ||
			fail "capture of the uring workload failed"
		grep -qE "^causeway-capture: io_uring: [0-9]+ records written without " "$T/err3" ||
			fail "records written without ${rm}, and the close does not say so: $(cat "$T/err3")"
	fi
	# Both functions absent: the class is recorded without their records.
	expect_rc 0 "not recording \(the kernel's BTF has no function io_ring_exit_work\): io_uring uring_free, uring_work" \
		"io_wq_submit_work, io_ring_exit_work hidden" -- \
		env CAUSEWAY_HIDE_TRACEPOINTS=io_wq_submit_work,io_ring_exit_work \
		"$CAP" -v -F 0 --no-offcpu -e io_uring -d 0.5 -o "$T/o.cwt"
	[ "$(kv records_missing "$T/o.cwt")" = uring_free:kernel,uring_work:kernel ] ||
		fail "records_missing with the trampolines hidden: $(kv records_missing "$T/o.cwt")"
	# The kernel lacks futex(2)'s syscall events: futex is left out with
	# a notice.
	expect_rc 0 "not recording futex: tracefs has no tracepoint syscalls/sys_exit_futex" \
		"no sys_exit_futex" -- env CAUSEWAY_HIDE_TRACEPOINTS=sys_exit_futex \
		"$CAP" -F 0 --no-offcpu -e sched,futex -d 0.5 -o "$T/f.cwt"
	[ "$(kv classes_missing "$T/f.cwt")" = futex:kernel ] || fail "classes_missing: $(kv classes_missing "$T/f.cwt")"
	# A kernel before 6.7 lacks futex_wait, futex_wake and futex_requeue:
	# futex is recorded all the same, and no record is missing (nobody
	# can make those calls). Without the exit of futex_waitv, its enter
	# is not loaded either (nothing would clear what it leaves).
	hide=sys_exit_futex_wait,sys_exit_futex_wake,sys_exit_futex_requeue,sys_exit_futex_waitv
	expect_rc 0 "not recording \(tracefs has no tracepoint .*\): .*futex [a-z_, ]*handle_futex_waitv_exit" \
		"no futex2 exits" -- env CAUSEWAY_HIDE_TRACEPOINTS=$hide \
		"$CAP" -v -F 0 --no-offcpu -e sched,futex -d 0.5 -o "$T/f2.cwt"
	v=$(kv classes "$T/f2.cwt")
	[ "$v" = sched,futex ] || fail "futex2 hidden: classes $v"
	v=$(kv records_missing "$T/f2.cwt")
	[ -z "$v" ] || fail "futex2 hidden: records_missing $v"
	grep -q "handle_futex_waitv_enter" "$T/err" &&
		fail "a notice for the enter whose exit is missing"
fi

# The kernel lacks sched_switch: sched cannot be recorded, and nothing
# else was asked for.
expect_rc 2 "recorded \(.*sched: the kernel's BTF has no tracepoint sched_switch\)" "no sched_switch" -- \
	env CAUSEWAY_HIDE_TRACEPOINTS=sched_switch "$CAP" -q -F 0 --no-offcpu -e sched -d 1 -o "$T/h.cwt"
[ -e "$T/h.cwt" ] && fail "a refused start left a trace"

# task_rename is optional: the capture goes on without rename records.
CAUSEWAY_HIDE_TRACEPOINTS=task_rename capture -q -F 0 --no-offcpu -o "$T/r.cwt" -- sh -c 'exec true'
capture -q -F 0 --no-offcpu -o "$T/r2.cwt" -- sh -c 'exec true'
"$AN" --dump "$T/r.cwt" 2>/dev/null | grep -q '^rename ' && fail "rename records with task_rename hidden"
"$AN" --dump "$T/r2.cwt" 2>/dev/null | grep -q '^rename ' || fail "no rename record of the exec"

expect_rc 0 "" "--version" -- "$CAP" --version
grep -qE '^causeway-capture [0-9.]+ \(writes trace format [0-9]+\.[0-9]+\)$' "$T/out" ||
	fail "--version printed '$(cat "$T/out")'"
expect_rc 0 "" "--help" -- "$CAP" --help
grep -qE -- '-F, --freq HZ +CPU stack samples' "$T/out" || fail "--help does not describe -F"
echo "live/$NAME: missing classes named or refused, optional tracepoints dropped, --version and --help say what they must"
