#!/bin/sh
# In the VM: A/A duets of 30 pairs, start order alternating (rdmaab-alt) or drawn (rdmaab), interleaved.
A=${A:-/work/main/out-v6n/validate-ab/a.test}
O=$RXEVM_OUT
for i in 1 2 3; do
  for v in alt rand; do
    b=/tmp/an/so/rdmaab-$v
    s=$(cut -d' ' -f1 /proc/uptime)
    $b run -old $A -new $A -out "$O/$v$i" -bench '^BenchmarkRDMAWrite$' -benchtime 2000x -count 30 -burst 200 >/dev/null 2>&1
    echo "$v $i guest seconds $s-$(cut -d' ' -f1 /proc/uptime)"
  done
done
