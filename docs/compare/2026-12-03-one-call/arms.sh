#!/bin/sh
# In the VM: 2 B RDMA write, three arms in every round in rotating order:
# perftest (ib_write_lat pinned to CPUs 2 and 3, -U), the benchmark as at
# 695d789 (asis: chunks growing from 16) and with Run.Expect (one C call).
B=/work/main/bin   # asis.test built at 695d789, rdmabench.test at 2627947
O=$RXEVM_OUT
R=${ROUNDS:-30}
N=${ITERS:-5000}
S=${SIZE:-2}
pt() {
	taskset -c 3 ib_write_lat -d rxe0 -x 1 -s $S -n $N -p 18515 -I 0 -F -U > $O/pt$1.srv 2>&1 &
	sp=$!
	sleep 0.3
	taskset -c 2 ib_write_lat -d rxe0 -x 1 -s $S -n $N -p 18515 -I 0 -F -U 127.0.0.1 > $O/pt$1.txt 2>&1
	wait $sp
}
ours() { # name round
	mkdir -p $O/$1$2
	RDMABENCH_SIZES=$S RDMABENCH_CPUS=2,3 RDMABENCH_WARMUP=0 RDMABENCH_INLINE=0 RDMABENCH_GID_INDEX=1 \
	RDMABENCH_SAMPLES_DIR=$O/$1$2 $B/$1.test -test.run='^$' -test.bench='RDMAWrite$' \
		-test.benchtime=${N}x -test.count=1 > $O/$1$2.txt 2>&1
}
for i in $(seq 1 $R); do
	case $((i % 3)) in
	0) pt $i; ours asis $i; ours rdmabench $i ;;
	1) ours asis $i; ours rdmabench $i; pt $i ;;
	2) ours rdmabench $i; pt $i; ours asis $i ;;
	esac
	echo "round $i $(cut -d' ' -f1 /proc/uptime) $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo done
