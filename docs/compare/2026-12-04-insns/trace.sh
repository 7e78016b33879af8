#!/bin/sh
# In the VM: ftrace's TLB-flush, IPI, timer and scheduler events during each
# arm's measured loop (bin/rdmatm.test and bin/clooptm, built with
# trace-marker.patch, write "rb loop start/end" to trace_marker). One trace
# a run in $RXEVM_OUT/trace-ARM-ROUND.txt.
T=/sys/kernel/tracing
[ -e $T/trace_marker ] || mount -t tracefs nodev $T
C=/work/main/docs/compare/2026-12-03-cloop/arms.sh
echo 8192 > $T/buffer_size_kb
for e in tlb/tlb_flush irq_vectors/call_function_entry irq_vectors/call_function_single_entry \
	irq_vectors/reschedule_entry irq_vectors/local_timer_entry sched/sched_switch sched/sched_wakeup \
	irq/softirq_entry; do
	echo 1 > $T/events/$e/enable
done
cloop() { /work/main/bin/clooptm -d rxe0 -x 1 -o atomic -n 5000 -c 2 $RXEVM_OUT/c$2 > /dev/null 2>&1; }
for i in $(seq 1 ${ROUNDS:-3}); do
	for a in ${ARMS:-ours cloop}; do
		echo > $T/trace
		echo 1 > $T/tracing_on
		case $a in
		ours) OURS=rdmatm.test ROUNDS=1 TOOLS=atomic ARMS=ours sh $C > /dev/null 2>&1 ;;
		cloop) cloop x $i ;;
		esac
		echo 0 > $T/tracing_on
		cp $T/trace $RXEVM_OUT/trace-$a-$i.txt
		echo "$a $i $(grep -c . $T/trace) lines"
	done
done
echo done
