#!/usr/bin/env python3
"""Rates over threads.sh's windows: per thread of the measured process,
ksoftirqd/2, and per CPU. Usage: threads.py DIR"""
import glob, os, sys

def parse(path):
    d = {"T": {}, "S": {}, "Q": {}, "I": {}, "Z": {}}
    for line in open(path):
        f = line.split()
        if not f:
            continue
        k = f[0]
        if k == "T" and len(f) < 12:
            continue  # the thread ended while it was read
        if k == "T":
            # tid state minflt utime stime cpu run_ns wait_ns slices vol nonvol
            # (cut prints the stat fields in their order) -> utime stime cpu
            # run_ns wait_ns slices vol nonvol minflt
            d["T"][f[1]] = [int(x) for x in f[4:12]] + [int(f[3])]
        elif k == "K":
            if len(f) >= 7:
                d["K"] = [int(x) for x in f[2:7]]
        elif k == "S":
            d["S"][f[1]] = [int(x) for x in f[2:]]
        elif k == "Q":
            d["Q"][f[1]] = [int(x) for x in f[2:]]
        elif k in "IZ":
            d[k][f[1].rstrip(":")] = [int(x) for x in f[2:6]]
        elif k == "U":
            d["U"] = float(f[1])
    return d

def report(name, a, b):
    dt = b["U"] - a["U"]
    out = [f"{name}: window {dt:.2f} s"]
    # threads: utime stime cpu run_ns wait_ns slices vol nonvol
    for tid in sorted(b["T"], key=int):
        if tid not in a["T"]:
            out.append(f"  thread {tid}: new in the window")
            continue
        x, y = a["T"][tid], b["T"][tid]
        run = (y[3] - x[3]) / 1e9 / dt
        sl = (y[5] - x[5]) / dt
        vol = (y[6] - x[6]) / dt
        inv = (y[7] - x[7]) / dt
        out.append(f"  thread {tid:>6} cpu{y[2]}: on-CPU {run*100:6.1f}%  slices {sl:8.1f}/s  voluntary {vol:8.1f}/s  involuntary {inv:8.1f}/s  wait {(y[4]-x[4])/1e9/dt*100:5.1f}%  faults {(y[8]-x[8])/dt:6.1f}/s")
    for tid in a["T"]:
        if tid not in b["T"]:
            out.append(f"  thread {tid}: gone in the window")
    x, y = a.get("K"), b.get("K")
    if x and y:
        out.append(f"  ksoftirqd/2: on-CPU {(y[0]-x[0])/1e9/dt*100:5.1f}%  slices {(y[2]-x[2])/dt:8.1f}/s  voluntary {(y[3]-x[3])/dt:8.1f}/s  involuntary {(y[4]-x[4])/dt:8.1f}/s")
    for c in range(4):
        cpu = f"cpu{c}"
        s0, s1 = a["S"][cpu], b["S"][cpu]
        busy = sum(s1[i] - s0[i] for i in (0, 1, 2, 5, 6))  # user nice system irq softirq
        loc = (b["I"]["LOC"][c] - a["I"]["LOC"][c]) / dt
        res = (b["I"]["RES"][c] - a["I"]["RES"][c]) / dt
        cal = (b["I"]["CAL"][c] - a["I"]["CAL"][c]) / dt
        tlb = (b["I"]["TLB"][c] - a["I"]["TLB"][c]) / dt
        z = {k: (b["Z"][k][c] - a["Z"][k][c]) / dt for k in b["Z"]}
        out.append(f"  {cpu}: busy {busy/dt:5.1f} jiffies/s  LOC {loc:6.1f}/s RES {res:5.1f} CAL {cal:5.1f} TLB {tlb:5.1f}  " +
                   " ".join(f"{k} {v:.1f}" for k, v in z.items() if v))
    return "\n".join(out)

d = sys.argv[1]
for a in sorted(glob.glob(os.path.join(d, "*.a"))):
    name = os.path.basename(a)[:-2]
    print(report(name, parse(a), parse(a[:-2] + ".b")))
