-- causeway SQLite schema v1 (docs/model.md §4). Embedded into
-- causeway-analyze at build time. Indexes are created after the bulk load
-- (see the end of this file, after the marker line).
PRAGMA foreign_keys = OFF;

CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);

-- nodes, edges, samples and block_requests are views: each spells out
-- a table of rows that stores what repeats as a number (node_rows,
-- edge_rows, sample_rows, block_rows, below). Query the views, whose columns and values are
-- those of the contract; the row tables are how the database keeps them
-- at a few bytes a row, and can change. Each view takes INSERT (its
-- trigger codes the values) and DELETE too, for databases made by hand.
--
-- Codes (analyze/model.h's enums, whose order schema/nodes.def and
-- edges.def give; tests/test_db.c holds every CASE below to them):
--   node type   0 process, 1 thread, 2 runtime_task, 3 io_request,
--               4 work_item, 5 timer, 6 resource, 7 request, 8 packet,
--               9 block_request
--   edge type   0 spawn, 1 wake, 2 submit, 3 punt, 4 complete, 5 queue,
--               6 execute, 7 arm, 8 fire, 9 resume, 10 acquire,
--               11 release, 12 begin, 13 end
--   source      0 kernel, 1 runtime, 2 application, 3 inferred
--   confidence  0 observed, 1 reconstructed, 2 unknown
--               (an edge's type, confidence and source are one code,
--               edge_rows.code)
--   kind        0 cpu, 1 offcpu
-- Texts that repeat are kept once and named by id: a node's scope in
-- node_scopes (a scope such as 'ring:0x...#0' is shared by every request
-- of the ring), its name in node_names (a packet's name is its flow, 'tcp
-- 127.0.0.1:43046 > 127.0.0.1:16379', the same for every packet of a
-- connection), an edge's reason in edge_reasons, an attribution's in
-- attribution_reasons, a block request's disk, operation and flags in
-- block_kinds. A SQLite row pays a byte per column and one per
-- small integer (0 and 1 cost nothing), so a code or an id is one to
-- three bytes where the text was up to forty, once in the row and again
-- in each index on it. A scope has one id (its table is UNIQUE): the
-- identity (type, scope, key, generation) is unique by it. A name may
-- have more than one: names come from the trace, without bound, and the
-- analyzer remembers a bounded number of them (docs/model.md §4); a
-- name it has forgotten is written again under a new id. node_names has
-- no index on the name: most of its bytes would be in it, for names
-- mostly seen once (a query's text).
--
-- The column order of a row table puts the columns most often NULL last:
-- SQLite stores nothing for NULLs at the end of a row.
CREATE TABLE node_scopes(
  id    INTEGER PRIMARY KEY,
  scope TEXT NOT NULL UNIQUE);

CREATE TABLE node_names(
  id   INTEGER PRIMARY KEY,
  name TEXT NOT NULL);

CREATE TABLE node_rows(
  id         INTEGER PRIMARY KEY,
  type       INTEGER NOT NULL,
  key        INTEGER NOT NULL,
  scope      INTEGER NOT NULL REFERENCES node_scopes(id),
  generation INTEGER NOT NULL,
  start_seen INTEGER NOT NULL,
  start_ns   INTEGER,
  end_rel    INTEGER,
  pid        INTEGER,
  tid        INTEGER,
  name       INTEGER REFERENCES node_names(id),
  traced     INTEGER);

-- traced: 1, a task of the traced set (-p, COMMAND, or every task of a
-- system-wide capture); 0, a task seen only at the other end of an edge
-- with a traced one; NULL, not a task, or not known.
-- end_rel: end_ns - start_ns where start_ns is known, else end_ns. Most
-- objects live microseconds (a block request, a packet, a work item):
-- their end takes 2 to 4 bytes after their start, where a time since
-- boot takes 6.
-- (type, scope, key, generation) is unique: the index that says so is
-- built after the load, below, with the generations.
CREATE VIEW nodes AS
  SELECT n.id,
         CASE n.type WHEN 0 THEN 'process' WHEN 1 THEN 'thread' WHEN 2 THEN 'runtime_task'
                     WHEN 3 THEN 'io_request' WHEN 4 THEN 'work_item' WHEN 5 THEN 'timer'
                     WHEN 6 THEN 'resource' WHEN 7 THEN 'request' WHEN 8 THEN 'packet'
                     WHEN 9 THEN 'block_request' END
           AS type,
         (SELECT s.scope FROM node_scopes s WHERE s.id = n.scope) AS scope,
         n.key, n.generation, n.pid, n.tid,
         (SELECT m.name FROM node_names m WHERE m.id = n.name) AS name,
         n.start_ns, n.end_rel + coalesce(n.start_ns, 0) AS end_ns, n.start_seen, n.traced
    FROM node_rows n;

CREATE TRIGGER nodes_insert INSTEAD OF INSERT ON nodes BEGIN
  INSERT OR IGNORE INTO node_scopes(scope) VALUES (NEW.scope);
  INSERT INTO node_names(name) SELECT NEW.name WHERE NEW.name IS NOT NULL
     AND NOT EXISTS (SELECT 1 FROM node_names WHERE name = NEW.name);
  INSERT INTO node_rows(id, type, key, scope, generation, start_seen, start_ns, end_rel, pid,
                        tid, name, traced)
  VALUES (NEW.id,
          CASE NEW.type WHEN 'process' THEN 0 WHEN 'thread' THEN 1 WHEN 'runtime_task' THEN 2
                        WHEN 'io_request' THEN 3 WHEN 'work_item' THEN 4 WHEN 'timer' THEN 5
                        WHEN 'resource' THEN 6 WHEN 'request' THEN 7 WHEN 'packet' THEN 8
                        WHEN 'block_request' THEN 9 END,
          NEW.key, (SELECT id FROM node_scopes WHERE scope = NEW.scope), NEW.generation,
          NEW.start_seen, NEW.start_ns, NEW.end_ns - coalesce(NEW.start_ns, 0), NEW.pid, NEW.tid,
          (SELECT min(id) FROM node_names WHERE name = NEW.name), NEW.traced);
END;
CREATE TRIGGER nodes_delete INSTEAD OF DELETE ON nodes BEGIN
  DELETE FROM node_rows WHERE id = OLD.id;
END;

CREATE TABLE edge_reasons(
  id     INTEGER PRIMARY KEY,
  reason TEXT NOT NULL UNIQUE);

CREATE TABLE edge_rows(
  id         INTEGER PRIMARY KEY,
  code       INTEGER NOT NULL,
  dst        INTEGER NOT NULL REFERENCES node_rows(id),
  ts         INTEGER NOT NULL,
  src        INTEGER REFERENCES node_rows(id),
  cpu        INTEGER,
  reason     INTEGER REFERENCES edge_reasons(id),
  interrupted_tid INTEGER,
  addr       INTEGER,
  carried_by INTEGER REFERENCES edge_rows(id));

-- code: the type, confidence and source in one integer, type + 16 *
-- (confidence + 3 * source), for every column costs the row a byte of
-- its header: one byte for a kernel or runtime edge, where the three
-- columns took three. src NULL: the cause is unknown. interrupted_tid:
-- an edge raised in interrupt context, the tid of the task that the
-- interrupt happened to interrupt; context only, never the cause. addr: the address the handoff
-- went through where it is not a node: the futex word (user address) of
-- a reason 'futex' wake. carried_by: for an edge that handed a request
-- on to its dst (attribution, docs/model.md §6.1), the edge that had
-- handed that request to its src; NULL where the src was in the request
-- itself (an adapter interval, the request node) or the edge carried
-- none. Followed from attribution.carry_edge, it spells a reconstructed
-- attribution's chain edge by edge, newest first.
CREATE VIEW edges AS
  SELECT e.id,
         CASE e.code % 16 WHEN 0 THEN 'spawn' WHEN 1 THEN 'wake' WHEN 2 THEN 'submit'
                          WHEN 3 THEN 'punt' WHEN 4 THEN 'complete' WHEN 5 THEN 'queue'
                          WHEN 6 THEN 'execute' WHEN 7 THEN 'arm' WHEN 8 THEN 'fire'
                          WHEN 9 THEN 'resume' WHEN 10 THEN 'acquire' WHEN 11 THEN 'release'
                          WHEN 12 THEN 'begin' WHEN 13 THEN 'end' END AS type,
         e.src, e.dst, e.ts, e.cpu,
         CASE e.code / 48 WHEN 0 THEN 'kernel' WHEN 1 THEN 'runtime' WHEN 2 THEN 'application'
                          WHEN 3 THEN 'inferred' END AS source,
         CASE e.code / 16 % 3 WHEN 0 THEN 'observed' WHEN 1 THEN 'reconstructed'
                              WHEN 2 THEN 'unknown' END AS confidence,
         (SELECT r.reason FROM edge_reasons r WHERE r.id = e.reason) AS reason,
         e.interrupted_tid, e.addr, e.carried_by
    FROM edge_rows e;

CREATE TRIGGER edges_insert INSTEAD OF INSERT ON edges BEGIN
  INSERT OR IGNORE INTO edge_reasons(reason) VALUES (NEW.reason);
  INSERT INTO edge_rows(id, code, dst, ts, src, cpu, reason, interrupted_tid, addr, carried_by)
  VALUES (NEW.id,
          CASE NEW.type WHEN 'spawn' THEN 0 WHEN 'wake' THEN 1 WHEN 'submit' THEN 2
                        WHEN 'punt' THEN 3 WHEN 'complete' THEN 4 WHEN 'queue' THEN 5
                        WHEN 'execute' THEN 6 WHEN 'arm' THEN 7 WHEN 'fire' THEN 8
                        WHEN 'resume' THEN 9 WHEN 'acquire' THEN 10 WHEN 'release' THEN 11
                        WHEN 'begin' THEN 12 WHEN 'end' THEN 13 END
          + 16 * (CASE NEW.confidence WHEN 'observed' THEN 0 WHEN 'reconstructed' THEN 1
                                      WHEN 'unknown' THEN 2 END
                  + 3 * CASE NEW.source WHEN 'kernel' THEN 0 WHEN 'runtime' THEN 1
                                        WHEN 'application' THEN 2 WHEN 'inferred' THEN 3 END),
          NEW.dst, NEW.ts, NEW.src, NEW.cpu,
          (SELECT id FROM edge_reasons WHERE reason = NEW.reason), NEW.interrupted_tid,
          NEW.addr, NEW.carried_by);
END;
CREATE TRIGGER edges_delete INSTEAD OF DELETE ON edges BEGIN
  DELETE FROM edge_rows WHERE id = OLD.id;
END;

-- Every edge type the analyzer knows (schema/edges.def, written by
-- analyze/db.c), whether or not this trace has one: the views walk these
-- rather than a list of their own. carries: 1 where the edge carries
-- attribution, what its src works for to its dst (analyze/carry.h).
CREATE TABLE edge_types(
  type       TEXT PRIMARY KEY,
  carries    INTEGER NOT NULL);

-- The context plane (analyze/cls_sample.c). A stack is the sequence of
-- frames of one sample, leaf first (position 0): the kernel frames, then
-- the user frames. Frames and stacks are deduplicated: one row each when
-- first seen. The tables that remember them are bounded; when one is
-- full it is emptied (meta.frame_table_resets, stack_table_resets), and a
-- frame or stack seen again after that is written again under a new id:
-- group by the columns, not by id, to count exactly.
CREATE TABLE stacks(id INTEGER PRIMARY KEY, depth INTEGER NOT NULL);

-- address: kernel frames and user frames whose object was not found, the
-- address as sampled; symbolized user frames, the address in the object
-- (ELF vaddr: load bias removed); with --no-symbols (meta.symbols =
-- 'none'), every user frame's address as sampled, with the module and
-- build-id of its mapping. module: the path of the mapping that held the
-- address (each its own, where mappings share a build-id), '[kernel]', or
-- a kernel module as '[name]'; NULL when no mapping held the address.
-- function NULL: not symbolized. inlined = 1: an inlined call, inside the
-- frame that follows it in the stack.
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

-- node: the most specific node running on the thread at the sample (a
-- runtime task being polled, else the work item being executed, else the
-- thread). stack NULL: no frame was recorded.
-- weight, ns: cpu, the sampling period; offcpu, the blocked time, from the
-- switch-out to the same task's next switch-in (tid and witness: never a
-- reused tid). inclusion_probability: the probability that the row is
-- here: for cpu, the keep probability of the capture's sample budget (1
-- when every sample was kept); for offcpu, 1 where the capture writes
-- every wait (format 1.8: the budget takes only some of their stacks),
-- else that keep. So sum(weight / inclusion_probability) estimates the
-- whole, and the off-CPU time of a 1.8 trace is exact. stack_probability:
-- the probability that the row's stack was taken (its keep; equal to
-- inclusion_probability for cpu); an offcpu row whose stack the budget did
-- not take has stack NULL, and sums by stack are sum(weight /
-- stack_probability) over the rows with one (profile_functions).
-- weight_exact: 1 when the weight was measured; 0 for an offcpu sample
-- whose switch-in was not seen: the trace ended first (weight runs to
-- the last event: a lower bound), the analyzer's bound on waiting samples
-- pushed it out (to that moment: a lower bound), or its thread was seen
-- running again, or its tid running as another task, without a switch-in
-- (to that moment: the wait ended no later).
-- wake (offcpu): the wake or fire edge that ended the wait: the last one
-- into the thread in (ts, ts + weight]. NULL when none was seen there,
-- when the weight is not exact, and when a coverage break of the edges
-- (not of the sample ring) overlaps the wait, since the wake seen might
-- not be the one that ended it.
--
-- samples and attribution are views of one table, sample_rows: a
-- sample's attribution is one row per sample, kept in the sample's row
-- (attr_confidence, attr_reason, request, task, waker_request; NULL
-- attr_confidence: no attribution, as in a database made by hand with
-- no row for it). node is NULL there when it is the thread. stack_keep
-- is stack_probability times 2^32 (the capture's keep, docs/model.md
-- §4.2: an integer, which SQLite stores in 4 bytes where a fraction takes
-- 8; exact both ways), NULL when it is inclusion_probability.
CREATE TABLE sample_rows(
  id     INTEGER PRIMARY KEY,
  thread INTEGER NOT NULL REFERENCES node_rows(id),
  ts     INTEGER NOT NULL,
  kind   INTEGER NOT NULL,
  weight INTEGER NOT NULL,
  weight_exact INTEGER NOT NULL,
  inclusion_probability REAL NOT NULL,
  attr_confidence INTEGER,
  attr_reason INTEGER REFERENCES attribution_reasons(id),
  cpu    INTEGER,
  wake   INTEGER REFERENCES edge_rows(id),
  stack_keep REAL,
  stack  INTEGER REFERENCES stacks(id),
  node   INTEGER REFERENCES node_rows(id),
  request INTEGER REFERENCES node_rows(id),
  task   INTEGER REFERENCES node_rows(id),
  waker_request INTEGER REFERENCES node_rows(id),
  carry_edge INTEGER REFERENCES edge_rows(id));

