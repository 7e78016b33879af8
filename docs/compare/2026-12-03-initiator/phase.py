import os, sys, math, statistics as st
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '2026-12-03-send-gap'))
from runs import load, pct
d, tool, arms = sys.argv[1], sys.argv[2], sys.argv[3].split(',')
P = float(sys.argv[4]) if len(sys.argv) > 4 else 4000.0
for arm in arms:
    Rs, inph, outph, exin, exout, nslow, burst = [], [], [], [], [], [], []
    for i in range(1, 81):
        try: v = load(d, tool, arm, i)
        except FileNotFoundError: continue
        if not v: continue
        p50 = pct(v, .5)
        t = 0; ph = []; vals = []
        prev_slow = False; nb = 0
        for x in v:
            t0 = t; t += x
            if x > 2 * p50:
                ph.append(2 * math.pi * ((t0 + t) / 2 % P) / P); vals.append(x - p50)
                if prev_slow: nb += 1
                prev_slow = True
            else: prev_slow = False
        if len(ph) < 5: continue
        c = sum(math.cos(a) for a in ph) / len(ph); s = sum(math.sin(a) for a in ph) / len(ph)
        Rs.append(math.hypot(c, s)); mean = math.atan2(s, c)
        ins = [x for a, x in zip(ph, vals) if math.cos(a - mean) > math.cos(math.pi / 8)]
        outs = [x for a, x in zip(ph, vals) if math.cos(a - mean) <= math.cos(math.pi / 8)]
        inph.append(len(ins)); outph.append(len(outs)); nslow.append(len(ph)); burst.append(nb)
        if ins: exin.append(st.median(ins))
        if outs: exout.append(st.median(outs))
    print(f"{arm:9} runs {len(Rs)}: slow(>2x p50) {st.median(nslow):6.1f}  in burst {st.median(burst):5.1f}  phase R at {P:.0f}us {st.median(Rs):.2f}  in-phase {st.median(inph):5.1f} (excess {st.median(exin):6.1f} us)  off-phase {st.median(outph):5.1f} (excess {st.median(exout):6.1f} us)")
