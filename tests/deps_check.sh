#!/bin/bash
# No circle of files in analyze/ or capture/ (docs/hacking.md, Layout):
# two files that include or call each other, directly or around a loop.
# A file X.c depends on Y.c of the same directory when
#  - it includes "Y.h" itself (an include a header makes is the header's
#    business: join.h gathers the model's types for every file), or
#  - its object uses a symbol (a function or data) that Y.o defines: nm
#    gives the undefined symbols of X.o and the defined ones of Y.o.
# A call through a hook (a class's table of handlers, the unwinder's
# destructor on the cw_sym) is no dependency: the caller does not name
# the callee. The pairs go to tsort, which names the files of a loop.
#   tests/deps_check.sh BUILD          (VERBOSE=1 prints every dependency)
set -u
BUILD=${1:?usage: tests/deps_check.sh BUILD}
top=$(cd "$(dirname "$0")/.." && pwd)
failed=0

deps() { # DIR: "X Y" for each dependency of DIR/X.c on DIR/Y.c
	local dir=$1 o b
	# every symbol an object defines, as "symbol file"
	for o in "$BUILD/$dir"/*.o; do
		b=$(basename "$o" .o)
		nm --defined-only "$o" | awk -v f="$b" 'NF == 3 && $2 ~ /[TDBRCV]/ { print $3, f }'
	done | sort -u >"$BUILD/deps-$dir.defs"
	for o in "$BUILD/$dir"/*.o; do
		b=$(basename "$o" .o)
		nm --undefined-only "$o" | awk '{ print $NF }' | sort -u |
			join - "$BUILD/deps-$dir.defs" | awk -v f="$b" '$2 != f { print f, $2 }'
		sed -n 's/^#include "\([a-z_0-9]*\)\.h".*/\1/p' "$top/$dir/$b.c" |
			while read -r h; do
				[ "$h" != "$b" ] && [ -f "$top/$dir/$h.c" ] && echo "$b $h"
			done
	done | sort -u
}

for dir in analyze capture; do
	if ! ls "$BUILD/$dir"/*.o >/dev/null 2>&1; then
		# make check builds no capture (no BPF toolchain)
		echo "deps: $dir is not built here: not checked"
		continue
	fi
	deps "$dir" >"$BUILD/deps-$dir.txt"
	[ "${VERBOSE:-0}" = 1 ] && sed "s|^|$dir: |" "$BUILD/deps-$dir.txt"
	if ! tsort "$BUILD/deps-$dir.txt" >/dev/null 2>"$BUILD/deps-$dir.err"; then
		echo "deps: FAIL: a circle of files in $dir/ (each depends on the next):" >&2
		sed -n 's/^tsort: //p' "$BUILD/deps-$dir.err" | grep -v 'input contains a loop' >&2
		failed=1
	fi
done
exit $failed
