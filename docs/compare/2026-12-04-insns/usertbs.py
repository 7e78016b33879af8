#!/usr/bin/env python3
"""Where a window's user instructions run: usertb lines of where.so's report
mapped to file+offset with the arm's /proc/PID/maps, summed per file, then
the blocks one arm runs and the other does not.
usage: usertbs.py WHERE.TXT WINDOW MAPS NAME [WINDOW MAPS NAME]"""
import collections, sys

def maps(path):
    out = []
    for ln in open(path):
        f = ln.split()
        lo, hi = (int(x, 16) for x in f[0].split('-'))
        out.append((lo, hi, int(f[2], 16), f[5] if len(f) > 5 else '[anon]'))
    return out

def where(m, va):
    for lo, hi, off, name in m:
        if lo <= va < hi:
            return name.rsplit('/', 1)[-1], va - lo + off
    return '?', va

def window(path, w):
    tbs, cur = [], None
    for ln in open(path):
        if ln.startswith('window '):
            cur = int(ln.split()[1])
        elif ln.startswith('usertb ') and cur == w:
            f = ln.split()
            tbs.append((int(f[1], 16), int(f[3]), float(f[5])))
    return tbs

args = sys.argv[1:]
path, arms = args[0], []
for i in range(1, len(args), 3):
    w, m, name = int(args[i]), maps(args[i + 1]), args[i + 2]
    per = collections.Counter()
    blocks = collections.Counter()
    for va, n, ex in window(path, w):
        f, off = where(m, va)
        per[f] += n * ex
        blocks[(f, off, n)] += ex
    arms.append((name, per, blocks))
    print(f'{name}: user instructions an iteration {sum(per.values()):.0f}')
    for f, v in per.most_common():
        print(f'  {f:40} {v:6.1f}')
if len(arms) == 2:
    (a, _, ba), (b, _, bb) = arms
    for (x, bx), (y, by) in (((a, ba), (b, bb)), ((b, bb), (a, ba))):
        only = [(k, v) for k, v in bx.items() if abs(v - by.get(k, 0)) > 0.01]
        print(f'blocks {x} runs more often than {y}:', ', '.join(f'{k[0]}+{k[1]:x} ({k[2]} insns x{v - by.get(k, 0):.2f})' for k, v in sorted(only)))
