#!/bin/bash
# make demo-postgres: a stock Debian PostgreSQL 15, traced through its own
# USDT probes: a throwaway cluster (tests/lib/pg.bash: a temporary
# directory, a Unix socket only, removed at the end), pgbench at scale 1
# with 4 clients (they all update the one pgbench_branches row, so they
# wait for each other's row locks), captured with -e sched,usdt -p
# POSTMASTER; then which query blocked which, and for how long.
#   tests/demo-postgres.sh BUILD
set -eu
BUILD=$(cd "${1:?usage: tests/demo-postgres.sh BUILD}" && pwd)
[ "$(id -u)" = 0 ] || { echo "demo-postgres: causeway-capture needs root (BPF); run: sudo make demo-postgres" >&2; exit 2; }
NAME=demo-postgres
T=$(mktemp -d)
fail() { echo "demo-postgres: $*" >&2; exit 1; }
cleanup() { rm -rf "$T"; }
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/pg.bash
. "$top/tests/lib/pg.bash"
pg "$PGBIN/pgbench" -h "$PGDIR" -U postgres -i -s 1 -q postgres >/dev/null 2>&1 || fail "pgbench -i failed"

echo "== capture: causeway-capture -o pg.cwt -e sched,usdt -p $PGPID (the postmaster; backends follow)"
"$BUILD/causeway-capture" -q -F 0 --no-offcpu -e sched,usdt -p "$PGPID" -o "$T/pg.cwt" 2>"$T/cw.err" &
cp=$!
until [ -s "$T/pg.cwt" ]; do kill -0 $cp 2>/dev/null || fail "capture: $(cat "$T/cw.err")"; sleep 0.1; done
echo "== pgbench -c 4 -t 200 (simple protocol)"
pg "$PGBIN/pgbench" -h "$PGDIR" -U postgres -n -M simple -c 4 -t 200 postgres | grep -E 'processed|tps'
kill -INT $cp
wait $cp
echo
echo "== analyze: causeway-analyze pg.cwt"
"$BUILD/causeway-analyze" -o "$T/pg.db" "$T/pg.cwt"

show() { # title sql
	echo
	echo "== $1"
	echo "sqlite> $2"
	sqlite3 -column -header "$T/pg.db" "$2"
}
show "queries as requests of their backends" \
"select substr(name, 1, 50) as query, count(*) as n from nodes
  where type = 'request' group by 1 order by n desc limit 8;"
show "which query blocked which, and for how long (resource_waits_named: the longest lock waits)" \
"select substr(waiting_request, 1, 34) as waiting, resource_name as lock, duration_ns / 1000 as us,
        substr(waking_request, 1, 34) as released_by, confidence
   from resource_waits_named where resource_name like 'lock %'
  order by duration_ns desc limit 8;"
show "lock waits by the query that released them" \
"select substr(waking_request, 1, 40) as released_by, count(*) as waits, sum(duration_ns) / 1000 as waited_us
   from resource_waits_named where resource_name like 'lock %'
  group by 1 order by waited_us desc limit 6;"
