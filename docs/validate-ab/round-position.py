#!/usr/bin/env python3
"""round-position.py BURSTS: does a turn's place in its ABBA round bias
the duet's per-round ratio? For each round (old and new turn of one seq),
the side whose turn ended first ran first; prints the log ratio new/old
by who ran first, pooled and per duet pair, and the per-pair difference
of the two medians (new-first minus old-first rounds)."""
import collections
import math
import statistics as st
import sys

rounds = collections.defaultdict(dict)  # (pair, run, seq, label) -> side -> (median, µs)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 10 and f[2] == "burst":
        rounds[(int(f[0]), int(f[3]), int(f[4]), f[9])][f[1]] = (int(f[6]), int(f[8]))
pooled = collections.defaultdict(list)
per_pair = collections.defaultdict(lambda: collections.defaultdict(list))
for key, r in rounds.items():
    if "old" in r and "new" in r:
        lr = math.log(r["new"][0] / r["old"][0])
        first = "old" if r["old"][1] < r["new"][1] else "new"
        pooled[first].append(lr)
        per_pair[key[0]][first].append(lr)
for first, v in sorted(pooled.items()):
    print(f"{first} first: {len(v)} rounds, median log ratio {100 * st.median(v):+.2f}%, mean {100 * st.mean(v):+.2f}%")
diffs, values = [], []
for p in sorted(per_pair):
    o, n = per_pair[p]["old"], per_pair[p]["new"]
    all_ = sorted(o + n)
    values.append(all_[len(all_) // 2])
    line = f"pair {p}: pair value {100 * values[-1]:+.2f}%"
    if o and n:
        diffs.append(st.median(n) - st.median(o))
        line += f", old-first rounds {100 * st.median(o):+.2f}% ({len(o)}), new-first {100 * st.median(n):+.2f}% ({len(n)})"
    print(line)
print(f"per-pair values: sd {100 * st.stdev(values):.2f}% over {len(values)} pairs")
if len(diffs) > 1:
    print(f"new-first minus old-first median, per pair: mean {100 * st.mean(diffs):+.2f} points, sd {100 * st.stdev(diffs):.2f}, se {100 * st.stdev(diffs) / len(diffs) ** 0.5:.2f}")
