#!/bin/bash
# Reproduction of the rdmafleet agent findings on 127.0.0.1 (dst agent n2
# of a pair n1 -> n2; rdmapeer is a stand-in script; nothing else runs).
bin=$1
work=$(mktemp -d)
printf '# pattern: file\n# nodes: n1 n2\n1 n1 n2\n' > $work/plan.txt
printf '127.0.0.1 n1\n127.0.0.1 n2\n' > $work/hosts
base=$((30000 + RANDOM % 10000 * 2))
export RDMABENCH_FLEET_TOKEN=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
agent() { $bin agent -dir $work -round 1 -node n2 -hosts $work/hosts -port-base $base -bench /bin/true -peer "$(dirname "$0")/fakepeer.sh" -timeout ${1:-8s} >/dev/null 2>>$work/dst.log & pid=$!; }

echo "== 3a: a stray client reads a line and answers done"
agent 60s; start=$(date +%s.%N)
python3 - $((base+1)) <<'PY'
import socket,sys,time
for i in range(6000):
    try: s=socket.create_connection(("127.0.0.1",int(sys.argv[1]))); break
    except OSError as e: err=e; time.sleep(0.05)
else: print("  stray could not connect:", err); sys.exit()
f=s.makefile("rwb")
print("  stray read:", f.readline().decode().strip()[:60])
f.write(b"done\n"); f.flush()
print("  stray then reads:", repr(f.read()[:80]))
PY
wait $pid; rc=$?
printf '  dst agent exited %d after %.1fs; pair files: %s\n' $rc $(echo "$(date +%s.%N) - $start" | bc) "$(ls $work/pairs 2>/dev/null | tr '\n' ' ')"
[ -f $work/pairs/round01-n1-n2.failed ] && echo "  failed file: $(cat $work/pairs/round01-n1-n2.failed)"
sed 's/^/  dst log: /' $work/dst.log; : > $work/dst.log; rm -rf $work/pairs $work/raw

echo "== 3b: 400 MiB without a newline on the control port"
agent 30s
sleep 0.5
python3 - $((base+1)) <<'PY'
import socket,sys,time
for i in range(6000):
    try: s=socket.create_connection(("127.0.0.1",int(sys.argv[1]))); break
    except OSError: time.sleep(0.05)
chunk=b"x"*(1<<20); sent=0
try:
    for i in range(400):
        s.sendall(chunk); sent+=len(chunk)
except OSError as e:
    print("  sender stopped after %d MiB: %s" % (sent>>20, e))
else:
    print("  sent all %d MiB" % (sent>>20))
time.sleep(1)
PY
grep -E 'VmHWM|VmRSS' /proc/$pid/status | sed 's/^/  dst agent /'
echo "  listening sockets of the dst agent and its rdmapeer:"
ss -ltnp 2>/dev/null | grep -E ":($base|$((base+1))) " | awk '{print "    " $4}'
kill $pid 2>/dev/null; wait $pid 2>/dev/null
sed 's/^/  dst log: /' $work/dst.log
rm -rf $work
