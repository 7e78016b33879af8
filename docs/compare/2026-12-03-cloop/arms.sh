#!/bin/sh
# In the VM: the one-sided tails of three arms in every round, order
# rotating:
#   pt     perftest pinned (client CPU 2, server CPU 3), -U
#   ours   the benchmark (loopback, CPUs 2,3, no warm-up, one C call for the run)
#   cloop  our loop's C code in a C-only process (cloop.c), pinned to CPU 2
#   cloopt cloop with CLOOP_THREADS (8) more threads asleep in pause()
#          (added 2026-12-04: a multi-threaded C process)
#   cloopb cloop with three other threads spinning for CLOOP_BURST ms (300)
#          just before its loop (added 2026-12-04)
#   oursa  the benchmark with glibc's malloc held to one arena
#          (GLIBC_TUNABLES=glibc.malloc.arena_max=1; added 2026-12-04)
#   oursm  the benchmark built with the loop's C state on an mmap'ed page
#          of its own instead of calloc's (bin/rdmamm.test; added 2026-12-04)
#   oursp  the benchmark with GOMAXPROCS=1 from its start (added 2026-12-04)
#   cloopl cloop built with -falign-functions=64 -falign-loops=64
#          -falign-jumps=64 (bin/cloopl: the same code laid out otherwise;
#          added 2026-12-04)
#   cloopT cloop with its loop on a thread of its own (-T; added 2026-12-04)
#   cloopP cloop with -P 6: QEMU's software TLB grown just before the loop
#          (added 2026-12-04, ../2026-12-04-insns)
#   pie    the benchmark built as a position-independent executable
#          (go test -c -buildmode=pie -o bin/rdmapie.test; added 2026-12-04)
#   fix    the benchmark built from the tree with the samples' buffer
#          faulted in before the loop (bin/rdmafix.test)
# ROUNDS (per tool), ITERS, TOOLS (atomic read), ARMS (pt ours cloop),
# OURS (the ours arm's test binary in bin/, rdmabench.test).
B=/work/main/bin
O=$RXEVM_OUT
R=${ROUNDS:-30}
N=${ITERS:-5000}
pt() { # name round
	taskset -c 3 $PT -d rxe0 -x 1 $SARG -n $N -p 18515 $PTARGS -F -U > $O/$1$2.srv 2>&1 &
	sp=$!
	sleep 0.3
	taskset -c 2 $PT -d rxe0 -x 1 $SARG -n $N -p 18515 $PTARGS -F -U 127.0.0.1 > $O/$1$2.txt 2>&1
	wait $sp
}
ours() { # name round [test binary]
	mkdir -p $O/$1$2
	env RDMABENCH_SIZES=$S RDMABENCH_CPUS=2,3 RDMABENCH_WARMUP=0 RDMABENCH_INLINE=0 RDMABENCH_GID_INDEX=1 \
	RDMABENCH_TRANSPORT=rc RDMABENCH_SAMPLES_DIR=$O/$1$2 $B/${3:-${OURS:-rdmabench.test}} -test.run='^$' -test.bench="$BN\$" \
		-test.benchtime=${N}x -test.count=1 > $O/$1$2.txt 2>&1
}
fix() { ours $1 $2 rdmafix.test; }
pie() { ours $1 $2 rdmapie.test; }
oursp() { export GOMAXPROCS=1; ours $1 $2; unset GOMAXPROCS; }
oursm() { ours $1 $2 rdmamm.test; }
oursa() { export GLIBC_TUNABLES=glibc.malloc.arena_max=1; ours $1 $2; unset GLIBC_TUNABLES; }
cloop() { # name round
	$B/cloop -d rxe0 -x 1 -o $tool -n $N -c 2 $O/$1$2 > $O/$1$2.txt 2>&1
}
cloopt() { # name round
	$B/cloop -d rxe0 -x 1 -o $tool -n $N -c 2 -t ${CLOOP_THREADS:-8} $O/$1$2 > $O/$1$2.txt 2>&1
}
cloopl() { # name round
	$B/cloopl -d rxe0 -x 1 -o $tool -n $N -c 2 $O/$1$2 > $O/$1$2.txt 2>&1
}
cloopT() { # name round
	$B/cloop -d rxe0 -x 1 -o $tool -n $N -c 2 -T $O/$1$2 > $O/$1$2.txt 2>&1
}
cloopP() { # name round
	[ -e /tmp/cloop-prime ] || dd if=/dev/urandom of=/tmp/cloop-prime bs=1M count=8 2>/dev/null
	$B/cloop -d rxe0 -x 1 -o $tool -n $N -c 2 -P ${CLOOP_PRIME_ROUNDS:-6} $O/$1$2 > $O/$1$2.txt 2>&1
}
cloopb() { # name round
	$B/cloop -d rxe0 -x 1 -o $tool -n $N -c 2 -b ${CLOOP_BURST:-300} $O/$1$2 > $O/$1$2.txt 2>&1
}
echo "kernel $(uname -r) clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
ARMS=${ARMS:-pt ours cloop}
for tool in ${TOOLS:-atomic read}; do
	S=2; SARG="-s 2"
	case $tool in
	read) PT=ib_read_lat; PTARGS=""; BN=RDMARead ;;
	atomic) PT=ib_atomic_lat; PTARGS="-A FETCH_AND_ADD"; BN='RDMAAtomic$/^op=fetch_add'; SARG=""; S=8 ;;
	esac
	for i in $(seq 1 $R); do
		set -- $ARMS
		k=$((i % $#))
		while [ $k -gt 0 ]; do a=$1; shift; set -- "$@" $a; k=$((k - 1)); done
		for a in "$@"; do $a $tool$a $i; done
		echo "$tool round $i order $* $(cut -d' ' -f1 /proc/uptime) $(cut -d' ' -f1-3 /proc/loadavg)"
	done
done
echo done
