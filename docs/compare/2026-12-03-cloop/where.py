"""Where the slow samples (> 5x the run's p50) of each arm fall: by tenth of the run, and in its first 500."""
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '2026-12-03-send-gap'))
from runs import load, pct
d, tool = sys.argv[1], sys.argv[2]
for arm in sys.argv[3].split(','):
    bins = [0]*10; tot=0; first=[0]*5
    for i in range(1, 81):
        try: v = load(d, tool, arm, i)
        except FileNotFoundError: continue
        if not v: continue
        p50 = pct(v, .5); n=len(v)
        for j, x in enumerate(v):
            if x > 5*p50:
                bins[j*10//n] += 1; tot += 1
                if j < 500: first[j//100] += 1
    print(arm, tot, "deciles", bins, "first 500 by 100", first)
