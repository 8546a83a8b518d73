#!/bin/bash
# causeway-export dot (export/dot.c), checked by graphviz and against the
# database it came from (fixtures/attribution_chain.events, analyzed):
#  - every request exports, and `dot -Tsvg` renders it; the same database
#    gives the same file, by id and by name;
#  - the SVG names each thread the request ran on (its begin and end, the
#    threads of its samples: name and tid in that node's box) and draws
#    every handoff of its samples' chains (attribution.carry_edge, then
#    edges.carried_by), all found by sqlite3 queries;
#  - each edge is styled by its confidence in the database (observed
#    solid, reconstructed dashed, unknown dotted), an unknown cause from
#    an "unknown" node of its own;
#  - the critical path: without one the graph says so and nothing is
#    heavy; with a hand-made critical_path table (the columns of the
#    contract, no reason) its segments' nodes and edges, a handoff's birth
#    edge, and a stop are drawn heavy; with the analyzer's own, when it
#    writes one, every edge of it is heavy;
#  - hostile bytes in a request's name (quote, backslash, newline,
#    controls, invalid UTF-8, DOT's \N and \l) render as their escaped
#    text; a carried_by cycle ends; a request with 200000 edges and
#    200000 chains is cut, said so, within the bounds its note states;
#  - a wake that ended a wait on a resource (fixtures/critical_lock.events)
#    is labelled by the resource and what let it go, as resource_waits
#    says, and no other edge is;
#  - a bad --request (no such id or name, a thread's id, none, two, a name
#    of two requests) is exit 2 and no file.
# Skips (77) when graphviz is not installed.
#   tests/export/dot.sh BUILD
set -u
BUILD=$(cd "${1:?usage: tests/export/dot.sh BUILD}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
CHECK_NAME=export/dot
. "$top/tests/lib/check.bash"
EX=$BUILD/causeway-export

if ! command -v dot >/dev/null 2>&1; then
	echo "*** export/dot: SKIPPED: graphviz's dot is not installed (Debian: graphviz) ***" >&2
	exit 77
fi

fx=attribution_chain
"$BUILD/tests/fixturec" "$top/fixtures/$fx.events" "$T/x.cwt" || { echo "export/dot: fixturec failed" >&2; exit 1; }
args=()
[ -f "$top/fixtures/$fx.args" ] && read -r -a args <"$top/fixtures/$fx.args"
(cd "$T" && "$BUILD/causeway-analyze" -q "${args[@]}" x.cwt) || { echo "export/dot: the analyzer failed" >&2; exit 1; }
db=$T/x.db
q() { sqlite3 -batch -noheader "$@"; }

# export DB REQUEST OUT [more options]: exit 0 and a file, else a failure
export_dot() {
	local d=$1 r=$2 o=$3
	shift 3
	if ! "$EX" dot "$d" --request "$r" -o "$o" -q "$@" 2>"$T/err"; then
		fail "export of request '$r' from $(basename "$d"): $(cat "$T/err")"
		return 1
	fi
}
render() { # DOT SVG
	dot -Tsvg "$1" -o "$2" 2>"$T/dot.err" || { fail "dot cannot render $1: $(cat "$T/dot.err")"; return 1; }
	[ ! -s "$T/dot.err" ] || fail "dot warned on $1: $(cat "$T/dot.err")"
}

# Each SVG.svg's nodes into SVG.parts as "TITLE<TAB>line|line|..." and its
# edges as "edge<TAB>TITLE" (one python for all: it starts slowly).
svg_parts() {
	python3 - "$@" <<'PY'
import sys, xml.etree.ElementTree as ET
ns = {'s': 'http://www.w3.org/2000/svg'}
for path in sys.argv[1:]:
    root = ET.parse(path).getroot()
    with open(path[:-4] + '.parts', 'w') as out:
        for g in root.iter('{http://www.w3.org/2000/svg}g'):
            cls = g.get('class')
            if cls not in ('node', 'edge'):
                continue
            title = g.find('s:title', ns).text
            texts = [t.text or '' for t in g.iter('{http://www.w3.org/2000/svg}text')]
            if cls == 'node':
                out.write('%s\t%s\n' % (title, '|'.join(texts)))
            else:
                out.write('edge\t%s\n' % title)
PY
}

requests=$(q "$db" "SELECT id FROM nodes WHERE type = 'request' ORDER BY id")
chained=0
[ -n "$requests" ] || fail "the fixture has no request"
svgs=()
for r in $requests; do
	export_dot "$db" "$r" "$T/r$r.dot" && render "$T/r$r.dot" "$T/r$r.svg" && svgs+=("$T/r$r.svg")
done
[ ${#svgs[@]} = 0 ] || svg_parts "${svgs[@]}" || fail "an SVG does not parse"
for r in $requests; do
	[ -s "$T/r$r.parts" ] || { fail "request $r: nothing was drawn"; continue; }
	grep -q "^n$r	request" "$T/r$r.parts" || fail "request $r: no node n$r for the request"

	# Its threads: the begin's and end's, and its samples'.
	q -separator '	' "$db" "
		SELECT t.id, coalesce(t.name, ''), t.key FROM edges e JOIN nodes t ON t.id = e.src
		 WHERE e.type = 'begin' AND e.dst = $r AND t.type = 'thread'
		UNION
		SELECT t.id, coalesce(t.name, ''), t.key FROM edges e JOIN nodes t ON t.id = e.dst
		 WHERE e.type = 'end' AND e.src = $r AND t.type = 'thread'
		UNION
		SELECT t.id, coalesce(t.name, ''), t.key FROM attribution a
		  JOIN samples s ON s.id = a.sample JOIN nodes t ON t.id = s.thread
		 WHERE a.request = $r" >"$T/threads"
	[ -s "$T/threads" ] || fail "request $r: the queries found no thread (the fixture changed?)"
	while IFS='	' read -r id name tid; do
		line=$(grep "^n$id	" "$T/r$r.parts")
		[ -n "$line" ] || { fail "request $r: thread $name (tid $tid) is not drawn"; continue; }
		case "|${line#*	}|" in *"|$name|"*) ;; *) fail "request $r: node n$id does not say '$name': $line" ;; esac
		case "|${line#*	}|" in *"|tid $tid|"*) ;; *) fail "request $r: node n$id does not say 'tid $tid': $line" ;; esac
	done <"$T/threads"

	# Every handoff of its samples' chains.
	q -separator ' ' "$db" "
		WITH RECURSIVE c(e, n) AS (
		  SELECT a.carry_edge, 0 FROM attribution a
		   WHERE a.request = $r AND a.carry_edge IS NOT NULL
		  UNION
		  SELECT x.carried_by, c.n + 1 FROM c JOIN edges x ON x.id = c.e
		   WHERE x.carried_by IS NOT NULL AND c.n < 30)
		SELECT DISTINCT e.id, coalesce('n' || e.src, 'u' || e.id), 'n' || e.dst
		  FROM c JOIN edges e ON e.id = c.e" >"$T/chain"
	while read -r id src dst; do
		grep -qxF "edge	$src->$dst" "$T/r$r.parts" ||
			fail "request $r: the chain's edge $id ($src -> $dst) is not drawn"
	done <"$T/chain"
	chained=$((chained + $(wc -l <"$T/chain")))

	# Styles by confidence, from the database.
	grep -oE 'tooltip="edge [0-9]+( and more)?, [a-z]+", style=[a-z]+' "$T/r$r.dot" |
		sed -E 's/tooltip="edge ([0-9]+)( and more)?, ([a-z]+)", style=([a-z]+)/\1 \3 \4/' |
		while read -r id conf style; do
			want=$(q "$db" "SELECT confidence FROM edges WHERE id = $id")
			[ "$conf" = "$want" ] || echo "request $r: edge $id drawn $conf, the database says $want"
			case "$want:$style" in
			observed:solid | reconstructed:dashed | unknown:dotted) ;;
			*) echo "request $r: edge $id ($want) drawn $style" ;;
			esac
		done >"$T/styles"
	[ ! -s "$T/styles" ] || fail "$(cat "$T/styles")"
	# An unknown cause: its own node, dotted.
	for e in $(q "$db" "SELECT id FROM edges WHERE src IS NULL"); do
		if grep -q "tooltip=\"edge $e, " "$T/r$r.dot"; then
			grep -q "^  u$e -> n[0-9]* .*style=dotted" "$T/r$r.dot" ||
				fail "request $r: edge $e (cause unknown) is not drawn dotted from u$e"
			grep -q "^  u$e \[label=\"unknown" "$T/r$r.dot" ||
				fail "request $r: no 'unknown' node u$e"
		fi
	done
	# A request whose begin or end is not in the trace says so.
	if [ -z "$(q "$db" "SELECT start_ns FROM nodes WHERE id = $r")" ]; then
		grep -q 'its begin is not in the trace' "$T/r$r.dot" || fail "request $r: no word of its unseen begin"
	fi
