# A throwaway PostgreSQL cluster for the live tests, sourced after
# live.bash: initdb in a temporary directory as the postgres user, listening
# only on a Unix socket in that directory (no TCP), stopped and removed at
# exit, pass or fail. Sets PGBIN, PGDIR (data and socket) and PGPID (the
# postmaster). Needs Debian's postgresql-15 (tests/deps.sh installs it).
PGBIN=/usr/lib/postgresql/15/bin
[ -x "$PGBIN/postgres" ] || fail "postgresql-15 is not installed ($PGBIN/postgres)"
id postgres >/dev/null 2>&1 || fail "no postgres user (postgresql-15 creates it)"
PGDIR=$(mktemp -d /tmp/causeway-pg.XXXXXX)
chown postgres: "$PGDIR"
pg_cleanup() {
	if [ -f "$PGDIR/data/postmaster.pid" ]; then
		runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDIR/data" -m immediate -w stop >/dev/null 2>&1
	fi
	rm -rf "$PGDIR"
}
# live.bash's cleanup runs too: chain them.
trap 'pg_cleanup; cleanup' EXIT
pg() { runuser -u postgres -- "$@"; }
pg "$PGBIN/initdb" -D "$PGDIR/data" -A trust -U postgres >"$T/initdb.log" 2>&1 ||
	{ cat "$T/initdb.log" >&2; fail "initdb failed"; }
pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -w -l "$PGDIR/log" \
	-o "-c listen_addresses='' -c unix_socket_directories='$PGDIR' -c fsync=off" start >/dev/null ||
	{ cat "$PGDIR/log" >&2; fail "the cluster did not start"; }
PGPID=$(head -1 "$PGDIR/data/postmaster.pid")
