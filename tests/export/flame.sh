#!/bin/bash
# tests/tools/flamegraph.py, the flame graph of make demo and the docs, on
# causeway-export folded's output of fixtures: the CPU time of
# attribution_chain (requests reached over handoffs) and the off-CPU time
# of sample_switch_wait (waits with kernel stacks and what ended them):
#  - the SVG is XML; each root frame's weight in its tooltip is the sum of
#    the folded lines under it, and its width its share of the picture's;
#  - frames are classed as they are: a request's name "request", a root
#    that names no request "unattributed", the task, handoff and
#    what-ended-a-wait frames "causal", the call stack "user" or "kernel";
#  - hostile input (markup, controls, invalid UTF-8, lines without a
#    weight, a stack 1000 deep) still makes valid XML, the bad lines
#    counted;
#  - an existing output is replaced only with --force, and only a
#    regular file (a symlink and a directory are refused, exit 2).
#   tests/export/flame.sh BUILD
set -u
BUILD=$(cd "${1:?usage: tests/export/flame.sh BUILD}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
CHECK_NAME=export/flame
. "$top/tests/lib/check.bash"
FG=$top/tests/tools/flamegraph.py

folded() { # FIXTURE OUT [export options]
	local fx=$1 out=$2 args=()
	shift 2
	[ -f "$top/fixtures/$fx.args" ] && read -r -a args <"$top/fixtures/$fx.args"
	"$BUILD/tests/fixturec" "$top/fixtures/$fx.events" "$T/$fx.cwt" &&
		(cd "$T" && "$BUILD/causeway-analyze" -q "${args[@]}" "$fx.cwt") &&
		"$BUILD/causeway-export" -q folded "$T/$fx.db" -o "$out" "$@" ||
		{ echo "export/flame: $fx: fixturec, the analyzer or the export failed" >&2; exit 1; }
	[ -s "$out" ] || { echo "export/flame: $fx: nothing folded (the fixture changed?)" >&2; exit 1; }
}
folded attribution_chain "$T/cpu.folded"
folded sample_switch_wait "$T/off.folded" --offcpu

# Hostile lines, and a stack 1000 frames deep.
{
	printf 'GET <b>&amp;"x";a\x01b;\xff\xfe;f_[k] 3\n'
	printf 'no weight here\n'
	printf 'a;b notanumber\n\n'
	printf 'unknown: deep'
	for i in $(seq 1000); do printf ';f%d' "$i"; done
	printf ' 2\n'
} >"$T/hostile.folded"

for f in cpu off hostile; do
	python3 "$FG" "$T/$f.folded" -o "$T/$f.svg" --title "$f" 2>"$T/$f.err" ||
		fail "$f: exit $? ($(cat "$T/$f.err"))"
done
grep -q '^flamegraph.py: 2 lines not understood' "$T/hostile.err" ||
	fail "hostile: the two lines without a weight are not counted: $(cat "$T/hostile.err")"

python3 - "$T" <<'PY' || failed=1
import re, sys, xml.etree.ElementTree as ET
T = sys.argv[1]
S = '{http://www.w3.org/2000/svg}'
bad = []

def check(name, want_classes):
    try:
        root = ET.parse('%s/%s.svg' % (T, name)).getroot()
    except ET.ParseError as e:
        bad.append('%s: not XML: %s' % (name, e))
        return
    total = 0.0
    roots = {}
    for line in open('%s/%s.folded' % (T, name), encoding='utf-8', errors='backslashreplace'):
        stack, _, w = line.rstrip('\n').rpartition(' ')
        try:
            w = float(w)
        except ValueError:
            continue
        if not stack:
            continue
        total += w
        r = stack.split(';')[0]
        roots[r] = roots.get(r, 0) + w
    width = float(root.get('width'))
    frames = {}
    for g in root.iter(S + 'g'):
        t = g.find(S + 'title').text
        m = re.match(r'^(.*) \(([0-9.e+]+) us, [0-9.]+%\)$', t, re.S)
        rect = g.find(S + 'rect')
        frames.setdefault(m.group(1), []).append((g.get('class'), float(m.group(2)),
                                                  float(rect.get('width')), float(rect.get('y'))))
    bottom = max(f[3] for fs in frames.values() for f in fs)
    for r, w in roots.items():
        at_root = [f for f in frames.get(r, []) if f[3] == bottom]
        if len(at_root) != 1:
            bad.append('%s: root %r drawn %d times at the bottom' % (name, r, len(at_root)))
            continue
        cls, fw, px, _ = at_root[0]
        if abs(fw - w) > 1e-6:
            bad.append('%s: root %r weighs %g, its lines %g' % (name, r, fw, w))
        if abs(px - w / total * (width - 20)) > 0.02:
            bad.append('%s: root %r is %g px wide, want %g' % (name, r, px, w / total * (width - 20)))
        want = 'unattributed' if r.startswith(('unknown: ', 'no request: ')) else 'request'
        if cls != want:
            bad.append('%s: root %r is %s, want %s' % (name, r, cls, want))
    for pat, want in want_classes:
        hits = [(n, f[0]) for n, fs in frames.items() for f in fs if re.search(pat, n)]
        if not hits:
            bad.append('%s: no frame matches %r' % (name, pat))
        for n, cls in hits:
            if cls != want:
                bad.append('%s: frame %r is %s, want %s' % (name, n, cls, want))

check('cpu', [(r'^wake from ', 'causal'), (r'^io_uring READ submit$', 'causal'),
              (r'^task 0x7$', 'causal'), (r' -> fire$', 'causal')])
check('off', [(r'^woken by: ', 'causal'), (r'_\[k\]$', 'kernel')])
check('hostile', [(r'_\[k\]$', 'kernel'), (r'^f1000$', 'user'), (r'\\xff', 'user')])
for b in bad:
    sys.stderr.write('export_flame: FAIL: %s\n' % b)
sys.exit(1 if bad else 0)
PY

# Outputs: no replacing without --force, never a symlink or a directory.
echo keep >"$T/keep.svg"
python3 "$FG" "$T/cpu.folded" -o "$T/keep.svg" 2>/dev/null
rc=$?
[ $rc = 2 ] && [ "$(cat "$T/keep.svg")" = keep ] || fail "an existing file without --force: exit $rc, or it changed"
python3 "$FG" "$T/cpu.folded" -o "$T/keep.svg" --force && grep -q '<svg' "$T/keep.svg" || fail "--force did not replace a regular file"
ln -s keep.svg "$T/link.svg"
python3 "$FG" "$T/cpu.folded" -o "$T/link.svg" --force 2>/dev/null
rc=$?
[ $rc = 2 ] && [ -L "$T/link.svg" ] || fail "a symlink as the output: exit $rc, want 2 and the link kept"
mkdir "$T/dir.svg"
python3 "$FG" "$T/cpu.folded" -o "$T/dir.svg" --force 2>/dev/null
rc=$?
[ $rc = 2 ] || fail "a directory as the output: exit $rc, want 2"
for f in "$T"/*.tmp; do
	[ ! -e "$f" ] || fail "a temporary file was left: $f"
done

[ $failed = 0 ] && echo "export/flame: ok"
exit $failed
