#!/bin/sh
# In the VM: 4 KiB write, ours alone, ours with raw samples written, ours and perftest under rdmacompare, alternating.
B=/work/main/bin
O=$RXEVM_OUT
ours() { RDMABENCH_CPUS=2,3 RDMABENCH_WARMUP=0 RDMABENCH_SIZES=4096 RDMABENCH_INLINE=0 "$@" $B/rdmabench.test -test.run='^$' -test.bench='RDMAWrite$' -test.benchtime=5000x -test.count=1; }
for i in 1 2 3; do
	ours >> $O/alone.txt 2>&1
	mkdir -p /tmp/s$i
	ours env RDMABENCH_SAMPLES_DIR=/tmp/s$i >> $O/samples.txt 2>&1
	$B/rdmacompare -bench $B/rdmabench.test -tools write -sizes 4096 -rounds 2 -out $O/cmp$i > $O/cmp$i.txt 2>&1
done
echo done