CREATE VIEW samples AS
  SELECT s.id, coalesce(s.node, s.thread) AS node, s.thread, s.ts, s.cpu,
         CASE s.kind WHEN 0 THEN 'cpu' WHEN 1 THEN 'offcpu' END AS kind,
         s.stack, s.weight, s.inclusion_probability, s.weight_exact, s.wake,
         coalesce(s.stack_keep / 4294967296.0, s.inclusion_probability) AS stack_probability
    FROM sample_rows s;

CREATE TRIGGER samples_insert INSTEAD OF INSERT ON samples BEGIN
  INSERT INTO sample_rows(id, thread, ts, kind, weight, weight_exact, inclusion_probability,
                          cpu, wake, stack_keep, stack, node)
  VALUES (NEW.id, NEW.thread, NEW.ts,
          CASE NEW.kind WHEN 'cpu' THEN 0 WHEN 'offcpu' THEN 1 END,
          NEW.weight, NEW.weight_exact, NEW.inclusion_probability, NEW.cpu, NEW.wake,
          nullif(NEW.stack_probability, NEW.inclusion_probability) * 4294967296.0, NEW.stack,
          nullif(NEW.node, NEW.thread));
END;
CREATE TRIGGER samples_delete INSTEAD OF DELETE ON samples BEGIN
  DELETE FROM sample_rows WHERE id = OLD.id;
END;

