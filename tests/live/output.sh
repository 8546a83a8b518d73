#!/bin/bash
# live/output: the trace file.
#  - --force is atomic: a capture that fails to start (here, COMMAND does
#    not exist) leaves the old trace as it was, and no temporary file;
#  - anything but a regular file is refused, even with --force;
#  - under sudo (SUDO_UID/SUDO_GID set) the trace belongs to the user who
#    ran sudo, so the unprivileged analyzer can read it; invalid values
#    leave it to root, with a word; mode 0600 either way.

. "$(dirname "$0")/../lib/live.bash" "$@"

only_files() { # expected names...: nothing else in $T/o
	local got want
	got=$(ls -A "$T/o" | sort | tr '\n' ' ')
	want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
	[ "$got" = "$want" ] || fail "$T/o holds '$got', expected '$want'"
}

mkdir "$T/o"
capture -q -F 0 --no-offcpu -d 0.3 -o "$T/o/old.cwt"
cp "$T/o/old.cwt" "$T/old.copy"
expect_rc 2 "cannot run /nonexistent/cmd" "--force, COMMAND missing" -- \
	"$CAP" -q -F 0 --no-offcpu --force -o "$T/o/old.cwt" -- /nonexistent/cmd
cmp -s "$T/o/old.cwt" "$T/old.copy" || fail "a failed --force start changed the old trace"
only_files old.cwt

mkfifo "$T/o/fifo"
expect_rc 2 "not a regular file" "a FIFO with --force" -- "$CAP" -q -F 0 --no-offcpu --force -o "$T/o/fifo" -d 1
mkdir "$T/o/dir"
expect_rc 2 "not a regular file" "a directory with --force" -- "$CAP" -q -F 0 --no-offcpu --force -o "$T/o/dir" -d 1
only_files old.cwt fifo dir

SUDO_UID=65534 SUDO_GID=65534 capture -q -F 0 --no-offcpu -d 0.3 -o "$T/o/sudo.cwt"
[ "$(stat -c %u:%g:%a "$T/o/sudo.cwt")" = 65534:65534:600 ] ||
	fail "under sudo: $(stat -c %u:%g:%a "$T/o/sudo.cwt"), expected 65534:65534:600"
expect_rc 0 "stays owned by root" "invalid SUDO_UID" -- \
	env SUDO_UID=nobody SUDO_GID=65534 "$CAP" -F 0 --no-offcpu -d 0.3 -o "$T/o/bad.cwt"
[ "$(stat -c %u:%a "$T/o/bad.cwt")" = 0:600 ] || fail "invalid SUDO_UID: $(stat -c %u:%a "$T/o/bad.cwt")"
echo "live/$NAME: --force atomic, non-regular files refused, sudo user owns the trace"
