#!/bin/bash
# live/postgres: a stock Debian PostgreSQL 15, traced through its own USDT
# probes with no change to it (the built-in adapter). A throwaway cluster
# (tests/lib/pg.bash) runs pgbench's TPC-B-like script, CLIENTS clients x
# TXNS transactions each, simple protocol, at scale 1: every transaction
# updates the one pgbench_branches row, so transactions wait for each
# other's row locks. Checks:
#  - one request per executed statement of the script (7 per transaction),
#    named by its text, on the backends (children of the postmaster);
#  - lock waits (resource_waits on heavyweight locks) exist, and at least
#    80% of them name the query the waking backend was running when it
#    woke the waiter (its request), with the waker another backend.

. "$(dirname "$0")/../lib/live.bash" "$@"
. "$(dirname "$0")/../lib/pg.bash"

CLIENTS=4 TXNS=100
pg "$PGBIN/pgbench" -h "$PGDIR" -U postgres -i -s 1 -q postgres >"$T/init.log" 2>&1 ||
	{ cat "$T/init.log" >&2; fail "pgbench -i failed"; }
start_capture "$T/t.cwt" -e sched,usdt -p "$PGPID"
pg "$PGBIN/pgbench" -h "$PGDIR" -U postgres -n -M simple -c $CLIENTS -t $TXNS postgres >"$T/bench.log" 2>&1 ||
	{ cat "$T/bench.log" >&2; fail "pgbench failed"; }
kill -INT "$CP"
wait "$CP" || fail "the capture exited $?"
need_class adapter "$T/t.cwt"
DB=$T/t.db
analyze "$T/t.cwt" "$DB"
done_tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$T/bench.log")
[ "$done_tx" = $((CLIENTS * TXNS)) ] || fail "pgbench processed $done_tx transactions"

n=$(q "select count(*) from nodes where type = 'request' and scope = 'pid:' || pid
	and (name like 'UPDATE pgbench_accounts%' or name like 'SELECT abalance%'
	  or name like 'UPDATE pgbench_tellers%' or name like 'UPDATE pgbench_branches%'
	  or name like 'INSERT INTO pgbench_history%' or name = 'BEGIN;' or name = 'END;')")
[ "$n" = $((done_tx * 7)) ] || fail "$n requests named by the script's statements for $done_tx transactions x 7:
  $(q "select name, count(*) from nodes where type = 'request' group by 1 order by 2 desc limit 9" | tr '\n' ';')"
read -r nw named < <(q "select count(*), sum(k.type = 'request' and k.pid != w.pid)
	from resource_waits rw join nodes r on r.id = rw.resource join nodes w on w.id = rw.waiter
	left join nodes k on k.id = rw.waker where r.name like 'lock%'" | tr '|' ' ')
[ "$nw" -ge 10 ] || fail "$nw lock waits under $CLIENTS clients updating one row"
[ $((named * 100)) -ge $((nw * 80)) ] || fail "$named of $nw lock waits name the releasing backend's query:
  $(q "select coalesce(k.type || ' ' || k.name, 'NULL') || ' ' || rw.confidence || ' ' || coalesce(rw.reason, '')
	from resource_waits rw left join nodes k on k.id = rw.waker limit 5" | tr '\n' ';')"
echo "live/$NAME: $n statement requests for $done_tx transactions; $named of $nw lock waits name the releasing query"
