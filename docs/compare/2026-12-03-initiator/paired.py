import os, sys, math, statistics as st
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '2026-12-03-send-gap'))
from runs import load, pct
d, tool, pairs = sys.argv[1], sys.argv[2], [p.split('/') for p in sys.argv[3].split(',')]
def stats(v):
    p50 = pct(v, .5)
    return dict(p50=p50, p99=pct(v, .99), p999=pct(v, .999), n2=sum(x > 2*p50 for x in v), n3=sum(x > 3*p50 for x in v), n5=sum(x > 5*p50 for x in v), mean=st.mean(v))
for a, b in pairs:
    rows = []
    for i in range(1, 81):
        try: va, vb = load(d, tool, a, i), load(d, tool, b, i)
        except FileNotFoundError: continue
        if va and vb: rows.append((stats(va), stats(vb)))
    out = [f"{a}/{b} n={len(rows)}:"]
    for k in ('p50', 'p99', 'p999', 'mean'):
        xs = [math.log(x[k] / y[k]) for x, y in rows]
        out.append(f"{k} {st.mean(xs):+.3f}±{st.stdev(xs)/math.sqrt(len(xs)):.3f}")
    for k in ('n2', 'n3', 'n5'):
        xs = [x[k] - y[k] for x, y in rows]
        out.append(f"{k} {st.mean(xs):+.1f}±{st.stdev(xs)/math.sqrt(len(xs)):.1f}")
    print("  ".join(out))
