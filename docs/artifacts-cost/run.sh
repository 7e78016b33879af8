#!/bin/sh
# Interleaved in one boot: the same benchmark with and without -artifacts.
cd /tmp/artcmp
for i in 1 2 3 4 5 6; do
  for mode in without with; do
    if [ $((i % 2)) = 0 ]; then [ $mode = without ] && mode=with || mode=without; fi
    extra=""; mkdir -p /tmp/artcmp/out$i
    [ $mode = with ] && extra="-test.artifacts -test.outputdir=/tmp/artcmp/out$i"
    RDMABENCH_SIZES=2,4096 ./rdmabench.test -test.run='^$' -test.bench='^BenchmarkRDMAWrite$' -test.benchtime=5000x -test.count=1 -test.cpu=1 $extra > /tmp/artcmp/$mode.$i.txt 2>&1
    cat /tmp/artcmp/$mode.$i.txt >> $RXEVM_OUT/$mode.txt
  done
done
ls /tmp/artcmp | head; find /tmp/artcmp -name summary.json | wc -l
