#!/bin/bash
# live/net_pid: with -p on a server, the client outside the traced set is
# named as the sender of the packets that wake the server (docs/model.md
# §2.3). The tcp workload's client runs in its own process, not a
# descendant of the server's, so only the server's is traced; N round
# trips, each request waking the server once (tests/workloads/tcp.c).
#  - exactly N observed wakes of the server by packets named 'tcp
#    127.0.0.1:CPORT > 127.0.0.1:SPORT', each with an observed submit edge
#    from the client's thread (at least 95% would be the issue's bar:
#    every one is the workload's), that thread and its process traced 0,
#    with no orphan spawn edge;
#  - no packet node for the responses: they wake only the untraced
#    client, so nothing about them is written;
#  - no wake of the server by a packet of unknown sender;
#  - CPU samples (-F 999) of the untraced client are only those taken
#    while a softirq delivered the server's packets: each is the packet's
#    work (node a packet), none the client's own;
#  - the capture counts what it left out: at least 2N packets received
#    (net_receipts), and as many net records as packet nodes
#    (net_records), fewer than received.

. "$(dirname "$0")/../lib/live.bash" "$@"

# The server thread exists once the client, forked twice, told it its
# tid; the intermediate process is gone by then.
server_up() { [ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" = 2 ]; }

ROUNDS=300
"$WL/tcp" "$T/truth" $ROUNDS "$T/go" &
WP=$!
pids+=("$WP")
wait_for 10 server_up "$WP" || fail "the workload's client process did not start"
start_capture "$T/t.cwt" -F 999 -p "$WP"
touch "$T/go"
wait "$WP" || fail "tcp workload failed"
wait_for 10 eval "! kill -0 $CP 2>/dev/null" || fail "capture still running 10 s after its target exited"
wait "$CP"
check_capture_rc $? "$T/capture.err"
pids=()
need_class net "$T/t.cwt"
DB=$T/t.db
analyze "$T/t.cwt" "$DB"
read -r _ N < <(grep '^rounds ' "$T/truth") || fail "no rounds line in ground truth"
read -r _ CPORT SPORT < <(grep '^addr ' "$T/truth") || fail "no addr line in ground truth"
read -r _ CPID < <(grep '^client_pid ' "$T/truth") || fail "no client_pid line in ground truth"
[ "$CPID" != "$WP" ] || fail "the client ran in the server's process"
SRV=$(thread_node server "$T/truth") || exit 1
CLI=$(thread_node client "$T/truth") || exit 1

req="tcp 127.0.0.1:$CPORT > 127.0.0.1:$SPORT"
n=$(q "select count(*) from edges e join nodes p on p.id = e.src
       where e.dst = $SRV and e.type = 'wake' and e.confidence = 'observed'
	 and p.type = 'packet' and p.name = '$req'
	 and (select count(*) from edges s where s.dst = p.id and s.type = 'submit'
	       and s.src = $CLI and s.confidence = 'observed') = 1")
[ "$n" = "$N" ] || fail "$n observed wakes of the server by '$req' packets sent by the client's thread, for $N round trips"
bad=$(q "select coalesce(p.name, '?') || ' from ' || coalesce(s.reason, 'a sender') || ' ' || coalesce(s.src, 'NULL')
	   from edges e join nodes p on p.id = e.src left join edges s on s.dst = p.id and s.type = 'submit'
	  where e.dst = $SRV and e.type = 'wake' and p.type = 'packet' and s.src is not $CLI")
[ -z "$bad" ] || fail "the server woken by packets not from the client: $(echo "$bad" | sort | uniq -c | tr '\n' ';')"
t=$(q "select t.traced || ' ' || t.pid || ' ' || p.traced || ' ' ||
	      (select count(*) from edges where dst = t.id and type = 'spawn')
	 from nodes t join nodes p on p.type = 'process' and p.key = t.pid where t.id = $CLI")
[ "$t" = "0 $CPID 0 0" ] || fail "client thread: traced, pid, its process's traced, spawn edges = '$t', expected '0 $CPID 0 0'"
resp=$(q "select count(*) from nodes where type = 'packet' and name = 'tcp 127.0.0.1:$SPORT > 127.0.0.1:$CPORT'")
[ "$resp" = 0 ] || fail "$resp packet nodes for responses that woke only the untraced client"
read -r csam cown < <(q "select count(*) || ' ' || coalesce(sum(n.type != 'packet'), 0) from samples s
	join nodes n on n.id = s.node where s.thread = $CLI and s.kind = 'cpu'")
[ "$cown" = 0 ] || fail "$cown of the untraced client's $csam CPU samples are not a packet's work"
recv=$(meta capture.net_receipts "$DB")
recs=$(meta capture.net_records "$DB")
pk=$(q "select count(*) from nodes where type = 'packet'")
[ "${recv:-0}" -ge $((2 * N)) ] || fail "net_receipts '$recv' for $((2 * N)) packets of the round trips"
[ "$recs" = "$pk" ] || fail "net_records '$recs', $pk packet nodes"
[ "$recs" -lt "$recv" ] || fail "net_records $recs of $recv received: nothing left out"
echo "live/$NAME: $n/$N wakes of the server by the client's packets, each sent by the untraced client thread (traced 0, process $CPID); no response packet written; $recs of $recv packets received written; $csam CPU samples in the client, all a packet's work"
