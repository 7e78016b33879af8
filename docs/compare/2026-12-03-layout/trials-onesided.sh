#!/bin/sh
# Layout duets for a one-sided op's tail: the same tree built twice
# (lay0.test, lay64.test as in trials.sh), atomic fetch-and-add, p50 and p99.
B=/work/main/bin
for t in ab1 aa1 ab2 aa2; do
	case $t in ab*) old=$B/lay0.test; new=$B/lay64.test ;; aa*) old=$B/lay0.test; new=$B/lay0.test ;; esac
	s=$(cut -d' ' -f1 /proc/uptime)
	$B/rdmaab run -old $old -new $new -out "$RXEVM_OUT/atomic-$t" -bench '^BenchmarkRDMAAtomic$/^op=fetch_add' -benchtime 2000x -count ${COUNT:-60} -burst 200 -metrics p50-ns,p99-ns -threshold 5% > "$RXEVM_OUT/atomic-$t.txt" 2>&1 || echo "trial $t failed"
	echo "trial $t done, guest seconds $s-$(cut -d' ' -f1 /proc/uptime)"
done
