#!/usr/bin/env python3
"""Each run's p50 and p99 (us), one line a run, from an arms boot's
directory: the compact record kept in boots/ instead of the raw samples.
usage: p50s.py DIR ARM,ARM,...   (atomics)"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '2026-12-03-send-gap'))
from runs import each_run, pct
d, arms = sys.argv[1], sys.argv[2].split(',')
print('arm round p50_us p99_us')
for a, i, v in each_run(d, 'atomic', arms):
    print(a, i, f'{pct(v, .5):.3f}', f'{pct(v, .99):.3f}')
