#!/bin/sh
# In the VM: perftest, the benchmark and our loop in a C process (as
# docs/compare/2026-12-03-cloop/arms.sh runs them, atomics, 5000 a run),
# each run between START and END lines on standard output, which the host
# side (hostcpu.py) time-stamps while it samples QEMU's threads.
C=/work/main/docs/compare/2026-12-03-cloop/arms.sh
R=${ROUNDS:-30}
i=1
rm -rf $RXEVM_OUT/atomic*
while [ $i -le $R ]; do
	set -- ${ARMS:-pt ours cloop}
	k=$((i % $#))
	while [ $k -gt 0 ]; do a=$1; shift; set -- "$@" $a; k=$((k - 1)); done
	for a in "$@"; do
		echo "START $a $i"
		ROUNDS=1 TOOLS=atomic ARMS=$a sh $C > /dev/null
		echo "END $a $i"
		[ $i = 1 ] && continue
		mv $RXEVM_OUT/atomic${a}1.txt $RXEVM_OUT/atomic$a$i.txt
		[ -d $RXEVM_OUT/atomic${a}1 ] && mv $RXEVM_OUT/atomic${a}1 $RXEVM_OUT/atomic$a$i
	done
	i=$((i + 1))
done
echo done
