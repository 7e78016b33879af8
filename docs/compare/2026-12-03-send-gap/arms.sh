#!/bin/sh
# In the VM: where does our 2 B send RC p50 gap (and read's) come from?
# Arms in every round, rotating order: perftest (pinned, -U), perftest with
# one extra sleeping thread (LD_PRELOAD mt.so), ours in one process
# (loopback), ours with the responder in rdmapeer (a process of its own).
# MTARM=1: with the perftest+sleeper arm. ROUNDS, ITERS, SIZE, TOOLS.
B=/work/main/bin
O=$RXEVM_OUT
R=${ROUNDS:-20}
N=${ITERS:-5000}
S=${SIZE:-2}
pt() { # name round tool [preload]
	taskset -c 3 env $4 $3 -d rxe0 -x 1 $SARG -n $N -p 18515 $PTARGS -F -U > $O/$1$2.srv 2>&1 &
	sp=$!
	sleep 0.3
	taskset -c 2 env $4 $3 -d rxe0 -x 1 $SARG -n $N -p 18515 $PTARGS -F -U 127.0.0.1 > $O/$1$2.txt 2>&1
	wait $sp
}
ours() { # name round bench [peer]
	mkdir -p $O/$1$2
	env RDMABENCH_SIZES=$S RDMABENCH_CPUS=2,3 RDMABENCH_WARMUP=0 RDMABENCH_INLINE=0 RDMABENCH_GID_INDEX=1 \
	RDMABENCH_TRANSPORT=rc $4 RDMABENCH_SAMPLES_DIR=$O/$1$2 $B/rdmabench.test -test.run='^$' -test.bench="$3\$" \
		-test.benchtime=${N}x -test.count=1 > $O/$1$2.txt 2>&1
}
$B/rdmapeer -listen 127.0.0.1:7471 -cpu 3 -device rxe0 -gid-index 1 -allow 127.0.0.1 -idle none > $O/rdmapeer.log 2>&1 &
pp=$!
sleep 2
MT=LD_PRELOAD=$B/mt.so
for tool in ${TOOLS:-send read}; do
	S=${SIZE:-2}; SARG="-s $S"
	case $tool in
	send) PT=ib_send_lat; PTARGS="-c RC -I 0"; BN=RDMASend ;;
	read) PT=ib_read_lat; PTARGS=""; BN=RDMARead ;;
	atomic) PT=ib_atomic_lat; PTARGS="-A FETCH_AND_ADD"; BN='RDMAAtomic$/^op=fetch_add'; SARG=""; S=8 ;;
	esac
	for i in $(seq 1 $R); do
		PEER=RDMABENCH_PEER=127.0.0.1:7471
		if [ -n "$MTARM" ]; then
			case $((i % 4)) in
			0) pt ${tool}pt $i $PT; pt ${tool}ptmt $i $PT $MT; ours ${tool}ours $i $BN; ours ${tool}peer $i $BN $PEER ;;
			1) pt ${tool}ptmt $i $PT $MT; ours ${tool}ours $i $BN; ours ${tool}peer $i $BN $PEER; pt ${tool}pt $i $PT ;;
			2) ours ${tool}ours $i $BN; ours ${tool}peer $i $BN $PEER; pt ${tool}pt $i $PT; pt ${tool}ptmt $i $PT $MT ;;
			3) ours ${tool}peer $i $BN $PEER; pt ${tool}pt $i $PT; pt ${tool}ptmt $i $PT $MT; ours ${tool}ours $i $BN ;;
			esac
		else
			case $((i % 3)) in
			0) pt ${tool}pt $i $PT; ours ${tool}ours $i $BN; ours ${tool}peer $i $BN $PEER ;;
			1) ours ${tool}ours $i $BN; ours ${tool}peer $i $BN $PEER; pt ${tool}pt $i $PT ;;
			2) ours ${tool}peer $i $BN $PEER; pt ${tool}pt $i $PT; ours ${tool}ours $i $BN ;;
			esac
		fi
		echo "$tool round $i $(cut -d' ' -f1 /proc/uptime) $(cut -d' ' -f1-3 /proc/loadavg)"
	done
done
kill $pp; wait $pp
tail -3 $O/rdmapeer.log
echo done
