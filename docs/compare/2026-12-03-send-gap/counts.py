#!/usr/bin/env python3
"""counts.py DIR: per-iteration kernel events on CPUs 2 (initiator) and 3
(responder) from counts.sh's snapshots: (delta over a 22000-iteration
run - delta over a 2000-iteration run) / 20000, per arm and repetition."""
import collections, re, sys
d = sys.argv[1]
def parse(path):
    out, sec = {}, None
    for line in open(path):
        if line.startswith("## "): sec = line[3:].strip(); continue
        f = line.split()
        if not f: continue
        if sec == "schedstat":  # cpuN yld 0 sched goidle ttwu ttwu_local run wait slices
            c = f[0]; v = list(map(int, f[1:]))
            for k, i in (("sched", 2), ("goidle", 3), ("ttwu", 4), ("run_ns", 6), ("wait_ns", 7)):
                out[f"{c}.{k}"] = v[i]
        elif sec in ("softirqs", "interrupts"):
            if f[0].startswith("CPU"): continue
            name = f[0].rstrip(":"); vals = f[1:5]
            for j, c in enumerate(("cpu0", "cpu1", "cpu2", "cpu3")):
                if j < len(vals) and vals[j].isdigit(): out[f"{c}.{name}"] = int(vals[j])
        elif sec == "stat":
            if f[0] == "ctxt": out["ctxt"] = int(f[1])
    return out
def delta(arm, n, rep):
    a, b = parse(f"{d}/{arm}-{n}-{rep}.before"), parse(f"{d}/{arm}-{n}-{rep}.after")
    return {k: b[k] - a[k] for k in b if k in a}
arms = ["writept", "writeours", "sendpt", "sendours", "readpt", "readours"]
keys = None
table = collections.OrderedDict()
for arm in arms:
    for rep in (1, 2):
        try: s, l = delta(arm, 2000, rep), delta(arm, 22000, rep)
        except FileNotFoundError: continue
        per = {k: (l[k] - s.get(k, 0)) / 20000 for k in l}
        table[(arm, rep)] = per
        keys = keys or sorted(k for k in per if k.startswith(("cpu2", "cpu3")) or k == "ctxt")
show = [k for k in keys if any(abs(p.get(k, 0)) >= 0.01 for p in table.values())]
print("per iteration (22000-run minus 2000-run, / 20000); run_ns/wait_ns in ns")
print(f"{'':16s}" + "".join(f"{a[:9]}{r:1d}".rjust(12) for a, r in table))
for k in show:
    print(f"{k:16s}" + "".join(f"{p.get(k, 0):12.3f}" for p in table.values()))
