#!/usr/bin/env python3
"""Instructions per operation from perop.sh's windows.
usage: perop.py RUN.LOG WHERE.TXT
Pairs the W lines of the run's log with where.so's windows, in order; per
tool, side and repetition, (instructions at M - at N) / (M - N), all vCPUs,
split into user and kernel, then ours/perftest."""
import collections, re, statistics as st, sys

labels = [l.split()[1:] for l in open(sys.argv[1]) if l.startswith('W ')]
wins, cur = [], None
for ln in open(sys.argv[2]):
    if ln.startswith('window '):
        cur = collections.Counter()
        wins.append(cur)
    m = re.match(r'vcpu (\d+) user (\d+) kernel (\d+) tbs', ln)
    if m and cur is not None:
        c, u, k = m.groups()
        cur['user'] += int(u)
        cur['kernel'] += int(k)
        cur['cpu' + c] += int(u) + int(k)
        cur['cpu%su' % c] += int(u)
        cur['cpu%sk' % c] += int(k)
if len(wins) != len(labels):
    sys.exit(f'{len(labels)} runs but {len(wins)} windows')
runs = {}
for (tool, side, n, rep), w in zip(labels, wins):
    runs[(tool, side, int(n), rep)] = w
per = collections.defaultdict(list)
for (tool, side, n, rep), w in runs.items():
    longer = [m for (t, sd, m, r) in runs if (t, sd, r) == (tool, side, rep) and m > n]
    if not longer:
        continue
    m = longer[0]
    hi = runs[(tool, side, m, rep)]
    per[(tool, side)].append({k: (hi[k] - w[k]) / (m - n) for k in ('user', 'kernel', 'cpu2', 'cpu3', 'cpu2u', 'cpu2k', 'cpu3u', 'cpu3k')})
print(f"{'tool':8} {'side':5} {'user':>7} {'kernel':>8} {'cpu2 u':>8} {'cpu2 k':>8} {'cpu3 u':>8} {'cpu3 k':>8} {'total':>8}  (instructions an operation, median of reps; spread of cpu2 kernel)")
tot = {}
for (tool, side), xs in sorted(per.items()):
    t = [x['user'] + x['kernel'] for x in xs]
    tot[(tool, side)] = st.median(t)
    k2 = [x['cpu2k'] for x in xs]
    print(f"{tool:8} {side:5} {st.median(x['user'] for x in xs):7.0f} {st.median(x['kernel'] for x in xs):8.0f} "
          + ' '.join(f"{st.median(x[k] for x in xs):8.0f}" for k in ('cpu2u', 'cpu2k', 'cpu3u', 'cpu3k'))
          + f" {st.median(t):8.0f}  ({min(k2):.0f}-{max(k2):.0f})")
for tool in sorted({t for t, _ in per}):
    if (tool, 'pt') in tot and (tool, 'ours') in tot:
        k = {sd: st.median(x['cpu2k'] + x['cpu3k'] for x in per[(tool, sd)]) for sd in ('pt', 'ours')}
        print(f'{tool:8} ours/perftest all {tot[(tool, "ours")] / tot[(tool, "pt")]:.4f}, kernel on the two measuring CPUs {k["ours"] / k["pt"]:.4f}')
