#!/bin/sh
B=/work/main/bin
O=$RXEVM_OUT
ours() { RDMABENCH_CPUS=2,3 RDMABENCH_WARMUP=0 RDMABENCH_SIZES=4096 RDMABENCH_INLINE=0 "$@" $B/rdmabench.test -test.run='^$' -test.bench='RDMAWrite$' -test.benchtime=5000x -test.count=1; }
nproc > $O/nproc.txt
for i in 1 2 3; do
	ours >> $O/alone.txt 2>&1
	$B/rdmacompare.x -bench $B/rdmabench.test -tools write -sizes 4096 -rounds 2 -out $O/w$i > $O/watch$i.txt 2>&1
	XNOSCHED=1 $B/rdmacompare.x -bench $B/rdmabench.test -tools write -sizes 4096 -rounds 2 -out $O/n$i > $O/nowatch$i.txt 2>&1
done
echo done
