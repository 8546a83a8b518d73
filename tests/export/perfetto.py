#!/usr/bin/env python3
"""Checks a Perfetto trace that causeway-export wrote against the database
it came from (tests/export/perfetto.sh; docs/model.md section 8.3).

  perfetto.py DB DECODED [--since NS] [--until NS] [--request ID]...

DECODED is the trace as `protoc --decode=perfetto.protos.Trace
tests/export/perfetto_trace.proto` prints it. Prints a summary, then a line
"blocked<TAB>N<TAB>NAME" per name of blocked slices; exit 1 on a failure. Everything expected is read from
the database with SQL: the tracks (one per thread, process, request and
runtime task), the slices (one "blocked" slice per off-CPU sample, named
by what ended the wait, or in a resource wait by the resource and what let
it go, with the wait's arguments; its "runnable" child from the wake), the flows
(one per edge with a src, from an instant on the src's track to the dst's
track at the edge's time) and the unknown causes (an instant each). The
slices are rebuilt as trace_processor would: per track, in timestamp
order (file order among equal ones), begins and ends nesting.
"""
import codecs
import re
import sqlite3
import sys
from collections import Counter, defaultdict

INT64_MAX = (1 << 63) - 1
KIND_WORDS = {"io_request": "io_uring", "block_request": "block", "work_item": "work",
              "timer": "timer", "packet": "packet", "resource": "resource",
              "runtime_task": "task", "request": "request"}
failures = []


def fail(msg):
    failures.append(msg)
    if len(failures) <= 30:
        print("export_perfetto.py: " + msg, file=sys.stderr)


def parse_text(path):
    """protoc's text format into nested lists of (field, value)."""
    root = []
    stack = [root]
    for line in open(path, encoding="ascii"):
        line = line.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
            continue
        m = re.match(r"^(\w+) \{$", line)
        if m:
            msg = []
            stack[-1].append((m.group(1), msg))
            stack.append(msg)
            continue
        m = re.match(r"^(\w+): (.*)$", line)
        if not m:
            raise ValueError("cannot read line: " + line)
        v = m.group(2)
        if v.startswith('"'):
            v = codecs.escape_decode(v[1:-1].encode("ascii"))[0].decode("utf-8")
        elif v in ("true", "false"):
            v = v == "true"
        else:
            v = int(v)
        stack[-1].append((m.group(1), v))
    return root


def get(msg, field, default=None):
    for k, v in msg:
        if k == field:
            return v
    return default


def getall(msg, field):
    return [v for k, v in msg if k == field]


