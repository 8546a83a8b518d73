#!/bin/bash
# live/uring: io_uring requests are joined within their ring and nowhere
# else. The workload (tests/workloads/uring.c) runs one script on two
# rings, the same user_data values on both: a marker NOP per ring, four
# NOPs with one user_data in one submission, four IOSQE_ASYNC reads (two
# with one user_data, in flight on both rings at once), a multishot
# POLL_ADD with its POLL_REMOVE, and two linked chains. Against the
# submissions it wrote down:
#  - each ring's scope (found by its marker) is the ring the trace saw
#    created in that order with that fd, and holds exactly its
#    submissions: as many io_request generations per (user_data, opcode)
#    as it submitted, and nothing else;
#  - every request has one observed submit edge from the submitter, and
#    one linked after an IOSQE_IO_LINK submission a 'link' submit edge
#    from that submission's request;
#  - every single-shot request has exactly one complete edge, observed;
#    the multishot request has all its CQEs as complete edges on its one
#    node, and only those whose record did not name the request (the
#    kernel's auxiliary CQEs, req 0 in the trace) may be 'reconstructed';
#  - nothing orphaned: no request without its submission (start_seen 0),
#    no edge of unknown cause into one;
#  - no edge joins io_requests of different rings;
#  - every IOSQE_ASYNC request has one punt edge, to an io-wq worker
#    thread (iou-wrk-*) of the workload's process: observed, unless the
#    kernel refused the probe of the io-wq start (see below); no other
#    request is punted.
# Then a ring set up DEFER_TASKRUN (as fio sets it up), N IOSQE_ASYNC
# READs (uring --defer): such a ring posts an io-wq completion from the
# submitter's own task work, so without the io-wq start no thread of the
# trace is known to have run a request. Each READ is then either punted,
# observed, to an io-wq worker of the workload, or counted in
# meta.uring_punts_no_worker (and the summary's "not joined" line): the
# two add up to N, and no punt edge names the submitter or another
# process's thread.

. "$(dirname "$0")/../lib/live.bash" "$@"

MULTI=5
capture -q -F 0 --no-offcpu -o "$T/t.cwt" -- "$WL/uring" "$T/truth" $MULTI
need_class io_uring "$T/t.cwt"
DB=$T/t.db
analyze "$T/t.cwt" "$DB"
read -r _ P < <(grep '^pid ' "$T/truth") || fail "no pid line in ground truth"
read -r _ S < <(grep '^submitter ' "$T/truth") || fail "no submitter line in ground truth"

# The CQEs that did not name their request, from the trace itself:
# "noreq RING_PTR USER_DATA" lines (the ring in hex as in the scopes).
"$AN" --dump "$T/t.cwt" 2>/dev/null |
	sed -n 's/^uring_complete .* ring=\(0x[0-9a-f]*\) req=0x0 user_data=\(0x[0-9a-f]*\).*/\1 \2/p' |
	while read -r ring ud; do echo "noreq $ring $((ud))"; done >"$T/noreq"

# The rings the trace saw created: "created TS RING_PTR FD".
"$AN" --dump "$T/t.cwt" 2>/dev/null |
	sed -n 's/^uring_create ts=\([0-9]*\) .* ring=\(0x[0-9a-f]*\) .* fd=\(-\{0,1\}[0-9]*\).*/created \1 \2 \3/p' \
		>"$T/created"

# The ground truth, in the database: truth_ring(ring, fd, marker, scope),
# truth_sqe(ring, ud, op, async, link), truth_multi(ring, ud, cqes),
# noreq(ring, ud) for every CQE without its request pointer, and
# created(ts, ring, fd).
sqlite3 -batch "$DB" <<EOF || fail "cannot load the ground truth"
create table truth_ring(ring, fd, marker, scope);
insert into truth_ring(ring, fd, marker) values $(truth_rows ring "$T/truth");
create table truth_sqe(ring, ud, op, async, link);
insert into truth_sqe values $(truth_rows sqe "$T/truth");
create table truth_multi(ring, ud, cqes);
insert into truth_multi values $(truth_rows multishot "$T/truth");
create table noreq(ring, ud);
create table created(ts, ring, fd);
$([ -s "$T/created" ] && echo "insert into created values $(truth_rows created "$T/created");")
$([ -s "$T/noreq" ] && echo "insert into noreq values $(truth_rows noreq "$T/noreq");")
update truth_ring set scope = (select min(scope) from nodes
	where type = 'io_request' and key = truth_ring.marker);
