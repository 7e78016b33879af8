"""Reading one arm's raw samples (one-way or whole us, as each side reports)."""
import glob, math, os, re
def pct(xs, q):
    s = sorted(xs); k = max(1, math.ceil(q * len(s))); return s[k - 1]
def load(d, tool, arm, i):
    """Ours from an RDMABENCH_SAMPLES_DIR (ns), perftest from its -U dump."""
    name = f"{d}/{tool}{arm}{i}"
    if os.path.isdir(name):
        f = glob.glob(name + "/*.txt")
        return [float(x) / 1000 for x in open(f[0])] if len(f) == 1 else None
    v, on = [], False
    for line in open(name + ".txt"):
        if line.startswith("#, usec"): on = True; continue
        m = re.match(r"^(\d+), ([\d.]+)$", line.strip())
        if on and m: v.append(float(m.group(2)))
        elif on and v: break
    return v or None
def each_run(d, tool, arms, rounds=80):
    """(arm, round, samples) of every run found, rounds 1..rounds, arms in
    the given order within a round (added 2026-12-04 for the levels and
    insns scripts)."""
    for i in range(1, rounds + 1):
        for a in arms:
            try:
                v = load(d, tool, a, i)
            except FileNotFoundError:
                continue
            if v:
                yield a, i, v
