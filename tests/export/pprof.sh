#!/bin/bash
# causeway-export pprof, read back by the tool its users open it with (go
# tool pprof), against what the database says (sqlite3 queries on the same
# database, never numbers written here). For every fixture whose database
# has samples (fixtures/*.events through tests/fixturec and the analyzer):
#  - the file is gzip and go tool pprof reads it: sample types samples,
#    cpu, waits, offcpu, the default cpu;
#  - per (kind, confidence, request label, root frame): the summed
#    values of -sample_index=cpu and samples (CPU) and offcpu and waits
#    (off-CPU) equal sum(weight / stack_probability) and sum(1 /
#    stack_probability) of the samples the export takes, within half a unit
#    per pprof sample (each value is rounded; integer estimates: exact),
#    and no group is on one side only: every root frame is the request's
#    name, or "unknown: REASON" / "no request: REASON" from attribution;
#  - -tagfocus=confidence=observed keeps exactly the observed samples'
#    CPU time; -top's cumulative time of each request's root frame is that
#    request's;
#  - every stack pprof shows (-traces, leaf first) is, read root first, a
#    stack of the folded export (same causal frames, same names, their
#    parentheses and brackets whole), and the other way round;
#  - the period is the CPU samples' weight (the cpu-clock period);
#  - pprof's File: is the executable most stacks go through (a user
#    module not named like a shared object), else [causal];
#  - an off-CPU sample in a resource wait (mechanism resource_wait) has
#    the frame "woken by: RESOURCE released by WAKER" (the request's name,
#    a thread's; "ended by" an object: a timer), or "woken by: RESOURCE
#    (REASON)" when its waker is unknown, where the wait's wake ended the
#    sample's sleep, and "woken by: CAUSE, in RESOURCE" where something
#    else did (export/waits.h), from the wait sample_mechanism finds (the
#    latest begun): the set of such frames is the database's (fixtures
#    critical_lock, request_summary).
# Then on copies of fixture databases changed by SQL: the handoffs of a
# chain made reconstructed show "(reconstructed)" in -traces, one frame per
# reconstructed edge of the chain (edges.carried_by); an inlined frame put
# before its holder at one address is one location of two lines, shown
# "(inline)" above it; a module path holding control bytes reaches no
# output raw; --request keeps only that request's samples.
# Needs go (Debian: golang-go); without it the test says so and skips
# (77). go runs offline, with HOME and its caches in the work directory.
# KEEP=1 keeps the work directory.
#   tests/export/pprof.sh BUILD
set -u
BUILD=$(cd "${1:?usage: tests/export/pprof.sh BUILD}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
EX=$BUILD/causeway-export
CHECK_NAME=export/pprof
. "$top/tests/lib/check.bash"
cd "$T" || exit 1

for p in "$EX" "$BUILD/causeway-analyze" "$BUILD/tests/fixturec"; do
	[ -x "$p" ] || { echo "export/pprof: $p is missing (make BUILD=$BUILD)" >&2; exit 1; }
done
command -v sqlite3 >/dev/null || { echo "export/pprof: the sqlite3 CLI is missing" >&2; exit 1; }
if ! command -v go >/dev/null; then
	echo "*** export/pprof: SKIPPED: go is not installed (Debian: golang-go): the pprof export is NOT checked ***" >&2
	exit 77
fi
# go as root in CI, offline: nothing of the user's, nothing fetched.
export HOME=$T/home GOPATH=$T/gopath GOCACHE=$T/gocache GOENV=off GOFLAGS=-mod=mod \
	GOPROXY=off GOTOOLCHAIN=local GOTELEMETRY=off PPROF_TMPDIR=$T/pprof
mkdir -p "$HOME" "$PPROF_TMPDIR"

pprof() {
	go tool pprof "$@" 2>"$T/pprof.err" || {
		fail "go tool pprof $*: $(cat "$T/pprof.err")"
		return 1
	}
}

# traces FILE [OPTIONS]: each sample of -traces as one line
#   value TAB kind TAB confidence TAB request TAB root TAB stack
# value in the index's unit (-unit=ns: plain ns), kind offcpu where the
# sample has a mechanism label, the stack root first, ';' between frames
# (a ';' in a name made ':', as the folded export does) and " (inline)"
# kept.
traces() {
	local f=$1
	shift
	pprof -traces -unit=ns "$@" "$f" >"$T/traces.txt" || return 1
	awk -v OFS='\t' '
	function flush() {
		if (have)
			print val, ("mechanism" in lab) ? "offcpu" : "cpu", lab["confidence"],
			      lab["request"], root, stack
		have = 0
		split("", lab)
	}
	/^-----------\+/ { flush(); inblock = 1; next }
	!inblock { next }
	substr($0, 1, 13) == "             " {
		name = substr($0, 14); gsub(/;/, ":", name)
		stack = name ";" stack; root = name; next
	}
	match($0, /^ *[a-z_]+:  /) {
		k = $0; sub(/:  .*/, "", k); gsub(/ /, "", k)
		lab[k] = substr($0, RLENGTH + 1); next
	}
	{
		val = $1; name = substr($0, index($0, val) + length(val)); sub(/^   /, "", name)
		sub(/ns$/, "", val); gsub(/;/, ":", name)
		stack = name; root = name; have = 1
	}
	END { flush() }' "$T/traces.txt"
}

# The samples the export takes (profile.c): in the window, a stack with
# frames or none, a stackless one only when every wait's stack was kept,
# a probability above 0; each with its request's name (the label) and
# the root frame profile.c names it by: the request, or why none is.
included_sql="
SELECT id, kind, weight, p, stack, confidence, request_id, coalesce(request, '') AS request,
       coalesce(request, CASE WHEN task IS NOT NULL THEN 'no request' ELSE 'unknown' END || ': ' ||
                         coalesce(reason, CASE WHEN attributed THEN 'none given'
                                               ELSE 'not attributed' END)) AS root
  FROM (SELECT s.id, s.kind, s.weight, s.stack_probability AS p, s.stack, a.task, a.reason,
               coalesce(a.confidence, 'unknown') AS confidence, a.confidence IS NOT NULL AS attributed,
               a.request AS request_id,
               CASE WHEN a.request IS NOT NULL
                    THEN coalesce(nullif(n.name, ''), 'request ' || n.key) END AS request
          FROM samples s LEFT JOIN attribution a ON a.sample = s.id
          LEFT JOIN nodes n ON n.id = a.request
         WHERE (s.stack IS NULL OR EXISTS (SELECT 1 FROM stack_frames f WHERE f.stack = s.stack))
           AND NOT (s.stack IS NULL AND s.stack_probability < 1.0)
           AND s.stack_probability > 0 AND s.weight >= 0)"

# compare WHAT EXPECTED ACTUAL: lines "key... TAB sum" (expected, from
# SQL) against "key... TAB sum TAB n" (pprof, n samples): each key on
# both sides, |difference| <= n / 2.
compare() {
	awk -F'\t' -v what="$1" '
	FNR == NR { k = $1; for (i = 2; i < NF; i++) k = k "|" $i; want[k] = $NF; next }
	{
		k = $1; for (i = 2; i < NF - 1; i++) k = k "|" $i
		if (!(k in want)) { printf "%s: pprof has %s = %s, the database none\n", what, k, $(NF-1); bad = 1; next }
		d = $(NF-1) - want[k]; if (d < 0) d = -d
		if (d > $NF / 2) { printf "%s: %s: pprof %s, the database %s\n", what, k, $(NF-1), want[k]; bad = 1 }
		seen[k] = 1
	}
	END {
		for (k in want) if (!(k in seen) && want[k] > 0) { printf "%s: %s = %s in the database, not in pprof\n", what, k, want[k]; bad = 1 }
		exit bad
	}' "$2" "$3" >"$T/compare.out" || fail "$(cat "$T/compare.out")"
}

# group TRACES [KIND]: sum and count of value by (kind, confidence,
# request, root), of the samples of KIND only when given.
group() {
	awk -F'\t' -v OFS='\t' -v kind="${2:-}" '
	kind == "" || $2 == kind { k = $2 "\t" $3 "\t" $4 "\t" $5; s[k] += $1; n[k]++ }
	END { for (k in s) print k, s[k], n[k] }' "$1"
}

check_db() { # NAME DB
	local name=$1 db=$2 out=$T/$1.pb.gz
	local idx kind expr root sum cum file period

	if ! "$EX" pprof -q -o "$out" "$db"; then
		fail "$name: causeway-export pprof exit $?"
		return
	fi
	gzip -t "$out" 2>/dev/null || fail "$name: the output is not gzip"
	pprof -raw "$out" >"$T/raw.txt" || return
	grep -qx 'samples/count cpu/nanoseconds\[dflt\] waits/count offcpu/nanoseconds' "$T/raw.txt" ||
		fail "$name: sample types are not samples, cpu (default), waits, offcpu: $(grep -A1 '^Samples:' "$T/raw.txt")"
	period=$(sqlite3 "$db" "SELECT coalesce((SELECT weight FROM samples WHERE kind = 'cpu' LIMIT 1), 0)")
	grep -qx "Period: $period" "$T/raw.txt" ||
		fail "$name: $(grep '^Period' "$T/raw.txt"), the CPU samples' weight $period"

	# values by group, each index against its SQL sum (the last,
	# waits, leaves its -traces in traces.txt for the waits below)
	for idx in cpu samples offcpu waits; do
		case $idx in
		cpu) kind=cpu expr='weight / p' ;;
		samples) kind=cpu expr='1.0 / p' ;;
		offcpu) kind=offcpu expr='weight / p' ;;
		waits) kind=offcpu expr='1.0 / p' ;;
		esac
		traces "$out" -sample_index=$idx >"$T/$idx.tsv" || return
		group "$T/$idx.tsv" $kind >"$T/got.tsv"
		sqlite3 -separator $'\t' "$db" "WITH inc AS ($included_sql)
			SELECT kind, confidence, request, root, printf('%.3f', sum($expr))
			  FROM inc WHERE kind = '$kind' GROUP BY 1, 2, 3, 4" >"$T/want.tsv"
		compare "$name -sample_index=$idx" "$T/want.tsv" "$T/got.tsv"
	done

	# what ended each resource wait: the resource, and who let it go
	awk '/^-----------\+/ { rw = 0 } /^ *mechanism:  resource_wait$/ { rw = 1 }
	     rw && /woken by: / { sub(/^.*woken by: /, "woken by: "); print }' "$T/traces.txt" |
		sort -u >"$T/got.txt"
	# the wait's waker for the sleep the wait's own wake ended; another
	# sleep in it keeps what ended it (a thread's wake, an unknown cause,
	# an object; no packet sleeps in a fixture's lock wait), the resource
	# after it
	sqlite3 "$db" "WITH inc AS ($included_sql),
		rw AS (SELECT i.id, s.wake, (SELECT w.id FROM resource_waits w
				      WHERE w.waiter IN (s.thread, a.request, a.task) AND w.start_ns <= s.ts
				        AND (w.end_ns IS NULL OR w.end_ns > s.ts)
				      ORDER BY w.start_ns DESC, w.id DESC LIMIT 1) AS wait
			 FROM inc i JOIN samples s ON s.id = i.id LEFT JOIN attribution a ON a.sample = i.id
			 JOIN sample_mechanism m ON m.sample = i.id
			WHERE i.kind = 'offcpu' AND m.mechanism = 'resource_wait'),
		k AS (SELECT id, type, CASE WHEN type IN ('thread', 'process')
					 THEN coalesce(nullif(name, ''), CASE type WHEN 'thread' THEN 'tid ' ELSE 'pid ' END || key)
					 WHEN type = 'request' THEN coalesce(nullif(name, ''), 'request ' || key)
					 ELSE (CASE type WHEN 'io_request' THEN 'io_uring' WHEN 'block_request' THEN 'block'
						WHEN 'work_item' THEN 'work' WHEN 'runtime_task' THEN 'task' ELSE type END)
					      || ' ' || coalesce(nullif(name, ''), printf('0x%x', key)) END AS name
			FROM nodes),
		named AS (SELECT coalesce(nullif(r.name, ''), 'resource') AS res, w.waker, w.reason,
				 rw.wake IS NOT NULL AND rw.wake IS w.wake_edge AS own, kw.type AS ktype,
				 CASE WHEN kw.type = 'request' AND length(kw.name) > 60
				      THEN substr(kw.name, 1, 57) || '...' ELSE kw.name END AS kname,
				 CASE WHEN e.id IS NULL THEN 'unknown (the wake was not seen)'
				      WHEN e.src IS NULL THEN 'unknown (' || coalesce(e.reason, 'no cause') || ')'
				      WHEN ks.type IN ('thread', 'process')
				      THEN CASE WHEN e.reason = 'futex' THEN 'futex' ELSE 'wake' END || ' from ' || ks.name
				      ELSE ks.name END AS cause
			    FROM rw JOIN resource_waits w ON w.id = rw.wait JOIN nodes r ON r.id = w.resource
			    LEFT JOIN k kw ON kw.id = w.waker LEFT JOIN edges e ON e.id = rw.wake
			    LEFT JOIN k ks ON ks.id = e.src)
		SELECT DISTINCT 'woken by: ' ||
		       CASE WHEN own AND waker IS NOT NULL
			    THEN res || CASE WHEN ktype IN ('thread', 'process', 'request', 'runtime_task')
					     THEN ' released by ' ELSE ' ended by ' END || kname
			    WHEN own OR (waker IS NULL AND cause = 'unknown (the wake was not seen)')
			    THEN res || ' (' || coalesce(reason, 'waker unknown') || ')'
			    ELSE cause || ', in ' || res END
		  FROM named" | sort -u >"$T/want.txt"
	cmp -s "$T/want.txt" "$T/got.txt" ||
		fail "$name: the frames of resource waits: pprof $(tr '\n' '|' <"$T/got.txt"), the database $(tr '\n' '|' <"$T/want.txt")"
	rw_frames=$((rw_frames + $(wc -l <"$T/got.txt")))

	# -tagfocus=confidence=observed: the observed CPU time, all of it
	traces "$out" -sample_index=cpu -tagfocus=confidence=observed >"$T/obs.tsv" 2>/dev/null ||
		: >"$T/obs.tsv" # no observed sample: pprof says the focus matched none
	awk -F'\t' '$3 != "observed" { bad = 1 } END { exit bad }' "$T/obs.tsv" ||
		fail "$name: -tagfocus=confidence=observed kept a sample that is not observed"
	awk -F'\t' -v OFS='\t' '$2 == "cpu" { s += $1; n++ } END { print "observed", s + 0, n + 0 }' \
		"$T/obs.tsv" >"$T/got.tsv"
	sqlite3 -separator $'\t' "$db" "WITH inc AS ($included_sql)
		SELECT 'observed', printf('%.3f', coalesce(sum(weight / p), 0)) FROM inc
		 WHERE kind = 'cpu' AND confidence = 'observed'" >"$T/want.tsv"
	compare "$name -tagfocus=confidence=observed" "$T/want.tsv" "$T/got.tsv"

	# -top: a request's root frame holds its request's CPU time
	pprof -top -unit=ns -nodefraction=0 -nodecount=1000000 "$out" >"$T/top.txt" || return
	awk -F'\t' '$2 == "cpu" && $4 != "" { s[$5] += $1; n[$5]++ }
		END { for (r in s) print r "\t" s[r] "\t" n[r] }' "$T/cpu.tsv" >"$T/req.tsv"
	while IFS=$'\t' read -r root sum _; do
		cum=$(awk -v r="$root" '{ name = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+  /, "", name) }
			name == r { v = $4; sub(/ns$/, "", v); print v }' "$T/top.txt")
		[ "$cum" = "$sum" ] || fail "$name: -top: '$root' has cum '$cum' ns, its samples $sum"
	done <"$T/req.tsv"

	# the stacks, against the folded export's (kernel frames there
	# suffixed _[k]; a stack below 1 us left out there)
	"$EX" folded -q --force -o "$T/cpu.folded" "$db" &&
		"$EX" folded -q --force --offcpu -o "$T/offcpu.folded" "$db" ||
		fail "$name: causeway-export folded failed"
	for kind in cpu offcpu; do
		awk -F'\t' -v k=$kind '$2 == k && $1 >= 500 { s = $6 ";"; gsub(/ \(inline\);/, ";", s); print s }' \
			"$T/$kind.tsv" | sort -u >"$T/got.txt"
		sed -e 's/ [0-9]*$/;/' -e 's/_\[k\];/;/g' "$T/$kind.folded" | sort -u >"$T/want.txt"
		cmp -s "$T/want.txt" "$T/got.txt" ||
			fail "$name: $kind stacks differ from the folded export's: $(diff "$T/want.txt" "$T/got.txt")"
	done

	# File: the executable most stacks go through
	sqlite3 "$db" "WITH inc AS ($included_sql),
		per AS (SELECT f.module, count(DISTINCT i.id) AS n FROM inc i
			  JOIN stack_frames sf ON sf.stack = i.stack JOIN frames f ON f.id = sf.frame
			 WHERE f.kernel = 0 AND f.module IS NOT NULL AND f.module NOT LIKE '[%'
			   AND f.module NOT LIKE '%.so' AND f.module NOT LIKE '%.so.%' GROUP BY 1)
		SELECT module FROM per WHERE n = (SELECT max(n) FROM per)" | sed 's|.*/||' >"$T/mains.txt"
	[ -s "$T/mains.txt" ] || echo '[causal]' >"$T/mains.txt"
	file=$(sed -n 's/^File: //p' "$T/top.txt")
	grep -qxF -- "$file" "$T/mains.txt" ||
		fail "$name: File: is '$file', not one of: $(tr '\n' ' ' <"$T/mains.txt")"
}

