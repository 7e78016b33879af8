#!/bin/sh
# In the VM: what wakes the CPUs that do not measure (0, 1 and 3) while a
# long atomic run measures on CPU 2? ftrace on those CPUs only
# (tracing_cpumask), for WIN s from 2.5 s into each run: timer expiries,
# wake-ups, context switches and IPIs. trace.py counts them by source.
B=/work/main/bin
O=$RXEVM_OUT
N=${ITERS:-250000}
WIN=${WIN:-3}
T=/sys/kernel/tracing
[ -e $T/tracing_on ] || mount -t tracefs nodev $T
echo 0 > $T/tracing_on
echo b > $T/tracing_cpumask
echo 4096 > $T/buffer_size_kb
for e in sched/sched_wakeup sched/sched_switch timer/timer_expire_entry timer/hrtimer_expire_entry \
	irq_vectors/reschedule_entry irq_vectors/call_function_entry irq_vectors/call_function_single_entry \
	irq_vectors/local_timer_entry irq/softirq_entry; do
	echo 1 > $T/events/$e/enable || echo "no event $e"
done
window() { # name
	sleep 2.5; echo > $T/trace; echo 1 > $T/tracing_on; sleep $WIN; echo 0 > $T/tracing_on
	cat $T/trace > $O/$1.trace
}
pt() { # name tool args...
	n=$1; t=$2; shift 2
	taskset -c 3 $t -d rxe0 -x 1 -n $N -p 18515 "$@" -F > $O/$n.srv 2>&1 &
	sp=$!
	sleep 0.3
	taskset -c 2 $t -d rxe0 -x 1 -n $N -p 18515 "$@" -F 127.0.0.1 > $O/$n.txt 2>&1 &
	cp=$!
	window $n
	wait $cp; wait $sp
}
ours() { # name bench size
	env RDMABENCH_SIZES=$3 RDMABENCH_CPUS=2,3 RDMABENCH_WARMUP=0 RDMABENCH_INLINE=0 RDMABENCH_GID_INDEX=1 \
	RDMABENCH_TRANSPORT=rc $B/rdmabench.test -test.run='^$' -test.bench="$2\$" \
		-test.benchtime=${N}x -test.count=1 > $O/$1.txt 2>&1 &
	op=$!
	window $1
	wait $op
}
for rep in $(seq 1 ${REPS:-2}); do
	pt atomicpt$rep ib_atomic_lat -A FETCH_AND_ADD
	ours atomicours$rep 'RDMAAtomic$/^op=fetch_add' 8
	echo "rep $rep $(cut -d' ' -f1 /proc/uptime)"
done
echo done
