#!/bin/bash
# faults/maps: a path a trace's mapping record names is opened only if it
# is a regular file, checked before it is opened (docs/model.md §7,
# analyze/symbol.c). A trace maps, and samples, in one process:
#  - a FIFO with a writer blocked in its open (a reader's open would
#    release it), /dev/zero (a device), a directory, a symlink to a copy
#    of a good ELF file, /proc/self/mem (a regular file of size 0 on
#    procfs), and a regular file that is not ELF;
#  - a good ELF file (a copy of causeway-analyze, with its build-id), and
#    in a second process the same file under another name (a hard link);
#  - a dwarf sample (registers and a stack copy) of the first process, so
#    the unwinder, which opens every object of the process, tries them too.
# causeway-analyze runs under strace -f: no open of the FIFO, the device,
# the directory, the symlink or its target, or /proc/self/mem; the writer
# is still blocked afterwards; each refused path has one warning (on
# stderr and in diagnostics), its frames are unsymbolized and name their
# path; the good file is opened, with O_NOFOLLOW and O_NONBLOCK, and its
# frame is main, under each of its two paths.
#   tests/faults/maps.sh BUILD
set -u
BUILD=$(cd "${1:?usage: $0 BUILD}" && pwd)
AN=$BUILD/causeway-analyze
FC=$BUILD/tests/fixturec
T=$(mktemp -d)
writer=""
cleanup() {
	if [ -n "$writer" ]; then
		kill -9 "$writer" 2>/dev/null
		wait "$writer" 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
failed=0
fail() {
	echo "faults/maps: FAIL: $*" >&2
	failed=1
}
ok() { echo "faults/maps: ok $*"; }
for tool in strace readelf nm sqlite3; do
	command -v "$tool" >/dev/null || { echo "faults/maps: FAIL: $tool is not installed" >&2; exit 1; }
done

wchan() { cat "/proc/$1/wchan" 2>/dev/null; }

# --- the files --------------------------------------------------------------
cp "$AN" "$T/good" && cp "$AN" "$T/target" && ln "$T/good" "$T/alias" || exit 1
ln -s "$T/target" "$T/link"
mkfifo "$T/fifo"
mkdir "$T/dir"
echo "not an object, long enough to hold an ELF header and then some more bytes" >"$T/notelf"
bid=$(readelf -n "$T/good" | awk '/Build ID/ { print $3 }')
main=$(nm "$T/good" | awk '$3 == "main" { print $1 }')
if [ -z "$bid" ] || [ -z "$main" ]; then
	echo "faults/maps: FAIL: no build-id or main in $AN" >&2
	exit 1
fi
# The writer: the shell's child blocks in open(fifo, O_WRONLY) for the
# redirection, before it would exec sleep; released, it sleeps instead.
sleep 600 >"$T/fifo" &
writer=$!
for ((i = 0; i < 500; i++)); do
	[ "$(wchan "$writer")" = wait_for_partner ] && break
	sleep 0.01
done
[ "$(wchan "$writer")" = wait_for_partner ] ||
	{ echo "faults/maps: FAIL: the writer never blocked in its open (wchan $(wchan "$writer"))" >&2; exit 1; }

# --- the trace ---------------------------------------------------------------
# The good file at 0x555555554000 from offset 0: its vaddrs are its file
# offsets (readelf -l), so main is at the base + main's vaddr.
hostile=("$T/fifo" /dev/zero "$T/dir" "$T/link" /proc/self/mem "$T/notelf")
{
	echo "task ts=10 tid=100 pid=100 ppid=1 comm=app"
	echo "task ts=10 tid=200 pid=200 ppid=1 comm=other"
	# Each hostile path mapped like the good file, without a build-id
	# (so it is an object of its own, tried by its path, and any ELF file
	# there would do), sampled at main: the symlink, followed, would be
	# symbolized.
	user=""
	for i in "${!hostile[@]}"; do
		start=$((0x7ff000000000 + (i << 24)))
		echo "mmap ts=10 flags=1 task=100/100 start=$(printf 0x%x $start) len=0x100000 pgoff=0x0 prot=0x5 path=${hostile[$i]}"
		user="$user,$(printf 0x%x $((start + 0x$main)))"
	done
	echo "mmap ts=10 flags=1 task=100/100 start=0x555555554000 len=0x100000 pgoff=0x0 prot=0x5 build_id=$bid path=$T/good"
	echo "mmap ts=10 flags=1 task=200/200 start=0x555555554000 len=0x100000 pgoff=0x0 prot=0x5 build_id=$bid path=$T/alias"
	echo "!seal meta"
	pc=$(printf '0x%x' $((0x555555554000 + 0x$main)))
	echo "sample_cpu ts=1000 cpu=0 task=100/100 start=5 period=1000 keep=0x100000000 user=$pc$user"
	echo "sample_cpu ts=2000 cpu=0 task=200/200 start=5 period=1000 keep=0x100000000 user=$pc"
	# every hostile path named again: still one warning each
	echo "sample_cpu ts=3000 cpu=0 task=100/100 start=5 period=1000 keep=0x100000000 user=${user#,}"
	# a dwarf sample: the unwinder opens every object of process 100
	echo "sample_cpu ts=4000 cpu=0 task=100/100 start=5 period=1000 keep=0x100000000 regs=0x0,0x0,0x0,0x0,0x0,0x0,0x0,0x7ffffffde000,0x0,0x0,0x0,0x0,0x0,0x0,0x0,0x0,$pc stack=0000000000000000"
	echo "!seal events"
	echo "!seal final"
} >"$T/t.events"
"$FC" "$T/t.events" "$T/t.cwt" || { echo "faults/maps: FAIL: fixturec" >&2; exit 1; }

# --- the analysis ------------------------------------------------------------
# LeakSanitizer cannot run under ptrace: a sanitizer build checks leaks
# elsewhere (tests/run.sh), not here.
(cd "$T" && ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	strace -f -qq -e trace=openat,open -o strace.log "$AN" -q -o t.db t.cwt 2>stderr)
rc=$?
[ $rc = 0 ] || fail "causeway-analyze exit $rc: $(cat "$T/stderr")"
opened() { grep -E "open(at)?\(.*\"$1\"" "$T/strace.log"; }
for p in "$T/fifo" /dev/zero "$T/dir" "$T/link" "$T/target" /proc/self/mem; do
	if opened "$p" >/dev/null; then
		fail "$p was opened: $(opened "$p" | head -1)"
	else
		ok "$p not opened"
	fi
done
if [ "$(wchan "$writer")" = wait_for_partner ] && kill -0 "$writer" 2>/dev/null; then
	ok "the FIFO's writer is still blocked in its open"
else
	fail "the FIFO's writer was released (wchan '$(wchan "$writer")')"
fi
good=$(opened "$T/good")
case "$good" in
*O_NOFOLLOW*O_CLOEXEC*) ok "the good file opened checked: ${good#*open}" ;;
*) fail "the good file not opened, or without the checks: '$good'" ;;
esac
if opened "$T/alias" >/dev/null; then
	fail "the hard link opened: one build-id is one object, opened once"
