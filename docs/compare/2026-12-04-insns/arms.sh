#!/bin/sh
# In the VM under QEMU with where.so: the benchmark (bin/rdmamk.test) and
# our loop in a C process (bin/cloopmk), both built with markers.patch,
# (cloopt: with 8 more threads asleep), atomics, ROUNDS rounds, 5000 iterations a run. The
# plugin's windows come in the order of the ARM lines printed here.
B=/work/main/bin
O=$RXEVM_OUT
N=${ITERS:-5000}
echo "kernel $(uname -r) meltdown: $(cat /sys/devices/system/cpu/vulnerabilities/meltdown)"
for i in $(seq 1 ${ROUNDS:-2}); do
	for a in ${ARMS:-ours cloop}; do
		for tool in ${TOOLS:-atomic}; do
			echo "ARM $a $tool $i"
			case $a.$tool in
			ours.atomic)
				env RDMABENCH_SIZES=8 RDMABENCH_CPUS=2,3 RDMABENCH_WARMUP=0 RDMABENCH_INLINE=0 RDMABENCH_GID_INDEX=1 \
				RDMABENCH_TRANSPORT=rc $B/rdmamk.test -test.run='^$' -test.bench='RDMAAtomic$/^op=fetch_add$' \
					-test.benchtime=${N}x -test.count=1 &
				sleep 0.3; cat /proc/$!/maps > $O/maps-ours-$i.txt; wait ;;
			cloop.atomic)
				$B/cloopmk -d rxe0 -x 1 -o atomic -n $N -c 2 $O/cloop$i &
				sleep 0.2; cat /proc/$!/maps > $O/maps-cloop-$i.txt; wait ;;
			cloopt.atomic)
				$B/cloopmk -d rxe0 -x 1 -o atomic -n $N -c 2 -t 8 $O/cloopt$i &
				sleep 0.2; cat /proc/$!/maps > $O/maps-cloopt-$i.txt; wait ;;
			esac
		done
	done
done 2>&1
echo done
