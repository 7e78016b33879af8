#!/usr/bin/env python3
"""arms.py DIR TOOL REF ARM...: per round p50 and p99 (nearest rank, one-way
us as each side reports) of every arm; each arm's paired log ratio to REF.
perftest arms (names ending in pt or ptmt) are read from -U output, ours
from RDMABENCH_SAMPLES_DIR files."""
import math, os, re, sys, statistics as st
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runs
from runs import pct
d, tool, ref, arms = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
def load(arm, i): return runs.load(d, tool, arm, i)
rounds = sorted(int(m.group(1)) for f in os.listdir(d) if (m := re.match(rf"{tool}{ref}(\d+)\.txt$", f)))
rows = []
for i in rounds:
    r = {a: load(a, i) for a in [ref] + arms}
    if any(v is None for v in r.values()): print("round", i, "incomplete"); continue
    rows.append({a: dict(p50=pct(v, .5), p99=pct(v, .99), n=len(v)) for a, v in r.items()})
print(f"{tool}: {len(rows)} rounds, samples " + " ".join(f"{a} {rows[0][a]['n']}" for a in [ref] + arms))
for k in ("p50", "p99"):
    print(f"{k}: medians " + " ".join(f"{a} {st.median(r[a][k] for r in rows):.2f}" for a in [ref] + arms) + " us")
    for a in arms:
        xs = [math.log(r[a][k] / r[ref][k]) for r in rows]
        se = st.stdev(xs) / math.sqrt(len(xs))
        print(f"  {a}/{ref}: median {math.exp(st.median(xs)):.4f}x  mean log {st.mean(xs):+.4f} se {se:.4f}  n={len(xs)}")
if os.environ.get("ROWS"):
    for j, r in enumerate(rows):
        print(rounds[j], " ".join(f"{a} {r[a]['p50']:.2f}/{r[a]['p99']:.0f}" for a in [ref] + arms))
