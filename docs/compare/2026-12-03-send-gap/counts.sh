#!/bin/sh
# In the VM: per-CPU kernel counters over whole runs of perftest and of
# ours, at two lengths; (long - short) / (difference in iterations) is
# what one iteration costs in context switches, softirqs and interrupts,
# free of the host's latency levels and of process start-up.
B=/work/main/bin
O=$RXEVM_OUT
S=2
snap() { # file
	{ echo "## schedstat"; grep '^cpu[23] ' /proc/schedstat
	  echo "## softirqs"; sed -n '1p;/TIMER\|NET_RX\|NET_TX\|TASKLET\|SCHED\|RCU\|HRTIMER/p' /proc/softirqs
	  echo "## interrupts"; sed -n '1p;/LOC\|RES\|CAL\|TLB\|IWI\|NMI/p' /proc/interrupts
	  echo "## stat"; grep '^ctxt\|^cpu[23] ' /proc/stat; } > $1
}
pt() { # tool n args...
	t=$1; n=$2; shift 2
	taskset -c 3 $t -d rxe0 -x 1 -s $S -n $n -p 18515 "$@" -F > /dev/null 2>&1 &
	sp=$!
	sleep 0.3
	taskset -c 2 $t -d rxe0 -x 1 -s $S -n $n -p 18515 "$@" -F 127.0.0.1 > /dev/null 2>&1
	wait $sp
}
ours() { # bench n [peer]
	env RDMABENCH_SIZES=$S RDMABENCH_CPUS=2,3 RDMABENCH_WARMUP=0 RDMABENCH_INLINE=0 RDMABENCH_GID_INDEX=1 \
	RDMABENCH_TRANSPORT=rc $3 $B/rdmabench.test -test.run='^$' -test.bench="$1\$" \
		-test.benchtime=${2}x -test.count=1 > /dev/null 2>&1
}
for rep in 1 2; do
for n in 2000 22000; do
	for arm in sendpt sendours readpt readours writept writeours; do
		snap $O/$arm-$n-$rep.before
		case $arm in
		sendpt) pt ib_send_lat $n -c RC -I 0 ;;
		sendours) ours RDMASend $n ;;
		readpt) pt ib_read_lat $n ;;
		readours) ours RDMARead $n ;;
		writept) pt ib_write_lat $n -I 0 ;;
		writeours) ours RDMAWrite $n ;;
		esac
		snap $O/$arm-$n-$rep.after
	done
done
done
echo done
