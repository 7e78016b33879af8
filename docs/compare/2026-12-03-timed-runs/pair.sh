#!/bin/sh
# In the VM: a run given a duration (-benchtime=1s), 2 B RDMA write, the
# benchmark as at 3ab112f (chunks of 16 to 4096) and with ExpectFor (C
# calls at b.Loop's checkpoints), alternating in one boot, raw samples kept.
B=/work/main/bin   # chunks.test built at 3ab112f, rdmabench.test with ExpectFor
O=$RXEVM_OUT
R=${ROUNDS:-20}
T=${BENCHTIME:-1s}
S=${SIZE:-2}
run() { # name round
	mkdir -p $O/$1$2
	RDMABENCH_SIZES=$S RDMABENCH_CPUS=2,3 RDMABENCH_WARMUP=1000 RDMABENCH_GID_INDEX=1 \
	RDMABENCH_SAMPLES_DIR=$O/$1$2 $B/$1.test -test.run='^$' -test.bench='RDMAWrite$' \
		-test.benchtime=$T -test.count=1 > $O/$1$2.txt 2>&1
}
for i in $(seq 1 $R); do
	if [ $((i % 2)) = 0 ]; then run chunks $i; run rdmabench $i; else run rdmabench $i; run chunks $i; fi
	echo "round $i $(cut -d' ' -f1 /proc/uptime) $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo done
