# Per duet pair: median over its turns of log(new/old); by start order (order.txt) when recorded.
import sys, math, glob, statistics as st, collections, os, re
def pairs(path):
    b = collections.defaultdict(lambda: collections.defaultdict(dict))
    for line in open(path):
        f = line.split()
        if len(f) < 10 or f[2] != 'burst': continue
        b[int(f[0])][(int(f[3]), int(f[4]), f[9])][f[1]] = int(f[6])
    out = {}
    for p in sorted(b):
        rs = [math.log(v['new']/v['old']) for v in b[p].values() if v.get('new', 0) > 0 and v.get('old', 0) > 0]
        if rs: out[p] = st.median(rs)
    return out
def first(d):
    o = {}
    f = os.path.join(d, 'order.txt')
    for line in open(f):
        m = re.match(r'pair (\d+) duet, (old|new) started first', line)
        if m: o[int(m.group(1))] = m.group(2)
    return o
allp = []
for d in sys.argv[1:]:
    for t in sorted(glob.glob(d + '/duet-aa/duet-aa*/bursts.txt')):
        ps = pairs(t); fo = first(os.path.dirname(t))
        if not fo: fo = {p: ('old' if p % 2 == 1 else 'new') for p in ps}
        allp.append((ps, fo))
        v = list(ps.values())
        print(f"{t}: n={len(v)} mean={100*st.mean(v):+.2f}% sd={100*st.stdev(v):.2f}%")
o = [x for ps, fo in allp for p, x in ps.items() if fo.get(p) == 'old']
e = [x for ps, fo in allp for p, x in ps.items() if fo.get(p) == 'new']
a = o + e
print(f"pooled: n={len(a)} mean={100*st.mean(a):+.3f}% se={100*st.stdev(a)/len(a)**.5:.3f}")
print(f"old first: n={len(o)} mean={100*st.mean(o):+.3f}% se={100*st.stdev(o)/len(o)**.5:.3f}; new first: n={len(e)} mean={100*st.mean(e):+.3f}% se={100*st.stdev(e)/len(e)**.5:.3f}")
def ac(lag):
    num = den = 0
    for ps, _ in allp:
        v = [ps[p] for p in sorted(ps)]; m = st.mean(v)
        for i in range(len(v)):
            den += (v[i]-m)**2
            if i + lag < len(v): num += (v[i]-m)*(v[i+lag]-m)
    return num/den
print("autocorrelation lags 1-4:", [round(ac(l), 3) for l in (1, 2, 3, 4)])