done
[ "$chained" -gt 0 ] || fail "no request of the fixture has a chain: nothing was checked of them"

# One request, by name and by id, twice: the same file.
r=$(q "$db" "SELECT id FROM nodes WHERE type = 'request' AND start_ns IS NOT NULL AND end_ns IS NOT NULL
	       AND id IN (SELECT request FROM attribution WHERE carry_edge IS NOT NULL) ORDER BY id LIMIT 1")
name=$(q "$db" "SELECT name FROM nodes WHERE id = $r")
if export_dot "$db" "$name" "$T/by-name.dot" && export_dot "$db" "$r" "$T/again.dot"; then
	cmp -s "$T/r$r.dot" "$T/by-name.dot" || fail "request '$name' by name differs from by id ($r)"
	cmp -s "$T/r$r.dot" "$T/again.dot" || fail "request $r: two exports differ"
fi

# --- The critical path: without, with a hand-made one, with the analyzer's.
cp "$db" "$T/none.db"
kind=$(q "$db" "SELECT type FROM sqlite_master WHERE name = 'critical_path'")
[ -z "$kind" ] || q "$T/none.db" "DROP $kind critical_path"
if export_dot "$T/none.db" "$r" "$T/none.dot"; then
	grep -q 'critical path: not in this database' "$T/none.dot" || fail "no critical_path: the graph does not say so"
	! grep -q penwidth "$T/none.dot" || fail "no critical_path, yet something is drawn heavy"
fi

# A path through request r: its own thread at the end, the timer its
# thread armed as a handoff (the fire into the thread it woke), and a
# stop, blocked, unknown, in a thread woken in it.
own=$(q "$db" "SELECT src FROM edges WHERE type = 'begin' AND dst = $r")
read -r fire timer woken <<<"$(q -separator ' ' "$db" "
	SELECT f.id, f.src, f.dst FROM edges f JOIN edges a ON a.dst = f.src AND a.type = 'arm'
	 WHERE f.type = 'fire' AND a.src = $own ORDER BY f.ts LIMIT 1")"
arm=$(q "$db" "SELECT id FROM edges WHERE dst = $timer ORDER BY ts, id LIMIT 1")
[ -n "$fire" ] && [ -n "$arm" ] || fail "the fixture's request $r has no armed timer that fired (changed?)"
cp "$db" "$T/crit.db"
[ -z "$kind" ] || q "$T/crit.db" "DROP $kind critical_path"
q "$T/crit.db" "
	CREATE TABLE critical_path(request INTEGER, seq INTEGER, node INTEGER, kind TEXT,
	  start_ns INTEGER, end_ns INTEGER, edge INTEGER, confidence TEXT);
	INSERT INTO critical_path VALUES
	  ($r, 0, $own, 'running', 1570, 1600, NULL, 'observed'),
	  ($r, 1, $woken, 'running', 1561, 1570, NULL, 'observed'),
	  ($r, 2, $timer, 'handoff', 1050, 1561, $fire, 'observed'),
	  ($r, 3, $own, 'blocked', 1000, 1050, NULL, 'unknown');"
if export_dot "$T/crit.db" "$r" "$T/crit.dot" && render "$T/crit.dot" "$T/crit.svg"; then
	for e in "$fire" "$arm"; do
		grep -q "tooltip=\"edge $e, [a-z]*\".*penwidth=3" "$T/crit.dot" ||
			fail "critical path: edge $e is not drawn heavy"
	done
	for n in "$own" "$woken" "$timer"; do
		grep -q "^  n$n \[.*penwidth=3" "$T/crit.dot" || fail "critical path: node $n is not drawn heavy"
	done
	grep -q "^  s0 -> n$own \[label=\"critical path stops (no reason given):" "$T/crit.dot" ||
		fail "critical path: its stop is not drawn from an unknown node into n$own"
	grep -q 'heavy red: the critical path, 4 segments' "$T/crit.dot" || fail "critical path: the caption does not count its 4 segments"
	n_heavy=$(grep -c 'penwidth=3' "$T/crit.dot")
	[ "$n_heavy" = 7 ] || fail "critical path: $n_heavy heavy lines, want 7 (3 nodes, 2 edges, the stop and its node)"
fi
if [ -n "$kind" ]; then
	for r2 in $requests; do
		export_dot "$db" "$r2" "$T/own$r2.dot" || continue
		for e in $(q "$db" "SELECT edge FROM critical_path WHERE request = $r2 AND edge IS NOT NULL"); do
			if ! grep -q "tooltip=\"edge $e\(, \| and more, \).*penwidth=3" "$T/own$r2.dot"; then
				fail "request $r2: the analyzer's critical path edge $e is not drawn heavy"
			fi
		done
		for n in $(q "$db" "SELECT node FROM critical_path WHERE request = $r2"); do
			grep -q "^  n$n \[.*penwidth=3" "$T/own$r2.dot" ||
				fail "request $r2: the analyzer's critical path node $n is not drawn heavy"
		done
		for n in $(q "$db" "SELECT node FROM critical_path WHERE request = $r2 AND kind = 'blocked'"); do
			grep -q " -> n$n \[label=\"critical path stops (" "$T/own$r2.dot" ||
				fail "request $r2: the analyzer's critical path stop in node $n is not drawn"
		done
	done
	echo "export/dot: checked against the analyzer's critical_path too ($(q "$db" "SELECT count(*) FROM critical_path") segments)"
else
	echo "export/dot: this analyzer writes no critical_path: only the hand-made one was checked"
fi

# --- The waits on resources (fixtures/critical_lock.events): each wake
# drawn that ended a resource wait (resource_waits.wake_edge) is labelled
# by the resource and what let it go, as the database says (the waker a
# request by its name, a thread by its name, an object "ended by"; the
# wait's reason when the waker is unknown), and no other edge is.
"$BUILD/tests/fixturec" "$top/fixtures/critical_lock.events" "$T/cl.cwt" &&
	(cd "$T" && "$BUILD/causeway-analyze" -q cl.cwt) || fail "critical_lock: no database"
cl=$T/cl.db
waits_drawn=0
for r2 in $(q "$cl" "SELECT id FROM nodes WHERE type = 'request' ORDER BY id"); do
	export_dot "$cl" "$r2" "$T/cl$r2.dot" && render "$T/cl$r2.dot" "$T/cl$r2.svg" || continue
	# each edge drawn: its id and its label's lines after the first
	sed -n 's/^  [nu][0-9]* -> n[0-9]* \[label="\([^"]*\)", tooltip="edge \([0-9]*\)[, ].*/\2\t\1/p' \
		"$T/cl$r2.dot" | while IFS=$'\t' read -r id label; do
		want=$(q "$cl" "SELECT coalesce(nullif(r.name, ''), 'resource') ||
			CASE WHEN k.id IS NULL THEN ' (' || coalesce(w.reason, 'waker unknown') || ')'
			     ELSE CASE WHEN k.type IN ('thread', 'process', 'request', 'runtime_task')
				       THEN ' released by ' ELSE ' ended by ' END ||
				  CASE WHEN k.type IN ('thread', 'process', 'request') THEN k.name
				       ELSE CASE k.type WHEN 'timer' THEN 'timer' ELSE k.type END || ' ' || k.name END
			END
			FROM resource_waits w JOIN nodes r ON r.id = w.resource LEFT JOIN nodes k ON k.id = w.waker
			WHERE w.wake_edge = $id ORDER BY w.start_ns DESC, w.id DESC LIMIT 1")
		line=$(printf '%s' "$label" | awk -F'\\\\n' '{ print $2 }')
		if [ -n "$want" ]; then
			[ "$line" = "$want" ] || echo "request $r2: edge $id ended resource wait '$want', its label says '$label'"
			echo "drawn $id" >&3
		elif printf '%s' "$label" | grep -qE ' (released|ended) by |waker unknown'; then
			echo "request $r2: edge $id ended no resource wait, its label says '$label'"
		fi
	done 3>>"$T/cl.drawn" >>"$T/cl.bad"
done
[ ! -s "$T/cl.bad" ] || fail "$(cat "$T/cl.bad")"
waits_drawn=$(sort -u "$T/cl.drawn" 2>/dev/null | wc -l)
want_drawn=$(q "$cl" "SELECT count(*) FROM resource_waits WHERE wake_edge IS NOT NULL")
[ "$waits_drawn" = "$want_drawn" ] ||
	fail "critical_lock: $waits_drawn wakes of resource waits labelled, the database has $want_drawn"
echo "export/dot: critical_lock: the $waits_drawn wakes that ended resource waits labelled by them"
# the release on the waiting query's critical path, drawn heavy
grep -q 'label="wake\\nlock 735/0/0/0/4 released by END;\\n+200 ns", tooltip="edge [0-9]*, observed", style=solid, penwidth=3' \
	"$T/cl$(q "$cl" "SELECT id FROM nodes WHERE name = 'UPDATE t SET v = 2 WHERE id = 1'").dot" ||
	fail "critical_lock: the UPDATE's critical path has no heavy 'lock 735/0/0/0/4 released by END;' wake"

# --- Hostile bytes in the request's name.
cp "$db" "$T/esc.db"
q "$T/esc.db" "UPDATE node_names SET name = 'q\"uote\\back' || char(10) || 'nl' || char(1) ||
		 char(127) || CAST(x'ff' AS TEXT) || '\\N\\l<&>}' WHERE id = (SELECT name FROM node_rows WHERE id = $r)"
if export_dot "$T/esc.db" "$r" "$T/esc.dot" && render "$T/esc.dot" "$T/esc.svg"; then
	svg_parts "$T/esc.svg" || fail "hostile name: the SVG does not parse"
	# lib/esc.h's form: a backslash doubled, a control or invalid byte
	# \xNN; the rest as it is, quote and angle brackets included.
	want='request q"uote\\back\x0anl\x01\x7f\xff\\N\\l<&>}'
	grep -qF "n$r	$want|" "$T/esc.parts" || fail "hostile name: the node says $(grep "^n$r	" "$T/esc.parts"), want $want"
fi

# --- A carried_by cycle ends.
cp "$db" "$T/cycle.db"
q "$T/cycle.db" "UPDATE edge_rows SET carried_by = id WHERE carried_by IS NOT NULL;
		 UPDATE edge_rows SET carried_by = (SELECT min(carry_edge) FROM sample_rows)
		  WHERE id = (SELECT max(carry_edge) FROM sample_rows)"
for r2 in $requests; do
	timeout 20 "$EX" dot "$T/cycle.db" --request "$r2" -o "$T/cycle$r2.dot" -q ||
		fail "request $r2: a carried_by cycle: exit $?"
done

# --- Bounds: 200000 wakes from the request's thread in its time, each
# into a new thread, and 200000 samples of it, each with its own chain.
cp "$db" "$T/big.db"
t0=$(q "$db" "SELECT start_ns FROM nodes WHERE id = $r")
q "$T/big.db" "
	WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < 200000)
	INSERT INTO node_rows(id, type, key, scope, generation, start_seen, traced)
	  SELECT 1000000 + n, 1, 1000000 + n, (SELECT scope FROM node_rows WHERE id = $own), 0, 0, 1 FROM i;
	WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < 200000)
	-- code 1: a wake, kernel, observed (schema/tables.sql)
	INSERT INTO edge_rows(id, code, dst, ts, src)
	  SELECT 1000000 + n, 1, 1000000 + n, $t0 + 1 + n % 500, $own FROM i;
	WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < 200000)
	INSERT INTO sample_rows(id, thread, ts, kind, weight, weight_exact, inclusion_probability,
	                        attr_confidence, request, carry_edge)
	  SELECT 1000000 + n, 1000000 + n, $t0 + 2 + n % 500, 0, 1000, 1, 1.0, 1, $r, 1000000 + n FROM i;"
