#!/bin/bash
# faults/outputs: no program writes through a symlink, onto one of its own
# inputs, or onto a file another run is writing (docs/model.md §7, lib/outfile.h).
#  - two analyzers racing for one -o, ROUNDS (10) times: exactly one
#    database, one exit 0 and one exit 2, no temporary left;
#  - causeway-eval with each of --json, --csv and --wrong pointed at each
#    input (the truth file, the database, the baseline database, by
#    another name too) and at symbolic links (to an input, to a file
#    outside, dangling): exit 2, and every input and the link's target
#    byte-identical; an existing output without --force: exit 2,
#    untouched; with --force: replaced, 0600; two outputs of one name:
#    exit 2;
#  - modes: the database and every eval output are 0600 under umask 022,
#    and as root with SUDO_UID/SUDO_GID set they belong to that user (the
#    capture's trace: live/output);
#  - a failed run leaves no output and no temporary.
#   tests/faults/outputs.sh BUILD
set -u
BUILD=$(cd "${1:?usage: $0 BUILD}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
AN=$BUILD/causeway-analyze
EV=$BUILD/causeway-eval
ROUNDS=${ROUNDS:-10}
CHECK_NAME=faults/outputs
. "$(dirname "$0")/../lib/check.bash"
cd "$T" || exit 1
umask 022

# --- two analyzers, one -o -------------------------------------------------
"$BUILD/bench/gentrace" t.cwt 300000 >/dev/null || { echo "gentrace failed" >&2; exit 1; }
for ((i = 0; i < ROUNDS; i++)); do
	rm -f r.db
	"$AN" -q -o r.db t.cwt 2>a.err &
	a=$!
	"$AN" -q -o r.db t.cwt 2>b.err &
	b=$!
	wait $a
	ra=$?
	wait $b
	rb=$?
	rcs=$(printf '%s\n' $ra $rb | sort | tr '\n' ' ')
	[ "$rcs" = "0 2 " ] || fail "race $i: exits $ra and $rb, want one 0 and one 2 ($(cat a.err b.err))"
	[ -f r.db ] && [ "$(sqlite3 r.db "select value from meta where key = 'clean_close'")" != "" ] ||
		fail "race $i: no whole database at r.db"
	left=$(ls -A | grep -vxE 't\.cwt|r\.db|[ab]\.err')
	[ -z "$left" ] || fail "race $i: left behind: $left"
done
echo "faults/outputs: $ROUNDS races for one -o: one database, one exit 2 each time"

# --- modes and owner ------------------------------------------------------
mode() { stat -c %a "$1"; }
[ "$(mode r.db)" = 600 ] || fail "the database is $(mode r.db) under umask 022, want 600"
if [ "$(id -u)" = 0 ]; then
	SUDO_UID=65534 SUDO_GID=65534 "$AN" -q -o sudo.db t.cwt || fail "analyze under SUDO_UID"
	[ "$(stat -c %u:%g sudo.db)" = 65534:65534 ] ||
		fail "under SUDO_UID=65534 the database belongs to $(stat -c %u:%g sudo.db)"
	rm -f sudo.db
fi

# --- a failed run ----------------------------------------------------------
printf 'not a trace' >bad.cwt
"$AN" -q -o bad.db bad.cwt 2>/dev/null && fail "a file of another format was analyzed"
left=$(ls -A | grep -E '^bad\.db')
[ -z "$left" ] || fail "a failed analysis left: $left"
rm -f bad.cwt

# --- causeway-eval's outputs ----------------------------------------------
sqlite3 d.db <"$top/schema/tables.sql" || { echo "sqlite3 failed" >&2; exit 1; }
cp d.db base.db
printf 'truth\t1\npid\t100\n' >m.truth
echo "a file of someone else's" >victim
ln d.db hard.db
ln -s d.db link-in.db
ln -s victim link-out
ln -s nowhere link-dangling
snapshot() { sha256sum m.truth d.db base.db victim | sha256sum; }
before=$(snapshot)
for opt in --json --csv --wrong; do
	for target in m.truth d.db base.db hard.db ./d.db "$T/d.db" link-in.db link-out link-dangling; do
		"$EV" -q --baseline-db base.db "$opt" "$target" m.truth d.db 2>err
		rc=$?
		[ $rc = 2 ] || fail "causeway-eval $opt $target: exit $rc, want 2 ($(cat err))"
		"$EV" -q --force --baseline-db base.db "$opt" "$target" m.truth d.db 2>err
		rc=$?
		[ $rc = 2 ] || fail "causeway-eval --force $opt $target: exit $rc, want 2 ($(cat err))"
		[ "$(snapshot)" = "$before" ] || fail "causeway-eval $opt $target changed an input or the link's target"
		[ "$(readlink link-dangling)" = nowhere ] && [ ! -e nowhere ] ||
			fail "causeway-eval $opt $target wrote through a dangling link"
	done
	# An existing output: kept without --force, replaced with it.
	echo old >out.x
	"$EV" -q "$opt" out.x m.truth d.db 2>err
	rc=$?
	[ $rc = 2 ] || fail "causeway-eval $opt onto an existing file: exit $rc, want 2"
	[ "$(cat out.x)" = old ] || fail "causeway-eval $opt replaced an existing file without --force"
	chmod 644 out.x
	"$EV" -q --force "$opt" out.x m.truth d.db 2>err || fail "causeway-eval --force $opt: $(cat err)"
	[ "$(cat out.x)" != old ] || [ "$opt" = --wrong ] || fail "causeway-eval --force $opt did not replace out.x"
	[ "$(mode out.x)" = 600 ] || fail "causeway-eval $opt wrote mode $(mode out.x), want 600"
	rm -f out.x
done
"$EV" -q --json same.x --csv same.x m.truth d.db 2>err
[ $? = 2 ] || fail "two outputs of one name: not refused"
left=$(ls -A | grep -E '\.tmp\.|^same\.x$|^nowhere$')
[ -z "$left" ] || fail "causeway-eval left: $left"
echo "faults/outputs: causeway-eval refused every output at an input or a link; inputs unchanged"

# --- what the capture says is escaped -----------------------------------
# Its messages name paths (here the output's, elsewhere those the kernel
# reports and probes of traced programs): no raw control byte reaches the
# terminal. The name holds ESC [ 3 1 m and a BEL, in a directory that does
# not exist, so that the capture refuses it at once.
if [ "$(id -u)" = 0 ]; then
	bad=$'nodir\e[31m\a/x.cwt'
	"$BUILD/causeway-capture" -q -F 0 --no-offcpu -d 0.1 -o "$bad" 2>cap.err
	rc=$?
	[ $rc = 2 ] || fail "a capture to a missing directory: exit $rc, want 2"
	LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' cap.err && fail "the capture printed raw control bytes: $(od -c cap.err | head -3)"
	grep -qF 'nodir\x1b[31m\x07/x.cwt' cap.err || fail "the capture's message lacks the escaped name: $(cat -v cap.err)"
	rm -f cap.err
fi

[ $failed = 0 ] && echo "faults/outputs: all checks passed"
exit $failed
