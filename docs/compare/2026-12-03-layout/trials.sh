#!/bin/sh
B=/work/main/bin
for t in ab1 aa1 ab2 aa2 ab3; do
	case $t in ab*) old=$B/lay0.test; new=$B/lay64.test ;; aa*) old=$B/lay0.test; new=$B/lay0.test ;; esac
	s=$(cut -d' ' -f1 /proc/uptime)
	$B/rdmaab run -old $old -new $new -out "$RXEVM_OUT/$t" -bench '^BenchmarkRDMAWrite$' -benchtime 2000x -count 80 -burst 200 -metrics p50-ns -threshold 1% > "$RXEVM_OUT/$t.txt" 2>&1 || echo "trial $t failed"
	echo "trial $t done, guest seconds $s-$(cut -d' ' -f1 /proc/uptime)"
done
