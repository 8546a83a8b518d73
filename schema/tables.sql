-- causeway SQLite schema v1 (contract section 4). Embedded into
-- causeway-analyze at build time. Indexes are created after the bulk load
-- (see the end of this file, after the marker line).
PRAGMA foreign_keys = OFF;

CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);

CREATE TABLE nodes(
  id         INTEGER PRIMARY KEY,
  type       TEXT NOT NULL,
  scope      TEXT NOT NULL,
  key        INTEGER NOT NULL,
  generation INTEGER NOT NULL,
  pid        INTEGER,
  tid        INTEGER,
  name       TEXT,
  start_ns   INTEGER,
  end_ns     INTEGER,
  start_seen INTEGER NOT NULL,
  -- 1: a task of the traced set (-p, COMMAND, or every task of a
  -- system-wide capture); 0: a task seen only at the other end of an
  -- edge with a traced one; NULL: not a task, or not known.
  traced     INTEGER);
-- (type, scope, key, generation) is unique: the index that says so is
-- built after the load, below, with the generations.

CREATE TABLE edges(
  id         INTEGER PRIMARY KEY,
  type       TEXT NOT NULL,
  src        INTEGER REFERENCES nodes(id),
  dst        INTEGER NOT NULL REFERENCES nodes(id),
  ts         INTEGER NOT NULL,
  cpu        INTEGER,
  source     TEXT NOT NULL,
  confidence TEXT NOT NULL,
  reason     TEXT,
  -- An edge raised in interrupt context: the tid of the task that the
  -- interrupt happened to interrupt. Context only, never the cause.
  interrupted_tid INTEGER,
  -- The address the handoff went through where it is not a node: the
  -- futex word (user address) of a reason 'futex' wake.
  addr       INTEGER);

CREATE TABLE stacks(id INTEGER PRIMARY KEY, depth INTEGER NOT NULL);

CREATE TABLE frames(
  id       INTEGER PRIMARY KEY,
  address  INTEGER NOT NULL,
  kernel   INTEGER NOT NULL,
  module   TEXT,
  build_id TEXT,
  function TEXT,
  file     TEXT,
  line     INTEGER,
  inlined  INTEGER NOT NULL);

CREATE TABLE stack_frames(
  stack    INTEGER NOT NULL REFERENCES stacks(id),
  position INTEGER NOT NULL,
  frame    INTEGER NOT NULL REFERENCES frames(id),
  PRIMARY KEY(stack, position));

CREATE TABLE samples(
  id     INTEGER PRIMARY KEY,
  node   INTEGER NOT NULL REFERENCES nodes(id),
  thread INTEGER NOT NULL REFERENCES nodes(id),
  ts     INTEGER NOT NULL,
  cpu    INTEGER,
  kind   TEXT NOT NULL,
  stack  INTEGER REFERENCES stacks(id),
  weight INTEGER NOT NULL,
  inclusion_probability REAL NOT NULL);

CREATE TABLE coverage_breaks(
  id          INTEGER PRIMARY KEY,
  start_ns    INTEGER,
  end_ns      INTEGER,
  cpu         INTEGER,
  stream      TEXT,
  lost_events INTEGER,
  reason      TEXT);

-- Every exec a thread did: the node keeps its identity across exec, and
-- its name is the last comm; this keeps the history.
CREATE TABLE execs(
  id       INTEGER PRIMARY KEY,
  node     INTEGER NOT NULL REFERENCES nodes(id),
  ts       INTEGER NOT NULL,
  comm     TEXT,
  filename TEXT);

-- What the reader reported about the file itself: damaged segments (by
-- sequence number and byte offset), skipped bytes, a truncated tail, a
-- missing final segment. The same lines the analyzer printed.
CREATE TABLE diagnostics(
  id      INTEGER PRIMARY KEY,
  level   TEXT NOT NULL,     -- info | warning | error
  message TEXT NOT NULL);

-- Readable views: an edge with both ends spelled out.
CREATE VIEW edges_named AS
  SELECT e.id, e.type, e.ts, e.cpu, e.source, e.confidence, e.reason,
         s.type AS src_type, s.key AS src_key, s.generation AS src_gen, s.name AS src_name,
         d.type AS dst_type, d.key AS dst_key, d.generation AS dst_gen, d.name AS dst_name
    FROM edges e LEFT JOIN nodes s ON s.id = e.src JOIN nodes d ON d.id = e.dst;

-- @@INDEXES@@ (everything below runs after the bulk load)

-- Before it, right after the load, the analyzer (db.c) numbers the
-- generations in the database rather than in the join, which would
-- otherwise keep a counter for every key it ever saw (unbounded memory on
-- a trace of millions of short-lived keys). Node ids are assigned when a
-- generation is born, so within one (type, scope, key) id order is birth
-- order and the numbering is exact. It does what this does, only rewriting
-- the rows that change, in one sorted scan (about twice as fast):
--   UPDATE nodes SET generation = g.gen
--     FROM (SELECT id, row_number() OVER (PARTITION BY type, scope, key ORDER BY id) - 1
--                  AS gen FROM nodes) AS g
--    WHERE nodes.id = g.id AND nodes.generation != g.gen;

-- The identity, unique. key before scope: queries name a type and a key
-- (a tid) far more often than a scope.
CREATE UNIQUE INDEX nodes_identity ON nodes(type, key, scope, generation);
CREATE INDEX nodes_tid ON nodes(type, tid);
CREATE INDEX edges_src ON edges(src);
-- The causes of a node, by type, in time order: one seek per step of the
-- README's wake chain (ORDER BY ts DESC LIMIT 1); also serves edges(dst).
CREATE INDEX edges_dst_type_ts ON edges(dst, type, ts);
-- The process tree (spawn edges in time order) without reading the
-- wakes: partial, so it costs only the spawn edges.
CREATE INDEX edges_spawn_ts ON edges(ts) WHERE type = 'spawn';
-- No index on edges(type, confidence): every query by type reads most of
-- the table anyway, and building it cost a quarter of the analyzer's time.
CREATE INDEX samples_node ON samples(node);
