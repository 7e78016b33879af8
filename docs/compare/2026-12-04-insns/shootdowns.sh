#!/bin/sh
# In the VM: each arm's atomic run (5000) between two snapshots of
# /proc/interrupts' TLB-shootdown and function-call lines, CPUs 0-3.
# Arms as in ../2026-12-03-cloop/arms.sh (pt, ours, cloop).
C=/work/main/docs/compare/2026-12-03-cloop/arms.sh
snap() { awk '$1=="TLB:"||$1=="CAL:"||$1=="LOC:"||$1=="RES:" {printf "%s %s %s %s %s ", $1, $2, $3, $4, $5}' /proc/interrupts; }
for i in $(seq 1 ${ROUNDS:-3}); do
	for a in ${ARMS:-pt ours cloop}; do
		b=$(snap)
		ROUNDS=1 TOOLS=atomic ARMS=$a sh $C > /dev/null 2>&1
		echo "$a $i before $b"
		echo "$a $i after  $(snap)"
	done
done
echo done
