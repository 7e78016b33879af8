import glob, statistics as st, bisect, sys
starts = [0, 16, 48, 112, 240, 496, 1008, 2032, 4080]
def load(d):
    fs = glob.glob(d + '/*.txt'); return [float(x)/1000 for x in open(fs[0]) if x.strip()]
near = far = 0; nearS = farS = 0
hist = [0]*12
for d in glob.glob(sys.argv[1] + '/woff*/round*-ours-samples-*'):
    v = load(d)
    if sum(x > 1000 for x in v) > 300: continue
    # time since the last boundary, in ms
    t_since = []
    for i, x in enumerate(v):
        b = starts[bisect.bisect_right(starts, i) - 1]
        ms = sum(2*y for y in v[b:i]) / 1000
        t_since.append(ms)
    for i, x in enumerate(v):
        k = min(int(t_since[i] // 2), 11)
        if x > 1000: hist[k] += 1
print("stalls >1ms by time since the chunk started (2 ms bins):", hist)
# samples per bin, for normalisation
cnt = [0]*12
for d in glob.glob(sys.argv[1] + '/woff*/round*-ours-samples-*'):
    v = load(d)
    if sum(x > 1000 for x in v) > 300: continue
    for i, x in enumerate(v):
        b = starts[bisect.bisect_right(starts, i) - 1]
        ms = sum(2*y for y in v[b:i]) / 1000
        cnt[min(int(ms // 2), 11)] += 1
print("samples per bin:", cnt)
print("stall rate per bin (%):", [round(100*h/c, 2) if c else 0 for h, c in zip(hist, cnt)])
