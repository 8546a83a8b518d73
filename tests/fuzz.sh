#!/bin/bash
# The reader's libFuzzer target (tests/fuzz_reader.c: the segment reader
# and the dump, under ASan and UBSan) for FUZZ_SECONDS (default 60) on a
# corpus made from every fixture trace (fixtures/*.events compiled with
# the real writer, each once as read and once in the target's "repair"
# mode) and every input under fixtures/fuzz/ (what earlier runs found).
# A crash, leak or timeout fails the run; its input is kept in
# BUILD/fuzz-crashes/ to be made a fixture (fixtures/README.md).
#   tests/fuzz.sh BUILD          (make fuzz BUILD=... builds the target)
set -u
BUILD=$(cd "${1:?usage: tests/fuzz.sh BUILD}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_=${FUZZ_SECONDS:-60}
FZ=$BUILD/fuzz_reader
[ -x "$FZ" ] || { echo "fuzz: $FZ is not built (make fuzz BUILD=$BUILD)" >&2; exit 1; }
[ -x "$BUILD/tests/fixturec" ] || { echo "fuzz: $BUILD/tests/fixturec is not built" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/corpus" "$T/art"

for f in "$top"/fixtures/*.events; do
	n=$(basename "$f" .events)
	"$BUILD/tests/fixturec" "$f" "$T/$n.cwt" 2>/dev/null || continue
	# The first byte picks the target's mode: even as read, odd repaired.
	{ printf '\0'; cat "$T/$n.cwt"; } >"$T/corpus/$n.raw"
	{ printf '\1'; cat "$T/$n.cwt"; } >"$T/corpus/$n.repair"
done
[ -d "$top/fixtures/fuzz" ] && cp "$top"/fixtures/fuzz/* "$T/corpus/" 2>/dev/null
echo "fuzz: $(ls "$T/corpus" | wc -l) corpus inputs, $SECONDS_ s"

"$FZ" -max_total_time="$SECONDS_" -max_len=262144 -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix="$T/art/" "$T/corpus" >"$T/log" 2>&1
rc=$?
grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+.*DONE' "$T/log"
if [ $rc != 0 ] || [ -n "$(ls -A "$T/art")" ]; then
	mkdir -p "$BUILD/fuzz-crashes"
	cp "$T"/art/* "$BUILD/fuzz-crashes/" 2>/dev/null
	grep -m1 -A30 -E 'ERROR|SUMMARY|timeout' "$T/log" >&2
	echo "fuzz: FAIL (exit $rc): inputs kept in $BUILD/fuzz-crashes/" >&2
	exit 1
fi
echo "fuzz: no crash, leak or hang"
