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
# One function per check, for the lead to fill in. What they have: $DB;
# $REQUESTS; thread nodes $FRONT $MIDDLE $BACK (names front, middle,
# back); tables rq (id, name, node, b, e: each request's node and its
# begin and end edge times), thop (id, thread, t0, t1, cpu, work: the
# program's own hop intervals), hs (each CPU sample inside a hop, with
# its attribution; work: in middle_work or back_work); the exporter is
# $BUILD/causeway-export. Each says what it checked, or that it did not.

# go tool pprof -traces: the handoff threads' samples have the request
# as their root frame.
check_pprof() {
	echo "live/$NAME: pprof: not checked yet"
}

# folded: the same causal frames first, the request at the root.
check_folded() {
	echo "live/$NAME: folded: not checked yet"
}

# perfetto: decodes (protoc --decode_raw), and has a flow for every
# handoff (the pipe, futex and reply wakes of table hand).
check_perfetto() {
	echo "live/$NAME: perfetto: not checked yet"
}

# dot -Tsvg: one request's DAG renders and names front, middle and back.
check_dot() {
	echo "live/$NAME: dot: not checked yet"
}

# critical_path: each request's segments cover its wall time (r.e - r.b)
# within 5%, through middle and back.
check_critical_path() {
	echo "live/$NAME: critical path: not checked yet"
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