start=$(date +%s)
if timeout 120 "$EX" dot "$T/big.db" --request "$r" -o "$T/big.dot" -q 2>"$T/err"; then
	took=$(($(date +%s) - start))
	grep -q 'cut: more was found than is drawn' "$T/big.dot" || fail "200000 edges: no note of the cut"
	max_e=$(grep -oE 'at most [0-9]+ edges' "$T/big.dot" | grep -oE '[0-9]+')
	max_n=$(grep -oE '[0-9]+ nodes' "$T/big.dot" | head -1 | grep -oE '[0-9]+')
	edges=$(grep -c -- ' -> ' "$T/big.dot")
	nodes=$(grep -cE '^  n[0-9]+ \[' "$T/big.dot")
	[ -n "$max_e" ] && [ "$edges" -le "$max_e" ] || fail "200000 edges: $edges drawn, the note says at most '$max_e'"
	[ -n "$max_n" ] && [ "$nodes" -le "$max_n" ] || fail "200000 edges: $nodes nodes drawn, the note says at most '$max_n'"
	[ "$nodes" -ge 100 ] || fail "200000 edges: only $nodes nodes drawn"
	echo "export/dot: a request with 200000 edges and chains: $edges edges and $nodes nodes drawn in ${took}s"
else
	fail "200000 edges: exit $? ($(cat "$T/err"))"
