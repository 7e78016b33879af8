#!/usr/bin/env python3
"""Sets each VM run's p50 beside the host memory probe's reading while it
ran. usage: memcorr.py LINES_DIR RUNS_DIR PROBE.TXT ARM,ARM,...
LINES_DIR/lines.tsv from ../2026-12-04-levels/hostcpu.py (host-stamped
START/END lines of levels/arms.sh), RUNS_DIR the rxevm -out directory,
PROBE.TXT memprobe's output. Per run: its p50 and the median probe time
over the last 0.5 s before its END (the loop ends a run; teardown is
short), as a ratio to the probe's median over the whole boot. Then the
rank correlation, and the probe ratio in the slowest and fastest third."""
import os, statistics as st, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '2026-12-03-send-gap'))
from runs import load, pct
lines, runs_dir, probe, arms = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(',')
pr = [tuple(map(int, l.split())) for l in open(probe) if len(l.split()) == 2]
med = st.median(d for _, d in pr)
ends = {}
for l in open(os.path.join(lines, 'lines.tsv')):
    t, _, rest = l.partition('\t')
    f = rest.split()
    if len(f) == 3 and f[0] == 'END':
        ends[(f[1], int(f[2]))] = float(t) * 1e9
rows = []
for (a, i), end in sorted(ends.items()):
    if a not in arms:
        continue
    try:
        v = load(runs_dir, 'atomic', a, i)
    except FileNotFoundError:
        continue
    ds = [d for t0, d in pr if end - 0.5e9 <= t0 <= end]
    if v and ds:
        rows.append((pct(v, .5), st.median(ds) / med, a, i))
def ranks(xs):
    o = sorted(range(len(xs)), key=lambda k: xs[k])
    r = [0] * len(xs)
    for k, j in enumerate(o):
        r[j] = k
    return r
x, y = ranks([r[0] for r in rows]), ranks([r[1] for r in rows])
n = len(rows)
mx, my = st.mean(x), st.mean(y)
rho = sum((a - mx) * (b - my) for a, b in zip(x, y)) / (sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y)) ** .5
print(f'runs {n}; Spearman rho(p50, host probe) {rho:+.2f}')
rows.sort()
third = n // 3
print(f'fastest third: p50 {st.median(r[0] for r in rows[:third]):.1f} us, probe {st.median(r[1] for r in rows[:third]):.2f}x')
print(f'slowest third: p50 {st.median(r[0] for r in rows[-third:]):.1f} us, probe {st.median(r[1] for r in rows[-third:]):.2f}x')
for r in rows:
    print(f'{r[2]:6} {r[3]:3} p50 {r[0]:6.2f} us  probe {r[1]:.2f}x')