-- attribution (docs/model.md §6.1): the request and runtime task each sample
-- worked for, one row per sample (analyze/carry.c).
--   observed       an adapter interval names them on the sample's thread
--                  (a request between begin and end, a task between poll
--                  begin and end; a task polled inside a request names
--                  both);
--   reconstructed  the request was carried to the thread over kernel
--                  handoffs from a context that belonged to it: a wake
--                  from a thread inside it, an io_uring completion of a
--                  request submitted in it, a work item queued in it, a
--                  timer armed in it, a task spawned in it; each handoff
--                  replaces what the thread carried before, and a carried
--                  request is believed only while it has not ended and
--                  no coverage break lies since the handoff.
--                  reason is the chain ('request > submit > wake'; '...'
--                  where older steps were dropped); a polled
--                  task's request through its spawn is reconstructed too,
--                  the task itself observed;
--   unknown        neither: request NULL, and reason says why (no
--                  interval and no handoff from a request; woken by an
--                  unknown cause, such as an interrupt with no known
--                  object; the request handed over had ended; a sample
--                  read past the reorder window).
-- Nothing is charged to a likely request. An off-CPU sample is charged to
-- the request its context was blocked in; when only a handoff said so,
-- only if what ended the wait was a handoff of that same request (a
-- worker that blocks after one request and is woken for the next waited
-- for neither). waker_request: for an off-CPU sample whose wake was seen,
-- the request the wake was a handoff of (observed or carried, and not
-- ended), which the blocked time can also be charged to as its cause;
-- NULL when none or unknown. carry_edge: for a reconstructed row, the last
-- handoff of its chain (the edge into the sample's context); its
-- edges.carried_by names the one before, and so on back to the request.
CREATE TABLE attribution_reasons(
  id     INTEGER PRIMARY KEY,
  reason TEXT NOT NULL UNIQUE);

CREATE VIEW attribution AS
  SELECT a.id AS sample, a.request, a.task,
         CASE a.attr_confidence WHEN 0 THEN 'observed' WHEN 1 THEN 'reconstructed'
                                WHEN 2 THEN 'unknown' END AS confidence,
         (SELECT r.reason FROM attribution_reasons r WHERE r.id = a.attr_reason) AS reason,
         a.waker_request, a.carry_edge
    FROM sample_rows a
   WHERE a.attr_confidence IS NOT NULL;

-- The sample's row must be there first.
CREATE TRIGGER attribution_insert INSTEAD OF INSERT ON attribution BEGIN
  SELECT RAISE(ABORT, 'attribution: no such sample')
   WHERE NOT EXISTS (SELECT 1 FROM sample_rows WHERE id = NEW.sample);
  INSERT OR IGNORE INTO attribution_reasons(reason) VALUES (NEW.reason);
  UPDATE sample_rows
     SET request = NEW.request, task = NEW.task, waker_request = NEW.waker_request,
         carry_edge = NEW.carry_edge,
         attr_confidence = CASE NEW.confidence WHEN 'observed' THEN 0
                                               WHEN 'reconstructed' THEN 1
                                               WHEN 'unknown' THEN 2 END,
         attr_reason = (SELECT id FROM attribution_reasons WHERE reason = NEW.reason)
   WHERE id = NEW.sample;
END;
CREATE TRIGGER attribution_delete INSTEAD OF DELETE ON attribution BEGIN
  UPDATE sample_rows
     SET request = NULL, task = NULL, waker_request = NULL, carry_edge = NULL,
         attr_confidence = NULL,
         attr_reason = NULL
   WHERE id = OLD.sample;
END;

-- A window of lost events (docs/model.md §5.7). reason is prose for
-- people ('ring full: timer', 'CQE overflow on ring 0x...'); class is
-- the class whose events were lost, from the class number the
-- accounting record carries (schema/classes.def), NULL where the break
-- is not one class's: file damage, a CQE overflow, a gap record's run
-- (it names no class), losses no gap record reported ('ring full:
-- losses not reported where', summed over the CPU's classes), a class
-- number the analyzer does not know, breaks of several classes
-- coarsened into one. Query class, never the reason's words.
CREATE TABLE coverage_breaks(
  id          INTEGER PRIMARY KEY,
  start_ns    INTEGER,
  end_ns      INTEGER,
  cpu         INTEGER,
  stream      TEXT,
  lost_events INTEGER,
  reason      TEXT,
  class       TEXT);

-- Objects that caused nothing, counted rather than written one row each
-- (docs/model.md §5.11, Timers): a timer that fired and woke no one,
-- queued no work, re-armed no timer. Neither its node nor its arm edge is
-- in nodes and edges; here, how many there were of each type, name (the
-- timer's function) and pid (of the arming thread; NULL where it was
-- armed in an interrupt, or unknown). Past 4,096 rows, one whose name
-- and pid have no row yet is counted in one row of its type with name and
-- pid NULL; a row already there goes on counting its own.
CREATE TABLE quiet_objects(
  type    TEXT NOT NULL,
  name    TEXT,
  pid     INTEGER,
  objects INTEGER NOT NULL);

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

-- The adapter plane (analyze/cls_adapter.c, docs/model.md §6). Nodes it makes:
--   runtime_task  scope 'pid:N' (the process that ran the probe), key the
--                 task id; task_spawn is a birth, so an id reused after
--                 task_exit is a new generation.
--   request       scope 'pid:N', key the request id (PostgreSQL: the
--                 address of the query text, which query__start and
--                 query__done both pass), name the request's name (the
--                 query text, at most 255 bytes).
--   resource      a resource is named by its kind and its identity, and
--                 two resources of different kinds may share an id, so
--                 the kind is part of the scope: 'pid:N/KIND', N the
--                 process whose resource it is, or, for what a server's
--                 processes share (PostgreSQL's locks, LWLocks, buffer
--                 pages), the server's pid: the parent process of the
--                 backend, from its fork in the trace ('pid:N/KIND' of
--                 the backend itself when that fork is not in the trace:
--                 then waits of two backends are never joined on one
--                 resource, rather than joined on a guess). key: the id
--                 (causeway's probes), or a 64-bit hash of a composite
--                 identity (a lock tag, a buffer page: tablespace,
--                 database, relation, fork, block; an LWLock tranche's
--                 name), whose whole value is in name ('buffer
--                 1663/5/1259/0/7'); name is the kind otherwise. Two
--                 composites with one hash are two nodes: the second
--                 goes in the scope 'pid:N/KIND/<its name>'. Resources
--                 have no birth: the first event naming one makes it
--                 (start_seen 0, no orphan edge), one generation until
--                 --max-live pushes it out.
-- Edges: spawn (parent task, else the thread -> task), wake (the running
-- node of the waking thread -> task), resume (task -> the thread that
-- polls it), begin (thread -> request), end (request -> thread), acquire
-- and release (the running node -> resource). A probe naming a task or
-- request with no live generation makes an orphan (src NULL, unknown):
-- 'orphan: spawn before attach' when the probe that would have shown its
-- birth was attached after it (or the program never made it), '... not
-- in trace (coverage break)' when loss lies between that attach and the
-- hit, '... probe not attached' when no such probe was; such an edge's
-- source is the plane whose birth is missing (runtime, application).
--
-- One row per wait between resource_wait_begin and _end (PostgreSQL:
-- lock__wait__*, lwlock__wait__*, buffer__read__*) on one thread:
--   waiter     the most specific node running on the thread at the
--              begin: the task being polled, else the request, else the
--              thread;
--   end_ns     NULL: the end was not seen (the trace ended, or the
--              analyzer's bounds pushed it out);
--   wake_edge  the last wake or fire edge into the waiting thread in
--              (start_ns, end_ns]: what ended the wait. NULL when none
--              was seen there (the wait did not block: a buffer found
--              in the pool), when the end was not seen, or when a
--              coverage break overlaps the wait (the wake seen might not
--              be the one that ended it). A wake that came while a wait
--              nested in this one was open (begun after its begin, ended
--              within it) is that wait's, not this one's: a PostgreSQL
--              backend's lock wait is ended by the grant, not by the
--              release of the LWLock it then waited for inside it. NULL
--              when no wake came outside the nested waits, or when one
--              came while a wait begun in it was open that was not seen
--              to end in it (docs/model.md §6, nested waits). So a wake
--              ends at most one wait. Where the resource's releases
--              are seen (resource_release; PostgreSQL's probes have
--              none), the release lets the waiter in, not the wake: the
--              wake is the last one from the thread of the resource's
--              last release, after it (a thread can sleep on something
--              else, and be woken by another, before it says its wait
--              is over: the mmap lock a uprobe waits for), and NULL
--              when that thread did not wake it (the waiter had not
--              slept yet; or, a lock that is not handed off, it was
--              woken, and a thread that never waited took the lock
--              before it ran and released it without a wake);
--   waker      the most specific node running in the waker's context at
--              that wake, recorded when the wake happened: the edge's
--              src (a task, a work item, a timer, a packet...), or, for
--              a thread, the request it was working on then. NULL when
--              the wake's cause is unknown (interrupt context). Where
--              releases are seen and no wake came from the releaser,
--              what ran where the last release in the wait was made
--              (reconstructed);
--   confidence observed: both ends seen and the wake's cause seen;
--              reconstructed: a coverage break overlaps the wait, the
--              wake edge itself is reconstructed, or the waker is the
--              last release's, without its wake ('let in by the last
--              release in the wait, no wake from it': for a lock
--              exact, for a resource of several units the release that
--              made room may be an earlier one); unknown: the end, the
--              wake or the waker is missing, and reason says which
--              ('wait end not in trace', 'no wake in wait', 'no release
--              in wait': releases are seen, none in the wait, 'waker
--              unknown', 'no wake in wait outside the waits nested in
--              it', 'wake not told apart from a wait begun in it', 'a
--              wait begun in it not followed (bounds)').
-- A wait end with no wait begun on that thread gives no row (its start
-- is unknown): meta.usdt_unpaired_ends counts it. Nor does a wait whose
-- end says nothing was waited for (a PostgreSQL buffer read that found
-- the page in the pool): meta.resource_waits_quiet counts those.
CREATE TABLE resource_waits(
  id          INTEGER PRIMARY KEY,
  resource    INTEGER NOT NULL REFERENCES nodes(id),
  waiter      INTEGER NOT NULL REFERENCES nodes(id),
  start_ns    INTEGER NOT NULL,
  end_ns      INTEGER,
  wake_edge   INTEGER REFERENCES edges(id),
  waker       INTEGER REFERENCES nodes(id),
  confidence  TEXT NOT NULL,
  reason      TEXT);

-- What a block request (nodes.type 'block_request') was, one row per
-- generation (an issue to the driver): its disk as major:minor, its
-- operation (READ, WRITE, FLUSH, DISCARD, WRITE_ZEROES, SECURE_ERASE, or
-- OPn), the request flags that tell a flush's part (PREFLUSH, FUA) and its
-- urgency (SYNC, META), comma-separated or NULL, its first sector and
-- bytes at the issue, and when it was issued. nodes.start_ns is its
-- insert (its submitter's), nodes.end_ns its completion: issue_ns -
-- start_ns is the time it queued, end_ns - issue_ns the device's.
--
-- A view, like nodes: a disk, an operation and its flags are the same
-- few texts for every request (an fsync'ing writer issues a WRITE and a
-- FLUSH of one disk, each with the same flags, thousands of times a
-- second), so a row names them by the id of a block_kinds row, and the
-- view spells them out. The analyzer remembers a bounded number of kinds
-- (db.c): a kind it has forgotten is written again under a new id, which
-- the view does not show.
CREATE TABLE block_kinds(
  id    INTEGER PRIMARY KEY,
  dev   TEXT NOT NULL,
  op    TEXT NOT NULL,
  flags TEXT);

-- issue_rel: issue_ns - the node's start_ns (its insert), 0 where that is
-- not known: the dispatch follows the insert by micro- to milliseconds,
-- 1 to 3 bytes where a time is 6 (a sixth of the table under fio, 0.3 MB
-- of its 65,000 requests in 5 s). A node's start_ns is set at its birth,
-- before its issue, and never after.
CREATE TABLE block_rows(
  node      INTEGER PRIMARY KEY REFERENCES node_rows(id),
  kind      INTEGER NOT NULL REFERENCES block_kinds(id),
  sector    INTEGER NOT NULL,
  bytes     INTEGER NOT NULL,
  issue_rel INTEGER NOT NULL);

CREATE VIEW block_requests AS
  SELECT b.node,
         (SELECT k.dev FROM block_kinds k WHERE k.id = b.kind) AS dev,
         (SELECT k.op FROM block_kinds k WHERE k.id = b.kind) AS op,
         (SELECT k.flags FROM block_kinds k WHERE k.id = b.kind) AS flags,
         b.sector, b.bytes,
         b.issue_rel + coalesce((SELECT n.start_ns FROM node_rows n WHERE n.id = b.node), 0)
           AS issue_ns
    FROM block_rows b;

CREATE TRIGGER block_requests_insert INSTEAD OF INSERT ON block_requests BEGIN
  INSERT INTO block_kinds(dev, op, flags) SELECT NEW.dev, NEW.op, NEW.flags
   WHERE NOT EXISTS (SELECT 1 FROM block_kinds WHERE dev = NEW.dev AND op = NEW.op
                                                 AND flags IS NEW.flags);
  INSERT INTO block_rows(node, kind, sector, bytes, issue_rel)
  VALUES (NEW.node, (SELECT min(id) FROM block_kinds WHERE dev = NEW.dev AND op = NEW.op
                                                     AND flags IS NEW.flags),
          NEW.sector, NEW.bytes,
          NEW.issue_ns - coalesce((SELECT start_ns FROM node_rows WHERE id = NEW.node), 0));
END;
CREATE TRIGGER block_requests_delete INSTEAD OF DELETE ON block_requests BEGIN
  DELETE FROM block_rows WHERE node = OLD.node;
END;

-- Each wait spelled out: who waited, on what, for how long, who let it go.
-- waiting_request / waking_request: the query or request name when the
-- waiter / waker is a request node; NULL when it is a task or a thread
-- (what a task was doing for a request is not guessed here).
CREATE VIEW resource_waits_named AS
  SELECT w.id, w.start_ns, w.end_ns, w.end_ns - w.start_ns AS duration_ns,
         r.name AS resource_name, r.scope AS resource_scope, r.key AS resource_key,
         wt.type AS waiter_type, wt.key AS waiter_key, wt.pid AS waiter_pid,
         CASE WHEN wt.type = 'request' THEN wt.name END AS waiting_request,
         wk.type AS waker_type, wk.key AS waker_key, wk.pid AS waker_pid,
         CASE WHEN wk.type = 'request' THEN wk.name END AS waking_request,
         w.wake_edge, e.ts AS wake_ns, w.confidence, w.reason
    FROM resource_waits w JOIN nodes r ON r.id = w.resource JOIN nodes wt ON wt.id = w.waiter
    LEFT JOIN nodes wk ON wk.id = w.waker LEFT JOIN edges e ON e.id = w.wake_edge;

-- The kind of each resource node: 'lock', 'lwlock', 'buffer', or the
-- string a program's resource probes name. Read from the scope, 'pid:N/KIND',
-- or 'pid:N/KIND/NAME' for the second of two composite identities with
-- one hash (above), not cut out of the name: a program's kind may hold a
-- space or a '/'. NULL where the scope holds no kind (a database made by
-- hand). export/waits.c reads it the same way, for databases made before
-- this view.
CREATE VIEW resource_kinds AS
  SELECT id AS resource,
         CASE WHEN instr(scope, '/') = 0 THEN NULL
              WHEN k = name OR substr(k, -length(name) - 1) IS NOT '/' || name THEN k
              ELSE substr(k, 1, length(k) - length(name) - 1) END AS kind
    FROM (SELECT id, scope, coalesce(name, '') AS name,
                 substr(scope, instr(scope, '/') + 1) AS k
            FROM nodes WHERE type = 'resource');

-- A node as one string that never reads like another kind of node: a
-- thread is "name (tid N)", a process "name (pid N)", anything else its
-- type then its name, "work_item flush_to_ldisc", "block_request WRITE
-- 254:0" (a work item's tid is the thread that queued it, which printed
-- as "flush_to_ldisc (20975)" read like a thread). Unnamed: the key
-- stands in for the name.
CREATE VIEW node_labels AS
  SELECT n.id AS node,
         CASE n.type
           WHEN 'thread' THEN coalesce(n.name || ' ', '') || '(tid ' || n.key || ')'
           WHEN 'process' THEN coalesce(n.name || ' ', '') || '(pid ' || n.key || ')'
           ELSE n.type || ' ' || coalesce(n.name, printf('0x%x', n.key)) END AS label
    FROM nodes n;

-- Readable views: an edge with both ends spelled out.
CREATE VIEW edges_named AS
  SELECT e.id, e.type, e.ts, e.cpu, e.source, e.confidence, e.reason,
         s.type AS src_type, s.key AS src_key, s.generation AS src_gen, s.name AS src_name,
         d.type AS dst_type, d.key AS dst_key, d.generation AS dst_gen, d.name AS dst_name,
         sl.label AS src_label, dl.label AS dst_label
    FROM edges e LEFT JOIN nodes s ON s.id = e.src JOIN nodes d ON d.id = e.dst
    LEFT JOIN node_labels sl ON sl.node = e.src JOIN node_labels dl ON dl.node = e.dst;

-- Every frame of every sampled stack, leaf first: one row per (sample,
-- position).
CREATE VIEW sample_frames AS
  SELECT s.id AS sample, s.kind, s.thread, s.node, s.ts, sf.position, f.id AS frame,
         f.kernel, f.function, f.file, f.line, f.inlined, f.module, f.build_id, f.address
    FROM samples s JOIN stack_frames sf ON sf.stack = s.stack JOIN frames f ON f.id = sf.frame;

-- A flat profile by function: self is the leaf frame of each stack (the
-- innermost inlined call where there is one), total any frame (a
-- function counted once per sample however often it recurs). Weights are
-- estimates of the whole: sum(weight / stack_probability), in ns: a
-- stack the budget took stands for 1 / stack_probability of them.
-- An unsymbolized frame counts under function NULL, per module.
CREATE VIEW profile_functions AS
  WITH per AS (
    SELECT s.id, s.kind, s.weight * 1.0 / s.stack_probability AS w,
           f.function, f.module, min(sf.position) AS pos
      FROM samples s JOIN stack_frames sf ON sf.stack = s.stack JOIN frames f ON f.id = sf.frame
     GROUP BY s.id, f.function, f.module)
  SELECT function, module, kind,
         sum(CASE WHEN pos = 0 THEN w ELSE 0 END) AS self_weight,
         sum(w) AS total_weight,
         sum(pos = 0) AS self_samples, count(*) AS samples
    FROM per GROUP BY function, module, kind;

-- Blocked time by what ended it (the src of each off-CPU sample's wake
-- edge), per kind of waker and the thread that waited, one row each:
--   waker_type      the waker's node type: thread, timer, work_item,
--                   io_request, packet, block_request, runtime_task...;
--                   NULL when the cause is unknown
--   waker_name      a thread: its label (node_labels: 'name (tid N)'), a
--                   row per thread; anything else: its name, the rows of
--                   one type and name summed (every packet of a flow, 'tcp
--                   127.0.0.1:43046 > 127.0.0.1:16379'; every expiry of
--                   'hrtimer_wakeup'; every WRITE to one disk)
--   waker_process   the waker's pid, where known: a thread's, a packet's
--                   sender's, the submitter's of a request or a work item
--   thread, thread_name   the waiting thread (node id, name)
--   samples, blocked_ns   the waits, and their time (weight /
--                   inclusion_probability: exact, docs/model.md §2.4)
--   reason          why the cause is unknown, on the rows with waker_type
--                   NULL: the wake edge's reason when a wake was seen with
--                   src NULL ('softirq', 'hardirq', 'orphan: ...'); 'wait
--                   end not seen' (weight_exact = 0); 'no wake seen' (none
--                   in the wait, or a coverage break of the edges overlaps
--                   it: samples.wake). NULL on the other rows.
-- One pass over the samples, grouped once: a thread waker is grouped by
-- its node id (no text built per sample), an object by its name. A WHERE
-- on thread reaches samples(thread, ts) (samples_thread).
CREATE VIEW offcpu_by_waker AS
  SELECT w.type AS waker_type,
         CASE w.type WHEN 'thread' THEN l.label ELSE w.name END AS waker_name,
         w.pid AS waker_process, s.thread, t.name AS thread_name, count(*) AS samples,
         sum(s.weight * 1.0 / s.inclusion_probability) AS blocked_ns,
         CASE WHEN e.src IS NOT NULL THEN NULL
              WHEN e.id IS NOT NULL THEN e.reason
              WHEN s.weight_exact = 0 THEN 'wait end not seen'
              ELSE 'no wake seen' END AS reason
    FROM samples s JOIN nodes t ON t.id = s.thread
    LEFT JOIN edges e ON e.id = s.wake LEFT JOIN nodes w ON w.id = e.src
    LEFT JOIN node_labels l ON l.node = e.src
   WHERE s.kind = 'offcpu'
   GROUP BY s.thread, w.type, CASE w.type WHEN 'thread' THEN e.src ELSE w.name END, w.pid,
            8;

-- What a sample's time went to: 'cpu' for a CPU sample; for an off-CPU
-- one, 'resource_wait' when it lies in a resource wait of its thread (or
-- of the request or task waiting), else by what ended the wait (the src
-- of its wake edge): 'io_uring' (an io_request), 'workqueue' (a work
-- item), 'timer', 'net' (a packet), 'block' (a block request's
-- completion), 'futex' (a futex wake), 'wake'
-- (another thread, by other means); 'unknown' when the wake was not seen
-- or its cause is unknown.
-- Whether a sample lies in a resource wait is asked by seeks, not by
-- reading every earlier wait of the waiter (which made the profile
-- exports quadratic in a thread's waits; export/waits.c finds the wait
-- itself the same way): a wait that holds the sample's time is the
-- latest begun of its waiter at or before it, or else it holds the begin
-- of another (that latest one); such an outer wait, if it ended, is at
-- most the longest outer wait long (one range of
-- resource_waits_waiter), and if it did not end it is in
-- resource_waits_open.
CREATE VIEW sample_mechanism AS
  SELECT s.id AS sample,
         CASE WHEN s.kind = 'cpu' THEN 'cpu'
              WHEN (SELECT coalesce(w.end_ns > s.ts, 1) FROM resource_waits w
                     WHERE w.waiter = s.thread AND w.start_ns <= s.ts
                     ORDER BY w.start_ns DESC, w.id DESC LIMIT 1) = 1
                OR (SELECT coalesce(w.end_ns > s.ts, 1) FROM resource_waits w
                     WHERE w.waiter = a.request AND w.start_ns <= s.ts
                     ORDER BY w.start_ns DESC, w.id DESC LIMIT 1) = 1
                OR (SELECT coalesce(w.end_ns > s.ts, 1) FROM resource_waits w
                     WHERE w.waiter = a.task AND w.start_ns <= s.ts
                     ORDER BY w.start_ns DESC, w.id DESC LIMIT 1) = 1
                OR EXISTS (SELECT 1 FROM resource_waits w
                            WHERE w.waiter IN (s.thread, a.request, a.task)
                              AND w.start_ns <= s.ts
                              AND w.start_ns >= s.ts -
                                  (SELECT max(o.end_ns - o.start_ns) FROM resource_waits o
                                    WHERE o.end_ns IS NOT NULL
                                      AND EXISTS (SELECT 1 FROM resource_waits i
                                                   WHERE i.waiter = o.waiter
                                                     AND i.start_ns >= o.start_ns
                                                     AND (i.start_ns > o.start_ns OR i.id > o.id)
                                                     AND i.start_ns < o.end_ns))
                              AND w.end_ns > s.ts)
                OR EXISTS (SELECT 1 FROM resource_waits w
                            WHERE w.waiter IN (s.thread, a.request, a.task)
                              AND w.end_ns IS NULL AND w.start_ns <= s.ts) THEN 'resource_wait'
              WHEN e.src IS NULL THEN 'unknown'
              WHEN e.reason = 'futex' THEN 'futex'
              WHEN n.type = 'io_request' THEN 'io_uring'
              WHEN n.type = 'work_item' THEN 'workqueue'
              WHEN n.type = 'timer' THEN 'timer'
              WHEN n.type = 'packet' THEN 'net'
              WHEN n.type = 'block_request' THEN 'block'
              ELSE 'wake' END AS mechanism
    FROM samples s LEFT JOIN attribution a ON a.sample = s.id
    LEFT JOIN edges e ON e.id = s.wake LEFT JOIN nodes n ON n.id = e.src;

-- Per request, its time by mechanism (sample_mechanism), estimated from
-- the samples charged to it (weight / inclusion_probability, ns):
-- cpu_ns on CPU, blocked_ns off CPU, and how much of it is observed or
-- reconstructed (attribution.confidence). Samples that no request could
-- be named for are not here: attribution_coverage says how much that is.
CREATE VIEW request_cost AS
  SELECT a.request, r.name AS request_name, m.mechanism,
         count(*) AS samples,
         sum(CASE WHEN s.kind = 'cpu' THEN s.weight / s.inclusion_probability ELSE 0 END)
           AS cpu_ns,
         sum(CASE WHEN s.kind = 'offcpu' THEN s.weight / s.inclusion_probability ELSE 0 END)
           AS blocked_ns,
         sum(CASE WHEN a.confidence = 'observed' THEN s.weight / s.inclusion_probability
                  ELSE 0 END) AS observed_ns,
         sum(CASE WHEN a.confidence = 'reconstructed' THEN s.weight / s.inclusion_probability
                  ELSE 0 END) AS reconstructed_ns
    FROM attribution a JOIN samples s ON s.id = a.sample
    JOIN sample_mechanism m ON m.sample = s.id JOIN nodes r ON r.id = a.request
   WHERE a.request IS NOT NULL
   GROUP BY a.request, m.mechanism;

-- The exact central 95% limits of a Poisson mean given a count n
-- (Garwood's): low is the mean at which P(X >= n) = 0.025, high the mean
-- at which P(X <= n) = 0.025 (tests/test_db.c checks every row against
-- these sums). Every n up to 32, then n = 32 * 2^(k/2) up to 2^34.5. For
-- a count between two rows, request_summary scales the row below by
-- count / its n: both limits lie further from the count than the exact
-- ones, the interval at most 1.2 times as wide. A table, not a formula:
-- SQLite's square root is a build option the reader's sqlite3 may lack.
CREATE TABLE poisson_limits(n INTEGER PRIMARY KEY, low REAL NOT NULL, high REAL NOT NULL);
INSERT INTO poisson_limits(n, low, high) VALUES
  (0, 0.0, 3.688879454), (1, 0.02531780798, 5.571643391), (2, 0.2422092785, 7.224687668),
  (3, 0.6186721229, 8.76727307), (4, 1.089865374, 10.24158868), (5, 1.62348639, 11.66833208),
  (6, 2.201894253, 13.05947402), (7, 2.814363052, 14.42267536), (8, 3.453832177, 15.76318922),
  (9, 4.115373097, 17.08480345), (10, 4.795388696, 18.39035604),
  (11, 5.491160367, 19.68203851), (12, 6.200575109, 20.96158505),
  (13, 6.921952491, 22.23039592), (14, 7.653930276, 23.48962112),
  (15, 8.395386133, 24.74021887), (16, 9.145382454, 25.9829976), (17, 9.90312647, 27.21864682),
  (18, 10.66794078, 28.44776027), (19, 11.43924116, 29.67085357),
  (20, 12.21651959, 30.8883779), (21, 12.99933098, 32.10073073),
  (22, 13.78728287, 33.30826439), (23, 14.58002704, 34.51129289),
  (24, 15.37725285, 35.71009759), (25, 16.17868185, 36.9049317),
  (26, 16.98406322, 38.09602408), (27, 17.79317013, 39.28358245),
  (28, 18.60579666, 40.46779594), (29, 19.42175514, 41.64883744),
  (30, 20.24087402, 42.82686539), (31, 21.06299598, 44.0020255),
  (32, 21.88797631, 45.17445208), (45, 32.82330879, 60.2135405),
  (64, 49.28779855, 81.72657121), (91, 73.2675235, 111.7278349),
  (128, 106.7873338, 152.1924184), (181, 155.590925, 209.3754052),
  (256, 225.598202, 289.3567822), (362, 325.6651397, 401.2802737),
  (512, 468.6056942, 558.3316415), (724, 672.2162108, 778.7143196),
  (1024, 962.2336117, 1088.691181), (1448, 1374.369908, 1524.550054),
  (2048, 1960.253074, 2138.662818), (2896, 2791.47585, 3003.436618),
  (4096, 3971.512128, 4223.397456), (5793, 5644.773092, 5944.134065),
  (8192, 8015.553355, 8371.351761), (11585, 11374.99069, 11797.91271),
  (16384, 16134.0731, 16636.82885), (23170, 22872.60854, 23470.2922),
  (32768, 32414.15672, 33124.74299), (46341, 45920.02729, 46764.87156),
  (65536, 65035.19704, 66039.70109), (92682, 92086.2618, 93280.63573),
  (131072, 130363.3649, 131783.5321), (185364, 184521.1062, 186209.7903),
  (262144, 261141.4459, 263149.4503), (370728, 369535.5756, 371923.3203),
  (524288, 522869.7819, 525709.1138), (741455, 739768.2658, 743144.6296),
  (1048576, 1046569.944, 1050584.951), (1482910, 1480524.205, 1485298.69),
  (2097152, 2094314.616, 2099992.279), (2965821, 2962446.584, 2969198.311),
  (4194304, 4190290.941, 4198319.954), (5931642, 5926869.462, 5936417.432),
  (8388608, 8382932.285, 8394286.61), (11863283, 11856533.22, 11870035.67),
  (16777216, 16769188.93, 16785245.96), (23726566, 23717019.98, 23736114.92),
  (33554432, 33543079.62, 33565787.27), (47453133, 47439632.49, 47466636.4),
  (67108864, 67092808.92, 67124921.97), (94906266, 94887173.01, 94925361.89),
  (134217728, 134195022.3, 134240436.6), (189812531, 189785529.0, 189839535.9),
  (268435456, 268403344.9, 268467570.0), (379625062, 379586875.1, 379663251.8),
  (536870912, 536825499.7, 536916327.2), (759250125, 759196120.1, 759304132.8),
  (1073741824, 1073677601.0, 1073806050.0), (1518500250, 1518423875.0, 1518576628.0),
  (2147483648, 2147392822.0, 2147574477.0), (3037000500, 3036892489.0, 3037108514.0),
  (4294967296, 4294838849.0, 4295095746.0), (6074001000, 6073848249.0, 6074153753.0),
  (8589934592, 8589752940.0, 8590116247.0), (12148002000, 1.214778598e+10, 1.214821803e+10),
  (17179869184, 1.717961229e+10, 1.718012608e+10),
  (24296004000, 2.42956985e+10, 2.42963095e+10);

-- Per request, every request node, with or without a sample charged to
-- it (docs/model.md §6.1):
--   start_ns, end_ns, wall_ns   its begin and end edges (NULL when one
--                   was not seen), exact
--   thread          the thread it ran on (its begin edge's src, else its
--                   end edge's dst)
--   contexts        the threads that worked for it: its own and those of
--                   the samples charged to it
--   blocked_ns      exact where blocked_exact = 1: the time its contexts
--                   were blocked for it, each counted once per context,
--                   within [start_ns, end_ns]: the off-CPU waits charged to
--                   it (samples of kind offcpu, each from its switch-out
--                   to its switch-in, docs/model.md §2.4) and its
--                   resource_waits (on its thread: a lock waited for on
--                   CPU, or through a sleep already counted, counts once),
--                   each clipped to the request
--   waits           how many of both
--   blocked_exact   1 when every one of them was measured at both ends
--                   and recorded with probability 1; 0 when one is a
--                   bound (weight_exact = 0; a resource wait without its
--                   end, counted to the request's end or the trace's) or
--                   was kept by a budget (traces before format 1.8).
--                   Waits lost in a coverage break are not here
--                   (coverage_by_class).
--   cpu_samples, cpu_ns   the CPU samples charged to it, and the estimate
--                   they give, sum(weight / inclusion_probability):
--                   unbiased, so sums over requests are right, but one
--                   99 Hz tick is 10.1 ms whatever the request's length
--   cpu_ns_low, cpu_ns_high   a 95% interval for the CPU time the
--                   samples estimate: the Poisson limits of the count
--                   (poisson_limits) times the time a sample stands for
--                   (cpu_ns / cpu_samples; with no sample, the period,
--                   where the trace says every tick was kept: meta
--                   capture.sample_freq, capture.sample_budget_cpu = 0),
--                   within [0, wall_ns * contexts]. When the two do
--                   not meet (a tick that fell in a request shorter than
--                   the Poisson low: 82 us of wall and one tick at 99 Hz,
--                   whose low is 256 us), low is 0; without a sample and
--                   a known keep, high is wall_ns * contexts alone
--   observed_share, reconstructed_share   the shares of the time its
--                   samples stand for (CPU and off-CPU) charged observed
--                   and reconstructed (attribution.confidence); NULL
--                   without a sample
-- Each request's samples are one seek in attribution(request)
-- (attribution_request) and its resource waits one in
-- resource_waits(waiter, start_ns): a WHERE on request reads only its own.
-- The unary plus on s.thread keeps SQLite off samples(thread, ts) there,
-- which would read every sample of a backend for each of its requests.
-- The off-CPU waits and resource waits are made one set per context by
-- the running maximum of the ends before each (the part of a wait past
-- it is new), in a subquery per request, since SQLite does not push a
-- WHERE into a window.
CREATE VIEW request_summary AS
  SELECT request, request_name, start_ns, end_ns, wall_ns, cpu_ns, blocked_ns, observed_share,
         reconstructed_share, thread, contexts, cpu_samples,
         CASE WHEN lo <= coalesce(cap, lo) THEN lo ELSE 0.0 END AS cpu_ns_low,
         coalesce(min(hi, coalesce(cap, hi)), cap) AS cpu_ns_high, waits, blocked_exact
    FROM (
      SELECT *, wall_ns * max(contexts, 1) AS cap,
             (SELECT CASE WHEN p.n = cpu_samples THEN p.low ELSE p.low * cpu_samples / p.n END
                FROM poisson_limits p WHERE p.n <= cpu_samples ORDER BY p.n DESC LIMIT 1)
               * per_sample AS lo,
             (SELECT CASE WHEN p.n = cpu_samples THEN p.high ELSE p.high * cpu_samples / p.n END
                FROM poisson_limits p WHERE p.n <= cpu_samples ORDER BY p.n DESC LIMIT 1)
               * per_sample AS hi
        FROM (
          SELECT q.id AS request, q.name AS request_name, q.start_ns, q.end_ns,
                 q.end_ns - q.start_ns AS wall_ns, q.thread,
                 count(CASE s.kind WHEN 'cpu' THEN 1 END) AS cpu_samples,
                 total(CASE s.kind WHEN 'cpu' THEN s.weight / s.inclusion_probability END)
                   AS cpu_ns,
                 coalesce(total(CASE s.kind WHEN 'cpu' THEN s.weight / s.inclusion_probability
                                END) / count(CASE s.kind WHEN 'cpu' THEN 1 END),
                          (SELECT 1000000000 / CAST(f.value AS INTEGER) FROM meta f, meta k
                            WHERE f.key = 'capture.sample_freq'
                              AND CAST(f.value AS INTEGER) > 0
                              AND k.key = 'capture.sample_budget_cpu' AND k.value = '0'))
                   AS per_sample,
                 total(CASE a.confidence WHEN 'observed'
                                         THEN s.weight / s.inclusion_probability END) /
                   sum(s.weight / s.inclusion_probability) AS observed_share,
                 total(CASE a.confidence WHEN 'reconstructed'
                                         THEN s.weight / s.inclusion_probability END) /
                   sum(s.weight / s.inclusion_probability) AS reconstructed_share,
                 count(DISTINCT s.thread) +
                   (q.thread IS NOT NULL
                    AND NOT EXISTS (SELECT 1 FROM attribution a JOIN samples s ON s.id = a.sample
                                     WHERE a.request = q.id AND +s.thread = q.thread))
                   AS contexts,
                 (SELECT coalesce(sum(max(0, e - max(b, coalesce(prev, b)))), 0)
                    FROM (SELECT b, e, max(e) OVER (PARTITION BY ctx ORDER BY b, e
                                                    ROWS BETWEEN UNBOUNDED PRECEDING
                                                             AND 1 PRECEDING) AS prev
                            FROM (SELECT s.thread AS ctx,
                                         coalesce(max(s.ts, q.start_ns), s.ts) AS b,
                                         coalesce(min(s.ts + s.weight, q.end_ns), s.ts + s.weight)
                                           AS e
                                    FROM attribution a JOIN samples s ON s.id = a.sample
                                   WHERE a.request = q.id AND s.kind = 'offcpu'
                                  UNION ALL
                                  SELECT coalesce(q.thread, q.id),
                                         coalesce(max(w.start_ns, q.start_ns), w.start_ns),
                                         coalesce(min(w.end_ns, q.end_ns), w.end_ns, q.end_ns,
                                                  (SELECT CAST(value AS INTEGER) FROM meta
                                                    WHERE key = 'capture_end_ns'))
                                    FROM resource_waits w WHERE w.waiter = q.id)))
                   AS blocked_ns,
                 count(CASE s.kind WHEN 'offcpu' THEN 1 END) +
                   (SELECT count(*) FROM resource_waits w WHERE w.waiter = q.id) AS waits,
                 NOT coalesce(max(s.kind = 'offcpu'
                                  AND (NOT s.weight_exact OR s.inclusion_probability < 1)), 0)
                 AND NOT EXISTS (SELECT 1 FROM resource_waits w
                                  WHERE w.waiter = q.id AND w.end_ns IS NULL) AS blocked_exact
            FROM (SELECT r.id, r.name, r.start_ns, r.end_ns,
                         coalesce((SELECT src FROM edges WHERE dst = r.id AND type = 'begin'
                                    ORDER BY ts, id LIMIT 1),
                                  (SELECT dst FROM edges WHERE src = r.id AND type = 'end'
                                    ORDER BY id LIMIT 1)) AS thread
                    FROM nodes r WHERE r.type = 'request') q
            LEFT JOIN attribution a ON a.request = q.id LEFT JOIN samples s ON s.id = a.sample
           GROUP BY q.id));

-- How much of the sampled time is charged to a request, by kind and
-- confidence (ns estimated as above; share of the kind's total). The
-- unknown rows are what no evidence tied to a request: idle workers and
-- threads outside any request as well as lost handoffs.
CREATE VIEW attribution_coverage AS
  SELECT s.kind, a.confidence, a.request IS NOT NULL AS has_request, count(*) AS samples,
         sum(s.weight / s.inclusion_probability) AS ns,
         sum(s.weight / s.inclusion_probability) /
           (SELECT sum(x.weight / x.inclusion_probability) FROM samples x WHERE x.kind = s.kind)
           AS share
    FROM attribution a JOIN samples s ON s.id = a.sample
   GROUP BY s.kind, a.confidence, a.request IS NOT NULL;

-- Blocked time charged to its cause: per waiting request (NULL: none
-- known) and the request whose handoff ended the wait
-- (attribution.waker_request).
CREATE VIEW blocked_by_cause AS
  SELECT a.request, a.waker_request, count(*) AS samples,
         sum(s.weight / s.inclusion_probability) AS blocked_ns
    FROM attribution a JOIN samples s ON s.id = a.sample
   WHERE s.kind = 'offcpu' AND a.waker_request IS NOT NULL
   GROUP BY a.request, a.waker_request;

-- The causal ancestry of a node: its causes, their causes, and so on back
-- to a root, one row per step. A node has many causes over its life (a
-- thread is woken thousands of times), so the walk is a chain, not a
-- tree: step 1 is the latest edge into the node, and each further step
-- the latest edge into the previous step's src that comes before the edge
-- just followed (by ts, then id), whatever its type. That is docs/model.md §4.1's
-- wake chain for every edge type: a packet's wake of a server leads to
-- the packet's submit by the client, then to what woke the client before
-- it sent, and so on. The chain ends at an edge with src NULL (the cause
-- is unknown: an orphan, an interrupt; that edge is its last row), at a
-- node with no earlier cause, or at depth 64. Since every step goes back
-- in (ts, id), it cannot cycle.
--   node            where the chain starts: a root of ancestry_root, the
--                   dst of a chosen edge, a chosen sample's node
--   ancestor        the src of the edge of this step (NULL: unknown)
--   edge, edge_type, confidence, ts   that edge
--   path_confidence the weakest confidence from the node to here
--                   (observed < reconstructed < unknown)
--   sample          the sample the chain starts from (ancestry_start),
--                   else NULL
--   start_edge      the chain's first edge (step 1's): it tells apart
--                   the chains that start at one node
-- A recursive view cannot take a parameter, and SQLite cannot push a
-- WHERE into a recursive CTE, so the chains start from what two tables
-- list: the nodes of ancestry_root, each from its latest edge, and the
-- rows of ancestry_start, each a chosen edge (step 1 is that edge) or a
-- chosen sample, whose step 1 is what it waited for or ran after: for an
-- off-CPU sample its wake (samples.wake, the wake that ended the wait;
-- when none was seen, the chain is one row, edge and ancestor NULL,
-- confidence 'unknown', never a guess), for a CPU sample the latest edge
-- into its thread at or before its ts (into its node instead when that
-- is an object an interrupt processed, a packet, a block request, a
-- timer: the interrupted thread is not its cause, docs/model.md §2.4).
-- When both tables are empty the chains start from every node (slow on
-- a large database: one chain per node). For one node, or one sample:
--   DELETE FROM ancestry_root; INSERT INTO ancestry_root VALUES (:id);
--   DELETE FROM ancestry_start;
--   INSERT INTO ancestry_start(sample) VALUES (:sample);
--   SELECT * FROM causal_ancestry ORDER BY node, sample, start_edge, depth;
CREATE TABLE ancestry_root(node INTEGER PRIMARY KEY);
CREATE TABLE ancestry_start(
  sample INTEGER REFERENCES samples(id),
  edge   INTEGER REFERENCES edges(id),
  CHECK ((sample IS NULL) != (edge IS NULL)));

CREATE VIEW causal_ancestry AS
  WITH RECURSIVE
  -- Each chain's first edge. The latest edge into a node, of any type, is
  -- one seek in edges(dst, ts) (edges_dst_ts), read backwards, rather
  -- than a read of every edge into it (a busy thread has tens of
  -- thousands). The roots are read from ancestry_root, not found among
  -- the nodes: a scan of nodes would cost every query a read of them all.
  start(node, sample, edge) AS (
    SELECT r.node, NULL, (SELECT id FROM edges WHERE dst = r.node
                           ORDER BY ts DESC, id DESC LIMIT 1)
      FROM (SELECT node FROM ancestry_root
            UNION ALL
            SELECT id FROM nodes
             WHERE NOT EXISTS (SELECT 1 FROM ancestry_root)
               AND NOT EXISTS (SELECT 1 FROM ancestry_start)) r
    UNION ALL
    SELECT e.dst, NULL, e.id FROM ancestry_start a JOIN edges e ON e.id = a.edge
    UNION ALL
    SELECT s.node, s.id,
           CASE WHEN s.kind = 'offcpu' THEN s.wake
                ELSE (SELECT id FROM edges
                       WHERE dst = CASE WHEN n.type IN ('thread', 'runtime_task', 'work_item',
                                                        'request') THEN s.thread
                                        ELSE s.node END
                         AND ts <= s.ts
                       ORDER BY ts DESC, id DESC LIMIT 1) END
      FROM ancestry_start a JOIN samples s ON s.id = a.sample JOIN nodes n ON n.id = s.node),
  walk(node, sample, start_edge, ancestor, depth, edge, edge_type, confidence, ts, path_rank) AS (
    SELECT st.node, st.sample, e.id, e.src, 1, e.id, e.type, coalesce(e.confidence, 'unknown'),
           e.ts, CASE e.confidence WHEN 'observed' THEN 0 WHEN 'reconstructed' THEN 1 ELSE 2 END
      FROM start st LEFT JOIN edges e ON e.id = st.edge
     WHERE e.id IS NOT NULL OR st.sample IS NOT NULL
    UNION ALL
    SELECT w.node, w.sample, w.start_edge, e.src, w.depth + 1, e.id, e.type, e.confidence, e.ts,
           max(w.path_rank,
               CASE e.confidence WHEN 'observed' THEN 0 WHEN 'reconstructed' THEN 1 ELSE 2 END)
      FROM walk w
      JOIN edges e ON e.id = (SELECT id FROM edges
                               WHERE dst = w.ancestor AND ts <= w.ts
                                 AND (ts < w.ts OR id < w.edge)
                               ORDER BY ts DESC, id DESC LIMIT 1)
     WHERE w.ancestor IS NOT NULL AND w.depth < 64)
  SELECT node, ancestor, depth, edge, edge_type, confidence, ts,
         CASE path_rank WHEN 0 THEN 'observed' WHEN 1 THEN 'reconstructed' ELSE 'unknown' END
           AS path_confidence, sample, start_edge
    FROM walk;

-- One row per io_request: its ring scope, user_data and opcode, who
-- submitted it, when it was punted to io-wq and which worker ran it, its
-- completion (the last complete edge from it: the final CQE of a
-- multishot request; NULL when no CQE was joined to it, e.g. when it was
-- ambiguous) and the wake that reaped it: the first wake of the
-- submitting thread at or after the completion whose src is the request
-- (a wake it caused) or the completing thread. Latencies in ns, NULL
-- where an end is unknown. An orphan request has no submitter.
CREATE VIEW io_request_lifetime AS
  SELECT r.id, r.scope AS ring, r.key AS user_data, r.generation, r.name AS opcode,
         r.tid AS submitter_tid, r.start_ns AS submit_ns,
         p.ts AS punt_ns, pw.tid AS worker_tid,
         c.ts AS complete_ns, c.confidence AS complete_confidence,
         cd.tid AS completer_tid,
         (SELECT count(*) FROM edges WHERE src = r.id AND type = 'complete') AS completions,
         w.ts AS reap_wake_ns,
         c.ts - r.start_ns AS submit_to_complete_ns,
         w.ts - c.ts AS complete_to_reap_ns
    FROM nodes r
    LEFT JOIN edges p ON p.id = (SELECT id FROM edges WHERE src = r.id AND type = 'punt'
                                  ORDER BY ts, id LIMIT 1)
    LEFT JOIN nodes pw ON pw.id = p.dst
    LEFT JOIN edges c ON c.id = (SELECT id FROM edges WHERE src = r.id AND type = 'complete'
                                  ORDER BY ts DESC, id DESC LIMIT 1)
    LEFT JOIN nodes cd ON cd.id = c.dst
    LEFT JOIN edges s ON s.id = (SELECT e.id FROM edges e JOIN nodes t ON t.id = e.src
                                  WHERE e.dst = r.id AND e.type = 'submit' AND t.type = 'thread'
                                  ORDER BY e.ts, e.id LIMIT 1)
    -- The wakes the request caused are few: found by src (the unary
    -- pluses keep SQLite off the submitter's wakes, which are many).
    -- The completing thread's are looked for only when it is not the
    -- submitter itself (a completion in its own task work, or in an
    -- interrupt, whose edge goes to the submitter).
    LEFT JOIN edges w ON w.id = (
      SELECT id FROM (
        SELECT id, ts FROM edges
         WHERE src = r.id AND +type = 'wake' AND +dst = s.src AND +ts >= c.ts
        UNION ALL
        SELECT * FROM (SELECT id, ts FROM edges
                        WHERE c.dst != s.src AND dst = s.src AND type = 'wake'
                          AND ts >= c.ts AND src = c.dst
                        ORDER BY ts, id LIMIT 1))
       ORDER BY ts, id LIMIT 1)
   WHERE r.type = 'io_request';

-- Unknown causes by node type and reason: orphan_edges counts the edges
-- with src NULL and confidence 'unknown' into nodes of that type (orphans
-- proper, reason 'orphan: ...', and causes lost to interrupt context,
-- 'hardirq', 'softirq', ...); unseen_births the nodes with start_seen = 0,
-- under the reason of their orphan edge, or under reason NULL when they
-- have none (tasks outside the traced set, process containers).
CREATE VIEW orphans_by_class AS
  WITH u AS (
    SELECT d.type AS type, e.reason AS reason, count(*) AS edges,
           sum(d.start_seen = 0 AND e.reason LIKE 'orphan:%') AS unseen
      FROM edges e JOIN nodes d ON d.id = e.dst
     WHERE e.src IS NULL AND e.confidence = 'unknown'
     GROUP BY 1, 2)
  SELECT type, reason, edges AS orphan_edges, unseen AS unseen_births FROM u
  UNION ALL
  SELECT n.type, NULL, 0,
         count(*) - (SELECT coalesce(sum(unseen), 0) FROM u WHERE u.type = n.type)
    FROM nodes n WHERE n.start_seen = 0 GROUP BY n.type
  HAVING count(*) > (SELECT coalesce(sum(unseen), 0) FROM u WHERE u.type = n.type);

-- Coverage breaks by stream ('edge', 'sample', 'map' rings, 'file'
-- damage, 'io_uring' overflows) and class (coverage_breaks.class; NULL:
-- not one class's): how many, the events they lost (NULL: unknown, as
-- for file damage; lost_unknown counts such breaks), and covered_ns,
-- the time of the capture within at least one of them
-- (breaks are clipped to [capture_start_ns, capture_end_ns], an open one
-- runs to the end, and breaks of several CPUs that overlap count once),
-- also as a fraction of the capture.
CREATE VIEW coverage_by_class AS
  WITH cap AS (
    SELECT (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'capture_start_ns') AS t0,
           (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'capture_end_ns') AS t1),
  raw AS (
    SELECT stream, class,
           max(start_ns, coalesce(t0, start_ns)) AS s,
           min(coalesce(end_ns, t1, start_ns), coalesce(t1, end_ns, start_ns)) AS e,
           lost_events
      FROM coverage_breaks, cap),
  b AS (SELECT stream, class, s, max(s, e) AS e, lost_events FROM raw),
  o AS (
    SELECT *, max(e) OVER (PARTITION BY stream, class ORDER BY s, e
                           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_e
      FROM b),
  isl AS (
    SELECT stream, class, s, e,
           sum(prev_e IS NULL OR s > prev_e) OVER (PARTITION BY stream, class ORDER BY s, e
                                                 ROWS UNBOUNDED PRECEDING) AS island
      FROM o),
  span AS (
    SELECT stream, class, sum(e - s) AS covered_ns
      FROM (SELECT stream, class, min(s) AS s, max(e) AS e FROM isl GROUP BY stream, class, island)
     GROUP BY stream, class)
  SELECT g.stream, g.class, g.breaks, g.lost_events, g.lost_unknown, sp.covered_ns,
         CASE WHEN cap.t1 > cap.t0 THEN round(sp.covered_ns * 1.0 / (cap.t1 - cap.t0), 6) END
           AS capture_fraction
    FROM (SELECT stream, class, count(*) AS breaks, sum(lost_events) AS lost_events,
                 sum(lost_events IS NULL) AS lost_unknown
            FROM b GROUP BY stream, class) g
    JOIN span sp ON sp.stream IS g.stream AND sp.class IS g.class, cap;

-- The critical path of every request (docs/model.md §9,
-- analyze/critical.c): one row per segment, walking back from the
-- request's end (seq 0) to its begin; the segments of a request tile
-- [start_ns, end_ns] of its node exactly, no gap and no overlap.
--   kind       running: the context was on a CPU, or preempted (a
--              preemption is no wait: the trace holds waits, not every
--              switch); runnable: woken, not yet switched in (the wake
--              to the switch-in); handoff: an object in flight, from its
--              birth (submit, queue, arm, a packet's transmit) to the
--              wake it raised, node the object; blocked: a wait the walk
--              could not follow to its cause, confidence unknown, always
--              the last segment (the one that reaches the begin), and
--              reason says why.
--   node       the context the request ran in or waited on: a thread, or
--              the object of a handoff; for blocked, where the walk
--              stopped.
--   edge       the handoff that ended the segment's wait: the wake of a
--              runnable segment, the wake a handoff's object raised, the
--              edge that led to the context where a blocked segment
--              stopped (NULL when none), the spawn that began a thread
--              on its first running segment.
--   confidence observed, reconstructed (a wake or birth edge that is, a
--              wait whose switch-in was reconstructed, a thread's first
--              stretch after a birth not in the trace) or unknown (the
--              blocked stop).
--   reason     NULL but on the blocked stop: 'no wake seen', 'wait end
--              not seen', 'wake cause unknown', 'waits not recorded' (a
--              thread outside the traced set, or a capture without
--              off-CPU waits), 'coverage break' (a wait could be
--              missing), 'before the thread's first record', 'birth not
--              in trace' (an orphan object), 'no context to enter',
--              'times out of order', 'walk bound' (the walk's bound per
--              request), 'analyzer budget spent' (the bound on all
--              walks: the request was not walked).
-- Kept as critical_rows, kind, confidence and reason as codes (0 running,
-- 1 runnable, 2 blocked, 3 handoff; confidence as edges; reason 1 to 11
-- in the order above, analyze/model.h), one row per segment in the key's
-- order, no rowid, and the end as the segment's length (end_rel): most
-- segments are shorter than 8 ms, 3 bytes where a time is 6 (a tenth of
-- the table, 0.6 MB of PostgreSQL's 160,000 segments under pgbench).
CREATE TABLE critical_rows(
  request    INTEGER NOT NULL REFERENCES node_rows(id),
  seq        INTEGER NOT NULL,
  node       INTEGER NOT NULL REFERENCES node_rows(id),
  kind       INTEGER NOT NULL,
  start_ns   INTEGER NOT NULL,
  end_rel    INTEGER NOT NULL,
  confidence INTEGER NOT NULL,
  edge       INTEGER REFERENCES edge_rows(id),
  reason     INTEGER,
  PRIMARY KEY(request, seq)) WITHOUT ROWID;

CREATE VIEW critical_path AS
  SELECT c.request, c.seq, c.node,
         CASE c.kind WHEN 0 THEN 'running' WHEN 1 THEN 'runnable' WHEN 2 THEN 'blocked'
                     WHEN 3 THEN 'handoff' END AS kind,
         c.start_ns, c.start_ns + c.end_rel AS end_ns, c.edge,
         CASE c.confidence WHEN 0 THEN 'observed' WHEN 1 THEN 'reconstructed'
                           WHEN 2 THEN 'unknown' END AS confidence,
         CASE c.reason WHEN 1 THEN 'no wake seen' WHEN 2 THEN 'wait end not seen'
                       WHEN 3 THEN 'wake cause unknown' WHEN 4 THEN 'waits not recorded'
                       WHEN 5 THEN 'coverage break' WHEN 6 THEN 'before the thread''s first record'
                       WHEN 7 THEN 'birth not in trace' WHEN 8 THEN 'no context to enter'
                       WHEN 9 THEN 'times out of order' WHEN 10 THEN 'walk bound'
                       WHEN 11 THEN 'analyzer budget spent' END AS reason
    FROM critical_rows c;

CREATE TRIGGER critical_path_insert INSTEAD OF INSERT ON critical_path BEGIN
  INSERT INTO critical_rows(request, seq, node, kind, start_ns, end_rel, confidence, edge, reason)
  VALUES (NEW.request, NEW.seq, NEW.node,
          CASE NEW.kind WHEN 'running' THEN 0 WHEN 'runnable' THEN 1 WHEN 'blocked' THEN 2
                        WHEN 'handoff' THEN 3 END,
          NEW.start_ns, NEW.end_ns - NEW.start_ns,
          CASE NEW.confidence WHEN 'observed' THEN 0 WHEN 'reconstructed' THEN 1
                              WHEN 'unknown' THEN 2 END,
          NEW.edge,
          CASE NEW.reason WHEN 'no wake seen' THEN 1 WHEN 'wait end not seen' THEN 2
                          WHEN 'wake cause unknown' THEN 3 WHEN 'waits not recorded' THEN 4
                          WHEN 'coverage break' THEN 5
                          WHEN 'before the thread''s first record' THEN 6
                          WHEN 'birth not in trace' THEN 7 WHEN 'no context to enter' THEN 8
                          WHEN 'times out of order' THEN 9 WHEN 'walk bound' THEN 10
                          WHEN 'analyzer budget spent' THEN 11 END);
END;
CREATE TRIGGER critical_path_delete INSTEAD OF DELETE ON critical_path BEGIN
  DELETE FROM critical_rows WHERE request = OLD.request AND seq = OLD.seq;
END;

-- The mechanism of each object type: what a handoff on it is, and what
-- a wait its wake ends is ended by (docs/model.md §6.1's mechanisms).
CREATE TABLE object_mechanisms(type TEXT PRIMARY KEY, mechanism TEXT NOT NULL) WITHOUT ROWID;
INSERT INTO object_mechanisms VALUES ('io_request', 'io_uring'), ('work_item', 'workqueue'),
  ('timer', 'timer'), ('packet', 'net'), ('block_request', 'block');

-- A request's critical path summed: per request, kind and mechanism, the
-- segments, their time and its share of the request's wall time (the
-- shares of a request add up to 1). mechanism: NULL for running; for a
-- handoff, its object's (object_mechanisms), whatever its wake ended;
-- for runnable and blocked, the kind of the resource wait its edge ended
-- (resource_waits.wake_edge, which names a wake for one wait at most:
-- the LIMIT 1 below is a guard; 'lock', 'lwlock', 'buffer', a program's
-- kind; 'resource_wait' for a kind that spells another mechanism, or
-- none), else, for runnable NULL, for blocked what ended the wait where
-- its edge is a wake or fire with a known src ('futex', an object's
-- mechanism, else 'wake': another thread), 'unknown' otherwise. A
-- blocked stop at a resource wait's wake of unknown cause keeps the
-- kind: what it waited for is known, what let it go is not
-- (critical_path's confidence and reason say so).
CREATE VIEW request_critical AS
  SELECT c.request, r.name AS request_name, c.kind,
         CASE WHEN c.kind = 'running' THEN NULL
              WHEN c.kind = 'handoff' THEN
                coalesce((SELECT m.mechanism FROM object_mechanisms m WHERE m.type = n.type),
                         'unknown')
              ELSE coalesce(
                (SELECT CASE WHEN k.kind IS NULL
                               OR k.kind IN ('cpu', 'resource_wait', 'futex', 'wake', 'unknown')
                               OR k.kind IN (SELECT mechanism FROM object_mechanisms)
                             THEN 'resource_wait' ELSE k.kind END
                   FROM resource_waits w LEFT JOIN resource_kinds k ON k.resource = w.resource
                  WHERE w.wake_edge = c.edge ORDER BY w.start_ns DESC, w.id DESC LIMIT 1),
                CASE WHEN c.kind = 'runnable' THEN NULL
                     WHEN e.type NOT IN ('wake', 'fire') OR e.src IS NULL THEN 'unknown'
                     WHEN e.reason = 'futex' THEN 'futex'
                     ELSE coalesce((SELECT m.mechanism FROM object_mechanisms m
                                     WHERE m.type = s.type), 'wake') END) END AS mechanism,
         count(*) AS segments, sum(c.end_ns - c.start_ns) AS ns,
         sum(c.end_ns - c.start_ns) * 1.0 / (r.end_ns - r.start_ns) AS share
    FROM critical_path c JOIN nodes r ON r.id = c.request
    LEFT JOIN nodes n ON n.id = c.node
    LEFT JOIN edges e ON e.id = c.edge LEFT JOIN nodes s ON s.id = e.src
   GROUP BY c.request, c.kind, mechanism;

-- The resource waits on each request's critical path: a segment whose
-- edge is a wait's wake edge (resource_waits.wake_edge: the wake that
-- ended it) is where the path left the waiter for what let it go, so the
-- wait is named there, one row per request and wait (docs/model.md §9).
-- A lock a query waited for is on its path as the runnable segment of
-- that wake, and before it the segments of the context that woke it (the
-- releasing backend); a wait ended by a wake of unknown cause is the
-- blocked stop's too (its edge is that wake), and the row is the runnable
-- one, the lower seq.
--   seq, kind       the segment: the lowest seq of the request whose edge
--                   is the wake (runnable, handoff, or the blocked stop);
--   wait            resource_waits.id; resource_name, the resource (a
--                   PostgreSQL lock 'lock 1663/16384/16397/0/0', an
--                   LWLock 'lwlock LockManager'); waiter, the node that
--                   waited (a request, task or thread) and
--                   waiting_request its name when it is a request (the
--                   path's own request, or another one the path went
--                   through);
--   waker, waker_label  resource_waits.waker and its node_labels label;
--                   waking_request its name when it is a request (the
--                   query that released a lock: "END;"); NULL when the
--                   waker is unknown, and reason says why;
--   wait_start_ns, wake_ns, wait_end_ns  the wait's begin, its wake, its
--                   end; blocked_ns the wait's time before its wake
--                   within the request (wake_ns - max(wait_start_ns,
--                   the request's start_ns));
--   confidence, reason  the wait's (resource_waits).
CREATE VIEW critical_waits AS
  SELECT c.request, r.name AS request_name, min(c.seq) AS seq, c.kind,
         w.id AS wait, res.name AS resource_name, w.waiter,
         CASE WHEN wt.type = 'request' THEN wt.name END AS waiting_request,
         w.waker, kl.label AS waker_label,
         CASE WHEN wk.type = 'request' THEN wk.name END AS waking_request,
         w.start_ns AS wait_start_ns, e.ts AS wake_ns, w.end_ns AS wait_end_ns,
         e.ts - max(w.start_ns, r.start_ns) AS blocked_ns, w.confidence, w.reason
    FROM critical_path c JOIN resource_waits w ON w.wake_edge = c.edge
    JOIN nodes r ON r.id = c.request JOIN edges e ON e.id = c.edge
    JOIN nodes res ON res.id = w.resource JOIN nodes wt ON wt.id = w.waiter
    LEFT JOIN nodes wk ON wk.id = w.waker LEFT JOIN node_labels kl ON kl.node = w.waker
   GROUP BY c.request, w.id;

-- The partial indexes that hold few rows are made before the load, and
-- SQLite keeps them as the rows go in, at the cost of their WHERE for each
-- row. Made after it, each cost a read of its whole table to keep a few
-- rows (5% of the analyzer's instructions on a trace of wakes).
-- The process tree (spawn edges in time order) without reading the
-- wakes: partial, so it costs only the spawn edges. Its WHERE is the
-- edges view's type as SQLite substitutes it for the view's column
-- (wrapped in COLLATE BINARY), which is what lets a query of the view
-- (WHERE type = 'spawn') use it; tests/test_db.c checks that it does.
CREATE INDEX edges_spawn_ts ON edge_rows(ts)
  WHERE (CASE code % 16 WHEN 0 THEN 'spawn' WHEN 1 THEN 'wake' WHEN 2 THEN 'submit'
                        WHEN 3 THEN 'punt' WHEN 4 THEN 'complete' WHEN 5 THEN 'queue'
                        WHEN 6 THEN 'execute' WHEN 7 THEN 'arm' WHEN 8 THEN 'fire'
                        WHEN 9 THEN 'resume' WHEN 10 THEN 'acquire' WHEN 11 THEN 'release'
                        WHEN 12 THEN 'begin' WHEN 13 THEN 'end' END) COLLATE BINARY = 'spawn';
-- The edges whose cause is unknown (orphans, interrupts: src NULL), for
-- orphans_by_class and any query by src IS NULL, without reading the
-- others.
CREATE INDEX edges_unknown ON edge_rows(dst) WHERE src IS NULL;
-- Partial: most samples of a system-wide trace belong to no request, and
-- a query by request (request = ?, a join on it) implies it is not NULL.
CREATE INDEX attribution_request ON sample_rows(request) WHERE request IS NOT NULL;

-- @@INDEXES@@ (everything below runs after the bulk load)

-- Before it, right after the load, the analyzer (db.c) numbers the
-- generations in the database rather than in the join, which would
-- otherwise keep a counter for every key it ever saw (unbounded memory on
-- a trace of millions of short-lived keys). Node ids are assigned when a
-- generation is born, so within one (type, scope, key) id order is birth
-- order and the numbering is exact. It does what this does, only rewriting
-- the rows that change, in one sorted scan (about twice as fast):
--   UPDATE node_rows SET generation = g.gen
--     FROM (SELECT id, row_number() OVER (PARTITION BY type, scope, key ORDER BY id) - 1
--                  AS gen FROM node_rows) AS g
--    WHERE node_rows.id = g.id AND node_rows.generation != g.gen;

-- The identity, unique, and a node by its key: WHERE type = 'thread' AND
-- key = ? through the view seeks the key, then reads the type of the few
-- nodes of that key (a tid's threads and its process). Key first, and
-- the type as its code: the index once led with the type as the view
-- spells it, so that a query by type alone seeked it too, and paid for
-- it with the type's text in every entry, a third of the index
-- ('block_request', 14 bytes, beside an 8-byte key). A query by type
-- alone reads node_rows, as a query by type reads edge_rows.
CREATE UNIQUE INDEX nodes_identity ON node_rows(key, type, scope, generation);
-- No index on nodes(tid): what a thread created is what its edges lead
-- to (edges_src: its submit, spawn, queue and arm edges), and a node's
-- owning tid is a column to filter on once its type or key has narrowed
-- the search. It was an entry for every node (a tenth of a database of
-- io_requests) and a tenth of the analyzer's time on one.
-- The effects of a node. Without the edges whose cause is unknown (src
-- NULL), which edges_unknown holds: a NULL among an index's first keys
-- makes SQLite's sort of them compare every key the slow way (the index
-- took 70% longer to build).
CREATE INDEX edges_src ON edge_rows(src) WHERE src IS NOT NULL;
-- The causes of a node in time order: one seek per step of docs/model.md
-- §4.1's wake chain (ORDER BY ts DESC LIMIT 1), the latest cause of any
-- type in one seek. A query for one type reads back over the node's
-- edges of other types to the first of its own (few: a thread's causes
-- are mostly wakes); with the type in the index every entry paid for it
-- (a fifth of the index, as text).
CREATE INDEX edges_dst_ts ON edge_rows(dst, ts);
-- No index on edges(type, confidence): every query by type reads most of
-- the table anyway, and building it cost a quarter of the analyzer's time.
-- samples(node), on the view's node (the row keeps NULL for the thread).
CREATE INDEX samples_node ON sample_rows(coalesce(node, thread));
CREATE INDEX samples_thread ON sample_rows(thread, ts);
CREATE INDEX stack_frames_frame ON stack_frames(frame);
CREATE INDEX resource_waits_resource ON resource_waits(resource);
CREATE INDEX resource_waits_waiter ON resource_waits(waiter, start_ns);
-- sample_mechanism: the waits whose end was not seen, by waiter (few).
CREATE INDEX resource_waits_open ON resource_waits(waiter, start_ns) WHERE end_ns IS NULL;
-- critical_waits: a segment's edge to the wait it ended (partial: a wait
-- with no wake has nothing to be found by).
CREATE INDEX resource_waits_wake ON resource_waits(wake_edge) WHERE wake_edge IS NOT NULL;
