#!/bin/bash
# live/hops: a request that hops across threads, named on the first only
# (tests/workloads/hops.c: front begins request N and writes it to a
# pipe; middle reads it, burns CPU and hands it to back through a
# condition variable; back burns CPU and replies over a second pipe;
# front ends the request). Captured at 999 Hz with off-CPU stacks, and
# checked against the workload's own truth:
#  - every request is a request node named as the program named it, with
#    one begin edge from front and one end edge back to it, inside the
#    times the program took around its probes;
#  - every request's handoffs are wakes, observed: front -> middle (the
#    pipe: no futex), middle -> back (reason 'futex'), back -> front (the
#    reply), each the last wake into its receiver before it acted on the
#    request (the workload makes each one necessary);
#  - every CPU sample on middle or back while it worked for request N (the
#    program's own interval) is attributed to N, reconstructed, through
#    the chain 'request > wake' (middle) or 'request > wake > wake'
#    (back), or is unknown because it was read past the reorder window;
#    at least 90% carry the request (below), and those in the work
#    (burn()) stand for its CPU time by the thread's own clock within 25%;
#  - no sample is attributed to a request outside that request's life;
#  - every off-CPU wait of front inside a request was ended by back's
#    wake, and is charged to the request (observed) with the request as
#    its waker_request (back carried it); one whose switch-in the trace
#    lacks, reconstructed and saying so (below).
# The share: nothing in the program lets a sample inside a hop miss its
# request (each hop follows a wake from a context that carried it, and
# the request outlives the hop: back's interval ends before its reply),
# so every miss but one is a bug and fails the test. The one the model
# allows (docs/model.md §6.1) is a sample the analyzer read past its
# reorder window, which a loaded machine's late drain of the sample ring
# makes: unknown, and said so. 90% bounds that as live/adapter does.
# The exports and the critical path (issue 20) have their places below,
# one function each.

. "$(dirname "$0")/../lib/live.bash" "$@"
top=$(cd "$(dirname "$0")/../.." && pwd)

REQUESTS=50
BURN_US=3000
capture -q -F 999 -e sched,futex,usdt -o "$T/t.cwt" -- "$WL/hops" "$T/truth" $REQUESTS $BURN_US
need_class usdt "$T/t.cwt"
need_class futex "$T/t.cwt"
DB=$T/t.db
analyze "$T/t.cwt" "$DB"
P=$(awk '$1 == "pid" { print $2 }' "$T/truth")
[ -n "$P" ] || fail "no pid in the ground truth"
# request ID BEGIN END NAME...: the name is the rest of the line.
treq=$(awk '$1 == "request" {
	name = $0
	sub(/^request [0-9]+ [0-9]+ [0-9]+ /, "", name)
	printf "%s(%s, %s, %s, '\''%s'\'')", n++ ? ",\n" : "", $2, $3, $4, name
}' "$T/truth")
q "create table tthread(name, tid);
   insert into tthread values $(truth_rows thread "$T/truth");
   create table treq(id, t0, t1, name);
   insert into treq values $treq;
   create table thop(id, thread, t0, t1, cpu, work);
   insert into thop values $(truth_rows hop "$T/truth");" >/dev/null
n=$(q "select count(*) from treq")
[ "$n" = $REQUESTS ] || fail "the truth holds $n requests, not $REQUESTS"

# The threads' nodes: the live generation of each tid.
q "create table th as select t.name, t.tid, (select max(n.id) from nodes n
	where n.type = 'thread' and n.scope = 'host' and n.key = t.tid) as node from tthread t" >/dev/null
missing=$(q "select group_concat(name, ' ') from th where node is null")
[ -z "$missing" ] || fail "no thread node for: $missing"
FRONT=$(q "select node from th where name = 'front'")
MIDDLE=$(q "select node from th where name = 'middle'")
BACK=$(q "select node from th where name = 'back'")

