#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A folded-stacks file as an SVG flame graph: make demo's picture and the
docs' (causeway-export folded, docs/model.md §8).

  tests/tools/flamegraph.py FOLDED [-o OUT.svg] [--title TEXT] [--unit WORD]
                            [--width PX] [--force]

Each line of FOLDED is "root;...;leaf weight", as causeway-export folded
and flamegraph.pl's stackcollapse scripts write it. Stacks with the same
frames from the root are merged; siblings are sorted by name, so the same
file gives the same picture. Each frame is a rectangle as wide as its
weight, root at the bottom, with its name, weight and share as a tooltip
(<title>) and its kind as its group's class (request, unattributed,
causal, user, kernel); frames narrower than a tenth of a pixel are left out (their
weight stays in their parent's).

The folded format does not say which frames are causal. This script tells
them by how causeway-export spells them (export/names.c, profile.c), and
only as a prefix of the stack:

  - the root: a request (its name), or why none was named ("unknown: ...",
    "no request: ...");
  - then, while frames read like one, the causal frames: a runtime task
    ("task ..."), each handoff ("wake from front", "io_uring READ submit",
    "timer hrtimer_wakeup -> fire (reconstructed)": a kind word of
    names.c first, or " from ", or " -> "), what ended a wait
    ("woken by: ...");
  - the first frame that does not is the call stack's root, and the rest
    are call-stack frames: kernel ones end "_[k]".

A call-stack frame that happened to be spelled like a handoff right after
the causal frames would be colored as one; C and C++ names have no such
spaces. The legend says what the colors mean.

Output: stdout, or OUT written next to itself (mode 0600) and renamed into
place; an existing OUT is replaced only with --force, and only a regular
file. Exit 0 written, 1 input or output error, 2 bad arguments or a
refused output.
"""
import argparse
import html
import os
import re
import stat
import sys
import tempfile
import zlib

# export/names.c's kind words: how a node is named in a hop frame.
KIND_WORDS = ('io_uring', 'block', 'work', 'timer', 'packet', 'task', 'request', 'resource',
              'thread', 'process')
CUT_HOPS = '... (earlier handoffs cut)'

FRAME_H = 16
FONT = 11
CHAR_W = FONT * 0.59  # an average glyph of a sans-serif font
PAD = 10
MIN_PX = 0.1


def causal(name):
    """Does @name read like one of causeway's causal frames below the root?"""
    if name.startswith('woken by: ') or name == CUT_HOPS:
        return True
    if ' from ' in name or ' -> ' in name:
        return True
    return any(name.startswith(w + ' ') for w in KIND_WORDS)


def kind_of(depth, name, in_causal):
    if depth == 0:
        if name.startswith('unknown: ') or name.startswith('no request: '):
            return 'unattributed'
        return 'request'
    if in_causal and causal(name):
        return 'causal'
    return 'kernel' if name.endswith('_[k]') else 'user'


def color(kind, name):
    """A fill for @name of @kind: its family by kind, the shade by a hash
    of the name (crc32: the same on every run)."""
    h = zlib.crc32(name.encode('utf-8', 'backslashreplace'))
    a, b = (h & 0xff) / 255.0, ((h >> 8) & 0xff) / 255.0
    if kind == 'request':
        return 'rgb(%d,%d,%d)' % (90 + 30 * a, 185 + 30 * b, 100 + 30 * a)
    if kind == 'unattributed':
        v = 190 + 30 * a
        return 'rgb(%d,%d,%d)' % (v, v, v)
    if kind == 'causal':
        return 'rgb(%d,%d,%d)' % (90 + 50 * a, 150 + 50 * b, 230)
    if kind == 'kernel':
        return 'rgb(%d,%d,%d)' % (205 + 25 * a, 185 + 25 * a, 140 + 30 * b)
    return 'rgb(%d,%d,%d)' % (225 + 30 * b, 80 + 130 * a, 40 + 20 * b)


LEGEND = (('request', 'request'), ('unattributed', 'no request known (why)'),
          ('causal', 'causal frame: task, handoff, what ended a wait'),
          ('user', 'user frame'), ('kernel', 'kernel frame'))

# Characters XML 1.0 cannot hold at all, even as a reference.
BAD_XML = re.compile('[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]')


def esc(text):
    text = BAD_XML.sub(lambda m: '\\x%02x' % ord(m.group()) if ord(m.group()) < 256
                       else '\\u%04x' % ord(m.group()), text)
    return html.escape(text, quote=True)


class Node:
    __slots__ = ('name', 'weight', 'children', 'kind')

    def __init__(self, name, kind):
        self.name, self.kind, self.weight, self.children = name, kind, 0.0, {}


def parse(f):
    """The folded lines of @f as a tree; and how many lines were not
    understood."""
    root = Node('all', 'root')
    bad = 0
    for line in f:
        line = line.rstrip('\n')
        if not line.strip():
            continue
        stack, sep, w = line.rpartition(' ')
        try:
            weight = float(w)
        except ValueError:
            weight = -1.0
        if not sep or not stack or not weight >= 0 or weight == float('inf'):
            bad += 1
            continue
        node, in_causal = root, True
        root.weight += weight
        for depth, name in enumerate(stack.split(';')):
            kind = kind_of(depth, name, in_causal)
            in_causal = kind in ('request', 'unattributed', 'causal')
            child = node.children.get(name)
            if child is None:
                child = node.children[name] = Node(name, kind)
            child.weight += weight
            node = child
    return root, bad


def depth_of(node, px):
    """The deepest level drawn under @node, at @px per unit of weight."""
    d = 0
    for c in node.children.values():
        if c.weight * px >= MIN_PX:
            d = max(d, 1 + depth_of(c, px))
    return d


def fmt_weight(w):
    return ('%.0f' % w) if w == int(w) else ('%.3g' % w)


def render(root, title, unit, width, out):
    inner = width - 2 * PAD
    px = inner / root.weight if root.weight > 0 else 0.0
    levels = depth_of(root, px) if px else 0
    top = 64  # title and legend
    height = top + levels * FRAME_H + 2 * PAD
    w = out.write
    w('<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n')
    w('<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%d" height="%d" '
      'viewBox="0 0 %d %d" font-family="Verdana, DejaVu Sans, sans-serif" font-size="%d">\n'
      % (width, height, width, height, FONT))
    w('<rect x="0" y="0" width="%d" height="%d" fill="#fdfdfa"/>\n' % (width, height))
    w('<text x="%d" y="22" font-size="15" text-anchor="middle">%s</text>\n'
      % (width // 2, esc(title)))
    w('<text x="%d" y="40" text-anchor="middle" fill="#555">total %s %s; widths by weight, '
      'the root below; hover a frame for its weight</text>\n'
      % (width // 2, fmt_weight(root.weight), esc(unit)))
    x = PAD
    for kind, label in LEGEND:
        w('<rect x="%d" y="48" width="12" height="10" fill="%s" stroke="#888" stroke-width="0.5"/>'
          '<text x="%d" y="57" font-size="10">%s</text>\n'
          % (x, color(kind, label), x + 16, esc(label)))
        x += 22 + int(len(label) * 10 * 0.56)
    if not px:
        w('<text x="%d" y="%d" text-anchor="middle">no samples</text>\n'
          % (width // 2, top + PAD + FONT))
        w('</svg>\n')
        return
    base = height - PAD  # the bottom of level 0

    def frame(node, depth, x0):
        wd = node.weight * px
        y = base - (depth + 1) * FRAME_H
        share = 100.0 * node.weight / root.weight
        w('<g class="%s"><title>%s (%s %s, %.2f%%)</title>'
          '<rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s" rx="1"/>'
          % (node.kind, esc(node.name), fmt_weight(node.weight), esc(unit), share, x0, y, wd,
             FRAME_H - 1, color(node.kind, node.name)))
        chars = int((wd - 6) / CHAR_W)
        if chars >= 3:
            text = node.name if len(node.name) <= chars else node.name[:chars - 2] + '..'
            w('<text x="%.2f" y="%d">%s</text>' % (x0 + 3, y + FRAME_H - 4, esc(text)))
        w('</g>\n')
        cx = x0
        for name in sorted(node.children):
            c = node.children[name]
            if c.weight * px >= MIN_PX:
                frame(c, depth + 1, cx)
            cx += c.weight * px

    x0 = PAD
    for name in sorted(root.children):
        c = root.children[name]
        if c.weight * px >= MIN_PX:
            frame(c, 0, x0)
        x0 += c.weight * px
    w('</svg>\n')


def refuse(msg):
    sys.stderr.write('flamegraph.py: %s\n' % msg)
    sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description='A folded-stacks file as an SVG flame graph.')
    ap.add_argument('folded', help="causeway-export folded's output ('-': stdin)")
    ap.add_argument('-o', '--output', help='SVG file to write (default: stdout)')
    ap.add_argument('--title', default='causal flame graph')
    ap.add_argument('--unit', default='us', help='what a weight counts (causeway: us)')
    ap.add_argument('--width', type=int, default=1200)
    ap.add_argument('--force', action='store_true', help='replace an existing regular file')
    a = ap.parse_args()
    if not 200 <= a.width <= 100000:
        refuse('--width: %d is not 200 to 100000' % a.width)
    # Python recurses a level per frame: stacks are a few hundred deep.
    sys.setrecursionlimit(100000)
    try:
        if a.folded == '-':
            f = open(sys.stdin.fileno(), encoding='utf-8', errors='backslashreplace',
                     closefd=False)
        else:
            f = open(a.folded, encoding='utf-8', errors='backslashreplace')
        with f:
            root, bad = parse(f)
    except OSError as e:
        sys.stderr.write('flamegraph.py: %s: %s\n' % (a.folded, e.strerror))
        sys.exit(1)
    if bad:
        sys.stderr.write('flamegraph.py: %d lines not understood (no "stack weight") were '
                         'left out\n' % bad)
    if not a.output:
        render(root, a.title, a.unit, a.width, sys.stdout)
        return
    out = a.output
    try:
        st = os.lstat(out)
    except FileNotFoundError:
        st = None
    if st is not None:
        if not stat.S_ISREG(st.st_mode):
            refuse('%s: exists and is not a regular file' % out)
        if not a.force:
            refuse('%s: exists (--force replaces it)' % out)
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(out) + '.', suffix='.tmp',
                               dir=os.path.dirname(out) or '.')
    try:
        with os.fdopen(fd, 'w', encoding='utf-8') as o:
            render(root, a.title, a.unit, a.width, o)
        os.replace(tmp, out)
    except OSError as e:
        os.unlink(tmp)
        sys.stderr.write('flamegraph.py: %s: %s\n' % (out, e.strerror))
        sys.exit(1)


if __name__ == '__main__':
    main()
