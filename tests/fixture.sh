#!/bin/bash
# One fixture: compile fixtures/NAME.events with the real segment writer,
# analyze it, and compare the analyzer's exit code, its messages and the
# chosen queries (fixtures/queries.sql, then fixtures/NAME.sql if present)
# with fixtures/NAME.expect. fixtures/NAME.args holds extra analyzer
# options. UPDATE=1 rewrites the .expect file instead.
set -u
BUILD=$1 events=$2
dir=$(dirname "$events") name=$(basename "$events" .events)
expect="$dir/$name.expect"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! "$BUILD/tests/fixturec" "$events" "$tmp/$name.cwt"; then
	echo "fixture $name: fixturec failed" >&2
	exit 1
fi
args=()
[ -f "$dir/$name.args" ] && read -r -a args <"$dir/$name.args"
{
	(cd "$tmp" && "$BUILD/causeway-analyze" -q "${args[@]}" "$name.cwt" 2>stderr)
	echo "exit: $?"
	echo "--- messages"
	cat "$tmp/stderr"
	if [ -f "$tmp/$name.db" ]; then
		echo "--- database"
		cat "$dir/queries.sql" ${dir}/$name.sql 2>/dev/null |
			sqlite3 -batch "$tmp/$name.db" 2>&1
	else
		echo "--- no database"
	fi
} >"$tmp/actual"

if [ "${UPDATE:-0}" = 1 ]; then
	cp "$tmp/actual" "$expect"
	exit 0
fi
if [ ! -f "$expect" ]; then
	echo "fixture $name: no $expect (make it with UPDATE=1 and check it by hand)" >&2
	cat "$tmp/actual" >&2
	exit 1
fi
if ! diff -u "$expect" "$tmp/actual" >&2; then
	echo "fixture $name: output differs from $expect" >&2
	exit 1
fi
