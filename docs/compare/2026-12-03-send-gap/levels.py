#!/usr/bin/env python3
"""levels.py DIR TOOL CUT REF ARM...: the host flips between two latency
levels; per run, the share of samples below CUT us (the fast level) and
their median. Paired ratios of that median in rounds where both sides
spent at least MINFRAC (default 0.2) of their samples at the fast level."""
import math, os, re, statistics as st, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runs
from runs import pct
d, tool, cut, ref, arms = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5:]
def load(arm, i): return runs.load(d, tool, arm, i)
minfrac = float(os.environ.get("MINFRAC", "0.2"))
rounds = sorted(int(m.group(1)) for f in os.listdir(d) if (m := re.match(rf"{tool}{ref}(\d+)\.txt$", f)))
def fast(v):
    f = [x for x in v if x < cut]
    return len(f) / len(v), (pct(f, .5) if f else None)
res = {a: [] for a in arms}
for i in rounds:
    r = {a: load(a, i) for a in [ref] + arms}
    if any(v is None for v in r.values()): continue
    fr = {a: fast(v) for a, v in r.items()}
    line = f"{i:3d} " + " ".join(f"{a} {fr[a][0]:.2f}/{fr[a][1] or 0:.2f}" for a in [ref] + arms)
    print(line)
    for a in arms:
        if fr[a][0] >= minfrac and fr[ref][0] >= minfrac:
            res[a].append(math.log(fr[a][1] / fr[ref][1]))
for a, xs in res.items():
    if len(xs) > 1:
        print(f"{a}/{ref} fast-level median: median {math.exp(st.median(xs)):.4f}x mean log {st.mean(xs):+.4f} se {st.stdev(xs)/math.sqrt(len(xs)):.4f} n={len(xs)}")