create view req as
	select n.*, r.ring from nodes n join truth_ring r on n.scope = r.scope
	 where n.type = 'io_request';
-- Each submission with its node: the k-th submission of a (ring,
-- user_data, opcode) is the k-th generation born with them (node ids
-- are given at birth); seq is the submission order.
create view sub as
	with t as (select rowid as seq, *, row_number() over
			(partition by ring, ud, op order by rowid) as k from truth_sqe),
	     n as (select id, ring, key, name, row_number() over
			(partition by ring, key, name order by id) as k from req)
	select t.seq, t.ring, t.ud, t.op, t.async, t.link, n.id as node
	  from t left join n on n.ring = t.ring and n.key = t.ud and n.name = t.op and n.k = t.k;
EOF

# Each ring's scope is found by its marker, once, and no two rings share one.
bad=$(q "select ring || ' (marker ' || marker || ')' from truth_ring where scope is null")
[ -z "$bad" ] || fail "no io_request node for the marker of ring(s) $(echo $bad)"
n=$(q "select count(*) from nodes where type = 'io_request' and key in (select marker from truth_ring)")
[ "$n" = 2 ] || fail "$n io_request nodes for 2 ring markers"
n=$(q "select count(distinct scope) from truth_ring")
[ "$n" = 2 ] || fail "the two rings' markers are in $n scope(s)"
q "select scope from truth_ring" | grep -qvE '^ring:0x[0-9a-f]+#[0-9]+$' &&
	fail "ring scopes not of the form ring:0x<ptr>#<gen>: $(q "select group_concat(scope, ' ') from truth_ring")"
