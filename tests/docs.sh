#!/bin/bash
# The documentation cannot drift from the programs:
#  - every block of docs/*.md marked <!-- help: PROG --> is exactly what
#    BUILD/PROG --help prints (UPDATE=1 rewrites the blocks instead);
#  - every "docs/NAME.md §N.M" a comment or document cites names a heading
#    of that file;
#  - no comment cites a document outside the tree (the product contract
#    the project was built against is not in it: the rules are in
#    docs/model.md, in the project's words).
#   tests/docs.sh BUILD
set -u
BUILD=$(cd "${1:?usage: tests/docs.sh BUILD}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
failed=0
fail() {
	echo "docs: FAIL: $*" >&2
	failed=1
}

for doc in docs/*.md; do
	for prog in $(sed -n 's/^<!-- help: \([a-z-]*\) -->$/\1/p' "$doc"); do
		# make check builds no capture (no BPF toolchain): its block is
		# checked by make test, which builds everything.
		[ -x "$BUILD/$prog" ] || { echo "docs: $prog is not built here: its block is not checked"; continue; }
		"$BUILD/$prog" --help >"$BUILD/docs-help.txt" 2>&1
		python3 - "$doc" "$prog" "$BUILD/docs-help.txt" "${UPDATE:-0}" <<'PY' || fail "$doc: the $prog --help block differs from the program's (UPDATE=1 tests/docs.sh BUILD rewrites it)"
import sys
doc, prog, helpf, update = sys.argv[1:]
text = open(doc).read()
mark = '<!-- help: %s -->\n```\n' % prog
start = text.index(mark) + len(mark)
end = text.index('```\n', start)
want = open(helpf).read()
if text[start:end] == want:
    sys.exit(0)
if update == '1':
    open(doc, 'w').write(text[:start] + want + text[end:])
    sys.exit(0)
sys.stderr.write(''.join(__import__('difflib').unified_diff(
    text[start:end].splitlines(True), want.splitlines(True), 'docs', prog + ' --help')))
sys.exit(1)
PY
	done
done
rm -f "$BUILD/docs-help.txt"

# Citations: docs/NAME.md §N.M must be a heading "#... §N.M " of NAME.md.
src=$(git ls-files -co --exclude-standard 2>/dev/null | grep -E '\.(c|h|sh|sql|md|bash)$|^Makefile$|/run$|bench/(analyze|capture|postgres|servers)$')
[ -n "$src" ] || src=$(find . -path ./build -prune -o -type f \( -name '*.[ch]' -o -name '*.sh' -o -name '*.sql' -o -name '*.md' \) -print)
# shellcheck disable=SC2086
grep -ohE 'docs/[a-z-]+\.md §[0-9]+(\.[0-9]+)?' $src | sort -u | while read -r doc sec; do
	[ -f "$doc" ] || { echo "docs: FAIL: cited $doc does not exist" >&2; echo x; continue; }
	grep -qE "^#+ $sec " "$doc" || { echo "docs: FAIL: $doc has no section $sec" >&2; echo x; }
done | grep -q x && failed=1
# shellcheck disable=SC2086
if { grep -nE '[Cc]ontract( section)? [0-9]' $src
     # and a citation folded over two lines of a comment
     perl -0ne 'while (/[Cc]ontract( section)?[ \t]*\n[ \t]*(\*|#|--|\/\/)?[ \t]*(section )?[0-9]/g) {
		print "$ARGV: a citation folded over two lines\n" }' $src; } | grep -v '^tests/docs.sh'; then
	fail "the lines above cite the contract, a document outside the tree: cite docs/model.md"
fi

[ $failed = 0 ] && echo "docs: help blocks match, every citation resolves"
exit $failed
