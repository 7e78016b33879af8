#!/bin/sh
# In the VM: rdmacompare write 4 KiB, alternating without and with a waker on vCPU 0.
B=${B:-/work/main/bin}
O=$RXEVM_OUT
# our process's threads: context switches through one standalone run
RDMABENCH_SIZES=4096 $B/rdmabench.test -test.run='^$' -test.bench='RDMAWrite$' -test.benchtime=5000x -test.count=1 > $O/alone.txt 2>&1 &
p=$!
while kill -0 $p 2>/dev/null; do
  u=$(cut -d' ' -f1 /proc/uptime)
  for t in /proc/$p/task/*; do echo "$u ${t##*/} $(cat $t/comm 2>/dev/null) $(grep ctxt $t/status 2>/dev/null | awk '{printf "%s ", $2}') cpu=$(cut -d' ' -f39 $t/stat 2>/dev/null)"; done
  sleep 0.05
done > $O/ctx.log
for i in 1 2 3; do
  for w in off on; do
    wp=""
    if [ $w = on ]; then $B/waker -cpu 0 -period 10ms > $O/waker-$i.txt & wp=$!; fi
    $B/rdmacompare -bench $B/rdmabench.test -tools write -sizes 4096 -rounds 6 -out $O/w$w$i > $O/w$w$i.txt 2>&1
    [ -n "$wp" ] && kill $wp && wait $wp
    echo "set $w $i done at $(cut -d' ' -f1 /proc/uptime)"
  done
done
