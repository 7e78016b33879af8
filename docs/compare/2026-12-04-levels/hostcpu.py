"""Host side: reads rxevm's output on stdin, time-stamps each line, and
samples every QEMU thread's CPU time (/proc/PID/task/TID/schedstat, ns)
every 5 ms on a thread of its own. Writes OUT/lines.tsv (host time, line)
and OUT/cpu.tsv (host time, then each thread's name=ns). Usage:
  bin/rxevm ... arms.sh | python3 hostcpu.py OUT"""
import os, sys, threading, time, glob
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
stop = False
def qemu_pid():
    for p in glob.glob('/proc/[0-9]*/comm'):
        try:
            if open(p).read().startswith('qemu-system'):
                return p.split('/')[2]
        except OSError:
            pass
def sample():
    pid = None
    with open(os.path.join(out, 'cpu.tsv'), 'w') as f:
        while not stop:
            pid = pid or qemu_pid()
            if pid:
                row = [f"{time.monotonic():.4f}"]
                for t in glob.glob(f'/proc/{pid}/task/*'):
                    try:
                        name = open(t + '/comm').read().strip().replace(' ', '_')
                        ns = open(t + '/schedstat').read().split()[0]
                        row.append(f"{name}:{t.rsplit('/', 1)[1]}={ns}")
                    except OSError:
                        pass
                f.write('\t'.join(row) + '\n')
            time.sleep(0.005)
th = threading.Thread(target=sample)
th.start()
with open(os.path.join(out, 'lines.tsv'), 'w') as f:
    for line in sys.stdin:
        f.write(f"{time.monotonic():.4f}\t{line}")
        f.flush()
stop = True
th.join()