fi

# --- what the database says ------------------------------------------------------
q() { sqlite3 -batch "$T/t.db" "$1"; }
for p in "${hostile[@]}"; do
	n=$(grep -cF "symbolizer: $p: not read" "$T/stderr")
	d=$(q "SELECT count(*) FROM diagnostics WHERE message LIKE 'symbolizer: $p: not read: %'")
	f=$(q "SELECT count(*) FROM frames WHERE module = '$p' AND function IS NULL")
	s=$(q "SELECT count(*) FROM frames WHERE module = '$p' AND function IS NOT NULL")
	if [ "$n" = 1 ] && [ "$d" = 1 ] && [ "$f" = 1 ] && [ "$s" = 0 ]; then
		ok "$p: one warning ($(grep -F "symbolizer: $p:" "$T/stderr" | sed 's/.*not read: //')), its frame unsymbolized"
	else
		fail "$p: $n warnings on stderr, $d in diagnostics, $f unsymbolized and $s symbolized frames"
	fi
done
refused=$(q "SELECT value FROM meta WHERE key = 'symbol_objects_refused'")
if [ "${refused:-0}" -ge ${#hostile[@]} ]; then
	ok "symbol_objects_refused $refused"
else
	fail "symbol_objects_refused ${refused:-none}, want at least ${#hostile[@]}"
fi
for p in "$T/good" "$T/alias"; do
	fn=$(q "SELECT group_concat(function) FROM frames WHERE module = '$p'")
	if [ "$fn" = main ]; then
		ok "$p: its own frame, main"
	else
		fail "$p: frames '$fn', want main"
	fi
done

[ $failed = 0 ] && echo "faults/maps: PASS" || echo "faults/maps: FAIL" >&2
exit $failed
