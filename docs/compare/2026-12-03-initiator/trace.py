#!/usr/bin/env python3
"""Counts trace.sh's events by source, per side. Usage: trace.py DIR"""
import collections, glob, os, re, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.trace"))):
    c = collections.Counter()
    for line in open(f):
        m = re.search(r"\s(\w+): (.*)$", line)
        if not m or line.startswith("#"):
            continue
        ev, rest = m.groups()
        key = ev
        if ev in ("timer_expire_entry", "hrtimer_expire_entry"):
            fn = re.search(r"function=(\S+)", rest)
            key += " " + (fn.group(1) if fn else "?")
        elif ev == "sched_wakeup":
            key += " " + re.sub(r"\d+$", "N", re.search(r"comm=(\S+)", rest).group(1))
        elif ev == "sched_switch":
            key += " ->" + re.sub(r"\d+$", "N", re.search(r"next_comm=(\S+)", rest).group(1))
        elif ev == "softirq_entry":
            key += " " + re.search(r"action=(\S+)", rest).group(1)
        c[key] += 1
    print(f"== {os.path.basename(f)}")
    for k, n in c.most_common(25):
        print(f"  {n:6d}  {k}")