n=0 rw_frames=0
for ev in "$top"/fixtures/*.events; do
	grep -q '^sample_' "$ev" || continue # no sample record: no profile
	name=$(basename "$ev" .events)
	args=()
	[ -f "${ev%.events}.args" ] && read -r -a args <"${ev%.events}.args"
	"$BUILD/tests/fixturec" "$ev" "$name.cwt" 2>/dev/null &&
		"$BUILD/causeway-analyze" -q "${args[@]}" "$name.cwt" 2>/dev/null
	[ -f "$name.db" ] || continue
	[ "$(sqlite3 "$name.db" 'SELECT count(*) FROM samples')" -gt 0 ] || continue
	check_db "$name" "$name.db"
	n=$((n + 1))
done
[ $n -ge 10 ] || fail "only $n fixture databases have samples"
# critical_lock's two waits (a lock released by END;, an LWLock whose
# waker is unknown) and request_summary's mutex
[ $rw_frames -ge 5 ] || fail "only $rw_frames frames of resource waits in the fixtures' profiles"

# Chains made reconstructed, with names pprof would take for C++ and cut
# at '(' were it given them as system names: a thread "front[0]" (its
# hops "wake from front[0] (reconstructed)") and a request
# "Cache::get(key)".
cp attribution_chain.db recon.db
sqlite3 recon.db "
	WITH RECURSIVE chain(e) AS (
		SELECT carry_edge FROM attribution WHERE carry_edge IS NOT NULL
		UNION SELECT x.carried_by FROM edges x JOIN chain ON x.id = chain.e
		 WHERE x.carried_by IS NOT NULL)
	UPDATE edge_rows SET code = code % 16 + 16 * (1 + 3 * (code / 48)) WHERE id IN chain;
	UPDATE node_names SET name = 'front[0]' WHERE name = 'front';
	UPDATE node_names SET name = 'Cache::get(key)' WHERE name = 'GET /a';" ||
	fail "recon: the database cannot be changed"
check_db recon recon.db
# per request, the reconstructed frames of each stack: one per edge of
# its chain (all reconstructed now)
traces recon.pb.gz -sample_index=cpu | awk -F'\t' '$4 != "" && $3 == "reconstructed" {
	print $4 "\t" gsub(/ \(reconstructed\)(;|$)/, "", $6) }' | sort -u >got.txt
sqlite3 -separator $'\t' recon.db "
	WITH RECURSIVE inc AS ($included_sql),
	chain(sample, e) AS (
		SELECT a.sample, a.carry_edge FROM attribution a JOIN inc ON inc.id = a.sample
		 WHERE a.carry_edge IS NOT NULL AND a.confidence = 'reconstructed'
		UNION SELECT chain.sample, x.carried_by FROM edges x JOIN chain ON x.id = chain.e
		 WHERE x.carried_by IS NOT NULL)
	SELECT i.request, (SELECT count(*) FROM chain c JOIN edges x ON x.id = c.e
			    WHERE c.sample = i.id AND x.confidence = 'reconstructed')
	  FROM inc i WHERE i.kind = 'cpu' AND i.request != '' AND i.confidence = 'reconstructed'" |
	sort -u >want.txt
cmp -s want.txt got.txt && grep -q $'\t[1-9]' got.txt ||
	fail "recon: (request, reconstructed frames) in pprof: $(tr '\n' ' ' <got.txt), in the database: $(tr '\n' ' ' <want.txt)"
grep -q '^ *[0-9].*   Cache::get(key)$' traces.txt && grep -q 'wake from front\[0\] (reconstructed)$' traces.txt ||
	fail "recon: -traces does not show 'Cache::get(key)' and 'wake from front[0] (reconstructed)' whole"

# --request ID: that request's samples, all of them
for r in $(sqlite3 attribution_chain.db "WITH inc AS ($included_sql)
		SELECT DISTINCT request_id FROM inc WHERE request_id IS NOT NULL"); do
	"$EX" pprof -q -o req$r.pb.gz --request "$r" attribution_chain.db || fail "--request $r: exit $?"
	traces req$r.pb.gz -sample_index=cpu >req.tsv || continue
	rname=$(sqlite3 attribution_chain.db "WITH inc AS ($included_sql)
		SELECT DISTINCT request FROM inc WHERE request_id = $r")
	awk -F'\t' -v r="$rname" '$4 != r { bad = 1 } END { exit bad || !NR }' req.tsv ||
		fail "--request $r: pprof has none, or samples of another request than '$rname'"
	group req.tsv cpu >got.tsv
	sqlite3 -separator $'\t' attribution_chain.db "WITH inc AS ($included_sql)
		SELECT kind, confidence, request, root, printf('%.3f', sum(weight / p))
		  FROM inc WHERE kind = 'cpu' AND request_id = $r GROUP BY 1, 2, 3, 4" >want.tsv
	compare "--request $r" want.tsv got.tsv
done

# An inlined frame before the first user frame of the stacks that hold
# it, at its address: one location of two lines.
cp sample_cpu.db inline.db
sqlite3 inline.db "
	CREATE TEMP TABLE u AS SELECT * FROM frames WHERE kernel = 0 ORDER BY id LIMIT 1;
	CREATE TEMP TABLE at AS SELECT stack, position FROM stack_frames WHERE frame = (SELECT id FROM u);
	INSERT INTO frames(id, address, kernel, module, function, file, line, inlined)
	SELECT (SELECT max(id) + 1 FROM frames), address, 0, module, 'inlined_callee', 'inl.c', 42, 1 FROM u;
	UPDATE stack_frames SET position = -position - 1
	 WHERE EXISTS (SELECT 1 FROM at WHERE at.stack = stack_frames.stack
	                                  AND stack_frames.position >= at.position);
	UPDATE stack_frames SET position = -position WHERE position < 0;
	INSERT INTO stack_frames SELECT stack, position, (SELECT max(id) FROM frames) FROM at;
	UPDATE stacks SET depth = depth + 1 WHERE id IN (SELECT stack FROM at);" ||
	fail "inline: the database cannot be changed"
check_db inline inline.db
pprof -traces inline.pb.gz >traces.txt
holder=$(grep -o '[^;]*;inlined_callee' cpu.folded | head -1)
holder=${holder%;inlined_callee}
[ -n "$holder" ] || fail "inline: the folded export has no frame before inlined_callee"
grep -A1 '   inlined_callee (inline)$' traces.txt | tail -1 | grep -qxF "             $holder" ||
	fail "inline: -traces does not show '$holder' under 'inlined_callee (inline)'"
grep -A1 ' inlined_callee inl\.c:42 ' raw.txt | tail -1 | grep -q "^  *$holder :0 " ||
	fail "inline: -raw has no location of the lines inlined_callee, $holder: $(grep -A1 inlined_callee raw.txt)"

# A module path of control bytes: escaped in every string pprof shows.
cp sample_maps.db esc.db
sqlite3 esc.db "UPDATE frames SET module = '/usr/bin/a' || char(27) || '[31m' || char(7) || 'pp'
		 WHERE module = '/usr/bin/app'" || fail "esc: the database cannot be changed"
"$EX" pprof -q -o esc.pb.gz esc.db || fail "esc: exit $?"
pprof -raw esc.pb.gz >raw.txt && pprof -traces esc.pb.gz >traces.txt
if grep -q $'[\x01-\x08\x1b]' raw.txt traces.txt; then
	fail "esc: pprof shows a raw control byte"
fi
grep -qF '/usr/bin/a\x1b[31m\x07pp' raw.txt || fail "esc: -raw has no mapping '/usr/bin/a\\x1b[31m\\x07pp'"

echo "export/pprof: $n fixture databases checked, and 4 made by SQL"
exit $failed
