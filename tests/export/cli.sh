#!/bin/bash
# causeway-export's command line and its output rules (docs/model.md §8,
# §7), on a database made from a fixture (no BPF, no other tool):
#  - exit 2 for a bad format, a missing argument, a --request that names
#    no request, dot without exactly one request, --since after --until,
#    an output that is a symlink, a FIFO or the database itself (also
#    through a hard link); the refused names are left as they were;
#  - exit 1 for a database that is not one (and nothing is written);
#  - an existing output is replaced only with --force; outputs are 0600;
#  - the database is not changed by an export;
#  - the folded file says what the database says: every reconstructed
#    CPU sample's line starts with its request's name and spells its
#    chain hop by hop (attribution.carry_edge, edges.carried_by), and the
#    microseconds add up to the database's estimate.
#   tests/export/cli.sh BUILD
set -u
BUILD=$(cd "${1:?usage: tests/export/cli.sh BUILD}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
EX=$BUILD/causeway-export
CHECK_NAME=export/cli
. "$top/tests/lib/check.bash"
EXPECT_PROG=$EX
. "$top/tests/lib/expect.bash"
"$BUILD/tests/fixturec" "$top/fixtures/attribution_chain.events" "$T/a.cwt" &&
	"$BUILD/causeway-analyze" -q "$T/a.cwt" || { echo "export/cli: cannot make the database" >&2; exit 1; }
cd "$T" || exit 1
sum=$(md5sum <a.db)

expect 2 "unknown format" -- svg a.db
expect 2 "" -- folded
expect 2 "no request named 'GET /nope'" -- folded a.db --request "GET /nope"
expect 2 "no request with id '1'" -- folded a.db --request 1
expect 2 "dot draws one request" -- dot a.db
expect 2 "is after --until" -- folded a.db --since 10 --until 5
expect 2 "not a time" -- folded a.db --since soon
ln -s target link.folded
expect 2 "symbolic link" -- folded a.db -o link.folded --force
[ -L link.folded ] && [ ! -e target ] || fail "the symlink or its target changed"
mkfifo fifo.folded
expect 2 "FIFO" -- folded a.db -o fifo.folded --force
ln a.db hard.db
expect 2 "" -- folded a.db -o hard.db --force
expect 2 "" -- folded a.db -o a.db --force
echo "not sqlite" >junk.db
expect 1 "not a causeway database" -- folded junk.db -o junk.folded
[ ! -e junk.folded ] || fail "a file was written from a database that is not one"
sqlite3 empty.db "create table t(x)"
expect 1 "not a causeway database" -- folded empty.db -o empty.folded

expect 0 "" -- folded a.db -q
[ -f a.folded ] || fail "no default output a.folded"
[ "$(stat -c %a a.folded)" = 600 ] || fail "a.folded is mode $(stat -c %a a.folded), want 600"
expect 2 "exists" -- folded a.db -q
expect 0 "" -- folded a.db -q --force
[ "$(md5sum <a.db)" = "$sum" ] || fail "the export changed the database"

# What the folded file says, against the database. The CPU estimate in us,
# per first frame: requests by name, the rest 'unknown: REASON' or
# 'no request: REASON'.
sqlite3 -separator ' ' a.db "
  select coalesce(r.name, case when a.task is not null then 'no request: ' else 'unknown: ' end
                          || coalesce(a.reason, 'none given')),
         cast(round(sum(s.weight / s.stack_probability) / 1000.0) as int)
    from samples s left join attribution a on a.sample = s.id left join nodes r on r.id = a.request
   where s.kind = 'cpu' and (s.stack is not null or s.stack_probability >= 1)
   group by 1 order by 1" >want
awk '{ w = $NF; $NF = ""; split($0, f, ";"); sub(/ $/, "", f[1]); sum[f[1]] += w }
     END { for (k in sum) print k, sum[k] }' a.folded | sort >got
sort want -o want
diff want got >/dev/null || fail "folded root frames and weights differ from the database:
$(diff want got)"
# The hops' words: each reconstructed CPU sample's request is the root of
# a line whose next frames are as many hops as its chain has edges.
sqlite3 a.db "
  with recursive hop(sample, depth, edge) as (
    select sample, 0, carry_edge from attribution where confidence = 'reconstructed'
    union all
    select h.sample, h.depth + 1, e.carried_by from hop h join edges e on e.id = h.edge
     where e.carried_by is not null)
  select r.name || '|' || count(*) from hop h join attribution a on a.sample = h.sample
    join nodes r on r.id = a.request join samples s on s.id = h.sample
   where s.kind = 'cpu' and a.task is null group by h.sample" | sort -u >chains
[ -s chains ] || fail "the fixture has no reconstructed CPU sample: the check checks nothing"
while IFS='|' read -r req len; do
	awk -v r="$req" -v n="$len" -F';' '$1 == r && NF > n + 0 {
	  ok = 1; for (i = 2; i <= n + 1; i++) if ($i !~ / from |->| submit| arm| queue| spawn/) ok = 0
	  if (ok) found = 1 } END { exit !found }' a.folded ||
		fail "no line of request '$req' with $len hop frames after it"
done <chains
# a chain's frames name the contexts: the fixture's request GET /a woke
# thread 'worker' from 'front'
grep -q "^GET /a;wake from front " a.folded || fail "no 'GET /a;wake from front' line"
grep -q "^GET /b;io_uring READ submit;io_uring READ -> wake " a.folded ||
	fail "no 'GET /b;io_uring READ submit;io_uring READ -> wake' line"

# --request and the window keep only what they name
expect 0 "" -- folded a.db -q -o b.folded --request "GET /b"
[ "$(cut -d';' -f1 b.folded | sort -u)" = "GET /b" ] || fail "--request 'GET /b' kept $(cut -d';' -f1 b.folded | sort -u)"
first=$(sqlite3 a.db "select max(ts) from samples")
expect 0 "" -- folded a.db -q -o late.folded --since "$first"
[ "$(wc -l <late.folded)" -le 1 ] || fail "--since the last sample kept $(wc -l <late.folded) lines"

[ $failed = 0 ] && echo "export/cli: all checks passed"
exit $failed
