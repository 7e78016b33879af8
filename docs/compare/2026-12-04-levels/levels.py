"""Per run: its p50, and the host CPU that QEMU's threads used while it
ran (from hostcpu.py's files), split into the measuring vCPU's thread
(the busiest), the other vCPUs and QEMU's other threads; and the same over
the loop only (the stretch where the measuring vCPU's thread ran at 90%
or more of each 5 ms sample). Usage: levels.py DIR (hostcpu.py's OUT,
with the run's raw files under DIR/raw)."""
import os, sys, statistics as st, bisect
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '2026-12-03-send-gap'))
from runs import load, pct
d = sys.argv[1]
ts, rows = [], []
for line in open(f"{d}/cpu.tsv"):
    f = line.rstrip('\n').split('\t')
    ts.append(float(f[0]))
    rows.append({int(x.split('=')[0].split(':')[1]): int(x.split('=')[1]) for x in f[1:]})
last = max(rows, key=len)
tids = sorted(last)
main, vcpus = tids[0], tids[2:6]          # QEMU's main thread, call_rcu, then vCPUs 0-3
meas = max(vcpus, key=lambda t: last[t])
spans = {}
for line in open(f"{d}/lines.tsv"):
    t, s = line.rstrip('\n').split('\t', 1)
    w = s.split()
    if len(w) == 3 and w[0] in ('START', 'END'):
        spans.setdefault((w[1], int(w[2])), {})[w[0]] = float(t)
def at(t):
    return max(0, bisect.bisect_left(ts, t) - 1)
def use(i, j, tid):
    return (rows[j].get(tid, 0) - rows[i].get(tid, 0)) / 1e6  # ms
out = {}
for (arm, r), s in sorted(spans.items(), key=lambda x: x[1]['START']):
    if 'END' not in s:
        continue
    i, j = at(s['START']), at(s['END'])
    # the loop: samples where the measuring vCPU ran >= 90% of the interval
    busy = [k for k in range(i, j) if use(k, k + 1, meas) >= 0.9 * (ts[k + 1] - ts[k]) * 1e3]
    li, lj = (busy[0], busy[-1] + 1) if busy else (i, i)
    others = [t for t in vcpus if t != meas]
    try:
        v = load(f"{d}/raw", 'atomic', arm, r)
    except FileNotFoundError:
        continue
    out.setdefault(arm, []).append(dict(
        p50=pct(v, .5) if v else float('nan'), span=(ts[j] - ts[i]) * 1e3, loop=(ts[lj] - ts[li]) * 1e3,
        oth=sum(use(i, j, t) for t in others), qemu=sum(use(i, j, t) for t in tids if t not in vcpus),
        loth=sum(use(li, lj, t) for t in others), lqemu=sum(use(li, lj, t) for t in tids if t not in vcpus)))
print(f"measuring vCPU thread {meas}; per arm, medians over runs (ms of host CPU):")
print("arm    runs  slow  p50(us)  span(ms)  other-vCPUs  qemu-other | loop(ms)  other-vCPUs  qemu-other")
for arm, xs in out.items():
    m = lambda k: st.median(x[k] for x in xs)
    slow = sum(x['p50'] > 1.2 * st.median(y['p50'] for y in xs) for x in xs)
    print(f"{arm:6} {len(xs):4} {slow:5} {m('p50'):8.1f} {m('span'):9.0f} {m('oth'):12.1f} {m('qemu'):11.1f} | {m('loop'):8.0f} {m('loth'):12.1f} {m('lqemu'):11.1f}")
print("\nslow runs (p50 > 1.2x the fastest arm's median) against CPU used by the other vCPUs in their loop:")
base = min(st.median(x['p50'] for x in xs) for xs in out.values())
for arm, xs in out.items():
    sl = [x for x in xs if x['p50'] > 1.2 * base]
    fa = [x for x in xs if x['p50'] <= 1.2 * base]
    f = lambda g, k: st.median(x[k] for x in g) if g else float('nan')
    print(f"{arm:6} slow {len(sl):2}: loop other-vCPUs {f(sl,'loth'):6.1f} qemu {f(sl,'lqemu'):6.1f}   fast {len(fa):2}: other-vCPUs {f(fa,'loth'):6.1f} qemu {f(fa,'lqemu'):6.1f}")

if len(sys.argv) > 2:  # levels.py DIR ARM: each run of ARM, vCPU by vCPU, in 10 stretches of its loop
    arm = sys.argv[2]
    for (a, r), s in sorted(spans.items(), key=lambda x: x[1]['START']):
        if a != arm or 'END' not in s:
            continue
        i, j = at(s['START']), at(s['END'])
        busy = [k for k in range(i, j) if use(k, k + 1, meas) >= 0.9 * (ts[k + 1] - ts[k]) * 1e3]
        if not busy:
            continue
        li, lj = busy[0], busy[-1] + 1
        try:
            v = load(f"{d}/raw", 'atomic', a, r)
        except FileNotFoundError:
            continue
        if not v:
            continue
        cut = [li + (lj - li) * q // 10 for q in range(11)]
        per = ' '.join(f"{sum(use(cut[q], cut[q + 1], t) for t in vcpus if t != meas):4.0f}" for q in range(10))
        print(f"{a} {r:2} p50 {pct(v, .5):5.1f} loop {(ts[lj] - ts[li]) * 1e3:4.0f} ms  by vCPU " +
              ' '.join(f"{use(li, lj, t):5.0f}" for t in vcpus) + f"  others by tenth: {per}")
