#!/bin/bash
# live/signals: the capture's lifetime.
#  - SIGHUP (a dropped SSH session) stops it like SIGTERM: exit 0, final
#    segment, stop_reason signal;
#  - started with SIGHUP ignored (nohup), it keeps ignoring it
#    (capture/signals.c) and still stops on SIGTERM;
#  - a SIGTERM that arrives before the capture has started (here: sent
#    while the signal was blocked, so it is pending from the first
#    instruction) still ends in a clean trace, promptly;
#  - a closed stderr or stdout does not change the exit code.

. "$(dirname "$0")/../lib/live.bash" "$@"

clean_stop() { # trace what
	rm -f "$T/c.db"
	analyze "$1" "$T/c.db"
	[ "$(meta clean_close "$T/c.db")" = 1 ] || fail "$2: no final segment"
	[ "$(meta capture.stop_reason "$T/c.db")" = signal ] ||
		fail "$2: stop_reason $(meta capture.stop_reason "$T/c.db")"
}

# The capture is given SIGHUP's disposition by env, not by whoever ran
# this test: run under nohup, it would inherit the hangup ignored, keep
# it so, and the wait below would last for ever.
CAP_LAUNCH="env --default-signal=HUP" start_capture "$T/h.cwt"
stop_capture HUP SIGHUP
clean_stop "$T/h.cwt" SIGHUP

# nohup: the hangup is ignored, SIGTERM still stops it.
CAP_LAUNCH="env --ignore-signal=HUP" start_capture "$T/n.cwt"
kill -HUP "$CP"
sleep 1
kill -0 "$CP" 2>/dev/null || fail "SIGHUP ignored at start (nohup): the capture stopped on it"
stop_capture TERM "nohup, then SIGTERM"
clean_stop "$T/n.cwt" "nohup, then SIGTERM"

# Pending before main(): blocked, sent, then exec'd.
command -v perl >/dev/null || fail "perl not installed"
begin=$(date +%s)
perl -e 'use POSIX; sigprocmask(SIG_BLOCK, POSIX::SigSet->new(SIGTERM)) or die; kill "TERM", $$; exec @ARGV or die' \
	"$CAP" -q -F 0 --no-offcpu -d 30 -o "$T/early.cwt" 2>"$T/early.err"
rc=$?
[ "$rc" = 0 ] || { cat "$T/early.err" >&2; fail "early SIGTERM: exit $rc"; }
[ $(($(date +%s) - begin)) -lt 15 ] || fail "early SIGTERM: the capture ran on"
clean_stop "$T/early.cwt" "early SIGTERM"

# A reader that is gone: the notices and the summary meet EPIPE.
{
	sleep 0.3
	"$CAP" -F 0 --no-offcpu -d 0.5 -o "$T/p.cwt"
	echo $? >"$T/p.rc"
} 2>&1 | true
[ "$(cat "$T/p.rc")" = 0 ] || fail "closed stderr: exit $(cat "$T/p.rc")"
{
	sleep 0.3
	"$CAP" --help
	echo $? >"$T/help.rc"
} | true
[ "$(cat "$T/help.rc")" = 0 ] || fail "--help into a closed pipe: exit $(cat "$T/help.rc")"
echo "live/$NAME: SIGHUP, SIGTERM under nohup (the hangup ignored), an early SIGTERM and closed pipes end cleanly"
