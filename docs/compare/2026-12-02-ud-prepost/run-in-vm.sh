#!/bin/sh
B=/work/main/bin
O=$RXEVM_OUT
for i in 1 2; do
	$B/rdmacompare -bench $B/old.test -tools send-ud -sizes 2 -rounds 6 -out $O/old$i > $O/old$i.txt 2>&1
	$B/rdmacompare -bench $B/rdmabench.test -tools send-ud -sizes 2 -rounds 6 -out $O/new$i > $O/new$i.txt 2>&1
done
echo done
