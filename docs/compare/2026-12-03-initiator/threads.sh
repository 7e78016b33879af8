#!/bin/sh
# In the VM: what runs besides the polling thread while a one-sided run
# measures? Each side runs a long run (ITERS); 2.5 s in, and again WIN s
# later, every thread of its process, ksoftirqd/2 and the per-CPU counters
# are read once (two reads a run, nothing in between), so the deltas are
# rates over a window in the middle of the measured loop.
B=/work/main/bin
O=$RXEVM_OUT
N1=${ITERS:-250000} # one-sided (about 40 us each)
N2=$((N1 * 3))       # write (12-25 us)
WIN=${WIN:-3}
snap() { # file pid
	{ for t in /proc/$2/task/*; do
		echo "T ${t##*/} $(cut -d' ' -f3,14,15,39,10 $t/stat) $(cat $t/schedstat) $(awk '/ctxt_switches/{printf "%s ", $2}' $t/status)"
	  done
	  k=$(grep -lx ksoftirqd/2 /proc/[0-9]*/comm | head -1 | cut -d/ -f3)
	  echo "K $k $(cat /proc/$k/schedstat) $(awk '/ctxt_switches/{printf "%s ", $2}' /proc/$k/status)"
	  grep '^cpu[0-3] ' /proc/stat | sed 's/^/S /'
	  grep '^cpu[0-3] ' /proc/schedstat | sed 's/^/Q /'
	  sed -n '/LOC\|RES\|CAL\|TLB/p' /proc/interrupts | sed 's/^/I /'
	  sed -n '/TIMER\|NET_RX\|TASKLET\|SCHED\|RCU\|HRTIMER/p' /proc/softirqs | sed 's/^/Z /'
	  echo "U $(cut -d' ' -f1 /proc/uptime)"; } > $1
}
watch() { # name pid
	sleep 2.5; snap $O/$1.a $2; sleep $WIN; snap $O/$1.b $2
}
pt() { # name tool iters args...
	n=$1; t=$2; N=$3; shift 3
	taskset -c 3 $t -d rxe0 -x 1 -n $N -p 18515 "$@" -F > $O/$n.srv 2>&1 &
	sp=$!
	sleep 0.3
	taskset -c 2 $t -d rxe0 -x 1 -n $N -p 18515 "$@" -F 127.0.0.1 > $O/$n.txt 2>&1 &
	cp=$!
	watch $n $cp
	wait $cp; wait $sp
}
ours() { # name bench size iters
	N=$4
	env RDMABENCH_SIZES=$3 RDMABENCH_CPUS=2,3 RDMABENCH_WARMUP=0 RDMABENCH_INLINE=0 RDMABENCH_GID_INDEX=1 \
	RDMABENCH_TRANSPORT=rc $B/rdmabench.test -test.run='^$' -test.bench="$2\$" \
		-test.benchtime=${N}x -test.count=1 > $O/$1.txt 2>&1 &
	op=$!
	watch $1 $op
	wait $op
}
echo "kernel $(uname -r) thp $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
for rep in $(seq 1 ${REPS:-2}); do
	pt atomicpt$rep ib_atomic_lat $N1 -A FETCH_AND_ADD
	ours atomicours$rep 'RDMAAtomic$/^op=fetch_add' 8 $N1
	ours readours$rep RDMARead 2 $N1
	pt readpt$rep ib_read_lat $N1 -s 2
	pt writept$rep ib_write_lat $N2 -s 2 -I 0
	ours writeours$rep RDMAWrite 2 $N2
	echo "rep $rep $(cut -d' ' -f1 /proc/uptime) $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo done
