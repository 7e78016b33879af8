#!/bin/sh
# In the VM under QEMU with where.so: every vCPU's instructions over whole
# runs of perftest (client and server) and of the benchmark (loopback, one
# process), at ITERS and MULT*ITERS (3) operations, REPS times each. The
# difference between the two lengths, over (MULT-1)*ITERS, is the work of one
# operation, with setup and teardown cancelled out. Windows come in the
# order of the W lines printed here.
B=/work/main/bin
N=${ITERS:-1000}
for tool in ${TOOLS:-atomic send sendud write read}; do
	S=2; SARG="-s 2"; TR=rc
	case $tool in
	atomic) PT=ib_atomic_lat; PTARGS="-A FETCH_AND_ADD"; BN='RDMAAtomic$/^op=fetch_add$'; SARG=""; S=8 ;;
	send) PT=ib_send_lat; PTARGS="-c RC"; BN='RDMASend$' ;;
	sendud) PT=ib_send_lat; PTARGS="-c UD"; BN='RDMASend$'; TR=ud ;;
	write) PT=ib_write_lat; PTARGS=""; BN='RDMAWrite$' ;;
	read) PT=ib_read_lat; PTARGS=""; BN='RDMARead$' ;;
	esac
	for rep in $(seq 1 ${REPS:-2}); do
		for n in $N $((${MULT:-3} * N)); do
			for side in pt ours; do
				$B/mark open
				if [ $side = pt ]; then
					taskset -c 3 $PT -d rxe0 -x 1 $SARG -n $n -p 18515 $PTARGS -F > /dev/null 2>&1 &
					sleep 0.3
					taskset -c 2 $PT -d rxe0 -x 1 $SARG -n $n -p 18515 $PTARGS -F 127.0.0.1 > /dev/null 2>&1
					wait
				else
					env RDMABENCH_SIZES=$S RDMABENCH_CPUS=2,3 RDMABENCH_WARMUP=0 RDMABENCH_INLINE=0 RDMABENCH_GID_INDEX=1 \
						RDMABENCH_TRANSPORT=$TR $B/rdmabench.test -test.run='^$' -test.bench="$BN" \
						-test.benchtime=${n}x -test.count=1 > /dev/null 2>&1
				fi
				$B/mark close
				echo "W $tool $side $n $rep"
			done
		done
	done
done
echo done
