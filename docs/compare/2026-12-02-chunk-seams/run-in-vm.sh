#!/bin/sh
# In the VM: 2 B write against perftest under rdmacompare, the benchmark as
# built (chunks growing from 16) and with chunks growing from 1024,
# alternating, 6 rounds each, three times.
B=/work/main/bin
O=$RXEVM_OUT
for i in 1 2 3; do
	$B/rdmacompare -bench $B/rdmabench.test -tools write -sizes 2 -rounds 6 -out $O/c16-$i > $O/c16-$i.txt 2>&1
	$B/rdmacompare -bench $B/seam.test -tools write -sizes 2 -rounds 6 -out $O/c1024-$i > $O/c1024-$i.txt 2>&1
done
echo done
