#!/usr/bin/env python3
"""Counts ftrace events per CPU inside the measured loop's window.

usage: window.py TRACE...   (traces from trace.sh)
For each trace: the window's length (from "rb loop start" to "rb loop
end"), then per event (tlb_flush split by reason) the count on each CPU.
"""
import re, sys, collections

line_re = re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\].*?\s(\d+\.\d+):\s+(\S+):\s*(.*)$')
for path in sys.argv[1:]:
    inside, t0, t1 = False, None, None
    counts = collections.Counter()
    comms = collections.Counter()
    for ln in open(path):
        m = line_re.match(ln)
        if not m:
            continue
        comm, pid, cpu, ts, ev, rest = m.groups()
        cpu = str(int(cpu))
        if ev == 'tracing_mark_write:' or ev == 'tracing_mark_write':
            if 'rb loop start' in rest:
                inside, t0 = True, float(ts)
            elif 'rb loop end' in rest:
                inside, t1 = False, float(ts)
            continue
        if not inside:
            continue
        ev = ev.rstrip(':')
        if ev == 'tlb_flush':
            ev += '(' + rest.split('reason:')[1].split('(')[0].strip() + ')'
        if ev == 'sched_switch':
            comms[(cpu, rest.split('next_comm=')[1].split()[0])] += 1
        counts[(ev, cpu)] += 1
    print('%s: window %.1f ms' % (path, (t1 - t0) * 1e3 if t0 and t1 else float('nan')))
    for ev in sorted({e for e, _ in counts}):
        print('  %-40s %s' % (ev, ' '.join('cpu%s=%d' % (c, counts[(ev, c)]) for c in '0123' if counts[(ev, c)])))
    for (cpu, comm), n in sorted(comms.items()):
        if cpu in '23':
            print('  switch to %-20s on cpu%s: %d' % (comm, cpu, n))
