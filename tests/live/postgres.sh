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
#    woke the waiter (its request), with the waker another backend;
#  - by default the buffer probes are not attached, and the database says
#    so: no buffer hit (no buffer resource, no quiet wait), meta
#    usdt_probes_off naming both, capture.usdt_probes_deselected 2 (the
#    postgres binary's two); with --usdt-probes all, TXNS more
#    transactions make buffer hits (every page a statement touches is
#    read through the pool) and usdt_probes_off is empty.

. "$(dirname "$0")/../lib/live.bash" "$@"
. "$(dirname "$0")/../lib/pg.bash"

CLIENTS=4 TXNS=100
pg "$PGBIN/pgbench" -h "$PGDIR" -U postgres -i -s 1 -q postgres >"$T/init.log" 2>&1 ||
	{ cat "$T/init.log" >&2; fail "pgbench -i failed"; }
# pgbench under a capture of trace $1 with capture options $2...
traced_bench() { # trace [capture arguments...]
	start_capture "$1" -e sched,usdt -p "$PGPID" "${@:2}"
	pg "$PGBIN/pgbench" -h "$PGDIR" -U postgres -n -M simple -c $CLIENTS -t $TXNS postgres >"$T/bench.log" 2>&1 ||
		{ cat "$T/bench.log" >&2; fail "pgbench failed"; }
	kill -INT "$CP"
	wait "$CP" || fail "the capture exited $?"
	need_class usdt "$1"
	analyze "$1" "${1%.cwt}.db"
}
# Buffer-probe hits in database $DB: a page found in the pool is a quiet
# wait (only the buffer probes have one), a page read a buffer wait.
buffer_hits() {
	q "select (select value from meta where key = 'resource_waits_quiet')
		+ (select count(*) from resource_waits rw join nodes r on r.id = rw.resource
		   where r.scope like 'pid:%/buffer%')
		+ (select count(*) from nodes where type = 'resource' and scope like 'pid:%/buffer%')"
}
traced_bench "$T/t.cwt"
DB=$T/t.db
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

off=postgresql:buffer__read__start,postgresql:buffer__read__done
[ "$(meta usdt_probes_off "$DB")" = $off ] || fail "default: meta usdt_probes_off '$(meta usdt_probes_off "$DB")', expected $off"
[ "$(meta capture.usdt_probes_deselected "$DB")" = 2 ] ||
	fail "default: capture.usdt_probes_deselected $(meta capture.usdt_probes_deselected "$DB"), expected 2 (the postgres binary's buffer probes)"
b=$(buffer_hits)
[ "$b" = 0 ] || fail "default: $b buffer-probe hits in the database, expected none"
hits=$(meta usdt_hits "$DB")

traced_bench "$T/all.cwt" --usdt-probes all
DB=$T/all.db
[ "$(meta usdt_probes_off "$DB")" = "" ] || fail "--usdt-probes all: meta usdt_probes_off '$(meta usdt_probes_off "$DB")'"
[ "$(meta capture.usdt_probes_deselected "$DB")" = 0 ] || fail "--usdt-probes all: capture.usdt_probes_deselected $(meta capture.usdt_probes_deselected "$DB")"
ball=$(buffer_hits)
# Each of the 5 statements that touch a table reads at least one page.
[ "$ball" -ge $((CLIENTS * TXNS * 5)) ] || fail "--usdt-probes all: $ball buffer-probe hits for $((CLIENTS * TXNS)) transactions"
hall=$(meta usdt_hits "$DB")
[ "$hall" -gt "$hits" ] || fail "--usdt-probes all: $hall probe hits, no more than the default's $hits"
echo "live/$NAME: $n statement requests for $done_tx transactions; $named of $nw lock waits name the releasing query;" \
	"probe hits $hits by default (no buffer probe), $hall with --usdt-probes all ($ball buffer hits)"
