"""Per arm: the median of the runs' p50 and the mean count a run of samples above 2, 3, 5 and 8x that run's p50."""
import sys, os, statistics as st
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '2026-12-03-send-gap'))
from runs import load, pct
d, tool = sys.argv[1], sys.argv[2]
for arm in sys.argv[3].split(','):
    p50s=[]; cnt={t:[] for t in (2,3,5,8)}
    for i in range(1,81):
        try: v=load(d,tool,arm,i)
        except FileNotFoundError: continue
        if not v: continue
        m=pct(v,.5); p50s.append(m)
        for t in cnt: cnt[t].append(sum(x>t*m for x in v))
    print(arm, "p50 med %.1f"%st.median(p50s), " ".join("n>%dx %.1f"%(t,st.mean(c)) for t,c in cnt.items()))
