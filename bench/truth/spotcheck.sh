#!/bin/sh
# SPDX-License-Identifier: MIT
#
# spotcheck.sh TRUTH DB: a cross-check of truthload's truth file against a
# causeway database, by the rules of bench/truth/FORMAT.md, in sqlite3
# alone (independent of causeway-eval). Per MECH: the hops, how many have
# their cause node in the database (object rule: N(h), the dst of a CAUSE
# edge in [A0, A1] from SRC_TID's context with the right type, key and
# name), and how many have a correct claim:
#   direct  an EFFECT edge into DST_TID's thread node in [C0, C1] whose
#           src is in SRC_TID's context at its ts;
#   object  an EFFECT edge from N(h) in [C0, C1] (into DST_TID's thread
#           node unless DST_TID is '-'); a cancelled hop is right when
#           no EFFECT edge leaves N(h) at all;
#   wait    a resource_waits row of the resource (OBJ_NAME, OBJ_KEY)
#           whose waiter is DST_TID's thread node (or a request begun on
#           it), start_ns in [A0, C1], and whose waker is in SRC_TID's
#           context at its wake (its wake edge's ts).
# (correct counts cancelled hops as right when nothing came of them.) And
# the claims (direct and object rules; the wait rule's are not counted)
# and how many are wrong, as FORMAT.md defines them. Context (FORMAT.md):
# the thread node of SRC_TID, the runtime_task node SRC_TASK, or the
# request node SRC_REQ, alive then.
#
#   bench/truth/spotcheck.sh t.truth t.db
set -eu

if [ $# -ne 2 ] || [ ! -r "$1" ] || [ ! -r "$2" ]; then
	echo "usage: spotcheck.sh TRUTH DB" >&2
	exit 2
fi
truth=$1
db=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

pid=$(awk -F'\t' '$1 == "pid" { print $2; exit }' "$truth")
[ -n "$pid" ] || { echo "spotcheck: no pid line in $truth" >&2; exit 1; }
grep '^hop	' "$truth" | cut -f2- > "$tmp/hops.tsv" || true

# ctx NODE TS: NODE (an alias of nodes) is in the hop h's source context at TS.
ctx() {
	cat <<EOF
(($1.type = 'thread' AND $1.key = h.src_tid
    AND coalesce($1.start_ns, 0) <= $2 AND ($1.end_ns IS NULL OR $1.end_ns >= $2))
 OR ($1.type = 'runtime_task' AND h.src_task IS NOT NULL AND $1.key = h.src_task
    AND $1.scope = 'pid:$pid'
    AND coalesce($1.start_ns, 0) <= $2 AND ($1.end_ns IS NULL OR $1.end_ns >= $2))
 OR ($1.type = 'request' AND h.src_req IS NOT NULL AND $1.key = h.src_req
    AND $1.scope = 'pid:$pid'
    AND coalesce($1.start_ns, 0) <= $2 AND ($1.end_ns IS NULL OR $1.end_ns >= $2)))
EOF
}

sqlite3 -readonly "$db" <<EOF
.bail on
CREATE TEMP TABLE hop(hid INTEGER PRIMARY KEY, rid INTEGER, mech TEXT, rule TEXT,
  src_tid INTEGER, src_task INTEGER, src_req INTEGER, cause TEXT, obj_type TEXT,
  obj_key INTEGER, obj_name TEXT, a0 INTEGER, a1 INTEGER, effect TEXT, dst_tid INTEGER,
  c0 INTEGER, c1 INTEGER, flags TEXT);
.mode tabs
.import $tmp/hops.tsv hop
UPDATE hop SET src_task = NULLIF(src_task, '-'), src_req = NULLIF(src_req, '-'),
  obj_key = NULLIF(obj_key, '-'), obj_name = NULLIF(obj_name, '-'),
  dst_tid = NULLIF(dst_tid, '-'), flags = NULLIF(flags, '-');
CREATE INDEX temp.hop_dst ON hop(rule, dst_tid, c0);

-- The edges that can be causes (by type, ts) and effects (by type, ts
-- and by src), copied once with the indexes the checks need.
CREATE TEMP TABLE ce AS SELECT id, src, dst, type, ts FROM edges
 WHERE src IS NOT NULL AND type IN (SELECT cause FROM hop WHERE rule = 'object');
CREATE INDEX temp.ce_ts ON ce(type, ts);
CREATE TEMP TABLE ee AS SELECT id, src, dst, type, ts FROM edges
 WHERE src IS NOT NULL AND type IN (SELECT effect FROM hop);
CREATE INDEX temp.ee_ts ON ee(type, ts);
CREATE INDEX temp.ee_src ON ee(src, type, ts);
CREATE TEMP TABLE maxw AS SELECT coalesce(max(c1 - c0), 0) AS w FROM hop WHERE rule = 'direct';

-- object rule: the cause node N(h)
CREATE TEMP TABLE cause AS
SELECT h.hid,
  (SELECT e.dst FROM ce e INDEXED BY ce_ts JOIN nodes s ON s.id = e.src
     JOIN nodes o ON o.id = e.dst
    WHERE e.type = h.cause AND e.ts BETWEEN h.a0 AND h.a1
      AND o.type = h.obj_type
      AND (h.obj_key IS NULL OR o.key = h.obj_key)
      AND (h.obj_name IS NULL OR o.name = h.obj_name)
      AND $(ctx s e.ts)
    ORDER BY e.ts DESC, e.id DESC LIMIT 1) AS n
  FROM hop h WHERE h.rule = 'object';
CREATE INDEX temp.cause_n ON cause(n);

CREATE TEMP TABLE verdict AS
SELECT h.hid, h.mech, h.rule, instr(coalesce(h.flags, ''), 'cancelled') > 0 AS cancelled,
  c.n IS NOT NULL AS cause_found,
  CASE
  WHEN h.rule = 'direct' THEN EXISTS (
    SELECT 1 FROM ee e JOIN nodes d ON d.id = e.dst JOIN nodes s ON s.id = e.src
     WHERE e.type = h.effect AND e.ts BETWEEN h.c0 AND h.c1
       AND d.type = 'thread' AND d.key = h.dst_tid AND $(ctx s e.ts))
  WHEN h.rule = 'object' AND instr(coalesce(h.flags, ''), 'cancelled') > 0 THEN
    c.n IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ee e WHERE e.src = c.n AND e.type = h.effect)
  WHEN h.rule = 'object' THEN EXISTS (
    SELECT 1 FROM ee e JOIN nodes d ON d.id = e.dst
     WHERE e.src = c.n AND e.type = h.effect AND e.ts BETWEEN h.c0 AND h.c1
       AND (h.dst_tid IS NULL OR (d.type = 'thread' AND d.key = h.dst_tid)))
  WHEN h.rule = 'wait' THEN EXISTS (
    SELECT 1 FROM resource_waits w JOIN nodes r ON r.id = w.resource
      JOIN nodes wt ON wt.id = w.waiter JOIN nodes s ON s.id = w.waker
      LEFT JOIN edges we ON we.id = w.wake_edge
     WHERE r.type = 'resource' AND r.name = h.obj_name AND r.key = h.obj_key
       AND r.scope LIKE 'pid:$pid/%'
       AND ((wt.type = 'thread' AND wt.key = h.dst_tid)
            OR (wt.type = 'request' AND wt.tid = h.dst_tid AND wt.scope = 'pid:$pid'))
       AND w.start_ns BETWEEN h.a0 AND h.c1
       AND $(ctx s "coalesce(we.ts, w.end_ns, w.start_ns)"))
  END AS correct
  FROM hop h LEFT JOIN cause c ON c.hid = h.hid;

