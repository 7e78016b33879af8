#!/bin/sh
# In the VM: which other tasks run on the polling vCPUs 2-3 during one 4 KiB
# write run of ours and one of ib_write_lat, both pinned to 2 (initiator) and 3.
B=/work/main/bin
O=$RXEVM_OUT
snap() { # every task: tid timeslices run_ns cpu comm
	for t in /proc/[0-9]*/task/[0-9]*; do
		read -r run wait slices < $t/schedstat 2>/dev/null || continue
		read -r st < $t/stat 2>/dev/null || continue
		c=${st#*(}; c=${c%%)*}; rest=${st##*) }
		set -- $rest
		echo "${t##*/} $slices $run ${37} $c"
	done
}
for i in 1 2 3; do
	for side in ours perftest; do
		snap > $O/$side$i.before
		if [ $side = ours ]; then
			RDMABENCH_CPUS=2,3 RDMABENCH_WARMUP=0 RDMABENCH_SIZES=4096 RDMABENCH_INLINE=0 $B/rdmabench.test -test.run='^$' -test.bench='RDMAWrite$' -test.benchtime=5000x -test.count=1 > $O/$side$i.out 2>&1
		else
			taskset -c 3 ib_write_lat -d rxe0 -x 1 -s 4096 -n 5000 -p 18515 -F > $O/srv$i.out 2>&1 &
			sleep 1
			taskset -c 2 ib_write_lat -d rxe0 -x 1 -s 4096 -n 5000 -p 18515 -F 127.0.0.1 > $O/$side$i.out 2>&1
			wait
		fi
		snap > $O/$side$i.after
	done
done
echo done
