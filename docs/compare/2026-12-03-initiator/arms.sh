#!/bin/sh
# In the VM: is our one-sided tail the Go runtime's presence in the
# process, or transparent huge pages (the guest's THP is "always", and
# Go's heap arenas are 2 MiB aligned)? Arms in every round, rotating:
#   pt       perftest pinned, -U
#   ptgo     perftest with a Go runtime LD_PRELOAD'ed (_gort, c-shared)
#   ours     the benchmark (loopback, one C call for the run)
#   ptnothp  perftest with THP set to never for the arm
#   oursnothp  ours with THP set to never for the arm
# ROUNDS, ITERS, TOOLS (atomic read write).
B=/work/main/bin
O=$RXEVM_OUT
R=${ROUNDS:-30}
N=${ITERS:-5000}
THP=/sys/kernel/mm/transparent_hugepage/enabled
pt() { # name round tool [preload]
	taskset -c 3 env $4 $3 -d rxe0 -x 1 $SARG -n $N -p 18515 $PTARGS -F -U > $O/$1$2.srv 2>&1 &
	sp=$!
	sleep 0.3
	taskset -c 2 env $4 $3 -d rxe0 -x 1 $SARG -n $N -p 18515 $PTARGS -F -U 127.0.0.1 > $O/$1$2.txt 2>&1
	wait $sp
}
ours() { # name round bench
	mkdir -p $O/$1$2
	env RDMABENCH_SIZES=$S RDMABENCH_CPUS=2,3 RDMABENCH_WARMUP=0 RDMABENCH_INLINE=0 RDMABENCH_GID_INDEX=1 \
	RDMABENCH_TRANSPORT=rc RDMABENCH_SAMPLES_DIR=$O/$1$2 $B/rdmabench.test -test.run='^$' -test.bench="$3\$" \
		-test.benchtime=${N}x -test.count=1 > $O/$1$2.txt 2>&1
}
arm() { # arm round
	case $1 in
	pt) pt ${tool}pt $2 $PT ;;
	ptgo) pt ${tool}ptgo $2 $PT LD_PRELOAD=$B/gort.so ;;
	ours) ours ${tool}ours $2 $BN ;;
	ptnothp) echo never > $THP; pt ${tool}ptnothp $2 $PT; echo always > $THP ;;
	oursnothp) echo never > $THP; ours ${tool}oursnothp $2 $BN; echo always > $THP ;;
	esac
}
echo "kernel $(uname -r) thp $(cat $THP)"
ARMS="pt ptgo ours ptnothp oursnothp"
for tool in ${TOOLS:-atomic read}; do
	S=2; SARG="-s 2"
	case $tool in
	write) PT=ib_write_lat; PTARGS="-I 0"; BN=RDMAWrite ;;
	read) PT=ib_read_lat; PTARGS=""; BN=RDMARead ;;
	atomic) PT=ib_atomic_lat; PTARGS="-A FETCH_AND_ADD"; BN='RDMAAtomic$/^op=fetch_add'; SARG=""; S=8 ;;
	esac
	for i in $(seq 1 $R); do
		set -- $ARMS
		k=$((i % $#))
		while [ $k -gt 0 ]; do a=$1; shift; set -- "$@" $a; k=$((k - 1)); done
		for a in "$@"; do arm $a $i; done
		echo "$tool round $i order $* $(cut -d' ' -f1 /proc/uptime) $(cut -d' ' -f1-3 /proc/loadavg)"
	done
done
echo done