fi

# --- A bad --request: exit 2, no file.
thread=$(q "$db" "SELECT id FROM nodes WHERE type = 'thread' ORDER BY id LIMIT 1")
r2=$(q "$db" "SELECT id FROM nodes WHERE type = 'request' AND id != $r ORDER BY id LIMIT 1")
cp "$db" "$T/twice.db"
q "$T/twice.db" "UPDATE node_rows SET name = (SELECT name FROM node_rows WHERE id = $r) WHERE id = $r2"
bad() { # DESCRIPTION ARGS...: exit 2, a message, no file
	local what=$1
	shift
	rm -f "$T/bad.dot"
	"$EX" dot "$@" -o "$T/bad.dot" >/dev/null 2>"$T/err"
	local rc=$?
	[ "$rc" = 2 ] || fail "$what: exit $rc, want 2"
	[ -s "$T/err" ] || fail "$what: no message"
	[ ! -e "$T/bad.dot" ] || fail "$what: a file was written"
}
bad "no such request id" "$db" --request 999999
bad "no such request name" "$db" --request "no request is called this"
bad "a thread's id" "$db" --request "$thread"
bad "no --request" "$db"
bad "two --request" "$db" --request "$r" --request "$r2"
bad "a name of two requests" "$T/twice.db" --request "$name"

[ $failed = 0 ] && echo "export/dot: ok (requests $(echo $requests), $chained chain edges checked)"
exit $failed
