#!/bin/bash
# live/net: a thread woken by data arriving on a socket is woken by the
# packet, and the packet was sent by the peer thread. The workload
# (tests/workloads/tcp.c) runs N request/response round trips over
# loopback TCP between a client thread and a server thread, each sending
# only once its peer is asleep in recv, so each request wakes the server
# once and each response wakes the client once, none optional. In each
# direction:
#  - exactly N observed wake edges to the receiver whose src is a packet
#    node (scope 'skb') named 'tcp 127.0.0.1:SPORT > 127.0.0.1:DPORT',
#    each packet with an observed submit edge from the sending thread;
#  - no other wakeup of the receiver (its creator's at spawn aside): none
#    of unknown cause in softirq, none blamed on the interrupted thread;
#  - all of it again system-wide, where the capture writes a packet at
#    the first wakeup it raises of any task (docs/model.md §2.3), not only
#    a traced one's.

. "$(dirname "$0")/../lib/live.bash" "$@"

ROUNDS=300
run() { # system-wide?
	rm -f "$T/t.cwt" "$T/t.db"
	if [ "$1" = 1 ]; then
		start_capture "$T/t.cwt" -e sched,net
		"$WL/tcp" "$T/truth" $ROUNDS || fail "tcp workload failed"
		kill -INT "$CP"
		wait "$CP" || fail "system-wide capture exited $?"
		pids=()
	else
		capture -q -F 0 --no-offcpu -o "$T/t.cwt" -- "$WL/tcp" "$T/truth" $ROUNDS
	fi
	need_class net "$T/t.cwt"
	DB=$T/t.db
	analyze "$T/t.cwt" "$DB"
}

check() { # what receiver sender packet-name
	local what=$1 rx=$2 tx=$3 pname=$4 n bad parent other softirq
	n=$(q "select count(*) from edges e join nodes p on p.id = e.src
	       where e.dst = $rx and e.type = 'wake' and e.confidence = 'observed'
		 and p.type = 'packet' and p.scope = 'skb' and p.name = '$pname'
		 and (select count(*) from edges s where s.dst = p.id and s.type = 'submit'
		       and s.src = $tx and s.confidence = 'observed') = 1")
	[ "$n" = "$N" ] || fail "$what: $n observed wakes of the receiver by '$pname' packets submitted by the sender, for $N round trips"
	bad=$(q "select coalesce(p.name, '?') || ' submitted by ' ||
			coalesce((select group_concat(coalesce(t.type || ' ' || t.key, 'NULL'))
				    from edges s left join nodes t on t.id = s.src
				   where s.dst = p.id and s.type = 'submit'), 'nobody')
		   from edges e join nodes p on p.id = e.src
		  where e.dst = $rx and e.type = 'wake' and p.type = 'packet'
		    and not (p.name = '$pname' and (select count(*) from edges s where s.dst = p.id
			      and s.type = 'submit' and s.src = $tx and s.confidence = 'observed') = 1)")
	[ -z "$bad" ] || fail "$what: the receiver woken by other packets: $(echo "$bad" | sort | uniq -c | tr '\n' ';')"
	softirq=$(q "select count(*) from edges where dst = $rx and type = 'wake' and src is null
		     and confidence = 'unknown' and reason = 'softirq'")
	[ "$softirq" = 0 ] || fail "$what: $softirq wakes of the receiver of unknown cause in softirq"
	parent=$(q "select coalesce(max(src), -1) from edges where type = 'spawn' and dst = $rx")
	other=$(q "select e.type || ' ' || e.confidence || ' ' || coalesce(e.reason, '') || ' from ' ||
			  coalesce(s.type || ' ' || s.key, 'NULL')
		     from edges e left join nodes s on s.id = e.src
		    where e.dst = $rx and e.type in ('wake', 'fire')
		      and (s.type is not 'packet') and e.src is not $parent")
	[ -z "$other" ] || fail "$what: the receiver woken otherwise: $(echo "$other" | sort | uniq -c | tr '\n' ';')"
	n=$(q "select count(*) from edges where type = 'wake' and dst = $rx and src = $parent")
	[ "$n" -le 1 ] || fail "$what: $n wakeups of the receiver by its creator"
	n=$(q "select count(*) from edges e join nodes p on p.id = e.src
	       where e.dst = $rx and e.type = 'wake' and p.type = 'packet'")
	echo "$what $n/$N"
}
both() { # label
	read -r _ N < <(grep '^rounds ' "$T/truth") || fail "no rounds line in ground truth"
	read -r _ CPORT SPORT < <(grep '^addr ' "$T/truth") || fail "no addr line in ground truth"
	SRV=$(thread_node server "$T/truth") || exit 1
	CLI=$(thread_node client "$T/truth") || exit 1
	a=$(check "client -> server" "$SRV" "$CLI" "tcp 127.0.0.1:$CPORT > 127.0.0.1:$SPORT") || exit 1
	b=$(check "server -> client" "$CLI" "$SRV" "tcp 127.0.0.1:$SPORT > 127.0.0.1:$CPORT") || exit 1
	echo "$1: packet wakes $a, $b"
}
run 0
c=$(both COMMAND) || exit 1
run 1
w=$(both system-wide) || exit 1
echo "live/$NAME: $c; $w; each packet submitted by the peer thread; no other wakeup," \
	"none unknown in softirq"
