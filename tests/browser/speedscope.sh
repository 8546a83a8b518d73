#!/bin/bash
# causeway-export folded in the tool its users open it with: speedscope
# (npm, pinned by tests/browser/package-lock.json) in headless Chromium
# (Debian's), all on 127.0.0.1, read back from the page:
#  - the fixture attribution_chain (requests reached over handoffs) is
#    analyzed and exported folded (or DB, when given, is exported);
#  - a node server (tests/browser/serve.mjs) serves speedscope's built
#    files and the profile at a port the kernel picks; Chromium runs
#    headless with a fresh --user-data-dir and its DevTools on a port of
#    its own choosing; tests/browser/check.mjs opens speedscope with
#    #profileURL= the profile, over playwright-core;
#  - speedscope's sandwich view, a DOM table of every frame, must list
#    each frame of the folded file with its total and self weight as the
#    file has them (the causal frames: each request, named as the database
#    names it, each handoff and task), and nothing else;
#  - screenshots (the flame chart, the sandwich view with a request
#    selected, the left-heavy flame chart) go to BUILD/export_browser/,
#    kept after the test.
# Everything it starts (server, browser and the browser's own processes)
# it stops by pid, pass or fail, and it checks that none is left. npm ci
# runs once per lock file into a cache (CAUSEWAY_CACHE, default
# ~/.cache/causeway). Skips (77) without Chromium, node 18 or npm, or when
# the npm registry cannot be reached for that first install.
#   tests/browser/speedscope.sh BUILD [DB]
set -u
BUILD=$(cd "${1:?usage: tests/browser/speedscope.sh BUILD [DB]}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
CHECK_NAME=export_browser
. "$top/tests/lib/check.bash"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
OUT=$BUILD/export_browser
server='' browser=''

skip() {
	echo "*** export_browser: SKIPPED: $* ***" >&2
	exit 77
}

# The processes Chromium started carry its --user-data-dir: any left once
# it is stopped are listed by that, never by name.
leftovers() {
	local p
	for p in /proc/[0-9]*; do
		tr '\0' '\n' 2>/dev/null <"$p/cmdline" | grep -qxF -- "--user-data-dir=$T/chromium" &&
			echo "${p#/proc/}"
	done
}

stop() { # PID|-PGID: TERM, then KILL after 5 s
	local target=$1 pid=${1#-} i
	kill -TERM -- "$target" 2>/dev/null || return 0
	for i in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL -- "$target" 2>/dev/null
	wait "$pid" 2>/dev/null
}

cleanup() {
	local rc=$? left
	[ -z "$server" ] || stop "$server"
	if [ -n "$browser" ]; then
		# setsid made the browser its process group's leader: its
		# zygotes, renderers and GPU process are in the group
		stop "-$browser"
		sleep 0.5
		left=$(leftovers)
		if [ -n "$left" ]; then
			echo "export_browser: FAIL: Chromium processes left running: $left (killed)" >&2
			# shellcheck disable=SC2086
			kill -KILL $left 2>/dev/null
			failed=1
		fi
	fi
	rm -rf "$T"
	[ $failed = 0 ] || [ $rc != 0 ] || rc=1
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

[ -x "$CHROMIUM" ] || skip "no Chromium at $CHROMIUM (Debian: chromium)"
command -v node >/dev/null 2>&1 || skip "no node (Debian: nodejs)"
command -v npm >/dev/null 2>&1 || skip "no npm (Debian: npm)"
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)' ||
	skip "node $(node --version) is older than playwright-core needs (18)"

# --- The profile, and what speedscope must make of it.
if [ $# -ge 2 ]; then
	db=$2
else
	fx=attribution_chain
	args=()
	[ -f "$top/fixtures/$fx.args" ] && read -r -a args <"$top/fixtures/$fx.args"
	"$BUILD/tests/fixturec" "$top/fixtures/$fx.events" "$T/x.cwt" &&
		(cd "$T" && "$BUILD/causeway-analyze" -q "${args[@]}" x.cwt) ||
		{ echo "export_browser: the fixture cannot be analyzed" >&2; exit 1; }
	db=$T/x.db
fi
"$BUILD/causeway-export" -q folded "$db" -o "$T/profile.folded" ||
	{ echo "export_browser: causeway-export folded failed" >&2; exit 1; }
# The requests the CPU samples were charged to, as the database names
# them (names the export would escape or cut are not compared).
sqlite3 -batch -noheader "$db" "
	SELECT DISTINCT r.name FROM attribution a JOIN samples s ON s.id = a.sample
	  JOIN nodes r ON r.id = a.request
	 WHERE s.kind = 'cpu' AND length(r.name) BETWEEN 1 AND 57
	   AND r.name NOT GLOB '*[^ -~]*' AND r.name NOT LIKE '%;%'
	 ORDER BY r.name" >"$T/requests"
[ $# -ge 2 ] || [ -s "$T/requests" ] || { echo "export_browser: the fixture has no request (changed?)" >&2; exit 1; }
title="causeway export_browser $$"
python3 - "$T/profile.folded" "$T/requests" "$title" >"$T/expect.json" <<'PY' || failed=1
import json, sys
folded, requests, title = sys.argv[1:]
frames, roots = {}, set()
for line in open(folded, encoding='utf-8'):
    stack, _, w = line.rstrip('\n').rpartition(' ')
    w = float(w)
    names = stack.split(';')
    roots.add(names[0])
    for n in set(names):
        frames.setdefault(n, [0, 0])[0] += w
    frames[names[-1]][1] += w
reqs = [r for r in open(requests, encoding='utf-8').read().split('\n') if r]
bad = [r for r in reqs if r not in roots]
for r in bad:
    sys.stderr.write('export_browser: FAIL: request %r has CPU samples, but no root frame in the folded file\n' % r)
json.dump({'title': title, 'requests': reqs, 'frames': frames}, sys.stdout)
sys.exit(1 if bad else 0)
PY

# --- speedscope and playwright-core, once per lock file.
lock=$top/tests/browser/package-lock.json
cache=${CAUSEWAY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/causeway}
mods=$cache/browser-$(sha256sum "$lock" | cut -c1-16)
if [ ! -e "$mods/.installed" ]; then
	rm -rf "$mods"
	mkdir -p "$mods" && cp "$top/tests/browser/package.json" "$lock" "$mods/" || exit 1
	if ! (cd "$mods" && npm ci --ignore-scripts --no-audit --no-fund --cache "$cache/npm" \
		>"$T/npm.log" 2>&1); then
		npm ping --cache "$cache/npm" >/dev/null 2>&1 ||
			skip "npm ci: the npm registry cannot be reached ($(tail -1 "$T/npm.log"))"
		echo "export_browser: FAIL: npm ci failed: $(tail -5 "$T/npm.log")" >&2
		exit 1
	fi
	touch "$mods/.installed"
	# the installs of older lock files are of no more use
	for d in "$cache"/browser-*; do
		[ "$d" = "$mods" ] || rm -rf "$d"
	done
fi
dist=$mods/node_modules/speedscope/dist/release
[ -f "$dist/index.html" ] || { echo "export_browser: FAIL: no speedscope at $dist" >&2; exit 1; }

# wait_for FILE SECONDS PID: FILE appears while PID lives
wait_for() {
	local i
	for i in $(seq $(($2 * 10))); do
		[ -s "$1" ] && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# --- The server and the browser, each by its pid.
node "$top/tests/browser/serve.mjs" "$dist" "$T/profile.folded" "$T/port" >"$T/server.log" 2>&1 &
server=$!
wait_for "$T/port" 20 "$server" || { echo "export_browser: FAIL: the server did not start: $(cat "$T/server.log")" >&2; failed=1; exit; }
port=$(cat "$T/port")
setsid "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$T/chromium" --remote-debugging-port=0 about:blank >"$T/chromium.log" 2>&1 &
browser=$!
[ "$(ps -o pgid= -p "$browser" | tr -d ' ')" = "$browser" ] ||
	{ echo "export_browser: FAIL: Chromium ($browser) does not lead its process group" >&2; failed=1; exit; }
wait_for "$T/chromium/DevToolsActivePort" 60 "$browser" ||
	{ echo "export_browser: FAIL: Chromium did not start: $(tail -5 "$T/chromium.log")" >&2; failed=1; exit; }
cdp=http://127.0.0.1:$(head -1 "$T/chromium/DevToolsActivePort")

rm -rf "$OUT"
mkdir -p "$OUT"
if ! timeout 180 node "$top/tests/browser/check.mjs" "$mods" "$cdp" "http://127.0.0.1:$port" \
	"$T/expect.json" "$OUT" \
	>"$T/check.log" 2>&1; then
	fail "speedscope: $(cat "$T/check.log")"
else
	cat "$T/check.log"
fi
cp "$T/profile.folded" "$OUT/"
for f in "$OUT"/*.png; do
	[ -s "$f" ] && echo "export_browser: screenshot $f"
done
[ $failed = 0 ] && echo "export_browser: ok"
exit $failed
