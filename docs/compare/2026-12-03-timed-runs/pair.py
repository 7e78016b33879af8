#!/usr/bin/env python3
"""pair.py DIR: per round p50, p99, p99.9 (nearest rank, one-way us) and
stalls (> 3x and > 10x the run's p50) of chunks and rdmabench (ExpectFor);
paired log ratios rdmabench/chunks and differences in stalls."""
import glob, math, os, re, sys, statistics as st
d = sys.argv[1]
def pct(xs, q):
    s = sorted(xs); k = max(1, math.ceil(q * len(s))); return s[k - 1]
def load(name, i):
    f = glob.glob(f"{d}/{name}{i}/*.txt")
    return [float(x) / 1000 for x in open(f[0])] if len(f) == 1 else None
def fig(v):
    p50 = pct(v, .5)
    return dict(n=len(v), p50=p50, p99=pct(v, .99), p999=pct(v, .999), st3=sum(x > 3 * p50 for x in v), st10=sum(x > 10 * p50 for x in v))
rounds = sorted(int(m.group(1)) for f in os.listdir(d) if (m := re.match(r"chunks(\d+)\.txt$", f)))
rows = [(i, fig(a), fig(b)) for i in rounds if (a := load("chunks", i)) and (b := load("rdmabench", i))]
print(f"{len(rows)} rounds; samples a run, median: chunks {st.median(r[1]['n'] for r in rows):.0f}, ExpectFor {st.median(r[2]['n'] for r in rows):.0f}")
for k in ("p50", "p99", "p999"):
    xs = [math.log(r[2][k] / r[1][k]) for r in rows]
    print(f"{k}: medians chunks {st.median(r[1][k] for r in rows):.2f} ExpectFor {st.median(r[2][k] for r in rows):.2f} us; "
          f"paired log ratio mean {st.mean(xs):+.4f} se {st.stdev(xs)/math.sqrt(len(xs)):.4f} (median {math.exp(st.median(xs)):.3f}x)")
for k in ("st3", "st10"):
    xs = [r[2][k] - r[1][k] for r in rows]
    print(f"stalls {k}: medians chunks {st.median(r[1][k] for r in rows):.1f} ExpectFor {st.median(r[2][k] for r in rows):.1f} a run; paired difference mean {st.mean(xs):+.1f} se {st.stdev(xs)/math.sqrt(len(xs)):.1f}")
if len(sys.argv) > 2:
    with open(sys.argv[2], "w") as f:
        f.write("round\tchunks_n\tchunks_p50\tchunks_p99\tchunks_st3\texpectfor_n\texpectfor_p50\texpectfor_p99\texpectfor_st3\t(one-way us)\n")
        for i, a, b in rows:
            f.write(f"{i}\t" + "\t".join(f"{x['n']}\t{x['p50']:.2f}\t{x['p99']:.2f}\t{x['st3']}" for x in (a, b)) + "\n")
