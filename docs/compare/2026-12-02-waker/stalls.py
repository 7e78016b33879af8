import glob, os, statistics as st, re, sys

def load_ours(d):
    fs = glob.glob(d + '/*.txt')
    return [float(x) / 1000 for x in open(fs[0]) if x.strip()] if fs else []
def load_pt(path):
    v = []
    for line in open(path):
        p = line.strip().split(',')
        if len(p) == 2 and p[0].strip().isdigit(): v.append(float(p[1]))
    return v
base = sys.argv[1]
res = {}
for cond in ('off', 'on'):
    for side in ('pt', 'ours'):
        res[(cond, side)] = []
    for s in sorted(glob.glob(f'{base}/w{cond}[0-9]')):
        for r in range(1, 11):
            od = glob.glob(f'{s}/round{r}-size4096-ours-samples-*')
            pf = f'{s}/round{r}-size4096-perftest-client.txt'
            if not od or not os.path.exists(pf): continue
            for side, v in (('ours', load_ours(od[0])), ('pt', load_pt(pf))):
                if not v: continue
                m = st.median(v); srt = sorted(v)
                res[(cond, side)].append((sum(x > 1000 for x in v), srt[int(.99*len(v))], m, os.path.basename(s), r))
for k, rows in res.items():
    if not rows: continue
    print(k, f"runs={len(rows)} >1ms per run: median {st.median([r[0] for r in rows])} mean {st.mean([r[0] for r in rows]):.1f}; p99 median {st.median([r[1] for r in rows]):.0f} us; p50 median {st.median([r[2] for r in rows]):.1f}")
    print('   ', [r[0] for r in rows])