-- Claims (precision). direct: wakes into a hop's DST_TID in its window;
-- right when some direct hop into that thread holds it in its window with
-- the src in its context. object: EFFECT edges from some N(h), and EFFECT
-- edges in a hop's window from another node of its type and N(h)'s key
-- and scope (a join across reuse); right when some hop with that N holds
-- it in its window (with its DST_TID), and it is not cancelled.
CREATE TEMP TABLE claim AS
SELECT h.mech, h.rule, e.id AS eid, e.src, e.dst, e.ts
  FROM hop h JOIN ee e ON e.type = h.effect AND e.ts BETWEEN h.c0 AND h.c1
  JOIN nodes d ON d.id = e.dst
 WHERE h.rule = 'direct' AND d.type = 'thread' AND d.key = h.dst_tid
UNION
SELECT h.mech, h.rule, e.id, e.src, e.dst, e.ts
  FROM cause c JOIN hop h ON h.hid = c.hid JOIN ee e ON e.src = c.n AND e.type = h.effect
UNION
SELECT h.mech, h.rule, e.id, e.src, e.dst, e.ts
  FROM cause c JOIN hop h ON h.hid = c.hid JOIN nodes n ON n.id = c.n
  JOIN ee e ON e.type = h.effect AND e.ts BETWEEN h.c0 AND h.c1
  JOIN nodes o ON o.id = e.src AND o.type = h.obj_type AND o.key = n.key
                AND o.scope = n.scope AND o.id != n.id
  JOIN nodes d ON d.id = e.dst
 WHERE h.dst_tid IS NULL OR (d.type = 'thread' AND d.key = h.dst_tid);

CREATE TEMP TABLE claim_ok AS
SELECT k.mech, k.eid,
  CASE WHEN k.rule = 'direct' THEN EXISTS (
    SELECT 1 FROM nodes d JOIN hop h ON h.rule = 'direct' AND h.dst_tid = d.key
                       AND h.c0 BETWEEN k.ts - (SELECT w FROM maxw) AND k.ts
      JOIN nodes s ON s.id = k.src
     WHERE d.id = k.dst AND d.type = 'thread' AND k.ts <= h.c1 AND $(ctx s k.ts))
  ELSE EXISTS (
    SELECT 1 FROM cause c JOIN hop h ON h.hid = c.hid JOIN nodes d ON d.id = k.dst
     WHERE c.n = k.src AND k.ts BETWEEN h.c0 AND h.c1
       AND instr(coalesce(h.flags, ''), 'cancelled') = 0
       AND (h.dst_tid IS NULL OR (d.type = 'thread' AND d.key = h.dst_tid)))
  END AS ok
  FROM (SELECT min(mech) AS mech, min(rule) AS rule, eid, src, dst, ts FROM claim GROUP BY eid) k;

.mode column
.headers on
SELECT * FROM (
SELECT v.mech, v.rule, count(*) AS hops, sum(v.cancelled) AS cancelled,
  CASE WHEN v.rule = 'object' THEN sum(v.cause_found) END AS cause_found,
  sum(v.correct) AS correct,
  printf('%.1f', 100.0 * sum(v.correct) / count(*)) AS pct,
  (SELECT count(*) FROM claim_ok k WHERE k.mech = v.mech) AS claims,
  (SELECT count(*) FROM claim_ok k WHERE k.mech = v.mech AND NOT k.ok) AS wrong_claims
  FROM verdict v GROUP BY v.mech, v.rule
UNION ALL
SELECT 'ALL', '', count(*), sum(cancelled), sum(cause_found), sum(correct),
  printf('%.1f', 100.0 * sum(correct) / count(*)),
  (SELECT count(*) FROM claim_ok), (SELECT count(*) FROM claim_ok WHERE NOT ok) FROM verdict)
ORDER BY mech = 'ALL', mech;
EOF