# ... and is the ring the workload created in that order, with that fd.
bad=$(q "select 'ring ' || t.ring || ' (fd ' || t.fd || ', ' || t.scope || ') created as ' ||
		coalesce(c.ring || ' fd ' || c.fd, 'nothing')
	   from truth_ring t left join (select row_number() over (order by ts) - 1 as i, ring, fd
					   from created) c on c.i = t.ring
	  where c.fd is not t.fd or t.scope not like 'ring:' || c.ring || '#%'")
[ -z "$bad" ] || fail "rings and their creation records disagree: $(echo $bad)"

# Generations per (ring, user_data, opcode): exactly the submissions.
diff=$(q "with want as (select ring, ud, op, count(*) n from truth_sqe group by 1, 2, 3),
	       got as (select ring, key as ud, name as op, count(*) n from req group by 1, 2, 3)
	  select 'want ' || ring || ' ' || ud || ' ' || op || ' x' || n
	    from (select * from want except select * from got)
	  union all
	  select 'got ' || ring || ' ' || ud || ' ' || op || ' x' || n
	    from (select * from got except select * from want)")
[ -z "$diff" ] || fail "io_request generations differ from the submissions (ring user_data opcode xN): $(echo $diff)"
nsub=$(q "select count(*) from truth_sqe")

# One observed submit edge from the submitter per request; the others
# come from the request a linked one follows, and there is one per link.
bad=$(q "select r.ring || ':' || r.key || ':' || r.name || '#' || r.generation from req r
	  where (select count(*) from edges e join nodes s on s.id = e.src
		  where e.dst = r.id and e.type = 'submit' and e.confidence = 'observed'
		    and s.type = 'thread' and s.key = $S) != 1
	     or exists (select 1 from edges e left join nodes s on s.id = e.src
			 where e.dst = r.id and e.type = 'submit'
			   and not (s.type = 'thread' and s.key = $S)
			   and not (s.type = 'io_request' and e.reason = 'link'))")
[ -z "$bad" ] || fail "requests without exactly one observed submit edge from the submitter $S, or submitted by something else than it or a linked request: $(echo $bad)"
bad=$(q "select a.ring || ':' || a.ud || ':' || a.op || ' -> ' || b.ud || ':' || b.op from sub a
	   join sub b on b.seq = a.seq + 1
	  where a.link = 1 and (select count(*) from edges e where e.type = 'submit'
				 and e.reason = 'link' and e.src = a.node and e.dst = b.node) != 1")
[ -z "$bad" ] || fail "IOSQE_IO_LINK submissions without a link submit edge to the next: $(echo $bad)"
n=$(q "select count(*) from edges e join req r on r.id = e.dst where e.type = 'submit' and e.reason = 'link'")
[ "$n" = "$(q "select sum(link) from truth_sqe")" ] || fail "$n link submit edges for $(q "select sum(link) from truth_sqe") links"
nlink=$(q "select sum(link) from truth_sqe")

# Nothing orphaned.
bad=$(q "select ring || ':' || key || ':' || name from req where start_seen != 1")
[ -z "$bad" ] || fail "requests whose submission was not seen: $(echo $bad)"
bad=$(q "select e.type || ' ' || e.confidence || ' ' || coalesce(e.reason, '') from edges e
	  join req r on r.id = e.dst where e.src is null")
[ -z "$bad" ] || fail "edges of unknown cause into the requests: $(echo $bad)"

# Exactly one complete edge per single-shot request, observed.
bad=$(q "select r.ring || ':' || r.key || ':' || r.name || '#' || r.generation || ' ' ||
		coalesce((select group_concat(e.confidence || '/' || coalesce(e.reason, ''))
			    from edges e where e.src = r.id and e.type = 'complete'), 'none')
	   from req r
	  where not exists (select 1 from truth_multi m where m.ring = r.ring and m.ud = r.key
			     and r.name = 'POLL_ADD')
	    and ((select count(*) from edges e where e.src = r.id and e.type = 'complete') != 1
		 or exists (select 1 from edges e where e.src = r.id and e.type = 'complete'
			     and e.confidence != 'observed'))")
[ -z "$bad" ] || fail "single-shot requests without exactly one observed complete edge: $(echo $bad)"

# The multishot request: one node, all its CQEs; reconstructed only as
# many as the trace has CQEs without a request pointer, none unknown.
bad=$(q "select m.ring || ':' || m.ud || ' ' || m.cqes || ' CQEs, ' || count(e.id) || ' complete edges, ' ||
		sum(e.confidence = 'reconstructed') || ' reconstructed for ' ||
		(select count(*) from noreq z where z.ud = m.ud and (select scope from truth_ring t
		  where t.ring = m.ring) like 'ring:' || z.ring || '#%') || ' CQEs without request, ' ||
		sum(e.confidence = 'unknown') || ' unknown'
	   from truth_multi m join req r on r.ring = m.ring and r.key = m.ud and r.name = 'POLL_ADD'
	   left join edges e on e.src = r.id and e.type = 'complete'
	  group by m.ring, m.ud
	 having count(distinct r.id) != 1 or count(e.id) != m.cqes or sum(e.confidence = 'unknown') != 0
	     or sum(e.confidence = 'reconstructed') !=
		(select count(*) from noreq z where z.ud = m.ud and (select scope from truth_ring t
		  where t.ring = m.ring) like 'ring:' || z.ring || '#%')")
[ -z "$bad" ] || fail "multishot: $(echo $bad)"
n=$(q "select count(*) from truth_multi m join req r on r.ring = m.ring and r.key = m.ud and r.name = 'POLL_ADD'")
[ "$n" = 2 ] || fail "$n multishot request nodes for 2 rings"
ncomplete=$(q "select count(*) from edges e join req r on r.id = e.src where e.type = 'complete'")
nobs=$(q "select count(*) from edges e join req r on r.id = e.src where e.type = 'complete' and e.confidence = 'observed'")
nmulti=$(q "select sum(cqes) from truth_multi")
nnoreq=$(wc -l <"$T/noreq")

# No request is joined across rings, by any edge.
n=$(q "select count(*) from edges e join nodes s on s.id = e.src join nodes d on d.id = e.dst
       where s.type = 'io_request' and d.type = 'io_request' and s.scope != d.scope")
[ "$n" = 0 ] || fail "$n edges between io_requests of different rings"

# Punts: one per IOSQE_ASYNC request, to an io-wq worker of the workload,
# and none for the others. Observed when the trace has the io-wq start
# (uring_work records); where the kernel refused that probe (an fentry:
# records_missing says uring_work), the analyzer can only take the worker
# from the completion, and says so ('reconstructed').
missing=$(kv records_missing "$T/t.cwt")
case ",$missing," in
*,uring_work:*) pconf="'observed', 'reconstructed'" phow="observed or reconstructed (no io-wq start: $missing)" ;;
*) pconf="'observed'" phow=observed ;;
esac
bad=$(q "select r.ring || ':' || r.key || ':' || r.name || '#' || r.generation || ' ' ||
		coalesce((select group_concat(e.confidence || '/' || coalesce(e.reason, '') || ' to ' ||
			  coalesce(w.name, w.key)) from edges e join nodes w on w.id = e.dst
			  where e.src = r.id and e.type = 'punt'), 'no punt')
	   from sub t join req r on r.id = t.node
	  where t.async = 1
	    and (select count(*) from edges e join nodes w on w.id = e.dst
		  where e.src = r.id and e.type = 'punt' and e.confidence in ($pconf)
		    and w.type = 'thread' and w.pid = $P and w.key != $S and w.name like 'iou-wrk-%') != 1")
[ -z "$bad" ] || fail "IOSQE_ASYNC requests without one $phow punt edge to an io-wq worker of pid $P: $(echo $bad)"
npunt=$(q "select count(*) from truth_sqe where async = 1")
n=$(q "select count(*) from edges e join req r on r.id = e.src where e.type = 'punt'")
[ "$n" = "$npunt" ] || fail "$n punt edges for $npunt IOSQE_ASYNC submissions"
workers=$(q "select count(distinct e.dst) from edges e join req r on r.id = e.src where e.type = 'punt'")

D=40
capture -q -F 0 --no-offcpu -o "$T/d.cwt" -- "$WL/uring" --defer "$T/dtruth" $D
DB=$T/d.db
"$AN" "$T/d.cwt" -o "$DB" >"$T/d.summary" 2>"$T/analyze.err" || { cat "$T/analyze.err" >&2; fail "analyze of the DEFER_TASKRUN trace failed"; }
read -r _ DP < <(grep '^pid ' "$T/dtruth") || fail "no pid line in the --defer ground truth"
reads=$(q "select count(*) from nodes where type = 'io_request' and name = 'READ' and pid = $DP")
[ "$reads" = $D ] || fail "DEFER_TASKRUN ring: $reads READ io_requests for $D submitted"
dedges=$(q "select count(*) from edges e join nodes r on r.id = e.src join nodes w on w.id = e.dst
             where e.type = 'punt' and r.type = 'io_request' and w.type = 'thread' and w.pid = $DP
               and w.name like 'iou-wrk-%'")
dall=$(q "select count(*) from edges where type = 'punt'")
[ "$dall" = "$dedges" ] || fail "DEFER_TASKRUN ring: $((dall - dedges)) punt edges to a thread that is not an io-wq worker of pid $DP"
nw=$(meta uring_punts_no_worker "$DB")
[ $((dedges + ${nw:-0})) = $D ] ||
	fail "DEFER_TASKRUN ring: $dedges punt edges and ${nw:-0} punts counted without a worker, for $D IOSQE_ASYNC READs"
[ "${nw:-0}" = 0 ] || grep -q "not joined: $nw io_uring punts" "$T/d.summary" ||
	fail "the summary does not say that $nw punts have no known worker: $(cat "$T/d.summary")"

echo "live/$NAME: 2 rings, $nsub submissions as $nsub generations in their own ring, $nlink links;" \
	"$ncomplete complete edges, $nobs observed, $((ncomplete - nobs)) reconstructed for" \
	"$nnoreq CQEs without request pointer ($nmulti multishot CQEs on 2 nodes); 0 joined across rings;" \
	"$npunt punts to $workers io-wq worker(s), $phow; DEFER_TASKRUN: $dedges punt edges," \
	"${nw:-0} punts counted without a worker, of $D"
