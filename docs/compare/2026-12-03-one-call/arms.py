#!/usr/bin/env python3
"""Three arms per round: perftest (pt), asis, rdmabench (Expect).
Per round: p50, p99 (nearest rank) of one-way us; stalls (> 3x run p50);
paired log ratios vs pt for each arm and asis vs Expect."""
import glob, math, os, re, sys, statistics as st
d = sys.argv[1]
def pct(xs, q):
    s = sorted(xs); k = max(1, math.ceil(q * len(s))); return s[k - 1]
def pt(i):
    v = []
    on = False
    for line in open(f"{d}/pt{i}.txt"):
        if line.startswith("#, usec"): on = True; continue
        m = re.match(r"^(\d+), ([\d.]+)$", line.strip())
        if on and m: v.append(float(m.group(2)))
        elif on and v: break
    return v
def ours(name, i):
    f = glob.glob(f"{d}/{name}{i}/*.txt")
    if len(f) != 1: return None
    return [float(x) / 1000 for x in open(f[0])]
def fig(v):
    p50 = pct(v, .5)
    return dict(p50=p50, p99=pct(v, .99), st3=sum(x > 3 * p50 for x in v), st10=sum(x > 10 * p50 for x in v), n=len(v))
rounds = sorted(int(m.group(1)) for f in os.listdir(d) if (m := re.match(r"pt(\d+)\.txt$", f)))
rows = []
for i in rounds:
    a, b, c = pt(i), ours("asis", i), ours("rdmabench", i)
    if not a or not b or not c: print("round", i, "incomplete"); continue
    rows.append((i, fig(a), fig(b), fig(c)))
def summ(label, xs):
    m = st.mean(xs); se = st.stdev(xs) / math.sqrt(len(xs))
    print(f"  {label:28s} median {st.median(xs):+.4f} mean {m:+.4f} se {se:.4f}  n={len(xs)}")
print(f"{len(rows)} rounds; sample counts pt {rows[0][1]['n']} asis {rows[0][2]['n']} expect {rows[0][3]['n']}")
for k in ("p50", "p99"):
    print(k, "log ratio:")
    summ("asis/pt", [math.log(r[2][k] / r[1][k]) for r in rows])
    summ("expect/pt", [math.log(r[3][k] / r[1][k]) for r in rows])
    summ("expect/asis", [math.log(r[3][k] / r[2][k]) for r in rows])
    print(f"  medians pt {st.median(r[1][k] for r in rows):.2f} asis {st.median(r[2][k] for r in rows):.2f} expect {st.median(r[3][k] for r in rows):.2f} us")
for k in ("st3", "st10"):
    print(k, "stalls/run medians pt %.1f asis %.1f expect %.1f" % tuple(st.median(r[j][k] for r in rows) for j in (1, 2, 3)))
    summ("asis-pt", [r[2][k] - r[1][k] for r in rows])
    summ("expect-pt", [r[3][k] - r[1][k] for r in rows])
    summ("expect-asis", [r[3][k] - r[2][k] for r in rows])
if len(sys.argv) > 2:
    with open(sys.argv[2], "w") as f:
        f.write("round\tpt_p50\tpt_p99\tpt_st3\tasis_p50\tasis_p99\tasis_st3\texpect_p50\texpect_p99\texpect_st3\t(one-way us; stalls > 3x the run's p50)\n")
        for i, a, b, c in rows:
            f.write(f"{i}\t" + "\t".join(f"{x['p50']:.2f}\t{x['p99']:.2f}\t{x['st3']}" for x in (a, b, c)) + "\n")