# Requests: named as the program named them, begun and ended on front.
q "create table rq as select r.id, r.name, n.id as node, n.name as node_name,
	(select count(*) from edges b where b.type = 'begin' and b.dst = n.id and b.src = $FRONT) as nbegin,
	(select count(*) from edges e where e.type = 'end' and e.src = n.id and e.dst = $FRONT) as nend,
	(select min(b.ts) from edges b where b.type = 'begin' and b.dst = n.id) as b,
	(select min(e.ts) from edges e where e.type = 'end' and e.src = n.id) as e, r.t0, r.t1
   from treq r left join nodes n on n.type = 'request' and n.scope = 'pid:$P' and n.key = r.id" >/dev/null
bad=$(q "select count(*) from rq where node is null or node_name is not name or nbegin != 1 or nend != 1
	or b < t0 or e > t1 or b >= e")
[ "$bad" = 0 ] || fail "$bad of $REQUESTS requests without their node, name, one begin from and one end to front inside the program's times:
  $(q "select id || ' ' || coalesce(node_name, 'no node') || ' begins ' || nbegin || ' ends ' || nend
	from rq where node is null or node_name is not name or nbegin != 1 or nend != 1
	  or b < t0 or e > t1 or b >= e limit 5" | tr '\n' ';')"
extra=$(q "select count(*) from nodes where type = 'request' and scope = 'pid:$P'")
[ "$extra" = $REQUESTS ] || fail "$extra request nodes for $REQUESTS requests"

# Handoffs: the last wake into each receiver before it acted on the
# request, from the thread that handed it over.
q "create table hand as select r.id,
	(select e.id from edges e where e.type = 'wake' and e.dst = $MIDDLE
	  and e.ts <= (select t0 from thop h where h.id = r.id and h.thread = 'middle')
	  order by e.ts desc, e.id desc limit 1) as pipe,
	(select e.id from edges e where e.type = 'wake' and e.dst = $BACK
	  and e.ts <= (select t0 from thop h where h.id = r.id and h.thread = 'back')
	  order by e.ts desc, e.id desc limit 1) as futex,
	(select e.id from edges e where e.type = 'wake' and e.dst = $FRONT and e.ts <= r.e
	  order by e.ts desc, e.id desc limit 1) as reply
   from rq r" >/dev/null
check_hop() { # column src reason-test after-this-time what
	local n
	n=$(q "select count(*) from hand h join rq r on r.id = h.id left join edges e on e.id = h.$1
		where e.id is null or e.src is not $2 or e.confidence != 'observed' or not ($3) or e.ts < $4")
	[ "$n" = 0 ] || fail "$n of $REQUESTS requests whose $5 is not an observed wake from its sender:
  $(q "select r.id || ': ' || coalesce(e.src, 'none') || ' ' || coalesce(e.confidence, '') || ' ' ||
	coalesce(e.reason, '') from hand h join rq r on r.id = h.id left join edges e on e.id = h.$1
	where e.id is null or e.src is not $2 or e.confidence != 'observed' or not ($3) or e.ts < $4
	limit 5" | tr '\n' ';')"
}
check_hop pipe "$FRONT" "e.reason is null" "r.b" "request through the pipe to middle"
check_hop futex "$MIDDLE" "e.reason = 'futex'" \
	"(select t0 from thop m where m.id = r.id and m.thread = 'middle')" "futex handoff to back"
check_hop reply "$BACK" "e.reason is null" \
	"(select t0 from thop k where k.id = r.id and k.thread = 'back')" "reply to front"

# Attribution on the handoff threads: every CPU sample inside a hop.
# work: the sample is in the thread's work function (middle_work or
# back_work, which only call burn(); the workload keeps frame pointers).
q "create table hs as select h.id, h.thread, s.id as sample, s.weight / s.inclusion_probability as est,
	a.request, a.confidence, a.reason, r.node as want,
	exists (select 1 from sample_frames f where f.sample = s.id and f.function = h.thread || '_work') as work
   from thop h join th t on t.name = h.thread join rq r on r.id = h.id
   join samples s on s.thread = t.node and s.kind = 'cpu' and s.ts > h.t0 and s.ts < h.t1
   left join attribution a on a.sample = s.id" >/dev/null
summary=""
for hop in "middle|request > wake" "back|request > wake > wake"; do
	who=${hop%%|*}
	chain=${hop#*|}
	read -r inside named late est work < <(q "select count(*),
		coalesce(sum(request = want and confidence = 'reconstructed' and reason = '$chain'), 0),
		coalesce(sum(request is null and confidence = 'unknown'
		  and reason = 'sample read past the reorder window'), 0),
		coalesce(cast(sum(case when work then est else 0 end) as integer), 0),
		(select sum(work) from thop where thread = '$who')
		from hs where thread = '$who'" | tr '|' ' ')
	[ "$inside" -gt 0 ] || fail "no CPU sample on $who inside its $REQUESTS hops"
	if [ $((named + late)) != "$inside" ] || [ $((named * 10)) -lt $((inside * 9)) ]; then
		fail "$named of $inside CPU samples on $who inside its hops carry the request through '$chain' ($late read late):
  $(q "select id || ': ' || coalesce(request, 'NULL') || ' (want ' || want || ') ' || coalesce(confidence, '') ||
	' ' || coalesce(reason, '') from hs where thread = '$who'
	and not (request = want and confidence = 'reconstructed' and reason = '$chain') limit 5" | tr '\n' ';')"
	fi
	# The premise, that 999 Hz samples land on a few ms of work: the
	# samples in the work stand for its CPU time by the thread's own
	# clock. Not the whole hop's: the hop also spins in sched_yield()
	# until its receiver sleeps (asleep.h), and under load that spin's
	# CPU time by the clock ran past what its samples stood for (once
	# 223 ms of hops against 144 ms of samples, load 11 on 2 CPUs; not
	# understood yet, and not what this test is about).
	[ $((est * 4)) -ge $((work * 3)) ] && [ $((est * 4)) -le $((work * 5)) ] ||
		fail "$who's samples in its work stand for $((est / 1000)) us of CPU, its own clock says $((work / 1000)) us"
	summary="$summary $who $named/$inside ($late late; in its work $((est / 1000000)) ms of $((work / 1000000)) ms CPU);"
done

# Nothing is charged to a request outside its life.
stray=$(q "select count(*) from attribution a join samples s on s.id = a.sample join rq r on r.node = a.request
	where s.ts < r.b or s.ts > r.e")
[ "$stray" = 0 ] || fail "$stray samples attributed to a request outside its begin and end"

# front's waits inside a request: ended by back, charged to the request
# with back's request as their cause. A wait whose switch-in the trace
# lacks (docs/model.md §4.2: now and then on this VM, with nothing lost)
# gets its wake back and is charged to the request reconstructed, saying
# so; its waker_request is read at front's next sighting, after front
# ended the request, and stays NULL.
SEEN="e.src is $BACK and a.request is r.node and a.confidence = 'observed' and a.waker_request is r.node"
UNSEEN="e.src is $BACK and a.request is r.node and a.confidence = 'reconstructed' and s.weight_exact = 0
	and a.reason = 'switch-in not seen: ended by its wake, by the thread''s next record'"
FRONT_WAITS="from samples s join rq r on s.ts > r.b and s.ts < r.e
	left join edges e on e.id = s.wake left join attribution a on a.sample = s.id
	where s.thread = $FRONT and s.kind = 'offcpu'"
read -r waits ended unseen < <(q "select count(*), coalesce(sum($SEEN), 0), coalesce(sum($UNSEEN), 0)
	$FRONT_WAITS" | tr '|' ' ')
[ "$waits" -ge $REQUESTS ] || fail "$waits off-CPU waits of front inside $REQUESTS requests (each waits for its reply)"
[ $((ended + unseen)) = "$waits" ] ||
	fail "$ended of front's $waits waits inside requests ended by back's wake and charged to the request ($unseen with the switch-in not seen):
  $(q "select r.id || ': wake ' || coalesce(e.src, 'none') || ' request ' || coalesce(a.request, 'NULL') ||
	' ' || coalesce(a.confidence, '') || ' waker ' || coalesce(a.waker_request, 'NULL') || ' ' ||
	coalesce(a.reason, '') $FRONT_WAITS and not ($SEEN) and not ($UNSEEN) limit 5" | tr '\n' ';')"

# ---- issue 20: the exports and the critical path --------------------
# One function per check. What they have: $DB;
# $REQUESTS; thread nodes $FRONT $MIDDLE $BACK (names front, middle,
# back); tables rq (id, name, node, b, e: each request's node and its
# begin and end edge times), thop (id, thread, t0, t1, cpu, work: the
# program's own hop intervals), hs (each CPU sample inside a hop, with
# its attribution; work: in middle_work or back_work); the exporter is
# $BUILD/causeway-export (docs/model.md §8). Each says what it checked.

# go tool pprof -traces: the handoff threads' samples have the request
# as their root frame.
check_pprof() {
	local total ok
	if ! command -v go >/dev/null; then
		echo "*** live/$NAME: pprof: go is not installed (Debian: golang-go): NOT CHECKED ***" >&2
		return
	fi
	"$BUILD/causeway-export" pprof -q "$DB" -o "$T/t.pb.gz" || { fail "pprof: export failed"; return; }
	# go as root, offline: nothing of the user's, nothing fetched
	HOME=$T/home GOPATH=$T/gopath GOCACHE=$T/gocache GOENV=off GOPROXY=off GOTOOLCHAIN=local \
		GOTELEMETRY=off PPROF_TMPDIR=$T/pprof go tool pprof -traces "$T/t.pb.gz" >"$T/traces" 2>"$T/pprof.err" ||
		{ fail "pprof: go tool pprof -traces: $(head -3 "$T/pprof.err")"; return; }
	# a trace block: its labels, then frames leaf first; the last frame
	# is the root. Each trace of middle's and back's CPU samples must have
	# its request as that root (the share attribution gives, 90%).
	read -r total ok < <(awk '
		/^-+\+-+$/ { if (thr && n) { t++; if (root ~ /^req-/) k++ } thr = 0; n = 0; next }
		/^ *thread: +(middle|back) / { thr = 1; next }
		/^ *(thread|request|task|confidence|mechanism|request_id): / { next }
		{ line = $0; sub(/^ +[0-9.]+[a-z]*s? +/, "", line); sub(/^ +/, "", line)
		  if (line != "") { root = line; n++ } }
		END { if (thr && n) { t++; if (root ~ /^req-/) k++ } print t + 0, k + 0 }' "$T/traces")
	[ "$total" -gt 0 ] || { fail "pprof: no trace of middle or back in go tool pprof -traces"; return; }
	[ $((ok * 100)) -ge $((total * 90)) ] ||
		fail "pprof: only $ok of $total traces of middle and back are rooted at their request"
	grep -q "^ *wake from front$" "$T/traces" && grep -q "^ *futex wake from middle$" "$T/traces" ||
		fail "pprof: the handoff frames 'wake from front' and 'futex wake from middle' are not in -traces"
	echo "live/$NAME: pprof: go tool pprof -traces: $ok of $total traces of middle and back rooted at their request"
}

# folded: the same causal frames first, the request at the root.
check_folded() {
	local n bad
	"$BUILD/causeway-export" folded -q "$DB" -o "$T/t.folded" || { fail "folded: export failed"; return; }
	# every CPU sample inside a hop that carries its request is under a
	# line rooted at the request, then the chain's hops by name: middle's
	# 'wake from front', back's then 'futex wake from middle'
	q "select distinct r.name || '|' || h.thread from hs h join rq r on r.id = h.id
	    where h.request = h.want" >"$T/hopreq"
	n=0 bad=0
	while IFS='|' read -r name who; do
		n=$((n + 1))
		case $who in
		middle) want="$name;wake from front;" ;;
		back) want="$name;wake from front;futex wake from middle;" ;;
		esac
		grep -qF -- "$want" "$T/t.folded" && [ "$(grep -cF -- "$want" "$T/t.folded")" = \
			"$(grep -c -- "^$(printf '%s' "$want" | sed 's/[][\.*^$/]/\\&/g')" "$T/t.folded")" ] ||
			{ bad=$((bad + 1)); [ $bad -le 3 ] && fail "folded: no line starts '$want' ($who's samples of $name)"; }
	done <"$T/hopreq"
	[ "$n" -gt 0 ] || fail "folded: no hop sample carries its request: nothing to check"
	# the us under each request's root: the database's CPU estimate for it
	q "select r.name, cast(round(sum(s.weight / s.stack_probability) / 1000.0) as int)
	     from samples s join attribution a on a.sample = s.id join nodes r on r.id = a.request
	    where s.kind = 'cpu' and (s.stack is not null or s.stack_probability >= 1) and r.scope = 'pid:$P'
	    group by r.id order by 1" >"$T/want.us"
	awk '{ w = $NF; $NF = ""; split($0, f, ";"); if (f[1] ~ /^req-/) s[f[1]] += w }
	     END { for (k in s) print k "|" s[k] }' "$T/t.folded" | sort >"$T/got.us"
	sort -o "$T/want.us" "$T/want.us"
	# each line is rounded to a us on its own: within a us per line
	join -t'|' "$T/want.us" "$T/got.us" | awk -F'|' -v f="$T/t.folded" '
		{ d = $2 - $3; if (d < 0) d = -d; if (d > 50) { print; bad++ } } END { exit bad > 0 }' >"$T/us.bad" ||
		fail "folded: CPU us per request differ from the database: $(head -3 "$T/us.bad" | tr '\n' ';')"
	[ "$(wc -l <"$T/want.us")" = "$(wc -l <"$T/got.us")" ] ||
		fail "folded: $(wc -l <"$T/got.us") request roots, the database charges CPU to $(wc -l <"$T/want.us")"
	echo "live/$NAME: folded: $n (request, thread) pairs rooted at their request with the chain's hops;" \
		"CPU per request root as the database estimates it ($(wc -l <"$T/got.us") requests)"
}

# perfetto: decodes (protoc --decode_raw), and has a flow for every
# handoff (the pipe, futex and reply wakes of table hand).
check_perfetto() {
	local id missing=0 n=0
	if ! command -v protoc >/dev/null; then
		echo "*** live/$NAME: perfetto: protoc is not installed (Debian: protobuf-compiler): NOT CHECKED ***" >&2
		return
	fi
	"$BUILD/causeway-export" perfetto -q "$DB" -o "$T/t.perfetto-trace" || { fail "perfetto: export failed"; return; }
	protoc --decode_raw <"$T/t.perfetto-trace" >/dev/null || { fail "perfetto: protoc --decode_raw cannot read it"; return; }
	protoc --decode=perfetto.protos.Trace -I "$top/tests/export" "$top/tests/export/perfetto_trace.proto" \
		<"$T/t.perfetto-trace" >"$T/pf.txt" || { fail "perfetto: protoc cannot decode it as a Trace"; return; }
	python3 "$top/tests/export/perfetto.py" "$DB" "$T/pf.txt" >"$T/pf.check" 2>"$T/pf.err" ||
		fail "perfetto: the trace and its database differ: $(head -3 "$T/pf.err" | tr '\n' ';')"
	# every handoff of every request begins a flow and ends one
	grep -o 'flow_ids: [0-9]*' "$T/pf.txt" | awk '{ print $2 }' | sort -u >"$T/flows"
	grep -o 'terminating_flow_ids: [0-9]*' "$T/pf.txt" | awk '{ print $2 }' | sort -u >"$T/terms"
	for id in $(q "select pipe from hand union all select futex from hand union all select reply from hand"); do
		n=$((n + 1))
		grep -qx "$id" "$T/flows" && grep -qx "$id" "$T/terms" || missing=$((missing + 1))
	done
	[ "$missing" = 0 ] || fail "perfetto: $missing of $n handoffs have no flow from start to end"
	echo "live/$NAME: perfetto: decodes, holds to the database, and each of the $n handoffs is a flow"
}

# dot -Tsvg: one request's DAG renders and names front, middle and back.
check_dot() {
	local r
	if ! command -v dot >/dev/null; then
		echo "*** live/$NAME: dot: graphviz is not installed (Debian: graphviz): NOT CHECKED ***" >&2
		return
	fi
	# the request with the most hop samples
	r=$(q "select want from hs where request = want group by want order by count(*) desc, want limit 1")
	[ -n "$r" ] || { fail "dot: no request with hop samples"; return; }
	"$BUILD/causeway-export" dot -q "$DB" --request "$r" -o "$T/r.dot" || { fail "dot: export failed"; return; }
	dot -Tsvg "$T/r.dot" -o "$T/r.svg" 2>"$T/dot.err" || { fail "dot: dot -Tsvg failed: $(head -3 "$T/dot.err")"; return; }
	# graphviz writes a '-' of a label as &#45;
	sed -i 's/&#45;/-/g' "$T/r.svg"
	for who in front middle back; do
		tid=$(q "select key from nodes where id = (select node from th where name = '$who')")
		grep -q ">$who (tid $tid)<\|>$who<" "$T/r.svg" && grep -q "$tid" "$T/r.svg" ||
			fail "dot: the SVG of request $r does not name $who (tid $tid)"
	done
	grep -qF "$(q "select name from nodes where id = $r")" "$T/r.svg" || fail "dot: the SVG does not name request $r"
	echo "live/$NAME: dot: request $r's graph renders (dot -Tsvg) and names front, middle and back"
}

# critical_path: each request's segments cover its wall time (r.e - r.b)
# within 5%, through middle and back.
check_critical_path() {
	local bad through
	# the segments tile the request: their sum is its wall time
	bad=$(q "select count(*) from rq r where abs(coalesce((select sum(c.end_ns - c.start_ns)
		from critical_path c where c.request = r.node), 0) - (r.e - r.b)) > 0.05 * (r.e - r.b)")
	[ "$bad" = 0 ] || fail "critical path: $bad of $REQUESTS requests whose segments do not cover their wall time within 5%:
  $(q "select r.id || ': wall ' || (r.e - r.b) || ' path ' || coalesce((select sum(c.end_ns - c.start_ns)
	from critical_path c where c.request = r.node), 0) from rq r limit 3" | tr '\n' ';')"
	# and it goes through the hops: back (what woke front) and middle
	# (what woke back), known, not stopped short
	through=$(q "select count(*) from rq r where
		exists (select 1 from critical_path c where c.request = r.node and c.node = $BACK)
		and exists (select 1 from critical_path c where c.request = r.node and c.node = $MIDDLE)
		and not exists (select 1 from critical_path c where c.request = r.node and c.confidence = 'unknown')")
	[ $((through * 100)) -ge $((REQUESTS * 90)) ] ||
		fail "critical path: only $through of $REQUESTS requests walked through back and middle to their begin"
	echo "live/$NAME: critical path: every request's segments cover its wall time within 5%;" \
		"$through of $REQUESTS walked through back and middle to their begin, no unknown segment"
}

check_pprof
check_folded
check_perfetto
check_dot
check_critical_path

echo "live/$NAME: $REQUESTS requests named on front, each handed front -> middle (pipe) -> back (futex) -> front," \
	"observed; CPU samples inside the hops carrying their request:$summary" \
	"$((ended + unseen))/$waits waits of front ended by back and charged to the request ($unseen with the switch-in not seen);" \
	"none outside a request's life"
