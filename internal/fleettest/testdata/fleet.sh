#!/bin/sh
# Runs on node1 of `rxevm -nodes 4 -slurm`, once every slurmd is idle.
# Usage: fleet.sh BIN SBATCH [rdmafleet run flags...]
# BIN holds rdmafleet, rdmapeer and rdmabench.test (the same path on every
# node); results go under $RXEVM_OUT (a 9p share with the host, the same on
# every node), where the host test checks them.
set -u
bin=$1 sbatch=$2
shift 2
out=$RXEVM_OUT
export RDMABENCH_FLEET_BIN=$bin
now() { date +%s; }
t0=$(now)

echo "== srun -N4 hostname"
srun -N4 hostname | sort >$out/hostnames.txt || exit 1
cat $out/hostnames.txt

echo "== every node name resolves and answers on every node"
srun -N4 sh -c 'for n in node1 node2 node3 node4; do
	ping -c 1 -W 10 $n >/dev/null || { echo "$(hostname): $n does not answer"; exit 1; }
done; echo "$(hostname): node1-node4 resolve and answer"' | sort || exit 1

echo "== job 1: every pair of 4 nodes, one pair per round"
# One pair at a time: on a 2-core host two pairs at once (four busy-polling
# TCG guests) measured one-way p50 of 13-40 ms, against 0.3-0.6 ms for one
# pair, and the 2.5 ms a netem delay adds drowned in that. The plan file is
# ClusterKit's format: <round> <node that runs the benchmark> <its peer>.
printf '1 node1 node2\n2 node3 node4\n3 node1 node3\n4 node2 node4\n5 node1 node4\n6 node2 node3\n' >$out/all-plan.txt
t1=$(now)
RDMABENCH_FLEET_DIR=$out/all sbatch --wait -N 4 -o $out/all.slurm.out "$sbatch" \
	-plan $out/all-plan.txt -retest-pairs 1 "$@"
echo "job 1: sbatch exit $?, $(($(now) - t1)) s"
cat $out/all.slurm.out

echo "== job 2: the agent on node4 killed in the middle of round 1"
printf '1 node3 node4\n1 node1 node2\n' >$out/kill-plan.txt
t2=$(now)
job=$(RDMABENCH_FLEET_DIR=$out/kill sbatch --parsable -N 4 -o $out/kill.slurm.out "$sbatch" \
	-plan $out/kill-plan.txt -retest=false "$@") || exit 1
echo "job 2 is $job"
# Mid-round: node4's rdmapeer has started for the pair (its log exists).
end=$(($(now) + 300))
until [ -s $out/kill/raw/round01-node3-node4.peer.log ]; do
	[ $(now) -gt $end ] && { echo "round 1 never started"; scancel $job; exit 1; }
	sleep 1
done
sleep 2
srun --jobid=$job --overlap -N 1 -n 1 -w node4 sh -c 'kill -9 $(pidof rdmafleet) && echo "killed the agent on $(hostname)"'
killed=$(now)
end=$((killed + 600))
while squeue -h -j $job 2>/dev/null | grep -q .; do
	[ $(now) -gt $end ] && { echo "job 2 did not end"; scancel $job; exit 1; }
	if [ ! -e $out/kill-failed-after ] && [ -e $out/kill/pairs/round01-node3-node4.failed ]; then
		echo $(($(now) - killed)) >$out/kill-failed-after
	fi
	sleep 1
done
[ -e $out/kill-failed-after ] || echo $(($(now) - killed)) >$out/kill-failed-after
echo "job 2: pair node3-node4 recorded failed $(cat $out/kill-failed-after) s after the kill"
echo "job 2: $(($(now) - t2)) s"
cat $out/kill.slurm.out

echo "== job 3: one pair under load (RDMABENCH_LOAD=64K)"
# The agents pass the variable on: node1's benchmark streams 64 KiB
# writes into a second session of node2's rdmapeer while it measures.
printf '1 node1 node2\n' >$out/load-plan.txt
RDMABENCH_LOAD=64K "$bin/rdmafleet" plan -nodes 'node[1-2]' -plan $out/load-plan.txt >$out/load-plan-header.txt || exit 1
t3=$(now)
RDMABENCH_LOAD=64K RDMABENCH_FLEET_DIR=$out/load sbatch --wait -N 2 -w node1,node2 -o $out/load.slurm.out "$sbatch" \
	-plan $out/load-plan.txt -retest=false "$@"
echo "job 3: sbatch exit $?, $(($(now) - t3)) s"
cat $out/load.slurm.out
echo "fleet.sh: $(($(now) - t0)) s in all"
