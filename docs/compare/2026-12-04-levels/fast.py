"""Each arm's runs at the host's fast level, and pairs within it.
Usage: fast.py DIR THRESHOLD_US ARM,ARM,... (the first arm is the
reference). A run is at the fast level when its p50 is under THRESHOLD_US
(between the two levels: 24-25 us for 8 B atomics on 2026-12-04). The
pairs kept are the rounds where both runs were fast: a selection on the
outcome, so read the figure as a description of that level, not a test."""
import math, os, statistics as st, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '2026-12-03-send-gap'))
from runs import each_run, pct
d, thr, arms = sys.argv[1], float(sys.argv[2]), sys.argv[3].split(',')
p50 = {a: {} for a in arms}
for a, i, v in each_run(d, 'atomic', arms):
    p50[a][i] = pct(v, .5)
for a in arms:
    fast = [x for x in p50[a].values() if x < thr]
    print(f"{a:7} runs {len(p50[a]):2}  fast {len(fast):2}  p50 at the fast level {st.median(fast):.2f} us")
ref = arms[0]
for a in arms[1:]:
    xs = [math.log(p50[a][i] / p50[ref][i]) for i in p50[ref] if i in p50[a] and p50[a][i] < thr and p50[ref][i] < thr]
    if len(xs) > 1:
        print(f"{a}/{ref} rounds both fast {len(xs)}: p50 log ratio {st.mean(xs):+.3f} (se {st.stdev(xs) / math.sqrt(len(xs)):.3f})")