def main():
    args = sys.argv[1:]
    db_path, text_path = args[0], args[1]
    lo, hi, requests = 0, INT64_MAX, []
    i = 2
    while i < len(args):
        if args[i] == "--since":
            lo = int(args[i + 1])
        elif args[i] == "--until":
            hi = int(args[i + 1])
        elif args[i] == "--request":
            requests.append(int(args[i + 1]))
        i += 2
    db = sqlite3.connect("file:" + db_path + "?mode=ro", uri=True)
    q = db.execute

    # ---- the file: packets, sequence, interning ----
    packets = [v for k, v in parse_text(text_path) if k == "packet"]
    if not packets:
        fail("no packet")
        return
    first = packets[0]
    cs = get(first, "clock_snapshot")
    if not cs or get(cs, "primary_trace_clock") != 3:
        fail("the first packet is not a clock snapshot making CLOCK_MONOTONIC (3) the trace's clock")
    if not (get(first, "sequence_flags", 0) & 1):
        fail("the first packet does not clear the incremental state (SEQ_INCREMENTAL_STATE_CLEARED)")
    names, ann_names = {}, {}
    tracks, events = {}, []
    default_clock = None
    for idx, p in enumerate(packets):
        if get(p, "trusted_packet_sequence_id") != 1:
            fail("packet %d: not on sequence 1" % idx)
        defaults = get(p, "trace_packet_defaults")
        if defaults is not None:
            default_clock = get(defaults, "timestamp_clock_id")
        if get(p, "timestamp") is not None and \
                get(p, "timestamp_clock_id", default_clock) != 3:
            fail("packet %d: a timestamp not on CLOCK_MONOTONIC (3)" % idx)
        idata = get(p, "interned_data")
        te = get(p, "track_event")
        if te is not None and get(te, "name_iid") is not None and \
                not (get(p, "sequence_flags", 0) & 2):
            fail("packet %d: a name interned, and no SEQ_NEEDS_INCREMENTAL_STATE" % idx)
        for en in getall(idata, "event_names") if idata else []:
            if get(en, "iid") in names:
                fail("event name iid %d given twice" % get(en, "iid"))
            names[get(en, "iid")] = get(en, "name")
        for en in getall(idata, "debug_annotation_names") if idata else []:
            ann_names[get(en, "iid")] = get(en, "name")
        td = get(p, "track_descriptor")
        if td is not None:
            uuid = get(td, "uuid")
            if not uuid or uuid in tracks:
                fail("track uuid %r is 0 or given twice" % uuid)
            tracks[uuid] = td
        if te is not None:
            iid = get(te, "name_iid")
            if iid is not None and iid not in names:
                fail("packet %d: name iid %d not interned before" % (idx, iid))
            a = {}
            for da in getall(te, "debug_annotations"):
                key = ann_names.get(get(da, "name_iid"))
                if key is None:
                    fail("packet %d: annotation name not interned before" % idx)
                for f in ("int_value", "string_value", "bool_value", "uint_value"):
                    if get(da, f) is not None:
                        a[key] = get(da, f)
            events.append({"idx": idx, "ts": get(p, "timestamp"), "type": get(te, "type"),
                           "track": get(te, "track_uuid"), "name": names.get(iid),
                           "flows": getall(te, "flow_ids"),
                           "terms": getall(te, "terminating_flow_ids"), "args": a})
    for uuid, td in tracks.items():
        parent = get(td, "parent_uuid")
        if parent is not None and parent not in tracks:
            fail("track %d: parent %d not described" % (uuid, parent))

    # ---- slices, rebuilt per track as trace_processor nests them ----
    per_track = defaultdict(list)
    for e in events:
        if e["track"] not in tracks:
            fail("event at %d on track %d, which is not described" % (e["ts"], e["track"]))
        per_track[e["track"]].append(e)
    slices, instants = [], []
    for uuid, evs in per_track.items():
        evs.sort(key=lambda e: (e["ts"], e["idx"]))
        stack = []
        for e in evs:
            if e["type"] == 1:
                s = dict(e, begin=e["ts"], end=None, depth=len(stack),
                         parent=stack[-1] if stack else None, children=0)
                if stack:
                    stack[-1]["children"] += 1
                stack.append(s)
                slices.append(s)
            elif e["type"] == 2:
                if not stack:
                    fail("track %d: an end at %d with no slice open" % (uuid, e["ts"]))
                    continue
                stack.pop()["end"] = e["ts"]
            elif e["type"] == 3:
                instants.append(dict(e, depth=len(stack), parent=stack[-1] if stack else None))
            else:
                fail("event type %r" % e["type"])
        for s in stack:
            fail("track %d: slice %r at %d never ends" % (uuid, s["name"], s["begin"]))

    # ---- what the database says is exported ----
    nodes = {r[0]: {"id": r[0], "type": r[1], "key": r[2], "pid": r[3], "name": r[4],
                    "start": r[5], "end": r[6]}
             for r in q("SELECT id, type, key, pid, name, start_ns, end_ns FROM nodes")}
    if requests:
        starts = [nodes[r]["start"] for r in requests]
        ends = [nodes[r]["end"] for r in requests]
        if None not in starts:
            lo = max(lo, min(starts))
        if None not in ends:
            hi = min(hi, max(ends))
    edges = q("SELECT id, type, src, dst, ts, confidence, reason FROM edges "
              "WHERE ts >= ? AND ts <= ?", (lo, hi)).fetchall()
    samples = q("SELECT id, thread, kind, ts, weight, wake FROM samples "
                "WHERE ts >= ? AND ts <= ?", (lo, hi)).fetchall()
    edge_by_id = {r[0]: r for r in q("SELECT id, type, src, dst, ts, confidence, reason FROM edges")}

    if requests:
        ctx = set(requests)
        for r in requests:
            ctx |= {t for (t,) in q("SELECT s.thread FROM attribution a JOIN samples s "
                                    "ON s.id = a.sample WHERE a.request = ?", (r,))}
            ctx |= {t for (t,) in q("SELECT a.task FROM attribution a WHERE a.request = ? "
                                    "AND a.task IS NOT NULL", (r,))}
            for s, d in q("SELECT src, dst FROM edges WHERE src = ?1 OR dst = ?1", (r,)):
                for n in (s, d):
                    if n is not None and nodes[n]["type"] in ("thread", "runtime_task"):
                        ctx.add(n)
        exported = set(ctx)
        for e in edges:
            for a, b in ((e[2], e[3]), (e[3], e[2])):
                if (a is not None and b in ctx and nodes[a]["type"] not in
                        ("thread", "process", "runtime_task", "request")):
                    exported.add(a)
    else:
        exported = {n for e in edges for n in (e[2], e[3]) if n is not None}
        exported |= {s[1] for s in samples}
        for n in nodes.values():
            if n["type"] in ("request", "runtime_task") and n["start"] is not None and \
                    n["start"] <= hi and (n["end"] is None or n["end"] >= lo):
                exported.add(n["id"])
    samples = [s for s in samples if s[1] in exported]

    def label(n):
        if n["type"] == "thread":
            return n["name"] or "tid %d" % n["key"]
        return "%s %s" % (KIND_WORDS.get(n["type"], n["type"]), n["name"] or hex(n["key"]))

    # ---- tracks: one per exported thread, process, request, task ----
    # a thread's track: the uuid perfetto.c gives a node's own track (its
    # id << 8 | 1), which tells the generations of a reused tid apart
    thread_tracks, track_of = Counter(), {}
    for uuid, td in tracks.items():
        th = get(td, "thread")
        if th is None:
            continue
        key = (get(th, "pid"), get(th, "tid"), get(th, "thread_name"))
        thread_tracks[key] += 1
        n = nodes.get(uuid >> 8) if uuid & 0xff == 1 else None
        if not n or n["type"] != "thread" or (n["pid"], n["key"], label(n)) != key:
            fail("thread track %d %r is no thread node's" % (uuid, key))
            continue
        track_of[n["id"]] = uuid
        parent = tracks.get(get(td, "parent_uuid"))
        pd = get(parent, "process") if parent else None
        if pd is None or get(pd, "pid") != get(th, "pid"):
            fail("thread track %r is not under its process's track" % (key,))
    want = Counter((nodes[n]["pid"], nodes[n]["key"], label(nodes[n]))
                   for n in exported if nodes[n]["type"] == "thread")
    if thread_tracks != want:
        fail("thread tracks %s, the database's threads %s" % (sorted(thread_tracks.elements()),
                                                              sorted(want.elements())))
    # a request's, task's or object's track is that of the slice of its life
    lives = defaultdict(list)
    for s in slices:
        if "node" in s["args"]:
            lives[s["args"]["node"]].append(s)
    for n in exported:
        t = nodes[n]["type"]
        if t in ("thread", "process"):
            continue
        if len(lives[n]) != 1:
            fail("node %d (%s): %d slices of its life, not one" % (n, t, len(lives[n])))
            continue
        life = lives[n][0]
        track_of[n] = life["track"]
        if life["depth"] != 0:
            fail("node %d: its life is inside another slice" % n)
        td = tracks[life["track"]]
        if t in ("request", "runtime_task"):
            name = (nodes[n]["name"] or "request %d" % nodes[n]["key"]) if t == "request" \
                else label(nodes[n])
            for got in (get(td, "name"), life["name"]):
                # a long name is cut, "..." said, in at most 60 bytes
                if got != name and not (len(name) > 60 and len(got) <= 60 and
                                        got.endswith("...") and name.startswith(got[:-3])):
                    fail("node %d: track %r, slice %r, not %r" % (n, get(td, "name"),
                                                                life["name"], name))
            if sum(1 for s in lives.values() for x in s if x["track"] == life["track"]) != 1:
                fail("node %d (%s): its track is not its own" % (n, t))
            if nodes[n]["start"] is not None and life["begin"] != nodes[n]["start"]:
                fail("node %d: begins at %d, not %d" % (n, life["begin"], nodes[n]["start"]))
            if nodes[n]["end"] is not None and life["end"] != nodes[n]["end"]:
                fail("node %d: ends at %d, not %d" % (n, life["end"], nodes[n]["end"]))
            parent = tracks.get(get(td, "parent_uuid"))
            pd = get(parent, "process") if parent else None
            if nodes[n]["pid"] is not None and (pd is None or get(pd, "pid") != nodes[n]["pid"]):
                fail("node %d (%s): not under its process's track" % (n, t))
        else:
            group = tracks.get(get(td, "parent_uuid"))
            word = KIND_WORDS.get(t, t)
            if life["name"] != label(nodes[n]) or not group or get(group, "name") not in (word, "other"):
                fail("object %d: slice %r on a lane of %r" % (n, life["name"], group and get(group, "name")))
    if requests:
        got = {n for n, s in lives.items() if nodes.get(n, {}).get("type") == "request"}
        if got != set(requests):
            fail("requests exported %s, asked for %s" % (sorted(got), sorted(requests)))

    # ---- flows: one per edge with a src, unknown causes as instants ----
    flows, terms = Counter(), Counter()
    at = {}
    for e in slices + instants:
        for f in e["flows"]:
            flows[f] += 1
            at[("from", f)] = e
        for f in e["terms"]:
            terms[f] += 1
            at[("to", f)] = e
    want_flows = set()
    by_edge = defaultdict(list)
    for i in instants:
        by_edge[i["args"].get("edge")].append(i)
    for eid, etype, src, dst, ts, conf, reason in edges:
        if src is None:
            if dst not in exported:
                continue
            hits = [i for i in by_edge[eid] if i["track"] == track_of[dst]]
            if len(hits) != 1 or hits[0]["ts"] != ts or "from unknown" not in (hits[0]["name"] or ""):
                fail("edge %d (%s from unknown): %d instants on its dst's track" % (eid, etype, len(hits)))
            continue
        if src not in exported or dst not in exported:
            continue
        want_flows.add(eid)
        b, t = at.get(("from", eid)), at.get(("to", eid))
        if not b or b["type"] != 3 or b["track"] != track_of[src] or b["ts"] != ts:
            fail("edge %d (%s): no instant on its src's track at %d begins its flow" % (eid, etype, ts))
        if not t or t["track"] != track_of[dst] or t["ts"] != ts or \
                (t["type"] == 1 and t["name"] != "runnable"):
            fail("edge %d (%s): its flow does not end on its dst's track at %d" % (eid, etype, ts))
        if t and t["args"].get("edge") != eid:
            fail("edge %d: the end of its flow does not say which edge" % eid)
    if set(flows) != want_flows or set(terms) != want_flows or \
            any(c != 1 for c in flows.values()) or any(c != 1 for c in terms.values()):
        fail("flows %d begun, %d ended, %d edges with a src in the window" %
             (len(flows), len(terms), len(want_flows)))
    # an instant of an object's edge lies within the object's own slice
    for i in instants:
        n = None
        eid = i["args"].get("edge")
        if eid is not None:
            e = edge_by_id[eid]
            for end in (e[2], e[3]):
                if end in lives and track_of.get(end) == i["track"] and \
                        nodes[end]["type"] not in ("request", "runtime_task"):
                    n = end
        if n is not None and i["parent"] is not lives[n][0]:
            fail("edge %d's instant is not inside the slice of object %d" % (eid, n))

    # ---- thread slices: one blocked slice per off-CPU sample ----
    blocked = {s["args"]["sample"]: s for s in slices if "sample" in s["args"]}
    children = defaultdict(list)
    for c in slices:
        if c["parent"] is not None:
            children[id(c["parent"])].append(c)
    offcpu = [s for s in samples if s[2] == "offcpu"]
    # the resource waits (export/waits.h): a sample lies in the latest
    # begun of its thread's, its request's or its task's that holds its ts
    attributed = {r[0]: (r[1], r[2]) for r in
                  q("SELECT sample, request, task FROM attribution")}
    has_kinds = q("SELECT count(*) FROM sqlite_master WHERE name = 'resource_kinds'").fetchone()[0]
    kinds = dict(q("SELECT resource, kind FROM resource_kinds")) if has_kinds else {}
    rwaits = defaultdict(list)
    for r in q("SELECT w.id, w.resource, w.waiter, w.start_ns, w.end_ns, w.wake_edge, w.waker, "
               "w.confidence, w.reason, r.name, e.ts FROM resource_waits w "
               "LEFT JOIN nodes r ON r.id = w.resource LEFT JOIN edges e ON e.id = w.wake_edge"):
        rwaits[r[2]].append(r)

    def wait_of(sid, thread, ts):
        req, task = attributed.get(sid, (None, None))
        hold = [w for n in {thread, req, task} if n is not None for w in rwaits.get(n, [])
                if w[3] <= ts and (w[4] is None or w[4] > ts)]
        return max(hold, key=lambda w: (w[3], w[0])) if hold else None

    def wait_args(w):
        a = {"wait": w[0], "resource": w[9] or "resource"}
        if kinds.get(w[1]):
            a["kind"] = kinds[w[1]]
        waiter = nodes.get(w[2])
        if waiter and waiter["type"] == "request":
            a["waiting_request"] = waiter["name"] or ""
        waker = nodes.get(w[6]) if w[6] is not None else None
        if waker and waker["type"] == "request":
            a["waking_request"] = waker["name"] or ""
        if not waker and w[8]:
            a["reason"] = w[8]
        if w[10] is not None or w[4] is not None:
            a["blocked_ns"] = (w[10] if w[10] is not None else w[4]) - w[3]
        return {k: v for k, v in a.items() if v != ""}

    def wait_name(w, wake, cause):
        res = w[9] or "resource"
        waker = nodes.get(w[6]) if w[6] is not None else None
        own = wake is not None and wake == w[5]
        if own and waker:
            if waker["type"] == "request":
                by = waker["name"] or "request %d" % waker["key"]
                by = by[:57] + "..." if len(by) > 60 else by
            else:
                by = label(waker)
            verb = "released" if waker["type"] in ("thread", "process", "request",
                                                     "runtime_task") else "ended"
            conf = {"observed": "", "reconstructed": " (reconstructed)"}.get(w[7], " (unknown)")
            return "%s %s by %s%s" % (res, verb, by, conf)
        if own or (wake is None and not waker):
            return "%s (%s)" % (res, w[8] or "waker unknown")
        return None if cause is None else "%s, in %s" % (cause, res)
    wait_keys = ("wait", "resource", "kind", "waiting_request", "waking_request", "blocked_ns")
    in_waits = 0
    if len(blocked) != len(offcpu) or \
            len([s for s in slices if "sample" in s["args"]]) != len(offcpu):
        fail("%d blocked slices, %d off-CPU samples" % (len(blocked), len(offcpu)))
    for sid, thread, kind, ts, weight, wake in offcpu:
        s = blocked.get(sid)
        if not s:
            fail("sample %d: no blocked slice" % sid)
            continue
        if s["track"] != track_of[thread] or s["begin"] != ts or s["end"] != ts + weight or s["depth"]:
            fail("sample %d: slice [%d, %d] depth %d, wait [%d, %d]" %
                 (sid, s["begin"], s["end"], s["depth"], ts, ts + weight))
        w = edge_by_id.get(wake) if wake is not None else None
        rw = wait_of(sid, thread, ts)
        if w is None:
            name = "unknown (the wake was not seen)"
        elif w[2] is None:
            name = "unknown (%s)" % w[6]
        elif nodes[w[2]]["type"] in ("thread", "process"):
            name = "%s from %s" % ("futex" if w[6] == "futex" else "wake", label(nodes[w[2]]))
            name += {"observed": "", "reconstructed": " (reconstructed)"}.get(w[5], " (unknown)")
        else:
            name = None  # an object: its kind's word first
        if rw is not None:
            in_waits += 1
            name = wait_name(rw, wake if w else None, name)
            got_args = {k: v for k, v in s["args"].items() if k in wait_keys or
                        (k == "reason" and "reason" in wait_args(rw))}
            if got_args != wait_args(rw):
                fail("sample %d: arguments %r, resource wait %d's %r" % (sid, got_args, rw[0],
                                                                        wait_args(rw)))
        elif any(k in s["args"] for k in wait_keys + ("reason",)):
            fail("sample %d: resource wait arguments %r, and no resource wait" % (sid, s["args"]))
        if name is None:  # woken by an object: its kind's word first, then any wait
            if not s["name"].startswith(KIND_WORDS.get(nodes[w[2]]["type"], "?") + " ") or \
                    (rw is not None and not s["name"].endswith(", in " + (rw[9] or "resource"))):
                fail("sample %d: slice %r, woken by a %s" % (sid, s["name"], nodes[w[2]]["type"]))
        elif s["name"] != name:
            fail("sample %d: slice %r, not %r" % (sid, s["name"], name))
        kids = children[id(s)]
        if w is not None and ts <= w[4] <= ts + weight:
            if len(kids) != 1 or kids[0]["name"] != "runnable" or kids[0]["begin"] != w[4] or \
                    kids[0]["end"] != ts + weight:
                fail("sample %d: no runnable slice from its wake at %d" % (sid, w[4]))
        elif kids:
            fail("sample %d: a slice under it, and no wake in it" % sid)
    # running: between two waits of a thread whose waits are recorded, and
    # otherwise only from a moment it is seen to run
    offcpu_on = q("SELECT value FROM meta WHERE key = 'capture.offcpu'").fetchone()
    recorded = offcpu_on[0] == "1" if offcpu_on else bool(offcpu)
    traced = dict(q("SELECT id, traced FROM nodes WHERE type = 'thread'"))
    running = defaultdict(dict)
    for s in slices:
        if s["name"] == "running":
            running[s["track"]][s["begin"]] = s["end"]
    by_thread = defaultdict(list)
    for sid, thread, kind, ts, weight, wake in offcpu:
        by_thread[thread].append((ts, ts + weight))
    for thread, waits in by_thread.items():
        waits.sort()
        want = recorded and traced.get(thread) != 0
        for (b0, e0), (b1, e1) in zip(waits, waits[1:]):
            if e0 < b1 and running[track_of[thread]].get(e0) != (b1 if want else None):
                fail("thread %d: running from %d to %r, between waits to %d" %
                     (thread, e0, running[track_of[thread]].get(e0), b1))
    seen = defaultdict(set)
    for sid, thread, kind, ts, weight, wake in samples:
        seen[thread].add(ts + weight if kind == "offcpu" else ts)
    for eid, etype, src, dst, ts, conf, reason in edges:
        seen[src].add(ts)
        if etype in ("execute", "resume"):
            seen[dst].add(ts)
    for n in exported:
        if nodes[n]["type"] == "thread" and nodes[n]["start"] is not None:
            seen[n].add(nodes[n]["start"])
    for n, t in track_of.items():
        for b in running.get(t, {}):
            if b not in seen[n]:
                fail("thread %d: running from %d, where nothing shows it running" % (n, b))
    for s in slices:
        if s["name"] == "running" and (s["depth"] or s["children"] or
                                       s["track"] not in track_of.values()):
            fail("a running slice at %d nests or holds another" % s["begin"])
        if s["name"] == "runnable" and (not s["parent"] or "sample" not in s["parent"]["args"]):
            fail("a runnable slice at %d outside a wait" % s["begin"])
    print("export_perfetto.py: %s: %d tracks, %d slices, %d instants, %d flows, %d waits, "
          "%d in resource waits" %
          (db_path, len(tracks), len(slices), len(instants), len(flows), len(offcpu), in_waits))
    # what ended the waits, for a test to look for
    for name, n in sorted(Counter(s["name"] for s in blocked.values()).items()):
        print("blocked\t%d\t%s" % (n, name))


main()
sys.exit(1 if failures else 0)
